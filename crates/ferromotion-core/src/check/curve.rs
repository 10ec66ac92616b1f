//! Reading one direction's probe curve: where it is measured smooth, how well each central
//! difference resolves the derivative, and what that says about the claim.
//!
//! A central difference of a smooth f is `D(ε) = f'·d + a·ε² + (noise of size σ/ε)`. Three
//! neighbouring probes ε0 > ε1 > ε2 give two differences `A = D(ε0) - D(ε1)` and
//! `B = D(ε1) - D(ε2)`; the ε² model predicts `A = B·(ε0² - ε1²)/(ε1² - ε2²)`. The triple is
//! *measured smooth* when A agrees with that prediction to a factor 4, after allowing each
//! D its noise band `SMOOTH_BAND·σ/ε`. A kink or jump of f inside ±ε0 breaks the pattern
//! (the quotient straddling it reads an average slope, which changes like 1/ε, or
//! abruptly), so the triple is not smooth. A probe is used only when it and every smaller
//! probe down to the bottom of the walk are measured smooth: a contiguous run from the
//! bottom, whose top is the largest probe measured smooth.
//!
//! The *resolution* of probe k, `E = 2σ/ε + ρ·max(0, |A| - ν/2)`, is the differences'
//! own error estimate: the round-off branch rising as 1/ε plus the truncation read from the
//! next smaller probe (ρ = ε0²/(ε0² - ε1²) turns their difference into the truncation of D
//! at ε0; half of ν, the typical noise of that difference, is taken off). The best probe has the
//! smallest resolution.

use super::verdict::{Classification, Verdict};

/// Noise band of one central difference in the smoothness test, in units of σ/ε.
pub const SMOOTH_BAND: f64 = 3.0;
/// Round-off part of a probe's resolution, in units of σ/ε (a central difference of two
/// evaluations each off by σ is off by σ/(√2·ε) typically: 2 is about three of those).
pub const RESOLUTION_NOISE: f64 = 2.0;
/// A discrepancy must exceed this many resolutions to be called a disagreement.
pub const MARGIN: f64 = 3.0;
/// How far the ratio of neighbouring differences may stray from the ε² model's (either way).
pub const MODEL_FACTOR: f64 = 4.0;

/// One probe of the walk as the curve analysis sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Probe size.
    pub eps: f64,
    /// Central difference (NaN when an evaluation failed).
    pub fd: f64,
    /// What the objective's events (or a failed evaluation) said about the probe.
    pub events: Classification,
}

/// What the curve says.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// Per probe: Smooth, NonSmooth or Unmeasured (or the events' classification).
    pub class: Vec<Classification>,
    /// Per probe: the resolution E (None for the smallest probe and unusable ones).
    pub resolution: Vec<Option<f64>>,
    /// Per probe: the round-off part of E.
    pub noise_part: Vec<f64>,
    /// Index of the best probe (smallest resolution in the measured-smooth run).
    pub best: Option<usize>,
    /// Index of the top of the measured-smooth run (the largest probe measured smooth).
    pub smooth_top: Option<usize>,
    /// The smallest triple is noise-dominated: smaller probes can only see noise.
    pub bottom_in_noise: bool,
}

fn usable(p: &Point) -> bool {
    p.events == Classification::Smooth && p.fd.is_finite()
}

/// Whether the triple starting at `k` fits the ε² model within noise, and whether both of
/// its differences are within noise.
fn triple(points: &[Point], k: usize, sigma: f64) -> (bool, bool) {
    let [p0, p1, p2] = [points[k], points[k + 1], points[k + 2]];
    if !(usable(&p0) && usable(&p1) && usable(&p2)) {
        return (false, false);
    }
    let band = |e: f64| SMOOTH_BAND * sigma / e;
    let (a, b) = (p0.fd - p1.fd, p1.fd - p2.fd);
    let (band_a, band_b) = (band(p0.eps) + band(p1.eps), band(p1.eps) + band(p2.eps));
    let ratio = (p0.eps * p0.eps - p1.eps * p1.eps) / (p1.eps * p1.eps - p2.eps * p2.eps);
    let pred = b * ratio;
    let slack = (1.0 - 1.0 / MODEL_FACTOR) * a.abs().max(pred.abs());
    let fits = (a - pred).abs() <= band_a + ratio * band_b + slack;
    let in_noise = a.abs() <= band_a && b.abs() <= band_b;
    (fits || in_noise, in_noise)
}

/// Analyse a contiguous run of probes, largest first.
pub fn analyse(points: &[Point], sigma: f64) -> Curve {
    let n = points.len();
    let triples: Vec<(bool, bool)> = (0..n.saturating_sub(2))
        .map(|k| triple(points, k, sigma))
        .collect();
    // The measured-smooth run: contiguous from the smallest triple up.
    let mut smooth_top = None;
    for k in (0..triples.len()).rev() {
        if !triples[k].0 {
            break;
        }
        smooth_top = Some(k);
    }
    let noise_part: Vec<f64> = points
        .iter()
        .map(|p| RESOLUTION_NOISE * sigma / p.eps)
        .collect();
    let resolution: Vec<Option<f64>> = (0..n)
        .map(|k| {
            if k + 1 >= n || !usable(&points[k]) || !usable(&points[k + 1]) {
                return None;
            }
            let (e0, e1) = (points[k].eps, points[k + 1].eps);
            let diff = (points[k].fd - points[k + 1].fd).abs();
            let rho = e0 * e0 / (e0 * e0 - e1 * e1);
            // Less half the typical size of the difference's own noise (one standard
            // deviation): taking off more would hide a truncation the size of the noise, and
            // a difference that noise happened to shrink would under-state E.
            let typical = sigma * libm::sqrt(0.5 / (e0 * e0) + 0.5 / (e1 * e1));
            let truncation = rho * (diff - 0.5 * typical).max(0.0);
            Some(noise_part[k] + truncation)
        })
        .collect();
    let class = (0..n)
        .map(|k| {
            if points[k].events != Classification::Smooth {
                points[k].events
            } else if !points[k].fd.is_finite() {
                Classification::NonSmooth
            } else if smooth_top.is_some_and(|t| k >= t) {
                Classification::Smooth
            } else if k < triples.len() {
                if triples[k].0 {
                    Classification::Smooth
                } else {
                    Classification::NonSmooth
                }
            } else {
                Classification::Unmeasured
            }
        })
        .collect();
    let best = smooth_top.and_then(|t| {
        (t..n)
            .filter_map(|k| resolution[k].map(|e| (k, e)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(k, _)| k)
    });
    Curve {
        class,
        resolution,
        noise_part,
        best,
        smooth_top,
        bottom_in_noise: triples.last().is_some_and(|t| t.1),
    }
}

/// The verdict along one direction from the claim `claimed`, the best difference `fd` and
/// its resolution `e` (see the module docs of `check`).
pub fn judge(claimed: f64, fd: f64, e: f64, tol: f64) -> Verdict {
    let delta = (claimed - fd).abs();
    let resolvable = fd.abs() > MARGIN * e && fd != 0.0;
    if resolvable && delta <= tol * fd.abs() && e <= tol * fd.abs() {
        Verdict::Verified
    } else if delta <= MARGIN * e || (resolvable && delta <= tol * fd.abs()) {
        if resolvable {
            Verdict::VerifiedWithinNoise
        } else {
            Verdict::VerifiedAbsolute
        }
    } else {
        Verdict::NotVerified
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(f: impl Fn(f64) -> f64, eps: &[f64], sigma: f64) -> (Vec<Point>, Curve) {
        let pts: Vec<Point> = eps
            .iter()
            .map(|&e| Point {
                eps: e,
                fd: (f(e) - f(-e)) / (2.0 * e),
                events: Classification::Smooth,
            })
            .collect();
        let c = analyse(&pts, sigma);
        (pts, c)
    }

    fn ladder(top: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| top * libm::pow(10.0, -0.5 * i as f64))
            .collect()
    }

    #[test]
    fn a_smooth_function_is_measured_smooth_and_its_best_probe_resolves_the_slope() {
        let (pts, c) = curve(libm::sin, &ladder(1e-1, 12), 1e-16);
        assert_eq!(c.smooth_top, Some(0));
        let b = c.best.unwrap();
        let e = c.resolution[b].unwrap();
        // The estimate is honest: the true error is within it, and it is small.
        assert!(
            (pts[b].fd - 1.0).abs() <= e && e < 1e-9,
            "{} {e}",
            pts[b].fd
        );
        assert_eq!(judge(1.0, pts[b].fd, e, 1e-6), Verdict::Verified);
        assert_eq!(judge(-1.0, pts[b].fd, e, 1e-6), Verdict::NotVerified);
        assert_eq!(judge(1.01, pts[b].fd, e, 1e-6), Verdict::NotVerified);
    }

    #[test]
    fn a_kink_inside_the_larger_probes_is_found_and_they_are_not_used() {
        // |t - 3e-4| + t: flat left of the kink 3e-4 from x, slope 2 right of it; the
        // local slope at x is 0, the average across the kink 1.
        let f = |t: f64| (t - 3e-4).abs() + t;
        let (pts, c) = curve(f, &ladder(1e-1, 12), 1e-16);
        let top = c.smooth_top.unwrap();
        assert!(pts[top].eps < 3e-4, "smooth up to {}", pts[top].eps);
        assert!(c.class[..top].contains(&Classification::NonSmooth));
        let b = c.best.unwrap();
        assert!(pts[b].fd.abs() < 1e-9);
    }

    #[test]
    fn a_kink_at_x_leaves_nothing_measured_smooth() {
        // A kink a hair off x: every quotient straddles it and changes like 1/ε.
        let (_, c) = curve(|t: f64| (t - 1e-12).abs(), &ladder(1e-1, 12), 1e-16);
        assert_eq!(c.smooth_top, None, "{:?}", c.class);
    }

    #[test]
    fn below_resolution_the_verdict_is_absolute_and_within_noise_in_between() {
        assert_eq!(judge(1e-12, -1e-12, 1e-9, 1e-6), Verdict::VerifiedAbsolute);
        assert_eq!(
            judge(1.0 + 1e-3, 1.0, 1e-3, 1e-6),
            Verdict::VerifiedWithinNoise
        );
        assert_eq!(judge(1.05, 1.0, 1e-3, 1e-6), Verdict::NotVerified);
        assert_eq!(judge(1e-6, 0.0, 1e-9, 1e-6), Verdict::NotVerified);
    }
}
