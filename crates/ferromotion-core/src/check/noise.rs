//! How far an evaluation of f wanders at a fixed point: measured, never assumed.
//!
//! f is evaluated on a tiny stencil `x + (c + i)·h·p`, i = -3..3, along a direction p,
//! centred `c = ±OFFSET` steps to one side of x (a kink or jump of f at x itself, which the
//! probes are there to find, must not read as noise). Over a
//! step that small any smooth trend is a low-order polynomial, which differences of
//! order k >= 3 remove; what is left is evaluation noise (round-off, float32 arithmetic,
//! an iterative solver's tolerance, nondeterminism). For independent noise of standard
//! deviation σ the k-th differences have variance `σ²·(2k)!/(k!)²`, so each order gives an
//! estimate of σ (the idea of Moré & Wild's ECnoise); the median over orders 3..6 is kept.
//! Two stencils along two directions are measured; when they disagree by more than a
//! factor 4 the smaller is kept (a stencil that straddles a kink of f reads the kink as
//! noise), otherwise their geometric mean. A stencil whose values mostly repeat exactly
//! (f quantised coarser than h, e.g. float32 inputs of size 1e6) is re-measured with a
//! step 100 times larger, twice at most.

use serde::Serialize;

/// What the check measured about f's evaluation noise near x.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Noise {
    /// σ: how far one evaluation of f wanders, in f's units (standard deviation).
    pub sigma: f64,
    /// |f| near x (the largest |f| on the stencils), the scale σ is compared with.
    pub f_scale: f64,
    /// σ / |f| (NaN when f vanishes on the stencils).
    pub relative: f64,
    /// The stencil step, in units of the (scaled) direction.
    pub step: f64,
    /// Objective evaluations the measurement spent.
    pub evaluations: u64,
    /// The likely cause, in words.
    pub cause: String,
}

/// Few units of round-off, relative to |f|: the floor of σ, so that a stencil whose
/// differences happen to round identically still has a noise.
pub const ROUND_OFF: f64 = 4.0 * f64::EPSILON;
/// Stencil step of the first attempt (in units of the scaled direction).
pub const FIRST_STEP: f64 = 1e-6;
/// Half-width of the stencil: points at (c + i)·h for i = -HALF..HALF.
pub const HALF: i32 = 3;
/// Distance of the stencil's centre from x, in steps.
pub const OFFSET: f64 = 10.0;

/// `(2k)! / (k!)²`: the variance of the k-th difference of unit white noise.
fn central_binomial(k: usize) -> f64 {
    (1..=k).fold(1.0, |acc, i| acc * (k + i) as f64 / i as f64)
}

/// σ estimated from one stencil's values (in order along the direction), or None when a
/// value is not finite.
pub fn stencil_sigma(values: &[f64]) -> Option<f64> {
    if values.iter().any(|v| !v.is_finite()) || values.len() < 7 {
        return None;
    }
    let mut diff = values.to_vec();
    let mut est = Vec::new();
    for k in 1..=6 {
        diff = diff.windows(2).map(|w| w[1] - w[0]).collect();
        if k >= 3 && !diff.is_empty() {
            let mean_sq = diff.iter().map(|d| d * d).sum::<f64>() / diff.len() as f64;
            est.push(libm::sqrt(mean_sq / central_binomial(k)));
        }
    }
    est.sort_by(f64::total_cmp);
    let m = est.len();
    Some(if m % 2 == 1 {
        est[m / 2]
    } else {
        0.5 * (est[m / 2 - 1] + est[m / 2])
    })
}

/// Whether a stencil's values mostly repeat exactly (f is quantised coarser than h).
pub fn quantised(values: &[f64]) -> bool {
    values.windows(2).filter(|w| w[0] == w[1]).count() * 2 >= values.len()
}

/// Combine the stencils' estimates: the smaller when they disagree by more than 4x (one
/// straddled a kink), else their geometric mean.
pub fn combine(estimates: &[f64]) -> Option<f64> {
    let lo = estimates.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = estimates.iter().copied().fold(0.0, f64::max);
    if !lo.is_finite() {
        return None;
    }
    Some(if hi > 4.0 * lo {
        lo
    } else {
        libm::exp(
            estimates
                .iter()
                .map(|e| libm::log(e.max(f64::MIN_POSITIVE)))
                .sum::<f64>()
                / estimates.len() as f64,
        )
    })
}

/// The likely cause of a relative noise level, in words.
pub fn cause(relative: f64) -> String {
    if !relative.is_finite() {
        "f vanishes near x: no relative noise level".into()
    } else if relative < 2e-13 {
        "float64 round-off".into()
    } else if relative < 1e-9 {
        "round-off accumulated over a long float64 computation, or an iterative solver's tolerance"
            .into()
    } else if relative <= 2e-5 {
        "float32 arithmetic (float32's unit round-off is 6.0e-8)".into()
    } else {
        "more than float32 round-off: reduced precision (float16, bfloat16), an iterative solver's tolerance, or nondeterministic evaluation".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_polynomial_of_degree_two_has_no_noise_and_a_sawtooth_of_known_size_is_found() {
        let smooth: Vec<f64> = (-3..=3)
            .map(|i| 1.0 + 0.5 * i as f64 + 0.25 * (i * i) as f64)
            .collect();
        assert_eq!(stencil_sigma(&smooth), Some(0.0));
        // Alternating ±s is the worst-case noise pattern: every order sees it.
        let s = 1e-9;
        let saw: Vec<f64> = (-3..=3)
            .map(|i| 1.0 + if i % 2 == 0 { s } else { -s })
            .collect();
        let sigma = stencil_sigma(&saw).unwrap();
        assert!(sigma > 0.5 * s && sigma < 3.0 * s, "{sigma}");
        assert_eq!(central_binomial(3), 20.0);
        assert!(quantised(&[1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0]));
        assert!(!quantised(&smooth));
        assert_eq!(combine(&[1.0, 100.0]), Some(1.0));
        assert!((combine(&[1.0, 4.0]).unwrap() - 2.0).abs() < 1e-12);
    }
}
