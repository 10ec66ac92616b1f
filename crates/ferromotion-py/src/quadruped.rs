//! Rigid against penalty contact on a trotting quadruped (`crates/ferromotion-quadruped`, over the core).
//! The configuration enters as the core's `QuadrupedExperiment`; trajectories leave as numpy.

use crate::convert::to_json;
use crate::errors::py_result;
use ferromotion_core::FerroError;
use ferromotion_quadruped::{
    self as quad, ContactMode, QuadrupedExperiment, Trajectory, NDOF, NFEET,
};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The quadruped's two-axis comparison, as the core returns it.
#[pyclass(module = "ferromotion._core", name = "QuadrupedRun", frozen)]
struct PyQuadrupedRun(quad::QuadrupedReport);

#[pymethods]
impl PyQuadrupedRun {
    /// The core's serialisation without the trajectories (`trajectory` gives those).
    fn to_json(&self) -> PyResult<String> {
        let mut slim = self.0.clone();
        for r in std::iter::once(&mut slim.rigid).chain(slim.penalty.iter_mut()) {
            r.trajectory = None;
        }
        to_json(&slim)
    }

    /// The core's two-axis table as text.
    fn table(&self) -> String {
        self.0.table()
    }

    /// Law `index`'s run at dt (0: rigid, then one per stiffness), or None if it failed.
    fn trajectory<'py>(
        &self,
        py: Python<'py>,
        index: usize,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let law = std::iter::once(&self.0.rigid)
            .chain(self.0.penalty.iter())
            .nth(index);
        law.and_then(|l| l.trajectory.as_ref())
            .map(|t| trajectory_dict(py, t))
            .transpose()
    }
}

/// The configuration document (the core's `QuadrupedExperiment` as JSON, like a
/// configuration file; missing fields default, unknown ones raise ScenarioError).
fn read_config(config: &str) -> PyResult<QuadrupedExperiment> {
    py_result(serde_json::from_str(config).map_err(FerroError::from))
}

/// The two-axis comparison (`quadruped_experiment`), GIL released.
#[pyfunction]
fn quadruped(py: Python<'_>, config: &str) -> PyResult<PyQuadrupedRun> {
    let cfg = read_config(config)?;
    let report = py_result(py.detach(|| quad::quadruped_experiment(&cfg)))?;
    Ok(PyQuadrupedRun(report))
}

/// One law rolled out from the experiment's initial state with the library's step; a step
/// that fails raises (Unstable, ContactSolveFailed). `stiffness` None is the rigid law;
/// `steps` None is the configuration's horizon at its dt.
#[pyfunction]
#[pyo3(signature = (config, stiffness=None, steps=None))]
fn quadruped_rollout<'py>(
    py: Python<'py>,
    config: &str,
    stiffness: Option<f64>,
    steps: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = read_config(config)?;
    let t = py_result(py.detach(|| cfg.rollout(stiffness, steps)))?;
    trajectory_dict(py, &t)
}

/// A run for plots and animation: `t` (n+1,), `state` (n+1, 22) = [q (11), v (11)],
/// `modes` (n, 4) int8 codes into `MODE_NAMES`, `points` (n+1, 12, 2) = hips, knees, feet
/// (FL, FR, HL, HR each), (x, z) in m.
fn trajectory_dict<'py>(py: Python<'py>, t: &Trajectory) -> PyResult<Bound<'py, PyDict>> {
    let n = t.t.len();
    let out = PyDict::new(py);
    out.set_item("t", PyArray1::from_slice(py, &t.t))?;
    let state = PyArray1::from_slice(py, &t.state).reshape([n, 2 * NDOF])?;
    out.set_item("state", state)?;
    let codes = t
        .modes
        .iter()
        .flatten()
        .map(|&m| MODES.iter().position(|&x| x == m).unwrap_or(0) as i8);
    let modes = PyArray1::from_iter(py, codes).reshape([t.modes.len(), NFEET])?;
    out.set_item("modes", modes)?;
    let points = PyArray1::from_slice(py, &t.points).reshape([n, 3 * NFEET, 2])?;
    out.set_item("points", points)?;
    Ok(out)
}

/// The contact modes in code order.
const MODES: [ContactMode; 4] = [
    ContactMode::Separated,
    ContactMode::Sticking,
    ContactMode::SlidingForward,
    ContactMode::SlidingBackward,
];

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The modes' names as the core serialises them.
    let name = |m: &ContactMode| serde_json::to_value(m).ok()?.as_str().map(String::from);
    let names: Vec<String> = MODES
        .iter()
        .map(|m| name(m).unwrap_or_else(|| format!("{m:?}")))
        .collect();
    m.add("MODE_NAMES", names)?;
    m.add("FOOT_NAMES", quad::FOOT_NAMES.to_vec())?;
    m.add_function(wrap_pyfunction!(quadruped, m)?)?;
    m.add_function(wrap_pyfunction!(quadruped_rollout, m)?)?;
    m.add_class::<PyQuadrupedRun>()
}
