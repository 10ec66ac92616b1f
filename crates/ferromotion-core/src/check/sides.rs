//! Two readings a central difference alone cannot make.
//!
//! - **A kink exactly at x.** `D(ε) = (f(x + ε·p) - f(x - ε·p)) / 2ε` of f = |t| at t = 0 is 0
//!   at every ε: the symmetric difference averages the two one-sided slopes and the probe curve
//!   looks perfectly smooth. The one-sided quotients do not: their difference
//!   `a(ε) = (f(x + ε·p) + f(x - ε·p) - 2 f(x)) / ε` is `f''·ε` (falling with ε) where f is C¹,
//!   and tends to the jump of the slope `s₊ - s₋` (staying put) at a kink. [`kink`] reads it on
//!   the probes measured smooth, with f(x) already known: no extra evaluations.
//! - **The scatter of D at the probe scale.** The noise stencils measure σ over a step of 1e-6;
//!   a long float32 rollout's rounding error is correlated over much larger steps, so σ/ε
//!   under-states how far D wanders at the probe the verdict is read at. [`scatter`] reads it
//!   from D itself at probe sizes within ±30% of that probe, the ε² trend fitted out.

use super::report::Kink;

/// One probe as the one-sided reading sees it: its size, central difference and both sides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sides {
    /// Probe size.
    pub eps: f64,
    /// Central difference.
    pub fd: f64,
    /// f(x + ε·p).
    pub f_plus: f64,
    /// f(x - ε·p).
    pub f_minus: f64,
}

/// A kink must stand this many noise widths above noise.
const KINK_MARGIN: f64 = 3.0;
/// The larger probe of a pair is at least this many times the smaller one.
const PAIR_RATIO: f64 = 2.0;

/// The kink at x the one-sided quotients show on `probes` (largest first, all measured smooth),
/// or None where f is C¹ there within noise. `sigma` is f's noise (at the probe scale when it
/// was measured there); `claimed` is g·p.
///
/// A pair of probes ε₁ > ε₂ (ε₂ ≤ ε₁/2) shows a kink when a(ε₂) stands clear of its noise
/// `√6·σ/ε₂`, has a(ε₁)'s sign, and has fallen by less than √(ε₂/ε₁) from it after
/// both are given their noise in the direction that favours smoothness (C¹: a falls like ε or
/// faster; a kink: a stays), while `S = a·ε` has fallen by more than √(ε₂/ε₁) (a kink: S falls
/// like ε; an error in f(x) alone, common to every probe: S stays), the slope jump `c` the
/// pair implies under `a = c + k·ε` exceeds `tol`·|D|, and a third probe confirms it: through
/// the three, `S = b + c·ε + k·ε²` with f(x)'s error b left free still shows c clear of noise,
/// with its sign. The smallest such ε₂ is reported.
pub fn kink(probes: &[Sides], f0: f64, sigma: f64, tol: f64, claimed: f64) -> Option<Kink> {
    let usable: Vec<(Sides, f64, f64)> = probes
        .iter()
        .filter(|s| s.fd.is_finite() && s.f_plus.is_finite() && s.f_minus.is_finite())
        .map(|s| {
            let a = (s.f_plus + s.f_minus - 2.0 * f0) / s.eps;
            let noise = libm::sqrt(6.0) * sigma / s.eps;
            (*s, a, noise)
        })
        .collect();
    for j in (0..usable.len()).rev() {
        let (s2, a2, n2) = usable[j];
        // The nearest larger probe at least PAIR_RATIO times larger.
        let Some(i) = (0..j)
            .rev()
            .find(|&i| usable[i].0.eps >= PAIR_RATIO * s2.eps)
        else {
            continue;
        };
        let (s1, a1, n1) = usable[i];
        let r = s2.eps / s1.eps;
        let clear = a2.abs() > KINK_MARGIN * n2 && a1.signum() == a2.signum();
        let stays = a2.abs() - KINK_MARGIN * n2 > libm::sqrt(r) * (a1.abs() + KINK_MARGIN * n1);
        // The sum S(ε) = a·ε = f(x + ε·p) + f(x - ε·p) - 2 f(x) must fall with ε as a kink's
        // c·ε does; an error b in f(x) itself is the same at every ε (S stays at b, a grows as
        // b/ε and 'stays' holds trivially), as in a long float32 rollout whose rounding error
        // is correlated over the probes: such an S is not a kink.
        let s_noise = KINK_MARGIN * libm::sqrt(6.0) * sigma;
        let falls = a2.abs() * s2.eps + s_noise < libm::sqrt(r) * (a1.abs() * s1.eps - s_noise);
        let c = (a2 * s1.eps - a1 * s2.eps) / (s1.eps - s2.eps);
        // A third probe, the next one up (or down) at least PAIR_RATIO apart: through the three,
        // S = b + c·ε + k·ε² with f(x)'s error b and the curvature k left free must still show c.
        let third = (0..i)
            .rev()
            .find(|&h| usable[h].0.eps >= PAIR_RATIO * s1.eps)
            .or_else(|| (j + 1..usable.len()).find(|&l| PAIR_RATIO * usable[l].0.eps <= s2.eps));
        let confirmed = third.is_none_or(|t| {
            let at = |k: usize| (usable[k].0.eps, usable[k].1 * usable[k].0.eps);
            let (c3, noise3) = jump_of_three([at(t), at(i), at(j)], sigma);
            c3.abs() > KINK_MARGIN * noise3 && c3.signum() == c.signum()
        });
        if clear && stays && falls && confirmed && c.abs() > tol * s2.fd.abs() {
            let noise = libm::hypot(s1.eps * n2, s2.eps * n1) / (s1.eps - s2.eps);
            let (forward, backward) = (s2.fd + 0.5 * c, s2.fd - 0.5 * c);
            return Some(Kink {
                eps: s2.eps,
                forward,
                backward,
                noise,
                claim_equals: claim_equals(claimed, forward, backward, noise).into(),
            });
        }
    }
    None
}

/// The slope jump c of `S(ε) = b + c·ε + k·ε²` through three probes `(ε, S)` (b, an error of
/// f(x) shared by every probe, and the curvature k left free: c is the linear coefficient of
/// the interpolating quadratic), and its noise when f's noise is `sigma` (√6·σ per S).
fn jump_of_three(t: [(f64, f64); 3], sigma: f64) -> (f64, f64) {
    let (mut c, mut w2) = (0.0, 0.0);
    for i in 0..3 {
        let (ei, si) = t[i];
        let (ej, ek) = (t[(i + 1) % 3].0, t[(i + 2) % 3].0);
        let w = -(ej + ek) / ((ei - ej) * (ei - ek));
        c += w * si;
        w2 += w * w;
    }
    (c, libm::sqrt(6.0 * w2) * sigma)
}

/// Which one-sided slope (or their average) `claimed` equals: the nearest, when it is within
/// `KINK_MARGIN` noise widths or 1% of the slope jump.
fn claim_equals(claimed: f64, forward: f64, backward: f64, noise: f64) -> &'static str {
    let within = (KINK_MARGIN * noise).max(0.01 * (forward - backward).abs());
    [
        ("forward", forward),
        ("backward", backward),
        ("average", 0.5 * (forward + backward)),
    ]
    .into_iter()
    .map(|(name, v)| (name, (claimed - v).abs()))
    .filter(|(_, d)| *d <= within)
    .min_by(|a, b| a.1.total_cmp(&b.1))
    .map_or("neither", |(name, _)| name)
}

/// The scatter of D over `points` (ε, D(ε)) taken within ±30% of one probe: the standard
/// deviation of the residuals of a least-squares fit `D = d₀ + b·ε²` (the truncation trend),
/// None with fewer than four finite points.
pub fn scatter(points: &[(f64, f64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|(e, d)| e.is_finite() && d.is_finite())
        .map(|&(e, d)| (e * e, d))
        .collect();
    let m = pts.len();
    if m < 4 {
        return None;
    }
    let mean = |f: &dyn Fn(&(f64, f64)) -> f64| pts.iter().map(f).sum::<f64>() / m as f64;
    let (mx, my) = (mean(&|p| p.0), mean(&|p| p.1));
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let rss: f64 = pts
        .iter()
        .map(|p| {
            let r = p.1 - my - b * (p.0 - mx);
            r * r
        })
        .sum();
    Some(libm::sqrt(rss / (m - 2) as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sides(f: impl Fn(f64) -> f64, eps: &[f64]) -> Vec<Sides> {
        eps.iter()
            .map(|&e| Sides {
                eps: e,
                fd: (f(e) - f(-e)) / (2.0 * e),
                f_plus: f(e),
                f_minus: f(-e),
            })
            .collect()
    }

    const LADDER: [f64; 4] = [1e-3, 3.16e-4, 1e-4, 3.16e-5];

    #[test]
    fn a_kink_at_x_names_both_slopes_and_a_c1_point_has_none() {
        let relu = |t: f64| t.max(0.0);
        let k = kink(&sides(relu, &LADDER), 0.0, 1e-17, 1e-6, 0.0).unwrap();
        assert!(
            (k.forward - 1.0).abs() < 1e-9 && k.backward.abs() < 1e-9,
            "{k:?}"
        );
        assert_eq!(k.claim_equals, "backward");
        let k = kink(&sides(relu, &LADDER), 0.0, 1e-17, 1e-6, 0.5).unwrap();
        assert_eq!(k.claim_equals, "average");
        let k = kink(&sides(relu, &LADDER), 0.0, 1e-17, 1e-6, 0.7).unwrap();
        assert_eq!(k.claim_equals, "neither");
        // t|t| (C¹ at 0), t⁴ (every quotient pair falls like ε³), a kink plus curvature.
        assert!(kink(&sides(|t| t * t.abs(), &LADDER), 0.0, 1e-17, 1e-6, 0.0).is_none());
        assert!(kink(&sides(|t| t.powi(4), &LADDER), 0.0, 1e-17, 1e-6, 0.0).is_none());
        let k = kink(
            &sides(|t| t.abs() + 50.0 * t * t, &LADDER),
            0.0,
            1e-17,
            1e-6,
            0.0,
        )
        .unwrap();
        assert!(
            (k.forward - 1.0).abs() < 1e-6 && (k.backward + 1.0).abs() < 1e-6,
            "{k:?}"
        );
    }

    #[test]
    fn an_error_in_f_at_x_alone_is_no_kink_and_a_kink_beside_it_still_is() {
        // f(x) read low by b while f(x ± ε·p) are exact: S(ε) = b + f''·ε² stays at b, so
        // a = S/ε grows like b/ε at every smaller probe (what a float32 rollout's rounding
        // error, correlated over the probes, does to the one-sided quotients).
        let b = 1e-7;
        let smooth = |t: f64| 2.0 * t + 1.5 * t * t;
        assert!(kink(&sides(smooth, &LADDER), -b, 1e-9, 1e-6, 2.0).is_none());
        // The same offset beside a true kink (slopes 1 and 3): S = 2·ε + b still falls with ε.
        let kinked = |t: f64| if t < 0.0 { t } else { 3.0 * t };
        let k = kink(&sides(kinked, &LADDER), -b, 1e-9, 1e-6, 2.0).unwrap();
        assert!(
            (k.forward - 3.0).abs() < 1e-2 && (k.backward - 1.0).abs() < 1e-2,
            "{k:?}"
        );
    }

    #[test]
    fn the_scatter_of_a_smooth_trend_is_nil_and_alternating_noise_is_found() {
        let trend: Vec<(f64, f64)> = [0.7, 0.85, 1.0, 1.15, 1.3]
            .iter()
            .map(|j| (j * 1e-3, 2.0 + 5.0 * (j * 1e-3) * (j * 1e-3)))
            .collect();
        assert!(scatter(&trend).unwrap() < 1e-12);
        let noisy: Vec<(f64, f64)> = trend
            .iter()
            .enumerate()
            .map(|(i, &(e, d))| (e, d + if i % 2 == 0 { 1e-3 } else { -1e-3 }))
            .collect();
        let s = scatter(&noisy).unwrap();
        assert!(s > 5e-4 && s < 2e-3, "{s}");
        assert!(scatter(&trend[..3]).is_none());
    }
}
