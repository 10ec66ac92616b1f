//! Forward matching through contact: fit the drop's parameters to measured heights and
//! velocities, with the gradient's evidence and the fit's identifiability in one report.
//!
//! Observations are heights y_i (m) and/or velocities v_i (m/s) at sample times t_i
//! (s, strictly increasing, the last one the horizon T), with one standard deviation per
//! channel (σ_y in m, σ_v in m/s) and optional masks (a masked entry is missing: it leaves
//! the residual and the count). The objective is half the sum of squared whitened residuals
//!
//! ```text
//! Φ(z) = ½ Σ_i [(ŷ(t_i; θ) − y_i)/σ_y]² + [(v̂(t_i; θ) − v_i)/σ_v]²      (dimensionless)
//! ```
//!
//! over any subset θ of {zeta or restitution, k, height, velocity, gravity, mass}, each
//! positive parameter in log form (`z = ln θ`; velocity as it is). Levenberg–Marquardt
//! (Marquardt's diagonal scaling) minimises Φ with the Jacobian S = dr/dz of the chosen
//! route (see [`predict`] for how each route gets it). At the solution:
//!
//! - the 95% interval of each parameter is the profile-likelihood (likelihood-ratio) one:
//!   the z_j where χ² = 2Φ minimised over the other coordinates rises by Δχ², found by
//!   bracketing along z_j and regula falsi, the others re-fitted by the same
//!   Levenberg–Marquardt (warm-started). Δχ² is the larger of 1.96² = 3.8415 (the 95% quantile
//!   of χ² with one degree of freedom: σ as stated) and s²·t² (σ's scale estimated by the
//!   residuals, s² = χ²/ν, t the 97.5% quantile of Student's t with ν = n − p degrees of
//!   freedom), so the interval is a 95% one whether σ is right or only its ratios are
//!   ([`SigmaScale`]; either rule alone on request). The Wald interval
//!   `z ± sqrt(Δχ²)·sqrt((F⁻¹)_jj)` with F = SᵀS (the residuals are whitened, so W = I) is
//!   reported beside it and stands in where the profile cannot be bracketed (the receipt
//!   says where and why); both mapped back through exp for log parameters;
//! - the singular values of S, its condition number, and the weak directions: right
//!   singular vectors whose singular value is below `weak_rel` of the largest
//!   (unidentifiable) or whose 95% half-width along that combination exceeds `weak_width`
//!   (in z: 1.0 is a factor e ≈ 2.7 on a log parameter), named as combinations
//!   ("log k − 0.98·log zeta");
//! - the gradient check of Φ at the start and at the solution by [`crate::check::check_gradient`]
//!   (the checker's verdict, nothing else), with Φ's event sequence for classification;
//! - the reporting template of a differentiable fit (objective and units, derivative
//!   route and integrator with tolerances, directions and seeds, epsilon sweep, errors,
//!   the region tested, event treatment), one document ([`FitReport`]).

//!
//! The files, one concern each:
//!
//! | file | what it holds |
//! |---|---|
//! | [`params`] | the parameters a fit estimates and the routes whose Jacobian it steps with |
//! | [`predict`] | each route's predictions at the sample times and their sensitivities |
//! | `options` | [`FitOptions`], [`SigmaScale`], [`IntervalMethod`] |
//! | `observations` | [`Observations`] and their validation into whitened channels |
//! | `problem` | [`FitProblem`]: Φ, the residuals and their Jacobian, the start |
//! | `optimise` | Levenberg–Marquardt, its bounded step, the continuation over the horizon |
//! | `identifiability` | singular values, weak directions, [`combination_label`] |
//! | `intervals` | the profile-likelihood and Wald 95% intervals |
//! | `template` | the reporting template of a differentiable fit |
//! | `report` | [`FitReport`] and the documents inside it, [`chi2_limit`] |
//! | `run` | [`fit`] (the phases in order) and [`predictions`] |
//! | `demo` | [`FitDemo`]: the fit demo's truth, noise and grid (CLI, notebook, lab) |

mod demo;
mod identifiability;
mod intervals;
mod observations;
mod optimise;
mod options;
pub mod params;
pub mod predict;
mod problem;
mod report;
mod run;
mod template;

pub use demo::FitDemo;
pub use identifiability::combination_label;
pub use observations::Observations;
pub use options::{FitOptions, IntervalMethod, SigmaScale};
pub use params::{Param, Route};
pub use problem::FitProblem;
pub use report::{
    chi2_limit, Continuation, Estimate, FitReceipt, FitReport, IntervalReceipt, Iteration, Status,
    Template, Term, WeakDirection, FIT_SCHEMA,
};
pub use run::{fit, predictions};
