//! Forward matching (core: `fit/`). Observations enter as the core's serde `Observations`,
//! options as its `FitOptions` (both read by `Options`, unknown keys refused); a fit stays a core value behind a handle (`FitReport`), serialised by
//! the core (the document for Python, the JSON text for files). `FitObjective` hands Φ to
//! derivative-free optimisers.

use crate::convert::{clock, document, floats, options, to_json, DropArg, Options};
use crate::errors::py_result;
use ferromotion_core::fit::{self as core_fit, FitOptions, FitProblem, Observations};
use pyo3::prelude::*;

/// A fit's report, as the core wrote it.
#[pyclass(module = "ferromotion._core", name = "FitReport", frozen)]
struct PyFitReport(core_fit::FitReport);

#[pymethods]
impl PyFitReport {
    /// The report as the core's document (non-finite numbers stay NaN/inf).
    fn document<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        document(py, &self.0)
    }

    /// The report as JSON text (non-finite numbers become null).
    fn to_json(&self) -> PyResult<String> {
        to_json(&self.0)
    }
}

/// Fit the drop's parameters to the observations, GIL released.
#[pyfunction]
#[pyo3(signature = (drop, observations, options=None))]
fn fit(
    py: Python<'_>,
    drop: DropArg,
    observations: Options<Observations>,
    options: Option<Options<FitOptions>>,
) -> PyResult<PyFitReport> {
    let obs = observations.0;
    let opts = self::options(options);
    let c = clock();
    let r = py_result(py.detach(|| core_fit::fit(&drop.0, &obs, &opts, Some(&c))))?;
    Ok(PyFitReport(r))
}

/// The route's predictions at sample times `t` (the fit's, without a fit), as the core's document.
#[pyfunction]
#[pyo3(signature = (drop, t, options=None))]
fn fit_predict<'py>(
    py: Python<'py>,
    drop: DropArg,
    t: &Bound<'py, PyAny>,
    options: Option<Options<FitOptions>>,
) -> PyResult<Bound<'py, PyAny>> {
    let t = floats(t, "t", &[None])?;
    let opts = self::options(options);
    document(
        py,
        &py_result(py.detach(|| core_fit::predictions(&drop.0, &t, &opts)))?,
    )
}

/// Φ of a fit problem at the fit's coordinates, for derivative-free optimisers.
#[pyclass(module = "ferromotion._core", name = "FitObjective", frozen)]
struct PyFitObjective {
    problem: FitProblem,
    evaluations: std::sync::atomic::AtomicU64,
}

#[pymethods]
impl PyFitObjective {
    #[new]
    #[pyo3(signature = (drop, observations, options=None))]
    fn new(
        drop: DropArg,
        observations: Options<Observations>,
        options: Option<Options<FitOptions>>,
    ) -> PyResult<Self> {
        let problem = py_result(FitProblem::new(
            &drop.0,
            &observations.0,
            &self::options(options),
        ))?;
        Ok(PyFitObjective {
            problem,
            evaluations: 0.into(),
        })
    }

    /// Φ at coordinates `z`; None outside the model's domain.
    fn __call__(&self, py: Python<'_>, z: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
        let z = floats(z, "z", &[Some(self.problem.names().len())])?;
        let mut n = 0u64;
        let c = py.detach(|| self.problem.cost(&z, &mut n));
        self.evaluations
            .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        Ok(c.ok())
    }

    /// Model evaluations so far.
    #[getter]
    fn evaluations(&self) -> u64 {
        self.evaluations.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The fitted parameters' names.
    #[getter]
    fn names(&self) -> Vec<&'static str> {
        self.problem.names()
    }

    /// The start's coordinates.
    fn start(&self) -> Vec<f64> {
        self.problem.start()
    }

    /// Coordinates of parameter values.
    fn coordinates(&self, theta: Vec<f64>) -> Vec<f64> {
        self.problem.coordinates(&theta)
    }

    /// Parameter values at coordinates.
    fn theta(&self, z: Vec<f64>) -> Vec<f64> {
        self.problem.theta(&z)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FIT_SCHEMA", core_fit::FIT_SCHEMA)?;
    m.add("FIT_DEMO", document(m.py(), &core_fit::FitDemo::default())?)?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(fit_predict, m)?)?;
    m.add_class::<PyFitReport>()?;
    m.add_class::<PyFitObjective>()
}
