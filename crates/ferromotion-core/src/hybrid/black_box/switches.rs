//! Switches no guard declared, located from the step's own behaviour.
//!
//! A push-only penalty contact's release (its force back to zero) is a change of the step's
//! law that a user of a black-box engine rarely knows how to write as a guard. The
//! unguarded-switch check (`run.rs`) sees it as a jump of the step Jacobian between two
//! successive steps (D_i from x_i, D_(i+1) from x_(i+1)): the law changed while the step
//! from x_i ran. Where that can be pinned down it is located and continued from, as a
//! declared guard without a reset would be:
//!
//! - **Bracketed to one step.** Each state y(τ) = step(x_i, τ), 0 ≤ τ ≤ h, is classified
//!   by its own step Jacobian (small probes, [`CLASSIFY_EPS`]): nearer the law before
//!   (D_(i-1) or D_i) or the law after (D_(i+2) or D_(i+1)). Bisection on τ finds where the
//!   class changes, x* = y(τ*).
//! - **Its surface.** Where a continuous field switches law on a surface S, the difference of
//!   the two laws vanishes on S, so the difference of their Jacobians is rank one, w·aᵀ, with
//!   a the normal of S; the jump of the step Jacobian is that to first order in h. The
//!   normal is its leading right singular vector (tangent coordinates), and the jump must be
//!   rank one within [`RANK_ONE`].
//! - **A guard of the driver's own.** g(x) = s·aᵀ(x ⊖ x*), positive on the side before
//!   (s = ±1), armed only within [`WINDOW`] steps of t* (the surface is a plane only near
//!   x*); every row (the nominal run and each probe) locates its own crossing of it, so the
//!   event's time keeps its dependence on x0. The answer is then computed again from the
//!   start with it.
//! - **Continuous field only.** Measured where it is located: each law's field there (the
//!   step from the states just before and just after it, each asked fresh) must agree within
//!   [`FIELD_RTOL`] of its size, or the switch is refused: where the field jumps, the
//!   difference of the laws' Jacobians is not the surface's normal, and a probe on the wrong
//!   side of a plane near it takes the wrong law for a whole step. Refused too (`UnguardedSwitch`, naming why):
//!   a jump that is not rank one, a bracket that does not close, more than [`MAX_SWITCHES`].

use super::manifold::Manifold;
use crate::error::FerroError;
use nalgebra::{DMatrix, DVector};

/// Probes of the classifying step Jacobians, relative (`eps·max(|x_j|, 1)` with this eps):
/// a state this close to the surface is classified by its side only to within the probe.
pub const CLASSIFY_EPS: f64 = 1e-9;
/// The second singular value of the Jacobian's jump at most this fraction of the first.
pub const RANK_ONE: f64 = 0.25;
/// The located guard is armed within this many steps of dt of the switch's time.
pub const WINDOW: f64 = 4.0;
/// At most this many switches located per step size.
pub const MAX_SWITCHES: usize = 8;
/// The field's jump across a located switch, relative to max(1, max|f|), at most this.
pub const FIELD_RTOL: f64 = 1e-3;

/// A switch located from the step's behaviour: a plane through `at` with tangent normal
/// `normal` (positive before), armed for |t - `t`| ≤ `window`.
#[derive(Debug, Clone, PartialEq)]
pub struct Switch {
    /// x* (the state at the switch, just past it).
    pub at: DVector<f64>,
    /// a, unit, tangent coordinates at x*, oriented so that the state before is positive.
    pub normal: DVector<f64>,
    /// t*, s.
    pub t: f64,
    /// Half-width of the window in which the guard is armed, s.
    pub window: f64,
}

impl Switch {
    /// The guard's value at x, reached at time t: aᵀ(x ⊖ x*) inside the window, 1 outside
    /// (not armed).
    pub fn value(&self, m: &Manifold, x: &DVector<f64>, t: f64) -> f64 {
        if (t - self.t).abs() > self.window {
            return 1.0;
        }
        self.normal.dot(&m.offset(&self.at, x))
    }
}

/// A jump the check found: the step from `x` (at `t`, length `h`) holds it, with the step
/// Jacobians before (`before`) and after (`after`) it, in the segment begun at guard `after_guard`.
pub(super) struct Suspect {
    pub x: DVector<f64>,
    pub t: f64,
    pub h: f64,
    pub jump: f64,
    pub after_guard: usize,
    pub before: DMatrix<f64>,
    pub after: DMatrix<f64>,
}

impl Suspect {
    /// The refusal, saying why the switch could not be located.
    pub fn refuse(&self, reason: String) -> FerroError {
        FerroError::UnguardedSwitch {
            t: self.t,
            dt: self.h,
            jump: self.jump,
            after: self.after_guard,
            reason,
        }
    }
}
