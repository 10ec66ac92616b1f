//! Jacobians of hybrid systems through their events (core: `hybrid.rs`): a
//! shipped system runs with the GIL released; a Python object implementing the
//! `HybridSystem` methods is called back with the GIL held (`PySystem`).

use crate::convert::{document, floats, matrix_array, options, Options, Raised};
use ferromotion_core::hybrid::{
    self, BouncingDrop, HybridOptions, HybridSystem, SlopeBall, WarmStartedDrop,
};
use nalgebra::{DMatrix, DVector};
use numpy::PyArray1;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `x` (n,), `mode`, `jacobian` (n, n) row-major, `events` (the core's documents) and
/// `probe_gap`, `spectral_radius`, `worst_gain`. `options` is the core's `HybridOptions`; an exception a Python system's
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
            let s = doc.extract::<Options<Shipped>>()?.0;
            let r = py.detach(|| hybrid::hybrid_jacobian(s.system(), &x0, mode, t0, t1, &opts));
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

/// A `HybridSolution` as the dict `hybrid_jacobian` returns (also the black-box driver's,
/// `hybrid_step.rs`).
pub fn solution<'py>(py: Python<'py>, s: &hybrid::HybridSolution) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("x", PyArray1::from_slice(py, s.x.as_slice()))?;
    out.set_item("mode", s.mode)?;
    out.set_item("jacobian", matrix_array(py, &s.jacobian)?)?;
    out.set_item("events", document(py, &s.events)?)?;
    out.set_item("probe_gap", s.probe_gap)?;
    out.set_item("spectral_radius", s.spectral_radius)?;
    out.set_item("worst_gain", s.worst_gain)?;
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(hybrid_jacobian, m)?)
}

/// One of the shipped hybrid systems, read from its document `{"system": "bouncing_drop",
/// "gravity": .., "restitution": ..}` (`slope_ball` adds `angle`; the public dataclasses'
/// `to_dict`).
#[derive(serde::Deserialize)]
#[serde(tag = "system", rename_all = "snake_case")]
enum Shipped {
    BouncingDrop(BouncingDrop),
    SlopeBall(SlopeBall),
    WarmStartedDrop(WarmStartedDrop),
}

impl Shipped {
    fn system(&self) -> &dyn HybridSystem {
        match self {
            Shipped::BouncingDrop(s) => s,
            Shipped::SlopeBall(s) => s,
            Shipped::WarmStartedDrop(s) => s,
        }
    }
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
                "a hybrid system is fm.BouncingDrop, fm.SlopeBall, fm.WarmStartedDrop or an object with \
                 `dim` and the methods {}; {} lacks {}",
                SYSTEM_METHODS.join(", "),
                obj.get_type().name()?,
                if missing.is_empty() { "`dim`".to_string() } else { missing.join(", ") }
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
