//! Black-box hybrid qualification: the Jacobian of a system given only as a step function.
//!
//! A simulator offers `step(x, dt) -> x` and nothing else: no flow Jacobian, no guard
//! gradient, no reset Jacobian. [`step_jacobian`] qualifies it the way
//! [`hybrid_jacobian`](super::hybrid_jacobian) qualifies a declared system, with every
//! derivative measured on the step function itself:
//!
//! - **Events.** Optional guards `g_i(x)` (an event when one crosses from > 0 to <= 0
//!   between two step ends) bracket an event to one step of length h; the event is located
//!   inside it by secant and bisection on the sub-step length τ of `step(x, τ)`, to about
//!   1e-15·h. An optional reset `R_i` is then applied by the driver (for a step function,
//!   such as free flight, that does not apply it itself); without one the step function's
//!   own law is taken to change at the guard (a penalty contact switching on). The step is
//!   finished from the event with `step(x+, h - τ)`.
//! - **Segments.** Between events the map is the composition of plain steps. Its Jacobian
//!   is taken by central differences of the whole segment (probe policy
//!   [`Probe::Relative`]: `eps·max(|x_j|, 1)`, the core's one helper, `check/fd.rs`), once
//!   with `eps` and once with `eps/2`; the two must agree to `probe_rtol` (relative to
//!   max(1, max|J|)) or the answer is refused as probe-dependent.
//! - **Saltation.** Across an event, `Xi = DR + (f+ - DR·f-)·∇gᵀ / (∇gᵀ·f-)`, with
//!   f- = d step(x, s)/ds at s = τ (second-order one-sided differences *before* the event),
//!   f+ = d step(x+, s)/ds at s = 0+ (second-order one-sided differences after it), ∇g and
//!   DR by central differences at the event; Xi is also estimated with half the probes and
//!   must agree as a segment must. Guard speeds |∇g·f-| below `graze_speed` are refused.
//! - **Hidden state, measured.** Before anything else, a step function must be a function
//!   of (x, dt) alone: `step(x0, 2h)` called twice, with another call between, must repeat
//!   bit for bit; and `step(x0, 2h)` against `step(step(x0, h), h)` must agree to
//!   [`SPLIT_RTOL`] relative to max(1, max|x0|), or else that split residual must fall at
//!   least [`SPLIT_FALL`]× when h is halved. An honest integrator's split residual is the
//!   difference of its local errors, O(h^(p+1)) for order p ≥ 1, so it falls at least 4×
//!   (Euler) or 32× (RK4): such steps pass. A step biased by memory of an earlier call
//!   (a warm start, a cache) does not repeat, or leaves a residual that does not fall.
//! - **Refused too:** two events in one step, events in adjacent steps (the step does not
//!   resolve them apart: a chattering contact, and a pair of crossings between two step
//!   ends could hide there), more than `max_steps` steps, and a NaN or infinity from the
//!   step or a guard.
//!
//! The answer carries J's spectral radius and worst-case gain, as the declared driver's does.

use super::{HybridEvent, HybridSolution};
use crate::check::fd::{central_gradient_dyn, central_jacobian_dyn, Probe};
use crate::error::{finite, positive, FerroError, Result};
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

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
/// throughout; `probe_gap` is the largest relative gap between the `eps` and `eps/2`
/// Jacobians of the segments and saltation matrices), and the measured split residual.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSolution {
    /// x(t1), J = dx(t1)/dx(t0), the events, spectral radius and worst gain.
    pub solution: HybridSolution,
    /// |step(x0, 2h) - step(step(x0, h), h)| / max(1, max|x0|) at h = min(dt, (t1-t0)/2).
    pub split_residual: f64,
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

/// A run of plain steps from `x`: the map between two events.
struct Segment {
    x: DVector<f64>,
    t: f64,
    steps: Vec<f64>,
}

impl Segment {
    fn run(&self, sys: &dyn StepSystem, x: &DVector<f64>) -> Result<DVector<f64>> {
        let (mut y, mut t) = (x.clone(), self.t);
        for &h in &self.steps {
            y = step(sys, &y, h, t)?;
            t += h;
        }
        Ok(y)
    }
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
    let split_residual = measure_hidden_state(sys, x0, opts.dt.min(0.5 * (t1 - t0)), t0)?;
    let delta = opts.time_eps * opts.dt;

    // Forward pass: steps, events located, segments recorded.
    let m = sys.guard_count();
    let mut x = x0.clone();
    let mut t = t0;
    let mut segment = Segment {
        x: x0.clone(),
        t: t0,
        steps: Vec::new(),
    };
    let mut segments = Vec::new();
    let mut located: Vec<Located> = Vec::new();
    let mut events: Vec<HybridEvent> = Vec::new();
    let mut last_event_step: Option<u64> = None;
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
        let h = opts.dt.min(t1 - t);
        // Step k ends at t0 + k·dt (no drift from summing dt), the last one at t1.
        let next_t = if t1 - t <= opts.dt {
            t1
        } else {
            t0 + steps as f64 * opts.dt
        };
        let y = step(sys, &x, h, t)?;
        let mut crossed = Vec::new();
        for i in 0..m {
            if guard(sys, i, &x, t)? > 0.0 && guard(sys, i, &y, t + h)? <= 0.0 {
                crossed.push(i);
            }
        }
        let Some(i) = super::one_crossing(&crossed, t, h)? else {
            segment.steps.push(h);
            x = y;
            t = next_t;
            continue;
        };
        // Locate: secant and bisection in turn on the sub-step length s in (0, h].
        let g_at = |s: f64| -> Result<f64> { guard(sys, i, &step(sys, &x, s, t)?, t + s) };
        let (mut lo, mut hi) = (0.0, h);
        let (mut g_lo, mut g_hi) = (guard(sys, i, &x, t)?, guard(sys, i, &y, t + h)?);
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
        let tau = hi;
        let t_event = t + tau;
        if last_event_step.is_some_and(|k| k + 1 == steps) {
            let first = events.last().map_or(t, |e| e.t);
            return Err(FerroError::EventsInAdjacentSteps {
                first,
                second: t_event,
                dt: opts.dt,
            });
        }
        let minus = step(sys, &x, tau, t)?;
        let plus = reset(sys, i, &minus, t_event)?;
        let ev = Located {
            x: x.clone(),
            tau,
            guard: i,
            minus,
            plus,
            t: t_event,
        };
        let (xi, speed) = saltation(sys, &ev, opts.eps, delta)?;
        if !(speed.abs() >= opts.graze_speed) {
            return Err(FerroError::Grazing {
                t: t_event,
                speed: speed.abs(),
                threshold: opts.graze_speed,
                term: amax(&xi),
            });
        }
        events.push(HybridEvent {
            t: t_event,
            mode_before: 0,
            guard: i,
            mode_after: 0,
            guard_speed: speed,
            saltation_max: amax(&xi),
        });
        segment.steps.push(tau);
        segments.push(std::mem::replace(
            &mut segment,
            Segment {
                x: ev.plus.clone(),
                t: t_event,
                steps: Vec::new(),
            },
        ));
        // Finish the step from the event; a second event in the rest is refused.
        let rest = h - tau;
        x = ev.plus.clone();
        if rest > 0.0 {
            let y2 = step(sys, &ev.plus, rest, t_event)?;
            for j in 0..m {
                let g0 = guard(sys, j, &ev.plus, t_event)?;
                // Guard i starts at its zero: it fires again only if it first rose (and the
                // rest is long enough to tell).
                let armed = g0 > 0.0
                    || (j == i
                        && rest > 2.0 * delta
                        && guard(sys, j, &step(sys, &ev.plus, delta, t_event)?, t_event)? > g0);
                if armed && guard(sys, j, &y2, next_t)? <= 0.0 {
                    return Err(FerroError::TwoEventsInOneStep {
                        t,
                        dt: h,
                        first: i,
                        second: j,
                    });
                }
            }
            segment.steps.push(rest);
            x = y2;
        }
        located.push(ev);
        last_event_step = Some(steps);
        t = next_t;
    }
    segments.push(segment);

    // Jacobian: segments by central differences, events by their saltation matrices, each
    // with probes eps and eps/2.
    let n = sys.dim();
    let mut jac = DMatrix::<f64>::identity(n, n);
    let mut probe_gap = 0.0_f64;
    let check = |a: &DMatrix<f64>, b: &DMatrix<f64>, what: String| -> Result<f64> {
        let gap = amax(&(a - b)) / amax(a).max(1.0);
        if opts.probe_rtol > 0.0 && gap > opts.probe_rtol {
            return Err(FerroError::ProbeDependent {
                probe: what,
                gap,
                tolerance: opts.probe_rtol,
            });
        }
        Ok(gap)
    };
    for (k, seg) in segments.iter().enumerate() {
        if !seg.steps.is_empty() {
            let d = |eps: f64| {
                let probe = Probe::Relative {
                    factor: eps,
                    floor: 1.0,
                };
                central_jacobian_dyn(|z| seg.run(sys, z), &seg.x, probe)
            };
            let j1 = d(opts.eps)?;
            if opts.probe_rtol > 0.0 {
                let j2 = d(0.5 * opts.eps)?;
                let what = format!(
                    "eps/2 on the segment from t = {} s ({} steps)",
                    seg.t,
                    seg.steps.len()
                );
                probe_gap = probe_gap.max(check(&j1, &j2, what)?);
            }
            jac = j1 * jac;
        }
        if let Some(ev) = located.get(k) {
            let (xi, _) = saltation(sys, ev, opts.eps, delta)?;
            if opts.probe_rtol > 0.0 {
                let (xi2, _) = saltation(sys, ev, 0.5 * opts.eps, 0.5 * delta)?;
                let what = format!("eps/2 and time_eps/2 on the saltation at t = {} s", ev.t);
                probe_gap = probe_gap.max(check(&xi, &xi2, what)?);
            }
            jac = xi * jac;
        }
    }
    if !jac.iter().all(|v| v.is_finite()) {
        return Err(FerroError::NonFinite {
            what: "hybrid_jacobian (step function)",
            detail: format!("the composed Jacobian at t1 = {t1} s"),
        });
    }
    let spectral_radius = jac
        .complex_eigenvalues()
        .iter()
        .fold(0.0_f64, |m, l| m.max(l.norm()));
    let worst_gain = jac.singular_values().max();
    Ok(StepSolution {
        solution: HybridSolution {
            x,
            mode: 0,
            jacobian: jac,
            events,
            probe_gap,
            spectral_radius,
            worst_gain,
        },
        split_residual,
    })
}
