//! The drop and its routes (core: `physics/`, `lab/scenario.rs`). Each route's answer
//! leaves as the core's `RouteResult` itself, held by a [`PyRouteAnswer`] whose fields are
//! read on access: `state` (y, v), `jacobian` flat row-major, the cost counters,
//! `probe_gap`/`probe_dependent` (tolerance), `step_stable`/`omega_dt` (fixed, corrected,
//! rk4) and the call's wall time (`wall_s`, `wall_resolution_s`: the core times it with our
//! clock). Nothing is converted that the caller does not read: a route called in a loop
//! pays for the core and one small object (`make bench`, table 5).
//!
//! The routes return the package's `Route` (`ferromotion._results.Route`) around that answer,
//! made here as `Route._from_core(name, answer)` makes it but without a Python call: the
//! Python function then only passes its arguments on (`benches/call_overhead.py`).

use crate::convert::{clock, json_document, DropArg, Options};
use crate::errors::py_result;
use ferromotion_core as fm;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyType};

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

/// One route's answer: the core's `RouteResult`, each field converted when it is read.
#[pyclass(module = "ferromotion._core", name = "RouteAnswer", frozen)]
pub struct PyRouteAnswer(fm::RouteResult);

#[pymethods]
impl PyRouteAnswer {
    /// x(T) = (y in m, v in m/s).
    #[getter]
    fn state(&self) -> (f64, f64) {
        (self.0.state[0], self.0.state[1])
    }
    /// d x(T) / d x(0), flat row-major: `[dy/dy0, dy/dv0, dv/dy0, dv/dv0]`.
    #[getter]
    fn jacobian(&self) -> [f64; 4] {
        fm::physics::state::to_row_major(&self.0.jacobian)
    }
    #[getter]
    fn steps(&self) -> u64 {
        self.0.cost.steps
    }
    #[getter]
    fn rejected_steps(&self) -> u64 {
        self.0.cost.rejected_steps
    }
    #[getter]
    fn force_evals(&self) -> u64 {
        self.0.cost.force_evals
    }
    #[getter]
    fn state_force_evals(&self) -> u64 {
        self.0.cost.state_force_evals
    }
    #[getter]
    fn rollouts(&self) -> u32 {
        self.0.cost.rollouts
    }
    #[getter]
    fn probe_gap(&self) -> Option<f64> {
        self.0.probe_gap
    }
    #[getter]
    fn probe_dependent(&self) -> bool {
        self.0.probe_dependent
    }
    #[getter]
    fn step_stable(&self) -> Option<bool> {
        self.0.step_stability.map(|s| s.stable)
    }
    #[getter]
    fn omega_dt(&self) -> Option<f64> {
        self.0.step_stability.map(|s| s.omega_dt)
    }
    #[getter]
    fn wall_s(&self) -> Option<f64> {
        self.0.wall_s
    }
    #[getter]
    fn wall_resolution_s(&self) -> Option<f64> {
        self.0.wall_resolution_s
    }
}

/// The package's `Route` holding `answer` from the route `name`: `object.__new__(Route)` with
/// its two slots, `route` and `_answer`, set (`Route` refuses `setattr`, being frozen, so the
/// slots are set as `object.__setattr__` sets them).
fn route_object<'py>(
    py: Python<'py>,
    name: &Bound<'py, PyString>,
    answer: PyRouteAnswer,
) -> PyResult<Bound<'py, PyAny>> {
    static ROUTE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static NEW: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let class = ROUTE.import(py, "ferromotion._results", "Route")?;
    let new = NEW.get_or_try_init(py, || {
        py.get_type::<PyAny>().getattr("__new__").map(Bound::unbind)
    })?;
    let route = new.bind(py).call1((class,))?;
    let answer = Bound::new(py, answer)?.into_any();
    set_slot(&route, pyo3::intern!(py, "route"), name.as_any())?;
    set_slot(&route, pyo3::intern!(py, "_answer"), &answer)?;
    Ok(route)
}

/// `object.__setattr__(obj, name, value)`: the slot's own descriptor, past a frozen class's
/// `__setattr__`.
fn set_slot(
    obj: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    // SAFETY: three live object pointers, borrowed for the call; -1 means an exception is set.
    let status =
        unsafe { pyo3::ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value.as_ptr()) };
    if status == 0 {
        Ok(())
    } else {
        Err(PyErr::fetch(obj.py()))
    }
}

/// A route: `name(drop, <stiffness, step as it takes them>, options=None)`, `options` its
/// core options struct, the answer the core's `RouteResult` with the call's wall time, in the
/// package's `Route`.
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
            let answer = PyRouteAnswer(py_result(py.detach(run))?);
            route_object(py, pyo3::intern!(py, stringify!($name)), answer)
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
    m.add_class::<PyRouteAnswer>()?;
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
