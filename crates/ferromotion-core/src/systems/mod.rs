//! Hybrid systems defined once: each file here is one system — its state's names and units,
//! its flow, guards and resets (the [`HybridSystem`] trait), its parameters with their
//! ranges (checked by [`Spec::check`], refusals naming the parameter), and its exact answer
//! where it has one (a closed-form flight between events, [`ClosedForm`], composed through
//! the events by [`crate::hybrid::exact_events`]). `hybrid_jacobian`, the conformance fixtures
//! and the Python package (`fm.systems.*`, built from [`catalogue`]) read these definitions;
//! nothing else restates them.
//!
//! Adding a system: its file here (the struct, its [`Spec`], [`HybridSystem`] and
//! [`Declared`]), one line in [`REGISTRY`] (and its `mod`), its tests, and its paragraph in
//! `docs/systems.md`.

pub mod cylinder;
pub mod drop;
pub mod rod;
pub mod slope;
pub mod switched;
pub mod tumbling_cube;
pub mod vgroove;
pub mod warm;
pub mod wheel;

pub use cylinder::Cylinder;
pub use drop::{drop_at_impact_speed, BouncingDrop, DropAtSpeed};
pub use rod::{PenaltyRod, RigidRod};
pub use slope::{slope_exact, SlopeBall};
pub use switched::SwitchedField;
pub use vgroove::VGroove;
pub use warm::WarmStartedDrop;
pub use wheel::RimlessWheel;

use std::collections::BTreeMap;

use nalgebra::DVector;
use serde::Serialize;

use crate::error::{FerroError, Result};
pub use crate::hybrid::exact::ClosedForm;
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

/// Gravity, m/s² (the drop's default), a parameter every falling system shares.
pub const GRAVITY: Param = Param {
    name: "gravity",
    unit: "m/s^2",
    len: 1,
    lo: 0.0,
    lo_closed: false,
    hi: f64::INFINITY,
    hi_closed: false,
    range: "> 0",
    default: Fallback::Values(&[9.81]),
    doc: "gravitational acceleration, along -y",
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

/// One system in the registry: its definition and how to build it from checked values.
pub struct Entry {
    /// The definition.
    pub spec: &'static Spec,
    /// The system at these values (in `spec.params` order, already checked).
    pub build: fn(&[f64]) -> Box<dyn Declared>,
}

/// Every system, in the order the docs list them.
pub const REGISTRY: &[Entry] = &[
    drop::ENTRY,
    slope::ENTRY,
    warm::ENTRY,
    vgroove::ENTRY,
    cylinder::ENTRY,
    switched::ENTRY,
    rod::RIGID_ENTRY,
    rod::PENALTY_ENTRY,
    wheel::ENTRY,
];

/// Every system's definition.
pub fn catalogue() -> Vec<&'static Spec> {
    REGISTRY.iter().map(|e| e.spec).collect()
}

/// The system of kind `kind` (`v_groove`) at the named parameter values (defaults filled in,
/// ranges checked, refusals naming the parameter).
pub fn build(kind: &str, given: &BTreeMap<String, Vec<f64>>) -> Result<Box<dyn Declared>> {
    let Some(entry) = REGISTRY.iter().find(|e| e.spec.kind == kind) else {
        let kinds: Vec<&str> = REGISTRY.iter().map(|e| e.spec.kind).collect();
        return Err(FerroError::Scenario(format!(
            "unknown system `{kind}`: one of {}",
            kinds.join(", ")
        )));
    };
    let values = entry.spec.values(given)?;
    Ok((entry.build)(&values))
}

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
pub fn fly_jacobian(t: f64) -> nalgebra::DMatrix<f64> {
    let mut a = nalgebra::DMatrix::identity(4, 4);
    a[(0, 2)] = t;
    a[(1, 3)] = t;
    a
}

/// The flow of a point under gravity along -y and its Jacobian.
pub fn gravity_rhs(x: &DVector<f64>, g: f64) -> (DVector<f64>, nalgebra::DMatrix<f64>) {
    (
        DVector::from_vec(vec![x[2], x[3], 0.0, -g]),
        fly_jacobian(1.0) - nalgebra::DMatrix::identity(4, 4),
    )
}
