//! The 95% intervals at the solution: profile likelihood by bracketing and Illinois regula
//! falsi, the Wald interval beside it and in its place where the profile cannot be bracketed.

use super::identifiability::Identifiability;
use super::optimise::{levenberg_marquardt, Minimum};
use super::options::{FitOptions, IntervalMethod, SigmaScale};
use super::params::Param;
use super::problem::{Counters, FitProblem};
use super::report::{Estimate, IntervalReceipt, Status};
use crate::error::Result;

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
    pub(super) problem: &'a FitProblem,
    /// The solution's coordinates.
    pub(super) z: &'a [f64],
    /// Φ there.
    pub(super) cost: f64,
    /// sqrt(Δχ²): where the profile's signed root sqrt(2(Φ_p − Φ)) bounds the interval.
    pub(super) threshold: f64,
    pub(super) opts: &'a FitOptions,
}

impl Profiler<'_> {
    /// The profile at z_j = `zj`: Φ minimised over the other coordinates from `warm`
    /// (Φ itself for a one-parameter fit), with the minimiser.
    pub(super) fn point(
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
    pub(super) fn side(
        &self,
        j: usize,
        dir: f64,
        wald: f64,
        slope: &[f64],
        counters: &mut Counters,
    ) -> Bound {
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

/// The 95% intervals at the solution `min` (profiles where the fit converged and they
/// were asked for, Wald otherwise), each parameter's estimate with them, and their receipt
/// (its wall time left to the caller). The profiles' probe counts are added to `counters`.
pub(super) fn intervals(
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
            profile_bounds(
                &profiler,
                (j, *p),
                half * sd,
                ident,
                (&mut bounds, &mut methods),
                &mut interval_counters,
                &mut notes,
            );
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
        method: method_words(opts, delta_chi2),
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

/// The profile bounds of parameter `p` (coordinate `j`; `wald`: its Wald half-width, the
/// first probe), written into `bounds` and `methods` where the profile brackets (±∞ where it
/// stays below the threshold), with a note for each side it leaves to the Wald bound. The
/// nuisance coordinates are warm-started on the linearisation's conditional line.
fn profile_bounds(
    profiler: &Profiler,
    (j, p): (usize, Param),
    wald: f64,
    ident: &Identifiability,
    (bounds, methods): (&mut [f64; 2], &mut [String; 2]),
    counters: &mut Counters,
    notes: &mut Vec<String>,
) {
    let (np, opts, zj) = (ident.variance.len(), profiler.opts, profiler.z[j]);
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
        match profiler.side(j, dir, wald, &slope, counters) {
                Bound::Profile(t) => {
                    bounds[side] = zj + dir * t;
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

/// How the intervals were found, in words, with their Δχ².
fn method_words(opts: &FitOptions, delta_chi2: f64) -> String {
    match opts.interval {
        IntervalMethod::Profile => format!("profile likelihood (likelihood ratio): each bound is where min over the other parameters of χ² = 2Φ rises by Δχ² = {delta_chi2:.6} above the solution's ({}), found by bracketing along the parameter (first probe at the Wald bound, doubling) and Illinois regula falsi on the signed root sqrt(2ΔΦ) − sqrt(Δχ²), the other parameters re-fitted by the same Levenberg–Marquardt, warm-started on the linearisation's conditional line; Wald bound z ± sqrt(Δχ²)·sqrt((F⁻¹)_jj) where the profile cannot be bracketed (see notes)", sigma_scale_words(opts.sigma_scale)),
        IntervalMethod::Wald => format!("Wald: z ± sqrt(Δχ²)·sqrt((F⁻¹)_jj) with F = SᵀS at the solution and Δχ² = {delta_chi2:.6} ({}), mapped through exp for log parameters (the linearisation; blind to the model's curvature)", sigma_scale_words(opts.sigma_scale)),
    }
}

/// What Δχ² is, in words.
pub(super) fn sigma_scale_words(scale: SigmaScale) -> &'static str {
    match scale {
        SigmaScale::Stated => "σ as stated: 1.96², the 95% quantile of χ² with 1 degree of freedom",
        SigmaScale::Residual => "σ up to a common scale estimated by the residuals: s²·t², s² = χ²/ν, t the 97.5% quantile of Student's t with ν = observations − parameters degrees of freedom",
        SigmaScale::Either => "the larger of 1.96² (σ as stated) and s²·t² (σ's scale from the residuals, s² = χ²/ν, t the 97.5% quantile of Student's t with ν = observations − parameters degrees of freedom): a 95% interval whether σ is right or only its ratios are",
    }
}
