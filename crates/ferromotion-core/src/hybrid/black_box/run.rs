//! One row of the black-box driver: the event-located run from x0 to t1 (and, for the
//! nominal row, each event's measured saltation and the unguarded-switch check), written
//! sequentially; every call of the system goes through [`Link`] (`link.rs`) and is batched
//! with the other rows' by the scheduler (`rows.rs`). See the module docs of `black_box.rs`.

use super::link::{amax, column, Link};
use super::switches::{Suspect, Switch};
use super::system::{StepOptions, SPLIT_FALL, SWITCH_RATIO};
use crate::error::{FerroError, Result};
use crate::hybrid::HybridEvent;
use crate::numeric::fd::quotient;
use nalgebra::{DMatrix, DVector};
use std::collections::BTreeMap;

/// Hidden state, measured (see the module docs of `black_box.rs`): the split residual at h.
pub(super) async fn measure_hidden_state(
    link: &Link<'_>,
    x0: &DVector<f64>,
    (h, t0): (f64, f64),
    precision: f64,
) -> Result<f64> {
    let split_rtol = super::precision::split_rtol(precision);
    let scale = x0.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
    let split = |h: f64| async move {
        let whole = link.step(x0, 2.0 * h, t0).await?;
        let half = link.step(x0, h, t0).await?;
        let two = link.step(&half, h, t0 + h).await?;
        Ok::<_, FerroError>(((&whole - &two).amax() / scale, whole))
    };
    let hidden = |what: String| FerroError::HiddenState {
        system: link.sys.name(),
        what,
    };
    let (gap, first) = split(h).await?;
    // The same call again, after other calls: a memoryless step gives the same bits.
    let again = link.step(x0, 2.0 * h, t0).await?;
    if first
        .iter()
        .zip(again.iter())
        .any(|(a, b)| a.to_bits() != b.to_bits())
    {
        return Err(hidden(format!(
            "measured: step(x0, {:e}) called twice, with other calls between, returned different numbers \
             (max difference {:.3e}); a step that depends on (x, dt) alone repeats bit for bit",
            2.0 * h,
            (&first - &again).amax()
        )));
    }
    if gap > split_rtol {
        let (gap_half, _) = split(0.5 * h).await?;
        if gap_half * SPLIT_FALL > gap {
            return Err(hidden(format!(
                "measured: step(x0, 2h) and step(step(x0, h), h) differ by {gap:.3e} at h = {h:e} s and by \
                 {gap_half:.3e} at h/2 (relative to max(1, |x0|)): above {split_rtol:e} and not falling \
                 {SPLIT_FALL}x as an integrator's local error of order >= 1 does"
            )));
        }
    }
    Ok(gap)
}

/// What the forward pass leaves for one event: enough to estimate Xi.
struct Located {
    /// The step's start, and the sub-step length to the event.
    x: DVector<f64>,
    tau: f64,
    guard: usize,
    /// x- (the event) and x+ (after the reset).
    minus: DVector<f64>,
    plus: DVector<f64>,
    t: f64,
}

/// Xi at the event (tangent coordinates) with x-probe `eps` and time probe `delta`; also the
/// guard speed.
async fn saltation(
    link: &Link<'_>,
    ev: &Located,
    eps: f64,
    delta: f64,
) -> Result<(DMatrix<f64>, f64)> {
    let m = link.manifold;
    let n = m.tangent_dim();
    let t = ev.t;
    // f-: d step(x, s)/ds at s = tau, from the side before the event (second order); f+:
    // d step(x+, s)/ds at s = 0+, forward (second order). Charts at x- and x+.
    let early = ev.tau < 2.0 * delta;
    let (s1, s2) = if early {
        (0.5 * ev.tau, 0.0)
    } else {
        (ev.tau - delta, ev.tau - 2.0 * delta)
    };
    let mut calls = vec![(ev.x.clone(), s1)];
    if !early {
        calls.push((ev.x.clone(), s2));
    }
    calls.push((ev.plus.clone(), delta));
    calls.push((ev.plus.clone(), 2.0 * delta));
    let mut got = link.steps(calls, t).await?.into_iter();
    let cm = |x: &DVector<f64>| m.chart(&ev.minus, x);
    let cp = |x: &DVector<f64>| m.chart(&ev.plus, x);
    let f_minus = if early {
        // The event is at the step's very start: the same stencil on [0, tau], step(x, 0) = x.
        let d = 0.5 * ev.tau;
        let a = got.next().expect("asked");
        (3.0 * cm(&ev.minus) - 4.0 * cm(&a) + cm(&ev.x)) / (2.0 * d)
    } else {
        let a = got.next().expect("asked");
        let b = got.next().expect("asked");
        (3.0 * cm(&ev.minus) - 4.0 * cm(&a) + cm(&b)) / (2.0 * delta)
    };
    let a = got.next().expect("asked");
    let b = got.next().expect("asked");
    let f_plus = (4.0 * cp(&a) - cp(&b) - 3.0 * cp(&ev.plus)) / (2.0 * delta);
    let (points, sizes) = link.probes(&ev.minus, eps);
    let g = link.guard_at(ev.guard, points.clone(), t).await?;
    let grad = DVector::from_iterator(
        n,
        (0..n).map(|j| quotient(g[2 * j], g[2 * j + 1], sizes[j])),
    );
    let dr = if link.has_reset(ev.guard) {
        let r = link.resets(ev.guard, points, t).await?;
        let mut d = DMatrix::zeros(n, n);
        for j in 0..n {
            d.set_column(j, &column(m, &ev.plus, &r[2 * j], &r[2 * j + 1], sizes[j]));
        }
        d
    } else {
        DMatrix::identity(n, n)
    };
    let speed = grad.dot(&f_minus);
    let xi = &dr + (&f_plus - &dr * &f_minus) * grad.transpose() / speed;
    Ok((xi, speed))
}

/// A step of length h from t inside a segment that began at an event without a reset:
/// what the unguarded-switch check differentiates.
pub(super) struct SoftStep {
    x: DVector<f64>,
    h: f64,
    t: f64,
}

/// Events of different guards located within this many seconds of each other in one step
/// are one simultaneous group (as the declared driver's default,
/// [`crate::hybrid::DEFAULT_SIMULTANEOUS`]).
pub(super) const SIMULTANEOUS: f64 = crate::hybrid::DEFAULT_SIMULTANEOUS;

/// A simultaneous group fired: τ, and per guard in the order fired (guard, τ, x-, x+).
type Fired = (f64, Vec<(usize, f64, DVector<f64>, DVector<f64>)>);

/// One event-located run from x0 to t1.
pub(crate) struct Run {
    pub x: DVector<f64>,
    /// The guards that fired, in order (a probe must keep this sequence, up to the order
    /// inside the nominal run's simultaneous groups).
    pub fired: Vec<usize>,
    /// The time of each event in `fired`, s (as located: in a simultaneous group each
    /// guard's own zero).
    pub times: Vec<f64>,
    /// The simultaneous groups met: (first index in `fired`, events in the group).
    pub groups: Vec<(usize, usize)>,
    /// Nominal runs only: the events, and the steps of every segment that began at an
    /// event without a reset, with the guard of that event.
    pub events: Vec<HybridEvent>,
    soft: Vec<(usize, Vec<SoftStep>)>,
    /// Nominal runs only: a switch no guard declared, located from the step's behaviour
    /// (`switches.rs`); the answer is then computed again with it.
    pub found: Option<Switch>,
}

/// The cell of the grid t0 + k·dt that holds time t (two events in one cell are two events
/// in one step; in cells k and k+1, events in adjacent steps).
fn grid_cell(t: f64, t0: f64, dt: f64) -> i64 {
    libm::floor((t - t0) / dt) as i64
}

/// The event-located run (see the module docs of `black_box.rs`): steps of `dt` from t0;
/// an event located inside its step, taken there (strictly on the guard's far side when the
/// step's own law changes), reset if the guard has a reset, and the grid restarted at it.
/// `nominal` runs also estimate each event's saltation matrix (for its guard speed, the
/// grazing refusal and the report) and keep the steps the unguarded-switch check needs.
pub(super) async fn run(
    link: &Link<'_>,
    x0: &DVector<f64>,
    t0: f64,
    t1: f64,
    opts: &StepOptions,
    nominal: bool,
) -> Result<Run> {
    let delta = opts.time_eps * opts.dt;
    let mut out = Run {
        x: x0.clone(),
        fired: Vec::new(),
        times: Vec::new(),
        groups: Vec::new(),
        events: Vec::new(),
        soft: Vec::new(),
        found: None,
    };
    let mut x = x0.clone();
    let mut t = t0;
    // The grid restarts at every event: step k after the anchor ends at anchor + k·dt.
    let (mut anchor, mut count) = (t0, 0u64);
    // Per guard, the grid cell and time of its last event.
    let mut last: BTreeMap<usize, (i64, f64)> = BTreeMap::new();
    let mut fresh: Vec<usize> = Vec::new();
    let mut recording = false;
    let mut g_x: Option<Vec<f64>> = None;
    let mut steps = 0u64;
    while t < t1 {
        steps += 1;
        crate::hybrid::step_cap(
            "hybrid_jacobian (step function)",
            steps,
            opts.max_steps,
            t,
            t1,
        )?;
        link.caller.reached((t - t0) / (t1 - t0));
        let (h, next_t) = if t1 - t <= opts.dt {
            (t1 - t, t1)
        } else {
            count += 1;
            (opts.dt, anchor + count as f64 * opts.dt)
        };
        let y = link.step(&x, h, t).await?;
        // The guards at the step's start are those at the previous step's end (one guard
        // call per guard and step).
        let gx = match g_x.take() {
            Some(g) => g,
            None => link.guards(&x, t).await?,
        };
        let gy = link.guards(&y, t + h).await?;
        let crossed = crossed_guards(link, &x, t, h, (&gx, &gy), &fresh, delta).await?;
        fresh.clear();
        if crossed.is_empty() {
            if let Some((_, seg)) = out.soft.last_mut().filter(|_| recording) {
                seg.push(SoftStep { x: x.clone(), h, t });
            }
            x = y;
            t = next_t;
            g_x = Some(gy);
            continue;
        }
        let (tau, mut group) = fire_crossed(
            link,
            (&x, t, h),
            &crossed,
            (&gx, &gy),
            &last,
            (t0, opts),
            nominal,
        )
        .await?;
        let t_event = t + tau;
        if nominal {
            recording = record(link, &mut out, (&x, t), &group, opts, recording).await?;
        }
        if group.len() > 1 {
            out.groups.push((out.fired.len(), group.len()));
        }
        fresh.clear();
        for (i, tau_i, _, _) in &group {
            out.fired.push(*i);
            out.times.push(t + tau_i);
            last.insert(*i, (grid_cell(t + tau_i, t0, opts.dt), t + tau_i));
            fresh.push(*i);
        }
        x = group.pop().expect("a group").3;
        t = t_event;
        (anchor, count) = (t_event, 0);
    }
    out.x = x;
    Ok(out)
}

/// A nominal run's events at one instant (`group`, fired from the step at (x, t)): each one
/// measured for the report ([`measured_event`]), and the unguarded-switch check's segments
/// updated (the one before ends a step early; a new one starts where the step's own law
/// changed, no reset). Returns whether the new segment is recorded.
async fn record(
    link: &Link<'_>,
    out: &mut Run,
    (x, t): (&DVector<f64>, f64),
    group: &[(usize, f64, DVector<f64>, DVector<f64>)],
    opts: &StepOptions,
    recording: bool,
) -> Result<bool> {
    let delta = opts.time_eps * opts.dt;
    for (i, tau_i, minus, plus) in group {
        let ev = Located {
            x: x.clone(),
            tau: *tau_i,
            guard: *i,
            minus: minus.clone(),
            plus: plus.clone(),
            t: t + tau_i,
        };
        out.events
            .push(measured_event(link, &ev, opts, delta).await?);
    }
    // The step before this one ends where the event's step starts, possibly within a
    // probe of the switch: left out of the check, as the event's own step is.
    if let Some((_, seg)) = out.soft.last_mut().filter(|_| recording) {
        seg.pop();
    }
    let soft = group.iter().all(|(i, ..)| !link.has_reset(*i));
    if soft {
        out.soft
            .push((group.last().expect("a group").0, Vec::new()));
    }
    Ok(soft)
}

/// The guards a step from (x, t) of length h crossed (`crossed`, with every guard's values at
/// its ends), each located on its own; the earliest fires, with every other one within
/// [`SIMULTANEOUS`] s of it (a simultaneous group, [`fire_group`]); the others are met again by
/// the steps from the event. One guard's events too close together (`last`, per guard) are
/// refused ([`spaced`]).
async fn fire_crossed(
    link: &Link<'_>,
    (x, t, h): (&DVector<f64>, f64, f64),
    crossed: &[usize],
    (gx, gy): (&[f64], &[f64]),
    last: &BTreeMap<usize, (i64, f64)>,
    (t0, opts): (f64, &StepOptions),
    nominal: bool,
) -> Result<Fired> {
    let delta = opts.time_eps * opts.dt;
    let mut located = Vec::with_capacity(crossed.len());
    for &i in crossed {
        let (tau, minus) = locate(link, i, x, t, h, (gx[i], gy[i]), delta).await?;
        located.push((tau, i, minus));
    }
    located.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let first = located[0].0;
    located.retain(|(tau, _, _)| *tau <= first + SIMULTANEOUS);
    for (tau, i, _) in &located {
        spaced(
            last,
            (*i, grid_cell(t + tau, t0, opts.dt), t + tau),
            t0,
            opts.dt,
        )?;
    }
    if located.len() == 1 {
        let (tau, i, minus) = located.pop().expect("one located");
        let plus = link.reset(i, &minus, t + tau).await?;
        return Ok((tau, vec![(i, tau, minus, plus)]));
    }
    fire_group(link, x, t, located, opts.probe_rtol, nominal).await
}

/// The guards a step from (x, t) of length h crosses: from above zero at its start (`gx`)
/// to at or below at its end (`gy`). The guards of the events this step starts from
/// (`fresh`) sit at their zero: it fires again only if it first rises (and the step is long
/// enough to tell).
async fn crossed_guards(
    link: &Link<'_>,
    x: &DVector<f64>,
    t: f64,
    h: f64,
    (gx, gy): (&[f64], &[f64]),
    fresh: &[usize],
    delta: f64,
) -> Result<Vec<usize>> {
    let mut crossed = Vec::new();
    for i in 0..gx.len() {
        let armed = gx[i] > 0.0
            || (fresh.contains(&i)
                && h > 2.0 * delta
                && link
                    .guard(i, &link.step(x, delta, t).await?, t + delta)
                    .await?
                    > gx[i]);
        if armed && gy[i] <= 0.0 {
            crossed.push(i);
        }
    }
    Ok(crossed)
}

/// Where guard `i` crosses zero inside the step from (x, t) of length h, its values at the
/// step's ends `(g0, g_end)`: the sub-step length tau and the state reached there. Secant and
/// bisection in turn on tau in (lo, h]; without a reset, tau is then nudged strictly past the
/// zero.
async fn locate(
    link: &Link<'_>,
    i: usize,
    x: &DVector<f64>,
    t: f64,
    h: f64,
    (g0, g_end): (f64, f64),
    delta: f64,
) -> Result<(f64, DVector<f64>)> {
    let g_at = |s: f64| async move { link.guard(i, &link.step(x, s, t).await?, t + s).await };
    let (mut lo, mut g_lo) = if g0 > 0.0 {
        (0.0, g0)
    } else {
        (delta, g_at(delta).await?)
    };
    if g_lo <= 0.0 {
        // Armed by rising, but not above zero by `delta`: two events this close are one
        // step's worth of unresolved motion.
        return Err(FerroError::TwoEventsInOneStep {
            t,
            dt: h,
            first: i,
            second: i,
        });
    }
    let (mut hi, mut g_hi) = (h, g_end);
    for round in 0..400 {
        // Even rounds try the secant, odd ones bisect: the bracket keeps shrinking even
        // when the secant sticks to one end.
        let mid = 0.5 * (lo + hi);
        let secant = lo - g_lo * (hi - lo) / (g_hi - g_lo);
        let s = if round % 2 == 0 && secant > lo && secant < hi {
            secant
        } else {
            mid
        };
        let g = g_at(s).await?;
        if g > 0.0 {
            (lo, g_lo) = (s, g);
        } else {
            (hi, g_hi) = (s, g);
        }
        if hi - lo <= 1e-15 * h.max(t.abs()) || g_hi == 0.0 {
            break;
        }
    }
    let mut tau = hi;
    let mut minus = link.step(x, tau, t).await?;
    if !link.has_reset(i) {
        // The step's own law changes here and the next step decides it from its start:
        // start strictly past the zero (a step deciding `g < 0` and one deciding `g <= 0`
        // then agree), a few ulps of s on (and on while a guard computed with round-off
        // comes back to or above zero there).
        let mut ulp = tau * f64::EPSILON;
        while link.guard(i, &minus, t + tau).await? >= 0.0 && tau < h {
            tau = (tau + ulp).min(h);
            ulp *= 2.0;
            minus = link.step(x, tau, t).await?;
        }
    }
    Ok((tau, minus))
}

/// Refuses an event `(guard, cell, t)` of a guard whose previous event (`last`, per guard:
/// its grid cell and time) was in the same cell of the grid t0 + k·dt (two events of one
/// guard in one step: a chattering contact the step does not resolve, where a pair of
/// crossings between two step ends could hide) or in the next cell (events in adjacent
/// steps). Events of different guards close together are located, each on its own.
fn spaced(
    last: &BTreeMap<usize, (i64, f64)>,
    (i, cell, t_event): (usize, i64, f64),
    t0: f64,
    dt: f64,
) -> Result<()> {
    let Some(&(prev_cell, prev_t)) = last.get(&i) else {
        return Ok(());
    };
    if cell == prev_cell {
        return Err(FerroError::TwoEventsInOneStep {
            t: t0 + cell as f64 * dt,
            dt,
            first: i,
            second: i,
        });
    }
    if cell == prev_cell + 1 {
        return Err(FerroError::EventsInAdjacentSteps {
            first: prev_t,
            second: t_event,
            dt,
        });
    }
    Ok(())
}

/// Fires a simultaneous group `located` ((τ, guard, x-) per guard, by τ, every τ within
/// [`SIMULTANEOUS`] s of the first) met in the step from (x, t): the state is taken at the
/// last τ (past every guard's zero), the resets are applied in the order listed (each at
/// the state the previous one left). On the nominal run every other order is applied too:
/// if the orders give states further apart than `rtol·max(1, max|x|)`, no derivative exists
/// and the answer is refused as [`FerroError::SetValued`]. Returns τ and per guard (guard,
/// its τ, x-, x+).
async fn fire_group(
    link: &Link<'_>,
    x: &DVector<f64>,
    t: f64,
    located: Vec<(f64, usize, DVector<f64>)>,
    rtol: f64,
    nominal: bool,
) -> Result<Fired> {
    let tau = located.last().expect("a group").0;
    let at = link.step(x, tau, t).await?;
    let guards: Vec<usize> = located.iter().map(|l| l.1).collect();
    let apply = |order: Vec<usize>| {
        let at = at.clone();
        async move {
            let mut states = Vec::with_capacity(order.len());
            let mut y = at;
            for &i in &order {
                let plus = link.reset(i, &y, t + tau).await?;
                states.push((y, plus.clone()));
                y = plus;
            }
            Ok::<_, FerroError>(states)
        }
    };
    let first = apply(guards.clone()).await?;
    if nominal && guards.iter().any(|&i| link.has_reset(i)) {
        let orders = crate::hybrid::pieces::permutations(&guards);
        let mut outcomes = Vec::with_capacity(orders.len());
        for o in &orders {
            outcomes.push(apply(o.clone()).await?.pop().expect("a state").1);
        }
        let spread = outcomes
            .iter()
            .map(|y| (y - &outcomes[0]).amax())
            .fold(0.0_f64, f64::max);
        if !(spread <= rtol.max(f64::EPSILON) * outcomes[0].amax().max(1.0)) {
            return Err(FerroError::SetValued {
                t: t + tau,
                orders,
                outcomes: outcomes
                    .iter()
                    .map(|y| y.iter().copied().collect())
                    .collect(),
                spread,
                at: "just after the simultaneous events".into(),
            });
        }
    }
    let group = located
        .into_iter()
        .zip(first)
        .map(|((tau_i, i, _), (minus, plus))| (i, tau_i, minus, plus))
        .collect();
    Ok((tau, group))
}

/// A located event as the report lists it: its saltation matrix estimated for the guard
/// speed and the largest term; a grazing event (guard speed below `graze_speed`) refused.
async fn measured_event(
    link: &Link<'_>,
    ev: &Located,
    opts: &StepOptions,
    delta: f64,
) -> Result<HybridEvent> {
    let (xi, speed) = saltation(link, ev, opts.eps, delta).await?;
    if !(speed.abs() >= opts.graze_speed) {
        return Err(FerroError::Grazing {
            t: ev.t,
            speed: speed.abs(),
            threshold: opts.graze_speed,
            term: amax(&xi),
        });
    }
    Ok(HybridEvent {
        t: ev.t,
        mode_before: 0,
        guard: ev.guard,
        mode_after: 0,
        guard_speed: speed,
        saltation_max: amax(&xi),
    })
}

/// The unguarded-switch check (see [`super::system::SWITCH_FLOOR`]): in every segment that began at
/// an event without a reset (the step's own law changed there), the step Jacobians D_k of
/// successive full steps (central differences in tangent coordinates, probe `eps`; all of
/// them asked as one batch) must change smoothly. A jump (above [`super::system::SWITCH_FLOOR`] and
/// [`SWITCH_RATIO`] times the smaller of its neighbours' changes) means the law
/// changed again inside that step with no guard to locate it (a penalty contact's
/// release): the answer would then hold the fixed grid's error across that switch. The
/// first such step is returned, with the step Jacobians of the law before it (one step
/// earlier where there is one: a state within a probe of the switch gives a mixed one) and
/// after it (one step later likewise), for `switches.rs` to locate. Steps that hold an
/// event, the step before one and the first step after one start within a probe of a
/// switch and are left out (the run records only the others). The probe and the floor are
/// the step's precision's (`precision.rs`; as said in float64).
pub(super) async fn unguarded_switch(
    link: &Link<'_>,
    run: &Run,
    opts: &StepOptions,
) -> Result<Option<Suspect>> {
    let m = link.manifold;
    let n = m.tangent_dim();
    // The first step of a segment starts at the switch itself, where probes straddle it.
    let segs: Vec<(usize, Vec<&SoftStep>)> = run
        .soft
        .iter()
        .map(|(after, seg)| {
            (
                *after,
                seg.iter().skip(1).filter(|s| s.h == opts.dt).collect(),
            )
        })
        .collect();
    let (eps, floor) = super::precision::switch_check(opts.precision, opts.eps);
    let mut calls = Vec::new();
    let mut sizes = Vec::new();
    for s in segs.iter().flat_map(|(_, seg)| seg) {
        let (points, size) = link.probes(&s.x, eps);
        calls.extend(points.into_iter().map(|p| (p, s.h)));
        sizes.push(size);
    }
    let t = segs
        .iter()
        .flat_map(|(_, seg)| seg)
        .next()
        .map_or(0.0, |s| s.t);
    let ys = link.steps(calls, t).await?;
    let mut k = 0;
    for (after, in_seg) in &segs {
        let mut d = Vec::with_capacity(in_seg.len());
        for _ in in_seg {
            let at = |c: usize| &ys[2 * n * k + c];
            let mut dk = DMatrix::zeros(n, n);
            for (j, &size) in sizes[k].iter().enumerate() {
                dk.set_column(j, &column(m, at(0), at(2 * j), at(2 * j + 1), size));
            }
            d.push(dk);
            k += 1;
        }
        let jumps: Vec<f64> = d.windows(2).map(|w| amax(&(&w[1] - &w[0]))).collect();
        for (i, &jump) in jumps.iter().enumerate() {
            let scale = amax(&d[i]).max(1.0);
            let before = if i > 0 { jumps[i - 1] } else { f64::INFINITY };
            let after_ = jumps.get(i + 1).copied().unwrap_or(f64::INFINITY);
            if jump > floor * scale && jump > SWITCH_RATIO * before.min(after_) {
                return Ok(Some(Suspect {
                    x: in_seg[i].x.clone(),
                    t: in_seg[i].t,
                    h: in_seg[i].h,
                    jump,
                    after_guard: *after,
                    before: d[i.saturating_sub(1)].clone(),
                    after: d[(i + 2).min(d.len() - 1)].clone(),
                }));
            }
        }
    }
    Ok(None)
}
