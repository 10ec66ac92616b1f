//! Identifiability at the solution: singular values of S, the linearisation's covariance,
//! the weak directions named as combinations of the fit's coordinates.

use super::options::{FitOptions, Z95};
use super::params::Param;
use super::report::WeakDirection;
use crate::error::{FerroError, Result};
use nalgebra::DMatrix;

/// Identifiability at the solution: the singular values and right singular vectors of S.
pub(super) struct Identifiability {
    /// (singular value, right singular vector), largest first; a wide S is completed with
    /// the directions it does not see (singular value 0).
    pub(super) pairs: Vec<(f64, Vec<f64>)>,
    /// The largest singular value.
    pub(super) largest: f64,
    /// Largest over smallest singular value (infinite when singular).
    pub(super) condition: f64,
    /// Variance of each coordinate in the linearisation (infinite along unseen directions).
    pub(super) variance: Vec<f64>,
    pub(super) weak_directions: Vec<WeakDirection>,
}

impl Identifiability {
    pub(super) fn at(
        s: &DMatrix<f64>,
        params: &[Param],
        opts: &FitOptions,
    ) -> Result<Identifiability> {
        let np = params.len();
        let svd = s.clone().svd(false, true);
        let v_t = svd.v_t.ok_or(FerroError::NonFinite {
            what: "singular value decomposition",
            detail: "no right singular vectors".into(),
        })?;
        let mut pairs: Vec<(f64, Vec<f64>)> = (0..svd.singular_values.len())
            .map(|i| (svd.singular_values[i], v_t.row(i).iter().copied().collect()))
            .collect();
        // A wide S (fewer rows than parameters) leaves directions it does not see at all.
        while pairs.len() < np {
            pairs.push((0.0, null_direction(&pairs, np)));
        }
        pairs.sort_by(|a, b| b.0.total_cmp(&a.0));
        let largest = pairs.first().map_or(0.0, |p| p.0);
        let smallest = pairs.last().map_or(0.0, |p| p.0);
        let condition = if smallest > 0.0 {
            largest / smallest
        } else {
            f64::INFINITY
        };
        let mut variance = vec![0.0; np];
        for (s, v) in &pairs {
            for j in 0..np {
                let w = v[j] * v[j];
                if w > 0.0 {
                    variance[j] += if *s > opts.weak_rel * largest * 1e-6 && *s > 0.0 {
                        w / (s * s)
                    } else {
                        f64::INFINITY
                    };
                }
            }
        }
        let weak_directions: Vec<WeakDirection> = pairs
            .iter()
            .filter_map(|(s, v)| {
                let half = if *s > 0.0 { Z95 / s } else { f64::INFINITY };
                let kind = if *s < opts.weak_rel * largest || *s == 0.0 {
                    "unidentifiable"
                } else if half > opts.weak_width {
                    "weakly informed"
                } else {
                    return None;
                };
                Some(WeakDirection {
                    label: combination_label(params, v),
                    coefficients: v.clone(),
                    singular_value: *s,
                    half_width: half,
                    kind: kind.into(),
                })
            })
            .collect();
        Ok(Identifiability {
            pairs,
            largest,
            condition,
            variance,
            weak_directions,
        })
    }

    /// (F⁻¹)_nj over the informed directions: the linearisation's covariance, which gives
    /// the Wald intervals and the warm start of each profile (the nuisance coordinates'
    /// linear response).
    pub(super) fn covariance(&self, n: usize, j: usize, opts: &FitOptions) -> f64 {
        let informed = |s: f64| s > opts.weak_rel * self.largest * 1e-6 && s > 0.0;
        self.pairs
            .iter()
            .filter(|(s, _)| informed(*s))
            .map(|(s, v)| v[n] * v[j] / (s * s))
            .sum()
    }
}

/// A unit vector orthogonal to the given ones (Gram–Schmidt on the coordinate axes).
pub(super) fn null_direction(pairs: &[(f64, Vec<f64>)], n: usize) -> Vec<f64> {
    for axis in 0..n {
        let mut v = vec![0.0; n];
        v[axis] = 1.0;
        for (_, u) in pairs {
            let d: f64 = u.iter().zip(&v).map(|(a, b)| a * b).sum();
            for j in 0..n {
                v[j] -= d * u[j];
            }
        }
        let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
        if norm > 1e-6 {
            return v.into_iter().map(|a| a / norm).collect();
        }
    }
    vec![0.0; n]
}

/// "log k − 0.98·log zeta": a combination of the fit's coordinates, the largest
/// coefficient scaled to 1, coefficients below 0.05 of it left out.
pub fn combination_label(params: &[Param], v: &[f64]) -> String {
    let big = v.iter().fold(0.0_f64, |m, c| m.max(c.abs()));
    if big == 0.0 {
        return "(none)".into();
    }
    // Sign so that the largest coefficient is positive.
    let lead = v
        .iter()
        .copied()
        .fold(0.0_f64, |m, c| if c.abs() > m.abs() { c } else { m });
    let mut out = String::new();
    for (p, &c) in params.iter().zip(v) {
        let c = c / lead;
        if c.abs() < 0.05 {
            continue;
        }
        let name = if p.is_log() {
            format!("log {}", p.name())
        } else {
            p.name().to_string()
        };
        let mag = c.abs();
        let coef = if (mag - 1.0).abs() < 5e-3 {
            String::new()
        } else {
            format!("{mag:.2}·")
        };
        if out.is_empty() {
            out = format!("{}{coef}{name}", if c < 0.0 { "−" } else { "" });
        } else {
            out.push_str(&format!(
                " {} {coef}{name}",
                if c < 0.0 { "−" } else { "+" }
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_combination() {
        let p = [Param::Zeta, Param::K, Param::Velocity];
        assert_eq!(
            combination_label(&p, &[0.6, -0.6, 0.01]),
            "log zeta − log k"
        );
        assert_eq!(combination_label(&p, &[0.0, 0.0, -1.0]), "velocity");
    }
}
