//! Jacobians of hybrid systems through their events (core: `hybrid.rs`): a
//! shipped system runs with the GIL released; a Python object implementing the
//! `HybridSystem` methods is called back with the GIL held (`PySystem`).

use std::collections::BTreeMap;

use crate::convert::{document, floats, json_document, matrix_array, options, Options, Raised};
use ferromotion_core::hybrid::{self, HybridOptions, HybridSystem, Pieces};
use ferromotion_core::systems::{self, Declared};
use nalgebra::{DMatrix, DVector};
use numpy::PyArray1;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// A shipped system from its document `{"system": "v_groove", "angle": .., ...}` (the
/// public classes' `to_dict`): each parameter a number or a list of numbers; the core fills
/// the defaults and checks the ranges.
fn shipped(doc: &Bound<'_, PyDict>) -> PyResult<Box<dyn Declared>> {
    let mut kind = None;
    let mut given = BTreeMap::new();
    for (k, v) in doc.iter() {
        let k: String = k.extract()?;
        if k == "system" {
            kind = Some(v.extract::<String>()?);
        } else if let Ok(x) = v.extract::<f64>() {
            given.insert(k, vec![x]);
        } else {
            let what = format!("system.{k}");
            given.insert(k, floats(&v, &what, &[None])?);
        }
    }
    let kind =
        kind.ok_or_else(|| PyTypeError::new_err("a system document needs its `system` kind"))?;
    crate::errors::py_result(systems::build(&kind, &given))
}

/// `x` (n,), `mode`, `jacobian` (n, n) row-major or None where the pieces disagree,
/// `pieces`, `events` (the core's documents) and `probe_gap`, `spectral_radius`,
/// `worst_gain`. `options` is the core's `HybridOptions`; an exception a Python system's
/// method raises is re-raised as it is.
#[pyfunction]
#[pyo3(signature = (system, x0, t0, t1, mode=0, options=None))]
fn hybrid_jacobian<'py>(
    py: Python<'py>,
    system: &Bound<'py, PyAny>,
    x0: &Bound<'py, PyAny>,
    t0: f64,
    t1: f64,
    mode: usize,
    options: Option<Options<HybridOptions>>,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = self::options(options);
    let x0 = DVector::from_vec(floats(x0, "x0", &[None])?);
    let s = match system.cast::<PyDict>() {
        Ok(doc) => {
            let s = shipped(doc)?;
            let r = py.detach(|| hybrid::hybrid_jacobian(&*s, &x0, mode, t0, t1, &opts));
            crate::errors::py_result(r)?
        }
        Err(_) => {
            let s = PySystem::new(system)?;
            let r = hybrid::hybrid_jacobian(&s, &x0, mode, t0, t1, &opts);
            s.raised.finish(r)?
        }
    };
    solution(py, &s)
}

/// The directional derivative along `d`, every simultaneous group ordered along d (any
/// number of events): the core's `hybrid_jvp`.
#[pyfunction]
#[pyo3(signature = (system, x0, t0, t1, d, mode=0, options=None))]
#[allow(clippy::too_many_arguments)]
fn hybrid_jvp<'py>(
    py: Python<'py>,
    system: &Bound<'py, PyAny>,
    x0: &Bound<'py, PyAny>,
    t0: f64,
    t1: f64,
    d: &Bound<'py, PyAny>,
    mode: usize,
    options: Option<Options<HybridOptions>>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let opts = self::options(options);
    let x0 = DVector::from_vec(floats(x0, "x0", &[None])?);
    let d = DVector::from_vec(floats(d, "d", &[None])?);
    let out = match system.cast::<PyDict>() {
        Ok(doc) => {
            let s = shipped(doc)?;
            let r = py.detach(|| hybrid::hybrid_jvp(&*s, &x0, mode, t0, t1, &d, &opts));
            crate::errors::py_result(r)?
        }
        Err(_) => {
            let s = PySystem::new(system)?;
            let r = hybrid::hybrid_jvp(&s, &x0, mode, t0, t1, &d, &opts);
            s.raised.finish(r)?
        }
    };
    Ok(PyArray1::from_slice(py, out.as_slice()))
}

/// A shipped system's exact answer from x0 over [t0, t1] (closed-form flights composed
/// through its events), as `hybrid_jacobian`'s dict; None for a system without one.
#[pyfunction]
#[pyo3(signature = (system, x0, t0, t1, mode=0))]
fn system_exact<'py>(
    py: Python<'py>,
    system: &Bound<'py, PyDict>,
    x0: &Bound<'py, PyAny>,
    t0: f64,
    t1: f64,
    mode: usize,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let s = shipped(system)?;
    let x0 = DVector::from_vec(floats(x0, "x0", &[None])?);
    match py.detach(|| s.exact(&x0, mode, t0, t1)) {
        None => Ok(None),
        Some(r) => Ok(Some(solution(py, &crate::errors::py_result(r)?)?)),
    }
}

/// Every shipped system's definition (kind, class, state names and units, parameters with
/// unit, range and default), from the core's registry.
#[pyfunction]
fn systems_catalogue<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
    let docs: Vec<serde_json::Value> = systems::catalogue().iter().map(|s| s.document()).collect();
    json_document(py, &docs)
}

/// A shipped system's parameters checked (defaults filled in): the values by name, or the
/// core's refusal naming the parameter.
#[pyfunction]
fn system_check<'py>(py: Python<'py>, system: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
    let s = shipped(system)?;
    let out = PyDict::new(py);
    let values = s.values();
    let mut at = 0;
    for p in s.spec().params {
        let v = &values[at..at + p.len];
        if p.len == 1 {
            out.set_item(p.name, v[0])?;
        } else {
            out.set_item(p.name, v.to_vec())?;
        }
        at += p.len;
    }
    Ok(out)
}

/// The pieces of a derivative, kept whole for `jvp(d)`: the core picks the piece whose cone
/// holds d.
#[pyclass(module = "ferromotion._core", frozen)]
pub struct PiecesHandle(Pieces);

#[pymethods]
impl PiecesHandle {
    /// dx(t1) along d: the matrix of the piece whose cone holds d, times d.
    fn jvp<'py>(
        &self,
        py: Python<'py>,
        d: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let d = DVector::from_vec(floats(d, "d", &[None])?);
        let r = crate::errors::py_result(self.0.jvp(&d))?;
        Ok(PyArray1::from_slice(py, r.as_slice()))
    }

    /// The index of the piece whose cone holds d.
    fn piece_for(&self, d: &Bound<'_, PyAny>) -> PyResult<usize> {
        let d = DVector::from_vec(floats(d, "d", &[None])?);
        let p = crate::errors::py_result(self.0.piece_for(&d))?;
        Ok(self
            .0
            .list
            .iter()
            .position(|q| std::ptr::eq(q, p))
            .unwrap_or(0))
    }

    /// The core's refusal of a single Jacobian (`NotDifferentiable`), raised; None when the
    /// pieces agree.
    fn jacobian<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let j = crate::errors::py_result(self.0.jacobian())?;
        matrix_array(py, j)
    }
}

fn cone_array<'py>(
    py: Python<'py>,
    rows: &[DVector<f64>],
    n: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let m = DMatrix::from_fn(rows.len(), n, |r, c| rows[r][c]);
    matrix_array(py, &m)
}

/// A `HybridSolution` as the dict `hybrid_jacobian` returns (also the black-box driver's,
/// `hybrid_step.rs`).
pub fn solution<'py>(py: Python<'py>, s: &hybrid::HybridSolution) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let n = s.x.len();
    out.set_item("x", PyArray1::from_slice(py, s.x.as_slice()))?;
    out.set_item("mode", s.mode)?;
    match s.pieces.jacobian() {
        Ok(_) => out.set_item("jacobian", matrix_array(py, &s.jacobian)?)?,
        Err(e) => {
            out.set_item("jacobian", py.None())?;
            out.set_item("not_differentiable", e.to_string())?;
        }
    }
    let pieces = PyList::empty(py);
    for p in &s.pieces.list {
        let d = PyDict::new(py);
        d.set_item("orders", p.orders.clone())?;
        d.set_item("cone", cone_array(py, &p.cone, n)?)?;
        d.set_item("matrix", matrix_array(py, &p.matrix)?)?;
        pieces.append(d)?;
    }
    out.set_item("pieces", pieces)?;
    out.set_item("enumerated", s.pieces.enumerated)?;
    out.set_item("largest_difference", s.pieces.largest_difference)?;
    out.set_item("piece_tolerance", s.pieces.tolerance)?;
    out.set_item("commuted", s.pieces.commuted())?;
    out.set_item("handle", Py::new(py, PiecesHandle(s.pieces.clone()))?)?;
    out.set_item("events", document(py, &s.events)?)?;
    out.set_item("probe_gap", s.probe_gap)?;
    out.set_item("spectral_radius", s.spectral_radius)?;
    out.set_item("worst_gain", s.worst_gain)?;
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PiecesHandle>()?;
    m.add_function(wrap_pyfunction!(hybrid_jvp, m)?)?;
    m.add_function(wrap_pyfunction!(system_exact, m)?)?;
    m.add_function(wrap_pyfunction!(systems_catalogue, m)?)?;
    m.add_function(wrap_pyfunction!(system_check, m)?)?;
    m.add_function(wrap_pyfunction!(hybrid_jacobian, m)?)
}

/// The methods a Python-defined hybrid system must have: those of the core's
/// `HybridSystem` trait, with the same arguments (`hidden_state()` and `name` optional).
const SYSTEM_METHODS: [&str; 7] = [
    "rhs",
    "rhs_jacobian",
    "guard_count",
    "guard",
    "guard_gradient",
    "reset",
    "reset_jacobian",
];

/// A Python object implementing `HybridSystem`, called back with the GIL held. Arrays go
/// out as float64 (n,) copies; results are checked for shape. A callback that raises (or
/// returns a wrong shape) is kept in `raised`; the core then sees NaN and `finish`
/// re-raises the exception.
struct PySystem<'py> {
    obj: Bound<'py, PyAny>,
    dim: usize,
    name: String,
    hidden: Option<String>,
    /// The first exception a method raised.
    raised: Raised,
}

impl<'py> PySystem<'py> {
    /// Check the protocol and read `dim`, `name` and `hidden_state()`.
    fn new(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let missing: Vec<&str> = SYSTEM_METHODS
            .into_iter()
            .filter(|m| !obj.hasattr(*m).unwrap_or(false))
            .collect();
        if !missing.is_empty() || !obj.hasattr("dim")? {
            return Err(PyTypeError::new_err(format!(
                "a hybrid system is one of fm.systems.* or an object with \
                 `dim` and the methods {}; {} lacks {}",
                SYSTEM_METHODS.join(", "),
                obj.get_type().name()?,
                if missing.is_empty() {
                    "`dim`".to_string()
                } else {
                    missing.join(", ")
                }
            )));
        }
        let name = match obj.getattr("name") {
            Ok(n) => n.extract()?,
            Err(_) => obj.get_type().name()?.to_string(),
        };
        let hidden = match obj.getattr("hidden_state") {
            Ok(h) => h.call0()?.extract()?,
            Err(_) => None,
        };
        Ok(PySystem {
            obj: obj.clone(),
            dim: obj.getattr("dim")?.extract()?,
            name,
            hidden,
            raised: Raised::default(),
        })
    }

    fn call(
        &self,
        method: &str,
        mode: usize,
        i: Option<usize>,
        x: &DVector<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let xs = PyArray1::from_slice(self.obj.py(), x.as_slice());
        match i {
            Some(i) => self.obj.call_method1(method, (mode, i, xs)),
            None => self.obj.call_method1(method, (mode, xs)),
        }
    }

    /// `method`'s answer as numbers of shape (dim,) or (dim, dim) (`square`); NaN once a
    /// callback raised.
    fn numbers(
        &self,
        method: &str,
        mode: usize,
        i: Option<usize>,
        x: &DVector<f64>,
        square: bool,
    ) -> Vec<f64> {
        let (n, what) = (self.dim, format!("system.{method}"));
        let shape = if square {
            vec![Some(n), Some(n)]
        } else {
            vec![Some(n)]
        };
        let read = || floats(&self.call(method, mode, i, x)?, &what, &shape);
        let nan = vec![f64::NAN; if square { n * n } else { n }];
        self.raised.call(read).unwrap_or(nan)
    }

    fn vector(
        &self,
        method: &str,
        mode: usize,
        i: Option<usize>,
        x: &DVector<f64>,
    ) -> DVector<f64> {
        DVector::from_vec(self.numbers(method, mode, i, x, false))
    }

    fn matrix(
        &self,
        method: &str,
        mode: usize,
        i: Option<usize>,
        x: &DVector<f64>,
    ) -> DMatrix<f64> {
        DMatrix::from_row_slice(self.dim, self.dim, &self.numbers(method, mode, i, x, true))
    }
}

impl HybridSystem for PySystem<'_> {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn rhs(&self, mode: usize, x: &DVector<f64>) -> DVector<f64> {
        self.vector("rhs", mode, None, x)
    }
    fn rhs_jacobian(&self, mode: usize, x: &DVector<f64>) -> DMatrix<f64> {
        self.matrix("rhs_jacobian", mode, None, x)
    }
    fn guard_count(&self, mode: usize) -> usize {
        let count = || self.obj.call_method1("guard_count", (mode,))?.extract();
        self.raised.call(count).unwrap_or(0)
    }
    fn guard(&self, mode: usize, i: usize, x: &DVector<f64>) -> f64 {
        let g = || self.call("guard", mode, Some(i), x)?.extract();
        self.raised.call(g).unwrap_or(f64::NAN)
    }
    fn guard_gradient(&self, mode: usize, i: usize, x: &DVector<f64>) -> DVector<f64> {
        self.vector("guard_gradient", mode, Some(i), x)
    }
    fn reset(&self, mode: usize, i: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        let n = self.dim;
        self.raised
            .call(|| {
                let (m, xp): (usize, Bound<'_, PyAny>) =
                    self.call("reset", mode, Some(i), x)?.extract()?;
                Ok((
                    m,
                    DVector::from_vec(floats(&xp, "system.reset", &[Some(n)])?),
                ))
            })
            .unwrap_or_else(|| (mode, DVector::from_element(n, f64::NAN)))
    }
    fn reset_jacobian(&self, mode: usize, i: usize, x: &DVector<f64>) -> DMatrix<f64> {
        self.matrix("reset_jacobian", mode, Some(i), x)
    }
    fn hidden_state(&self) -> Option<String> {
        self.hidden.clone()
    }
}
