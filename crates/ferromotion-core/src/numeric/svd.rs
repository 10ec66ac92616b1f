//! The singular value decomposition read as conditioning: how well a sensitivity matrix
//! observes each combination of its inputs.

use crate::error::{positive, FerroError, Result};
use nalgebra::DMatrix;
use serde::Serialize;

/// Singular values of a sensitivity matrix and its weakly observed input combinations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conditioning {
    /// Singular values, descending.
    pub singular_values: Vec<f64>,
    /// Largest over smallest (infinite when rank-deficient).
    pub condition_number: f64,
    /// Unit input combinations whose singular value is below `rel`·largest.
    pub weak_directions: Vec<Vec<f64>>,
}

/// Conditioning of a sensitivity matrix `jac` (n_out x n_in); combinations observed at
/// less than `rel` of the strongest are reported as weak.
pub fn conditioning(jac: &DMatrix<f64>, rel: f64) -> Result<Conditioning> {
    positive("rel", rel)?;
    if jac.is_empty() || jac.iter().any(|v| !v.is_finite()) {
        return Err(FerroError::InvalidParameter {
            name: "jacobian",
            value: jac.len() as f64,
            limit: "must be a non-empty matrix of finite numbers".into(),
        });
    }
    // Pad with zero rows so that the decomposition has one singular value per input:
    // inputs beyond the rank of a wide matrix are unobserved (singular value 0).
    let n_in = jac.ncols();
    let rows = jac.nrows().max(n_in);
    let mut padded = DMatrix::zeros(rows, n_in);
    padded.view_mut((0, 0), (jac.nrows(), n_in)).copy_from(jac);
    let svd = padded.svd(false, true);
    let v_t = svd.v_t.ok_or(FerroError::NonFinite {
        what: "singular value decomposition",
        detail: "no right singular vectors".into(),
    })?;
    let mut pairs: Vec<(f64, Vec<f64>)> = svd
        .singular_values
        .iter()
        .enumerate()
        .map(|(i, &s)| (s, v_t.row(i).iter().copied().collect()))
        .collect();
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0));
    let largest = pairs.first().map_or(0.0, |p| p.0);
    let weak: Vec<Vec<f64>> = pairs
        .iter()
        .filter(|p| p.0 < rel * largest)
        .map(|p| p.1.clone())
        .collect();
    let smallest = pairs.last().map_or(0.0, |p| p.0);
    Ok(Conditioning {
        singular_values: pairs.iter().map(|p| p.0).collect(),
        condition_number: if smallest > 0.0 {
            largest / smallest
        } else {
            f64::INFINITY
        },
        weak_directions: weak,
    })
}

/// The spectral radius max|λ| of a square matrix, from its real Schur form; NaN when the
/// QR iteration does not converge within 10,000 sweeps (nalgebra's `complex_eigenvalues`
/// has no cap and can spin forever on a large Jacobian), or for a non-finite matrix.
pub fn spectral_radius(m: &nalgebra::DMatrix<f64>) -> f64 {
    if !m.iter().all(|v| v.is_finite()) {
        return f64::NAN;
    }
    match m.clone().try_schur(f64::EPSILON, 10_000) {
        Some(schur) => schur
            .complex_eigenvalues()
            .iter()
            .fold(0.0_f64, |r, l| r.max(l.norm())),
        None => f64::NAN,
    }
}
