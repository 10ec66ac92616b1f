//! What a differentiable simulator of the rimless wheel reports for its return map's N-step
//! derivative, route by route, against horizon and step (the table in `docs/systems.md`,
//! printed by `cargo run --release -p ferromotion-core --example rimless_wheel_routes`).
//!
//! Every route is read the same way as [`super::multiplier`]: from the state on the section
//! Σ = {θ = 0} of the exact orbit, J = dx(T)/dx(0) at the route's own N-th return to Σ, and
//! `dω_N/dω_0 = J[1,1] - (f_ω/f_θ)·J[0,1]` with f the route's own rate there (its last step's
//! d step/dτ: how the discrete run moves when its end moves, which is how it meets Σ).
//!
//! - **Saltation, chained** and **saltation, direct**: [`super::multiplier`]'s two readings
//!   of `hybrid_jacobian` (RK4 at 1e-3 s with the events located and the saltation matrix).
//! - **Fixed** ([`fixed`]): a fixed-step simulation differentiated through its steps the way
//!   autodiff would: `x_{n+1} = step(x_n, dt)`, and when the guard half_angle - θ is ≤ 0 at a
//!   step's end the reset is applied there (θ - 2·half_angle, c·ω); the tangent is the
//!   product of the step Jacobians and the reset's Jacobian diag(1, c), with no
//!   time-of-impact term (the project's `fixed` route's idea). The N-th return to Σ is read
//!   by a last partial step of the same scheme ending on Σ.
//! - **Black-box** ([`black_box`]): [`crate::hybrid::step_jacobian`] on the same step
//!   function with the guard and the reset declared: the event-located map at dt, its J by
//!   central differences. The end time is the located run's own N-th return to Σ
//!   ([`located_return`], the driver's rules replayed: the grid restarted at each event).
//!
//! The step function is semi-implicit Euler (the `fixed` route's scheme, first order) or RK4.

use nalgebra::{DMatrix, DVector};

use super::multiplier::{Reading, SECTION_THETA};
use super::RimlessWheel;
use crate::error::{positive, FerroError, Result};
use crate::hybrid::{step_jacobian, HybridSystem, StepOptions, StepSystem};

/// The integration scheme of a fixed-step route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Scheme {
    /// v += dt·a(θ); θ += dt·v (the `fixed` route's scheme; first order).
    SemiImplicitEuler,
    /// Classical RK4 (fourth order).
    Rk4,
}

impl Scheme {
    /// Its name in tables.
    pub fn label(self) -> &'static str {
        match self {
            Scheme::SemiImplicitEuler => "semi-implicit Euler",
            Scheme::Rk4 => "RK4",
        }
    }
}

/// The wheel's stance as a step function of `scheme` (no event logic: that is the route's).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WheelStep {
    /// The wheel.
    pub wheel: RimlessWheel,
    /// The scheme of one step.
    pub scheme: Scheme,
}

impl WheelStep {
    /// One step of length `h` from x and its Jacobian d step/dx.
    pub fn step_with_tangent(&self, x: &DVector<f64>, h: f64) -> (DVector<f64>, DMatrix<f64>) {
        let w = &self.wheel;
        match self.scheme {
            Scheme::SemiImplicitEuler => {
                let gl = w.gravity / w.length;
                let a = gl * libm::sin(x[0] + w.slope);
                let a_theta = gl * libm::cos(x[0] + w.slope);
                let omega = x[1] + h * a;
                let out = DVector::from_vec(vec![x[0] + h * omega, omega]);
                let jac =
                    DMatrix::from_row_slice(2, 2, &[1.0 + h * h * a_theta, h, h * a_theta, 1.0]);
                (out, jac)
            }
            Scheme::Rk4 => {
                let (f, df) = (|x: &DVector<f64>| w.rhs(0, x), |x| w.rhs_jacobian(0, x));
                let k1 = f(x);
                let j1 = df(x);
                let x2 = x + 0.5 * h * &k1;
                let (k2, j2) = (f(&x2), df(&x2) * (DMatrix::identity(2, 2) + 0.5 * h * &j1));
                let x3 = x + 0.5 * h * &k2;
                let (k3, j3) = (f(&x3), df(&x3) * (DMatrix::identity(2, 2) + 0.5 * h * &j2));
                let x4 = x + h * &k3;
                let (k4, j4) = (f(&x4), df(&x4) * (DMatrix::identity(2, 2) + h * &j3));
                let out = x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
                let jac = DMatrix::identity(2, 2) + h / 6.0 * (j1 + 2.0 * j2 + 2.0 * j3 + j4);
                (out, jac)
            }
        }
    }

    /// d step(x, τ)/dτ: the scheme's own rate at the end of a step of length τ. A section is read along it: the
    /// discrete run reaches the section by changing τ, not along the flow.
    pub fn rate(&self, x: &DVector<f64>, tau: f64) -> DVector<f64> {
        match self.scheme {
            Scheme::SemiImplicitEuler => {
                let w = &self.wheel;
                let a = w.gravity / w.length * libm::sin(x[0] + w.slope);
                DVector::from_vec(vec![x[1] + 2.0 * tau * a, a])
            }
            Scheme::Rk4 => {
                // d/dh of x + h/6 (k1 + 2 k2 + 2 k3 + k4), each stage's dependence on h too.
                let (w, h) = (&self.wheel, tau);
                let (f, df) = (|x: &DVector<f64>| w.rhs(0, x), |x| w.rhs_jacobian(0, x));
                let k1 = f(x);
                let x2 = x + 0.5 * h * &k1;
                let (k2, d2) = (f(&x2), df(&x2) * (0.5 * &k1));
                let x3 = x + 0.5 * h * &k2;
                let (k3, d3) = (f(&x3), df(&x3) * (0.5 * &k2 + 0.5 * h * &d2));
                let x4 = x + h * &k3;
                let (k4, d4) = (f(&x4), df(&x4) * (&k3 + h * &d3));
                (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0 + h / 6.0 * (2.0 * d2 + 2.0 * d3 + d4)
            }
        }
    }

    /// The reset's state and Jacobian, diag(1, c).
    fn reset_with_tangent(&self, x: &DVector<f64>) -> (DVector<f64>, DMatrix<f64>) {
        (
            self.wheel.reset(0, 0, x).1,
            self.wheel.reset_jacobian(0, 0, x),
        )
    }

    /// The sub-step τ in (0, h] from x ending where `g(step(x, τ))` reaches 0 (g(x) > 0 and
    /// g(step(x, h)) <= 0), by bisection to adjacent floats.
    fn locate(&self, x: &DVector<f64>, h: f64, g: impl Fn(&DVector<f64>) -> f64) -> f64 {
        let (mut lo, mut hi) = (0.0, h);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if g(&self.step(x, mid)) > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    }
}

impl StepSystem for WheelStep {
    fn name(&self) -> String {
        format!("rimless wheel, {} step", self.scheme.label())
    }
    fn dim(&self) -> usize {
        2
    }
    fn step(&self, x: &DVector<f64>, dt: f64) -> DVector<f64> {
        self.step_with_tangent(x, dt).0
    }
    fn guard_count(&self) -> usize {
        1
    }
    fn guard(&self, _i: usize, x: &DVector<f64>) -> f64 {
        self.wheel.guard(0, 0, x)
    }
    fn has_reset(&self, _i: usize) -> bool {
        true
    }
    fn reset(&self, _i: usize, x: &DVector<f64>) -> DVector<f64> {
        self.wheel.reset(0, 0, x).1
    }
}

fn section(x: &DVector<f64>) -> f64 {
    SECTION_THETA - x[0]
}

/// Steps a route may take (refused beyond, naming dt).
pub const MAX_ROUTE_STEPS: u64 = 50_000_000;

fn steps_ok(dt: f64, horizon: usize, period: f64) -> Result<()> {
    positive("dt", dt)?;
    let need = horizon as f64 * period / dt;
    if need > MAX_ROUTE_STEPS as f64 {
        return Err(FerroError::InvalidParameter {
            name: "dt",
            value: dt,
            limit: format!(
                "{horizon} impacts at dt = {dt} s take {need:e} steps; at most {MAX_ROUTE_STEPS}"
            ),
        });
    }
    Ok(())
}

/// The fixed route from `start` (on Σ) at step `dt`: its reading at every horizon 1..=N.
pub fn fixed(
    w: &RimlessWheel,
    scheme: Scheme,
    start: &DVector<f64>,
    dt: f64,
    horizon: usize,
) -> Result<Vec<Reading>> {
    let sys = WheelStep { wheel: *w, scheme };
    steps_ok(dt, horizon, 4.0 * w.half_angle / start[1].abs().max(1e-3))?;
    let (mut x, mut jac) = (start.clone(), DMatrix::identity(2, 2));
    let mut out = Vec::with_capacity(horizon);
    let mut steps = 0u64;
    while out.len() < horizon {
        steps += 1;
        if steps > MAX_ROUTE_STEPS || !x.iter().all(|v| v.is_finite()) {
            return Err(FerroError::InvalidParameter {
                name: "dt",
                value: dt,
                limit: format!("the fixed route did not return to the section {horizon} times"),
            });
        }
        let (mut next, a) = sys.step_with_tangent(&x, dt);
        let mut next_jac = &a * &jac;
        if section(&x) > 0.0 && section(&next) <= 0.0 {
            // Read on Σ by a partial step of the same scheme (the run goes on unchanged).
            let tau = sys.locate(&x, dt, section);
            let read = sys.step_with_tangent(&x, tau).1 * &jac;
            let f = sys.rate(&x, tau);
            let d = read[(1, 1)] - f[1] / f[0] * read[(0, 1)];
            out.push(Reading::from_derivative(w, out.len() + 1, d));
        }
        if w.guard(0, 0, &next) <= 0.0 {
            let (reset, dr) = sys.reset_with_tangent(&next);
            next = reset;
            next_jac = dr * next_jac;
        }
        x = next;
        jac = next_jac;
    }
    Ok(out)
}

/// The event-located run's N-th return to Σ from `start`: its time (s) and the run's rate
/// there (the last step's d step/dτ). Steps of `dt` from t = 0, each event located inside its
/// step and the reset applied there, the grid restarted from it (the black-box driver's
/// rules), and the return located inside its step.
pub fn located_return(
    w: &RimlessWheel,
    scheme: Scheme,
    start: &DVector<f64>,
    dt: f64,
    horizon: usize,
) -> Result<(f64, DVector<f64>)> {
    let sys = WheelStep { wheel: *w, scheme };
    steps_ok(dt, horizon, 4.0 * w.half_angle / start[1].abs().max(1e-3))?;
    let (mut x, mut t, mut returns) = (start.clone(), 0.0, 0);
    for _ in 0..MAX_ROUTE_STEPS {
        let next = sys.step(&x, dt);
        if section(&x) > 0.0 && section(&next) <= 0.0 {
            returns += 1;
            if returns == horizon {
                let tau = sys.locate(&x, dt, section);
                return Ok((t + tau, sys.rate(&x, tau)));
            }
        }
        if w.guard(0, 0, &next) <= 0.0 {
            let tau = sys.locate(&x, dt, |y| w.guard(0, 0, y));
            x = w.reset(0, 0, &sys.step(&x, tau)).1;
            t += tau;
        } else {
            x = next;
            t += dt;
        }
        if !x.iter().all(|v| v.is_finite()) {
            break;
        }
    }
    Err(FerroError::InvalidParameter {
        name: "dt",
        value: dt,
        limit: format!("the located run did not return to the section {horizon} times"),
    })
}

/// The black-box route at horizon N: [`step_jacobian`] on the step function with the guard
/// and reset declared, from `start` to the located run's N-th return to Σ, at `dt` (no dt/2
/// pass).
pub fn black_box(
    w: &RimlessWheel,
    scheme: Scheme,
    start: &DVector<f64>,
    dt: f64,
    horizon: usize,
) -> Result<Reading> {
    let sys = WheelStep { wheel: *w, scheme };
    let (t1, f) = located_return(w, scheme, start, dt, horizon)?;
    let opts = StepOptions {
        dt,
        halve_dt: false,
        max_steps: MAX_ROUTE_STEPS,
        ..StepOptions::default()
    };
    let s = step_jacobian(&sys, start, 0.0, t1, &opts)?.solution;
    let d = s.jacobian[(1, 1)] - f[1] / f[0] * s.jacobian[(0, 1)];
    Ok(Reading::from_derivative(w, horizon, d))
}
