//! The `rk4` route: classical fourth-order Runge–Kutta at a fixed step, tangent by forward mode.
//!
//! ```text
//! f(y, v) = [v, F(y, v)/m - g]                      (push-only penalty law, docs/model.md §2)
//! k1 = f(x),  k2 = f(x + dt/2·k1),  k3 = f(x + dt/2·k2),  k4 = f(x + dt·k3)
//! x_{n+1} = x_n + dt/6·(k1 + 2·k2 + 2·k3 + k4)
//! ```
//!
//! The tangent is what forward-mode autodiff returns for that loop: each stage's
//! `K_i = A(x_i)·(J + c_i·dt·K_{i-1})`, with `A = [[0, 1], [a_y, a_v]]` the derivative of
//! the branch the stage point is on (`a_y = -k/m`, `a_v = -c/m` while pushing, zero in
//! flight). Four force evaluations per step.
//!
//! It exists to tell "higher order" apart from "adaptive" and "event-located": on a smooth
//! stretch it converges at fourth order in dt (tests/rk4_route.rs, against the closed form
//! of a contact phase), but a uniform step straddles the force's jump at contact entry
//! wherever the impact falls, and like every branch-wise tangent it never sees that jump's
//! saltation `[[1, 0], [-c/m, 1]]`: through the switch its Jacobian does not converge to
//! the flow's at all (the same missing term as the `fixed` route's), and its state only at
//! low order. A higher order buys nothing across the non-smooth point.

use crate::error::{FerroError, Result};
use crate::physics::contact::penalty::check_finite;
use crate::physics::integrate::fixed::{spectral_radius, step_count, StepStability};
use crate::physics::model::{Drop, Penalty};
use crate::physics::state::{Cost, Jacobian, RouteResult, State};
use nalgebra::Matrix2;

/// Options of the `rk4` route.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Rk4Options {
    /// Refuse rollouts longer than this many steps.
    pub max_steps: u64,
}

impl Default for Rk4Options {
    fn default() -> Self {
        Rk4Options {
            max_steps: super::DEFAULT_MAX_STEPS,
        }
    }
}

/// The right-hand side at `x` and the derivative of the branch it is on.
#[inline]
fn rhs(law: &Penalty, gravity: f64, inv_m: f64, x: &State) -> (State, Matrix2<f64>) {
    let (y, v) = (x[0], x[1]);
    let f = law.spring_damper(y, v);
    if y < 0.0 && f > 0.0 {
        (
            State::new(v, f * inv_m - gravity),
            Matrix2::new(0.0, 1.0, -law.stiffness * inv_m, -law.damping * inv_m),
        )
    } else {
        (State::new(v, -gravity), Matrix2::new(0.0, 1.0, 0.0, 0.0))
    }
}

/// Run `n` classical RK4 steps of the penalty drop from `x`, carrying the tangent `jac`.
pub fn rk4_with_tangent(
    law: &Penalty,
    gravity: f64,
    dt: f64,
    n: u64,
    x: State,
    jac: Jacobian,
) -> (State, Jacobian) {
    let inv_m = 1.0 / law.mass;
    let (mut x, mut j) = (x, jac);
    let half = 0.5 * dt;
    for _ in 0..n {
        let (k1, a1) = rhs(law, gravity, inv_m, &x);
        let d1 = a1 * j;
        let (k2, a2) = rhs(law, gravity, inv_m, &(x + half * k1));
        let d2 = a2 * (j + half * d1);
        let (k3, a3) = rhs(law, gravity, inv_m, &(x + half * k2));
        let d3 = a3 * (j + half * d2);
        let (k4, a4) = rhs(law, gravity, inv_m, &(x + dt * k3));
        let d4 = a4 * (j + dt * d3);
        x += (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
        j += (dt / 6.0) * (d1 + 2.0 * d2 + 2.0 * d3 + d4);
    }
    (x, j)
}

/// The `rk4` route: N = round(T/dt) classical RK4 steps with the forward-mode tangent.
///
/// Refuses a dt that does not divide T, more than `max_steps` steps, and a non-finite
/// result (explicit RK4 is stable while omega·dt stays below about 2.8, omega = sqrt(k/m));
/// a finite result from an unstable step is returned flagged (`step_stability`, see
/// [`step_stability`]).
pub fn rk4(drop: &Drop, k: f64, dt: f64, opts: &Rk4Options) -> Result<RouteResult> {
    drop.validate()?;
    let law = drop.penalty(k)?;
    let n = step_count(drop.t_final, dt, opts.max_steps).map_err(|e| match e {
        FerroError::TooManySteps {
            max_steps, detail, ..
        } => FerroError::TooManySteps {
            route: "rk4",
            max_steps,
            detail,
        },
        other => other,
    })?;
    let (x, jac) = rk4_with_tangent(&law, drop.gravity, dt, n, drop.x0(), Jacobian::identity());
    check_finite("rk4 state", &x, &jac).map_err(|_| FerroError::NonFinite {
        what: "rk4 state",
        detail: format!(
            "omega·dt = {:e}: explicit RK4 is unstable above about 2.8",
            law.omega() * dt
        ),
    })?;
    let mut r = RouteResult::new(
        x,
        jac,
        Cost {
            steps: n,
            force_evals: 4 * n,
            rollouts: 1,
            ..Cost::default()
        },
    );
    r.step_stability = Some(step_stability(&law, dt));
    Ok(r)
}

/// Whether the RK4 step is stable in contact at step `dt`: the spectral radius of its
/// contact-phase step matrix `I + Z + Z²/2 + Z³/6 + Z⁴/24` (`Z = dt·A`, `A` the pushing law's
/// `[[0, 1], [-k/m, -c/m]]`). Above 1 the contact oscillation grows every step; the push-only
/// law cuts it off when the force returns to zero, so the rollout usually stays finite but
/// throws the mass off far too fast (k = 1e10, dt = 1e-4: a 1 m drop ends 13 m up). For an
/// undamped law the limit is ω·dt = 2√2.
pub fn step_stability(law: &Penalty, dt: f64) -> StepStability {
    let z = Matrix2::new(
        0.0,
        dt,
        -law.stiffness / law.mass * dt,
        -law.damping / law.mass * dt,
    );
    let z2 = z * z;
    let z3 = z2 * z;
    let z4 = z3 * z;
    let m = Matrix2::identity() + z + z2 / 2.0 + z3 / 6.0 + z4 / 24.0;
    StepStability::of(law, dt, spectral_radius(0.5 * m.trace(), m.determinant()))
}

/// The RK4 map's x(T) alone (no tangent), for finite-difference oracles.
pub fn rk4_state(drop: &Drop, k: f64, dt: f64, opts: &Rk4Options) -> Result<State> {
    rk4(drop, k, dt, opts).map(|r| r.state)
}
