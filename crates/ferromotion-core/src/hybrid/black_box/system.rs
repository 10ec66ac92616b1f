//! The black-box driver's inputs: the step-function trait, its options and the thresholds
//! of its checks (see `black_box.rs`).

use super::manifold::Joint;
use crate::error::Result;
use nalgebra::DVector;
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
    /// The step of every state in `xs` by `dt` (one batch; the driver never mixes step
    /// lengths in one call). The default steps them one by one with [`Self::step`]. An
    /// error stops the driver ([`StepOutcome::Stopped`]; a binding's exception or Ctrl-C).
    fn step_batch(&self, xs: &[DVector<f64>], dt: f64) -> Result<Vec<DVector<f64>>> {
        Ok(xs.iter().map(|x| self.step(x, dt)).collect())
    }
    /// Guard `i` at every state in `xs` (one batch); default: one by one.
    fn guard_batch(&self, i: usize, xs: &[DVector<f64>]) -> Result<Vec<f64>> {
        Ok(xs.iter().map(|x| self.guard(i, x)).collect())
    }
    /// Reset `i` of every state in `xs` (one batch); default: one by one.
    fn reset_batch(&self, i: usize, xs: &[DVector<f64>]) -> Result<Vec<DVector<f64>>> {
        Ok(xs.iter().map(|x| self.reset(i, x)).collect())
    }
    /// At most how many states one batch call may hold, and how many rows run at once
    /// (1, the default: a one-state step function; `usize::MAX`: every row at once).
    fn batch_rows(&self) -> usize {
        1
    }
    /// The free and ball joints of x (none by default: x is flat).
    fn manifold(&self) -> Vec<Joint> {
        Vec::new()
    }
}

/// Unit round-off of float64 arithmetic, 2^-53: a step's default precision.
pub const FLOAT64: f64 = f64::EPSILON / 2.0;
/// Unit round-off of float32 arithmetic, 2^-24 (MuJoCo Warp, Warp, most GPU engines).
pub const FLOAT32: f64 = f32::EPSILON as f64 / 2.0;

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
    /// The unit round-off of the step's arithmetic ([`FLOAT64`] by default; [`FLOAT32`]
    /// for a float32 engine): the probe, the probe tolerance and the unguarded-switch
    /// check's floor are scaled by it (`black_box/precision.rs`).
    pub precision: f64,
}

impl Default for StepOptions {
    fn default() -> Self {
        let h = crate::hybrid::HybridOptions::default();
        StepOptions {
            dt: h.dt,
            graze_speed: h.graze_speed,
            probe_rtol: h.probe_rtol,
            max_steps: h.max_steps,
            eps: 1e-6,
            time_eps: 1e-4,
            halve_dt: true,
            precision: FLOAT64,
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

/// A step Jacobian that changes by more than this (relative to max(1, max|D|); in float64,
/// raised for a coarser declared precision, `black_box/precision.rs`) from one
/// step to the next, inside a segment begun at a law change...
pub const SWITCH_FLOOR: f64 = 1e-6;
/// ...and by more than this many times the change between the steps either side of it, is
/// a switch of the step's law that no guard declared ([`FerroError::UnguardedSwitch`]).
pub const SWITCH_RATIO: f64 = 1e3;
