//! `ferromotion._core`: the PyO3 layer over `ferromotion-core`. Private; the public API is
//! the `ferromotion` package, which wraps these functions and carries the docstrings.
//!
//! One file per topic of the core (`routes`, `readouts`, `sweep`, `workbench`, `descent`,
//! `hybrid`, `check`, `conformance`, `fit`, `quadruped`), as the package's modules are;
//! `convert.rs` holds the conversions, `errors.rs` the exception tree. Every function converts its input, calls
//! the core with the GIL released (`py.detach`), and converts the output.

mod check;
mod conformance;
mod convert;
mod cube;
mod descent;
mod errors;
mod fit;
mod hybrid;
mod hybrid_step;
mod quadruped;
mod readouts;
mod routes;
mod sweep;
mod wheel;
mod workbench;

use convert::document;
use ferromotion_core::hybrid::{HybridOptions, StepOptions};
use ferromotion_core::{self as fm, experiments::descent as experiment};
use ferromotion_quadruped::QuadrupedExperiment;
use pyo3::prelude::*;

/// The core's defaults, one place, so that the Python signatures show them without
/// restating them (`fm.defaults()`).
fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let mut descent =
        serde_json::to_value(experiment::Problem::default()).map_err(fm::FerroError::from);
    if let Ok(serde_json::Value::Object(d)) = &mut descent {
        d.insert("converged".into(), experiment::CONVERGED.into());
        d.insert("max_iterations".into(), experiment::MAX_ITERATIONS.into());
    }
    // The shared routes' defaults (the in-browser package's too), then the Python-only ones.
    let shared = serde_json::to_value(fm::defaults::Defaults::default());
    let mut d = errors::py_result(shared.map_err(fm::FerroError::from))?;
    let extra = serde_json::json!({
        "exponent_range": fm::lab::sweep::EXPONENT_RANGE,
        "lands_below": fm::lab::workbench::LANDS_BELOW,
        "descent": errors::py_result(descent)?,
        "fit": ferromotion_core::fit::FitOptions::default(),
        "quadruped": QuadrupedExperiment::default(),
        "hybrid": HybridOptions::default(),
        "hybrid_step": StepOptions::default(),
    });
    if let (serde_json::Value::Object(d), serde_json::Value::Object(extra)) = (&mut d, extra) {
        d.extend(extra);
    }
    document(py, &d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DEFAULTS", defaults(m.py())?)?;
    errors::register(m)?;
    routes::register(m)?;
    readouts::register(m)?;
    sweep::register(m)?;
    workbench::register(m)?;
    descent::register(m)?;
    hybrid::register(m)?;
    hybrid_step::register(m)?;
    check::register(m)?;
    conformance::register(m)?;
    fit::register(m)?;
    quadruped::register(m)?;
    wheel::register(m)?;
    cube::register(m)
}
