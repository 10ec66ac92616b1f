//! How far an evaluation of f wanders at a fixed point: measured, never assumed.
//!
//! f is evaluated on a tiny stencil `x + (c + i)·h·p`, i = -3..3, along a direction p,
//! centred `c = ±OFFSET` steps to one side of x (a kink or jump of f at x itself, which the
//! probes are there to find, must not read as noise). Over a step that small any smooth
//! trend is a low-order polynomial, which third differences remove; what is left is
//! evaluation noise (round-off, float32 arithmetic, an iterative solver's tolerance,
//! nondeterminism). For independent noise of standard deviation σ a third difference has
//! variance `20·σ²` (`(2k)!/(k!)²` for order k, the idea of Moré & Wild's ECnoise); the
//! median absolute value of the scaled differences of two stencils, along two directions,
//! estimates σ. A stencil whose values mostly repeat exactly (f quantised coarser than h,
//! e.g. float32 inputs of size 1e6) is re-measured with a step 100 times larger, twice at
//! most.

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

/// Order of the differences that read the noise: high enough to remove any smooth trend
/// over a stencil this small, low enough to leave several values per stencil.
pub const ORDER: usize = 3;

/// One stencil's third differences, each scaled to unit variance for white noise of unit σ
/// (None when a value is not finite).
pub fn stencil_differences(values: &[f64]) -> Option<Vec<f64>> {
    if values.iter().any(|v| !v.is_finite()) || values.len() <= ORDER {
        return None;
    }
    let mut diff = values.to_vec();
    for _ in 0..ORDER {
        diff = diff.windows(2).map(|w| w[1] - w[0]).collect();
    }
    let norm = libm::sqrt(central_binomial(ORDER));
    Some(diff.into_iter().map(|d| d / norm).collect())
}

/// Whether a stencil's values mostly repeat exactly (f is quantised coarser than h).
pub fn quantised(values: &[f64]) -> bool {
    values.windows(2).filter(|w| w[0] == w[1]).count() * 2 >= values.len()
}

/// σ from the stencils' scaled differences, pooled: their median absolute value over that of
/// a unit normal (0.6745). The median keeps a kink inside one stencil, which inflates the few
/// differences that straddle it, from reading as noise; pooling both stencils keeps the
/// estimate from falling far below σ by chance (a 1-in-100 low is about a quarter of σ).
pub fn sigma(differences: &[f64]) -> Option<f64> {
    if differences.is_empty() {
        return None;
    }
    let mut a: Vec<f64> = differences.iter().map(|d| d.abs()).collect();
    a.sort_by(f64::total_cmp);
    let m = a.len();
    let median = if m % 2 == 1 {
        a[m / 2]
    } else {
        0.5 * (a[m / 2 - 1] + a[m / 2])
    };
    Some(median / 0.674_489_750_196_081_7)
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
        "float32 arithmetic (float32's unit round-off is 6.0e-8), or an iterative solver's tolerance of that order".into()
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
        assert_eq!(sigma(&stencil_differences(&smooth).unwrap()), Some(0.0));
        // Alternating ±s: third differences of ±8s, scaled by √20.
        let s = 1e-9;
        let saw: Vec<f64> = (-3..=3)
            .map(|i| 1.0 + if i % 2 == 0 { s } else { -s })
            .collect();
        let sg = sigma(&stencil_differences(&saw).unwrap()).unwrap();
        let want = 8.0 * s / libm::sqrt(20.0) / 0.674_489_750_196_081_7;
        assert!((sg - want).abs() < 1e-6 * want, "{sg} {want}");
        assert_eq!(central_binomial(3), 20.0);
        assert!(quantised(&[1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0]));
        assert!(!quantised(&smooth));
        assert!(stencil_differences(&[1.0, f64::NAN, 1.0, 1.0, 1.0]).is_none());
    }
}
