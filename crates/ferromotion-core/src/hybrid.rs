//! `hybrid_jacobian`: the derivative of a hybrid system's flow through its events — a
//! Jacobian, or the pieces of a derivative that has none, or a typed refusal when no honest
//! derivative exists.
//!
//! A hybrid system declares, per mode, a smooth flow `x' = f(x)`, guards `g_i(x)` (an
//! event fires when one crosses from > 0 to <= 0) and resets `x+ = R_i(x-)`. The systems
//! shipped with the core are defined once in [`crate::systems`]. Stepping with a fixed step
//! h, RK4 carries x and the flow Jacobian `Phi' = (df/dx)·Phi`. When guards change sign across
//! a step, each is located inside it by root-finding on the RK4 sub-step length; the earliest
//! fires first and the step goes on from it (several events in one step are taken in their
//! order). The Jacobian passes through the saltation matrix
//!
//! ```text
//! Xi = DR + (f+ - DR·f-)·∇gᵀ / (∇gᵀ·f-)
//! ```
//!
//! (f- before the reset, f+ after it, both at the event). The denominator is the guard
//! speed: as it goes to zero Xi blows up like 1/speed, so an event slower than
//! `graze_speed` is refused (grazing), saying how large Xi would have been.
//!
//! Guards crossed within `simultaneous` seconds of each other are one simultaneous group
//! ([`pieces`]): every order of up to three is enumerated, each order's resets applied in
//! turn and its saltation matrices composed. Orders that give different states are refused
//! as [`FerroError::SetValued`] (with each order's x(t1)); orders that give one state carry
//! one *piece* each (its event order, the cone of perturbations it holds for, its matrix),
//! and the result's Jacobian exists only when the pieces agree within the probe tolerance
//! ([`Pieces::jacobian`], else [`FerroError::NotDifferentiable`]); the directional
//! derivative ([`Pieces::jvp`]) exists either way. Beyond three, [`hybrid_jvp`] orders the
//! events along d.
//!
//! Also refused: hidden state (a flow that depends on something outside x, such as a
//! warm-started solver), whether the system declares it or not: it is also *measured* on
//! every system (a repeated call must repeat; the flow over 2h whole and as two halves must
//! agree to `HIDDEN_STATE_RTOL` or fall like RK4's local error); more events in one step than
//! located apart ([`MAX_EVENTS_PER_STEP`]); and an answer that moves by more than
//! `probe_rtol` when recomputed with half the step. The answer carries J's spectral radius
//! and worst-case gain (largest singular value).
//!
//! Systems with a closed-form flight between events also have their exact answer,
//! [`exact_events`] (the same event logic on exact flights and exact event times).
//!
//! A system known only as a step function `step(x, dt) -> x` (a simulator) is qualified by
//! [`black_box::step_jacobian`], with every derivative measured on the step itself.
//!
//! One file per concern: the system, its options and its answer (here); one RK4 step and
//! the guards crossed in it located (`locate.rs`); one pass from t0 to t1, its events fired
//! (`solve.rs`); the entry points with what they refuse before and after, hidden state and
//! the half-step probe (`qualify.rs`); simultaneous groups (`pieces.rs`); exact flights
//! (`exact.rs`).

pub mod black_box;
pub mod exact;
pub mod pieces;
pub use black_box::{
    step_jacobian, step_jacobian_watched, HalfDt, Joint, JointKind, Manifold, PartialPass,
    StepOptions, StepOutcome, StepPartial, StepProgress, StepSolution, StepSystem, StepWatch,
};
pub use exact::{exact_events, ClosedForm};
pub use pieces::{Piece, Pieces, MAX_ENUMERATED};

use crate::error::{positive, FerroError, Result};
use nalgebra::{DMatrix, DVector};
use serde::Serialize;

/// A hybrid system: modes, smooth flows, guards and resets. SI units are the system's.
pub trait HybridSystem {
    /// A name for messages and receipts.
    fn name(&self) -> String;
    /// Dimension of x.
    fn dim(&self) -> usize;
    /// The flow f(x) in `mode`.
    fn rhs(&self, mode: usize, x: &DVector<f64>) -> DVector<f64>;
    /// df/dx in `mode`.
    fn rhs_jacobian(&self, mode: usize, x: &DVector<f64>) -> DMatrix<f64>;
    /// Number of guards watched in `mode`.
    fn guard_count(&self, mode: usize) -> usize;
    /// Guard `i` in `mode`; the event fires when it crosses from > 0 to <= 0.
    fn guard(&self, mode: usize, i: usize, x: &DVector<f64>) -> f64;
    /// ∇g_i.
    fn guard_gradient(&self, mode: usize, i: usize, x: &DVector<f64>) -> DVector<f64>;
    /// Reset of guard `i`: the new mode and x+.
    fn reset(&self, mode: usize, i: usize, x: &DVector<f64>) -> (usize, DVector<f64>);
    /// dR/dx of guard `i`'s reset.
    fn reset_jacobian(&self, mode: usize, i: usize, x: &DVector<f64>) -> DMatrix<f64>;
    /// State the flow depends on that x does not carry (`None` when there is none).
    fn hidden_state(&self) -> Option<String> {
        None
    }
    /// Check the system's own parameters (called by [`hybrid_jacobian`]).
    fn validate(&self) -> Result<()> {
        Ok(())
    }
}

/// Options of [`hybrid_jacobian`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HybridOptions {
    /// Fixed step, s.
    pub dt: f64,
    /// Events whose guard speed |∇g·f-| is below this are refused as grazing.
    pub graze_speed: f64,
    /// Recompute with dt/2 and refuse if the Jacobian moves by more than this times
    /// max(1, max|J|). Non-positive disables the check.
    pub probe_rtol: f64,
    /// Refuse more than this many steps.
    pub max_steps: u64,
    /// Events located within this many seconds of each other are one simultaneous group.
    pub simultaneous: f64,
}

impl Default for HybridOptions {
    fn default() -> Self {
        HybridOptions {
            dt: 1e-3,
            graze_speed: crate::physics::contact::rigid::DEFAULT_GRAZE_SPEED,
            probe_rtol: 1e-6,
            max_steps: crate::physics::integrate::DEFAULT_MAX_STEPS,
            simultaneous: DEFAULT_SIMULTANEOUS,
        }
    }
}

/// Events located within this many seconds of each other are simultaneous (the default of
/// [`HybridOptions::simultaneous`]).
pub const DEFAULT_SIMULTANEOUS: f64 = 1e-9;

/// One event met on the way.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HybridEvent {
    /// Time, s.
    pub t: f64,
    /// Mode before.
    pub mode_before: usize,
    /// Guard index that fired.
    pub guard: usize,
    /// Mode after.
    pub mode_after: usize,
    /// Guard speed ∇g·f- (negative: the guard was falling).
    pub guard_speed: f64,
    /// Largest |entry| of the saltation matrix.
    pub saltation_max: f64,
}

/// State, Jacobian and events at t1.
#[derive(Debug, Clone, PartialEq)]
pub struct HybridSolution {
    /// x(t1).
    pub x: DVector<f64>,
    /// Mode at t1.
    pub mode: usize,
    /// dx(t1)/dx(t0) when the pieces agree (`pieces.agree()`); NaN otherwise (use
    /// `pieces.jacobian()` for the typed refusal, `pieces.jvp(d)` for the directional
    /// derivative).
    pub jacobian: DMatrix<f64>,
    /// The derivative's linear pieces (one when no events were simultaneous).
    pub pieces: Pieces,
    /// Events in order (of a simultaneous group: its first order's).
    pub events: Vec<HybridEvent>,
    /// max |J(dt) - J(dt/2)| (0 when the probe check is off).
    pub probe_gap: f64,
    /// Spectral radius of J: the largest |eigenvalue| (growth of a repeated map).
    pub spectral_radius: f64,
    /// Worst-case gain of J: its largest singular value (max |J·d| over unit d).
    pub worst_gain: f64,
}

mod locate;
mod qualify;
mod solve;

pub(crate) use locate::step_cap;
pub use locate::MAX_EVENTS_PER_STEP;
pub use qualify::{hybrid_jacobian, hybrid_jvp, HIDDEN_STATE_RTOL};
