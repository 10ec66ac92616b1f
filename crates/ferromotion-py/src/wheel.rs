//! The rimless wheel's closed form and its measured return-map multiplier (core:
//! `systems/wheel/`), computed with the GIL released.

use crate::convert::{document, options, Options};
use ferromotion_core::hybrid::HybridOptions;
use ferromotion_core::systems::wheel::multiplier::measure;
use ferromotion_core::systems::RimlessWheel;
use pyo3::prelude::*;

/// `wheel` is the core's `RimlessWheel` (`half_angle`, `slope`, `length`, `gravity`).
/// Returns `fixed_point` [θ, ω] and `multiplier`.
#[pyfunction]
fn rimless_wheel_closed_form<'py>(
    py: Python<'py>,
    wheel: Options<RimlessWheel>,
) -> PyResult<Bound<'py, PyAny>> {
    let r = crate::errors::py_result(wheel.0.closed_form())?;
    document(py, &r)
}

/// The N-step return map's derivative at each of `horizons` from the fixed point: one dict
/// per horizon (`horizon`, `closed_form`, `chained` and `direct`: each `derivative`,
/// `per_step`, `closed_form`, or `direct` None unless asked for). `options` is the core's
/// `HybridOptions`.
#[pyfunction]
#[pyo3(signature = (wheel, horizons, direct=false, options=None))]
fn rimless_wheel_multiplier<'py>(
    py: Python<'py>,
    wheel: Options<RimlessWheel>,
    horizons: Vec<usize>,
    direct: bool,
    options: Option<Options<HybridOptions>>,
) -> PyResult<Bound<'py, PyAny>> {
    let opts = self::options(options);
    let r = py.detach(|| measure(&wheel.0, &horizons, direct, &opts, &mut |_, _| {}));
    document(py, &crate::errors::py_result(r)?)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rimless_wheel_closed_form, m)?)?;
    m.add_function(wrap_pyfunction!(rimless_wheel_multiplier, m)?)
}
