//! Gradient descent through one impact (core: `experiments/descent.rs`). The result leaves
//! as the core's document; the Python side makes its grid and paths numpy arrays.

use crate::convert::{document, options, ArmArg, DropArg, Options};
use crate::errors::py_result;
use ferromotion_core::experiments::descent::{self as experiment, Arm, Problem};
use pyo3::prelude::*;

/// Scan the landscape, then run every arm from every start. `arms` None runs the core's
/// standard arms; `problem` is the core's `Problem` without its drop (missing keys take
/// `Problem::default()`), `grid`, when given, its grid size.
#[pyfunction]
#[pyo3(signature = (drop, arms=None, grid=None, problem=None))]
fn descent<'py>(
    py: Python<'py>,
    drop: DropArg,
    arms: Option<Vec<ArmArg>>,
    grid: Option<usize>,
    problem: Option<Options<Problem>>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut problem = Problem {
        drop: drop.0,
        ..options(problem)
    };
    problem.grid = grid.unwrap_or(problem.grid);
    let arms: Vec<Arm> = match arms {
        Some(a) => a.into_iter().map(|a| a.0).collect(),
        None => Arm::standard(),
    };
    document(
        py,
        &py_result(py.detach(|| experiment::descent(&problem, &arms)))?,
    )
}

/// The core's standard arms of the descent experiment, as it serialises them.
#[pyfunction]
fn standard_arms(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    document(py, &Arm::standard())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(descent, m)?)?;
    m.add_function(wrap_pyfunction!(standard_arms, m)?)
}
