//! The drop and its routes (core: `physics/`, `lab/scenario.rs`). Each route's answer
//! leaves as the core's `RouteResult` itself, held by a [`PyRouteAnswer`] and converted to
//! its serde document only when a field is first read (the call's wall time included: the
//! core times it with our clock). This file names no field: the package's `Route` reads
//! them from the document by its one list (`_results.ROUTE_SPEC`). A route called in a loop
//! pays for the core and one small object (`make bench`, table 5).
//!
//! The routes return the package's `Route` around that answer, made here as the package's
//! `Route._from_core(name, answer)` makes it: the Python function then only passes its
//! arguments on (`benches/call_overhead.py`).

use crate::convert::{clock, document, json_document, DropArg, Options};
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

/// One route's answer: the core's `RouteResult`, converted only when read.
#[pyclass(module = "ferromotion._core", name = "RouteAnswer", frozen)]
pub struct PyRouteAnswer {
    result: fm::RouteResult,
    doc: PyOnceLock<Py<PyAny>>,
}

#[pymethods]
impl PyRouteAnswer {
    /// The core's `RouteResult` document (`state` [y, v], `jacobian` flat row-major, the
    /// cost's counters, `probe_gap`, `probe_dependent`, `step_stability`, `wall_s`, ...),
    /// made on the first call and kept: the package's `Route` reads its fields from it by
    /// its one list (`_results.ROUTE_SPEC`).
    fn document<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let doc = self
            .doc
            .get_or_try_init(py, || document(py, &self.result).map(Bound::unbind))?;
        Ok(doc.bind(py).clone())
    }
}

/// The package's `Route` holding `answer` from the route `name`, made as its own
/// `Route._from_core(name, answer)` makes it, without the Python call (a route called in a
/// loop pays the call overhead, `benches/call_overhead.py`): `object.__new__(Route)`, then its
/// two slots set by `object.__setattr__`, past the frozen class's own `__setattr__`.
fn route_object<'py>(
    py: Python<'py>,
    name: &Bound<'py, PyString>,
    result: fm::RouteResult,
) -> PyResult<Bound<'py, PyAny>> {
    static ROUTE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static NEW: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    static SET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let class = ROUTE.import(py, "ferromotion._results", "Route")?;
    let object = || py.get_type::<PyAny>();
    let new = NEW.get_or_try_init(py, || object().getattr("__new__").map(Bound::unbind))?;
    let set = SET.get_or_try_init(py, || object().getattr("__setattr__").map(Bound::unbind))?;
    let (new, set) = (new.bind(py), set.bind(py));
    let route = new.call1((class,))?;
    let doc = PyOnceLock::new();
    let answer = Bound::new(py, PyRouteAnswer { result, doc })?;
    set.call1((&route, pyo3::intern!(py, "route"), name))?;
    set.call1((&route, pyo3::intern!(py, "_answer"), answer))?;
    Ok(route)
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
            let result = py_result(py.detach(run))?;
            route_object(py, pyo3::intern!(py, stringify!($name)), result)
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
