//! The two smooth laws of events mode and the clipped law without events: which one a
//! rollout follows ([`Mode`]), its right-hand side, its switching function and the
//! saltation matrix of a switch between them ([`System`]).

use super::*;

/// Which smooth law the rollout follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// The push-only law with its `max` (no event location).
    Clipped,
    /// Free flight, a = -g (events mode).
    Free,
    /// The unclipped spring-damper, a = -g + (-k·y - c·v)/m (events mode).
    Pushing,
}

pub(super) struct System<'a> {
    pub(super) law: &'a Penalty,
    pub(super) gravity: f64,
    /// The spring-damper's `A = [[0, 1], [a_y, a_v]]`: `(a_y, a_v) = (-k/m, -c/m)`.
    pub(super) pushing: (f64, f64),
}

impl<'a> System<'a> {
    pub(super) fn new(law: &'a Penalty, gravity: f64) -> Self {
        let pushing = (-law.stiffness / law.mass, -law.damping / law.mass);
        System {
            law,
            gravity,
            pushing,
        }
    }

    #[inline]
    pub(super) fn rhs(&self, mode: Mode, x: &State) -> State {
        let force = match mode {
            Mode::Clipped => self.law.force(x[0], x[1]),
            Mode::Free => 0.0,
            Mode::Pushing => self.law.spring_damper(x[0], x[1]),
        };
        State::new(x[1], force / self.law.mass - self.gravity)
    }

    /// Saltation matrix of a switch from `from` to `to` at the located state `x`:
    /// `I + (f+ - f-)·n^T / (n·f-)` for n the gradient of the switching surface that is
    /// active there (y = 0 at an entry from above, the force's zero otherwise). It is the
    /// entry jump's `[[1, 0], [-c/m, 1]]` at y = 0 and the identity where the force is
    /// continuous (exit, re-engagement).
    pub(super) fn saltation(&self, from: Mode, to: Mode, x: &State) -> Jacobian {
        let (fm, fp) = (self.rhs(from, x), self.rhs(to, x));
        let jump = fp - fm;
        if jump.amax() == 0.0 {
            return Jacobian::identity();
        }
        // Which branch of psi = min(-y, F) is the binding one at the switch.
        let n = if -x[0] <= self.law.spring_damper(x[0], x[1]) {
            State::new(-1.0, 0.0)
        } else {
            State::new(-self.law.stiffness, -self.law.damping)
        };
        let rate = n.dot(&fm);
        if rate == 0.0 {
            return Jacobian::identity();
        }
        Jacobian::identity() + jump * n.transpose() / rate
    }

    /// Positive exactly where the push-only law pushes (y < 0 and -k·y - c·v > 0).
    #[inline]
    pub(super) fn psi(&self, x: &State) -> f64 {
        (-x[0]).min(self.law.spring_damper(x[0], x[1]))
    }
}
