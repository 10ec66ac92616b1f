//! The lab's workbench (core: `lab/workbench.rs`): controls plus the core's caches of the
//! k-independent readouts. The readout leaves as the core's document, the keys the lab reads.

use crate::convert::{clock, document, json_document, ks_from, options, DropArg, Options};
use crate::errors::py_result;
use crate::sweep::answer;
use ferromotion_core::{self as fm, WorkbenchConfig};
use pyo3::prelude::*;
use pyo3::types::PyDict;

#[pyclass(module = "ferromotion._core", name = "Workbench")]
struct PyWorkbench(fm::Workbench);

#[pymethods]
impl PyWorkbench {
    /// `options` is the core's `WorkbenchConfig` without its drop (`k`, `base_dt`,
    /// `dt_divisor`, `tolerance`, `tolerance_options`). Routes are timed (`wall_s`).
    #[new]
    #[pyo3(signature = (drop, options=None))]
    fn new(
        py: Python<'_>,
        drop: DropArg,
        options: Option<Options<WorkbenchConfig>>,
    ) -> PyResult<Self> {
        let config = WorkbenchConfig {
            drop: drop.0,
            ..self::options(options)
        };
        Ok(PyWorkbench(py_result(py.detach(|| {
            fm::Workbench::new(config).map(|b| b.with_clock(clock()))
        }))?))
    }

    fn set_k(&mut self, k: f64) -> PyResult<()> {
        py_result(self.0.set_k(k))
    }

    fn set_log10_k(&mut self, log10_k: f64) -> PyResult<()> {
        py_result(self.0.set_log10_k(log10_k))
    }

    fn set_dt_divisor(&mut self, divisor: u32) -> PyResult<()> {
        py_result(self.0.set_dt_divisor(divisor))
    }

    /// `None` keeps the current value; `jacobian` is `"richardson"` or `"forward"`.
    #[pyo3(signature = (on, rtol=None, events=None, jacobian=None))]
    fn set_tolerance(
        &mut self,
        on: bool,
        rtol: Option<f64>,
        events: Option<bool>,
        jacobian: Option<Options<fm::JacobianMethod>>,
    ) -> PyResult<()> {
        let t = self.0.config().tolerance_options;
        let options = fm::ToleranceOptions {
            rtol: rtol.unwrap_or(t.rtol),
            events: events.unwrap_or(t.events),
            jacobian: jacobian.map_or(t.jacobian, |j| j.0),
            ..t
        };
        py_result(self.0.set_tolerance_options(on, options))
    }

    /// The current controls, as the core serialises its `WorkbenchConfig`.
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        document(py, self.0.config())
    }

    /// The current step, s (base_dt / dt_divisor).
    fn dt(&self) -> f64 {
        self.0.config().dt()
    }

    /// Every readout for the current controls, as the core serialises it.
    fn readout<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let bench = &mut self.0;
        json_document(py, &py_result(py.detach(|| bench.readout()))?)
    }

    /// The fixed (and, when on, tolerance) route against k at the current step: the sweep's
    /// answer (`sweep::answer`), its options the bench's.
    fn curve<'py>(&self, py: Python<'py>, ks: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let ks = ks_from(ks)?;
        let bench = &self.0;
        let curve = py_result(py.detach(|| bench.curve_with(&ks, &Default::default())))?;
        answer(py, &curve)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyWorkbench>()
}
