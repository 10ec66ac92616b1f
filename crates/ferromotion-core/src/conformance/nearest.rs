//! Where an engine's answer sits when a fixture's exact answer is not one Jacobian: the
//! nearest of its derivative's pieces (or their average), or the nearest of its set-valued
//! outcomes (or their average). The decision is made here, once: adapters only produce the
//! engine's x(T) and J.
//!
//! The distance is a relative max-norm, `max|a - c| / S` with one scale S for all (the largest
//! entry of any candidate), taken against each candidate c and against the candidates' mean
//! (mirror-image outcomes have a mean near zero: its own scale would not do). The mean is named
//! only when it is nearer than every candidate by [`AVERAGE_MARGIN`] (a gradient half-way
//! between two pieces is an average; one a hair nearer the mean than a piece is not decided by
//! noise). Otherwise the nearest candidate is named, unless the two nearest are equally near
//! within [`TIE_RTOL`]: then the engine's answer is equidistant (an engine that keeps a mirror
//! symmetry lands at the same distance from mirror-image outcomes, picking neither).

use serde::Serialize;

/// The mean must be nearer than the nearest candidate by this factor to be named.
pub const AVERAGE_MARGIN: f64 = 0.5;
/// Two candidates whose distances differ by at most this fraction of the larger are equally near.
pub const TIE_RTOL: f64 = 1e-2;

/// What the engine's answer is nearest to, among a fixture's pieces or outcomes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Nearest {
    /// `pieces` (the engine's J against each piece's matrix) or `outcomes` (its x(T) against
    /// each order's state).
    pub among: &'static str,
    /// Each candidate's relative distance from the engine's, in the fixture's order.
    pub distances: Vec<f64>,
    /// The relative distance from the candidates' mean.
    pub to_mean: f64,
    /// The nearest candidate's index; None when the engine's is the candidates' average, is
    /// equally near two of them, or is not finite.
    pub nearest: Option<usize>,
    /// `nearest`, `average`, `equidistant` or `not_finite`.
    pub decision: &'static str,
    /// The decision in words (`piece 1 (orders [[1, 0]])`, `the average of the 2 outcomes`).
    pub says: String,
}

/// max|a - b| / scale over flattened entries (NaN in `a` gives NaN).
pub fn relative(a: &[f64], b: &[f64], scale: f64) -> f64 {
    let mut worst = 0.0_f64;
    for (x, y) in a.iter().zip(b) {
        let d = (x - y).abs();
        if d.is_nan() {
            return f64::NAN;
        }
        worst = worst.max(d);
    }
    worst / scale
}

/// The entry-wise mean of equally long vectors.
pub fn mean(candidates: &[Vec<f64>]) -> Vec<f64> {
    let n = candidates.len() as f64;
    let mut out = vec![0.0; candidates.first().map_or(0, Vec::len)];
    for c in candidates {
        for (o, x) in out.iter_mut().zip(c) {
            *o += x / n;
        }
    }
    out
}

/// Decide which of `candidates` (each flattened, named by `labels`) `got` is nearest.
pub fn nearest(
    among: &'static str,
    got: &[f64],
    candidates: &[Vec<f64>],
    labels: &[String],
) -> Nearest {
    let scale = candidates
        .iter()
        .flatten()
        .fold(0.0_f64, |m, x| m.max(x.abs()));
    let distances: Vec<f64> = candidates.iter().map(|c| relative(got, c, scale)).collect();
    let to_mean = relative(got, &mean(candidates), scale);
    let mut order: Vec<usize> = (0..distances.len())
        .filter(|&i| !distances[i].is_nan())
        .collect();
    order.sort_by(|&a, &b| distances[a].total_cmp(&distances[b]));
    let singular = among.trim_end_matches('s');
    let label = |i: usize| {
        format!(
            "{singular} {i} ({})",
            labels.get(i).map(String::as_str).unwrap_or("")
        )
    };
    let (nearest, decision, says) = match order.as_slice() {
        [] => (
            None,
            "not_finite",
            "none (the engine's numbers are not finite)".to_string(),
        ),
        [best, ..] if to_mean < AVERAGE_MARGIN * distances[*best] => (
            None,
            "average",
            format!("the average of the {} {among}", candidates.len()),
        ),
        [a, b, ..] if distances[*b] - distances[*a] <= TIE_RTOL * distances[*b] => (
            None,
            "equidistant",
            format!(
                "neither: equally near {} and {} (distance {:.3}), and not their average",
                label(*a),
                label(*b),
                distances[*a]
            ),
        ),
        [best, ..] => (Some(*best), "nearest", label(*best)),
    };
    Nearest {
        among,
        distances,
        to_mean,
        nearest,
        decision,
        says,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_candidate_or_the_average_is_named() {
        let c = vec![vec![1.0, 0.0], vec![-1.0, 0.0]];
        let labels = vec!["a".to_string(), "b".to_string()];
        let n = nearest("pieces", &[0.9, 0.0], &c, &labels);
        assert_eq!(n.nearest, Some(0));
        assert!((n.distances[0] - 0.1).abs() < 1e-15);
        let n = nearest("pieces", &[0.01, 0.0], &c, &labels);
        assert_eq!(n.nearest, None);
        assert_eq!(n.says, "the average of the 2 pieces");
        let n = nearest("outcomes", &[-1.0, 0.1], &c, &labels);
        assert_eq!((n.nearest, n.says.as_str()), (Some(1), "outcome 1 (b)"));
        let n = nearest("outcomes", &[f64::NAN, 0.0], &c, &labels);
        assert_eq!((n.nearest, n.decision), (None, "not_finite"));
        // Mirror images, the engine on the mirror line but far from both: neither.
        let c = vec![vec![1.0, 1.0], vec![-1.0, 1.0]];
        let n = nearest("outcomes", &[0.0, -3.0], &c, &labels);
        assert_eq!((n.nearest, n.decision), (None, "equidistant"));
    }
}
