//! Seed 000's reporting template of a differentiable fit, filled in from the problem, the
//! options, the two gradient checks and the estimates.

use super::observations::Channel;
use super::options::FitOptions;
use super::params::{Param, Route};
use super::problem::FitProblem;
use super::report::{Estimate, Template, Term};
use crate::check::{CheckReport, Verdict};

/// A check's verdict, "not-run" without one.
pub(super) fn verdict(c: &Option<CheckReport>) -> String {
    c.as_ref()
        .map_or("not-run".to_string(), |r| r.verdict.to_string())
}

/// The template of this fit: objective, derivative route, tolerances, checks and reliability.
pub(super) fn template(
    problem: &FitProblem,
    opts: &FitOptions,
    start: &Option<CheckReport>,
    solution: &Option<CheckReport>,
    estimates: &[Estimate],
) -> Template {
    let route = opts.route;
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
    Template {
        objective: "Φ(θ) = ½ Σ_i [(ŷ(t_i) − y_i)/σ_y]² + [(v̂(t_i) − v_i)/σ_v]², masked entries left out of the sum and of the count".into(),
        units: "dimensionless (whitened residuals); y in m, v in m/s, t in s".into(),
        observations: observations_words(problem),
        parameterisation: estimates
            .iter()
            .map(|e| if e.log { format!("ln {}", e.name) } else { e.name.clone() })
            .collect::<Vec<_>>()
            .join(", "),
        derivative_method: route.derivative().into(),
        software: format!("ferromotion-core {}", env!("CARGO_PKG_VERSION")),
        integrator: route.integrator().into(),
        tolerances: tolerances(problem, opts),
        custom_derivative_rules: match route {
            Route::Fixed => "none (plain forward mode through the branch)".into(),
            _ => "saltation at contact switches; chain rule through ln θ; restitution ↔ zeta through the stiff-limit law e(zeta) and its derivative".into(),
        },
        check_directions: check_directions(problem, opts),
        epsilon_sweep: if opts.check { opts.check_options.eps.clone() } else { Vec::new() },
        errors: check_errors(start, solution),
        region_tested: format!("two points only, the start and the solution: {region}; the rest of the path is not checked"),
        event_treatment: format!(
            "{}; the checker classifies each probe by Φ's event sequence (events before every sample time) and never certifies across a change",
            route.event_treatment()
        ),
        same_path: "yes: the checks evaluate Φ through the same predictions the optimiser steps on".into(),
        optimiser: "Levenberg–Marquardt with Marquardt's diagonal scaling; a trial that leaves the model's domain (zeta ≥ 1, no impact before T, a refused route) counts as uphill".into(),
        reliability: reliability(route, derivative_class(start, solution)),
    }
}

/// The observations in words: the sample times' span and each channel's count, σ and masks.
fn observations_words(problem: &FitProblem) -> String {
    let chan = |c: &Option<Channel>, what: &str, unit: &str| match c {
        Some(c) => format!(
            "{} {what} (σ = {:e} {unit}, {} masked)",
            c.used.iter().filter(|&&u| u).count(),
            c.sigma,
            c.used.iter().filter(|&&u| !u).count()
        ),
        None => format!("no {what}"),
    };
    format!(
        "{} sample times from {} s to {} s; {}; {}",
        problem.t.len(),
        problem.t.first().copied().unwrap_or(0.0),
        problem.t.last().copied().unwrap_or(0.0),
        chan(&problem.y, "heights", "m"),
        chan(&problem.v, "velocities", "m/s")
    )
}

/// The tolerances and steps the route ran with (name, value).
fn tolerances(problem: &FitProblem, opts: &FitOptions) -> Vec<(String, f64)> {
    let route = opts.route;
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
    tolerances
}

/// Max and median normalized directional error of each check that ran.
fn check_errors(start: &Option<CheckReport>, solution: &Option<CheckReport>) -> Vec<(String, f64)> {
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
    errors
}

/// The reliability class of the route's prediction and Jacobian: the two checks' verdict when
/// they agree.
fn derivative_class(start: &Option<CheckReport>, solution: &Option<CheckReport>) -> &'static str {
    let class = |c: &Option<CheckReport>| match c.as_ref().map(|r| r.verdict) {
        Some(Verdict::Verified) => "smooth/verified",
        Some(Verdict::VerifiedWithinNoise) => "smooth/verified within evaluation noise",
        Some(Verdict::VerifiedAbsolute) => "smooth/verified in absolute terms only",
        Some(Verdict::NotVerified) => "smooth/unverified",
        Some(Verdict::Refused) => "piecewise-smooth/event-sensitive",
        None => "smooth/unverified",
    };
    match (
        start.as_ref().map(|r| r.verdict),
        solution.as_ref().map(|r| r.verdict),
    ) {
        (Some(a), Some(b)) if a == b => class(start),
        (Some(_), Some(_)) => "mixed: see the two checks",
        _ => "smooth/unverified",
    }
}

/// The gradient checks' directions, seed, Taylor steps and tolerance, in words.
fn check_directions(problem: &FitProblem, opts: &FitOptions) -> String {
    let co = &opts.check_options;
    if opts.check {
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
    }
}

/// The reliability table: one class per term of the objective.
fn reliability(route: Route, derivative_class: &str) -> Vec<Term> {
    vec![
        Term {
            term: "observation residual (ŷ − y)/σ".into(),
            class: "smooth/verified".into(),
        },
        Term {
            term: "parameter transform ln θ".into(),
            class: "smooth/verified".into(),
        },
        Term {
            term: format!("{} prediction and its Jacobian", route.name()),
            class: derivative_class.into(),
        },
        Term {
            term: "contact events".into(),
            class: match route {
                Route::Fixed => {
                    "piecewise-smooth/event-sensitive (jumps not differentiated)".into()
                }
                _ => "piecewise-smooth/event-sensitive (hybrid derivative)".into(),
            },
        },
        Term {
            term: "data preprocessing".into(),
            class: "fixed (outside the optimisation)".into(),
        },
    ]
}
