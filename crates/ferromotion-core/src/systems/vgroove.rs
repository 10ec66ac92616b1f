//! A ball in a V-groove: two frictionless walls meeting at the origin, free space
//! y >= |x|·cot(angle/2). Dropped on the axis it meets both walls at the vertex at once.

use nalgebra::{DMatrix, DVector};

use super::{bounce, fly, fly_jacobian, gravity_rhs, Declared, Entry, Fallback, Param, Spec};
use super::{GRAVITY, RESTITUTION};
use crate::error::Result;
use crate::hybrid::{HybridSolution, HybridSystem};

/// The V-groove's definition.
pub static SPEC: Spec = Spec {
    kind: "v_groove",
    class: "VGroove",
    summary: "a ball in a V-groove of opening `angle` (free space y >= |x| cot(angle/2)), gravity along -y; guard i: n_i.p (n_0 = (cos(angle/2), sin(angle/2)), n_1 = (-cos(angle/2), sin(angle/2))), reset v+ = v- - (1+e)(n_i.v-) n_i",
    state_names: &["p_x", "p_y", "v_x", "v_y"],
    units: &["m", "m", "m/s", "m/s"],
    params: &[
        Param {
            name: "angle",
            unit: "rad",
            len: 1,
            lo: 0.0,
            lo_closed: false,
            hi: std::f64::consts::PI,
            hi_closed: false,
            range: "(0, pi)",
            default: Fallback::Required,
            doc: "opening angle of the groove",
        },
        RESTITUTION,
        GRAVITY,
    ],
    has_exact: true,
};

/// The V-groove in the registry.
pub const ENTRY: Entry = Entry {
    spec: &SPEC,
    build: |v| {
        Box::new(VGroove {
            angle: v[0],
            restitution: v[1],
            gravity: v[2],
        })
    },
};

/// A ball in a V-groove (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
pub struct VGroove {
    /// Opening angle, rad, in (0, pi).
    pub angle: f64,
    /// Restitution on the normal velocity.
    pub restitution: f64,
    /// Gravity, m/s².
    pub gravity: f64,
}

impl VGroove {
    /// Unit normal of wall i (into the free space).
    pub fn normal(&self, i: usize) -> (f64, f64) {
        let (c, s) = (libm::cos(0.5 * self.angle), libm::sin(0.5 * self.angle));
        if i == 0 {
            (c, s)
        } else {
            (-c, s)
        }
    }
}

impl HybridSystem for VGroove {
    fn name(&self) -> String {
        "ball in a V-groove".into()
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
        2
    }
    fn guard(&self, _: usize, i: usize, x: &DVector<f64>) -> f64 {
        let n = self.normal(i);
        n.0 * x[0] + n.1 * x[1]
    }
    fn guard_gradient(&self, _: usize, i: usize, _: &DVector<f64>) -> DVector<f64> {
        let n = self.normal(i);
        DVector::from_vec(vec![n.0, n.1, 0.0, 0.0])
    }
    fn reset(&self, mode: usize, i: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        (mode, bounce(x, self.normal(i), self.restitution))
    }
    fn reset_jacobian(&self, _: usize, i: usize, _: &DVector<f64>) -> DMatrix<f64> {
        let (nx, ny) = self.normal(i);
        let c = 1.0 + self.restitution;
        let mut r = DMatrix::identity(4, 4);
        r[(2, 2)] -= c * nx * nx;
        r[(2, 3)] -= c * nx * ny;
        r[(3, 2)] -= c * ny * nx;
        r[(3, 3)] -= c * ny * ny;
        r
    }
}

impl Declared for VGroove {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn values(&self) -> Vec<f64> {
        vec![self.angle, self.restitution, self.gravity]
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

impl super::ClosedForm for VGroove {
    fn flight(&self, _: usize, x: &DVector<f64>, t: f64) -> DVector<f64> {
        fly(x, self.gravity, t)
    }
    fn flight_jacobian(&self, _: usize, _: &DVector<f64>, t: f64) -> DMatrix<f64> {
        fly_jacobian(t)
    }
    fn time_to_guard(&self, _: usize, i: usize, x: &DVector<f64>) -> Option<f64> {
        let n = self.normal(i);
        super::falling_root(
            n.0 * x[0] + n.1 * x[1],
            n.0 * x[2] + n.1 * x[3],
            -self.gravity * n.1,
        )
    }
}
