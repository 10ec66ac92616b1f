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

pub mod params;
pub mod predict;

use crate::check::{check_gradient, CheckOptions, CheckReport, EventSignature, Verdict};
use crate::error::{positive, FerroError, Result};
use crate::lab::clock::Clock;
use crate::numeric::dist::student_t_quantile;
use crate::physics::integrate::adaptive::ToleranceOptions;
use crate::physics::model::Drop;
use nalgebra::{DMatrix, DVector};
pub use params::{Param, Route};
use predict::{Layout, Model, RouteSetup};
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

/// Measured kinematics: heights and/or velocities at sample times.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Observations {
    /// Sample times, s (strictly increasing, >= 0; the last is the horizon).
    pub t: Vec<f64>,
    /// Heights, m (same length as `t`), if measured.
    pub y: Option<Vec<f64>>,
    /// Velocities, m/s, if measured.
    pub v: Option<Vec<f64>>,
    /// Standard deviation of a height, m.
    pub sigma_y: Option<f64>,
    /// Standard deviation of a velocity, m/s.
    pub sigma_v: Option<f64>,
    /// Which heights count (true) or are missing (false); `None`: every height.
    pub mask_y: Option<Vec<bool>>,
    /// Which velocities count.
    pub mask_v: Option<Vec<bool>>,
}

/// One channel, validated: values, σ and which entries count.
#[derive(Debug, Clone)]
struct Channel {
    values: Vec<f64>,
    sigma: f64,
    used: Vec<bool>,
}

fn invalid(name: &'static str, value: f64, limit: String) -> FerroError {
    FerroError::InvalidParameter { name, value, limit }
}

impl Observations {
    /// Validate the sample times.
    fn times(&self) -> Result<()> {
        for (i, &t) in self.t.iter().enumerate() {
            if !(t.is_finite() && t >= 0.0) {
                return Err(invalid(
                    "t",
                    t,
                    format!("sample {i}: times must be finite and >= 0 s"),
                ));
            }
            if i > 0 && !(t > self.t[i - 1]) {
                return Err(invalid(
                    "t",
                    t,
                    format!(
                        "sample {i}: times must increase strictly (previous {} s)",
                        self.t[i - 1]
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Validate and return (heights, velocities).
    fn channels(&self) -> Result<(Option<Channel>, Option<Channel>)> {
        let n = self.t.len();
        self.times()?;
        let chan = |vals: &Option<Vec<f64>>,
                    sigma: Option<f64>,
                    mask: &Option<Vec<bool>>,
                    vname: &'static str,
                    sname: &'static str,
                    mname: &'static str|
         -> Result<Option<Channel>> {
            let Some(values) = vals else {
                if mask.is_some() {
                    return Err(invalid(
                        mname,
                        f64::NAN,
                        format!("a mask without the `{vname}` channel"),
                    ));
                }
                return Ok(None);
            };
            if values.len() != n {
                return Err(invalid(
                    vname,
                    values.len() as f64,
                    format!(
                        "expected {n} values (one per sample time), got {}",
                        values.len()
                    ),
                ));
            }
            let sigma = sigma.ok_or_else(|| {
                invalid(
                    sname,
                    f64::NAN,
                    format!("the `{vname}` channel needs its standard deviation"),
                )
            })?;
            positive(sname, sigma)?;
            let used = match mask {
                Some(m) if m.len() != n => {
                    return Err(invalid(
                        mname,
                        m.len() as f64,
                        format!(
                            "expected {n} entries (one per sample time), got {}",
                            m.len()
                        ),
                    ))
                }
                Some(m) => m.clone(),
                None => vec![true; n],
            };
            for (i, (&x, &u)) in values.iter().zip(&used).enumerate() {
                if u && !x.is_finite() {
                    return Err(invalid(
                        vname,
                        x,
                        format!(
                            "sample {i} (t = {} s) is not finite; mask it out if it is missing",
                            self.t[i]
                        ),
                    ));
                }
            }
            Ok(Some(Channel {
                values: values.clone(),
                sigma,
                used,
            }))
        };
        let y = chan(
            &self.y,
            self.sigma_y,
            &self.mask_y,
            "y",
            "sigma_y",
            "mask_y",
        )?;
        let v = chan(
            &self.v,
            self.sigma_v,
            &self.mask_v,
            "v",
            "sigma_v",
            "mask_v",
        )?;
        if y.is_none() && v.is_none() {
            return Err(invalid(
                "y",
                f64::NAN,
                "no observations: give heights `y` and/or velocities `v`".into(),
            ));
        }
        Ok((y, v))
    }
}

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

/// The problem as the optimiser sees it: Φ, the residuals and their Jacobian at the fit's
/// coordinates z (ln θ for positive parameters). Derivative-free optimisers call [`FitProblem::cost`].
pub struct FitProblem {
    setup: RouteSetup,
    layout: Layout,
    t: Vec<f64>,
    y: Option<Channel>,
    v: Option<Channel>,
}

struct Eval {
    r: DVector<f64>,
    s: DMatrix<f64>,
    pred: predict::Prediction,
}

impl FitProblem {
    fn residuals(&self, pred: &predict::Prediction) -> Vec<f64> {
        let mut r = Vec::new();
        for (ch, p) in [(&self.y, &pred.y), (&self.v, &pred.v)] {
            if let Some(c) = ch {
                for ((&pi, &yi), &u) in p.iter().zip(&c.values).zip(&c.used) {
                    if u {
                        r.push((pi - yi) / c.sigma);
                    }
                }
            }
        }
        r
    }

    /// Φ at coordinates `z`, counting one model evaluation in `evaluations`. A point outside
    /// the model's domain (zeta >= 1, no impact before T, a refused route) is an error.
    pub fn cost(&self, z: &[f64], evaluations: &mut u64) -> Result<f64> {
        *evaluations += 1;
        let m = self.layout.model(z)?;
        let pred = predict::predict(&self.setup, &m, &self.t)?;
        let r = self.residuals(&pred);
        let c = 0.5 * r.iter().map(|x| x * x).sum::<f64>();
        if c.is_finite() {
            Ok(c)
        } else {
            Err(FerroError::NonFinite {
                what: "fit objective",
                detail: format!("at z = {z:?}"),
            })
        }
    }

    fn eval(&self, z: &[f64], evaluations: &mut u64, halved: &mut (u64, u64)) -> Result<Eval> {
        let sens = predict::sensitivity(&self.setup, &self.layout, z, &self.t)?;
        *evaluations += sens.evaluations;
        halved.0 += sens.probes_halved;
        halved.1 += sens.one_sided;
        let np = self.layout.params.len();
        let mut rows: Vec<Vec<f64>> = Vec::new();
        for (ch, d) in [(&self.y, &sens.dy), (&self.v, &sens.dv)] {
            if let Some(c) = ch {
                for i in 0..self.t.len() {
                    if c.used[i] {
                        rows.push((0..np).map(|j| d[(i, j)] / c.sigma).collect());
                    }
                }
            }
        }
        let r = self.residuals(&sens.prediction);
        let s = DMatrix::from_fn(rows.len(), np, |i, j| rows[i][j]);
        if r.iter().chain(s.iter()).any(|x| !x.is_finite()) {
            return Err(FerroError::NonFinite {
                what: "fit residuals or sensitivities",
                detail: format!("at z = {z:?}"),
            });
        }
        Ok(Eval {
            r: DVector::from_vec(r),
            s,
            pred: sens.prediction,
        })
    }

    /// The fitted parameters' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.layout.params.iter().map(|p| p.name()).collect()
    }

    /// The start's coordinates.
    pub fn start(&self) -> Vec<f64> {
        self.layout.coordinates(&self.layout.base)
    }

    /// Coordinates of physical parameter values (in `names` order).
    pub fn coordinates(&self, theta: &[f64]) -> Vec<f64> {
        self.layout
            .params
            .iter()
            .zip(theta)
            .map(|(p, &v)| p.to_coordinate(v))
            .collect()
    }

    /// Physical parameter values at coordinates `z`.
    pub fn theta(&self, z: &[f64]) -> Vec<f64> {
        self.layout
            .params
            .iter()
            .zip(z)
            .map(|(p, &zi)| p.from_coordinate(zi))
            .collect()
    }

    /// The checker on Φ at z, with the claimed gradient Sᵀr.
    fn check(
        &self,
        z: &[f64],
        grad: &[f64],
        opts: &CheckOptions,
        spent: &mut u64,
    ) -> Result<CheckReport> {
        let mut count = 0u64;
        let mut f = |x: &[f64]| self.cost(x, &mut count);
        let mut ev = |x: &[f64]| -> Result<EventSignature> {
            let m = self.layout.model(x)?;
            let p = predict::predict(&self.setup, &m, &self.t)?;
            Ok(EventSignature {
                sequence: p.events,
                min_event_speed: None,
            })
        };
        let report = check_gradient(&mut f, Some(&mut ev), None, z, grad, opts)?;
        *spent += report.evaluations;
        Ok(report)
    }
}

impl FitProblem {
    /// Validate the observations, parameters and options and set the problem up. `guess`
    /// holds the start of the fitted parameters and the value of the others; its
    /// `t_final` is replaced by the last sample time.
    pub fn new(guess: &Drop, obs: &Observations, opts: &FitOptions) -> Result<FitProblem> {
        let (ych, vch) = obs.channels()?;
        let params: Vec<Param> = opts
            .params
            .iter()
            .map(|n| Param::from_name(n))
            .collect::<Result<_>>()?;
        if params.is_empty() {
            return Err(invalid(
                "params",
                0.0,
                "name at least one parameter to fit".into(),
            ));
        }
        for (i, p) in params.iter().enumerate() {
            if params[..i].contains(p) {
                return Err(invalid(
                    "params",
                    f64::NAN,
                    format!("parameter `{}` named twice", p.name()),
                ));
            }
        }
        if params.contains(&Param::Zeta) && params.contains(&Param::Restitution) {
            return Err(invalid(
            "params",
            f64::NAN,
            "zeta and restitution are one parameter (restitution is the zeta's stiff limit): fit one of them".into(),
        ));
        }
        let used = ych
            .as_ref()
            .map_or(0, |c| c.used.iter().filter(|&&u| u).count())
            + vch
                .as_ref()
                .map_or(0, |c| c.used.iter().filter(|&&u| u).count());
        if used < params.len() + 1 {
            return Err(invalid(
                "t",
                used as f64,
                format!(
                    "too few samples: {used} observations for {} parameters (need at least {})",
                    params.len(),
                    params.len() + 1
                ),
            ));
        }
        positive("k", opts.k)?;
        if matches!(opts.route, Route::Fixed | Route::Corrected) {
            positive("dt", opts.dt)?;
        }
        let probe = match opts.probe {
            Some(p) => positive("probe", p)?,
            None if opts.route == Route::Tolerance => 1e-4,
            None => 1e-6,
        };
        positive("weak_rel", opts.weak_rel)?;
        positive("weak_width", opts.weak_width)?;
        positive("ftol", opts.ftol)?;
        positive("xtol", opts.xtol)?;
        positive("max_step", opts.max_step)?;
        let horizon = *obs.t.last().unwrap_or(&0.0);
        let drop = Drop {
            t_final: horizon,
            ..*guess
        };
        drop.validate()?;
        let mut base = Model {
            drop,
            k: opts.k,
            restitution: if opts.route == Route::Exact {
                opts.restitution
            } else {
                None
            },
        };
        if let Some(e) = opts
            .restitution
            .filter(|_| params.contains(&Param::Restitution))
        {
            Param::Restitution.set(&mut base, e)?;
        }
        let layout = Layout {
            params: params.clone(),
            base,
        };
        Ok(FitProblem {
            setup: RouteSetup {
                route: opts.route,
                dt: opts.dt,
                tolerance: opts.tolerance,
                probe,
            },
            layout,
            t: obs.t.clone(),
            y: ych,
            v: vch,
        })
    }
}

/// Model evaluations and probe-control counts, summed over a fit.
#[derive(Default)]
struct Counters {
    evaluations: u64,
    halved: (u64, u64),
}

/// Where a Levenberg–Marquardt run ended.
struct Minimum {
    z: Vec<f64>,
    cost: f64,
    eval: Eval,
    status: Status,
}

/// Levenberg–Marquardt (Marquardt's diagonal scaling) on Φ from `z` (`cur`: its
/// evaluation), the coordinate `held` (if any) kept where it is: its row and column of the
/// normal equations are decoupled and its gradient entry zeroed, so its step is exactly 0.
/// `record` receives every iteration.
fn levenberg_marquardt(
    problem: &FitProblem,
    mut z: Vec<f64>,
    mut cur: Eval,
    held: Option<usize>,
    opts: &FitOptions,
    counters: &mut Counters,
    record: &mut dyn FnMut(Iteration),
) -> Result<Minimum> {
    let np = z.len();
    let mut cost = 0.5 * cur.r.norm_squared();
    let mut lambda = 1e-3;
    let mut status = Status::MaxIterations;
    for it in 1..=opts.max_iterations {
        let mut a = cur.s.transpose() * &cur.s;
        let mut g = cur.s.transpose() * &cur.r;
        if let Some(j) = held {
            for i in 0..np {
                a[(i, j)] = 0.0;
                a[(j, i)] = 0.0;
            }
            a[(j, j)] = 1.0;
            g[j] = 0.0;
        }
        let dmax = (0..np)
            .filter(|&j| Some(j) != held)
            .map(|j| a[(j, j)])
            .fold(0.0_f64, f64::max);
        let diag: Vec<f64> = (0..np)
            .map(|j| a[(j, j)].max(1e-12 * dmax).max(1e-300))
            .collect();
        let mut accepted = None;
        while lambda < 1e16 {
            let Some(step) =
                bounded_step(&a, &g, &diag, lambda, &problem.layout.params, opts.max_step)
            else {
                lambda *= 10.0;
                continue;
            };
            let trial: Vec<f64> = z.iter().zip(step.iter()).map(|(a, b)| a + b).collect();
            match problem.cost(&trial, &mut counters.evaluations) {
                Ok(c) if c < cost => {
                    accepted = Some((trial, c, step.amax()));
                    break;
                }
                _ => lambda *= 10.0,
            }
        }
        let gradient_norm = g.amax();
        let Some((trial, c, step_norm)) = accepted else {
            record(Iteration {
                iteration: it,
                cost,
                lambda,
                theta: problem.theta(&z),
                gradient_norm,
                step_norm: 0.0,
                accepted: false,
                evaluations: counters.evaluations,
                wall_s: None,
            });
            // No damping finds a lower Φ. At a minimum (to the precision of Φ and of S) the
            // Gauss–Newton model itself promises no decrease worth having; a route whose
            // gradient does not point downhill promises one and cannot deliver it.
            let promised = a
                .clone()
                .pseudo_inverse(1e-14 * dmax)
                .map(|inv| 0.5 * g.dot(&(inv * &g)))
                .unwrap_or(f64::INFINITY);
            status = if promised <= 1e3 * opts.ftol * cost.max(1.0) {
                Status::Converged
            } else {
                Status::Stalled
            };
            break;
        };
        let drop_frac = (cost - c) / cost.max(f64::MIN_POSITIVE);
        z = trial;
        cost = c;
        cur = problem.eval(&z, &mut counters.evaluations, &mut counters.halved)?;
        record(Iteration {
            iteration: it,
            cost,
            lambda,
            theta: problem.theta(&z),
            gradient_norm,
            step_norm,
            accepted: true,
            evaluations: counters.evaluations,
            wall_s: None,
        });
        lambda = (lambda * 0.1).max(1e-12);
        if drop_frac < opts.ftol || step_norm < opts.xtol {
            status = Status::Converged;
            break;
        }
    }
    Ok(Minimum {
        z,
        cost,
        eval: cur,
        status,
    })
}

/// The damped Gauss–Newton step (AᵀA + λ·D) d = −g with every log coordinate's change
/// bounded by `max_step`: the minimiser of the damped model subject to |d_j| ≤ max_step. A
/// coordinate past its bound gets its own multiplier μ_j on the diagonal (the Lagrange
/// multiplier of its constraint), raised until the step keeps within the bound, so the
/// constraint shortens that coordinate's step alone: raising λ instead shortens every
/// coordinate's, and a column the data barely see (k while no sample is in contact, whose
/// Gauss–Newton step is decades long) then stalls the well-seen ones for as many iterations
/// as it keeps pulling. Steps within the bound are the plain damped step, bit for bit.
/// `None` when the damped matrix is not positive definite or no multiplier bounds the step.
fn bounded_step(
    a: &DMatrix<f64>,
    g: &DVector<f64>,
    diag: &[f64],
    lambda: f64,
    params: &[Param],
    max_step: f64,
) -> Option<DVector<f64>> {
    let np = g.len();
    let mut mu = vec![0.0_f64; np];
    for _ in 0..64 {
        let mut m = a.clone();
        for j in 0..np {
            m[(j, j)] += lambda * diag[j];
            if mu[j] > 0.0 {
                m[(j, j)] += mu[j];
            }
        }
        let d: Vec<f64> = (0..np).map(|j| m[(j, j)]).collect();
        let step = m.cholesky()?.solve(&(-g));
        let mut within = true;
        for (j, p) in params.iter().enumerate() {
            let over = step[j].abs() / max_step;
            if p.is_log() && over > 1.0 {
                within = false;
                // For a decoupled coordinate the step is g_j over its diagonal: scaling the
                // diagonal by the overshoot (and a margin) brings it to the bound; coupling
                // to the others makes this a guess, so the loop checks again.
                mu[j] += d[j] * (over * 1.0625 - 1.0);
            }
        }
        if within {
            return Some(step);
        }
    }
    None
}

/// The continuation of a fit whose χ² is inconsistent with the noise ([`Continuation`]):
/// the first half of the samples from the start, then all of them. Returns the receipt and,
/// when its Φ is below the direct fit's and it converged, its minimum (`record` got the last
/// stage's iterations). A stage the model refuses ends it with the direct fit kept.
fn continue_over_horizon(
    guess: &Drop,
    obs: &Observations,
    opts: &FitOptions,
    problem: &FitProblem,
    direct: &Minimum,
    counters: &mut Counters,
    record: &mut dyn FnMut(Iteration),
) -> (Continuation, Option<Minimum>) {
    let n = obs.t.len();
    let first = n.div_ceil(2);
    let mut receipt = Continuation {
        samples: vec![first, n],
        cost_direct: direct.cost,
        cost: None,
        adopted: false,
        note: String::new(),
    };
    let prefix = |v: &Option<Vec<f64>>| v.as_ref().map(|v| v[..first].to_vec());
    let half = Observations {
        t: obs.t[..first].to_vec(),
        y: prefix(&obs.y),
        v: prefix(&obs.v),
        mask_y: obs.mask_y.as_ref().map(|m| m[..first].to_vec()),
        mask_v: obs.mask_v.as_ref().map(|m| m[..first].to_vec()),
        ..obs.clone()
    };
    let staged = (|| -> Result<Minimum> {
        let p = FitProblem::new(guess, &half, opts)?;
        let z = p.start();
        let e = p.eval(&z, &mut counters.evaluations, &mut counters.halved)?;
        let m = levenberg_marquardt(&p, z, e, None, opts, counters, &mut |_| {})?;
        let e = problem.eval(&m.z, &mut counters.evaluations, &mut counters.halved)?;
        levenberg_marquardt(problem, m.z, e, None, opts, counters, record)
    })();
    match staged {
        Err(e) => receipt.note = format!("a stage failed, the direct fit is kept: {e}"),
        Ok(m) => {
            receipt.cost = Some(m.cost);
            if m.status == Status::Converged && m.cost < direct.cost {
                receipt.adopted = true;
                receipt.note =
                    "the continuation's minimum is lower: it replaces the direct fit's".into();
                return (receipt, Some(m));
            }
            receipt.note = if m.status != Status::Converged {
                "the continuation did not converge: the direct fit is kept".into()
            } else {
                "the continuation's minimum is not lower: the direct fit is kept".into()
            };
        }
    }
    (receipt, None)
}

/// The χ² rise that bounds a 95% likelihood-ratio interval on one parameter: the 95%
/// quantile of χ² with one degree of freedom, 1.96².
const DELTA_CHI2_95: f64 = Z95 * Z95;

/// The farthest a profile is searched from the solution, in the fit's coordinate (a factor
/// e^10 on a log parameter).
const PROFILE_SEARCH: f64 = 10.0;

/// How far below the solution's Φ a profile point may land before the solution is taken
/// not to be the minimum (rounding of Φ and of the optimiser's stopping rule are far below).
const PROFILE_SLACK: f64 = 1e-6;

/// One side of a profile interval.
enum Bound {
    /// The profile reaches the threshold at this distance from the solution (fit coordinate).
    Profile(f64),
    /// The profile stays below the threshold out to this distance (the search's end).
    Unbounded(f64),
    /// No bracket, and why.
    Failed(String),
}

/// Φ's profile along one coordinate at a converged solution.
struct Profiler<'a> {
    problem: &'a FitProblem,
    /// The solution's coordinates.
    z: &'a [f64],
    /// Φ there.
    cost: f64,
    /// sqrt(Δχ²): where the profile's signed root sqrt(2(Φ_p − Φ)) bounds the interval.
    threshold: f64,
    opts: &'a FitOptions,
}

impl Profiler<'_> {
    /// The profile at z_j = `zj`: Φ minimised over the other coordinates from `warm`
    /// (Φ itself for a one-parameter fit), with the minimiser.
    fn point(
        &self,
        j: usize,
        zj: f64,
        warm: &[f64],
        counters: &mut Counters,
    ) -> Result<(f64, Vec<f64>)> {
        let mut z = warm.to_vec();
        z[j] = zj;
        if z.len() == 1 {
            let c = self.problem.cost(&z, &mut counters.evaluations)?;
            return Ok((c, z));
        }
        let cur = self
            .problem
            .eval(&z, &mut counters.evaluations, &mut counters.halved)?;
        let m = levenberg_marquardt(
            self.problem,
            z,
            cur,
            Some(j),
            self.opts,
            counters,
            &mut |_| {},
        )?;
        Ok((m.cost, m.z))
    }

    /// The bound on side `dir` (−1 lower, +1 upper) of coordinate `j`: first probe at the
    /// Wald half-width `wald`, doubled until the profile's signed root sqrt(2(Φ_p − Φ)) passes
    /// sqrt(Δχ²) (1.96 with σ as stated), then Illinois regula falsi on it (nearly linear in z_j: exactly so for a model
    /// linear in its parameters). `slope` is the linearisation's conditional line
    /// dz/dz_j, the warm start of the other coordinates.
    fn side(&self, j: usize, dir: f64, wald: f64, slope: &[f64], counters: &mut Counters) -> Bound {
        let root = |c: f64| libm::sqrt(2.0 * (c - self.cost).max(0.0)) - self.threshold;
        let along = |from: &[f64], dt: f64| -> Vec<f64> {
            from.iter()
                .zip(slope)
                .map(|(a, s)| a + dir * dt * s)
                .collect()
        };
        let lower = |c: f64, t: f64| {
            format!(
                "Φ at {:.6e} is {:.3e} below the solution's: the solution is not the minimum",
                self.z[j] + dir * t,
                self.cost - c
            )
        };
        let (mut a, mut ha, mut warm_a) = (0.0, -self.threshold, self.z.to_vec());
        let mut t = if wald.is_finite() && wald > 0.0 {
            wald.min(PROFILE_SEARCH)
        } else {
            1.0
        };
        let mut ceiling = f64::INFINITY;
        let mut bracket = None;
        for _ in 0..40 {
            match self.point(j, self.z[j] + dir * t, &along(&warm_a, t - a), counters) {
                Ok((c, _)) if c < self.cost - PROFILE_SLACK => return Bound::Failed(lower(c, t)),
                Ok((c, zt)) => {
                    let h = root(c);
                    if h >= 0.0 {
                        bracket = Some((t, h, zt));
                        break;
                    }
                    (a, ha, warm_a) = (t, h, zt);
                    if t >= PROFILE_SEARCH {
                        return Bound::Unbounded(t);
                    }
                    t = (2.0 * t).min(PROFILE_SEARCH).min(0.5 * (t + ceiling));
                }
                Err(e) => {
                    // Outside the model's domain: look between the last good point and here.
                    ceiling = t;
                    if t - a <= 1e-6 * t {
                        return Bound::Failed(format!(
                            "the model's domain ends {:.6e} from the solution with the profile still below the threshold: {e}",
                            a
                        ));
                    }
                    t = 0.5 * (a + t);
                }
            }
        }
        let Some((mut b, mut hb, mut warm_b)) = bracket else {
            return Bound::Failed("no bracket in 40 probes".into());
        };
        // Illinois: the end kept twice running has its value halved.
        let mut kept = 0i8;
        for _ in 0..60 {
            let t = b - hb * (b - a) / (hb - ha);
            let warm = if t - a < b - t {
                along(&warm_a, t - a)
            } else {
                along(&warm_b, t - b)
            };
            let (c, zt) = match self.point(j, self.z[j] + dir * t, &warm, counters) {
                Ok(x) => x,
                Err(e) => return Bound::Failed(format!("inside the bracket: {e}")),
            };
            if c < self.cost - PROFILE_SLACK {
                return Bound::Failed(lower(c, t));
            }
            let h = root(c);
            if h.abs() <= 1e-7 || b - a <= 1e-12 * (1.0 + b) {
                return Bound::Profile(t);
            }
            if h > 0.0 {
                (b, hb, warm_b) = (t, h, zt);
                if kept == 1 {
                    ha *= 0.5;
                }
                kept = 1;
            } else {
                (a, ha, warm_a) = (t, h, zt);
                if kept == -1 {
                    hb *= 0.5;
                }
                kept = -1;
            }
        }
        Bound::Profile(b - hb * (b - a) / (hb - ha))
    }
}

/// z-score of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The start of a fit: its evaluation, Φ there, the gradient check there and the record's
/// first entry.
struct Start {
    z: Vec<f64>,
    eval: Eval,
    cost: f64,
    check: Option<CheckReport>,
    check_evaluations: u64,
    iteration: Iteration,
}

impl FitProblem {
    /// Evaluate the start (the guess's coordinates) and check Φ's gradient there.
    fn begin(
        &self,
        opts: &FitOptions,
        counters: &mut Counters,
        since: &dyn Fn() -> Option<f64>,
    ) -> Result<Start> {
        let z = self.layout.coordinates(&self.layout.base);
        let eval = self.eval(&z, &mut counters.evaluations, &mut counters.halved)?;
        let cost = 0.5 * eval.r.norm_squared();
        let mut check_evaluations = 0u64;
        let grad: Vec<f64> = (eval.s.transpose() * &eval.r).iter().copied().collect();
        let check = if opts.check {
            Some(self.check(&z, &grad, &opts.check_options, &mut check_evaluations)?)
        } else {
            None
        };
        let iteration = Iteration {
            iteration: 0,
            cost,
            lambda: 0.0,
            theta: self.theta(&z),
            gradient_norm: grad.iter().fold(0.0_f64, |m, g| m.max(g.abs())),
            step_norm: 0.0,
            accepted: true,
            evaluations: counters.evaluations,
            wall_s: since(),
        };
        Ok(Start {
            z,
            eval,
            cost,
            check,
            check_evaluations,
            iteration,
        })
    }
}

/// Identifiability at the solution: the singular values and right singular vectors of S.
struct Identifiability {
    /// (singular value, right singular vector), largest first; a wide S is completed with
    /// the directions it does not see (singular value 0).
    pairs: Vec<(f64, Vec<f64>)>,
    /// The largest singular value.
    largest: f64,
    /// Largest over smallest singular value (infinite when singular).
    condition: f64,
    /// Variance of each coordinate in the linearisation (infinite along unseen directions).
    variance: Vec<f64>,
    weak_directions: Vec<WeakDirection>,
}

impl Identifiability {
    fn at(s: &DMatrix<f64>, params: &[Param], opts: &FitOptions) -> Result<Identifiability> {
        let np = params.len();
        let svd = s.clone().svd(false, true);
        let v_t = svd.v_t.ok_or(FerroError::NonFinite {
            what: "singular value decomposition",
            detail: "no right singular vectors".into(),
        })?;
        let mut pairs: Vec<(f64, Vec<f64>)> = (0..svd.singular_values.len())
            .map(|i| (svd.singular_values[i], v_t.row(i).iter().copied().collect()))
            .collect();
        // A wide S (fewer rows than parameters) leaves directions it does not see at all.
        while pairs.len() < np {
            pairs.push((0.0, null_direction(&pairs, np)));
        }
        pairs.sort_by(|a, b| b.0.total_cmp(&a.0));
        let largest = pairs.first().map_or(0.0, |p| p.0);
        let smallest = pairs.last().map_or(0.0, |p| p.0);
        let condition = if smallest > 0.0 {
            largest / smallest
        } else {
            f64::INFINITY
        };
        let mut variance = vec![0.0; np];
        for (s, v) in &pairs {
            for j in 0..np {
                let w = v[j] * v[j];
                if w > 0.0 {
                    variance[j] += if *s > opts.weak_rel * largest * 1e-6 && *s > 0.0 {
                        w / (s * s)
                    } else {
                        f64::INFINITY
                    };
                }
            }
        }
        let weak_directions: Vec<WeakDirection> = pairs
            .iter()
            .filter_map(|(s, v)| {
                let half = if *s > 0.0 { Z95 / s } else { f64::INFINITY };
                let kind = if *s < opts.weak_rel * largest || *s == 0.0 {
                    "unidentifiable"
                } else if half > opts.weak_width {
                    "weakly informed"
                } else {
                    return None;
                };
                Some(WeakDirection {
                    label: combination_label(params, v),
                    coefficients: v.clone(),
                    singular_value: *s,
                    half_width: half,
                    kind: kind.into(),
                })
            })
            .collect();
        Ok(Identifiability {
            pairs,
            largest,
            condition,
            variance,
            weak_directions,
        })
    }

    /// (F⁻¹)_nj over the informed directions: the linearisation's covariance, which gives
    /// the Wald intervals and the warm start of each profile (the nuisance coordinates'
    /// linear response).
    fn covariance(&self, n: usize, j: usize, opts: &FitOptions) -> f64 {
        let informed = |s: f64| s > opts.weak_rel * self.largest * 1e-6 && s > 0.0;
        self.pairs
            .iter()
            .filter(|(s, _)| informed(*s))
            .map(|(s, v)| v[n] * v[j] / (s * s))
            .sum()
    }
}

/// The 95% intervals at the solution `min` (profiles where the fit converged and they
/// were asked for, Wald otherwise), each parameter's estimate with them, and their receipt
/// (its wall time left to the caller). The profiles' probe counts are added to `counters`.
fn intervals(
    problem: &FitProblem,
    min: &Minimum,
    ident: &Identifiability,
    theta_start: &[f64],
    opts: &FitOptions,
    counters: &mut Counters,
) -> Result<(Vec<Estimate>, IntervalReceipt)> {
    let params = &problem.layout.params;
    let np = params.len();
    let z = &min.z;
    let mut interval_counters = Counters {
        evaluations: 0,
        halved: (0, 0),
    };
    let mut notes = Vec::new();
    let dof = min.eval.r.len() as i64 - np as i64;
    let (delta_chi2, t_quantile, residual_scale) =
        opts.sigma_scale.threshold(2.0 * min.cost, dof)?;
    let half = libm::sqrt(delta_chi2);
    let profiler = Profiler {
        problem,
        z,
        cost: min.cost,
        threshold: half,
        opts,
    };
    let mut estimates: Vec<Estimate> = Vec::with_capacity(np);
    for (j, p) in params.iter().enumerate() {
        let sd = ident.variance[j].sqrt();
        let wald = (z[j] - half * sd, z[j] + half * sd);
        let mut bounds = [wald.0, wald.1];
        let mut methods = ["wald".to_string(), "wald".to_string()];
        if opts.interval == IntervalMethod::Profile && min.status == Status::Converged {
            let cjj = ident.covariance(j, j, opts);
            let slope: Vec<f64> = (0..np)
                .map(|n| {
                    if n == j {
                        1.0
                    } else if cjj > 0.0 {
                        ident.covariance(n, j, opts) / cjj
                    } else {
                        0.0
                    }
                })
                .collect();
            for (side, dir) in [(0usize, -1.0), (1, 1.0)] {
                let which = if side == 0 { "lower" } else { "upper" };
                match profiler.side(j, dir, half * sd, &slope, &mut interval_counters) {
                    Bound::Profile(t) => {
                        bounds[side] = z[j] + dir * t;
                        methods[side] = "profile".into();
                    }
                    Bound::Unbounded(t) => {
                        bounds[side] = dir * f64::INFINITY;
                        methods[side] = "profile-unbounded".into();
                        notes.push(format!(
                            "{} {which} side: Φ's profile stays below the threshold out to {:.3} in the fit's coordinate (searched that far): unbounded",
                            p.name(),
                            dir * t
                        ));
                    }
                    Bound::Failed(why) => notes.push(format!(
                        "{} {which} side: the profile could not be bracketed ({why}); the Wald bound is reported",
                        p.name()
                    )),
                }
            }
        }
        let value = |c: f64| {
            if c == f64::NEG_INFINITY && p.is_log() {
                0.0
            } else {
                p.from_coordinate(c)
            }
        };
        estimates.push(Estimate {
            name: p.name().into(),
            unit: p.unit().into(),
            estimate: p.from_coordinate(z[j]),
            start: theta_start[j],
            interval: (value(bounds[0]), value(bounds[1])),
            interval_method: (methods[0].clone(), methods[1].clone()),
            wald_interval: (value(wald.0), value(wald.1)),
            std_coordinate: sd,
            log: p.is_log(),
        });
    }
    if opts.interval == IntervalMethod::Profile && min.status != Status::Converged {
        notes.push(format!(
            "the fit ended {} without converging: a profile needs the minimum, so every interval is the Wald interval",
            match min.status {
                Status::Stalled => "stalled",
                _ => "at the iteration cap",
            }
        ));
    }
    let receipt = IntervalReceipt {
        method: match opts.interval {
            IntervalMethod::Profile => format!("profile likelihood (likelihood ratio): each bound is where min over the other parameters of χ² = 2Φ rises by Δχ² = {delta_chi2:.6} above the solution's ({}), found by bracketing along the parameter (first probe at the Wald bound, doubling) and Illinois regula falsi on the signed root sqrt(2ΔΦ) − sqrt(Δχ²), the other parameters re-fitted by the same Levenberg–Marquardt, warm-started on the linearisation's conditional line; Wald bound z ± sqrt(Δχ²)·sqrt((F⁻¹)_jj) where the profile cannot be bracketed (see notes)", sigma_scale_words(opts.sigma_scale)),
            IntervalMethod::Wald => format!("Wald: z ± sqrt(Δχ²)·sqrt((F⁻¹)_jj) with F = SᵀS at the solution and Δχ² = {delta_chi2:.6} ({}), mapped through exp for log parameters (the linearisation; blind to the model's curvature)", sigma_scale_words(opts.sigma_scale)),
        },
        level: 0.95,
        sigma_scale: opts.sigma_scale,
        delta_chi2,
        residual_scale,
        t_quantile,
        evaluations: interval_counters.evaluations,
        notes,
        wall_s: None,
    };
    counters.halved.0 += interval_counters.halved.0;
    counters.halved.1 += interval_counters.halved.1;
    Ok((estimates, receipt))
}

/// Whitened residuals (prediction − value)/σ of one channel at every sample time, NaN where
/// masked or not measured.
fn whitened(ch: &Option<Channel>, p: &[f64]) -> Vec<f64> {
    match ch {
        Some(c) => (0..p.len())
            .map(|i| {
                if c.used[i] {
                    (p[i] - c.values[i]) / c.sigma
                } else {
                    f64::NAN
                }
            })
            .collect(),
        None => vec![f64::NAN; p.len()],
    }
}

/// A check's verdict, "not-run" without one.
fn verdict(c: &Option<CheckReport>) -> String {
    c.as_ref()
        .map_or("not-run".to_string(), |r| r.verdict.to_string())
}

/// The continuation phase of [`fit`]: a converged minimum whose χ² is inconsistent with the
/// data (above the 99.9% limit at `dof`) is refitted over a growing horizon
/// ([`continue_over_horizon`]); the better minimum is kept, and its iterations are appended to
/// `iterations`, numbered after the direct fit's.
fn after_local_minimum(
    (guess, obs, opts, problem): (&Drop, &Observations, &FitOptions, &FitProblem),
    min: Minimum,
    dof: i64,
    counters: &mut Counters,
    iterations: &mut Vec<Iteration>,
    since: &dyn Fn() -> Option<f64>,
) -> (Minimum, Option<Continuation>) {
    if !(opts.continuation && min.status == Status::Converged && 2.0 * min.cost > chi2_limit(dof)) {
        return (min, None);
    }
    let mut staged = Vec::new();
    let (c, better) = continue_over_horizon(
        guess,
        obs,
        opts,
        problem,
        &min,
        counters,
        &mut |it: Iteration| staged.push(it),
    );
    let Some(better) = better else {
        return (min, Some(c));
    };
    let offset = iterations.len() - 1;
    for mut it in staged {
        it.iteration += offset;
        it.wall_s = since();
        iterations.push(it);
    }
    (better, Some(c))
}

/// Fit the drop's parameters to observations (see the module docs). `guess` holds the
/// start of the fitted parameters and the value of the others; its `t_final` is replaced
/// by the last sample time. `clock`, when given, times the fit.
///
/// Phases: set the problem up ([`FitProblem::new`]), evaluate and check the start,
/// minimise Φ by Levenberg–Marquardt, read identifiability off S at the solution, find the
/// intervals, check Φ's gradient at the solution and fill in the report.
pub fn fit(
    guess: &Drop,
    obs: &Observations,
    opts: &FitOptions,
    clock: Option<&Clock>,
) -> Result<FitReport> {
    let t0 = clock.map(|c| c.now());
    let since = || match (clock, t0) {
        (Some(c), Some(t0)) => Some(c.now() - t0),
        _ => None,
    };
    let problem = FitProblem::new(guess, obs, opts)?;
    let mut counters = Counters::default();
    let start = problem.begin(opts, &mut counters, &since)?;
    let theta_start = problem.theta(&start.z);
    let mut check_evaluations = start.check_evaluations;
    let mut iterations = vec![start.iteration];
    let mut record = |mut it: Iteration| {
        it.wall_s = since();
        iterations.push(it);
    };
    let min = levenberg_marquardt(
        &problem,
        start.z,
        start.eval,
        None,
        opts,
        &mut counters,
        &mut record,
    )?;
    let dof = min.eval.r.len() as i64 - problem.layout.params.len() as i64;
    let (min, continuation) = after_local_minimum(
        (guess, obs, opts, &problem),
        min,
        dof,
        &mut counters,
        &mut iterations,
        &since,
    );
    let evaluations = counters.evaluations;
    let ident = Identifiability::at(&min.eval.s, &problem.layout.params, opts)?;
    let interval_clock = since();
    let (estimates, mut intervals) =
        intervals(&problem, &min, &ident, &theta_start, opts, &mut counters)?;
    intervals.wall_s = since().zip(interval_clock).map(|(b, a)| b - a);
    let Minimum {
        z,
        cost,
        eval: cur,
        status,
    } = min;
    let grad: Vec<f64> = (cur.s.transpose() * &cur.r).iter().copied().collect();
    let check_solution = (opts.check)
        .then(|| problem.check(&z, &grad, &opts.check_options, &mut check_evaluations))
        .transpose()?;
    let model = problem.layout.model(&z)?;
    let template = template(&problem, opts, &start.check, &check_solution, &estimates);
    let receipt = FitReceipt {
        verdicts: (verdict(&start.check), verdict(&check_solution)),
        check_start: start.check,
        check_solution,
        template,
        probes_halved: counters.halved.0,
        one_sided: counters.halved.1,
        intervals,
        continuation,
    };
    Ok(FitReport {
        schema: FIT_SCHEMA.into(),
        route: opts.route,
        params: estimates,
        status,
        cost_start: start.cost,
        cost,
        observations: cur.r.len(),
        dof,
        chi2: 2.0 * cost,
        chi2_limit: chi2_limit(dof),
        consistent: 2.0 * cost <= chi2_limit(dof),
        singular_values: ident.pairs.iter().map(|p| p.0).collect(),
        condition: ident.condition,
        identifiable: ident.weak_directions.is_empty(),
        weak_directions: ident.weak_directions,
        iterations,
        evaluations,
        check_evaluations,
        t: obs.t.clone(),
        residual_y: whitened(&problem.y, &cur.pred.y),
        residual_v: whitened(&problem.v, &cur.pred.v),
        y_fit: cur.pred.y,
        v_fit: cur.pred.v,
        drop: model.drop,
        k: model.k,
        restitution: model.restitution,
        wall_s: since(),
        receipt,
    })
}

/// The predictions [`fit`] compares with the data, at `drop` as it is (its `t_final` is
/// replaced by the last of `t`): heights, velocities and the events before each sample time
/// by the route of `opts` (its `params` are ignored).
pub fn predictions(drop: &Drop, t: &[f64], opts: &FitOptions) -> Result<predict::Prediction> {
    let obs = Observations {
        t: t.to_vec(),
        ..Observations::default()
    };
    obs.times()?;
    let horizon = *t
        .last()
        .ok_or_else(|| invalid("t", 0.0, "no sample times".into()))?;
    let model = Model {
        drop: Drop {
            t_final: horizon,
            ..*drop
        },
        k: positive("k", opts.k)?,
        restitution: if opts.route == Route::Exact {
            opts.restitution
        } else {
            None
        },
    };
    model.drop.validate()?;
    let setup = RouteSetup {
        route: opts.route,
        dt: opts.dt,
        tolerance: opts.tolerance,
        probe: 1e-6,
    };
    predict::predict(&setup, &model, t)
}

/// What Δχ² is, in words.
fn sigma_scale_words(scale: SigmaScale) -> &'static str {
    match scale {
        SigmaScale::Stated => "σ as stated: 1.96², the 95% quantile of χ² with 1 degree of freedom",
        SigmaScale::Residual => "σ up to a common scale estimated by the residuals: s²·t², s² = χ²/ν, t the 97.5% quantile of Student's t with ν = observations − parameters degrees of freedom",
        SigmaScale::Either => "the larger of 1.96² (σ as stated) and s²·t² (σ's scale from the residuals, s² = χ²/ν, t the 97.5% quantile of Student's t with ν = observations − parameters degrees of freedom): a 95% interval whether σ is right or only its ratios are",
    }
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

/// A unit vector orthogonal to the given ones (Gram–Schmidt on the coordinate axes).
fn null_direction(pairs: &[(f64, Vec<f64>)], n: usize) -> Vec<f64> {
    for axis in 0..n {
        let mut v = vec![0.0; n];
        v[axis] = 1.0;
        for (_, u) in pairs {
            let d: f64 = u.iter().zip(&v).map(|(a, b)| a * b).sum();
            for j in 0..n {
                v[j] -= d * u[j];
            }
        }
        let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
        if norm > 1e-6 {
            return v.into_iter().map(|a| a / norm).collect();
        }
    }
    vec![0.0; n]
}

/// "log k − 0.98·log zeta": a combination of the fit's coordinates, the largest
/// coefficient scaled to 1, coefficients below 0.05 of it left out.
pub fn combination_label(params: &[Param], v: &[f64]) -> String {
    let big = v.iter().fold(0.0_f64, |m, c| m.max(c.abs()));
    if big == 0.0 {
        return "(none)".into();
    }
    // Sign so that the largest coefficient is positive.
    let lead = v
        .iter()
        .copied()
        .fold(0.0_f64, |m, c| if c.abs() > m.abs() { c } else { m });
    let mut out = String::new();
    for (p, &c) in params.iter().zip(v) {
        let c = c / lead;
        if c.abs() < 0.05 {
            continue;
        }
        let name = if p.is_log() {
            format!("log {}", p.name())
        } else {
            p.name().to_string()
        };
        let mag = c.abs();
        let coef = if (mag - 1.0).abs() < 5e-3 {
            String::new()
        } else {
            format!("{mag:.2}·")
        };
        if out.is_empty() {
            out = format!("{}{coef}{name}", if c < 0.0 { "−" } else { "" });
        } else {
            out.push_str(&format!(
                " {} {coef}{name}",
                if c < 0.0 { "−" } else { "+" }
            ));
        }
    }
    out
}

fn template(
    problem: &FitProblem,
    opts: &FitOptions,
    start: &Option<CheckReport>,
    solution: &Option<CheckReport>,
    estimates: &[Estimate],
) -> Template {
    let route = opts.route;
    let chan = |c: &Option<Channel>, what: &str, unit: &str| match c {
        Some(c) => format!(
            "{} {what} (σ = {:e} {unit}, {} masked)",
            c.used.iter().filter(|&&u| u).count(),
            c.sigma,
            c.used.iter().filter(|&&u| !u).count()
        ),
        None => format!("no {what}"),
    };
    let mut tolerances: Vec<(String, f64)> =
        vec![("horizon T (s)".into(), *problem.t.last().unwrap_or(&0.0))];
    match route {
        Route::Fixed | Route::Corrected => {
            tolerances.push(("dt (s)".into(), opts.dt));
        }
        Route::Tolerance => {
            tolerances.push(("rtol".into(), opts.tolerance.rtol));
            tolerances.push((
                "atol".into(),
                opts.tolerance.atol.unwrap_or(opts.tolerance.rtol * 1e-2),
            ));
        }
        Route::Flow => tolerances.push(("root_rtol".into(), 0.0)),
        Route::Exact => tolerances.push(("graze_speed (m/s)".into(), crate::DEFAULT_GRAZE_SPEED)),
    }
    if route.penalty() && !problem.layout.params.contains(&Param::K) {
        tolerances.push(("k (N/m, held)".into(), opts.k));
    }
    if route != Route::Fixed {
        tolerances.push((
            "central-difference probe (fit coordinates)".into(),
            problem.setup.probe,
        ));
    }
    tolerances.push(("ftol".into(), opts.ftol));
    tolerances.push(("xtol".into(), opts.xtol));
    let co = &opts.check_options;
    let mut errors = Vec::new();
    for (when, c) in [("start", start), ("solution", solution)] {
        if let Some(r) = c {
            errors.push((format!("max normalized error at the {when}"), r.max_error));
            errors.push((
                format!("median normalized error at the {when}"),
                r.median_error,
            ));
        }
    }
    let region = estimates
        .iter()
        .map(|e| {
            format!(
                "{} {:.6e} (start) and {:.6e} (solution)",
                e.name, e.start, e.estimate
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let class = |c: &Option<CheckReport>| match c.as_ref().map(|r| r.verdict) {
        Some(Verdict::Verified) => "smooth/verified",
        Some(Verdict::VerifiedWithinNoise) => "smooth/verified within evaluation noise",
        Some(Verdict::VerifiedAbsolute) => "smooth/verified in absolute terms only",
        Some(Verdict::NotVerified) => "smooth/unverified",
        Some(Verdict::Refused) => "piecewise-smooth/event-sensitive",
        None => "smooth/unverified",
    };
    let derivative_class = match (
        start.as_ref().map(|r| r.verdict),
        solution.as_ref().map(|r| r.verdict),
    ) {
        (Some(a), Some(b)) if a == b => class(start),
        (Some(_), Some(_)) => "mixed: see the two checks",
        _ => "smooth/unverified",
    };
    Template {
        objective: "Φ(θ) = ½ Σ_i [(ŷ(t_i) − y_i)/σ_y]² + [(v̂(t_i) − v_i)/σ_v]², masked entries left out of the sum and of the count".into(),
        units: "dimensionless (whitened residuals); y in m, v in m/s, t in s".into(),
        observations: format!(
            "{} sample times from {} s to {} s; {}; {}",
            problem.t.len(),
            problem.t.first().copied().unwrap_or(0.0),
            problem.t.last().copied().unwrap_or(0.0),
            chan(&problem.y, "heights", "m"),
            chan(&problem.v, "velocities", "m/s")
        ),
        parameterisation: estimates
            .iter()
            .map(|e| if e.log { format!("ln {}", e.name) } else { e.name.clone() })
            .collect::<Vec<_>>()
            .join(", "),
        derivative_method: route.derivative().into(),
        software: format!("ferromotion-core {}", env!("CARGO_PKG_VERSION")),
        integrator: route.integrator().into(),
        tolerances,
        custom_derivative_rules: match route {
            Route::Fixed => "none (plain forward mode through the branch)".into(),
            _ => "saltation at contact switches; chain rule through ln θ; restitution ↔ zeta through the stiff-limit law e(zeta) and its derivative".into(),
        },
        check_directions: if opts.check {
            format!(
                "{} seeded random unit directions (seed {}) plus {} coordinate axes, in the fit's coordinates; Taylor remainder on {} steps; tolerance {:e}",
                co.random_directions,
                co.seed,
                if co.coordinates { problem.layout.params.len() } else { 0 },
                co.taylor_h.len(),
                co.tol
            )
        } else {
            "not run (check = false)".into()
        },
        epsilon_sweep: if opts.check { co.eps.clone() } else { Vec::new() },
        errors,
        region_tested: format!("two points only, the start and the solution: {region}; the rest of the path is not checked"),
        event_treatment: format!(
            "{}; the checker classifies each probe by Φ's event sequence (events before every sample time) and never certifies across a change",
            route.event_treatment()
        ),
        same_path: "yes: the checks evaluate Φ through the same predictions the optimiser steps on".into(),
        optimiser: "Levenberg–Marquardt with Marquardt's diagonal scaling; a trial that leaves the model's domain (zeta ≥ 1, no impact before T, a refused route) counts as uphill".into(),
        reliability: vec![
            Term { term: "observation residual (ŷ − y)/σ".into(), class: "smooth/verified".into() },
            Term { term: "parameter transform ln θ".into(), class: "smooth/verified".into() },
            Term { term: format!("{} prediction and its Jacobian", route.name()), class: derivative_class.into() },
            Term { term: "contact events".into(), class: match route {
                Route::Fixed => "piecewise-smooth/event-sensitive (jumps not differentiated)".into(),
                _ => "piecewise-smooth/event-sensitive (hybrid derivative)".into(),
            } },
            Term { term: "data preprocessing".into(), class: "fixed (outside the optimisation)".into() },
        ],
    }
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

    #[test]
    fn labels_name_the_combination() {
        let p = [Param::Zeta, Param::K, Param::Velocity];
        assert_eq!(
            combination_label(&p, &[0.6, -0.6, 0.01]),
            "log zeta − log k"
        );
        assert_eq!(combination_label(&p, &[0.0, 0.0, -1.0]), "velocity");
    }
}
