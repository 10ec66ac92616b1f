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
use crate::physics::integrate::fixed::{step_count, StepStability};
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

/// The contact-phase step's stability for `law` at step `dt`: RK4's step matrix in contact is
/// its stability polynomial `R(z) = 1 + z + z²/2 + z³/6 + z⁴/24` at `dt·A`, `A = [[0, 1],
/// [-k/m, -c/m]]`, whose eigenvalues are `R(dt·λ)` for `λ = ω·(-ζ ± i·sqrt(1 - ζ²))` the
/// eigenvalues of A (a complex pair: ζ < 1). Stable while `|R(dt·λ)| <= 1`: undamped, up to
/// ω·dt = 2·sqrt(2) ≈ 2.83.
pub fn rk4_step_stability(law: &Penalty, dt: f64) -> StepStability {
    let omega = law.omega();
    let zeta = law.damping / (2.0 * (law.stiffness * law.mass).sqrt());
    // z = dt·λ = (re, im); R(z) by Horner in complex arithmetic.
    let (re, im) = (
        -zeta * omega * dt,
        omega * dt * (1.0 - zeta * zeta).max(0.0).sqrt(),
    );
    let mul = |(a, b): (f64, f64), (c, d): (f64, f64)| (a * c - b * d, a * d + b * c);
    let mut r = (1.0 / 24.0, 0.0);
    for coeff in [1.0 / 6.0, 0.5, 1.0, 1.0] {
        let p = mul(r, (re, im));
        r = (p.0 + coeff, p.1);
    }
    let spectral_radius = (r.0 * r.0 + r.1 * r.1).sqrt();
    StepStability {
        omega_dt: omega * dt,
        spectral_radius,
        stable: spectral_radius <= 1.0 + 1e-12,
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
/// result. An unstable step (explicit RK4 is stable while omega·dt stays below about 2.8,
/// omega = sqrt(k/m)) can also blow up to large finite numbers: the answer's
/// `step_stability` ([`rk4_step_stability`]) says so, as the fixed route's does.
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
    r.step_stability = Some(rk4_step_stability(&law, dt));
    Ok(r)
}

/// The RK4 map's x(T) alone (no tangent), for finite-difference oracles.
pub fn rk4_state(drop: &Drop, k: f64, dt: f64, opts: &Rk4Options) -> Result<State> {
    rk4(drop, k, dt, opts).map(|r| r.state)
}
