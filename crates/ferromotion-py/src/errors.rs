//! The exception tree: `FerroError(Exception)` and one subclass per core `FerroError`
//! variant. `InvalidParameter` and `FixtureError` also derive from `ValueError`, so
//! `except ValueError` keeps working for bad input. The message is always the core's `Display`;
//! the variant's fields ride along as the exception's `fields` dict (`{"name": "k", "value":
//! -1.0, "limit": "must be finite and > 0"}`), as pydantic-core's `errors()` carries `ctx`.

use ferromotion_core::FerroError as CoreError;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

pyo3::create_exception!(
    ferromotion,
    FerroError,
    PyException,
    "Base class of every error the ferromotion core reports."
);
/// One subclass of `FerroError` per core variant (`InvalidParameter` is made below), and
/// `register_variants` adding them to the module.
macro_rules! variants {
    ($($name:ident: $doc:literal),+ $(,)?) => {
        $(pyo3::create_exception!(ferromotion, $name, FerroError, $doc);)+
        fn register_variants(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add(stringify!($name), m.py().get_type::<$name>())?;)+
            Ok(())
        }
    };
}

variants! {
    StepDoesNotDivide: "A fixed step that does not divide the final time into a whole number of steps.",
    TooManySteps: "A rollout needs or took more steps than its cap (`max_steps`) allows.",
    StepTooSmall: "The adaptive controller asked for a step below the `min_step` floor.",
    NoImpact: "The drop does not reach the ground before the final time.",
    Grazing: "An impact slower than the grazing threshold (the time-of-impact term would explode).",
    StepSizeUnderflow: "The adaptive integrator's step fell below what float64 can resolve.",
    NonFinite: "A result came out NaN or infinite (an unstable step, an overflow).",
    HiddenState: "A system's flow depends on state outside x: its Jacobian in x alone would be wrong.",
    TwoEventsInOneStep: "Two events inside one step: the step cannot be split at one switch.",
    EventsInAdjacentSteps: "Events in two adjacent steps: the step does not resolve them apart.",
    NotDifferentiable: "The derivative is piecewise linear in the perturbation (simultaneous events whose orders give different matrices): no single Jacobian; the pieces and jvp(d) remain.",
    SetValued: "Simultaneous events whose orders give different states: the outcome itself depends on the perturbation, and no derivative exists.",
    ProbeDependent: "Recomputing with another probe size moved the answer beyond tolerance.",
    UnguardedSwitch: "A step function's law changed inside a step where no guard was declared.",
    ContactSolveFailed: "The rigid contact's complementarity problem had no verified solution.",
    Unstable: "An explicit step blew up (a velocity beyond any physical scale).",
    ScenarioError: "A scenario document could not be read.",
}

/// `InvalidParameter(FerroError, ValueError)` and `FixtureError(FerroError, ValueError)`:
/// two bases, which `create_exception!` cannot express, so each class is made once by calling
/// `type(name, bases, namespace)`.
static INVALID_PARAMETER: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static FIXTURE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A `FerroError` that is also a `ValueError`, created on first use.
fn value_error_type<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
    doc: &str,
) -> PyResult<Bound<'py, PyType>> {
    let ty = cell.get_or_try_init(py, || -> PyResult<Py<PyType>> {
        let bases = PyTuple::new(
            py,
            [py.get_type::<FerroError>(), py.get_type::<PyValueError>()],
        )?;
        let namespace = PyDict::new(py);
        namespace.set_item("__module__", "ferromotion")?;
        namespace.set_item("__doc__", doc)?;
        let ty = py.get_type::<PyType>().call1((name, bases, namespace))?;
        Ok(ty.cast_into::<PyType>()?.unbind())
    })?;
    Ok(ty.bind(py).clone())
}

/// The `InvalidParameter` class.
pub fn invalid_parameter_type(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    value_error_type(
        py,
        &INVALID_PARAMETER,
        "InvalidParameter",
        "A parameter is non-finite, out of range, or of the wrong shape or dtype.",
    )
}

/// The `FixtureError` class.
pub fn fixture_error_type(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    value_error_type(
        py,
        &FIXTURE_ERROR,
        "FixtureError",
        "A conformance fixture file or document that cannot be used: the message is \"PATH: field 'a.b': reason\" \
         (or \"PATH: reason\" when the whole file is at fault).",
    )
}

/// Raise `InvalidParameter` with a message of the binding's own (bad shape or dtype).
pub fn invalid_parameter(py: Python<'_>, message: String) -> PyErr {
    match invalid_parameter_type(py) {
        Ok(ty) => PyErr::from_type(ty, message),
        Err(e) => e,
    }
}

/// A core error on its way to Python (the newtype lets us implement `From` for `PyErr`).
pub struct PyFerroError(pub CoreError);

impl From<CoreError> for PyFerroError {
    fn from(e: CoreError) -> Self {
        PyFerroError(e)
    }
}

impl From<PyFerroError> for PyErr {
    fn from(e: PyFerroError) -> PyErr {
        let err = exception(&e.0);
        Python::attach(|py| {
            // The fields cannot fail to convert (numbers, text, None); if they did, the
            // exception still carries the message and an empty `fields`.
            let fields = pythonize::pythonize(py, &e.0)
                .map(Bound::unbind)
                .unwrap_or_else(|_| PyDict::new(py).into_any().unbind());
            let _ = err.value(py).setattr(pyo3::intern!(py, "fields"), fields);
        });
        err
    }
}

/// The package's exception class for the core's error, with its message.
fn exception(e: &CoreError) -> PyErr {
    let message = e.to_string();
    match e {
        CoreError::InvalidParameter { .. } => Python::attach(|py| invalid_parameter(py, message)),
        CoreError::StepDoesNotDivide { .. } => StepDoesNotDivide::new_err(message),
        CoreError::TooManySteps { .. } => TooManySteps::new_err(message),
        CoreError::StepTooSmall { .. } => StepTooSmall::new_err(message),
        CoreError::NoImpact { .. } => NoImpact::new_err(message),
        CoreError::Grazing { .. } => Grazing::new_err(message),
        CoreError::StepSizeUnderflow { .. } => StepSizeUnderflow::new_err(message),
        CoreError::NonFinite { .. } => NonFinite::new_err(message),
        CoreError::HiddenState { .. } => HiddenState::new_err(message),
        CoreError::TwoEventsInOneStep { .. } => TwoEventsInOneStep::new_err(message),
        CoreError::EventsInAdjacentSteps { .. } => EventsInAdjacentSteps::new_err(message),
        CoreError::ProbeDependent { .. } => ProbeDependent::new_err(message),
        CoreError::UnguardedSwitch { .. } => UnguardedSwitch::new_err(message),
        CoreError::ContactSolveFailed { .. } => ContactSolveFailed::new_err(message),
        CoreError::Unstable { .. } => Unstable::new_err(message),
        CoreError::NotDifferentiable { .. } => NotDifferentiable::new_err(message),
        CoreError::SetValued { .. } => SetValued::new_err(message),
        CoreError::Scenario(_) => ScenarioError::new_err(message),
        CoreError::Fixture { .. } => Python::attach(|py| match fixture_error_type(py) {
            Ok(ty) => PyErr::from_type(ty, message),
            Err(e) => e,
        }),
    }
}

/// Shorthand: a core `Result` as a `PyResult`.
pub fn py_result<T>(r: ferromotion_core::Result<T>) -> PyResult<T> {
    r.map_err(|e| PyFerroError(e).into())
}

/// Add the whole tree to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // The class's own `fields`: an error the binding raises itself (a wrong shape) has none.
    py.get_type::<FerroError>()
        .setattr("fields", PyDict::new(py))?;
    m.add("FerroError", py.get_type::<FerroError>())?;
    m.add("InvalidParameter", invalid_parameter_type(py)?)?;
    m.add("FixtureError", fixture_error_type(py)?)?;
    register_variants(m)
}
