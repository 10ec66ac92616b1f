//! A ball outside a fixed cylinder (a circle in the plane): the contact normal turns with the
//! impact point, so the reset's Jacobian carries the surface's curvature.

use nalgebra::{DMatrix, DVector};

use super::{bounce, fly, fly_jacobian, gravity_rhs, Declared, Entry, Fallback, Param, Spec};
use super::{GRAVITY, RESTITUTION};
use crate::error::Result;
use crate::hybrid::{HybridSolution, HybridSystem};

/// The cylinder's definition.
pub static SPEC: Spec = Spec {
    kind: "cylinder",
    class: "Cylinder",
    summary: "a ball outside a circle of `radius` centred at the origin, gravity along -y; guard |p| - radius, reset v+ = v- - (1+e)(n.v-) n with n = p/|p| (the normal turns with the impact point)",
    state_names: &["p_x", "p_y", "v_x", "v_y"],
    units: &["m", "m", "m/s", "m/s"],
    params: &[
        Param {
            name: "radius",
            unit: "m",
            len: 1,
            lo: 0.0,
            lo_closed: false,
            hi: f64::INFINITY,
            hi_closed: false,
            range: "> 0",
            default: Fallback::Required,
            doc: "radius of the cylinder",
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

impl HybridSystem for Cylinder {
    fn name(&self) -> String {
        "ball outside a cylinder".into()
    }
    fn validate(&self) -> Result<()> {
        SPEC.check(&self.values())
    }
    fn dim(&self) -> usize {
        4
    }
    fn rhs(&self, _: usize, x: &DVector<f64>) -> DVector<f64> {
        gravity_rhs(x, self.gravity).0
    }
    fn rhs_jacobian(&self, _: usize, x: &DVector<f64>) -> DMatrix<f64> {
        gravity_rhs(x, self.gravity).1
    }
    fn guard_count(&self, _: usize) -> usize {
        1
    }
    fn guard(&self, _: usize, _: usize, x: &DVector<f64>) -> f64 {
        libm::hypot(x[0], x[1]) - self.radius
    }
    fn guard_gradient(&self, _: usize, _: usize, x: &DVector<f64>) -> DVector<f64> {
        let (nx, ny, _) = unit(x);
        DVector::from_vec(vec![nx, ny, 0.0, 0.0])
    }
    fn reset(&self, mode: usize, _: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        let (nx, ny, _) = unit(x);
        (mode, bounce(x, (nx, ny), self.restitution))
    }
    /// dx+/dx-: the velocity block I - (1+e) n nᵀ, and the curvature term
    /// dv+/dp = -(1+e)·(n vᵀ + (n·v) I)·(I - n nᵀ)/|p| (n = p/|p| turns with p).
    fn reset_jacobian(&self, _: usize, _: usize, x: &DVector<f64>) -> DMatrix<f64> {
        let (nx, ny, r) = unit(x);
        let c = 1.0 + self.restitution;
        let n = [nx, ny];
        let v = [x[2], x[3]];
        let vn = nx * v[0] + ny * v[1];
        let mut out = DMatrix::identity(4, 4);
        for a in 0..2 {
            for b in 0..2 {
                out[(2 + a, 2 + b)] -= c * n[a] * n[b];
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
}

impl Declared for Cylinder {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn values(&self) -> Vec<f64> {
        vec![self.radius, self.restitution, self.gravity]
    }
    fn exact(
        &self,
        x0: &DVector<f64>,
        mode0: usize,
        t0: f64,
        t1: f64,
    ) -> Option<Result<HybridSolution>> {
        super::closed_form_exact(self, x0, mode0, t0, t1)
    }
}

impl super::ClosedForm for Cylinder {
    fn flight(&self, _: usize, x: &DVector<f64>, t: f64) -> DVector<f64> {
        fly(x, self.gravity, t)
    }
    fn flight_jacobian(&self, _: usize, _: &DVector<f64>, t: f64) -> DMatrix<f64> {
        fly_jacobian(t)
    }
    /// The first entering root of |p(s)|² - r² (a quartic in s): its real roots from the
    /// companion matrix, each polished by Newton steps on |p(s)| - r; the smallest s > 0
    /// where the distance is falling.
    fn time_to_guard(&self, _: usize, _: usize, x: &DVector<f64>) -> Option<f64> {
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
