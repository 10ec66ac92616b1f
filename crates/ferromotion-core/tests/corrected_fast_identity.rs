//! The `corrected` route's loop skips the switch search on steps that provably stay on
//! their branch (`physics/integrate/corrected.rs`). This keeps the loop as it was first
//! written, searching every step, and checks that the route returns the same bits on
//! random drops, stiffnesses and steps (both `locate` settings), and the same error when
//! the reference refuses.
#![allow(clippy::disallowed_methods)] // native-only oracles: std floats are fine here

mod common;

use common::bits;
use ferromotion_core::physics::integrate::fixed::step_count;
use ferromotion_core::physics::jacobian::Dual;
use ferromotion_core::*;
use proptest::prelude::*;

fn roots_in(q: [f64; 3], s_max: f64, out: &mut Vec<(f64, bool)>, is_height: bool) {
    let [c, b, a] = q;
    let mut push = |r: f64| {
        if r > 0.0 && r <= s_max {
            out.push((r, is_height));
        }
    };
    if a == 0.0 {
        if b != 0.0 {
            push(-c / b);
        }
        return;
    }
    let disc = b * b - 4.0 * a * c;
    if disc < 0.0 {
        return;
    }
    let q = -0.5 * (b + b.signum() * disc.sqrt());
    push(q / a);
    if q != 0.0 {
        push(c / q);
    }
}

/// The root `r` (its value known) of the dual quadratic q0 + q1·s + q2·s², with its
/// derivatives by the implicit-function rule ds = -(dq0 + s·dq1 + s²·dq2)/(q1 + 2·q2·s).
fn dual_root(q: [Dual; 3], r: f64) -> Dual {
    let slope = q[1].v + 2.0 * q[2].v * r;
    let mut d = [0.0; 2];
    for (i, di) in d.iter_mut().enumerate() {
        *di = -(q[0].d[i] + r * q[1].d[i] + r * r * q[2].d[i]) / slope;
    }
    Dual { v: r, d }
}

/// Along the sub-step path, the first switch in (0, s_max] of the push-only law against
/// `pushing`: its time and whether it is on the height (entry/exit) or the force.
fn first_switch(
    height: [f64; 3],
    force: [f64; 3],
    pushing: bool,
    s_max: f64,
) -> Option<(f64, bool)> {
    let at = |q: [f64; 3], s: f64| q[0] + s * (q[1] + s * q[2]);
    // Fast path (almost every step): neither quadratic changes sign on [0, s_max], so
    // the branch cannot change. A quadratic keeps its sign when its value at both ends
    // and at an interior vertex share the sign of a nonzero start.
    let keeps_sign = |q: [f64; 3]| {
        let q0 = q[0];
        if q0 == 0.0 {
            return false;
        }
        let same = |v: f64| (v > 0.0) == (q0 > 0.0) && v != 0.0;
        let vertex = if q[2] != 0.0 {
            -q[1] / (2.0 * q[2])
        } else {
            -1.0
        };
        same(at(q, s_max)) && (vertex <= 0.0 || vertex >= s_max || same(at(q, vertex)))
    };
    if keeps_sign(height) && keeps_sign(force) {
        return None;
    }
    let mut points = Vec::with_capacity(4);
    roots_in(height, s_max, &mut points, true);
    roots_in(force, s_max, &mut points, false);
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Between consecutive candidate points the law's branch is constant; the switch is
    // at the start of the first interval whose midpoint is on the other side.
    let mut prev: Option<(f64, bool)> = None;
    for &(p, h) in points.iter().chain(std::iter::once(&(s_max, false))) {
        let start = prev.map_or(0.0, |x| x.0);
        if p > start {
            let mid = 0.5 * (start + p);
            let pushes = at(height, mid) < 0.0 && at(force, mid) > 0.0;
            if pushes != pushing {
                if let Some(x) = prev {
                    return Some(x);
                }
            }
        }
        if p < s_max || h {
            prev = Some((p, h));
        }
    }
    None
}

/// One semi-implicit Euler sub-step of dual length `s` with the branch `pushing`.
#[inline]
fn sub_step(law: &Penalty, g: f64, pushing: bool, s: Dual, y: &mut Dual, v: &mut Dual) {
    let a = acceleration(law, g, pushing, *y, *v);
    *v = *v + s * a;
    *y = *y + s * *v;
}

#[inline]
fn acceleration(law: &Penalty, g: f64, pushing: bool, y: Dual, v: Dual) -> Dual {
    if pushing {
        (y.scale(-law.stiffness) - v.scale(law.damping)).scale(1.0 / law.mass) - Dual::constant(g)
    } else {
        Dual::constant(-g)
    }
}

/// The route as first written: the switch search on every step.
fn reference(drop: &Drop, k: f64, dt: f64, opts: &CorrectedOptions) -> Result<RouteResult> {
    drop.validate()?;
    let law = drop.penalty(k)?;
    let n = step_count(drop.t_final, dt, opts.max_steps)?;
    let g = drop.gravity;
    let (kk, c) = (law.stiffness, law.damping);
    let mut y = Dual::variable(drop.height, 0);
    let mut v = Dual::variable(drop.velocity, 1);
    let mut evals = 0u64;
    let mut steps = 0u64;
    if !opts.locate {
        let mut was_pushing = false;
        for _ in 0..n {
            let pushing = y.v < 0.0 && law.spring_damper(y.v, v.v) > 0.0;
            if pushing && !was_pushing && v.v < 0.0 {
                // The continuous entry saltation, applied where contact is detected.
                let dvdy = -c / law.mass;
                v.d = [v.d[0] + dvdy * y.d[0], v.d[1] + dvdy * y.d[1]];
            }
            was_pushing = pushing;
            sub_step(&law, g, pushing, Dual::constant(dt), &mut y, &mut v);
        }
        evals = n;
        steps = n;
    } else {
        // March in steps of dt, restarting the grid at every located switch, so that
        // the discretisation of each phase does not depend on where the switch fell
        // between grid points (if it did, its error would vary with x(0) on the scale
        // of |v|·dt and the tangent would pick that variation up).
        let t_final = drop.t_final;
        let mut t = Dual::constant(0.0);
        let mut pushing = y.v < 0.0 && law.spring_damper(y.v, v.v) > 0.0;
        let cap = opts.max_steps.max(n);
        loop {
            let remaining = t_final - t.v;
            if remaining <= 0.0 {
                break;
            }
            let last = remaining <= dt * (1.0 + 1e-9);
            let h = if last {
                Dual::constant(t_final) - t
            } else {
                Dual::constant(dt)
            };
            let a = acceleration(&law, g, pushing, y, v);
            evals += 1;
            steps += 1;
            if steps > cap {
                return Err(FerroError::TooManySteps {
                    route: "corrected",
                    max_steps: cap,
                    detail: format!("{steps} steps taken"),
                });
            }
            // y(s) = y + s·v + s²·a and F(s) = -k·y(s) - c·v(s) along the sub-step path.
            let height = [y, v, a];
            let force = [
                y.scale(-kk) - v.scale(c),
                v.scale(-kk) - a.scale(c),
                a.scale(-kk),
            ];
            let vals = |q: [Dual; 3]| [q[0].v, q[1].v, q[2].v];
            match first_switch(vals(height), vals(force), pushing, h.v) {
                Some((r, on_height)) => {
                    let s = dual_root(if on_height { height } else { force }, r);
                    v = v + s * a;
                    y = y + s * v;
                    t = t + s;
                    pushing = !pushing;
                }
                None => {
                    v = v + h * a;
                    y = y + h * v;
                    if last {
                        break;
                    }
                    t = t + h;
                }
            }
        }
    }
    let x = State::new(y.v, v.v);
    let jac = Jacobian::new(y.d[0], y.d[1], v.d[0], v.d[1]);
    Ok(RouteResult {
        state: x,
        jacobian: jac,
        cost: Cost {
            steps,
            force_evals: evals,
            rollouts: 1,
            ..Cost::default()
        },
        probe_gap: None,
        probe_dependent: false,
        step_stability: None,
        wall_s: None,
        wall_resolution_s: None,
    })
}

fn same(drop: &Drop, k: f64, dt: f64, locate: bool) -> std::result::Result<(), String> {
    let opts = CorrectedOptions {
        locate,
        ..CorrectedOptions::default()
    };
    let new = corrected(drop, k, dt, &opts);
    let old = reference(drop, k, dt, &opts);
    match (new, old) {
        (Ok(a), Ok(b)) => {
            let finite = b
                .state
                .iter()
                .chain(b.jacobian.iter())
                .all(|x| x.is_finite());
            if finite
                && (bits(&a.state, &a.jacobian) != bits(&b.state, &b.jacobian) || a.cost != b.cost)
            {
                return Err(format!("{drop:?} k = {k:e} dt = {dt:e}: {a:?} vs {b:?}"));
            }
            Ok(())
        }
        // The reference skips the route's finiteness check; an overflow is refused by the route.
        (Err(_), Ok(b))
            if !b
                .state
                .iter()
                .chain(b.jacobian.iter())
                .all(|x| x.is_finite()) =>
        {
            Ok(())
        }
        (Err(a), Err(b)) if a.to_string() == b.to_string() => Ok(()),
        (a, b) => Err(format!("{drop:?} k = {k:e} dt = {dt:e}: {a:?} vs {b:?}")),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn same_bits_as_the_search_on_every_step(
        height in 0.01..5.0f64,
        velocity in -10.0..10.0f64,
        zeta in 0.0..0.99f64,
        gravity in 0.5..30.0f64,
        mass in 0.05..20.0f64,
        t_final in 0.2..2.0f64,
        log_k in 2.0..8.5f64,
        log_n in 2.5..4.3f64,
        locate in any::<bool>(),
    ) {
        let drop = Drop { height, velocity, zeta, gravity, mass, t_final };
        prop_assume!(drop.validate().is_ok());
        let k = 10f64.powf(log_k);
        // A dt that divides T: T/N for a random N.
        let dt = t_final / 10f64.powf(log_n).round();
        same(&drop, k, dt, locate).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn same_bits_at_the_lab_settings() {
    let drop = Drop::default();
    for k in [1e2, 1e4, 1e5, 1e6, 1e7, 1e8] {
        for dt in [1e-3, 1e-4, 1e-5, 1e-6] {
            for locate in [true, false] {
                same(&drop, k, dt, locate).unwrap();
            }
        }
    }
}
