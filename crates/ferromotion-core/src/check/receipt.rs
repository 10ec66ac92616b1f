//! A gradient check's receipt: what was checked, the check itself and who produced it, as one
//! JSON document (schema [`RECEIPT_SCHEMA`]).

use super::report::CheckReport;
use crate::error::{FerroError, Result};
use serde::Serialize;

/// What a check certifies against: the objective and how its gradient was produced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ObjectiveInfo {
    /// The objective, in words (with its formula).
    pub name: String,
    /// Its units.
    pub units: String,
    /// The inputs and anything else a reader needs.
    pub description: String,
    /// How the checked gradient was computed.
    pub route: String,
    /// The integrator behind the objective.
    pub integrator: String,
    /// Its tolerances and parameters (name, value).
    pub tolerances: Vec<(String, f64)>,
}

/// Who produced a receipt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Environment {
    /// ferromotion-core's version.
    pub core_version: String,
    /// Target operating system and architecture of the core build.
    pub target: String,
    /// The Rust compiler that built the core (`rustc --version`, recorded by build.rs).
    pub rustc: String,
    /// Added by the binding that writes the receipt (Python version, git commit, platform).
    pub extra: Vec<(String, String)>,
}

/// A gradient check's receipt: everything needed to judge the verdict later.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Receipt {
    /// Schema identifier of this document.
    pub schema: String,
    /// What was checked.
    pub objective: ObjectiveInfo,
    /// The point x.
    pub x: Vec<f64>,
    /// The claimed gradient (for a Jacobian check: the claimed (m, n) Jacobian row-major, or
    /// empty when a JVP or VJP was claimed).
    pub gradient: Vec<f64>,
    /// For a Jacobian check, its number of outputs m (absent for a gradient check).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outputs: Option<usize>,
    /// The check itself (directions, sweeps, classification, verdict).
    pub report: CheckReport,
    /// Who produced it.
    pub environment: Environment,
}

/// Schema identifier written into every receipt. Version 3 added each direction's `kink` and
/// `scatter`, the report's `guarantee` and the Jacobian check's `outputs`.
pub const RECEIPT_SCHEMA: &str = "ferromotion.receipt/3";

impl Receipt {
    /// A receipt for `report` on `objective` at `x` with claimed `gradient`.
    pub fn new(
        objective: ObjectiveInfo,
        x: Vec<f64>,
        gradient: Vec<f64>,
        report: CheckReport,
    ) -> Receipt {
        Receipt {
            schema: RECEIPT_SCHEMA.into(),
            objective,
            x,
            gradient,
            outputs: None,
            report,
            environment: Environment {
                core_version: env!("CARGO_PKG_VERSION").into(),
                target: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
                rustc: env!("FERROMOTION_RUSTC").into(),
                extra: Vec::new(),
            },
        }
    }

    /// A Jacobian check's receipt: `jacobian` the claimed (m, n) matrix row-major (empty when
    /// a JVP or VJP was claimed), `outputs` = m.
    pub fn for_jacobian(
        objective: ObjectiveInfo,
        x: Vec<f64>,
        jacobian: Vec<f64>,
        outputs: usize,
        report: CheckReport,
    ) -> Receipt {
        Receipt {
            outputs: Some(outputs),
            ..Receipt::new(objective, x, jacobian, report)
        }
    }

    /// The receipt as JSON.
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string_pretty(self).map_err(FerroError::from)
    }

    /// One line: verdict, why, and the worst error.
    pub fn summary(&self) -> String {
        format!(
            "{}: {} — {} (max relative error {:.2e}, median {:.2e}, {} evaluations)",
            self.objective.name,
            self.report.verdict,
            self.report.why,
            self.report.max_error,
            self.report.median_error,
            self.report.evaluations
        )
    }
}
