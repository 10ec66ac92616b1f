//! The entry point: [`check_gradient`] validates its arguments, measures the noise, walks
//! every direction and applies the rules. [`check_directions`] is the same check for any
//! claim of a directional derivative (the Jacobian check's, `jacobian.rs`).

use super::noise::Noise;
use super::report::{CheckOptions, CheckReport, DirectionReport, Guarantee, PROBE_NOISE_FACTOR};
use super::rules::{direction_report, errors, guarantee, guarantee_words, overall};
use super::verdict::Verdict;
use super::walk::{
    direction_counts, directions, first_rung, measure_noise, scaled_norm, walk, Events, Hvp,
    Objective, Raw, Walker, MAX_DIRECTION_NUMBERS,
};
use crate::error::{positive, FerroError, Result};
use std::collections::BTreeMap;

/// A claimed directional derivative: p ↦ the claim's g·p.
pub type Claim<'a> = dyn FnMut(&[f64]) -> Result<f64> + 'a;

/// Check a claimed gradient `grad` of `f` at `x` (see the module docs). `events`, when
/// given, reports the event sequence at a point; `hvp`, when given, claims H·d.
pub fn check_gradient(
    f: &mut Objective,
    events: Option<&mut Events>,
    hvp: Option<&mut Hvp>,
    x: &[f64],
    grad: &[f64],
    opts: &CheckOptions,
) -> Result<CheckReport> {
    let n = x.len();
    if n == 0 || grad.len() != n {
        return Err(FerroError::InvalidParameter {
            name: "grad",
            value: grad.len() as f64,
            limit: format!("expected a gradient of length {n} (the length of x), non-empty"),
        });
    }
    for &gi in grad {
        crate::error::finite("grad", gi)?;
    }
    let scale = validated(x, opts)?;
    let g_norm = scaled_norm(grad, &scale);
    let mut claim = |p: &[f64]| Ok(grad.iter().zip(p).map(|(a, b)| a * b).sum::<f64>());
    check_directions(f, events, hvp, x, &mut claim, g_norm, opts)
}

/// The check of any directional claim: `claim(p)` is the claimed derivative of f along p and
/// `g_norm` the claimed gradient's norm in the scaled metric (0 when unknown: the walk then
/// starts from f's scale and no guarantee is stated).
pub fn check_directions(
    f: &mut Objective,
    mut events: Option<&mut Events>,
    mut hvp: Option<&mut Hvp>,
    x: &[f64],
    claim: &mut Claim,
    g_norm: f64,
    opts: &CheckOptions,
) -> Result<CheckReport> {
    let scale = validated(x, opts)?;
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
    let mut start = first_rung(g_norm, &noise, &ladder);
    let mut walker = Walker {
        f,
        events,
        x,
        graze_speed: opts.graze_speed,
        evaluations,
    };
    let mut reports = Vec::with_capacity(dirs.len());
    // A direction already confirmed not-verified at the probe scale.
    let mut confirmed = false;
    for (label, p) in dirs {
        let claimed = claim(&p)?;
        let mut read =
            |walker: &mut Walker, sigma: f64, prior: BTreeMap<usize, Raw>| -> Result<_> {
                let w = walk(
                    walker,
                    &ladder,
                    &p,
                    claimed,
                    sigma,
                    opts.tol,
                    start,
                    !opts.full_sweep,
                    prior,
                );
                let common = (sig0.as_ref(), grazing_at_x, f0, sigma, !confirmed);
                let report = direction_report(
                    walker,
                    &mut hvp,
                    opts,
                    common,
                    label.clone(),
                    p.clone(),
                    claimed,
                    &w,
                )?;
                Ok((w, report))
            };
        let (mut w, mut report) = read(&mut walker, sigma, BTreeMap::new())?;
        // The scatter of D at the probe scale shows more noise than the stencils did (rounding
        // error correlated over the probe): read the direction again with that noise.
        if let Some(ps) = report
            .probe_noise
            .filter(|&ps| ps > PROBE_NOISE_FACTOR * sigma)
        {
            (w, report) = read(&mut walker, ps, w.probes)?;
            report.probe_noise = Some(report.probe_noise.unwrap_or(ps).max(ps));
        }
        confirmed |= report.verdict == Verdict::NotVerified && report.scatter.is_some();
        if let Some(b) = w.curve.best {
            start = w.top + b;
        }
        reports.push(report);
    }
    let (coordinates, _) = direction_counts(opts, x.len());
    let guarantee = guarantee(&reports, x.len(), g_norm, coordinates, opts.tol);
    Ok(finished(
        reports,
        noise,
        guarantee,
        opts,
        x.len(),
        walker.evaluations,
    ))
}

/// The report from the directions' reports: errors, the verdict and why by the rules, the
/// guarantee (said in `why` when only random directions were probed in n dimensions).
pub(super) fn finished(
    reports: Vec<DirectionReport>,
    noise: Noise,
    guarantee: Option<Guarantee>,
    opts: &CheckOptions,
    n: usize,
    evaluations: u64,
) -> CheckReport {
    let mut ladder = opts.eps.clone();
    ladder.sort_by(|a, b| b.total_cmp(a));
    let (max_error, median_error, max_abs_error) = errors(&reports);
    let (verdict, mut why) = overall(&reports, &noise, opts, &ladder);
    if let (Some(g), (false, _)) = (&guarantee, direction_counts(opts, n)) {
        why += &guarantee_words(g, opts);
    }
    CheckReport {
        directions: reports,
        max_error,
        median_error,
        max_abs_error,
        verdict,
        why,
        evaluations,
        noise,
        guarantee,
        options: opts.clone(),
    }
}

/// The checker's arguments refused as the core refuses any bad input (a non-empty finite x,
/// positive tolerances and probes, one scale per coordinate, directions that fit in memory);
/// the scale per coordinate (1 without one).
pub(super) fn validated(x: &[f64], opts: &CheckOptions) -> Result<Vec<f64>> {
    let n = x.len();
    if n == 0 {
        return Err(FerroError::InvalidParameter {
            name: "x",
            value: 0.0,
            limit: "expected a point with at least one coordinate".into(),
        });
    }
    for &xi in x {
        crate::error::finite("x", xi)?;
    }
    let (coordinates, random) = direction_counts(opts, n);
    let numbers = (random + if coordinates { n } else { 0 }) as f64 * n as f64;
    if numbers > MAX_DIRECTION_NUMBERS {
        return Err(FerroError::InvalidParameter {
            name: "directions",
            value: random as f64,
            limit: format!(
                "{random} random directions in n = {n} dimensions would hold {numbers:.1e} numbers, \
                 more than the {MAX_DIRECTION_NUMBERS:.0e} a check keeps in memory: ask for at most {} \
                 (a handful already states a guarantee, see docs/checking.md)",
                (MAX_DIRECTION_NUMBERS / n as f64) as usize
            ),
        });
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
