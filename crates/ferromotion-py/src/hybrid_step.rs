//! The black-box half of `hybrid_jacobian` (core: `hybrid/black_box.rs`): a Python step
//! function, its guards and resets, one state per call (`step(x, dt)` with x of shape (n,))
//! or batched (`step(X, dt)` with X of shape (m, n)), as the core's `StepSystem`. The core
//! runs with the GIL released; each batch it asks for takes the GIL back for the call.

use crate::convert::{clock, document, floats, matrix_array, options, Options};
use crate::errors::{invalid_parameter, py_result};
use ferromotion_core::hybrid::{
    self, Joint, StepOptions, StepOutcome, StepPartial, StepProgress, StepSolution, StepSystem,
    StepWatch,
};
use ferromotion_core::{FerroError, Result as CoreResult};
use nalgebra::DVector;
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyKeyboardInterrupt, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Mutex;

/// `hybrid_jacobian`'s document (`x`, `mode`, `jacobian`, `events`, `probe_gap`,
/// `spectral_radius`, `worst_gain`), `split_residual`, `step_calls`, `batch_calls`, `rows`,
/// `switches` (each located switch's `t`, `x`, `normal`), `resolution` (`precision`, `eps`,
/// `probe_rtol`, `switch_eps`, `switch_floor` used) and `half_dt` (None, or `x`, `jacobian`,
/// `events` (a count) and `spread` at dt/2).
/// `resets` is empty or holds one callable or None per guard; `options` is the core's
/// `StepOptions`; `batch`: None or False calls `step(x, dt)` one state at a time, True or an int
/// `step(X, dt)` with every row or at most that many rows at once; `manifold` the (kind, index) blocks;
/// `progress` is called with the core's progress document. An exception a callback raises
/// is re-raised as it is, except Ctrl-C (KeyboardInterrupt): then the answer is
/// `{"stopped": <what finished>}` (see [`partial`]).
#[pyfunction]
#[pyo3(signature = (step, x0, t0, t1, guards=Vec::new(), resets=Vec::new(), name=None, options=None,
                    batch=None, manifold=Vec::new(), progress=None))]
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
    batch: Option<Bound<'py, PyAny>>,
    manifold: Vec<(String, usize)>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    // False or None: one state per call; True: every row at once; an int: at most that
    // many rows per call (below 1 the core refuses it, naming `batch`).
    let batch = match batch {
        None => None,
        Some(b) if b.is_instance_of::<pyo3::types::PyBool>() => {
            b.extract::<bool>()?.then_some(usize::MAX)
        }
        Some(b) => Some(usize::try_from(b.extract::<i64>()?).unwrap_or(0)),
    };
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
    let joints = manifold
        .iter()
        .map(|(kind, i)| Joint::parse(kind, *i))
        .collect::<CoreResult<Vec<_>>>();
    let joints = py_result(joints)?;
    let name = match name {
        Some(n) => n,
        None => match step.getattr("__name__") {
            Ok(n) => n.extract()?,
            Err(_) => step.get_type().name()?.to_string(),
        },
    };
    let sys = PyStep {
        dim: x0.len(),
        step: step.unbind(),
        guards: guards.into_iter().map(Bound::unbind).collect(),
        resets: resets.into_iter().map(|r| r.map(Bound::unbind)).collect(),
        name,
        batch,
        joints,
        raised: Mutex::new(None),
    };
    let outcome = py.detach(|| {
        let clock = clock();
        let mut observe = |p: &StepProgress| -> CoreResult<()> {
            Python::attach(|py| {
                let told = py.check_signals().and_then(|()| match &progress {
                    Some(f) => f.call1(py, (document(py, p)?,)).map(|_| ()),
                    None => Ok(()),
                });
                told.map_err(|e| sys.keep(e))
            })
        };
        let watch = StepWatch {
            clock: Some(&clock),
            progress: Some(&mut observe),
        };
        hybrid::step_jacobian_watched(&sys, &x0, t0, t1, &opts, watch)
    });
    let raised = sys.raised.into_inner().unwrap_or_else(|e| e.into_inner());
    match (py_result(outcome)?, raised) {
        (StepOutcome::Stopped(p), Some(e)) if e.is_instance_of::<PyKeyboardInterrupt>(py) => {
            let out = PyDict::new(py);
            out.set_item("stopped", partial(py, &p)?)?;
            Ok(out.into_any())
        }
        (_, Some(e)) => Err(e),
        (StepOutcome::Stopped(p), None) => Err(py_result::<()>(Err(p.cause)).unwrap_err()),
        (StepOutcome::Answered(s), None) => Ok(answer(py, &s)?.into_any()),
    }
}

/// The answer as `hybrid_jacobian`'s document with the black box's own entries.
fn answer<'py>(py: Python<'py>, s: &StepSolution) -> PyResult<Bound<'py, PyDict>> {
    let out = crate::hybrid::solution(py, &s.solution)?;
    out.set_item("split_residual", s.split_residual)?;
    out.set_item("step_calls", s.step_calls)?;
    out.set_item("batch_calls", s.batch_calls)?;
    out.set_item("rows", s.rows)?;
    let switches = pyo3::types::PyList::empty(py);
    for w in &s.switches {
        let d = PyDict::new(py);
        d.set_item("t", w.t)?;
        d.set_item("x", PyArray1::from_slice(py, w.at.as_slice()))?;
        d.set_item("normal", PyArray1::from_slice(py, w.normal.as_slice()))?;
        switches.append(d)?;
    }
    out.set_item("switches", switches)?;
    let r = PyDict::new(py);
    r.set_item("precision", s.resolution.precision)?;
    r.set_item("eps", s.resolution.eps)?;
    r.set_item("probe_rtol", s.resolution.probe_rtol)?;
    r.set_item("switch_eps", s.resolution.switch_eps)?;
    r.set_item("switch_floor", s.resolution.switch_floor)?;
    out.set_item("resolution", r)?;
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

/// What finished before Ctrl-C: `summary` (the core's sentence), `rows_done`, `rows_total`,
/// `split_residual` (None if unfinished), `step_calls`, `batch_calls`, and `passes` (at dt,
/// then dt/2): `dt`, `x` (None if unfinished), `jacobian` (NaN in unfinished columns),
/// `columns`, `unfinished` (rows), `refused` (a message or None).
fn partial<'py>(py: Python<'py>, p: &StepPartial) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("summary", &p.summary)?;
    out.set_item("rows_done", p.rows_done)?;
    out.set_item("rows_total", p.rows_total)?;
    out.set_item("split_residual", p.split_residual)?;
    out.set_item("step_calls", p.step_calls)?;
    out.set_item("batch_calls", p.batch_calls)?;
    let mut passes = Vec::new();
    for pass in &p.passes {
        let d = PyDict::new(py);
        d.set_item("dt", pass.dt)?;
        d.set_item(
            "x",
            pass.x
                .as_ref()
                .map(|x| PyArray1::from_slice(py, x.as_slice())),
        )?;
        d.set_item("jacobian", matrix_array(py, &pass.jacobian)?)?;
        d.set_item("columns", pass.columns.clone())?;
        d.set_item("unfinished", pass.unfinished)?;
        d.set_item("refused", pass.refused.as_ref().map(|e| e.to_string()))?;
        passes.push(d);
    }
    out.set_item("passes", passes)?;
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(step_jacobian, m)?)
}

/// Python callables as a core `StepSystem`. Arrays go out as float64 copies, (n,) one state
/// at a time or (m, n) batched, and come back checked for shape. The first exception a
/// callback raises is kept in `raised` and stops the core (a batch call's error); `step`
/// then re-raises it.
struct PyStep {
    step: Py<PyAny>,
    guards: Vec<Py<PyAny>>,
    resets: Vec<Option<Py<PyAny>>>,
    dim: usize,
    name: String,
    /// None: one state per call; Some(rows): batched, at most `rows` per call.
    batch: Option<usize>,
    joints: Vec<Joint>,
    raised: Mutex<Option<PyErr>>,
}

impl PyStep {
    /// Keep the first exception; the core sees an error that stops it.
    fn keep(&self, e: PyErr) -> FerroError {
        let mut kept = self.raised.lock().unwrap_or_else(|p| p.into_inner());
        kept.get_or_insert(e);
        FerroError::InvalidParameter {
            name: "callback",
            value: f64::NAN,
            limit: "a Python callback raised (its exception is re-raised)".into(),
        }
    }

    /// `f` on every state, as an (m, n) array (batched) or one (n,) array at a time, read
    /// back with `read` (shape per state: `width` numbers; 0 for a scalar).
    fn call(
        &self,
        f: &Py<PyAny>,
        what: &str,
        xs: &[DVector<f64>],
        dt: Option<f64>,
        width: usize,
    ) -> CoreResult<Vec<Vec<f64>>> {
        fn run<'py>(
            this: &PyStep,
            py: Python<'py>,
            f: &Py<PyAny>,
            what: &str,
            xs: &[DVector<f64>],
            dt: Option<f64>,
            width: usize,
        ) -> PyResult<Vec<Vec<f64>>> {
            let f = f.bind(py);
            let call = |arg: Bound<'py, PyAny>| -> PyResult<Bound<'py, PyAny>> {
                match dt {
                    Some(dt) => f.call1((arg, dt)),
                    None => f.call1((arg,)),
                }
            };
            let n = this.dim;
            match this.batch {
                Some(_) => {
                    let m = xs.len();
                    let flat = xs.iter().flat_map(|x| x.iter().copied());
                    let arg = PyArray1::from_iter(py, flat).reshape([m, n])?.into_any();
                    let out = call(arg)?;
                    let shape: &[Option<usize>] = if width == 0 {
                        &[Some(m)]
                    } else {
                        &[Some(m), Some(width)]
                    };
                    let v = floats(&out, what, shape)?;
                    Ok(v.chunks(width.max(1)).map(<[f64]>::to_vec).collect())
                }
                None => xs
                    .iter()
                    .map(|x| {
                        let out = call(PyArray1::from_slice(py, x.as_slice()).into_any())?;
                        if width == 0 {
                            Ok(vec![out.extract::<f64>()?])
                        } else {
                            floats(&out, what, &[Some(width)])
                        }
                    })
                    .collect(),
            }
        }
        Python::attach(|py| run(self, py, f, what, xs, dt, width).map_err(|e| self.keep(e)))
    }
}

impl StepSystem for PyStep {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn step(&self, x: &DVector<f64>, dt: f64) -> DVector<f64> {
        self.step_batch(std::slice::from_ref(x), dt)
            .map(|mut v| v.remove(0))
            .unwrap_or_else(|_| DVector::from_element(self.dim, f64::NAN))
    }
    fn guard_count(&self) -> usize {
        self.guards.len()
    }
    fn has_reset(&self, i: usize) -> bool {
        self.resets.get(i).is_some_and(|r| r.is_some())
    }
    fn step_batch(&self, xs: &[DVector<f64>], dt: f64) -> CoreResult<Vec<DVector<f64>>> {
        let what = if self.batch.is_some() {
            "step(X, dt)"
        } else {
            "step(x, dt)"
        };
        let ys = self.call(&self.step, what, xs, Some(dt), self.dim)?;
        Ok(ys.into_iter().map(DVector::from_vec).collect())
    }
    fn guard_batch(&self, i: usize, xs: &[DVector<f64>]) -> CoreResult<Vec<f64>> {
        let what = if self.batch.is_some() {
            "guard(X)"
        } else {
            "guard(x)"
        };
        let gs = self.call(&self.guards[i], what, xs, None, 0)?;
        Ok(gs.into_iter().map(|g| g[0]).collect())
    }
    fn reset_batch(&self, i: usize, xs: &[DVector<f64>]) -> CoreResult<Vec<DVector<f64>>> {
        match self.resets.get(i) {
            Some(Some(r)) => {
                let what = if self.batch.is_some() {
                    "reset(X)"
                } else {
                    "reset(x)"
                };
                let ys = self.call(r, what, xs, None, self.dim)?;
                Ok(ys.into_iter().map(DVector::from_vec).collect())
            }
            _ => Ok(xs.to_vec()),
        }
    }
    fn batch_rows(&self) -> usize {
        self.batch.unwrap_or(1)
    }
    fn manifold(&self) -> Vec<Joint> {
        self.joints.clone()
    }
}
