//! The drop with a warm-started contact solver: hidden state, refused.

use nalgebra::{DMatrix, DVector};

use super::{BouncingDrop, Declared, Entry, Spec};
use crate::error::Result;
use crate::hybrid::HybridSystem;

/// The drop whose contact is solved by a warm-started iterative solver: its result
/// depends on the previous solve, which x does not carry. `hybrid_jacobian` refuses it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
pub struct WarmStartedDrop(pub BouncingDrop);

/// The warm-started drop's definition (the drop's parameters).
pub static SPEC: Spec = Spec {
    kind: "warm_started_drop",
    class: "WarmStartedDrop",
    summary: "the drop whose contact impulse comes from a warm-started iterative solver: hidden state, refused",
    has_exact: false,
    ..super::drop::SPEC
};

/// The warm-started drop in the registry.
pub const ENTRY: Entry = Entry {
    spec: &SPEC,
    build: |v| {
        Box::new(WarmStartedDrop(BouncingDrop {
            gravity: v[0],
            restitution: v[1],
        }))
    },
};

impl HybridSystem for WarmStartedDrop {
    fn name(&self) -> String {
        "drop with a warm-started contact solver".into()
    }
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&self, m: usize, x: &DVector<f64>) -> DVector<f64> {
        self.0.rhs(m, x)
    }
    fn rhs_jacobian(&self, m: usize, x: &DVector<f64>) -> DMatrix<f64> {
        self.0.rhs_jacobian(m, x)
    }
    fn guard_count(&self, m: usize) -> usize {
        self.0.guard_count(m)
    }
    fn guard(&self, m: usize, i: usize, x: &DVector<f64>) -> f64 {
        self.0.guard(m, i, x)
    }
    fn guard_gradient(&self, m: usize, i: usize, x: &DVector<f64>) -> DVector<f64> {
        self.0.guard_gradient(m, i, x)
    }
    fn reset(&self, m: usize, i: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        self.0.reset(m, i, x)
    }
    fn reset_jacobian(&self, m: usize, i: usize, x: &DVector<f64>) -> DMatrix<f64> {
        self.0.reset_jacobian(m, i, x)
    }
    fn validate(&self) -> Result<()> {
        self.0.validate()
    }
    fn hidden_state(&self) -> Option<String> {
        Some("the contact impulse is warm-started from the previous step's solve".into())
    }
}

impl Declared for WarmStartedDrop {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn values(&self) -> Vec<f64> {
        self.0.values()
    }
}
