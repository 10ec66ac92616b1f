//! State layout and what every route returns.
//!
//! The drop's state is `x = [y, v]`: height above the ground in m (positive up) and
//! vertical velocity in m/s. A Jacobian is `J[i][j] = d x_i(T) / d x_j(0)`: rows are the
//! outputs (y, v), columns the inputs (y0, v0). It crosses every boundary as a flat
//! row-major array `[dy/dy0, dy/dv0, dv/dy0, dv/dv0]` (see [`to_row_major`]).

use nalgebra::{Matrix2, Vector2};
use serde::Serialize;

/// State of the point mass: `[y (m), v (m/s)]`.
pub type State = Vector2<f64>;
/// A 2x2 Jacobian `d x(T) / d x(0)`.
pub type Jacobian = Matrix2<f64>;

/// What a route spent to produce its answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Cost {
    /// Integrator steps taken (accepted steps for the adaptive integrator), summed over rollouts.
    pub steps: u64,
    /// Steps rejected by error control, summed over rollouts.
    pub rejected_steps: u64,
    /// Right-hand-side (force) evaluations spent on the Jacobian.
    pub force_evals: u64,
    /// Force evaluations of the nominal rollout that produced `state`, when that rollout
    /// is separate from the Jacobian's (0 for routes whose tangent rides along).
    pub state_force_evals: u64,
    /// Whole rollouts run to get the Jacobian.
    pub rollouts: u32,
}

/// Whether a semi-implicit Euler step of the penalty contact is stable at `dt`.
///
/// In contact the step is linear, `x_{n+1} = A·x_n + b` with the step matrix of
/// [`euler_with_tangent`](crate::physics::integrate::fixed::euler_with_tangent), `a_y = -k/m`, `a_v = -c/m`:
/// `tr A = 2 + dt²·a_y + dt·a_v`, `det A = 1 + dt·a_v`. Its eigenvalues
/// `λ = tr/2 ± sqrt(tr²/4 - det)` decide the step: a spectral radius above 1 grows the
/// contact oscillation every step, and the rollout returns a blown-up state (k = 1e9,
/// dt = 1e-4 throws a 1 m drop back up at +8 m/s). For an undamped law the limit is
/// ω·dt = 2 (ω = sqrt(k/m)); damping moves it lower.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepStability {
    /// ω·dt with ω = sqrt(k/m), rad.
    pub omega_dt: f64,
    /// Largest |eigenvalue| of the contact-phase step matrix.
    pub spectral_radius: f64,
    /// `spectral_radius <= 1` (with 1e-12 slack for the marginal undamped case).
    pub stable: bool,
}

/// The answer of one route: state at the final time, its Jacobian and the cost. Serialised
/// with `state` as `[y, v]`, `jacobian` flat row-major and the cost's counters inline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RouteResult {
    /// x(T) = [y (m), v (m/s)].
    #[serde(serialize_with = "serialize_state")]
    pub state: State,
    /// d x(T) / d x(0).
    #[serde(serialize_with = "serialize_row_major")]
    pub jacobian: Jacobian,
    /// Work spent.
    #[serde(flatten)]
    pub cost: Cost,
    /// Only for the `tolerance` route: max |J(eps) - J(eps/2)| over the two probe sizes.
    pub probe_gap: Option<f64>,
    /// Only for the `tolerance` route: the probe gap exceeded 1e-3·max|J|.
    pub probe_dependent: bool,
    /// Only for the `fixed` route: whether its contact-phase step is stable at this dt
    /// (ω·dt and the step matrix's spectral radius). An unstable step's x(T) is blown up.
    pub step_stability: Option<StepStability>,
    /// Wall time of the whole call, s, when a binding timed it with its clock
    /// ([`crate::lab::clock::timed_route`]); `None` (and left out of the document) from a plain
    /// call, so results compared bit for bit never carry a number that differs run to run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
    /// The resolution of the clock that measured `wall_s`, s: a `wall_s` below it reads
    /// "under one tick" (a browser coarsens its clock to 100 µs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_resolution_s: Option<f64>,
}

impl RouteResult {
    pub(crate) fn new(state: State, jacobian: Jacobian, cost: Cost) -> Self {
        RouteResult {
            state,
            jacobian,
            cost,
            probe_gap: None,
            probe_dependent: false,
            step_stability: None,
            wall_s: None,
            wall_resolution_s: None,
        }
    }
}

/// A Jacobian as a row-major array `[J00, J01, J10, J11]` (nalgebra stores column-major).
pub fn to_row_major(j: &Jacobian) -> [f64; 4] {
    [j[(0, 0)], j[(0, 1)], j[(1, 0)], j[(1, 1)]]
}

fn serialize_state<S: serde::Serializer>(x: &State, s: S) -> Result<S::Ok, S::Error> {
    [x[0], x[1]].serialize(s)
}

fn serialize_row_major<S: serde::Serializer>(j: &Jacobian, s: S) -> Result<S::Ok, S::Error> {
    to_row_major(j).serialize(s)
}

/// Largest absolute entry of a matrix.
pub fn max_abs(j: &Jacobian) -> f64 {
    j.iter().fold(0.0_f64, |m, x| m.max(x.abs()))
}
