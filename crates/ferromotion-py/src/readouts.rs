//! The lab's readouts (core: `lab/readout.rs`), each as the core's serde document.

use crate::convert::{document, json_document, DropArg, Options};
use crate::errors::py_result;
use ferromotion_core::{self as fm, lab::readout};
use numpy::PyArray1;
use pyo3::prelude::*;

/// A readout: `name(drop, <args>)`, the answer the core's document.
macro_rules! readout {
    ($name:ident($($arg:ident),*) = $core:path) => {
        #[pyfunction]
        fn $name<'py>(py: Python<'py>, drop: DropArg, $($arg: f64),*) -> PyResult<Bound<'py, PyAny>> {
            document(py, &py_result(py.detach(|| $core(&drop.0, $($arg),*)))?)
        }
    };
}

readout!(blame(k, dt) = fm::blame);
readout!(divergence_exponent(dt) = fm::divergence_exponent);
readout!(contact_share_exponent() = readout::contact_share_exponent);
readout!(dt_refinement(k, base_dt) = fm::dt_refinement);
readout!(step_stability(k, dt) = fm::physics::integrate::fixed::drop_step_stability);

/// A least-squares line through (log10 x, log10 y): the core's fit, for exponents measured
/// outside the core (an engine audit's gradient errors against k).
#[pyfunction]
fn fit_loglog(py: Python<'_>, x: Vec<f64>, y: Vec<f64>) -> PyResult<Bound<'_, PyAny>> {
    document(py, &py_result(readout::fit_loglog(&x, &y))?)
}

/// Every route at one force-evaluation budget, and the probe-size trap (core:
/// `experiments/budget.rs`); `options` is the core's `BudgetOptions`.
#[pyfunction]
#[pyo3(signature = (drop, options=None))]
fn equal_budget<'py>(
    py: Python<'py>,
    drop: DropArg,
    options: Option<Options<fm::BudgetOptions>>,
) -> PyResult<Bound<'py, PyAny>> {
    let o = crate::convert::options(options);
    // As JSON values (lists, not tuples): the same document `ferromotion audit --json` prints,
    // each row's route call timed with our clock (`wall_s`).
    let run = || fm::equal_budget_timed(&drop.0, &o, Some(&crate::convert::clock()));
    json_document(py, &py_result(py.detach(run))?)
}

#[pyfunction]
fn limit_restitution(drop: DropArg) -> PyResult<f64> {
    py_result(fm::limit_restitution(drop.0.zeta))
}

#[pyfunction]
#[pyo3(signature = (drop, k, speed=None))]
fn realised_restitution(
    py: Python<'_>,
    drop: DropArg,
    k: f64,
    speed: Option<f64>,
) -> PyResult<Option<f64>> {
    let speed = speed.unwrap_or_else(|| drop.0.impact_speed());
    py_result(py.detach(|| fm::realised_restitution(&drop.0, k, speed)))
}

#[pyfunction]
#[pyo3(signature = (drop, speed=None))]
fn time_of_impact_term(drop: DropArg, speed: Option<f64>) -> PyResult<f64> {
    let d = drop.0;
    py_result(d.time_of_impact_term(speed.unwrap_or_else(|| d.impact_speed())))
}

#[pyfunction]
fn matched_dt(drop: DropArg, k: f64) -> PyResult<f64> {
    py_result(readout::matched_dt(&drop.0, k))
}

#[pyfunction]
fn log_grid(
    py: Python<'_>,
    lo: f64,
    hi: f64,
    per_decade: u32,
) -> PyResult<Bound<'_, PyArray1<f64>>> {
    let grid = py_result(readout::log_grid(lo, hi, per_decade))?;
    Ok(PyArray1::from_vec(py, grid))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(blame, m)?)?;
    m.add_function(wrap_pyfunction!(divergence_exponent, m)?)?;
    m.add_function(wrap_pyfunction!(fit_loglog, m)?)?;
    m.add_function(wrap_pyfunction!(equal_budget, m)?)?;
    m.add_function(wrap_pyfunction!(contact_share_exponent, m)?)?;
    m.add_function(wrap_pyfunction!(dt_refinement, m)?)?;
    m.add_function(wrap_pyfunction!(step_stability, m)?)?;
    m.add_function(wrap_pyfunction!(limit_restitution, m)?)?;
    m.add_function(wrap_pyfunction!(realised_restitution, m)?)?;
    m.add_function(wrap_pyfunction!(time_of_impact_term, m)?)?;
    m.add_function(wrap_pyfunction!(matched_dt, m)?)?;
    m.add_function(wrap_pyfunction!(log_grid, m)?)
}
