//! Rotations in 3-D: the exponential and logarithm of SO(3) and its left Jacobian, for states
//! whose orientation is perturbed in the tangent space (`R' = Exp(δ)·R`, a world-frame
//! rotation vector δ left-multiplied) rather than as a flat vector.
//!
//! Conventions: `hat(w)·r = w × r`; `exp(w)` rotates by |w| about w/|w|; `left_jacobian(φ)`
//! is J_l with `Exp(φ + dφ) = Exp(J_l(φ)·dφ)·Exp(φ)` to first order.

use nalgebra::{Matrix3, Vector3};

/// The skew matrix of `w`: `hat(w) * r == w.cross(&r)`.
pub fn hat(w: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -w.z, w.y, w.z, 0.0, -w.x, -w.y, w.x, 0.0)
}

/// (sin φ)/φ, (1 − cos φ)/φ² and (φ − sin φ)/φ³ at φ = |w|, by series near 0.
fn coefficients(phi: f64) -> (f64, f64, f64) {
    if phi < 1e-4 {
        let p2 = phi * phi;
        (
            1.0 - p2 / 6.0 + p2 * p2 / 120.0,
            0.5 - p2 / 24.0 + p2 * p2 / 720.0,
            1.0 / 6.0 - p2 / 120.0 + p2 * p2 / 5040.0,
        )
    } else {
        let (s, c) = (libm::sin(phi), libm::cos(phi));
        (
            s / phi,
            (1.0 - c) / (phi * phi),
            (phi - s) / (phi * phi * phi),
        )
    }
}

/// The rotation by the rotation vector `w` (Rodrigues).
pub fn exp(w: &Vector3<f64>) -> Matrix3<f64> {
    let (a, b, _) = coefficients(w.norm());
    let k = hat(w);
    Matrix3::identity() + k * a + k * k * b
}

/// The left Jacobian J_l(φ) of SO(3): `Exp(φ + dφ) ≈ Exp(J_l(φ)·dφ)·Exp(φ)`.
pub fn left_jacobian(phi: &Vector3<f64>) -> Matrix3<f64> {
    let (_, b, c) = coefficients(phi.norm());
    let k = hat(phi);
    Matrix3::identity() + k * b + k * k * c
}

/// The rotation vector of `r` (the inverse of [`exp`] for angles below π; at π the axis is
/// taken from the symmetric part).
pub fn log(r: &Matrix3<f64>) -> Vector3<f64> {
    let cos = ((r.trace() - 1.0) * 0.5).clamp(-1.0, 1.0);
    let axis_sin = Vector3::new(
        r[(2, 1)] - r[(1, 2)],
        r[(0, 2)] - r[(2, 0)],
        r[(1, 0)] - r[(0, 1)],
    ) * 0.5;
    let sin = axis_sin.norm();
    let phi = libm::atan2(sin, cos);
    if phi < 1e-4 {
        // sin φ / φ → 1: w ≈ axis_sin·(1 + φ²/6).
        return axis_sin * (1.0 + phi * phi / 6.0);
    }
    if sin > 1e-6 {
        return axis_sin * (phi / sin);
    }
    // Near π: R ≈ 2·u·uᵀ − I; take u from the largest diagonal entry of (R + I)/2.
    let s = (r + Matrix3::identity()) * 0.5;
    let i = (0..3)
        .max_by(|&a, &b| s[(a, a)].total_cmp(&s[(b, b)]))
        .unwrap_or(0);
    let mut u = s.column(i).into_owned() / s[(i, i)].max(f64::MIN_POSITIVE).sqrt();
    if u.dot(&axis_sin) < 0.0 {
        u = -u;
    }
    u.normalize() * phi
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_inverts_exp_and_exp_is_a_rotation() {
        for w in [
            Vector3::new(0.5, 0.3, 0.2),
            Vector3::new(1e-7, -2e-7, 3e-8),
            Vector3::new(-2.0, 1.0, 0.4),
            Vector3::new(0.0, 0.0, 3.1),
        ] {
            let r = exp(&w);
            assert!((r.transpose() * r - Matrix3::identity()).norm() < 1e-14);
            assert!((r.determinant() - 1.0).abs() < 1e-14);
            assert!((log(&r) - w).norm() < 1e-12 * (1.0 + w.norm()), "{w:?}");
        }
    }

    #[test]
    fn left_jacobian_is_the_derivative_of_exp_pulled_back_to_the_left() {
        // Exp(φ + h·e_j)·Exp(φ)ᵀ = Exp(h·J_l e_j) + O(h²): central differences of log of it.
        let phi = Vector3::new(0.7, -0.4, 1.1);
        let jl = left_jacobian(&phi);
        let h = 1e-6;
        for j in 0..3 {
            let mut e = Vector3::zeros();
            e[j] = h;
            let plus = log(&(exp(&(phi + e)) * exp(&phi).transpose()));
            let minus = log(&(exp(&(phi - e)) * exp(&phi).transpose()));
            let col = (plus - minus) / (2.0 * h);
            assert!((col - jl.column(j)).norm() < 1e-9, "column {j}");
        }
    }
}
