//! Lemke's complementary pivoting method for the linear complementarity problem
//!
//! ```text
//! find z:  w = A·z + b,   w ≥ 0,   z ≥ 0,   wᵀz = 0
//! ```
//!
//! (Lemke 1965; Cottle, Pang & Stone, *The Linear Complementarity Problem*, 1992, §4.4).
//! An artificial variable z₀ with covering vector e = 1 makes `w = A z + b + e z₀` feasible
//! at z = 0; each pivot brings in the complement of the variable that just left, until z₀
//! leaves (a solution) or no pivot row exists (ray termination: the method gives up). Ties
//! in the ratio test are broken lexicographically on the rows of the basis inverse, which
//! rules out cycling on the degenerate friction rows (their b is exactly 0).
//!
//! For the frictional contact problem of the rigid step (Stewart & Trinkle 1996,
//! Anitescu & Potra 1997) A is copositive and Lemke's method terminates with a solution;
//! the answer is still checked ([`LcpResiduals`]) rather than trusted.

use nalgebra::{DMatrix, DVector};
use serde::Serialize;

/// A solution of the LCP with the work it took.
#[derive(Debug, Clone, PartialEq)]
pub struct LcpSolution {
    /// z ≥ 0.
    pub z: DVector<f64>,
    /// w ≥ 0 as the final basis gives it: a nonbasic w_i is exactly 0, so `w_i == 0.0`
    /// reads "constraint i is active" without a tolerance (A·z + b agrees to rounding; see
    /// [`residuals`]).
    pub w: DVector<f64>,
    /// Pivots made (0 when b ≥ 0 and z = 0 solves it).
    pub pivots: usize,
}

/// How well a pair (z, w = A z + b) satisfies the LCP.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LcpResiduals {
    /// max(0, -min z).
    pub z_negativity: f64,
    /// max(0, -min w).
    pub w_negativity: f64,
    /// max_i |z_i·w_i|.
    pub complementarity: f64,
}

/// Solve the LCP `w = A z + b ≥ 0, z ≥ 0, wᵀz = 0` by Lemke's method.
///
/// Returns `None` on ray termination or when `max_pivots` pivots did not finish (for the
/// contact problems here about n pivots suffice; the cap is a hang guard).
///
/// # Panics
/// If `A` is not square or `b` does not match it (an internal caller's bug, not input).
pub fn lemke(a: &DMatrix<f64>, b: &DVector<f64>, max_pivots: usize) -> Option<LcpSolution> {
    let n = b.len();
    assert!(
        a.nrows() == n && a.ncols() == n,
        "lemke: A must be n × n with b of length n"
    );
    if b.iter().all(|&x| x >= 0.0) {
        return Some(LcpSolution {
            z: DVector::zeros(n),
            w: b.clone(),
            pivots: 0,
        });
    }
    // Tableau rows: [w (n) | z (n) | z0 | rhs], for w - A z - e z0 = b.
    let ncol = 2 * n + 2;
    let (z0, rhs) = (2 * n, 2 * n + 1);
    let mut t = vec![0.0; n * ncol];
    for i in 0..n {
        t[i * ncol + i] = 1.0;
        for j in 0..n {
            t[i * ncol + n + j] = -a[(i, j)];
        }
        t[i * ncol + z0] = -1.0;
        t[i * ncol + rhs] = b[i];
    }
    let mut basis: Vec<usize> = (0..n).collect();
    // z0 enters; the most negative b leaves, after which every rhs is >= 0.
    let mut r = 0;
    for i in 1..n {
        if b[i] < b[r] {
            r = i;
        }
    }
    pivot(&mut t, ncol, n, r, z0);
    let mut leaving = basis[r];
    basis[r] = z0;
    let mut pivots = 1;
    loop {
        if pivots >= max_pivots {
            return None;
        }
        let entering = if leaving < n {
            leaving + n
        } else {
            leaving - n
        };
        let r = ratio_test(&t, ncol, n, entering, &basis, z0)?;
        pivot(&mut t, ncol, n, r, entering);
        leaving = basis[r];
        basis[r] = entering;
        pivots += 1;
        if leaving == z0 {
            break;
        }
    }
    let mut z = DVector::zeros(n);
    let mut w = DVector::zeros(n);
    for (i, &var) in basis.iter().enumerate() {
        // Basic values are >= 0 up to rounding; clip the last ulps of a degenerate 0.
        let x = t[i * ncol + rhs].max(0.0);
        if var < n {
            w[var] = x;
        } else {
            z[var - n] = x;
        }
    }
    Some(LcpSolution { z, w, pivots })
}

/// Minimum-ratio row for the entering column, ties broken in favour of z0 leaving, then
/// lexicographically on (rhs, basis-inverse row) / pivot.
fn ratio_test(
    t: &[f64],
    ncol: usize,
    n: usize,
    col: usize,
    basis: &[usize],
    z0: usize,
) -> Option<usize> {
    let rhs = 2 * n + 1;
    // Entries below this are treated as zero: tableau entries here are O(1..1e3) (inverse
    // effective masses in 1/kg, μ, ones), so 1e-11 is ~1e-13 relative.
    const PIV: f64 = 1e-11;
    let mut best: Option<usize> = None;
    for i in 0..n {
        let p = t[i * ncol + col];
        if p <= PIV {
            continue;
        }
        best = Some(match best {
            None => i,
            Some(bi) => {
                let pb = t[bi * ncol + col];
                let (ri, rb) = (t[i * ncol + rhs] / p, t[bi * ncol + rhs] / pb);
                let tie = (ri - rb).abs() <= 1e-12 * (1.0 + ri.abs().max(rb.abs()));
                if !tie {
                    if ri < rb {
                        i
                    } else {
                        bi
                    }
                } else if basis[i] == z0 {
                    i
                } else if basis[bi] == z0 {
                    bi
                } else {
                    // Lexicographic on the basis inverse (the tableau's w columns).
                    let mut pick = bi;
                    for k in 0..n {
                        let (a, c) = (t[i * ncol + k] / p, t[bi * ncol + k] / pb);
                        if (a - c).abs() > 1e-14 * (1.0 + a.abs().max(c.abs())) {
                            pick = if a < c { i } else { bi };
                            break;
                        }
                    }
                    pick
                }
            }
        });
    }
    best
}

fn pivot(t: &mut [f64], ncol: usize, n: usize, r: usize, col: usize) {
    let p = t[r * ncol + col];
    for k in 0..ncol {
        t[r * ncol + k] /= p;
    }
    for i in 0..n {
        if i == r {
            continue;
        }
        let f = t[i * ncol + col];
        if f == 0.0 {
            continue;
        }
        for k in 0..ncol {
            t[i * ncol + k] -= f * t[r * ncol + k];
        }
        // Exact zero in the pivot column keeps later ratio tests clean.
        t[i * ncol + col] = 0.0;
    }
}

/// Residuals of a candidate solution (z, with w recomputed as A z + b).
pub fn residuals(a: &DMatrix<f64>, b: &DVector<f64>, z: &DVector<f64>) -> LcpResiduals {
    let w = a * z + b;
    LcpResiduals {
        z_negativity: z.iter().fold(0.0_f64, |m, &x| m.max(-x)),
        w_negativity: w.iter().fold(0.0_f64, |m, &x| m.max(-x)),
        complementarity: z
            .iter()
            .zip(w.iter())
            .fold(0.0_f64, |m, (&x, &y)| m.max((x * y).abs())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trivial_when_b_nonnegative() {
        let a = DMatrix::identity(3, 3);
        let b = DVector::from_vec(vec![1.0, 0.0, 2.0]);
        let s = lemke(&a, &b, 100).unwrap();
        assert_eq!(s.pivots, 0);
        assert!(s.z.iter().all(|&x| x == 0.0));
    }

    #[test]
    fn solves_a_p_matrix_problem_exactly() {
        // A positive definite (a P-matrix): the LCP has exactly one solution.
        let a = DMatrix::from_row_slice(3, 3, &[4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0]);
        let b = DVector::from_vec(vec![-1.0, 0.5, -2.0]);
        let s = lemke(&a, &b, 100).unwrap();
        let r = residuals(&a, &b, &s.z);
        assert!(r.z_negativity < 1e-14 && r.w_negativity < 1e-14 && r.complementarity < 1e-14);
        // Active set {0, 2}: [4 0.5; 0.5 2] z = [1, 2].
        let det = 4.0 * 2.0 - 0.25;
        let (z0, z2) = ((2.0 * 1.0 - 0.5 * 2.0) / det, (4.0 * 2.0 - 0.5 * 1.0) / det);
        assert!((s.z[0] - z0).abs() < 1e-14 && s.z[1] == 0.0 && (s.z[2] - z2).abs() < 1e-14);
    }

    #[test]
    fn ray_termination_is_reported() {
        // w = -z - 1 can never be >= 0 with z >= 0.
        let a = DMatrix::from_element(1, 1, -1.0);
        let b = DVector::from_element(1, -1.0);
        assert!(lemke(&a, &b, 100).is_none());
    }
}
