//! The rules: a direction's verdict from its walk (the best probe, the Taylor remainder, its
//! classification) and the check's verdict and its words from the directions.

use super::curve::{judge, MARGIN};
use super::noise::Noise;
use super::report::{
    CheckOptions, DirectionReport, EventSignature, Guarantee, Kink, Probe, PROBE_NOISE_FACTOR,
};
use super::sides::{self, Sides};
use super::verdict::{Classification, Verdict};
use super::walk::{taylor_points, Hvp, Walked, Walker, COORDINATE_LIMIT};
use crate::error::Result;

/// A Taylor remainder `R(h)` counts only when it stands this many times above the noise it
/// can carry, `2σ/h` (f(x + h·d) and f(x) each off by up to σ).
pub(super) const NOISE_MARGIN: f64 = 10.0;
/// The Taylor slope is fitted on the remainders within this many decades above the
/// smallest h that clears the noise: the asymptotic end of the sweep.
pub(super) const TAYLOR_WINDOW_DECADES: f64 = 1.5;

/// Slope of log R(h) on log h in the asymptotic window (`None` when fewer than three
/// remainders clear the noise: nothing to fit, consistent with a right gradient).
///
/// A remainder *clears* when it stands above the noise and above `tol_floor` =
/// `tol·|g·d|`, the discrepancy the difference rung already accepts: a gradient that is
/// right to within `tol` (a finite-difference gradient such as MuJoCo's chained
/// `mjd_transitionFD`, off by ~1e-7) leaves a flat remainder below that floor.
///
/// The slope is read at the small end, just above the noise: remainders below
/// `NOISE_MARGIN·2σ/h` are round-off and are dropped, and the window is the
/// `TAYLOR_WINDOW_DECADES` above the smallest surviving h. The large-h end is not used: a
/// fixed-step contact rollout is piecewise smooth with kinks about `|v|·dt` apart, and
/// steps larger than that measure the map's average slope across the kinks, not its
/// derivative. Inside one smooth piece a linear contact law makes the map affine: the
/// remainder then drops straight into round-off, and no slope is fitted (`None`).
pub(super) fn taylor_window_slope(
    hs: &[f64],
    rs: &[f64],
    noise: f64,
    tol_floor: f64,
) -> Option<f64> {
    // `hs` runs from the largest h to the smallest.
    let clear = |h: f64, r: f64| {
        r.is_finite() && r > 0.0 && r > NOISE_MARGIN * 2.0 * noise / h && r > tol_floor
    };
    let last = (0..hs.len()).rev().find(|&i| clear(hs[i], rs[i]))?;
    // Below the window the remainder is noise. If it got there by falling faster than any
    // Taylor order allows (more than (h/h')³ in one step), the remainder *vanished*: the
    // first-order term is right to within the noise, and the points above were the kinks'
    // plateau, not the asymptotic regime. Nothing to fit.
    if let Some(next) = hs.get(last + 1) {
        if rs[last + 1] < rs[last] * libm::pow(next / hs[last], 3.0) {
            return None;
        }
    }
    let top = hs[last] * libm::pow(10.0, TAYLOR_WINDOW_DECADES) * (1.0 + 1e-9);
    let (x, y): (Vec<f64>, Vec<f64>) = hs
        .iter()
        .zip(rs)
        .filter(|(&h, &r)| h <= top && clear(h, r))
        .map(|(&h, &r)| (h, r))
        .unzip();
    if x.len() < 3 {
        return None;
    }
    crate::numeric::fit::fit_loglog(&x, &y)
        .ok()
        .map(|f| f.slope)
}

/// The directions' relative errors, largest and median (NaN without any), and their
/// largest absolute error.
pub(super) fn errors(reports: &[DirectionReport]) -> (f64, f64, f64) {
    let mut errs: Vec<f64> = reports.iter().filter_map(|r| r.rel_error).collect();
    errs.sort_by(f64::total_cmp);
    let max_error = errs.last().copied().unwrap_or(f64::NAN);
    let median_error = if errs.is_empty() {
        f64::NAN
    } else if errs.len() % 2 == 1 {
        errs[errs.len() / 2]
    } else {
        0.5 * (errs[errs.len() / 2 - 1] + errs[errs.len() / 2])
    };
    let max_abs_error = reports
        .iter()
        .filter_map(|r| r.abs_error)
        .fold(f64::NAN, f64::max);
    (max_error, median_error, max_abs_error)
}

/// One direction's report from its walk: classification, best probe, Taylor slope, verdict.
#[allow(clippy::too_many_arguments)]
pub(super) fn direction_report(
    walker: &mut Walker,
    hvp: &mut Option<&mut Hvp>,
    opts: &CheckOptions,
    (sig0, grazing_at_x, f0, sigma, confirm): (Option<&EventSignature>, bool, f64, f64, bool),
    label: String,
    p: Vec<f64>,
    claimed: f64,
    w: &Walked,
) -> Result<DirectionReport> {
    let c = &w.curve;
    let probes = probe_rows(w, claimed);
    let best = c
        .best
        .map(|b| (w.top + b, c.resolution[b].unwrap_or(f64::NAN)));
    let classification = classify(&probes, best.is_some(), grazing_at_x);
    // The Taylor remainder: on an explicit ladder (or a default one when H·d is claimed,
    // whose remainder must stay above round-off), else on the probes measured smooth.
    let second = hvp.as_mut().map(|h| h(&p)).transpose()?;
    let curvature = second.map(|hd| hd.iter().zip(&p).map(|(a, b)| a * b).sum::<f64>());
    let remainder = |fh: f64, h: f64| {
        let mut r = fh - f0 - h * claimed;
        if let Some(cv) = curvature {
            r -= 0.5 * h * h * cv;
        }
        r.abs() / h
    };
    let (hs, rs) = taylor_points(walker, opts, sig0, &p, w, curvature.is_some(), remainder);
    let taylor_slope = taylor_window_slope(
        &hs,
        &rs,
        sigma,
        // The second-order remainder checks H·d, which `tol` says nothing about.
        if curvature.is_some() {
            0.0
        } else {
            opts.tol * claimed.abs()
        },
    );
    let (best_eps, best_fd, e) = match best {
        Some((i, e)) => (
            Some(w.probes[&i].point.eps),
            Some(w.probes[&i].point.fd),
            Some(e),
        ),
        None => (None, None, None),
    };
    let (mut verdict, e, scatter, probe_noise, kink) = match (classification, best_eps, best_fd, e)
    {
        (Classification::Smooth, Some(eps), Some(d), Some(e)) => {
            let read = Reading {
                eps,
                fd: d,
                resolution: e,
                f0,
                sigma,
                tol: opts.tol,
                claimed,
                confirm,
            };
            at_probe_scale(walker, w, &p, &read)
        }
        _ => (Verdict::Refused, e, None, None, None),
    };
    let classification = if kink.is_some() {
        Classification::NonSmooth
    } else {
        classification
    };
    if curvature.is_some() && verdict != Verdict::Refused && taylor_slope.is_some_and(|s| s < 1.75)
    {
        verdict = Verdict::NotVerified;
    }
    let abs_error = best_fd.map(|d| (claimed - d).abs());
    Ok(DirectionReport {
        label,
        direction: p,
        claimed,
        probes,
        best_eps,
        best_fd,
        abs_error,
        rel_error: best_fd.zip(abs_error).map(|(d, a)| a / d.abs()),
        resolution: e,
        floor: e.map(|e| MARGIN * e),
        smooth_below: c.smooth_top.map(|t| w.probes[&(w.top + t)].point.eps),
        taylor_slope,
        taylor_second_order: curvature.is_some(),
        classification,
        verdict,
        certified: matches!(
            verdict,
            Verdict::Verified | Verdict::VerifiedWithinNoise | Verdict::VerifiedAbsolute
        ),
        kink,
        scatter,
        probe_noise,
    })
}

/// One direction's reading at its best probe.
struct Reading {
    eps: f64,
    fd: f64,
    resolution: f64,
    f0: f64,
    sigma: f64,
    tol: f64,
    claimed: f64,
    /// Whether a disagreement is confirmed at the probe scale (false once another direction
    /// has confirmed one: the check's verdict is then not-verified whatever this one reads).
    confirm: bool,
}

/// What the probe scale says about a direction: its verdict, resolution, the scatter of D
/// (when measured), f's noise at the probe scale read from it, and a kink at x.
type AtProbeScale = (Verdict, Option<f64>, Option<f64>, Option<f64>, Option<Kink>);

/// The direction's verdict, resolution, scatter, probe-scale noise and kink.
///
/// A reading that agrees and shows no kink stands as it is (no extra evaluations). Otherwise,
/// before a discrepancy or a kink is reported, the scatter s of D is measured at probe sizes
/// within ±30% of the probe ε_m it is read at (the kink's, else the best), kept within the run
/// measured smooth ([`sides::scatter`]): f's noise at that scale is σ_p = √2·ε_m·s, the
/// resolution at the best probe becomes at least
/// σ_p/(√2·ε), and the one-sided slopes are compared again with noise σ_p: a long float32
/// rollout's rounding error, correlated over the probe, is then noise, not a wrong gradient
/// or a kink. A kink still standing clear of that noise refuses the direction.
fn at_probe_scale(walker: &mut Walker, w: &Walked, p: &[f64], r: &Reading) -> AtProbeScale {
    let run: Vec<Sides> = w
        .curve
        .smooth_top
        .map(|t| {
            (w.top + t..=w.bottom)
                .filter_map(|i| w.probes.get(&i))
                .map(|raw| Sides {
                    eps: raw.point.eps,
                    fd: raw.point.fd,
                    f_plus: raw.f_plus,
                    f_minus: raw.f_minus,
                })
                .collect()
        })
        .unwrap_or_default();
    let kink = sides::kink(&run, r.f0, r.sigma, r.tol, r.claimed);
    let verdict = judge(r.claimed, r.fd, r.resolution, r.tol);
    if kink.is_none() && (verdict != Verdict::NotVerified || !r.confirm) {
        return (verdict, Some(r.resolution), None, None, None);
    }
    // Where it matters: at the kink's own probe, else at the best probe.
    let at = kink.as_ref().map_or((r.eps, r.fd), |k| {
        run.iter()
            .find(|s| s.eps == k.eps)
            .map_or((r.eps, r.fd), |s| (s.eps, s.fd))
    });
    let ceiling = run.first().map_or(at.0, |s| s.eps);
    let mut points = walker.jittered(p, at.0, ceiling);
    points.push(at);
    let scatter = sides::scatter(&points);
    let probe_sigma = scatter.map(|s| std::f64::consts::SQRT_2 * at.0 * s);
    let sigma = r.sigma.max(probe_sigma.unwrap_or(0.0));
    let e = r.resolution.max(sigma / (std::f64::consts::SQRT_2 * r.eps));
    let kink = kink.and_then(|_| sides::kink(&run, r.f0, sigma, r.tol, r.claimed));
    let verdict = if kink.is_some() {
        Verdict::Refused
    } else {
        judge(r.claimed, r.fd, e, r.tol)
    };
    (verdict, Some(e), scatter, probe_sigma, kink)
}

/// Every probe a direction's walk made, with its error against the claim `claimed` and,
/// inside the run the curve measured, its class and resolution.
pub(super) fn probe_rows(w: &Walked, claimed: f64) -> Vec<Probe> {
    let c = &w.curve;
    let mut probes = Vec::with_capacity(w.probes.len());
    for (&i, raw) in &w.probes {
        let in_run = i >= w.top && i <= w.bottom;
        let (class, resolution) = if in_run {
            (c.class[i - w.top], c.resolution[i - w.top])
        } else if raw.point.events != Classification::Smooth {
            (raw.point.events, None)
        } else {
            (Classification::Unmeasured, None)
        };
        let abs_error = (claimed - raw.point.fd).abs();
        probes.push(Probe {
            eps: raw.point.eps,
            fd: raw.point.fd,
            abs_error,
            rel_error: abs_error / raw.point.fd.abs(),
            resolution,
            classification: class,
        });
    }
    probes
}

/// A direction's class from its probes: grazing (at a probe or at x) before smooth (a best
/// probe was found) before an event crossing; too few probes to tell, else not smooth.
pub(super) fn classify(probes: &[Probe], has_best: bool, grazing_at_x: bool) -> Classification {
    let any = |k: Classification| probes.iter().any(|q| q.classification == k);
    if any(Classification::Grazing) || grazing_at_x {
        Classification::Grazing
    } else if has_best {
        Classification::Smooth
    } else if any(Classification::EventCrossing) {
        Classification::EventCrossing
    } else if probes.len() < 3 {
        Classification::Unmeasured
    } else {
        Classification::NonSmooth
    }
}

/// The check's verdict and why, from its directions.
pub(super) fn overall(
    reports: &[DirectionReport],
    noise: &Noise,
    opts: &CheckOptions,
    ladder: &[f64],
) -> (Verdict, String) {
    let smallest = ladder.last().copied().unwrap_or(0.0);
    refused_at_event(reports, opts, smallest)
        .or_else(|| refused_at_kink(reports))
        .or_else(|| not_verified(reports, opts))
        .or_else(|| refused_not_smooth(reports, smallest))
        .unwrap_or_else(|| verified(reports, noise, opts))
}

/// A number the report may lack, NaN where it does (as printed).
pub(super) fn or_nan(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::NAN)
}

/// First: a direction at a grazing event, or across an event down to the `smallest` probe.
pub(super) fn refused_at_event(
    reports: &[DirectionReport],
    opts: &CheckOptions,
    smallest: f64,
) -> Option<(Verdict, String)> {
    let r = reports.iter().find(|r| {
        matches!(
            r.classification,
            Classification::Grazing | Classification::EventCrossing
        )
    })?;
    let why = if r.classification == Classification::Grazing {
        format!(
            "{}: an event is slower than {:e}; its time-of-impact term is too large for any difference to certify",
            r.label, opts.graze_speed
        )
    } else {
        format!(
            "{}: the event sequence differs between +eps and -eps down to the smallest probe ({smallest:e}); smooth differences cannot certify a gradient across an event",
            r.label
        )
    };
    Some((Verdict::Refused, why))
}

/// Then: a direction whose one-sided slopes at x differ beyond noise (a kink exactly at x).
fn refused_at_kink(reports: &[DirectionReport]) -> Option<(Verdict, String)> {
    let (r, k) = reports
        .iter()
        .find_map(|r| r.kink.as_ref().map(|k| (r, k)))?;
    let equals = match k.claim_equals.as_str() {
        "forward" => "the forward slope",
        "backward" => "the backward slope",
        "average" => "their average",
        _ => "neither of them nor their average",
    };
    let why = format!(
        "{}: f has a kink at x: the one-sided slopes differ beyond noise (forward {:.6e}, backward {:.6e}, read at \
         eps {:.1e}, their difference known to {:.1e}); the claim g·p = {:.6e} equals {equals}. f has no derivative \
         there, so no claim can be certified (a subgradient is a choice, not the derivative): check at a point off \
         the kink",
        r.label, k.forward, k.backward, k.eps, k.noise, r.claimed
    );
    Some((Verdict::Refused, why))
}

/// Then: a direction whose claim the differences contradict (or whose H·d fails Taylor).
pub(super) fn not_verified(
    reports: &[DirectionReport],
    opts: &CheckOptions,
) -> Option<(Verdict, String)> {
    let g = or_nan;
    let r = reports.iter().find(|r| r.verdict == Verdict::NotVerified)?;
    let taylor = r
        .taylor_slope
        .map_or("not measurable".into(), |s| format!("{s:.2}"));
    let why = if r.taylor_second_order && r.abs_error.zip(r.floor).is_some_and(|(a, f)| a <= f) {
        format!(
            "{}: the claimed H·d fails the second-order Taylor test (slope {taylor}, expected 2)",
            r.label
        )
    } else {
        format!(
            "{}: g·p = {:.6e} but the differences give {:.6e} at eps {:.1e}: relative error {:.2e}, absolute {:.2e}, \
             beyond both the tolerance {:e} and the floor {:.2e} the differences' resolution allows (Taylor slope {taylor})",
            r.label,
            r.claimed,
            g(r.best_fd),
            g(r.best_eps),
            g(r.rel_error),
            g(r.abs_error),
            opts.tol,
            g(r.floor),
        )
    };
    Some((Verdict::NotVerified, why))
}

/// Then: a direction no probe measured smooth (too few probe sizes, or a kink or jump).
pub(super) fn refused_not_smooth(
    reports: &[DirectionReport],
    smallest: f64,
) -> Option<(Verdict, String)> {
    let r = reports.iter().find(|r| r.verdict == Verdict::Refused)?;
    let why = if r.classification == Classification::Unmeasured {
        format!(
            "{}: at least three probe sizes are needed to measure whether f is smooth (got {})",
            r.label,
            r.probes.len()
        )
    } else if let Some(p) = r
        .probes
        .iter()
        .rev()
        .find(|p| p.classification == Classification::NonSmooth)
        .filter(|_| {
            r.probes
                .last()
                .is_some_and(|p| p.classification == Classification::Unmeasured)
        })
    {
        format!(
            "{}: the probes up to {:.1e} straddle a kink or jump, and the ladder has fewer than three probe sizes \
             below it, too few to measure smoothness there; pass a finer `eps` ladder (the default is half a \
             decade apart)",
            r.label, p.eps
        )
    } else {
        format!(
            "{}: no probe down to {smallest:e} was measured smooth: the difference quotients disagree beyond noise \
             and the eps² model at every size walked (a kink or jump of f at x)",
            r.label
        )
    };
    Some((Verdict::Refused, why))
}

/// Otherwise verified: within evaluation noise, in absolute terms only, or plainly.
pub(super) fn verified(
    reports: &[DirectionReport],
    noise: &Noise,
    opts: &CheckOptions,
) -> (Verdict, String) {
    let g = or_nan;
    let smooth_below = reports
        .iter()
        .filter_map(|r| r.smooth_below)
        .fold(f64::INFINITY, f64::min);
    let noise_words = format!(
        "f's evaluations wander by σ = {:.1e} ({:.1e} of |f|, likely {})",
        noise.sigma, noise.relative, noise.cause
    );
    let worst = |v: Verdict| {
        reports
            .iter()
            .filter(|r| r.verdict == v)
            .max_by(|a, b| g(a.rel_error).total_cmp(&g(b.rel_error)))
    };
    let absolute: Vec<&str> = reports
        .iter()
        .filter(|r| r.verdict == Verdict::VerifiedAbsolute)
        .map(|r| r.label.as_str())
        .collect();
    if let Some(r) = worst(Verdict::VerifiedWithinNoise) {
        let floor_rel = g(r.floor) / g(r.best_fd).abs();
        let noise_words = match r.probe_noise.filter(|&ps| ps > PROBE_NOISE_FACTOR * noise.sigma) {
            Some(ps) => format!(
                "{noise_words}; at the probe scale, read from how the differences scatter, f wanders by σ = {ps:.1e} \
                 ({:.1e} of |f|): rounding error correlated over the probe, as in a long float32 rollout, which the \
                 stencils' tiny steps do not see",
                ps / noise.f_scale
            ),
            None => noise_words,
        };
        return (
            Verdict::VerifiedWithinNoise,
            format!(
                "verified within evaluation noise: {noise_words}; central differences then resolve g·p no better than \
                 a floor of {floor_rel:.1e} (relative), coarser than the tolerance {:e}; the largest discrepancy, \
                 {:.2e} relative ({}), is within that floor (probes measured smooth up to {smooth_below:.1e})",
                opts.tol,
                g(r.rel_error),
                r.label
            ),
        );
    }
    if absolute.len() == reports.len() {
        let r = &reports[0];
        return (
            Verdict::VerifiedAbsolute,
            format!(
                "verified in absolute terms only: in every direction the derivative is below what differences resolve here \
                 (e.g. {}: |differences| = {:.1e} within the floor {:.1e}), and the claim agrees to that floor; its relative \
                 accuracy is not measured ({noise_words}). Check away from a stationary point, or with a more precise f",
                r.label,
                g(r.best_fd).abs(),
                g(r.floor)
            ),
        );
    }
    let resolution = reports
        .iter()
        .filter(|r| r.verdict == Verdict::Verified)
        .map(|r| g(r.resolution) / g(r.best_fd).abs())
        .fold(0.0, f64::max);
    let mut why = format!(
        "all {} directions agree: largest relative error {:.1e} (tolerance {:e}; the differences resolve each g·p \
         to {resolution:.1e} or better); probes measured smooth up to {smooth_below:.1e}",
        reports.len(),
        reports
            .iter()
            .filter(|r| r.verdict == Verdict::Verified)
            .filter_map(|r| r.rel_error)
            .fold(0.0, f64::max),
        opts.tol
    );
    if !absolute.is_empty() {
        why += &format!(
            "; along {} the derivative is below resolution and agrees in absolute terms only",
            absolute.join(", ")
        );
    }
    (Verdict::Verified, why)
}

/// The miss probability a guarantee is stated at.
pub const GUARANTEE_BETA: f64 = 0.01;

/// P(|u₁| ≤ t) for u uniform on the unit sphere of Rⁿ: u₁² ~ Beta(1/2, (n-1)/2).
fn within(t: f64, n: usize) -> f64 {
    if t >= 1.0 {
        1.0
    } else if n < 2 {
        0.0
    } else {
        crate::numeric::dist::incomplete_beta(0.5, 0.5 * (n as f64 - 1.0), t * t)
    }
}

/// What the random directions guarantee (see [`Guarantee`]): with τ the largest threshold a
/// random direction's discrepancy had to pass, max(floor, `tol`·|D|), an error e misses every
/// one of the m directions with probability at most P(|u₁| ≤ τ/|e|)^m. None without random
/// directions measured smooth or without a gradient norm.
pub(super) fn guarantee(
    reports: &[DirectionReport],
    n: usize,
    g_norm: f64,
    coordinates: bool,
    tol: f64,
) -> Option<Guarantee> {
    let thresholds: Vec<f64> = reports
        .iter()
        .filter(|r| r.label.starts_with("random"))
        .filter_map(|r| Some(r.floor?.max(tol * r.best_fd?.abs())))
        .collect();
    let m = thresholds.len();
    if m == 0 || !(g_norm > 0.0) || !g_norm.is_finite() {
        return None;
    }
    let tau = thresholds.iter().copied().fold(0.0, f64::max);
    // t with P(|u₁| ≤ t)^m = β, by bisection.
    let q = libm::pow(GUARANTEE_BETA, 1.0 / m as f64);
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if within(mid, n) < q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let delta = if lo > 0.0 {
        tau / (lo * g_norm)
    } else {
        f64::INFINITY
    };
    let beta_at_one_percent = libm::pow(within(tau / (0.01 * g_norm), n), m as f64);
    Some(Guarantee {
        directions: m,
        dimension: n,
        delta,
        beta: GUARANTEE_BETA,
        beta_at_one_percent,
        coordinates,
    })
}

/// The guarantee in words, for `why` when only random directions were probed.
pub(super) fn guarantee_words(g: &Guarantee, opts: &CheckOptions) -> String {
    let reason = if opts.coordinates {
        format!(
            "n = {} is above {COORDINATE_LIMIT} coordinates",
            g.dimension
        )
    } else {
        "coordinates=False".into()
    };
    format!(
        ". Random directions only ({reason}): a gradient whose error is at least {:.1e} of |g| in norm reads \
         not-verified with probability at least {:.0}% over the draw of the {} directions (an error of 1% of |g|: \
         at least {:.4}%)",
        g.delta,
        100.0 * (1.0 - g.beta),
        g.directions,
        100.0 * (1.0 - g.beta_at_one_percent)
    )
}
