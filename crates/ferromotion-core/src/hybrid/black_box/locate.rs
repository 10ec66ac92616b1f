//! Locating a switch no guard declared (see `switches.rs` for the method), and the nominal
//! row that does it: its run, the unguarded-switch check, and the switch it finds located.

use super::link::{amax, column, Link};
use super::run::{run, unguarded_switch, Run};
use super::switches::{Suspect, Switch, CLASSIFY_EPS, FIELD_RTOL, MAX_SWITCHES, RANK_ONE, WINDOW};
use super::system::{StepOptions, FLOAT64};
use crate::error::{Num, Result};
use nalgebra::{DMatrix, DVector};

/// A row's run: the event-located run, and for the nominal row the unguarded-switch check
/// of its segments, with the first switch it finds located (or refused).
pub(super) async fn row_run(
    link: Link<'_>,
    x0: DVector<f64>,
    t0: f64,
    t1: f64,
    opts: StepOptions,
    nominal: bool,
) -> Result<Run> {
    let mut run = run(&link, &x0, t0, t1, &opts, nominal).await?;
    if nominal {
        if let Some(suspect) = unguarded_switch(&link, &run, &opts).await? {
            if opts.precision != FLOAT64 {
                // Classifying states within a probe of the switch, and comparing the two laws'
                // fields there, need float64's differences.
                return Err(suspect.refuse(format!(
                    "the step declares a precision of {:e} (coarser than float64), where the driver does not \
                     locate a switch itself",
                    opts.precision
                )));
            }
            if link.switches.len() >= MAX_SWITCHES {
                return Err(suspect.refuse(format!(
                    "the driver has located {MAX_SWITCHES} switches already (its limit)"
                )));
            }
            let delta = opts.time_eps * opts.dt;
            let sw = locate_switch(&link, &suspect, opts.dt, delta).await?;
            if link.switches.iter().any(|s| (s.t - sw.t).abs() <= s.window) {
                return Err(suspect.refuse(format!(
                    "it was located at t = {} s once already, and the run did not cross the surface located \
                     there",
                    Num(sw.t)
                )));
            }
            run.found = Some(sw);
        }
    }
    Ok(run)
}

/// The step Jacobian at y (central differences with [`CLASSIFY_EPS`], tangent coordinates).
async fn step_jacobian_at(
    link: &Link<'_>,
    y: &DVector<f64>,
    h: f64,
    t: f64,
) -> Result<DMatrix<f64>> {
    let m = link.manifold;
    let n = m.tangent_dim();
    let (points, sizes) = link.probes(y, CLASSIFY_EPS);
    let mut calls = vec![(y.clone(), h)];
    calls.extend(points.into_iter().map(|p| (p, h)));
    let ys = link.steps(calls, t).await?;
    let mut d = DMatrix::zeros(n, n);
    for (j, &size) in sizes.iter().enumerate() {
        d.set_column(j, &column(m, &ys[0], &ys[1 + 2 * j], &ys[2 + 2 * j], size));
    }
    Ok(d)
}

const NOT_BRACKETED: &str =
    "the step's law could not be bracketed inside one step (the step Jacobians \
     along it are not the law before and then the law after)";

/// The switch the suspect holds (see the module docs), or the refusal saying why not.
pub(super) async fn locate_switch(
    link: &Link<'_>,
    s: &Suspect,
    dt: f64,
    delta: f64,
) -> Result<Switch> {
    let mut normal = surface_normal(s)?;
    let (x, t, tau) = bracket(link, s).await?;
    let (sides, after) = either_side(link, s, (&x, t), tau).await?;
    let field = field_jump(link, (&sides[0], &sides[1]), t + tau, delta).await?;
    if !(field <= FIELD_RTOL) {
        return Err(s.refuse(format!(
            "it was located at t = {} s from the step's own Jacobian, but the step's field jumps there \
             (by {} of its size, above {FIELD_RTOL:e}): a switch where the field jumps must be declared \
             exactly",
            Num(t + tau),
            Num(field)
        )));
    }
    let at = sides[1].clone();
    // Oriented so that the state before the switch is positive.
    if normal.dot(&link.manifold.offset(&at, &s.x)) < 0.0 {
        normal = -normal;
    }
    Ok(Switch {
        at,
        normal,
        t: t + after,
        window: WINDOW * dt,
    })
}

/// The unit normal of the switching surface: the leading right singular vector of the step
/// Jacobian's jump, which must be rank one within [`RANK_ONE`].
fn surface_normal(s: &Suspect) -> Result<DVector<f64>> {
    let jump = &s.after - &s.before;
    let svd = jump.svd(false, true);
    let sv = &svd.singular_values;
    let mut order: Vec<usize> = (0..sv.len()).collect();
    order.sort_by(|&a, &b| sv[b].total_cmp(&sv[a]));
    let (first, second) = (sv[order[0]], order.get(1).map_or(0.0, |&k| sv[k]));
    if !(second <= RANK_ONE * first) {
        return Err(s.refuse(format!(
            "the step Jacobian's jump is not one switch of a continuous law (its singular values {first:.3e} \
             and {second:.3e}: not rank one)"
        )));
    }
    let vt = svd.v_t.expect("asked for V");
    let normal: DVector<f64> = vt.row(order[0]).transpose();
    let norm = normal.norm();
    Ok(normal / norm)
}

/// Whether step Jacobian `d` is nearer the law after the suspect's jump than the one before.
fn after_law(s: &Suspect, d: &DMatrix<f64>) -> bool {
    amax(&(d - &s.after)) < amax(&(d - &s.before))
}

/// The step (from x at t) that holds the switch and τ* inside it: y(τ) = step(x, τ) classified
/// by its own step Jacobian, bisected to where the class changes. The switch is in the step
/// from the suspect's x, or (when x's own probes straddled it) in the next one.
async fn bracket(link: &Link<'_>, s: &Suspect) -> Result<(DVector<f64>, f64, f64)> {
    if after_law(s, &step_jacobian_at(link, &s.x, s.h, s.t).await?) {
        return Err(s.refuse(NOT_BRACKETED.into()));
    }
    let (mut x, mut t) = (s.x.clone(), s.t);
    let mut end = link.step(&x, s.h, t).await?;
    let mut tries = 0;
    while !after_law(s, &step_jacobian_at(link, &end, s.h, t + s.h).await?) {
        tries += 1;
        if tries == 2 {
            return Err(s.refuse(NOT_BRACKETED.into()));
        }
        (x, t) = (end, t + s.h);
        end = link.step(&x, s.h, t).await?;
    }
    let (mut lo, mut hi) = (0.0, s.h);
    while hi - lo > 1e-13 * s.h {
        let mid = 0.5 * (lo + hi);
        let y = link.step(&x, mid, t).await?;
        if after_law(s, &step_jacobian_at(link, &y, s.h, t + mid).await?) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok((x, t, hi))
}

/// The states either side of the switch at τ* in the step from (x, t): the classifying probes
/// blur it over their own size, so they stand a margin of τ off it, widened until each side's
/// step Jacobian is its law's alone (within 1% of the jump). Returns them and the τ after.
async fn either_side(
    link: &Link<'_>,
    s: &Suspect,
    (x, t): (&DVector<f64>, f64),
    tau: f64,
) -> Result<(Vec<DVector<f64>>, f64)> {
    let size = amax(&(&s.after - &s.before));
    let clean = |d: &DMatrix<f64>, law: &DMatrix<f64>| amax(&(d - law)) <= 0.01 * size;
    let mut margin = 1e-12 * s.h;
    while margin <= 0.01 * s.h {
        let (before, after) = ((tau - margin).max(0.0), (tau + margin).min(s.h));
        let ys = link
            .steps(vec![(x.clone(), before), (x.clone(), after)], t)
            .await?;
        if clean(
            &step_jacobian_at(link, &ys[0], s.h, t + before).await?,
            &s.before,
        ) && clean(
            &step_jacobian_at(link, &ys[1], s.h, t + after).await?,
            &s.after,
        ) {
            return Ok((ys, after));
        }
        margin *= 2.0;
    }
    Err(s.refuse(NOT_BRACKETED.into()))
}

/// The field's jump across a located switch: each law's field at the switch (second-order
/// forward differences of step(x, s) at s = 0+, time probe `delta`, from the states just
/// before and just after it, `(minus, plus)`), max|f+ - f-| / max(1, max|f±|). Each law is
/// asked at its own side's start, so a step that freezes its law over a step (an Euler
/// step's force) is compared where both laws are fresh.
async fn field_jump(
    link: &Link<'_>,
    (minus, plus): (&DVector<f64>, &DVector<f64>),
    t: f64,
    delta: f64,
) -> Result<f64> {
    let m = link.manifold;
    let calls = vec![
        (minus.clone(), delta),
        (minus.clone(), 2.0 * delta),
        (plus.clone(), delta),
        (plus.clone(), 2.0 * delta),
    ];
    let ys = link.steps(calls, t).await?;
    let field = |base: &DVector<f64>, a: &DVector<f64>, b: &DVector<f64>| {
        (4.0 * m.offset(base, a) - m.offset(base, b)) / (2.0 * delta)
    };
    let f_minus = field(minus, &ys[0], &ys[1]);
    let f_plus = field(plus, &ys[2], &ys[3]);
    let scale = f_minus.amax().max(f_plus.amax()).max(1.0);
    Ok((f_plus - f_minus).amax() / scale)
}
