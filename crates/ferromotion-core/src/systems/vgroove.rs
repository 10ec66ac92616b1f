//! A ball in a V-groove: two frictionless walls meeting at the origin, free space
//! y >= |x|·cot(angle/2). Dropped on the axis it meets both walls at the vertex at once.

use nalgebra::DVector;

use super::exact_from_closed_form;
use super::{
    Ball, Declared, Entry, Fallback, Param, Spec, BALL_STATE, BALL_UNITS, GRAVITY, RESTITUTION,
};

/// The V-groove's definition.
pub static SPEC: Spec = Spec {
    kind: "v_groove",
    class: "VGroove",
    summary: "a ball in a V-groove of opening `angle` (free space y >= |x| cot(angle/2)), gravity along -y; guard i: n_i.p (n_0 = (cos(angle/2), sin(angle/2)), n_1 = (-cos(angle/2), sin(angle/2))), reset v+ = v- - (1+e)(n_i.v-) n_i",
    state_names: BALL_STATE,
    units: BALL_UNITS,
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

impl Ball for VGroove {
    const NAME: &'static str = "ball in a V-groove";
    fn gravity(&self) -> f64 {
        self.gravity
    }
    fn restitution(&self) -> f64 {
        self.restitution
    }
    fn surfaces(&self) -> usize {
        2
    }
    fn surface_normal(&self, i: usize, _: &DVector<f64>) -> (f64, f64) {
        self.normal(i)
    }
}

impl Declared for VGroove {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn values(&self) -> Vec<f64> {
        vec![self.angle, self.restitution, self.gravity]
    }
    exact_from_closed_form!();
}
