//! The problem as the optimiser sees it ([`FitProblem`]): validated set-up, Φ, the
//! whitened residuals and their Jacobian, the gradient check of Φ, and the start.

use super::observations::{invalid, on_grid, Channel, Observations};
use super::options::FitOptions;
use super::params::{Param, Route};
use super::predict::{self, Layout, Model, RouteSetup};
use super::report::Iteration;
use crate::check::{check_gradient, CheckOptions, CheckReport, EventSignature};
use crate::error::{positive, FerroError, Result};
use crate::physics::model::Drop;
use nalgebra::{DMatrix, DVector};

/// The problem as the optimiser sees it: Φ, the residuals and their Jacobian at the fit's
/// coordinates z (ln θ for positive parameters). Derivative-free optimisers call [`FitProblem::cost`].
pub struct FitProblem {
    pub(super) setup: RouteSetup,
    pub(super) layout: Layout,
    pub(super) t: Vec<f64>,
    pub(super) y: Option<Channel>,
    pub(super) v: Option<Channel>,
}

/// Model evaluations and probe-control counts, summed over a fit.
#[derive(Default)]
pub(super) struct Counters {
    pub(super) evaluations: u64,
    pub(super) halved: (u64, u64),
}

/// The whitened residuals r, their Jacobian S = dr/dz and the predictions at one point.
pub(super) struct Eval {
    pub(super) r: DVector<f64>,
    pub(super) s: DMatrix<f64>,
    pub(super) pred: predict::Prediction,
}

impl FitProblem {
    pub(super) fn residuals(&self, pred: &predict::Prediction) -> Vec<f64> {
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

    pub(super) fn eval(
        &self,
        z: &[f64],
        evaluations: &mut u64,
        halved: &mut (u64, u64),
    ) -> Result<Eval> {
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
    pub(super) fn check(
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
        let params = parse_params(&opts.params)?;
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
            on_grid(&obs.t, opts.dt, opts.route.name())?;
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
        for p in &params {
            let value = p.get(&base);
            if p.is_log() && !(value.is_finite() && value > 0.0) {
                return Err(invalid(
                    p.name(),
                    value,
                    "its start must be finite and > 0 (the fit works with its logarithm)".into(),
                ));
            }
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

/// The start of a fit: its evaluation, Φ there, the gradient check there and the record's
/// first entry.
pub(super) struct Start {
    pub(super) z: Vec<f64>,
    pub(super) eval: Eval,
    pub(super) cost: f64,
    pub(super) check: Option<CheckReport>,
    pub(super) check_evaluations: u64,
    pub(super) iteration: Iteration,
}

impl FitProblem {
    /// Evaluate the start (the guess's coordinates) and check Φ's gradient there.
    pub(super) fn begin(
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

/// The fitted parameters from their names: at least one, none twice, not zeta and restitution
/// together (one parameter in two forms).
fn parse_params(names: &[String]) -> Result<Vec<Param>> {
    let params: Vec<Param> = names
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
    Ok(params)
}
