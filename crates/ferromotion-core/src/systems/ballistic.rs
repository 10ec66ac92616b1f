//! Shared kinematics of the planar systems: flight under gravity, its Jacobian, a bounce
//! off a line, and the first falling root of a guard on such a flight.

use nalgebra::DVector;

/// The first time s >= 0 at which `h + vn·s + a·s²/2` (a guard's value on a flight of
/// constant acceleration `a` along the guard's normal) reaches 0 from above: after an impact
/// (h = 0 up to round-off, vn > 0) the next one. `None`: never.
pub fn falling_root(h: f64, vn: f64, a: f64) -> Option<f64> {
    let h = h.max(0.0);
    if a < 0.0 {
        // The larger root, written without cancellation.
        let disc = libm::sqrt(vn * vn - 2.0 * a * h);
        return Some(if vn >= 0.0 {
            (vn + disc) / (-a)
        } else {
            2.0 * h / (disc - vn)
        });
    }
    if !(vn < 0.0) {
        return None;
    }
    if a == 0.0 {
        return Some(h / (-vn));
    }
    let disc = vn * vn - 2.0 * a * h;
    (disc >= 0.0).then(|| 2.0 * h / (libm::sqrt(disc) - vn))
}

/// The frictionless impact of a point's velocity (entries 2, 3 of x = (p, v)) on a surface of
/// unit normal n: v+ = v- - (1 + e)(n·v-)·n, position unchanged.
pub fn bounce(x: &DVector<f64>, n: (f64, f64), e: f64) -> DVector<f64> {
    let k = (1.0 + e) * (n.0 * x[2] + n.1 * x[3]);
    DVector::from_vec(vec![x[0], x[1], x[2] - k * n.0, x[3] - k * n.1])
}

/// A point's free flight under gravity along -y, x = (p_x, p_y, v_x, v_y): its map and Jacobian.
pub fn fly(x: &DVector<f64>, g: f64, t: f64) -> DVector<f64> {
    DVector::from_vec(vec![
        x[0] + x[2] * t,
        x[1] + x[3] * t - 0.5 * g * t * t,
        x[2],
        x[3] - g * t,
    ])
}

/// d [`fly`] / dx.
pub fn fly_jacobian(t: f64) -> nalgebra::DMatrix<f64> {
    let mut a = nalgebra::DMatrix::identity(4, 4);
    a[(0, 2)] = t;
    a[(1, 3)] = t;
    a
}

/// The flow of a point under gravity along -y and its Jacobian.
pub fn gravity_rhs(x: &DVector<f64>, g: f64) -> (DVector<f64>, nalgebra::DMatrix<f64>) {
    (
        DVector::from_vec(vec![x[2], x[3], 0.0, -g]),
        fly_jacobian(1.0) - nalgebra::DMatrix::identity(4, 4),
    )
}
