//! Gradient checks and their receipts (core: `check/`). Options and the objective enter as
//! the core's `CheckOptions` and `ObjectiveInfo`; a receipt stays a core value behind a
//! handle (`Receipt`), serialised by the core.

use crate::convert::{document, floats, matrix_from, options, to_json, Options, Raised};
use crate::errors::{invalid_parameter, py_result};
use ferromotion_core::check::{
    self, CheckOptions, EventSignature, JacobianClaim, ObjectiveInfo, Receipt,
};
use ferromotion_core::{self as fm, check::examples};
use numpy::PyArray1;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// A gradient check's receipt, as the core wrote it.
#[pyclass(module = "ferromotion._core", name = "Receipt", frozen)]
struct PyReceipt(Receipt);

#[pymethods]
impl PyReceipt {
    /// The receipt as the core serialises it (non-finite numbers become null).
    fn to_json(&self) -> PyResult<String> {
        to_json(&self.0)
    }

    /// The core's one-line summary.
    fn summary(&self) -> String {
        self.0.summary()
    }
}

/// A receipt with the binding's environment identity added.
fn receipt(mut r: Receipt, extra: Vec<(String, String)>) -> PyReceipt {
    r.environment.extra.extend(extra);
    PyReceipt(r)
}

/// Check a Python objective's claimed gradient. `f`, `events` and `hvp` are called back
/// with the GIL held (they are Python; releasing it would only be taken back for every
/// evaluation); the first exception one raises is re-raised as it is. `extra` is the
/// environment identity.
#[pyfunction]
#[pyo3(signature = (f, grad, x, objective, events=None, hvp=None, options=None, extra=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn check_gradient<'py>(
    f: &Bound<'py, PyAny>,
    grad: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
    objective: Options<ObjectiveInfo>,
    events: Option<&Bound<'py, PyAny>>,
    hvp: Option<&Bound<'py, PyAny>>,
    options: Option<Options<CheckOptions>>,
    extra: Vec<(String, String)>,
) -> PyResult<PyReceipt> {
    let py = f.py();
    let x = floats(x, "x", &[None])?;
    let n = x.len();
    let grad = floats(grad, "grad", &[Some(n)])?;
    let opts = self::options(options);
    let raised = Raised::default();
    let arg = |p: &[f64]| PyArray1::from_slice(py, p);
    let mut f = |p: &[f64]| raised.core(|| scalar(&f.call1((arg(p),))?));
    let mut ev = events.map(|e| |p: &[f64]| raised.core(|| event_signature(&e.call1((arg(p),))?)));
    let mut hv =
        hvp.map(|h| |d: &[f64]| raised.core(|| floats(&h.call1((arg(d),))?, "hvp", &[Some(n)])));
    let report = check::check_gradient(
        &mut f,
        ev.as_mut()
            .map(|e| e as &mut dyn FnMut(&[f64]) -> fm::Result<EventSignature>),
        hv.as_mut()
            .map(|h| h as &mut dyn FnMut(&[f64]) -> fm::Result<Vec<f64>>),
        &x,
        &grad,
        &opts,
    );
    let report = raised.finish(report)?;
    Ok(receipt(Receipt::new(objective.0, x, grad, report), extra))
}

/// What a scalar objective returned, as a float; an array gets a sentence pointing to
/// `check_jacobian`.
fn scalar(v: &Bound<'_, PyAny>) -> PyResult<f64> {
    v.extract::<f64>().map_err(|e| {
        // Text is not an array of numbers: its own type error stands.
        if v.is_instance_of::<pyo3::types::PyString>() || v.is_instance_of::<pyo3::types::PyBytes>() {
            return e;
        }
        let shape = v
            .getattr("shape")
            .ok()
            .and_then(|s| s.extract::<Vec<usize>>().ok())
            .or_else(|| v.len().ok().map(|n| vec![n]));
        match shape {
            Some(shape) => invalid_parameter(
                v.py(),
                format!(
                    "invalid parameter `f`: f returned an array of shape {shape:?}, but check_gradient checks a \
                     scalar objective f: R^n -> R; for f: R^n -> R^m check its Jacobian with \
                     fm.check_jacobian(f, J, x)"
                ),
            ),
            None => e,
        }
    })
}

/// Check a Python vector map's claimed Jacobian: `jacobian` an (m, n) array, or a `jvp`
/// (p -> J p) or `vjp` (w -> J^T w) callable (exactly one). Callbacks as in `check_gradient`.
#[pyfunction]
#[pyo3(signature = (f, x, objective, jacobian=None, jvp=None, vjp=None, options=None, extra=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn check_jacobian<'py>(
    f: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
    objective: Options<ObjectiveInfo>,
    jacobian: Option<&Bound<'py, PyAny>>,
    jvp: Option<&Bound<'py, PyAny>>,
    vjp: Option<&Bound<'py, PyAny>>,
    options: Option<Options<CheckOptions>>,
    extra: Vec<(String, String)>,
) -> PyResult<PyReceipt> {
    let py = f.py();
    let x = floats(x, "x", &[None])?;
    let n = x.len();
    let opts = self::options(options);
    let raised = Raised::default();
    let arg = |p: &[f64]| PyArray1::from_slice(py, p);
    let mut f = |p: &[f64]| raised.core(|| floats(&f.call1((arg(p),))?, "f(x)", &[None]));
    let once = &raised;
    let mut jv =
        jvp.map(|j| move |p: &[f64]| once.core(|| floats(&j.call1((arg(p),))?, "jvp", &[None])));
    let mut vj =
        vjp.map(|j| move |w: &[f64]| once.core(|| floats(&j.call1((arg(w),))?, "vjp", &[Some(n)])));
    let matrix = jacobian
        .map(|j| floats(j, "J", &[None, Some(n)]))
        .transpose()?;
    let claim = match (&matrix, jv.as_mut(), vj.as_mut()) {
        (Some(m), None, None) => JacobianClaim::Matrix(m),
        (None, Some(j), None) => JacobianClaim::Jvp(j),
        (None, None, Some(j)) => JacobianClaim::Vjp(j),
        _ => {
            return Err(invalid_parameter(
                py,
                "invalid parameter `J`: pass exactly one of an (m, n) Jacobian array, jvp= (p -> J p) or vjp= \
                 (w -> J^T w)"
                    .into(),
            ))
        }
    };
    let checked = check::check_jacobian(&mut f, claim, &x, &opts);
    let (report, outputs) = raised.finish(checked)?;
    Ok(receipt(
        Receipt::for_jacobian(objective.0, x, matrix.unwrap_or_default(), outputs, report),
        extra,
    ))
}

/// The receipt of one of the core's worked examples (`EXAMPLES`), GIL released.
#[pyfunction]
#[pyo3(signature = (name, options=None, extra=Vec::new()))]
fn check_example(
    py: Python<'_>,
    name: &str,
    options: Option<Options<CheckOptions>>,
    extra: Vec<(String, String)>,
) -> PyResult<PyReceipt> {
    let opts = self::options(options);
    let r = py_result(py.detach(|| examples::check_example(name, &opts)))?;
    Ok(receipt(r, extra))
}

/// Singular values, condition number and weak input combinations of a sensitivity matrix
/// (n_out, n_in), row-major, as the core's `Conditioning` document.
#[pyfunction]
#[pyo3(signature = (jacobian, rel=1e-8))]
fn conditioning<'py>(
    py: Python<'py>,
    jacobian: &Bound<'py, PyAny>,
    rel: f64,
) -> PyResult<Bound<'py, PyAny>> {
    let j = matrix_from(jacobian, "jacobian")?;
    document(py, &py_result(check::conditioning(&j, rel))?)
}

/// What an `events` callable returned: a sequence of ints, one int, or
/// `(sequence, min_event_speed)` (the speed may be None).
fn event_signature(obj: &Bound<'_, PyAny>) -> PyResult<EventSignature> {
    let sig = |sequence, min_event_speed| EventSignature {
        sequence,
        min_event_speed,
    };
    if let Ok(n) = obj.extract::<i64>() {
        return Ok(sig(vec![n], None));
    }
    if let Ok(seq) = obj.extract::<Vec<i64>>() {
        return Ok(sig(seq, None));
    }
    match obj.extract::<(Vec<i64>, Option<f64>)>() {
        Ok((seq, speed)) => Ok(sig(seq, speed)),
        Err(_) => Err(PyTypeError::new_err(format!(
            "events must return a sequence of ints or (sequence of ints, min_event_speed), got {}",
            obj.repr()?
        ))),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("EXAMPLES", examples::EXAMPLES.to_vec())?;
    m.add("RECEIPT_SCHEMA", check::RECEIPT_SCHEMA)?;
    m.add_function(wrap_pyfunction!(check_gradient, m)?)?;
    m.add_function(wrap_pyfunction!(check_example, m)?)?;
    m.add_function(wrap_pyfunction!(check_jacobian, m)?)?;
    m.add_function(wrap_pyfunction!(conditioning, m)?)?;
    m.add_class::<PyReceipt>()
}
