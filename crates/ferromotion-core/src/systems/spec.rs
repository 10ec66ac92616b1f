//! What a system declares once: its parameters with units, ranges and defaults ([`Param`],
//! [`Spec`]), and the [`Declared`] trait every system implements beside [`HybridSystem`].

use std::collections::BTreeMap;

use nalgebra::DVector;
use serde::Serialize;

use crate::error::{FerroError, Result};
use crate::hybrid::exact::ClosedForm;
use crate::hybrid::{HybridOptions, HybridSolution, HybridSystem};

/// One parameter of a system: its name as the user spells it, unit, allowed range and
/// default.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Param {
    /// Name (the Python keyword, the fixture's key).
    pub name: &'static str,
    /// SI unit (`1` when dimensionless).
    pub unit: &'static str,
    /// How many numbers it holds (1: a scalar; 2: a vector in the plane).
    pub len: usize,
    /// Lower bound.
    pub lo: f64,
    /// Whether `lo` itself is allowed.
    pub lo_closed: bool,
    /// Upper bound.
    pub hi: f64,
    /// Whether `hi` itself is allowed.
    pub hi_closed: bool,
    /// The range in words, for messages (`[0, 1]`, `(0, pi) rad`).
    pub range: &'static str,
    /// Default value.
    #[serde(skip)]
    pub default: Fallback,
    /// What it is, in a few words.
    pub doc: &'static str,
}

impl Param {
    /// Whether `v` is finite and in range.
    pub fn admits(&self, v: f64) -> bool {
        let above = if self.lo_closed {
            v >= self.lo
        } else {
            v > self.lo
        };
        let below = if self.hi_closed {
            v <= self.hi
        } else {
            v < self.hi
        };
        v.is_finite() && above && below
    }
}

/// A parameter's default.
#[derive(Debug, Clone, Copy)]
pub enum Fallback {
    /// None: the parameter is required.
    Required,
    /// These numbers (`len` of them).
    Values(&'static [f64]),
    /// Computed from the core's other defaults.
    Computed(fn() -> f64),
}

impl Fallback {
    /// The default's numbers (`None`: required).
    pub fn numbers(&self) -> Option<Vec<f64>> {
        match self {
            Fallback::Required => None,
            Fallback::Values(v) => Some(v.to_vec()),
            Fallback::Computed(f) => Some(vec![f()]),
        }
    }
}

/// A positive scalar, required (a length, a mass): the base of such parameters.
pub const POSITIVE: Param = Param {
    name: "",
    unit: "",
    len: 1,
    lo: 0.0,
    lo_closed: false,
    hi: f64::INFINITY,
    hi_closed: false,
    range: "> 0",
    default: Fallback::Required,
    doc: "",
};

/// Gravity, m/s² (the drop's default), a parameter every falling system shares.
pub const GRAVITY: Param = Param {
    name: "gravity",
    unit: "m/s^2",
    default: Fallback::Values(&[9.81]),
    doc: "gravitational acceleration, along -y",
    ..POSITIVE
};

/// A scalar with no bound (a field's component).
pub const ANY: Param = Param {
    name: "",
    unit: "1",
    len: 1,
    lo: f64::NEG_INFINITY,
    lo_closed: false,
    hi: f64::INFINITY,
    hi_closed: false,
    range: "(-inf, inf)",
    default: Fallback::Required,
    doc: "",
};

/// Restitution on the normal velocity, required.
pub const RESTITUTION: Param = Param {
    name: "restitution",
    unit: "1",
    len: 1,
    lo: 0.0,
    lo_closed: true,
    hi: 1.0,
    hi_closed: true,
    range: "[0, 1]",
    default: Fallback::Required,
    doc: "restitution on the normal velocity",
};

/// Restitution with the drop's default: the push-only penalty law's stiff limit at the
/// drop's damping ratio (so a shipped system bounces like the lab's rigid reference).
pub const LIMIT_RESTITUTION: Param = Param {
    default: Fallback::Computed(|| {
        crate::physics::contact::penalty::limit_restitution(
            crate::physics::model::Drop::default().zeta,
        )
        .unwrap_or(f64::NAN)
    }),
    ..RESTITUTION
};

/// What a system is: the definition every door reads.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Spec {
    /// Machine name (`v_groove`): the `system` key of its documents.
    pub kind: &'static str,
    /// Class name in Python (`VGroove`).
    pub class: &'static str,
    /// A sentence for messages and docs.
    pub summary: &'static str,
    /// Names of x's components, in order.
    pub state_names: &'static [&'static str],
    /// Their units.
    pub units: &'static [&'static str],
    /// Parameters, in the order of the Python signature.
    pub params: &'static [Param],
    /// Whether [`Declared::exact`] gives an exact answer.
    pub has_exact: bool,
}

impl Spec {
    /// Refuse the first parameter out of range (or of the wrong length), naming it with its
    /// range; `values` flat, in `params` order.
    pub fn check(&self, values: &[f64]) -> Result<()> {
        let want: usize = self.params.iter().map(|p| p.len).sum();
        if values.len() != want {
            return Err(FerroError::InvalidParameter {
                name: "parameters",
                value: values.len() as f64,
                limit: format!("{} takes {want} numbers", self.class),
            });
        }
        let mut at = 0;
        for p in self.params {
            for &v in &values[at..at + p.len] {
                if !p.admits(v) {
                    return Err(FerroError::InvalidParameter {
                        name: p.name,
                        value: v,
                        limit: format!("must be finite and in {} ({})", p.range, p.unit),
                    });
                }
            }
            at += p.len;
        }
        Ok(())
    }

    /// The values in order, flat, from a document's `name -> numbers` map, defaults filled
    /// in; an unknown or missing name, or one of the wrong length, is refused.
    pub fn values(&self, given: &BTreeMap<String, Vec<f64>>) -> Result<Vec<f64>> {
        if let Some(k) = given
            .keys()
            .find(|k| !self.params.iter().any(|p| p.name == *k))
        {
            let names: Vec<&str> = self.params.iter().map(|p| p.name).collect();
            return Err(FerroError::Scenario(format!(
                "unknown parameter `{k}` of {}: it has {}",
                self.class,
                names.join(", ")
            )));
        }
        let mut values = Vec::new();
        for p in self.params {
            let v = match (given.get(p.name), p.default.numbers()) {
                (Some(v), _) => v.clone(),
                (None, Some(d)) => d,
                (None, None) => {
                    return Err(FerroError::Scenario(format!(
                        "{} needs the parameter `{}` ({}, {})",
                        self.class, p.name, p.unit, p.range
                    )))
                }
            };
            if v.len() != p.len {
                return Err(FerroError::InvalidParameter {
                    name: p.name,
                    value: v.len() as f64,
                    limit: format!("must hold {} number(s)", p.len),
                });
            }
            values.extend(v);
        }
        self.check(&values)?;
        Ok(values)
    }

    /// The definition as a JSON document (what Python builds `fm.systems.*` from).
    pub fn document(&self) -> serde_json::Value {
        let params: Vec<serde_json::Value> = self
            .params
            .iter()
            .map(|p| {
                let mut v = serde_json::to_value(p).unwrap_or_default();
                v["default"] = serde_json::json!(p.default.numbers());
                v["lo"] = serde_json::json!(p.lo.is_finite().then_some(p.lo));
                v["hi"] = serde_json::json!(p.hi.is_finite().then_some(p.hi));
                v
            })
            .collect();
        serde_json::json!({
            "kind": self.kind,
            "class": self.class,
            "summary": self.summary,
            "state_names": self.state_names,
            "units": self.units,
            "params": params,
            "has_exact": self.has_exact,
        })
    }
}

/// A system defined here: its [`Spec`], its parameter values and, where it has one, its
/// exact answer.
pub trait Declared: HybridSystem + Send + Sync {
    /// The definition.
    fn spec(&self) -> &'static Spec;
    /// Parameter values in the order of `spec().params`.
    fn values(&self) -> Vec<f64>;
    /// The exact answer from x0 in `mode0` over [t0, t1] (`None`: the system has none).
    fn exact(
        &self,
        _x0: &DVector<f64>,
        _mode0: usize,
        _t0: f64,
        _t1: f64,
    ) -> Option<Result<HybridSolution>> {
        None
    }
}

/// The exact answer of a system with a closed-form flight: [`crate::hybrid::exact_events`]
/// at the default options (what `Declared::exact` returns for such systems).
pub fn closed_form_exact<S: ClosedForm>(
    sys: &S,
    x0: &DVector<f64>,
    mode0: usize,
    t0: f64,
    t1: f64,
) -> Option<Result<HybridSolution>> {
    Some(crate::hybrid::exact_events(
        sys,
        x0,
        mode0,
        t0,
        t1,
        &HybridOptions::default(),
    ))
}

/// `Declared::exact` of a system with a closed-form flight ([`ClosedForm`]): its exact answer
/// is [`closed_form_exact`]'s. Written once here; a system's `impl Declared` says
/// `exact_from_closed_form!();` beside its `spec` and `values`.
macro_rules! exact_from_closed_form {
    () => {
        fn exact(
            &self,
            x0: &nalgebra::DVector<f64>,
            mode0: usize,
            t0: f64,
            t1: f64,
        ) -> Option<crate::error::Result<crate::hybrid::HybridSolution>> {
            crate::systems::closed_form_exact(self, x0, mode0, t0, t1)
        }
    };
}
pub(crate) use exact_from_closed_form;

/// One system in the registry: its definition and how to build it from checked values.
pub struct Entry {
    /// The definition.
    pub spec: &'static Spec,
    /// The system at these values (in `spec.params` order, already checked).
    pub build: fn(&[f64]) -> Box<dyn Declared>,
}
