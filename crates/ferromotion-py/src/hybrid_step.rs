//! The black-box half of `hybrid_jacobian` (core: `hybrid/black_box.rs`): a
//! Python step function `step(x, dt) -> x`, optional guards `g(x) -> float` and optional
//! resets `R(x) -> x`, called back with the GIL held (`PyStep`).

use crate::convert::{floats, matrix_array, options, Options, Raised};
use crate::errors::invalid_parameter;
use ferromotion_core::hybrid::{self, StepOptions, StepSystem};
use nalgebra::DVector;
use numpy::PyArray1;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `hybrid_jacobian`'s document (`x`, `mode`, `jacobian`, `events`, `probe_gap`,
/// `spectral_radius`, `worst_gain`), `split_residual`, `step_calls` and `half_dt` (None, or
/// `x`, `jacobian`, `events` (a count) and `spread` at dt/2). `resets` is empty or holds one
/// callable or None per guard; `options` is the core's `StepOptions`. An exception a
/// callback raises is re-raised as it is.
#[pyfunction]
#[pyo3(signature = (step, x0, t0, t1, guards=Vec::new(), resets=Vec::new(), name=None, options=None))]
#[allow(clippy::too_many_arguments)]
fn step_jacobian<'py>(
    py: Python<'py>,
    step: Bound<'py, PyAny>,
    x0: &Bound<'py, PyAny>,
    t0: f64,
    t1: f64,
    guards: Vec<Bound<'py, PyAny>>,
    resets: Vec<Option<Bound<'py, PyAny>>>,
    name: Option<String>,
    options: Option<Options<StepOptions>>,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = self::options(options);
    let x0 = DVector::from_vec(floats(x0, "x0", &[None])?);
    for (what, f) in std::iter::once(("step", Some(&step)))
        .chain(guards.iter().map(|g| ("a guard", Some(g))))
        .chain(resets.iter().map(|r| ("a reset", r.as_ref())))
    {
        if let Some(f) = f.filter(|f| !f.is_callable()) {
            return Err(PyTypeError::new_err(format!(
                "{what} must be callable, got {}",
                f.get_type().name()?
            )));
        }
    }
    if !resets.is_empty() && resets.len() != guards.len() {
        return Err(invalid_parameter(
            py,
            format!(
                "invalid parameter `resets`: expected none or one per guard ({}), got {}",
                guards.len(),
                resets.len()
            ),
        ));
    }
    let name = match name {
        Some(n) => n,
        None => match step.getattr("__name__") {
            Ok(n) => n.extract()?,
            Err(_) => step.get_type().name()?.to_string(),
        },
    };
    let sys = PyStep {
        dim: x0.len(),
        step,
        guards,
        resets,
        name,
        raised: Raised::default(),
    };
    let r = hybrid::step_jacobian(&sys, &x0, t0, t1, &opts);
    let s = sys.raised.finish(r)?;
    let out = crate::hybrid::solution(py, &s.solution)?;
    out.set_item("split_residual", s.split_residual)?;
    out.set_item("step_calls", s.step_calls)?;
    match &s.half_dt {
        Some(h) => {
            let half = PyDict::new(py);
            half.set_item("x", PyArray1::from_slice(py, h.x.as_slice()))?;
            half.set_item("jacobian", matrix_array(py, &h.jacobian)?)?;
            half.set_item("events", h.events)?;
            half.set_item("spread", h.spread)?;
            out.set_item("half_dt", half)?;
        }
        None => out.set_item("half_dt", py.None())?,
    }
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(step_jacobian, m)?)
}

/// Python callables as a core `StepSystem`. Arrays go out as float64 (n,) copies; results
/// are checked for shape. A callback that raises (or returns a wrong shape) is kept in
/// `raised`; the core then sees NaN and `finish` re-raises the exception.
struct PyStep<'py> {
    step: Bound<'py, PyAny>,
    guards: Vec<Bound<'py, PyAny>>,
    resets: Vec<Option<Bound<'py, PyAny>>>,
    dim: usize,
    name: String,
    raised: Raised,
}

impl PyStep<'_> {
    /// `f(args)` read as `dim` numbers; NaN once a callback raised.
    fn vector(
        &self,
        f: &Bound<'_, PyAny>,
        what: &str,
        x: &DVector<f64>,
        dt: Option<f64>,
    ) -> DVector<f64> {
        let read = || {
            let xs = PyArray1::from_slice(f.py(), x.as_slice());
            let out = match dt {
                Some(dt) => f.call1((xs, dt))?,
                None => f.call1((xs,))?,
            };
            floats(&out, what, &[Some(self.dim)])
        };
        DVector::from_vec(
            self.raised
                .call(read)
                .unwrap_or_else(|| vec![f64::NAN; self.dim]),
        )
    }
}

impl StepSystem for PyStep<'_> {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn step(&self, x: &DVector<f64>, dt: f64) -> DVector<f64> {
        self.vector(&self.step, "step(x, dt)", x, Some(dt))
    }
    fn guard_count(&self) -> usize {
        self.guards.len()
    }
    fn guard(&self, i: usize, x: &DVector<f64>) -> f64 {
        let g = || {
            let xs = PyArray1::from_slice(self.step.py(), x.as_slice());
            self.guards[i].call1((xs,))?.extract::<f64>()
        };
        self.raised.call(g).unwrap_or(f64::NAN)
    }
    fn has_reset(&self, i: usize) -> bool {
        self.resets.get(i).is_some_and(|r| r.is_some())
    }
    fn reset(&self, i: usize, x: &DVector<f64>) -> DVector<f64> {
        match self.resets.get(i) {
            Some(Some(r)) => self.vector(r, "reset(x)", x, None),
            _ => x.clone(),
        }
    }
}
