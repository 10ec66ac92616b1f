//! The fit's document ([`FitReport`]) and the records inside it, and the χ² limit of a
//! consistent fit ([`chi2_limit`]).

use super::options::SigmaScale;
use super::params::Route;
use crate::check::CheckReport;
use crate::physics::model::Drop;
use serde::Serialize;

/// One iteration of Levenberg–Marquardt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Iteration {
    /// Iteration number (0: the start).
    pub iteration: usize,
    /// Φ after the iteration.
    pub cost: f64,
    /// Damping λ used by the accepted step (or the last tried).
    pub lambda: f64,
    /// The parameters after the iteration, in `params` order (physical units).
    pub theta: Vec<f64>,
    /// |Sᵀr|∞ in the fit's coordinates at the iteration's start.
    pub gradient_norm: f64,
    /// Largest coordinate of the accepted step (0 when none was).
    pub step_norm: f64,
    /// Whether a step lowered Φ.
    pub accepted: bool,
    /// Model evaluations so far (one: the predictions at every sample time).
    pub evaluations: u64,
    /// Wall time since the fit began, s, when a clock was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
}

/// How a fit ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Φ or the step stopped changing.
    Converged,
    /// No step along the route's direction lowered Φ, at any damping: its gradient does not
    /// point downhill for the map it is evaluated on.
    Stalled,
    /// The iteration cap.
    MaxIterations,
}

/// A fitted parameter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    /// Name.
    pub name: String,
    /// Unit.
    pub unit: String,
    /// Fitted value.
    pub estimate: f64,
    /// Start value.
    pub start: f64,
    /// 95% interval (lo, hi); unbounded sides are null in JSON. Profile-likelihood bounds
    /// unless `interval_method` says otherwise (see [`IntervalReceipt`]).
    pub interval: (f64, f64),
    /// How each side of `interval` was found: "profile", "profile-unbounded" (the profile
    /// never reaches the threshold Δχ² within the search) or "wald".
    pub interval_method: (String, String),
    /// The Wald interval z ± sqrt(Δχ²)·sqrt((F⁻¹)_jj), for comparison.
    pub wald_interval: (f64, f64),
    /// Standard deviation in the fit's coordinate (of ln θ for log parameters).
    pub std_coordinate: f64,
    /// Whether the fit worked with its logarithm.
    pub log: bool,
}

/// A weakly informed combination of parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WeakDirection {
    /// "log k − 0.98·log zeta": the combination, largest coefficient scaled to 1.
    pub label: String,
    /// Coefficients on the fit's coordinates (unit vector), in `params` order.
    pub coefficients: Vec<f64>,
    /// Its singular value.
    pub singular_value: f64,
    /// 95% half-width along it, 1.96/σ (infinite when σ = 0).
    pub half_width: f64,
    /// "unidentifiable" (σ below weak_rel of the largest) or "weakly informed".
    pub kind: String,
}

/// One term of the reliability table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Term {
    /// The term.
    pub term: String,
    /// smooth/verified, smooth/unverified, piecewise-smooth/event-sensitive, derivative-free, fixed.
    pub class: String,
}

/// Seed 000's reporting template for a differentiable fit, filled in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Template {
    /// Objective definition.
    pub objective: String,
    /// Its units.
    pub units: String,
    /// Observations: channels, counts, σ, masks.
    pub observations: String,
    /// Parameterisation of the optimiser.
    pub parameterisation: String,
    /// Derivative method.
    pub derivative_method: String,
    /// Software and version.
    pub software: String,
    /// Exact discrete integrator.
    pub integrator: String,
    /// Tolerances and steps (name, value).
    pub tolerances: Vec<(String, f64)>,
    /// Custom derivative rules.
    pub custom_derivative_rules: String,
    /// Gradient-check directions and seed.
    pub check_directions: String,
    /// Probe sizes of the central-difference sweep.
    pub epsilon_sweep: Vec<f64>,
    /// Max and median normalized directional error at the start and the solution.
    pub errors: Vec<(String, f64)>,
    /// The parameter and state region the checks cover.
    pub region_tested: String,
    /// Event exclusion or hybrid treatment.
    pub event_treatment: String,
    /// Whether the checks ran on the same compiled path used in optimisation.
    pub same_path: String,
    /// Optimiser's treatment of nondifferentiable parts.
    pub optimiser: String,
    /// The reliability table.
    pub reliability: Vec<Term>,
}

/// The gradient checks and the template: one receipt per fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitReceipt {
    /// The check of Φ's gradient at the start (`None` when checks were off).
    pub check_start: Option<CheckReport>,
    /// The same at the solution.
    pub check_solution: Option<CheckReport>,
    /// The checker's verdicts, start and solution ("not-run" when off).
    pub verdicts: (String, String),
    /// The template.
    pub template: Template,
    /// Central-difference columns whose probe was halved / taken one-sided, over the fit.
    pub probes_halved: u64,
    /// Columns taken one-sided.
    pub one_sided: u64,
    /// How the 95% intervals were found.
    pub intervals: IntervalReceipt,
    /// The continuation over the horizon, when the direct fit ended at a χ² inconsistent
    /// with the stated noise (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation: Option<Continuation>,
}

/// A second start of an inconsistent fit, by continuation over the horizon: the first half
/// of the samples fitted from the start, then every sample from there. A wrong local
/// minimum of a several-bounce record matches the bounces out of step (the fit trades
/// restitution against height and velocity so that later bounces line up with the wrong
/// data); the first half sees fewer of them, so its minimum is near the truth's more often,
/// and the full fit from it keeps the bounces in step. Kept only when its Φ is lower.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Continuation {
    /// Sample times of each stage (a prefix of the data; the last stage is all of it).
    pub samples: Vec<usize>,
    /// Φ of the direct fit.
    pub cost_direct: f64,
    /// Φ the continuation reached (`None`: a stage failed, named in `note`).
    pub cost: Option<f64>,
    /// Whether the continuation's minimum replaced the direct fit's.
    pub adopted: bool,
    /// What happened, in words.
    pub note: String,
}

/// How a fit's 95% intervals were found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IntervalReceipt {
    /// The method, in words.
    pub method: String,
    /// Confidence level of each interval (0.95).
    pub level: f64,
    /// What the intervals take σ for.
    pub sigma_scale: SigmaScale,
    /// The rise of χ² that bounds an interval: 3.8415 (1.96²) with σ as stated, s²·t² with
    /// its scale from the residuals, the larger with `either`.
    pub delta_chi2: f64,
    /// The residuals' scale s = sqrt(χ²/ν), ν = observations − parameters (1 when σ is right).
    pub residual_scale: f64,
    /// The 97.5% quantile of Student's t with ν degrees of freedom.
    pub t_quantile: f64,
    /// Model evaluations spent on the intervals (profiles), apart from the optimiser's.
    pub evaluations: u64,
    /// Sides where the profile was unbounded or could not be bracketed, and why.
    pub notes: Vec<String>,
    /// Wall time of the intervals, s, when a clock was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
}

/// Schema identifier written into every fit report.
pub const FIT_SCHEMA: &str = "ferromotion.fit/1";

/// Everything a fit found, one document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitReport {
    /// [`FIT_SCHEMA`].
    pub schema: String,
    /// The route whose Jacobian stepped.
    pub route: Route,
    /// Estimates, in `params` order.
    pub params: Vec<Estimate>,
    /// How it ended.
    pub status: Status,
    /// Φ at the start.
    pub cost_start: f64,
    /// Φ at the solution.
    pub cost: f64,
    /// Observations used (unmasked entries).
    pub observations: usize,
    /// Degrees of freedom (observations minus parameters).
    pub dof: i64,
    /// χ² = 2Φ at the solution.
    pub chi2: f64,
    /// The 99.9% quantile of χ² with `dof` degrees of freedom (Wilson–Hilferty), the limit of
    /// residuals consistent with the stated σ (infinite when dof < 1).
    pub chi2_limit: f64,
    /// χ² within its limit: the model explains the data to the stated noise. A fit that
    /// converged with χ² far above it converged to a misfit (a wrong model, wrong σ, or a
    /// Jacobian that stopped the optimiser short).
    pub consistent: bool,
    /// Singular values of S at the solution, descending.
    pub singular_values: Vec<f64>,
    /// Their ratio, largest over smallest (infinite when singular; null in JSON).
    pub condition: f64,
    /// Weakly informed or unidentifiable combinations.
    pub weak_directions: Vec<WeakDirection>,
    /// No weak direction.
    pub identifiable: bool,
    /// The record, one entry per iteration (the first: the start).
    pub iterations: Vec<Iteration>,
    /// Model evaluations spent by the optimiser (checks excluded).
    pub evaluations: u64,
    /// Model evaluations spent by the two gradient checks.
    pub check_evaluations: u64,
    /// Sample times, s.
    pub t: Vec<f64>,
    /// Fitted heights at the sample times, m.
    pub y_fit: Vec<f64>,
    /// Fitted velocities, m/s.
    pub v_fit: Vec<f64>,
    /// Whitened height residuals (ŷ − y)/σ_y (null where masked or not measured).
    pub residual_y: Vec<f64>,
    /// Whitened velocity residuals.
    pub residual_v: Vec<f64>,
    /// The model at the solution: the drop (t_final = horizon), k and restitution.
    pub drop: Drop,
    /// Stiffness at the solution, N/m.
    pub k: f64,
    /// Rigid restitution at the solution (`exact` route).
    pub restitution: Option<f64>,
    /// Wall time, s, when a clock was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
    /// The gradient checks and the reporting template.
    pub receipt: FitReceipt,
}

/// Standard normal quantile of 0.999.
const Z999: f64 = 3.090_232_306_167_813;

/// The 99.9% quantile of χ² with `dof` degrees of freedom by the Wilson–Hilferty cube
/// `dof·(1 − 2/(9·dof) + z·sqrt(2/(9·dof)))³` (1.7% above the exact quantile at dof = 3, within
/// 1% from dof = 10); infinite without degrees of freedom.
pub fn chi2_limit(dof: i64) -> f64 {
    if dof < 1 {
        return f64::INFINITY;
    }
    let n = dof as f64;
    let a = 2.0 / (9.0 * n);
    let c = 1.0 - a + Z999 * libm::sqrt(a);
    n * c * c * c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chi2_limit_matches_tabulated_quantiles() {
        // 99.9% quantiles of χ²: 16.27 (3), 29.59 (10), 59.70 (30), 149.45 (100).
        for (dof, q, rel) in [
            (3, 16.27, 0.02),
            (10, 29.59, 0.01),
            (30, 59.70, 0.01),
            (100, 149.45, 0.01),
        ] {
            assert!(
                (chi2_limit(dof) / q - 1.0).abs() < rel,
                "{dof}: {}",
                chi2_limit(dof)
            );
        }
    }
}
