//! The entry point: [`check_gradient`] validates its arguments, measures the noise, walks
//! every direction and applies the rules.

use super::report::{CheckOptions, CheckReport};
use super::rules::{direction_report, errors, overall};
use super::walk::{directions, first_rung, measure_noise, walk, Events, Hvp, Objective, Walker};
use crate::error::{positive, FerroError, Result};

/// Check a claimed gradient `grad` of `f` at `x` (see the module docs). `events`, when
/// given, reports the event sequence at a point; `hvp`, when given, claims H·d.
pub fn check_gradient(
    f: &mut Objective,
    mut events: Option<&mut Events>,
    mut hvp: Option<&mut Hvp>,
    x: &[f64],
    grad: &[f64],
    opts: &CheckOptions,
) -> Result<CheckReport> {
    let scale = validated(x, grad, opts)?;
    let f0 = f(x)?;
    if !f0.is_finite() {
        return Err(FerroError::NonFinite {
            what: "objective at x",
            detail: format!("f(x) = {f0}: the point itself must be evaluable"),
        });
    }
    let mut evaluations = 1u64;
    let sig0 = match events.as_mut() {
        Some(ev) => Some(ev(x)?),
        None => None,
    };
    let dirs = directions(opts, &scale);
    let stencil_dirs: Vec<&[f64]> = dirs.iter().take(2).map(|(_, d)| d.as_slice()).collect();
    let noise = measure_noise(f, x, f0, &stencil_dirs, &mut evaluations);
    let sigma = noise.sigma;
    let grazing_at_x = sig0
        .as_ref()
        .is_some_and(|s| s.min_event_speed.is_some_and(|v| v < opts.graze_speed));
    let mut ladder = opts.eps.clone();
    ladder.sort_by(|a, b| b.total_cmp(a));
    let mut start = first_rung(grad, &scale, &noise, &ladder);
    let mut walker = Walker {
        f,
        events,
        x,
        graze_speed: opts.graze_speed,
        evaluations,
    };
    let mut reports = Vec::with_capacity(dirs.len());
    for (label, p) in dirs {
        let claimed: f64 = grad.iter().zip(&p).map(|(a, b)| a * b).sum();
        let w = walk(
            &mut walker,
            &ladder,
            &p,
            claimed,
            sigma,
            opts.tol,
            start,
            !opts.full_sweep,
        );
        let report = direction_report(
            &mut walker,
            &mut hvp,
            opts,
            sig0.as_ref(),
            grazing_at_x,
            f0,
            sigma,
            label,
            p,
            claimed,
            &w,
        )?;
        if let Some(b) = w.curve.best {
            start = w.top + b;
        }
        reports.push(report);
    }
    let evaluations = walker.evaluations;
    let (max_error, median_error, max_abs_error) = errors(&reports);
    let (verdict, why) = overall(&reports, &noise, opts, &ladder);
    Ok(CheckReport {
        directions: reports,
        max_error,
        median_error,
        max_abs_error,
        verdict,
        why,
        evaluations,
        noise,
        options: opts.clone(),
    })
}

/// The checker's arguments refused as the core refuses any bad input (a gradient of x's
/// length, finite numbers, positive tolerances and probes, one scale per coordinate); the
/// scale per coordinate (1 without one).
fn validated(x: &[f64], grad: &[f64], opts: &CheckOptions) -> Result<Vec<f64>> {
    let n = x.len();
    if n == 0 || grad.len() != n {
        return Err(FerroError::InvalidParameter {
            name: "grad",
            value: grad.len() as f64,
            limit: format!("expected a gradient of length {n} (the length of x), non-empty"),
        });
    }
    for (&xi, &gi) in x.iter().zip(grad) {
        crate::error::finite("x", xi)?;
        crate::error::finite("grad", gi)?;
    }
    positive("tol", opts.tol)?;
    for &e in opts.eps.iter().chain(&opts.taylor_h) {
        positive("eps", e)?;
    }
    if opts.eps.is_empty() {
        return Err(FerroError::InvalidParameter {
            name: "eps",
            value: 0.0,
            limit: "needs at least one probe size (three to measure smoothness)".into(),
        });
    }
    match &opts.scale {
        None => Ok(vec![1.0; n]),
        Some(s) => {
            if s.len() != n {
                return Err(FerroError::InvalidParameter {
                    name: "scale",
                    value: s.len() as f64,
                    limit: format!("expected one typical magnitude per coordinate of x ({n})"),
                });
            }
            for &v in s {
                positive("scale", v)?;
            }
            Ok(s.clone())
        }
    }
}
