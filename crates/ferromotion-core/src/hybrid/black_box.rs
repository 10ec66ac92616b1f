//! Black-box hybrid qualification: the Jacobian of a system given only as a step function.
//!
//! A simulator offers `step(x, dt) -> x` and nothing else: no flow Jacobian, no guard
//! gradient, no reset Jacobian. [`step_jacobian`] qualifies it the way
//! [`hybrid_jacobian`](super::hybrid_jacobian) qualifies a declared system, with every
//! derivative measured on the step function itself. What it differentiates is the
//! **event-located map** at the engine's dt (the `corrected` route's idea,
//! `physics/integrate/corrected.rs`, and the quadruped's located reference,
//! `experiments/quadruped/located.rs`):
//!
//! - **Events.** Optional guards `g_i(x)` (an event when one crosses from > 0 to <= 0
//!   between two step ends) bracket an event to one step of length h; the event is located
//!   inside it by secant and bisection on the sub-step length τ of `step(x, τ)`, to about
//!   1e-15·h. An optional reset `R_i` is then applied by the driver (for a step function,
//!   such as free flight, that does not apply it itself). Without one the step function's
//!   own law changes at the guard (a penalty contact switching on, or off at its release),
//!   and the step decides its law from its start: the run is continued from a state
//!   strictly past the guard's zero (τ moved on by a few ulps if g is exactly 0 there), so
//!   a step deciding on `g < 0` and one deciding on `g <= 0` both take the new law.
//! - **Grid restarted at every event.** After an event the steps of `dt` start from the
//!   event (the last one shortened to end at t1), so the discretisation of each phase does
//!   not depend on where the event fell between grid points: if it did, its error would
//!   vary with x0 on the scale of |v|·dt and the derivative would pick that variation up
//!   (the fixed-step contact map's wrong sign).
//! - **Jacobian.** The located map is continuous in x0 and smooth within one sequence of
//!   events, and every probe of it keeps its mode sequence: each probe's run locates its
//!   own events and starts each segment on the new law's side. J is taken by central
//!   differences of the whole located map (probe policy [`Probe::Relative`]:
//!   `eps·max(|x_j|, 1)`, the core's one helper, `check/fd.rs`), once with `eps` and once
//!   with `eps/2`; they must agree to `probe_rtol` (relative to max(1, max|J|)), and each
//!   probe must fire the same guards in the same order, or the answer is refused as
//!   probe-dependent. The differences carry each event's saltation (the force jump at a
//!   contact's entry, the reset's) with the event time's own dependence on x0.
//! - **Saltation, measured.** At each event `Xi = DR + (f+ - DR·f-)·∇gᵀ / (∇gᵀ·f-)` is
//!   also estimated from the step function: f- = d step(x, s)/ds at s = τ (second-order
//!   one-sided differences before the event), f+ = d step(x+, s)/ds at s = 0+ (after it),
//!   ∇g and DR by central differences. Its guard speed |∇g·f-| below `graze_speed` is
//!   refused as grazing; its largest entry is reported.
//! - **The engine's own dt, said.** The answer is the derivative of the located map *at the
//!   engine's dt*: it approaches the continuous law's derivative as dt shrinks (first order
//!   for a first-order step), and is not that derivative. With `halve_dt` (the default) it
//!   is also computed at dt/2 and the spread max|J(dt) - J(dt/2)| / max(1, max|J(dt)|) is
//!   reported beside it.
//! - **A switch without a guard is refused.** In every segment that begins at an event
//!   without a reset, the step Jacobians of successive steps (central differences) must
//!   change smoothly; a jump means the law changed again inside a step where no guard
//!   locates it (a penalty contact's release, its force back to zero), and is refused with
//!   [`FerroError::UnguardedSwitch`], which names the guard to declare.
//! - **Hidden state, measured.** Before anything else, a step function must be a function
//!   of (x, dt) alone: `step(x0, 2h)` called twice, with another call between, must repeat
//!   bit for bit; and `step(x0, 2h)` against `step(step(x0, h), h)` must agree to
//!   [`SPLIT_RTOL`] relative to max(1, max|x0|), or else that split residual must fall at
//!   least [`SPLIT_FALL`]× when h is halved. An honest integrator's split residual is the
//!   difference of its local errors, O(h^(p+1)) for order p ≥ 1, so it falls at least 4×
//!   (Euler) or 32× (RK4): such steps pass. A step biased by memory of an earlier call
//!   (a warm start, a cache) does not repeat, or leaves a residual that does not fall.
//! - **Refused too:** two events in one step and events in adjacent steps (the cells of the
//!   grid t0 + k·dt that hold them: the step does not resolve them apart, a chattering
//!   contact, and a pair of crossings between two step ends could hide there), more than
//!   `max_steps` steps, and a NaN or infinity from the step or a guard.
//!
//! The answer carries J's spectral radius and worst-case gain, as the declared driver's
//! does, and the number of step-function calls it took.

use super::{HybridEvent, HybridSolution};
use crate::error::{finite, positive, FerroError, Result};
use crate::numeric::fd::{central_gradient_dyn, central_jacobian_dyn, Probe};
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use std::cell::Cell;

/// A system given as a step function, with optional guards and driver-applied resets.
/// SI units are the system's (time in s).
pub trait StepSystem {
    /// A name for messages.
    fn name(&self) -> String;
    /// Dimension of x.
    fn dim(&self) -> usize;
    /// x after one step of length `dt` from `x`. Must depend on (x, dt) alone (measured).
    fn step(&self, x: &DVector<f64>, dt: f64) -> DVector<f64>;
    /// Number of guards (0: no events are located; the step function is differentiated
    /// as it is).
    fn guard_count(&self) -> usize {
        0
    }
    /// Guard `i`; an event when it crosses from > 0 to <= 0 between step ends.
    fn guard(&self, _i: usize, _x: &DVector<f64>) -> f64 {
        f64::NAN
    }
    /// Whether the driver applies a reset at guard `i`'s event (false: the step function's
    /// own law changes across the guard, and x is continuous there).
    fn has_reset(&self, _i: usize) -> bool {
        false
    }
    /// The reset x+ = R_i(x-) of guard `i` (called only when [`Self::has_reset`]).
    fn reset(&self, _i: usize, x: &DVector<f64>) -> DVector<f64> {
        x.clone()
    }
}

/// Options of [`step_jacobian`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StepOptions {
    /// Fixed step, s.
    pub dt: f64,
    /// Events whose guard speed |∇g·f-| is below this are refused as grazing.
    pub graze_speed: f64,
    /// Each segment's Jacobian (and each saltation matrix) is taken with probes `eps` and
    /// `eps/2`; refused if they differ by more than this times max(1, max|J|).
    /// Non-positive disables the check (one probe only).
    pub probe_rtol: f64,
    /// Refuse more than this many steps.
    pub max_steps: u64,
    /// Central-difference probe in x: `eps·max(|x_j|, 1)`.
    pub eps: f64,
    /// Time probe for f- and f+, as a fraction of `dt`.
    pub time_eps: f64,
    /// Also answer at dt/2 and report the spread (the answer is the derivative of the
    /// event-located map at the engine's dt, which approaches the continuous law's as dt
    /// shrinks; the spread says how far along that is).
    pub halve_dt: bool,
}

impl Default for StepOptions {
    fn default() -> Self {
        let h = super::HybridOptions::default();
        StepOptions {
            dt: h.dt,
            graze_speed: h.graze_speed,
            probe_rtol: h.probe_rtol,
            max_steps: h.max_steps,
            eps: 1e-6,
            time_eps: 1e-4,
            halve_dt: true,
        }
    }
}

/// Split residual (relative to max(1, max|x0|)) at or below which a step function passes
/// the hidden-state measurement outright.
pub const SPLIT_RTOL: f64 = 1e-9;

/// Above [`SPLIT_RTOL`], the split residual must fall at least this many times when h
/// halves: the local error of a method of order p ≥ 1 falls 2^(p+1) ≥ 4 times; 3 leaves
/// room for the pre-asymptotic regime. Memory of an earlier call does not fall like that.
pub const SPLIT_FALL: f64 = 3.0;

/// What [`step_jacobian`] returns: the same solution as the declared driver's (mode 0
/// throughout; `probe_gap` is max|J(eps) - J(eps/2)| / max(1, max|J(eps)|) of the
/// event-located map), the measured split residual, the answer at dt/2 and the cost.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSolution {
    /// x(t1), J = dx(t1)/dx(t0), the events, spectral radius and worst gain, at `dt`.
    pub solution: HybridSolution,
    /// |step(x0, 2h) - step(step(x0, h), h)| / max(1, max|x0|) at h = min(dt, (t1-t0)/2).
    pub split_residual: f64,
    /// The same answer at dt/2 (when [`StepOptions::halve_dt`]).
    pub half_dt: Option<HalfDt>,
    /// Calls of the step function, all passes together (the hidden-state measurement, the
    /// runs, the probes, event location, Xi, the unguarded-switch check, dt/2 too).
    pub step_calls: u64,
}

/// The answer at dt/2, beside the one at dt.
#[derive(Debug, Clone, PartialEq)]
pub struct HalfDt {
    /// x(t1) at dt/2.
    pub x: DVector<f64>,
    /// J at dt/2.
    pub jacobian: DMatrix<f64>,
    /// Events met at dt/2.
    pub events: usize,
    /// max|J(dt) - J(dt/2)| / max(1, max|J(dt)|): the engine's own discretisation, seen
    /// from one halving (the derivative of the located map is first order in dt for a
    /// first-order step).
    pub spread: f64,
}

/// A call of the step function, checked: length `dim`, every entry finite.
fn step(sys: &dyn StepSystem, x: &DVector<f64>, h: f64, t: f64) -> Result<DVector<f64>> {
    let y = sys.step(x, h);
    if y.len() != sys.dim() {
        return Err(FerroError::InvalidParameter {
            name: "step",
            value: y.len() as f64,
            limit: format!("step(x, dt) must return {} numbers", sys.dim()),
        });
    }
    if y.iter().all(|v| v.is_finite()) {
        Ok(y)
    } else {
        Err(FerroError::NonFinite {
            what: "step(x, dt)",
            detail: format!(
                "it returned {:?} for dt = {h:e} s from x = {:?} at t = {t} s",
                y.as_slice(),
                x.as_slice()
            ),
        })
    }
}

/// Guard `i` at x, checked finite.
fn guard(sys: &dyn StepSystem, i: usize, x: &DVector<f64>, t: f64) -> Result<f64> {
    let g = sys.guard(i, x);
    if g.is_finite() {
        Ok(g)
    } else {
        Err(FerroError::NonFinite {
            what: "guard",
            detail: format!(
                "guard {i} returned {g} at x = {:?}, t = {t} s",
                x.as_slice()
            ),
        })
    }
}

/// The reset of guard `i` (identity without one), checked.
fn reset(sys: &dyn StepSystem, i: usize, x: &DVector<f64>, t: f64) -> Result<DVector<f64>> {
    if !sys.has_reset(i) {
        return Ok(x.clone());
    }
    let r = sys.reset(i, x);
    if r.len() != sys.dim() {
        return Err(FerroError::InvalidParameter {
            name: "reset",
            value: r.len() as f64,
            limit: format!("reset {i} must return {} numbers", sys.dim()),
        });
    }
    if r.iter().all(|v| v.is_finite()) {
        Ok(r)
    } else {
        Err(FerroError::NonFinite {
            what: "reset",
            detail: format!("reset {i} returned {:?} at t = {t} s", r.as_slice()),
        })
    }
}

fn amax(m: &DMatrix<f64>) -> f64 {
    m.iter().fold(0.0_f64, |a, v| a.max(v.abs()))
}

/// Hidden state, measured: see the module docs. Returns the split residual at h.
fn measure_hidden_state(sys: &dyn StepSystem, x0: &DVector<f64>, h: f64, t0: f64) -> Result<f64> {
    let scale = x0.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
    let split = |h: f64| -> Result<(f64, DVector<f64>)> {
        let whole = step(sys, x0, 2.0 * h, t0)?;
        let half = step(sys, x0, h, t0)?;
        let two = step(sys, &half, h, t0 + h)?;
        Ok(((&whole - &two).amax() / scale, whole))
    };
    let hidden = |what: String| FerroError::HiddenState {
        system: sys.name(),
        what,
    };
    let (gap, first) = split(h)?;
    // The same call again, after other calls: a memoryless step gives the same bits.
    let again = step(sys, x0, 2.0 * h, t0)?;
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
    if gap > SPLIT_RTOL {
        let (gap_half, _) = split(0.5 * h)?;
        if gap_half * SPLIT_FALL > gap {
            return Err(hidden(format!(
                "measured: step(x0, 2h) and step(step(x0, h), h) differ by {gap:.3e} at h = {h:e} s and by \
                 {gap_half:.3e} at h/2 (relative to max(1, |x0|)): above {SPLIT_RTOL:e} and not falling \
                 {SPLIT_FALL}x as an integrator's local error of order >= 1 does"
            )));
        }
    }
    Ok(gap)
}

/// What the forward pass leaves for one event: enough to estimate Xi at any probe.
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

/// Xi at the event with x-probe `eps` and time probe `delta`; also the guard speed.
fn saltation(
    sys: &dyn StepSystem,
    ev: &Located,
    eps: f64,
    delta: f64,
) -> Result<(DMatrix<f64>, f64)> {
    let n = sys.dim();
    let t = ev.t;
    let probe = Probe::Relative {
        factor: eps,
        floor: 1.0,
    };
    // f-: d step(x, s)/ds at s = tau, from the side before the event (second order).
    let f_minus = if ev.tau >= 2.0 * delta {
        let a = step(sys, &ev.x, ev.tau - delta, t)?;
        let b = step(sys, &ev.x, ev.tau - 2.0 * delta, t)?;
        (3.0 * &ev.minus - 4.0 * a + b) / (2.0 * delta)
    } else {
        // The event is at the step's very start: the same stencil on [0, tau], step(x, 0) = x.
        let d = 0.5 * ev.tau;
        let a = step(sys, &ev.x, d, t)?;
        (3.0 * &ev.minus - 4.0 * a + &ev.x) / (2.0 * d)
    };
    // f+: d step(x+, s)/ds at s = 0+, forward (second order).
    let a = step(sys, &ev.plus, delta, t)?;
    let b = step(sys, &ev.plus, 2.0 * delta, t)?;
    let f_plus = (4.0 * a - b - 3.0 * &ev.plus) / (2.0 * delta);
    let grad = central_gradient_dyn(|x| guard(sys, ev.guard, x, t), &ev.minus, probe)?;
    let dr = if sys.has_reset(ev.guard) {
        central_jacobian_dyn(|x| reset(sys, ev.guard, x, t), &ev.minus, probe)?
    } else {
        DMatrix::identity(n, n)
    };
    let speed = grad.dot(&f_minus);
    let xi = &dr + (&f_plus - &dr * &f_minus) * grad.transpose() / speed;
    Ok((xi, speed))
}

/// The step function with its calls counted (the cost the answer reports).
struct Counted<'a> {
    sys: &'a dyn StepSystem,
    calls: Cell<u64>,
}

impl StepSystem for Counted<'_> {
    fn name(&self) -> String {
        self.sys.name()
    }
    fn dim(&self) -> usize {
        self.sys.dim()
    }
    fn step(&self, x: &DVector<f64>, dt: f64) -> DVector<f64> {
        self.calls.set(self.calls.get() + 1);
        self.sys.step(x, dt)
    }
    fn guard_count(&self) -> usize {
        self.sys.guard_count()
    }
    fn guard(&self, i: usize, x: &DVector<f64>) -> f64 {
        self.sys.guard(i, x)
    }
    fn has_reset(&self, i: usize) -> bool {
        self.sys.has_reset(i)
    }
    fn reset(&self, i: usize, x: &DVector<f64>) -> DVector<f64> {
        self.sys.reset(i, x)
    }
}

/// A step of length h from t inside a segment that began at an event without a reset:
/// what the unguarded-switch check differentiates.
struct SoftStep {
    x: DVector<f64>,
    h: f64,
    t: f64,
}

/// One event-located run from x0 to t1.
struct Run {
    x: DVector<f64>,
    /// The guards that fired, in order (a probe must keep this sequence).
    fired: Vec<usize>,
    /// Nominal runs only: the events, what Xi needs of each, and the steps of every segment
    /// that began at an event without a reset, with the guard of that event.
    events: Vec<HybridEvent>,
    soft: Vec<(usize, Vec<SoftStep>)>,
}

/// The cell of the grid t0 + k·dt that holds time t (two events in one cell are two events
/// in one step; in cells k and k+1, events in adjacent steps).
fn grid_cell(t: f64, t0: f64, dt: f64) -> i64 {
    libm::floor((t - t0) / dt) as i64
}

/// The event-located run (see the module docs): steps of `dt` from t0; an event located
/// inside its step, taken there (strictly on the guard's far side when the step's own law
/// changes), reset if the guard has a reset, and the grid restarted at it. `nominal` runs
/// also estimate each event's saltation matrix (for its guard speed, the grazing refusal
/// and the report) and keep the steps the unguarded-switch check needs.
fn run(
    sys: &dyn StepSystem,
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
        events: Vec::new(),
        soft: Vec::new(),
    };
    let mut x = x0.clone();
    let mut t = t0;
    // The grid restarts at every event: step k after the anchor ends at anchor + k·dt.
    let (mut anchor, mut count) = (t0, 0u64);
    let mut last: Option<(usize, i64, f64)> = None;
    let mut fresh: Option<usize> = None;
    let mut recording = false;
    let mut g_x: Option<Vec<f64>> = None;
    let mut steps = 0u64;
    while t < t1 {
        steps += 1;
        super::step_cap(
            "hybrid_jacobian (step function)",
            steps,
            opts.max_steps,
            t,
            t1,
        )?;
        let (h, next_t) = if t1 - t <= opts.dt {
            (t1 - t, t1)
        } else {
            count += 1;
            (opts.dt, anchor + count as f64 * opts.dt)
        };
        let y = step(sys, &x, h, t)?;
        // The guards at the step's start are those at the previous step's end (one guard
        // call per guard and step).
        let gx = match g_x.take() {
            Some(g) => g,
            None => guards(sys, &x, t)?,
        };
        let gy = guards(sys, &y, t + h)?;
        let crossed = crossed_guards(sys, &x, t, h, &gx, &gy, fresh, delta)?;
        fresh = None;
        let Some(i) = super::one_crossing(&crossed, t, h)? else {
            if let Some((_, seg)) = out.soft.last_mut().filter(|_| recording) {
                seg.push(SoftStep { x: x.clone(), h, t });
            }
            x = y;
            t = next_t;
            g_x = Some(gy);
            continue;
        };
        let (tau, minus) = locate(sys, i, &x, t, h, (gx[i], gy[i]), delta)?;
        let t_event = t + tau;
        let cell = grid_cell(t_event, t0, opts.dt);
        spaced(last, (i, cell, t_event), t0, opts.dt)?;
        let plus = reset(sys, i, &minus, t_event)?;
        if nominal {
            let ev = Located {
                x: x.clone(),
                tau,
                guard: i,
                minus,
                plus: plus.clone(),
                t: t_event,
            };
            out.events.push(measured_event(sys, &ev, opts, delta)?);
            // The step before this one ends where the event's step starts, possibly within a
            // probe of the switch: left out of the check, as the event's own step is.
            if let Some((_, seg)) = out.soft.last_mut().filter(|_| recording) {
                seg.pop();
            }
            recording = !sys.has_reset(i);
            if recording {
                out.soft.push((i, Vec::new()));
            }
        }
        out.fired.push(i);
        last = Some((i, cell, t_event));
        fresh = Some(i);
        x = plus;
        t = t_event;
        (anchor, count) = (t_event, 0);
    }
    out.x = x;
    Ok(out)
}

/// Every guard's value at (x, t).
fn guards(sys: &dyn StepSystem, x: &DVector<f64>, t: f64) -> Result<Vec<f64>> {
    (0..sys.guard_count())
        .map(|i| guard(sys, i, x, t))
        .collect()
}

/// The guards a step from (x, t) of length h crosses: from above zero at its start (`gx`)
/// to at or below at its end (`gy`). The guard of the event this step starts from
/// (`fresh`) sits at its zero: it fires again only if it first rises (and the step is long
/// enough to tell).
#[allow(clippy::too_many_arguments)]
fn crossed_guards(
    sys: &dyn StepSystem,
    x: &DVector<f64>,
    t: f64,
    h: f64,
    gx: &[f64],
    gy: &[f64],
    fresh: Option<usize>,
    delta: f64,
) -> Result<Vec<usize>> {
    let mut crossed = Vec::new();
    for i in 0..gx.len() {
        let armed = gx[i] > 0.0
            || (fresh == Some(i)
                && h > 2.0 * delta
                && guard(sys, i, &step(sys, x, delta, t)?, t + delta)? > gx[i]);
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
fn locate(
    sys: &dyn StepSystem,
    i: usize,
    x: &DVector<f64>,
    t: f64,
    h: f64,
    (g0, g_end): (f64, f64),
    delta: f64,
) -> Result<(f64, DVector<f64>)> {
    let g_at = |s: f64| -> Result<f64> { guard(sys, i, &step(sys, x, s, t)?, t + s) };
    let (mut lo, mut g_lo) = if g0 > 0.0 {
        (0.0, g0)
    } else {
        (delta, g_at(delta)?)
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
        let g = g_at(s)?;
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
    let mut minus = step(sys, x, tau, t)?;
    if !sys.has_reset(i) {
        // The step's own law changes here and the next step decides it from its start:
        // start strictly past the zero (a step deciding `g < 0` and one deciding `g <= 0`
        // then agree), a few ulps of s on.
        let mut ulp = tau * f64::EPSILON;
        while guard(sys, i, &minus, t + tau)? == 0.0 && tau < h {
            tau = (tau + ulp).min(h);
            ulp *= 2.0;
            minus = step(sys, x, tau, t)?;
        }
    }
    Ok((tau, minus))
}

/// Refuses an event `(guard, cell, t)` in the same grid cell as the previous one `last`
/// (two events in one step) or in the next cell (events in adjacent steps).
fn spaced(
    last: Option<(usize, i64, f64)>,
    (i, cell, t_event): (usize, i64, f64),
    t0: f64,
    dt: f64,
) -> Result<()> {
    let Some((j, prev_cell, prev_t)) = last else {
        return Ok(());
    };
    if cell == prev_cell {
        return Err(FerroError::TwoEventsInOneStep {
            t: t0 + cell as f64 * dt,
            dt,
            first: j,
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

/// A located event as the report lists it: its saltation matrix estimated for the guard
/// speed and the largest term; a grazing event (guard speed below `graze_speed`) refused.
fn measured_event(
    sys: &dyn StepSystem,
    ev: &Located,
    opts: &StepOptions,
    delta: f64,
) -> Result<HybridEvent> {
    let (xi, speed) = saltation(sys, ev, opts.eps, delta)?;
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

/// A step Jacobian that changes by more than this (relative to max(1, max|D|)) from one
/// step to the next, inside a segment begun at a law change...
pub const SWITCH_FLOOR: f64 = 1e-6;
/// ...and by more than this many times the change between the steps either side of it, is
/// a switch of the step's law that no guard declared ([`FerroError::UnguardedSwitch`]).
pub const SWITCH_RATIO: f64 = 1e3;

/// The unguarded-switch check: in every segment that began at an event without a reset (the
/// step's own law changed there), the step Jacobians D_k of successive full steps (central
/// differences, probe `eps`) must change smoothly. A jump (above [`SWITCH_FLOOR`] and
/// [`SWITCH_RATIO`] times the smaller of its neighbours' changes) means the law changed
/// again inside that step with no guard to locate it (a penalty contact's release): the
/// answer would then hold the fixed grid's error across that switch, and is refused. Steps
/// that hold an event, the step before one and the first step after one start within a
/// probe of a switch and are left out (the run records only the others).
fn unguarded_switch(sys: &dyn StepSystem, run: &Run, opts: &StepOptions) -> Result<()> {
    let probe = Probe::Relative {
        factor: opts.eps,
        floor: 1.0,
    };
    for (after, seg) in &run.soft {
        // The first step starts at the switch itself, where probes straddle it: left out.
        let full: Vec<&SoftStep> = seg.iter().skip(1).filter(|s| s.h == opts.dt).collect();
        let mut d = Vec::with_capacity(full.len());
        for s in &full {
            d.push(central_jacobian_dyn(
                |z| step(sys, z, s.h, s.t),
                &s.x,
                probe,
            )?);
        }
        let jumps: Vec<f64> = d.windows(2).map(|w| amax(&(&w[1] - &w[0]))).collect();
        for (k, &jump) in jumps.iter().enumerate() {
            let scale = amax(&d[k]).max(1.0);
            let before = if k > 0 { jumps[k - 1] } else { f64::INFINITY };
            let after_ = jumps.get(k + 1).copied().unwrap_or(f64::INFINITY);
            let neighbours = before.min(after_);
            if jump > SWITCH_FLOOR * scale && jump > SWITCH_RATIO * neighbours {
                return Err(FerroError::UnguardedSwitch {
                    t: full[k].t,
                    dt: full[k].h,
                    jump,
                    after: *after,
                });
            }
        }
    }
    Ok(())
}

/// The answer at one step size: the nominal run, the unguarded-switch check, and J by
/// central differences of the event-located map with probes eps and eps/2.
struct Answer {
    run: Run,
    jacobian: DMatrix<f64>,
    probe_gap: f64,
}

fn answer_at(
    sys: &dyn StepSystem,
    x0: &DVector<f64>,
    t0: f64,
    t1: f64,
    opts: &StepOptions,
) -> Result<Answer> {
    let nominal = run(sys, x0, t0, t1, opts, true)?;
    unguarded_switch(sys, &nominal, opts)?;
    let map = |eps: f64| {
        let probe = Probe::Relative {
            factor: eps,
            floor: 1.0,
        };
        central_jacobian_dyn(
            |z| {
                let r = run(sys, z, t0, t1, opts, false)?;
                if r.fired != nominal.fired {
                    return Err(FerroError::ProbeDependent {
                        probe: format!(
                            "probe eps = {eps:e} (relative): it changed the guards fired from {:?} to {:?}",
                            nominal.fired, r.fired
                        ),
                        gap: f64::INFINITY,
                        tolerance: opts.probe_rtol,
                    });
                }
                Ok(r.x)
            },
            x0,
            probe,
        )
    };
    let jacobian = map(opts.eps)?;
    let mut probe_gap = 0.0;
    if opts.probe_rtol > 0.0 {
        let half = map(0.5 * opts.eps)?;
        probe_gap = amax(&(&jacobian - &half)) / amax(&jacobian).max(1.0);
        if probe_gap > opts.probe_rtol {
            return Err(FerroError::ProbeDependent {
                probe: format!(
                    "eps/2 on the event-located map from t = {t0} s to {t1} s at dt = {:e} s ({} events)",
                    opts.dt,
                    nominal.fired.len()
                ),
                gap: probe_gap,
                tolerance: opts.probe_rtol,
            });
        }
    }
    if !jacobian.iter().all(|v| v.is_finite()) {
        return Err(FerroError::NonFinite {
            what: "hybrid_jacobian (step function)",
            detail: format!("the Jacobian at t1 = {t1} s"),
        });
    }
    Ok(Answer {
        run: nominal,
        jacobian,
        probe_gap,
    })
}

/// The Jacobian dx(t1)/dx(t0) of a black-box step function through its events (see the
/// module docs), or a typed refusal.
pub fn step_jacobian(
    sys: &dyn StepSystem,
    x0: &DVector<f64>,
    t0: f64,
    t1: f64,
    opts: &StepOptions,
) -> Result<StepSolution> {
    positive("dt", opts.dt)?;
    positive("graze_speed", opts.graze_speed)?;
    positive("eps", opts.eps)?;
    positive("time_eps", opts.time_eps)?;
    finite("t0", t0)?;
    positive("t1 - t0", t1 - t0)?;
    if x0.len() != sys.dim() || sys.dim() == 0 || x0.iter().any(|v| !v.is_finite()) {
        return Err(FerroError::InvalidParameter {
            name: "x0",
            value: x0.len() as f64,
            limit: format!("must hold {} finite numbers", sys.dim()),
        });
    }
    let counted = Counted {
        sys,
        calls: Cell::new(0),
    };
    let sys: &dyn StepSystem = &counted;
    let split_residual = measure_hidden_state(sys, x0, opts.dt.min(0.5 * (t1 - t0)), t0)?;
    let at = answer_at(sys, x0, t0, t1, opts)?;
    let half_dt = if opts.halve_dt {
        let half = StepOptions {
            dt: 0.5 * opts.dt,
            ..*opts
        };
        let h = answer_at(sys, x0, t0, t1, &half)?;
        let spread = amax(&(&at.jacobian - &h.jacobian)) / amax(&at.jacobian).max(1.0);
        Some(HalfDt {
            x: h.run.x,
            jacobian: h.jacobian,
            events: h.run.events.len(),
            spread,
        })
    } else {
        None
    };
    let jac = at.jacobian;
    let spectral_radius = jac
        .complex_eigenvalues()
        .iter()
        .fold(0.0_f64, |m, l| m.max(l.norm()));
    let worst_gain = jac.singular_values().max();
    Ok(StepSolution {
        solution: HybridSolution {
            x: at.run.x,
            mode: 0,
            pieces: super::Pieces::one(&jac),
            jacobian: jac,
            events: at.run.events,
            probe_gap: at.probe_gap,
            spectral_radius,
            worst_gain,
        },
        split_residual,
        half_dt,
        step_calls: counted.calls.get(),
    })
}
