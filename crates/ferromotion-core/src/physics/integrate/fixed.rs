//! The `fixed` route: semi-implicit Euler with a forward-mode tangent through every step.
//!
//! ```text
//! v_{n+1} = v_n + dt·a(y_n, v_n),    y_{n+1} = y_n + dt·v_{n+1},    a = -g + F(y, v)/m
//! ```
//!
//! The tangent is what an autodiff framework (JAX, PyTorch, Warp, Brax) computes for
//! this loop: `J_{n+1} = A_n·J_n` with `A_n` the derivative of one step, where the
//! branch `y < 0 && F > 0` is taken as given and not differentiated. The discrete map is
//! discontinuous where the first contact step changes; the tangent cannot see that jump,
//! and that is the whole error this project measures.

use crate::error::{positive, FerroError, Result};
use crate::physics::contact::penalty::check_finite;
use crate::physics::model::{Drop, Penalty};
use crate::physics::state::{Cost, Jacobian, RouteResult, State};

/// Options of the `fixed` route.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FixedOptions {
    /// Refuse rollouts longer than this many steps.
    pub max_steps: u64,
}

impl Default for FixedOptions {
    fn default() -> Self {
        FixedOptions {
            max_steps: super::DEFAULT_MAX_STEPS,
        }
    }
}

/// Number of steps N = round(T/dt), refusing a dt that does not divide T to 1e-9
/// relative or that needs more than `max_steps` steps.
pub fn step_count(t_final: f64, dt: f64, max_steps: u64) -> Result<u64> {
    positive("dt", dt)?;
    let ratio = t_final / dt;
    if ratio.is_nan() || ratio > max_steps as f64 {
        return Err(FerroError::TooManySteps {
            route: "fixed",
            max_steps,
            detail: format!(
                "T/dt = {ratio:e} steps would be needed; the smallest dt within the cap is {} s",
                crate::error::Num(t_final / max_steps as f64)
            ),
        });
    }
    let n = ratio.round();
    if n < 1.0 || ((n * dt - t_final) / t_final).abs() > 1e-9 {
        return Err(FerroError::StepDoesNotDivide { dt, t_final, ratio });
    }
    Ok(n as u64)
}

/// Run `n` semi-implicit Euler steps of the penalty drop from `x`, carrying the tangent.
///
/// This is the hot loop (one force evaluation per step). The tangent update is written
/// out because the step Jacobian has the shape
/// `A = [[1 + dt²·a_y, dt·(1 + dt·a_v)], [dt·a_y, 1 + dt·a_v]]`.
///
/// In flight (no force) `a_y = a_v = 0` and `A = [[1, dt], [0, 1]]`, so that branch updates
/// only the top row: `J00 += dt·J10`, `J01 += dt·J11`. The general update would add
/// `dt·(0·J0j + 0·J1j)` to `J1j`, which is a signed zero for finite entries and leaves them
/// unchanged, bit for bit, unless an entry is -0.0 (never, for a tangent started from
/// entries without -0.0: each entry is updated as `J + term`, and a sum is -0.0 only when
/// both terms are). Skipping it takes the loop-carried chain of a flight step from about
/// 18 floating-point latencies to 3 (6.6 -> 1.6 ns/step at 2.6 GHz, `make bench`);
/// `tests/fixed_loop_identity.rs` checks the bits against the general update.
#[inline]
pub fn euler_with_tangent(
    law: &Penalty,
    gravity: f64,
    dt: f64,
    n: u64,
    x: State,
    jac: Jacobian,
) -> (State, Jacobian) {
    let (k, c, inv_m) = (law.stiffness, law.damping, 1.0 / law.mass);
    let (mut y, mut v) = (x[0], x[1]);
    let (mut j00, mut j01, mut j10, mut j11) = (jac[(0, 0)], jac[(0, 1)], jac[(1, 0)], jac[(1, 1)]);
    for _ in 0..n {
        let f = -k * y - c * v;
        // The branch taken by the push-only law; its derivative is that of the branch.
        if y < 0.0 && f > 0.0 {
            let (a_y, a_v) = (-k * inv_m, -c * inv_m);
            v += dt * (f * inv_m - gravity);
            y += dt * v;
            // Row v of the step first (it feeds row y).
            let d10 = j10 + dt * (a_y * j00 + a_v * j10);
            let d11 = j11 + dt * (a_y * j01 + a_v * j11);
            j00 += dt * d10;
            j01 += dt * d11;
            j10 = d10;
            j11 = d11;
        } else {
            v += dt * -gravity;
            y += dt * v;
            j00 += dt * j10;
            j01 += dt * j11;
        }
    }
    (State::new(y, v), Jacobian::new(j00, j01, j10, j11))
}

pub use crate::physics::state::StepStability;

/// The contact-phase step's stability for `law` at step `dt` (see [`StepStability`]).
pub fn step_stability(law: &Penalty, dt: f64) -> StepStability {
    let (a_y, a_v) = (-law.stiffness / law.mass, -law.damping / law.mass);
    let half_tr = 0.5 * (2.0 + dt * dt * a_y + dt * a_v);
    let det = 1.0 + dt * a_v;
    StepStability::of(law, dt, spectral_radius(half_tr, det))
}

/// Largest |eigenvalue| of a real 2x2 matrix from half its trace and its determinant:
/// `λ = tr/2 ± sqrt(tr²/4 - det)`, and `|λ|² = det` for a complex pair.
pub(crate) fn spectral_radius(half_tr: f64, det: f64) -> f64 {
    let disc = half_tr * half_tr - det;
    if disc >= 0.0 {
        half_tr.abs() + disc.sqrt()
    } else {
        det.sqrt()
    }
}

impl StepStability {
    /// The readout for `law` at step `dt` given the step matrix's spectral radius.
    pub(crate) fn of(law: &Penalty, dt: f64, spectral_radius: f64) -> StepStability {
        StepStability {
            omega_dt: (law.stiffness / law.mass).sqrt() * dt,
            spectral_radius,
            stable: spectral_radius <= 1.0 + 1e-12,
        }
    }
}

/// [`step_stability`] of the drop's penalty law at stiffness `k` (N/m) and step `dt` (s).
pub fn drop_step_stability(drop: &Drop, k: f64, dt: f64) -> Result<StepStability> {
    positive("dt", dt)?;
    Ok(step_stability(&drop.penalty(k)?, dt))
}

/// Run `n` semi-implicit Euler steps from `x` without the tangent (the discrete map alone).
pub fn euler(law: &Penalty, gravity: f64, dt: f64, n: u64, x: State) -> State {
    let inv_m = 1.0 / law.mass;
    let (mut y, mut v) = (x[0], x[1]);
    for _ in 0..n {
        v += dt * (law.force(y, v) * inv_m - gravity);
        y += dt * v;
    }
    State::new(y, v)
}

/// The `fixed` route: N = round(T/dt) steps of semi-implicit Euler with the autodiff tangent.
pub fn fixed(drop: &Drop, k: f64, dt: f64, opts: &FixedOptions) -> Result<RouteResult> {
    resume(drop, k, dt, opts, 0, drop.x0(), Jacobian::identity())
}

/// Where every fixed-step rollout of a drop at one step is the same, whatever k: the state
/// and tangent after the steps of the first fall that start above ground (y >= 0), where the
/// push-only law cannot push. The bench computes it once per (drop, dt) and every slider
/// move resumes from it ([`fixed_from`]): about half the steps of the default drop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedStart {
    /// The drop and step it was computed for (a resume checks both).
    pub drop: Drop,
    /// The step, s.
    pub dt: f64,
    /// Steps already taken.
    pub steps: u64,
    /// State after them.
    pub x: State,
    /// Tangent after them.
    pub jac: Jacobian,
}

impl FixedStart {
    /// The steps before the first one that starts below ground, by [`euler_with_tangent`]
    /// itself on a law of zero stiffness and damping (its force is ±0, never > 0, so every
    /// step takes the flight branch, as every k does while y >= 0).
    pub fn new(drop: &Drop, dt: f64, opts: &FixedOptions) -> Result<FixedStart> {
        drop.validate()?;
        let n = step_count(drop.t_final, dt, opts.max_steps)?;
        let free = Penalty::free(drop.mass);
        let (mut x, mut jac) = (drop.x0(), Jacobian::identity());
        let mut steps = 0;
        while steps < n && !(x[0] < 0.0) {
            (x, jac) = euler_with_tangent(&free, drop.gravity, dt, 1, x, jac);
            steps += 1;
        }
        Ok(FixedStart {
            drop: *drop,
            dt,
            steps,
            x,
            jac,
        })
    }
}

/// [`fixed`] resumed from `start` (computed for this drop and `dt`; any other start is
/// ignored and the rollout runs from t = 0): the same answer, bit for bit, without the
/// steps before the first contact.
pub fn fixed_from(
    drop: &Drop,
    k: f64,
    dt: f64,
    opts: &FixedOptions,
    start: &FixedStart,
) -> Result<RouteResult> {
    if start.drop != *drop || start.dt != dt {
        return fixed(drop, k, dt, opts);
    }
    resume(drop, k, dt, opts, start.steps, start.x, start.jac)
}

/// The rest of a fixed rollout from step `done` at (x, jac).
fn resume(
    drop: &Drop,
    k: f64,
    dt: f64,
    opts: &FixedOptions,
    done: u64,
    x: State,
    jac: Jacobian,
) -> Result<RouteResult> {
    drop.validate()?;
    let law = drop.penalty(k)?;
    let n = step_count(drop.t_final, dt, opts.max_steps)?;
    let (x, jac) = euler_with_tangent(&law, drop.gravity, dt, n - done, x, jac);
    check_finite("fixed-step state", &x, &jac).map_err(|_| FerroError::NonFinite {
        what: "fixed-step state",
        detail: format!(
            "k·dt² = {:e}: the explicit contact step is unstable above about 4",
            k * dt * dt / drop.mass
        ),
    })?;
    let mut r = RouteResult::new(
        x,
        jac,
        Cost {
            steps: n,
            force_evals: n,
            rollouts: 1,
            ..Cost::default()
        },
    );
    r.step_stability = Some(step_stability(&law, dt));
    Ok(r)
}

/// The discrete map's x(T) alone (no tangent), for finite-difference oracles.
pub fn fixed_state(drop: &Drop, k: f64, dt: f64, opts: &FixedOptions) -> Result<State> {
    drop.validate()?;
    let law = drop.penalty(k)?;
    let n = step_count(drop.t_final, dt, opts.max_steps)?;
    Ok(euler(&law, drop.gravity, dt, n, drop.x0()))
}

/// The discrete map's event signature: `[first contact step, last contact step, contact
/// steps]` (all -1/0 when it never touches). Two starts with the same signature went
/// through the same branches, so the map is smooth between them.
pub fn contact_signature(drop: &Drop, k: f64, dt: f64, opts: &FixedOptions) -> Result<Vec<i64>> {
    drop.validate()?;
    let law = drop.penalty(k)?;
    let n = step_count(drop.t_final, dt, opts.max_steps)?;
    let inv_m = 1.0 / law.mass;
    let (mut y, mut v) = (drop.height, drop.velocity);
    let (mut first, mut last, mut count) = (-1i64, -1i64, 0i64);
    for i in 0..n as i64 {
        let f = law.force(y, v);
        if f > 0.0 {
            if first < 0 {
                first = i;
            }
            last = i;
            count += 1;
        }
        v += dt * (f * inv_m - drop.gravity);
        y += dt * v;
    }
    Ok(vec![first, last, count])
}
