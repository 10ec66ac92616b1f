//! The drop: a point mass falling onto the ground, bouncing with restitution e.

use nalgebra::{DMatrix, DVector};
use serde::Serialize;

use super::exact_from_closed_form;
use super::{Declared, Entry, Spec, GRAVITY, LIMIT_RESTITUTION};
use crate::error::{positive, Result};
use crate::hybrid::{hybrid_jacobian, HybridEvent, HybridOptions, HybridSystem};

/// The drop's definition.
pub static SPEC: Spec = Spec {
    kind: "bouncing_drop",
    class: "BouncingDrop",
    summary: "a point mass falling onto the ground y = 0: one mode, guard y, reset v+ = -e v-",
    state_names: &["y", "v"],
    units: &["m", "m/s"],
    params: &[GRAVITY, LIMIT_RESTITUTION],
    has_exact: true,
};

/// The drop in the registry.
pub const ENTRY: Entry = Entry {
    spec: &SPEC,
    build: |v| {
        Box::new(BouncingDrop {
            gravity: v[0],
            restitution: v[1],
        })
    },
};

/// The drop as a hybrid system: x = (y, v), one mode, guard y, reset v+ = -e·v-.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
pub struct BouncingDrop {
    /// Gravity, m/s².
    pub gravity: f64,
    /// Restitution.
    pub restitution: f64,
}

impl HybridSystem for BouncingDrop {
    fn name(&self) -> String {
        "bouncing drop".into()
    }
    fn validate(&self) -> Result<()> {
        SPEC.check(&self.values())
    }
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&self, _: usize, x: &DVector<f64>) -> DVector<f64> {
        DVector::from_vec(vec![x[1], -self.gravity])
    }
    fn rhs_jacobian(&self, _: usize, _: &DVector<f64>) -> DMatrix<f64> {
        DMatrix::from_row_slice(2, 2, &[0.0, 1.0, 0.0, 0.0])
    }
    fn guard_count(&self, _: usize) -> usize {
        1
    }
    fn guard(&self, _: usize, _: usize, x: &DVector<f64>) -> f64 {
        x[0]
    }
    fn guard_gradient(&self, _: usize, _: usize, _: &DVector<f64>) -> DVector<f64> {
        DVector::from_vec(vec![1.0, 0.0])
    }
    fn reset(&self, mode: usize, _: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        (
            mode,
            DVector::from_vec(vec![x[0], -self.restitution * x[1]]),
        )
    }
    fn reset_jacobian(&self, _: usize, _: usize, _: &DVector<f64>) -> DMatrix<f64> {
        DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, -self.restitution])
    }
}

impl Declared for BouncingDrop {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn values(&self) -> Vec<f64> {
        vec![self.gravity, self.restitution]
    }
    exact_from_closed_form!();
}

impl super::ClosedForm for BouncingDrop {
    fn flight(&self, _: usize, x: &DVector<f64>, t: f64) -> DVector<f64> {
        DVector::from_vec(vec![
            x[0] + x[1] * t - 0.5 * self.gravity * t * t,
            x[1] - self.gravity * t,
        ])
    }
    fn flight_jacobian(&self, _: usize, _: &DVector<f64>, t: f64) -> DMatrix<f64> {
        DMatrix::from_row_slice(2, 2, &[1.0, t, 0.0, 1.0])
    }
    fn time_to_guard(&self, _: usize, _: usize, x: &DVector<f64>) -> Option<f64> {
        super::falling_root(x[0], x[1], -self.gravity)
    }
}

/// `hybrid_jacobian` of the drop arriving at the ground at `speed` (m/s): released from
/// rest at h = v²/(2g), run to the top of its first rebound t1 = (1+e)·v/g with 200
/// steps, using the drop's gravity and its penalty law's stiff-limit restitution. Below
/// `graze_speed` it is refused as grazing, like any other event.
pub fn drop_at_impact_speed(
    drop: &crate::physics::model::Drop,
    speed: f64,
    graze_speed: f64,
) -> Result<DropAtSpeed> {
    let e = crate::physics::contact::penalty::limit_restitution(drop.zeta)?;
    let g = positive("gravity", drop.gravity)?;
    positive("speed", speed)?;
    let height = speed * speed / (2.0 * g);
    let t1 = (1.0 + e) * speed / g;
    let opts = HybridOptions {
        dt: t1 / 200.0,
        graze_speed,
        ..HybridOptions::default()
    };
    let sys = BouncingDrop {
        gravity: g,
        restitution: e,
    };
    let sol = hybrid_jacobian(
        &sys,
        &DVector::from_vec(vec![height, 0.0]),
        0,
        0.0,
        t1,
        &opts,
    )?;
    Ok(DropAtSpeed {
        speed,
        height,
        t1,
        dt: opts.dt,
        x: sol.x.iter().copied().collect(),
        jacobian: sol.jacobian.transpose().iter().copied().collect(),
        events: sol.events,
        probe_gap: sol.probe_gap,
    })
}

/// What [`drop_at_impact_speed`] returns (SI units; the Jacobian row-major).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DropAtSpeed {
    /// Impact speed, m/s.
    pub speed: f64,
    /// Release height, m.
    pub height: f64,
    /// End time (top of the first rebound), s.
    pub t1: f64,
    /// Step used, s.
    pub dt: f64,
    /// x(t1) = [y, v].
    pub x: Vec<f64>,
    /// dx(t1)/dx(0), row-major.
    pub jacobian: Vec<f64>,
    /// The events met.
    pub events: Vec<HybridEvent>,
    /// max |J(dt) - J(dt/2)|.
    pub probe_gap: f64,
}
