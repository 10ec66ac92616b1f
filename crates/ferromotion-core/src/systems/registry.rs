//! The registry: every shipped system by kind, and how to build one from named values.

use std::collections::BTreeMap;

use super::spec::{Declared, Entry, Spec};
use super::{cylinder, drop, rod, slope, switched, vgroove, warm, wheel};
use crate::error::{FerroError, Result};

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
