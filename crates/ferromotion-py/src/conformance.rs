//! Conformance fixtures (core: `conformance`): the shipped fixtures as JSON
//! text, a fixture document read and validated, and the verdict on an engine's x(T) and J.

use crate::convert::{floats, json_document, matrix_from, DropArg};
use crate::errors::py_result;
use ferromotion_core::conformance::{self as conf, Fixture};
use pyo3::prelude::*;

/// A Jacobian (n_out, n_in) as the core's rows.
fn rows_of(jacobian: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<f64>>> {
    let j = matrix_from(jacobian, "gradient")?;
    Ok((0..j.nrows())
        .map(|r| j.row(r).iter().copied().collect())
        .collect())
}

/// Every shipped fixture, each as its JSON text (the file `ferromotion fixtures export` writes).
#[pyfunction]
fn fixtures() -> PyResult<Vec<(String, String)>> {
    let all = py_result(conf::fixtures())?;
    all.iter()
        .map(|f| {
            let text = serde_json::to_string_pretty(f)
                .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
            Ok((f.name.clone(), text))
        })
        .collect()
}

/// A fixture document read from its JSON text and validated, as a dict; refusals name
/// `path` (default: "fixture document") and the field at fault.
#[pyfunction]
#[pyo3(signature = (text, path = None))]
fn read_fixture<'py>(
    py: Python<'py>,
    text: &str,
    path: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let f = py_result(Fixture::from_json_at(text, path.unwrap_or(conf::DOCUMENT)))?;
    json_document(py, &f)
}

/// The fixture file at `path` read and validated, as a dict (a file over the core's size
/// limit is refused before it is read).
#[pyfunction]
fn read_fixture_file<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
) -> PyResult<Bound<'py, PyAny>> {
    let f = py_result(Fixture::read(&path))?;
    json_document(py, &f)
}

/// The verdict on `state` = x(T) and `jacobian` = J against the fixture in `text`.
#[pyfunction]
fn conformance<'py>(
    py: Python<'py>,
    text: &str,
    state: &Bound<'py, PyAny>,
    jacobian: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let f = py_result(Fixture::from_json(text))?;
    let n = f.initial_state.len();
    let x = floats(state, "state", &[Some(n)])?;
    let rows = rows_of(jacobian)?;
    let c = py_result(conf::conformance(&f, &x, &rows))?;
    json_document(py, &c)
}

/// The verdict on an engine's x(T) and J of `drop` against its exact rigid answer (the drop
/// fixture at `drop`): gradient error, the sign line of dv(T)/dy0, verdict.
#[pyfunction]
fn judge_drop<'py>(
    py: Python<'py>,
    drop: DropArg,
    state: &Bound<'py, PyAny>,
    jacobian: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let x = floats(state, "state", &[Some(2)])?;
    let rows = rows_of(jacobian)?;
    let c = py_result(conf::judge_drop(&drop.0, &x, &rows))?;
    json_document(py, &c)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fixtures, m)?)?;
    m.add_function(wrap_pyfunction!(read_fixture, m)?)?;
    m.add_function(wrap_pyfunction!(read_fixture_file, m)?)?;
    m.add_function(wrap_pyfunction!(conformance, m)?)?;
    m.add_function(wrap_pyfunction!(judge_drop, m)?)
}
