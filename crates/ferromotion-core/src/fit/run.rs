//! [`fit`]: the phases in order (set up, start, minimise, identifiability, intervals,
//! check, report), and [`predictions`], the model a fit compares with the data.

use super::identifiability::Identifiability;
use super::intervals::intervals;
use super::observations::{invalid, on_grid, whitened, Observations};
use super::optimise::{after_local_minimum, levenberg_marquardt, Minimum};
use super::options::FitOptions;
use super::params::Route;
use super::predict::{self, Model, RouteSetup};
use super::problem::{Counters, FitProblem};
use super::report::{chi2_limit, FitReceipt, FitReport, Iteration, FIT_SCHEMA};
use super::template::{template, verdict};
use crate::error::{positive, Result};
use crate::lab::clock::Clock;
use crate::physics::model::Drop;

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
    if matches!(opts.route, Route::Fixed | Route::Corrected) {
        on_grid(t, opts.dt, opts.route.name())?;
    }
    let setup = RouteSetup {
        route: opts.route,
        dt: opts.dt,
        tolerance: opts.tolerance,
        probe: 1e-6,
    };
    predict::predict(&setup, &model, t)
}
