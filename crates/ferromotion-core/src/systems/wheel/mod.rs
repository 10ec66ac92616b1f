//! McGeer's rimless wheel rolling down a slope: a point mass on massless spokes of length L,
//! 2·half_angle apart, on a slope of angle `slope`. State (θ, ω): the stance spoke's angle from
//! the slope's normal (positive downhill) and its rate. Stance is an inverted pendulum,
//! θ'' = (g/L)·sin(θ + slope); the next spoke lands when θ = half_angle (guard half_angle - θ),
//! and the reset θ+ = θ - 2·half_angle, ω+ = cos(2·half_angle)·ω (angular momentum about the new
//! foot). One impact per step, over many steps.
//!
//! Its exact answer is the return map's: from one post-impact ω to the next,
//! ω'² = c²·(ω² + 4 (g/L) sin(half_angle) sin(slope)), c = cos(2·half_angle), whose fixed point
//! [`RimlessWheel::fixed_point`] has the Floquet multiplier c² ([`RimlessWheel::multiplier`]).
//!
//! Measured: [`multiplier`] reads the N-step return map's derivative off `hybrid_jacobian`
//! (chained through one call per step: right at every horizon; or one call over N impacts);
//! [`routes`], [`penalty`] (a penalty wheel whose stiff limit is this one), [`penalty_fixed`]
//! and [`table`] say what other differentiable routes report (`docs/systems.md`).

pub mod multiplier;
pub mod penalty;
pub mod penalty_fixed;
pub mod routes;
pub mod table;

use nalgebra::{DMatrix, DVector};

use super::{Declared, Entry, Fallback, Param, Spec, GRAVITY};
use crate::error::Result;
use crate::hybrid::HybridSystem;

/// The rimless wheel's definition.
pub static SPEC: Spec = Spec {
    kind: "rimless_wheel",
    class: "RimlessWheel",
    summary: "a rimless wheel rolling down a slope: stance as an inverted pendulum about the foot, the next spoke landing at theta = half_angle, omega+ = cos(2 half_angle) omega-",
    state_names: &["theta", "omega"],
    units: &["rad", "rad/s"],
    params: &[
        Param {
            name: "half_angle",
            unit: "rad",
            len: 1,
            lo: 0.0,
            lo_closed: false,
            hi: std::f64::consts::FRAC_PI_4,
            hi_closed: false,
            range: "(0, pi/4)",
            default: Fallback::Values(&[0.3]),
            doc: "half the angle between two spokes",
        },
        Param {
            name: "slope",
            unit: "rad",
            len: 1,
            lo: 0.0,
            lo_closed: false,
            hi: std::f64::consts::FRAC_PI_2,
            hi_closed: false,
            range: "(0, pi/2)",
            default: Fallback::Values(&[0.08]),
            doc: "angle of the slope",
        },
        Param {
            name: "length",
            unit: "m",
            len: 1,
            lo: 0.0,
            lo_closed: false,
            hi: f64::INFINITY,
            hi_closed: false,
            range: "> 0",
            default: Fallback::Values(&[1.0]),
            doc: "spoke length",
        },
        GRAVITY,
    ],
    has_exact: false,
};

/// The rimless wheel in the registry.
pub const ENTRY: Entry = Entry {
    spec: &SPEC,
    build: |v| {
        Box::new(RimlessWheel {
            half_angle: v[0],
            slope: v[1],
            length: v[2],
            gravity: v[3],
        })
    },
};

/// The rimless wheel (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RimlessWheel {
    /// Half the angle between spokes, rad.
    pub half_angle: f64,
    /// Slope angle, rad.
    pub slope: f64,
    /// Spoke length, m.
    pub length: f64,
    /// Gravity, m/s².
    pub gravity: f64,
}

impl RimlessWheel {
    /// The post-impact state of the periodic gait: (-half_angle, ω*),
    /// ω*² = c²·4 (g/L) sin(half_angle) sin(slope) / (1 - c²).
    pub fn fixed_point(&self) -> [f64; 2] {
        let c = libm::cos(2.0 * self.half_angle);
        let k =
            4.0 * self.gravity / self.length * libm::sin(self.half_angle) * libm::sin(self.slope);
        [-self.half_angle, libm::sqrt(c * c * k / (1.0 - c * c))]
    }

    /// The return map's Floquet multiplier at the fixed point: dω'/dω = c²·ω/ω' = c².
    pub fn multiplier(&self) -> f64 {
        let c = libm::cos(2.0 * self.half_angle);
        c * c
    }

    /// The closed form, its parameters checked first: the fixed point and the multiplier.
    pub fn closed_form(&self) -> Result<ClosedAnswer> {
        self.validate()?;
        Ok(ClosedAnswer {
            fixed_point: self.fixed_point(),
            multiplier: self.multiplier(),
        })
    }
}

/// [`RimlessWheel::closed_form`]'s answer.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ClosedAnswer {
    /// The post-impact state of the periodic gait (θ, ω) = (-half_angle, ω*).
    pub fixed_point: [f64; 2],
    /// The Floquet multiplier cos²(2·half_angle).
    pub multiplier: f64,
}

impl HybridSystem for RimlessWheel {
    fn name(&self) -> String {
        "rimless wheel".into()
    }
    fn validate(&self) -> Result<()> {
        SPEC.check(&self.values())
    }
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&self, _: usize, x: &DVector<f64>) -> DVector<f64> {
        let w2 = self.gravity / self.length;
        DVector::from_vec(vec![x[1], w2 * libm::sin(x[0] + self.slope)])
    }
    fn rhs_jacobian(&self, _: usize, x: &DVector<f64>) -> DMatrix<f64> {
        let w2 = self.gravity / self.length;
        DMatrix::from_row_slice(2, 2, &[0.0, 1.0, w2 * libm::cos(x[0] + self.slope), 0.0])
    }
    fn guard_count(&self, _: usize) -> usize {
        1
    }
    fn guard(&self, _: usize, _: usize, x: &DVector<f64>) -> f64 {
        self.half_angle - x[0]
    }
    fn guard_gradient(&self, _: usize, _: usize, _: &DVector<f64>) -> DVector<f64> {
        DVector::from_vec(vec![-1.0, 0.0])
    }
    fn reset(&self, mode: usize, _: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        let c = libm::cos(2.0 * self.half_angle);
        (
            mode,
            DVector::from_vec(vec![x[0] - 2.0 * self.half_angle, c * x[1]]),
        )
    }
    fn reset_jacobian(&self, _: usize, _: usize, _: &DVector<f64>) -> DMatrix<f64> {
        let c = libm::cos(2.0 * self.half_angle);
        DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, c])
    }
}

impl Declared for RimlessWheel {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn values(&self) -> Vec<f64> {
        vec![self.half_angle, self.slope, self.length, self.gravity]
    }
}
