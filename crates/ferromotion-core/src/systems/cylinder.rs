//! A ball outside a fixed cylinder (a circle in the plane): the contact normal turns with the
//! impact point, so the reset's Jacobian carries the surface's curvature.

use nalgebra::{DMatrix, DVector};

use super::exact_from_closed_form;
use super::POSITIVE;
use super::{bounce_jacobian, fly, Ball, Declared, Entry, Param, Spec, BALL_STATE, BALL_UNITS};
use super::{GRAVITY, RESTITUTION};

/// The cylinder's definition.
pub static SPEC: Spec = Spec {
    kind: "cylinder",
    class: "Cylinder",
    summary: "a ball outside a circle of `radius` centred at the origin, gravity along -y; guard |p| - radius, reset v+ = v- - (1+e)(n.v-) n with n = p/|p| (the normal turns with the impact point)",
    state_names: BALL_STATE,
    units: BALL_UNITS,
    params: &[
        Param {
            name: "radius",
            unit: "m",
            doc: "radius of the cylinder",
            ..POSITIVE
        },
        RESTITUTION,
        GRAVITY,
    ],
    has_exact: true,
};

/// The cylinder in the registry.
pub const ENTRY: Entry = Entry {
    spec: &SPEC,
    build: |v| {
        Box::new(Cylinder {
            radius: v[0],
            restitution: v[1],
            gravity: v[2],
        })
    },
};

/// A ball outside a cylinder (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
pub struct Cylinder {
    /// Radius, m.
    pub radius: f64,
    /// Restitution on the normal velocity.
    pub restitution: f64,
    /// Gravity, m/s².
    pub gravity: f64,
}

fn unit(x: &DVector<f64>) -> (f64, f64, f64) {
    let r = libm::hypot(x[0], x[1]);
    (x[0] / r, x[1] / r, r)
}

impl Ball for Cylinder {
    const NAME: &'static str = "ball outside a cylinder";
    fn gravity(&self) -> f64 {
        self.gravity
    }
    fn restitution(&self) -> f64 {
        self.restitution
    }
    fn surfaces(&self) -> usize {
        1
    }
    fn gap(&self, _: usize, x: &DVector<f64>) -> f64 {
        libm::hypot(x[0], x[1]) - self.radius
    }
    fn surface_normal(&self, _: usize, x: &DVector<f64>) -> (f64, f64) {
        let (nx, ny, _) = unit(x);
        (nx, ny)
    }
    /// dx+/dx-: the velocity block I - (1+e) n nᵀ, and the curvature term
    /// dv+/dp = -(1+e)·(n vᵀ + (n·v) I)·(I - n nᵀ)/|p| (n = p/|p| turns with p).
    fn surface_bounce_jacobian(&self, _: usize, x: &DVector<f64>) -> DMatrix<f64> {
        let (nx, ny, r) = unit(x);
        let c = 1.0 + self.restitution;
        let n = [nx, ny];
        let v = [x[2], x[3]];
        let vn = nx * v[0] + ny * v[1];
        let mut out = bounce_jacobian((nx, ny), self.restitution);
        for a in 0..2 {
            for b in 0..2 {
                // (n vᵀ + vn I)(I - n nᵀ) / r, entry (a, b).
                let mut m = 0.0;
                for k in 0..2 {
                    let left = n[a] * v[k] + if a == k { vn } else { 0.0 };
                    let proj = if k == b { 1.0 } else { 0.0 } - n[k] * n[b];
                    m += left * proj;
                }
                out[(2 + a, b)] = -c * m / r;
            }
        }
        out
    }
    /// The first entering root of |p(s)|² - r² (a quartic in s): its real roots from the
    /// companion matrix, each polished by Newton steps on |p(s)| - r; the smallest s > 0
    /// where the distance is falling.
    fn time_to_surface(&self, _: usize, x: &DVector<f64>) -> Option<f64> {
        let g = self.gravity;
        let (px, py, vx, vy) = (x[0], x[1], x[2], x[3]);
        // q(s) = c4 s⁴ + c3 s³ + c2 s² + c1 s + c0.
        let c = [
            px * px + py * py - self.radius * self.radius,
            2.0 * (px * vx + py * vy),
            vx * vx + vy * vy - g * py,
            -g * vy,
            0.25 * g * g,
        ];
        let mut comp = DMatrix::zeros(4, 4);
        for k in 0..4 {
            comp[(0, k)] = -c[3 - k] / c[4];
        }
        for k in 1..4 {
            comp[(k, k - 1)] = 1.0;
        }
        let dist = |s: f64| {
            let p = fly(x, g, s);
            (libm::hypot(p[0], p[1]) - self.radius, p)
        };
        let mut best: Option<f64> = None;
        for z in comp.complex_eigenvalues().iter() {
            if z.im.abs() > 1e-6 * (1.0 + z.re.abs()) || z.re < -1e-9 {
                continue;
            }
            let mut s = z.re.max(0.0);
            for _ in 0..8 {
                let (d, p) = dist(s);
                let rate = (p[0] * p[2] + p[1] * p[3]) / libm::hypot(p[0], p[1]);
                if rate == 0.0 {
                    break;
                }
                s -= d / rate;
            }
            let (_, p) = dist(s);
            let rate = p[0] * p[2] + p[1] * p[3];
            if s > 0.0 && rate < 0.0 && best.is_none_or(|b| s < b) {
                best = Some(s);
            }
        }
        best
    }
}

impl Declared for Cylinder {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn values(&self) -> Vec<f64> {
        vec![self.radius, self.restitution, self.gravity]
    }
    exact_from_closed_form!();
}
