//! A piecewise-constant field in the plane switched by two guards, x1 = 0 and x2 = 0 (each
//! crossed when its coordinate reaches 0 from above): the flow is continuous, and where both
//! guards are crossed at once its derivative has one linear piece per order of the switches.

use nalgebra::{DMatrix, DVector};

use super::exact_from_closed_form;
use super::{Declared, Entry, Fallback, Param, Spec, ANY};
use crate::error::Result;
use crate::hybrid::HybridSystem;

/// The switched field's definition.
pub static SPEC: Spec = Spec {
    kind: "switched_field",
    class: "SwitchedField",
    summary: "x' = a constant field chosen by which of the guards x1 = 0, x2 = 0 have been crossed (from above): `before` neither, `after_x1`, `after_x2`, `after_both`; modes 0..3 (bit 0: x1 crossed, bit 1: x2)",
    state_names: &["x1", "x2"],
    units: &["1", "1"],
    params: &[
        Param {
            name: "before",
            len: 2,
            default: Fallback::Values(&[-1.0, -1.0]),
            doc: "the field before either switch",
            ..ANY
        },
        Param {
            name: "after_x1",
            len: 2,
            default: Fallback::Values(&[-1.0, -2.0]),
            doc: "the field after x1's switch alone",
            ..ANY
        },
        Param {
            name: "after_x2",
            len: 2,
            default: Fallback::Values(&[-2.0, -1.0]),
            doc: "the field after x2's switch alone",
            ..ANY
        },
        Param {
            name: "after_both",
            len: 2,
            default: Fallback::Values(&[-3.0, -3.0]),
            doc: "the field after both switches",
            ..ANY
        },
    ],
    has_exact: true,
};

/// The switched field in the registry.
pub const ENTRY: Entry = Entry {
    spec: &SPEC,
    build: |v| Box::new(SwitchedField::from_values(v)),
};

/// The switched field (see the module docs): the four constant fields by mode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SwitchedField {
    /// Fields by mode: [before, after_x1, after_x2, after_both].
    pub fields: [[f64; 2]; 4],
}

impl SwitchedField {
    /// From the flat values (before, after_x1, after_x2, after_both).
    pub fn from_values(v: &[f64]) -> SwitchedField {
        let f = |k: usize| [v[2 * k], v[2 * k + 1]];
        SwitchedField {
            fields: [f(0), f(1), f(2), f(3)],
        }
    }

    fn armed(mode: usize, i: usize) -> bool {
        mode & (1 << i) == 0
    }
}

/// A crossed guard's value: positive and constant, so it never fires again.
const DISARMED: f64 = 1.0;

impl HybridSystem for SwitchedField {
    fn name(&self) -> String {
        "switched field".into()
    }
    fn validate(&self) -> Result<()> {
        SPEC.check(&self.values())
    }
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&self, mode: usize, _: &DVector<f64>) -> DVector<f64> {
        let f = self.fields[mode & 3];
        DVector::from_vec(vec![f[0], f[1]])
    }
    fn rhs_jacobian(&self, _: usize, _: &DVector<f64>) -> DMatrix<f64> {
        DMatrix::zeros(2, 2)
    }
    fn guard_count(&self, _: usize) -> usize {
        2
    }
    fn guard(&self, mode: usize, i: usize, x: &DVector<f64>) -> f64 {
        if Self::armed(mode, i) {
            x[i]
        } else {
            DISARMED
        }
    }
    fn guard_gradient(&self, mode: usize, i: usize, _: &DVector<f64>) -> DVector<f64> {
        let mut g = DVector::zeros(2);
        if Self::armed(mode, i) {
            g[i] = 1.0;
        }
        g
    }
    fn reset(&self, mode: usize, i: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        (mode | (1 << i), x.clone())
    }
    fn reset_jacobian(&self, _: usize, _: usize, _: &DVector<f64>) -> DMatrix<f64> {
        DMatrix::identity(2, 2)
    }
}

impl Declared for SwitchedField {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn values(&self) -> Vec<f64> {
        self.fields.iter().flatten().copied().collect()
    }
    exact_from_closed_form!();
}

impl super::ClosedForm for SwitchedField {
    fn flight(&self, mode: usize, x: &DVector<f64>, t: f64) -> DVector<f64> {
        x + self.rhs(mode, x) * t
    }
    fn flight_jacobian(&self, _: usize, _: &DVector<f64>, _: f64) -> DMatrix<f64> {
        DMatrix::identity(2, 2)
    }
    fn time_to_guard(&self, mode: usize, i: usize, x: &DVector<f64>) -> Option<f64> {
        let f = self.fields[mode & 3][i];
        (Self::armed(mode, i) && x[i] >= 0.0 && f < 0.0).then(|| x[i] / (-f))
    }
}
