//! The drop and its routes (core: `physics/`, `lab/scenario.rs`). Each route's answer
//! leaves as the core's `RouteResult` document: `state` [y, v], `jacobian` flat row-major,
//! the cost counters, `probe_gap`/`probe_dependent` (tolerance), `step_stability` (fixed) and
//! the call's wall time (`wall_s`, `wall_resolution_s`: the core times it with our clock).

use crate::convert::{clock, document, json_document, DropArg, Options};
use crate::errors::py_result;
use ferromotion_core as fm;
use pyo3::prelude::*;

#[pyfunction]
fn validate_drop(drop: DropArg) {
    // Extracting a `DropArg` runs the core's validation; nothing else to do.
    let _ = drop;
}

#[pyfunction]
fn impact_speed(drop: DropArg) -> f64 {
    drop.0.impact_speed()
}

#[pyfunction]
fn first_impact_time(drop: DropArg) -> f64 {
    drop.0.first_impact_time()
}

/// A route: `name(drop, <stiffness, step as it takes them>, options=None)`, `options` its
/// core options struct, the answer the core's document with the call's wall time.
macro_rules! route {
    ($name:ident($($arg:ident),*), $options:ty) => {
        #[pyfunction]
        #[pyo3(signature = (drop, $($arg,)* options=None))]
        fn $name<'py>(
            py: Python<'py>,
            drop: DropArg,
            $($arg: f64,)*
            options: Option<Options<$options>>,
        ) -> PyResult<Bound<'py, PyAny>> {
            let o = crate::convert::options(options);
            let run = || fm::lab::clock::timed_route(&clock(), || fm::$name(&drop.0, $($arg,)* &o));
            document(py, &py_result(py.detach(run))?)
        }
    };
}

route!(exact(), fm::ExactOptions);
route!(fixed(k, dt), fm::FixedOptions);
route!(corrected(k, dt), fm::CorrectedOptions);
route!(flow(k), fm::FlowOptions);
route!(tolerance(k), fm::ToleranceOptions);
route!(rk4(k, dt), fm::Rk4Options);

/// Every route on one scenario document (JSON text: the golden files' format).
#[pyfunction]
fn evaluate<'py>(py: Python<'py>, scenario: &str) -> PyResult<Bound<'py, PyAny>> {
    let e = py_result(py.detach(|| {
        fm::lab::scenario::Scenario::from_json(scenario)
            .and_then(|sc| fm::lab::scenario::evaluate(&sc))
    }))?;
    json_document(py, &e)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate_drop, m)?)?;
    m.add_function(wrap_pyfunction!(impact_speed, m)?)?;
    m.add_function(wrap_pyfunction!(first_impact_time, m)?)?;
    m.add_function(wrap_pyfunction!(exact, m)?)?;
    m.add_function(wrap_pyfunction!(fixed, m)?)?;
    m.add_function(wrap_pyfunction!(corrected, m)?)?;
    m.add_function(wrap_pyfunction!(flow, m)?)?;
    m.add_function(wrap_pyfunction!(tolerance, m)?)?;
    m.add_function(wrap_pyfunction!(rk4, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)
}
