//! The tumbling cube (core: `systems/tumbling_cube.rs`): x(T), the Jacobian in tangent
//! coordinates and the corner strikes, computed with the GIL released.

use crate::convert::{document, floats, matrix_array, Options};
use ferromotion_core::systems::tumbling_cube::{self as core_cube, TumblingCube};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `cube` is the core's `TumblingCube` document (`half_side`, `mass`, `restitution`,
/// `gravity`); `x0` the 12 numbers (c, θ, v, ω). Returns `state` (12,), `jacobian` (12, 12)
/// row-major and `impacts` (the core's documents).
#[pyfunction]
fn tumbling_cube<'py>(
    py: Python<'py>,
    cube: Options<TumblingCube>,
    x0: &Bound<'py, PyAny>,
    t_final: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let x = floats(x0, "x0", &[Some(12)])?;
    let mut x0 = [0.0; 12];
    x0.copy_from_slice(&x);
    let r = py.detach(|| core_cube::tumbling_cube(&cube.0, &x0, t_final));
    let s = crate::errors::py_result(r)?;
    let out = PyDict::new(py);
    out.set_item("state", PyArray1::from_slice(py, &s.state))?;
    out.set_item("jacobian", matrix_array(py, &s.jacobian)?)?;
    out.set_item("impacts", document(py, &s.impacts)?)?;
    Ok(out)
}

/// The cube from x(t0) to t1 as `hybrid_jacobian`'s dict (the core's `cube_hybrid`: the
/// exact route, J in tangent coordinates, the strikes as events).
#[pyfunction]
fn tumbling_cube_hybrid<'py>(
    py: Python<'py>,
    cube: Options<TumblingCube>,
    x0: &Bound<'py, PyAny>,
    t0: f64,
    t1: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let x = floats(x0, "x0", &[Some(12)])?;
    let mut x0 = [0.0; 12];
    x0.copy_from_slice(&x);
    let r = py.detach(|| core_cube::cube_hybrid(&cube.0, &x0, t0, t1));
    crate::hybrid::solution(py, &crate::errors::py_result(r)?)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(tumbling_cube_hybrid, m)?)?;
    m.add_function(wrap_pyfunction!(tumbling_cube, m)?)
}
