//! Shared kinematics of the planar systems: flight under gravity, its Jacobian, a bounce
//! off a surface and its Jacobian, and the first falling root of a guard on such a flight.
//!
//! [`Ball`] is what a ball system (a point under gravity bouncing frictionlessly off fixed
//! surfaces: the slope, the V-groove, the cylinder) says about itself: its surfaces, their
//! gaps and normals. Its flow, guards, resets and closed-form flight follow from those,
//! written once here (the [`HybridSystem`] and [`ClosedForm`] impls below).

use nalgebra::{DMatrix, DVector};

use super::{ClosedForm, Declared};
use crate::error::Result;
use crate::hybrid::HybridSystem;

/// A ball's state, x = (p, v), and its units.
pub const BALL_STATE: &[&str] = &["p_x", "p_y", "v_x", "v_y"];
/// The units of [`BALL_STATE`].
pub const BALL_UNITS: &[&str] = &["m", "m", "m/s", "m/s"];

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

/// d [`bounce`] / dx off a surface whose normal n does not turn with the point (a flat
/// one): the identity but for the velocity block, I - (1 + e)·n·nᵀ.
pub fn bounce_jacobian(n: (f64, f64), e: f64) -> DMatrix<f64> {
    let c = 1.0 + e;
    let mut r = DMatrix::identity(4, 4);
    r[(2, 2)] -= c * n.0 * n.0;
    r[(2, 3)] -= c * n.0 * n.1;
    r[(3, 2)] -= c * n.1 * n.0;
    r[(3, 3)] -= c * n.1 * n.1;
    r
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
pub fn fly_jacobian(t: f64) -> DMatrix<f64> {
    let mut a = DMatrix::identity(4, 4);
    a[(0, 2)] = t;
    a[(1, 3)] = t;
    a
}

/// The flow of a point under gravity along -y and its Jacobian.
pub fn gravity_rhs(x: &DVector<f64>, g: f64) -> (DVector<f64>, DMatrix<f64>) {
    (
        DVector::from_vec(vec![x[2], x[3], 0.0, -g]),
        fly_jacobian(1.0) - DMatrix::identity(4, 4),
    )
}

/// A ball: a point under gravity along -y, x = (p_x, p_y, v_x, v_y), bouncing frictionlessly
/// (restitution on the normal velocity) off fixed surfaces. A system says what is its own
/// (its name, gravity, restitution, surfaces with their gaps and unit normals, and where a
/// surface is curved, the bounce's Jacobian and the next impact); the rest is written once
/// by the impls below: the flow [`gravity_rhs`], guard i = the gap to surface i with
/// gradient (n, 0, 0), reset [`bounce`], flight [`fly`].
pub trait Ball: Declared {
    /// The system's name, for messages.
    const NAME: &'static str;
    /// Gravity, m/s².
    fn gravity(&self) -> f64;
    /// Restitution on the normal velocity.
    fn restitution(&self) -> f64;
    /// How many surfaces the ball can meet (one guard each).
    fn surfaces(&self) -> usize;
    /// The unit normal of surface i at p (into free space): the gap's gradient over p.
    fn surface_normal(&self, i: usize, x: &DVector<f64>) -> (f64, f64);
    /// The gap to surface i at p (positive in free space): its guard; by default a plane
    /// through the origin, n·p.
    fn gap(&self, i: usize, x: &DVector<f64>) -> f64 {
        let n = self.surface_normal(i, x);
        n.0 * x[0] + n.1 * x[1]
    }
    /// d [`bounce`] / dx off surface i at x; by default [`bounce_jacobian`], a surface
    /// whose normal does not turn with p.
    fn surface_bounce_jacobian(&self, i: usize, x: &DVector<f64>) -> DMatrix<f64> {
        bounce_jacobian(self.surface_normal(i, x), self.restitution())
    }
    /// The next impact on surface i flying from x; by default a plane through the origin
    /// (the gap n·p, its rate n·v, the acceleration -g·n_y along n: [`falling_root`]).
    fn time_to_surface(&self, i: usize, x: &DVector<f64>) -> Option<f64> {
        let n = self.surface_normal(i, x);
        falling_root(
            self.gap(i, x),
            n.0 * x[2] + n.1 * x[3],
            -self.gravity() * n.1,
        )
    }
}

impl<B: Ball> HybridSystem for B {
    fn name(&self) -> String {
        B::NAME.into()
    }
    fn validate(&self) -> Result<()> {
        self.spec().check(&self.values())
    }
    fn dim(&self) -> usize {
        4
    }
    fn rhs(&self, _: usize, x: &DVector<f64>) -> DVector<f64> {
        gravity_rhs(x, self.gravity()).0
    }
    fn rhs_jacobian(&self, _: usize, x: &DVector<f64>) -> DMatrix<f64> {
        gravity_rhs(x, self.gravity()).1
    }
    fn guard_count(&self, _: usize) -> usize {
        self.surfaces()
    }
    fn guard(&self, _: usize, i: usize, x: &DVector<f64>) -> f64 {
        self.gap(i, x)
    }
    fn guard_gradient(&self, _: usize, i: usize, x: &DVector<f64>) -> DVector<f64> {
        let n = self.surface_normal(i, x);
        DVector::from_vec(vec![n.0, n.1, 0.0, 0.0])
    }
    fn reset(&self, mode: usize, i: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        (
            mode,
            bounce(x, self.surface_normal(i, x), self.restitution()),
        )
    }
    fn reset_jacobian(&self, _: usize, i: usize, x: &DVector<f64>) -> DMatrix<f64> {
        self.surface_bounce_jacobian(i, x)
    }
}

impl<B: Ball> ClosedForm for B {
    fn flight(&self, _: usize, x: &DVector<f64>, t: f64) -> DVector<f64> {
        fly(x, self.gravity(), t)
    }
    fn flight_jacobian(&self, _: usize, _: &DVector<f64>, t: f64) -> DMatrix<f64> {
        fly_jacobian(t)
    }
    fn time_to_guard(&self, _: usize, i: usize, x: &DVector<f64>) -> Option<f64> {
        self.time_to_surface(i, x)
    }
}
