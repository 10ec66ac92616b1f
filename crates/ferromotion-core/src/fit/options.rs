//! The options of a fit: what it estimates and by which route, the optimiser's stopping
//! rules, and how its 95% intervals are found ([`SigmaScale`], [`IntervalMethod`]).

use super::params::Route;
use crate::check::CheckOptions;
use crate::error::{FerroError, Result};
use crate::numeric::dist::student_t_quantile;
use crate::physics::integrate::adaptive::ToleranceOptions;
use serde::{Deserialize, Serialize};

/// Options of [`fit`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FitOptions {
    /// Parameters to estimate (names: zeta, restitution, k, height, velocity, gravity, mass).
    pub params: Vec<String>,
    /// Whose Jacobian (and whose model) the fit uses.
    pub route: Route,
    /// Penalty stiffness k, N/m (the start when k is fitted; unused by `exact`).
    pub k: f64,
    /// Step of the grid routes, s (every sample time must be a multiple of it).
    pub dt: f64,
    /// Rigid restitution for the `exact` route when neither zeta nor restitution is
    /// fitted (`None`: the stiff limit of the drop's zeta); the start when restitution is fitted.
    pub restitution: Option<f64>,
    /// Tolerances of the `tolerance` route (always event-located, forward sensitivities).
    pub tolerance: ToleranceOptions,
    /// Larger probe of the Richardson-combined central-difference columns in the fit's
    /// coordinates (`None`: 1e-4; 1e-3 for `tolerance`, whose adaptive map carries
    /// rtol-level noise).
    pub probe: Option<f64>,
    /// Iteration cap.
    pub max_iterations: usize,
    /// Largest change of a log parameter's coordinate in one step (1: a factor e). A
    /// Gauss–Newton step along a column the data barely see (k while no sample is in
    /// contact) is otherwise unbounded: from a start half a metre low, 180 decades of k in
    /// one step, into a region whose Jacobian is zero. A coordinate past the bound gets its
    /// own damping (the multiplier of its constraint), so the others keep their steps.
    /// Velocity (not in log form) is not bounded.
    pub max_step: f64,
    /// Whether a converged fit whose χ² is inconsistent with the stated noise retries by
    /// continuation over the horizon ([`Continuation`]).
    pub continuation: bool,
    /// Stop when an accepted step lowers Φ by less than this fraction.
    pub ftol: f64,
    /// Stop when the step's largest coordinate is below this.
    pub xtol: f64,
    /// Singular values below this fraction of the largest are unidentifiable directions.
    pub weak_rel: f64,
    /// 95% half-width (in the fit's coordinates) above which a direction is weakly informed.
    pub weak_width: f64,
    /// How the 95% intervals are found (profile likelihood by default).
    pub interval: IntervalMethod,
    /// Whether the intervals take σ as the noise's standard deviation, as weights whose
    /// common scale the residuals estimate, or whichever of the two is wider (the default).
    pub sigma_scale: SigmaScale,
    /// Run the gradient check of Φ at the start and at the solution.
    pub check: bool,
    /// Options of those checks.
    pub check_options: CheckOptions,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            params: vec!["zeta".into(), "k".into()],
            route: Route::Flow,
            k: 1e6,
            dt: 1e-4,
            restitution: None,
            tolerance: ToleranceOptions::default(),
            probe: None,
            max_iterations: 100,
            max_step: 1.0,
            continuation: true,
            ftol: 1e-12,
            xtol: 1e-10,
            weak_rel: 1e-6,
            weak_width: 1.0,
            interval: IntervalMethod::Profile,
            sigma_scale: SigmaScale::Either,
            check: true,
            check_options: CheckOptions::default(),
        }
    }
}

/// z-score of a two-sided 95% interval.
pub(super) const Z95: f64 = 1.959_963_984_540_054;

/// The χ² rise that bounds a 95% likelihood-ratio interval on one parameter: the 95%
/// quantile of χ² with one degree of freedom, 1.96².
pub(super) const DELTA_CHI2_95: f64 = Z95 * Z95;

/// What the intervals take the stated σ for: the threshold Δχ² of a bound on one parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SigmaScale {
    /// σ is the noise's standard deviation: Δχ² = 1.96² = 3.8415, the 95% quantile of χ²
    /// with one degree of freedom (exact for a model linear in its parameters).
    Stated,
    /// σ fixes the weights, the residuals their common scale s² = χ²/ν (ν = observations −
    /// parameters): Δχ² = s²·t², t the 97.5% quantile of Student's t with ν degrees of
    /// freedom (the profile-t rule of nonlinear least squares; exact for a linear model
    /// whatever the scale of σ).
    Residual,
    /// The larger of the two: an interval that is a 95% interval if σ is right and if only
    /// its ratios are (it contains both). When σ is right it covers more than 95% by what
    /// the residual scale adds: 96.7% at ν = 14, 96.2% at ν = 28, tending to 95%.
    Either,
}

impl SigmaScale {
    /// The χ² rise that bounds a 95% interval on one parameter, given the fit's χ² and its
    /// degrees of freedom ν (>= 1): (Δχ², t quantile, residual scale s).
    pub fn threshold(&self, chi2: f64, dof: i64) -> Result<(f64, f64, f64)> {
        let nu = dof.max(1) as f64;
        let t = student_t_quantile(0.975, nu)?;
        let s2 = chi2 / nu;
        let stated = DELTA_CHI2_95;
        let residual = s2 * t * t;
        let delta = match self {
            SigmaScale::Stated => stated,
            SigmaScale::Residual => residual,
            SigmaScale::Either => stated.max(residual),
        };
        if !delta.is_finite() {
            return Err(FerroError::NonFinite {
                what: "interval threshold",
                detail: format!("χ² = {chi2} with {dof} degrees of freedom"),
            });
        }
        Ok((delta, t, libm::sqrt(s2)))
    }
}

/// How [`fit`] finds its 95% intervals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IntervalMethod {
    /// Profile likelihood: where the χ² minimised over the other parameters rises by Δχ².
    Profile,
    /// Wald: the linearisation's z ± sqrt(Δχ²)·sqrt((F⁻¹)_jj).
    Wald,
}
