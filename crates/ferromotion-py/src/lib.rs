//! `ferromotion._core`: the PyO3 layer over `ferromotion-core`. Private; the public API is
//! the `ferromotion` package, which wraps these functions and carries the docstrings.
//!
//! Every function converts its input (`convert.rs`), calls the core with the GIL released
//! (`py.detach`), and converts the output. Core errors become the exception tree of
//! `errors.rs`. Arguments left as `None` take the core's own defaults (see `DEFAULTS`).

mod convert;
mod errors;

use convert::{
    arm_dict, blame_dict, check_options, conditioning_dict, descent_columns, drop_dict,
    event_signature, fit_dict, floats, hybrid_dict, ks_from, matrix_from, mode_names, problem_dict,
    refinement_dict, route_dict, sweep_columns, to_json, tolerance_defaults, tolerance_options,
    trajectory_dict, ArmArg, DropArg, ObjectiveArg, PySystem, Raised, Shipped,
};
use errors::py_result;
use ferromotion_core as fm;
use ferromotion_core::check::{self, CheckOptions, Receipt};
use ferromotion_core::descent::{self as experiment, Arm, Problem};
use ferromotion_core::hybrid::{self, HybridOptions};
use ferromotion_core::quadruped::{self as quad, ContactLaw, PenaltyContact, QuadrupedExperiment};
use ferromotion_core::{fixtures, readout};
use nalgebra::DVector;
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

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

#[pyfunction]
#[pyo3(signature = (drop, restitution=None, graze_speed=None))]
fn exact(
    py: Python<'_>,
    drop: DropArg,
    restitution: Option<f64>,
    graze_speed: Option<f64>,
) -> PyResult<Bound<'_, PyDict>> {
    let d = fm::ExactOptions::default();
    let opts = fm::ExactOptions {
        restitution: restitution.or(d.restitution),
        graze_speed: graze_speed.unwrap_or(d.graze_speed),
    };
    let r = py_result(py.detach(|| fm::exact(&drop.0, &opts)))?;
    route_dict(py, &r)
}

#[pyfunction]
#[pyo3(signature = (drop, k, dt, max_steps=None))]
fn fixed(
    py: Python<'_>,
    drop: DropArg,
    k: f64,
    dt: f64,
    max_steps: Option<u64>,
) -> PyResult<Bound<'_, PyDict>> {
    let opts = fm::FixedOptions {
        max_steps: max_steps.unwrap_or(fm::FixedOptions::default().max_steps),
    };
    let r = py_result(py.detach(|| fm::fixed(&drop.0, k, dt, &opts)))?;
    route_dict(py, &r)
}

#[pyfunction]
#[pyo3(signature = (drop, k, dt, locate=None, max_steps=None))]
fn corrected(
    py: Python<'_>,
    drop: DropArg,
    k: f64,
    dt: f64,
    locate: Option<bool>,
    max_steps: Option<u64>,
) -> PyResult<Bound<'_, PyDict>> {
    let d = fm::CorrectedOptions::default();
    let opts = fm::CorrectedOptions {
        locate: locate.unwrap_or(d.locate),
        max_steps: max_steps.unwrap_or(d.max_steps),
    };
    let r = py_result(py.detach(|| fm::corrected(&drop.0, k, dt, &opts)))?;
    route_dict(py, &r)
}

#[pyfunction]
#[pyo3(signature = (drop, k, root_rtol=None, max_events=None))]
fn flow(
    py: Python<'_>,
    drop: DropArg,
    k: f64,
    root_rtol: Option<f64>,
    max_events: Option<u64>,
) -> PyResult<Bound<'_, PyDict>> {
    let d = fm::FlowOptions::default();
    let opts = fm::FlowOptions {
        root_rtol: root_rtol.unwrap_or(d.root_rtol),
        max_events: max_events.unwrap_or(d.max_events),
    };
    let r = py_result(py.detach(|| fm::flow(&drop.0, k, &opts)))?;
    route_dict(py, &r)
}

#[pyfunction]
#[pyo3(signature = (drop, k, rtol=None, atol=None, events=false, eps=None, max_steps=None))]
#[allow(clippy::too_many_arguments)]
fn tolerance(
    py: Python<'_>,
    drop: DropArg,
    k: f64,
    rtol: Option<f64>,
    atol: Option<f64>,
    events: bool,
    eps: Option<f64>,
    max_steps: Option<u64>,
) -> PyResult<Bound<'_, PyDict>> {
    let opts = tolerance_options(rtol, atol, events, eps, max_steps);
    let r = py_result(py.detach(|| fm::tolerance(&drop.0, k, &opts)))?;
    route_dict(py, &r)
}

#[pyfunction]
fn blame(py: Python<'_>, drop: DropArg, k: f64, dt: f64) -> PyResult<Bound<'_, PyDict>> {
    let b = py_result(py.detach(|| fm::blame(&drop.0, k, dt)))?;
    blame_dict(py, &b)
}

#[pyfunction]
fn divergence_exponent(py: Python<'_>, drop: DropArg, dt: f64) -> PyResult<Bound<'_, PyDict>> {
    let f = py_result(py.detach(|| fm::divergence_exponent(&drop.0, dt)))?;
    fit_dict(py, &f)
}

/// A least-squares line through (log10 x, log10 y): the core's fit, for exponents measured
/// outside the core (an engine audit's gradient errors against k).
#[pyfunction]
fn fit_loglog(py: Python<'_>, x: Vec<f64>, y: Vec<f64>) -> PyResult<Bound<'_, PyDict>> {
    let f = py_result(readout::fit_loglog(&x, &y))?;
    fit_dict(py, &f)
}

#[pyfunction]
fn contact_share_exponent(py: Python<'_>, drop: DropArg) -> PyResult<Bound<'_, PyDict>> {
    let f = py_result(py.detach(|| readout::contact_share_exponent(&drop.0)))?;
    fit_dict(py, &f)
}

#[pyfunction]
fn dt_refinement(
    py: Python<'_>,
    drop: DropArg,
    k: f64,
    base_dt: f64,
) -> PyResult<Bound<'_, PyDict>> {
    let r = py_result(py.detach(|| fm::dt_refinement(&drop.0, k, base_dt)))?;
    refinement_dict(py, &r)
}

#[pyfunction]
fn limit_restitution(drop: DropArg) -> PyResult<f64> {
    py_result(fm::limit_restitution(drop.0.zeta))
}

#[pyfunction]
#[pyo3(signature = (drop, k, speed=None))]
fn realised_restitution(
    py: Python<'_>,
    drop: DropArg,
    k: f64,
    speed: Option<f64>,
) -> PyResult<Option<f64>> {
    let speed = speed.unwrap_or_else(|| drop.0.impact_speed());
    py_result(py.detach(|| fm::realised_restitution(&drop.0, k, speed)))
}

#[pyfunction]
#[pyo3(signature = (drop, speed=None))]
fn time_of_impact_term(drop: DropArg, speed: Option<f64>) -> PyResult<f64> {
    let d = drop.0;
    py_result(d.time_of_impact_term(speed.unwrap_or_else(|| d.impact_speed())))
}

#[pyfunction]
fn matched_dt(drop: DropArg, k: f64) -> PyResult<f64> {
    py_result(readout::matched_dt(&drop.0, k))
}

#[pyfunction]
fn log_grid(
    py: Python<'_>,
    lo: f64,
    hi: f64,
    per_decade: u32,
) -> PyResult<Bound<'_, PyArray1<f64>>> {
    Ok(PyArray1::from_vec(
        py,
        py_result(readout::log_grid(lo, hi, per_decade))?,
    ))
}

#[pyfunction]
fn evaluate(py: Python<'_>, scenario: &str) -> PyResult<String> {
    let e = py_result(py.detach(|| {
        fm::scenario::Scenario::from_json(scenario).and_then(|sc| fm::scenario::evaluate(&sc))
    }))?;
    to_json(&e)
}

/// A sweep over stiffness, grown chunk by chunk (`extend`) so that the Python side can
/// show progress; the rows live in the core's own `Sweep`.
#[pyclass(module = "ferromotion._core", name = "SweepRun")]
struct PySweepRun {
    drop: fm::Drop,
    opts: fm::SweepOptions,
    sweep: fm::Sweep,
}

#[pymethods]
impl PySweepRun {
    #[new]
    #[pyo3(signature = (
        drop, dt=None, tolerance=false, rtol=None, atol=None, events=false, eps=None,
        max_steps=None, corrected=false, blame=false,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        drop: DropArg,
        dt: Option<f64>,
        tolerance: bool,
        rtol: Option<f64>,
        atol: Option<f64>,
        events: bool,
        eps: Option<f64>,
        max_steps: Option<u64>,
        corrected: bool,
        blame: bool,
    ) -> PyResult<Self> {
        let t = tolerance_options(rtol, atol, events, eps, max_steps);
        py_result(t.integrator())?;
        let opts = fm::SweepOptions {
            dt: dt.unwrap_or(fm::SweepOptions::default().dt),
            tolerance: tolerance.then_some(t),
            corrected,
            blame,
        };
        // An empty sweep validates the drop and dt and holds the rigid reference.
        let sweep = py_result(py.detach(|| fm::sweep(&drop.0, &[], &opts)))?;
        Ok(PySweepRun {
            drop: drop.0,
            opts,
            sweep,
        })
    }

    /// Run the routes at the stiffnesses `ks` and append the rows.
    fn extend(&mut self, py: Python<'_>, ks: &Bound<'_, PyAny>) -> PyResult<()> {
        let ks = ks_from(ks)?;
        let (drop, opts) = (&self.drop, &self.opts);
        let part = py_result(py.detach(|| fm::sweep(drop, &ks, opts)))?;
        self.sweep.rows.extend(part.rows);
        Ok(())
    }

    fn __len__(&self) -> usize {
        self.sweep.rows.len()
    }

    /// Every readout as numpy columns.
    fn columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        sweep_columns(py, &self.sweep, &self.opts)
    }

    /// The core's divergence-exponent fit on the sweep's own points in [1e4, 1e8].
    fn exponent<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        fit_dict(py, &py_result(self.sweep.exponent())?)
    }

    /// The core's serialisation of the sweep (dt, exact, rows).
    fn to_json(&self) -> PyResult<String> {
        to_json(&self.sweep)
    }
}

/// The lab's bench: controls plus the core's caches of k-independent readouts.
#[pyclass(module = "ferromotion._core", name = "Workbench")]
struct PyWorkbench(fm::Workbench);

#[pymethods]
impl PyWorkbench {
    #[new]
    #[pyo3(signature = (
        drop, k=None, base_dt=None, dt_divisor=1, tolerance=false, rtol=None, atol=None,
        events=false, eps=None, max_steps=None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        drop: DropArg,
        k: Option<f64>,
        base_dt: Option<f64>,
        dt_divisor: u32,
        tolerance: bool,
        rtol: Option<f64>,
        atol: Option<f64>,
        events: bool,
        eps: Option<f64>,
        max_steps: Option<u64>,
    ) -> PyResult<Self> {
        let d = fm::WorkbenchConfig::default();
        let config = fm::WorkbenchConfig {
            drop: drop.0,
            k: k.unwrap_or(d.k),
            base_dt: base_dt.unwrap_or(d.base_dt),
            dt_divisor,
            tolerance,
            tolerance_options: tolerance_options(rtol, atol, events, eps, max_steps),
        };
        Ok(PyWorkbench(py_result(
            py.detach(|| fm::Workbench::new(config)),
        )?))
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

    #[pyo3(signature = (on, rtol=None, events=None))]
    fn set_tolerance(&mut self, on: bool, rtol: Option<f64>, events: Option<bool>) -> PyResult<()> {
        let t = self.0.config().tolerance_options;
        py_result(
            self.0
                .set_tolerance(on, rtol.unwrap_or(t.rtol), events.unwrap_or(t.events)),
        )
    }

    /// The current controls: k, dt (current), base_dt, dt_divisor, tolerance, rtol, events.
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.0.config();
        let out = PyDict::new(py);
        out.set_item("k", c.k)?;
        out.set_item("dt", c.dt())?;
        out.set_item("base_dt", c.base_dt)?;
        out.set_item("dt_divisor", c.dt_divisor)?;
        out.set_item("tolerance", c.tolerance)?;
        out.set_item("rtol", c.tolerance_options.rtol)?;
        out.set_item("events", c.tolerance_options.events)?;
        Ok(out)
    }

    /// Every readout for the current controls, as the core serialises it.
    fn readout_json(&mut self, py: Python<'_>) -> PyResult<String> {
        let bench = &mut self.0;
        to_json(&py_result(py.detach(|| bench.readout()))?)
    }

    /// The fixed (and, when on, tolerance) route against k at the current step.
    fn curve(&self, py: Python<'_>, ks: &Bound<'_, PyAny>) -> PyResult<PySweepRun> {
        let ks = ks_from(ks)?;
        let bench = &self.0;
        let sweep = py_result(py.detach(|| bench.curve(&ks)))?;
        let c = bench.config();
        let opts = fm::SweepOptions {
            dt: c.dt(),
            tolerance: c.tolerance.then_some(c.tolerance_options),
            corrected: false,
            blame: false,
        };
        Ok(PySweepRun {
            drop: c.drop,
            opts,
            sweep,
        })
    }
}

/// The descent experiment's result, as the core returns it.
#[pyclass(module = "ferromotion._core", name = "DescentRun", frozen)]
struct PyDescentRun(experiment::Descent);

#[pymethods]
impl PyDescentRun {
    /// Problem, target, landscape and arms, with numpy arrays for the grid and the paths.
    fn columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        descent_columns(py, &self.0)
    }

    /// The core's serialisation (infeasible grid points' NaN loss becomes null).
    fn to_json(&self) -> PyResult<String> {
        to_json(&self.0)
    }
}

/// Gradient descent through one impact: scan the landscape, then run every arm from
/// every start. `arms` None runs the core's standard arms; other arguments left as None
/// take the core's `Problem::default()`.
#[pyfunction]
#[pyo3(signature = (drop, arms=None, optimum=None, height_range=None, velocity_range=None, grid=None))]
fn descent(
    py: Python<'_>,
    drop: DropArg,
    arms: Option<Vec<ArmArg>>,
    optimum: Option<[f64; 2]>,
    height_range: Option<[f64; 2]>,
    velocity_range: Option<[f64; 2]>,
    grid: Option<usize>,
) -> PyResult<PyDescentRun> {
    let d = Problem::default();
    let problem = Problem {
        drop: drop.0,
        optimum: optimum.unwrap_or(d.optimum),
        height_range: height_range.unwrap_or(d.height_range),
        velocity_range: velocity_range.unwrap_or(d.velocity_range),
        grid: grid.unwrap_or(d.grid),
    };
    let arms: Vec<Arm> = match arms {
        Some(a) => a.into_iter().map(|a| a.0).collect(),
        None => Arm::standard(),
    };
    let result = py_result(py.detach(|| experiment::descent(&problem, &arms)))?;
    Ok(PyDescentRun(result))
}

/// The core's standard arms of the descent experiment.
#[pyfunction]
fn standard_arms(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    Arm::standard().iter().map(|a| arm_dict(py, a)).collect()
}

/// `hybrid_jacobian` on a shipped system (GIL released) or on a Python object implementing
/// the `HybridSystem` methods (called back with the GIL held; an exception a method raises
/// is re-raised as it is). Options left as None take `HybridOptions::default()`.
#[pyfunction]
#[pyo3(signature = (system, x0, t0, t1, mode=0, dt=None, graze_speed=None, probe_rtol=None, max_steps=None))]
#[allow(clippy::too_many_arguments)]
fn hybrid_jacobian<'py>(
    py: Python<'py>,
    system: &Bound<'py, PyAny>,
    x0: &Bound<'py, PyAny>,
    t0: f64,
    t1: f64,
    mode: usize,
    dt: Option<f64>,
    graze_speed: Option<f64>,
    probe_rtol: Option<f64>,
    max_steps: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = HybridOptions::default();
    let opts = HybridOptions {
        dt: dt.unwrap_or(d.dt),
        graze_speed: graze_speed.unwrap_or(d.graze_speed),
        probe_rtol: probe_rtol.unwrap_or(d.probe_rtol),
        max_steps: max_steps.unwrap_or(d.max_steps),
    };
    let x0 = DVector::from_vec(floats(x0, "x0", &[None])?);
    let sol = match Shipped::from_tagged(system)? {
        Some(s) => {
            py_result(py.detach(|| hybrid::hybrid_jacobian(s.system(), &x0, mode, t0, t1, &opts)))?
        }
        None => {
            let s = PySystem::new(system)?;
            let r = hybrid::hybrid_jacobian(&s, &x0, mode, t0, t1, &opts);
            s.raised.finish(r)?
        }
    };
    hybrid_dict(py, &sol)
}

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
/// with the GIL held (they are Python); the first exception one raises is re-raised as it
/// is. `objective` is a dict (see `ObjectiveArg`); `extra` the environment identity.
/// (Releasing the GIL would only be taken back for every evaluation.)
#[pyfunction]
#[pyo3(signature = (
    f, grad, x, objective, events=None, hvp=None, eps=None, taylor_h=None, directions=None,
    coordinates=None, seed=None, tol=None, graze_speed=None, extra=Vec::new(),
))]
#[allow(clippy::too_many_arguments)]
fn check_gradient<'py>(
    f: &Bound<'py, PyAny>,
    grad: &Bound<'py, PyAny>,
    x: &Bound<'py, PyAny>,
    objective: ObjectiveArg,
    events: Option<&Bound<'py, PyAny>>,
    hvp: Option<&Bound<'py, PyAny>>,
    eps: Option<Vec<f64>>,
    taylor_h: Option<Vec<f64>>,
    directions: Option<usize>,
    coordinates: Option<bool>,
    seed: Option<u64>,
    tol: Option<f64>,
    graze_speed: Option<f64>,
    extra: Vec<(String, String)>,
) -> PyResult<PyReceipt> {
    let py = f.py();
    let x = floats(x, "x", &[None])?;
    let n = x.len();
    let grad = floats(grad, "grad", &[Some(n)])?;
    let opts = check_options(
        eps,
        taylor_h,
        directions,
        coordinates,
        seed,
        tol,
        graze_speed,
    );
    let raised = Raised::default();
    let arg = |p: &[f64]| PyArray1::from_slice(py, p);
    let mut f = |p: &[f64]| raised.core(|| f.call1((arg(p),))?.extract::<f64>());
    let mut ev = events.map(|e| |p: &[f64]| raised.core(|| event_signature(&e.call1((arg(p),))?)));
    let mut hv =
        hvp.map(|h| |d: &[f64]| raised.core(|| floats(&h.call1((arg(d),))?, "hvp", &[Some(n)])));
    let report = check::check_gradient(
        &mut f,
        ev.as_mut()
            .map(|e| e as &mut dyn FnMut(&[f64]) -> fm::Result<check::EventSignature>),
        hv.as_mut()
            .map(|h| h as &mut dyn FnMut(&[f64]) -> fm::Result<Vec<f64>>),
        &x,
        &grad,
        &opts,
    );
    let report = raised.finish(report)?;
    Ok(receipt(Receipt::new(objective.0, x, grad, report), extra))
}

/// The receipt of one of the core's fixtures (`FIXTURES`), GIL released.
#[pyfunction]
#[pyo3(signature = (
    name, eps=None, taylor_h=None, directions=None, coordinates=None, seed=None, tol=None,
    graze_speed=None, extra=Vec::new(),
))]
#[allow(clippy::too_many_arguments)]
fn check_fixture(
    py: Python<'_>,
    name: &str,
    eps: Option<Vec<f64>>,
    taylor_h: Option<Vec<f64>>,
    directions: Option<usize>,
    coordinates: Option<bool>,
    seed: Option<u64>,
    tol: Option<f64>,
    graze_speed: Option<f64>,
    extra: Vec<(String, String)>,
) -> PyResult<PyReceipt> {
    let opts = check_options(
        eps,
        taylor_h,
        directions,
        coordinates,
        seed,
        tol,
        graze_speed,
    );
    let r = py_result(py.detach(|| fixtures::check_fixture(name, &opts)))?;
    Ok(receipt(r, extra))
}

/// Singular values and weakly observed input combinations of a sensitivity matrix
/// (n_out, n_in), row-major.
#[pyfunction]
#[pyo3(signature = (jacobian, rel=1e-8))]
fn conditioning<'py>(
    py: Python<'py>,
    jacobian: &Bound<'py, PyAny>,
    rel: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let j = matrix_from(jacobian, "jacobian")?;
    let c = py_result(check::conditioning(&j, rel))?;
    conditioning_dict(py, &c, j.ncols())
}

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

/// Read a quadruped configuration (the core's serde format; missing fields default).
fn quadruped_config(config: &str) -> PyResult<QuadrupedExperiment> {
    py_result(serde_json::from_str(config).map_err(fm::FerroError::from))
}

/// The quadruped's two-axis comparison (`quadruped_experiment`), GIL released.
#[pyfunction]
fn quadruped(py: Python<'_>, config: &str) -> PyResult<PyQuadrupedRun> {
    let cfg = quadruped_config(config)?;
    Ok(PyQuadrupedRun(py_result(
        py.detach(|| quad::quadruped_experiment(&cfg)),
    )?))
}

/// The equal-budget table and the probe-size trap (`equal_budget`), GIL released: the
/// core's serde document as JSON text. `options` is the core's `BudgetOptions` in JSON.
#[pyfunction]
#[pyo3(signature = (drop, options="{}"))]
fn equal_budget(py: Python<'_>, drop: DropArg, options: &str) -> PyResult<String> {
    let opts: fm::BudgetOptions =
        py_result(serde_json::from_str(options).map_err(fm::FerroError::from))?;
    to_json(&py_result(py.detach(|| fm::equal_budget(&drop.0, &opts)))?)
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
    let cfg = quadruped_config(config)?;
    py_result(cfg.validate())?;
    let law = match stiffness {
        None => ContactLaw::Rigid,
        Some(k) => ContactLaw::Penalty(py_result(PenaltyContact::from_ratio(
            k,
            cfg.damping_ratio,
            cfg.reference_mass,
        ))?),
    };
    // `validate` has checked that t_final is a whole number of steps within max_steps.
    let steps = steps.unwrap_or_else(|| (cfg.t_final / cfg.dt).round() as usize);
    let t = py_result(py.detach(|| {
        if steps as u64 > cfg.max_steps {
            return Err(fm::FerroError::TooManySteps {
                route: "quadruped rollout",
                max_steps: cfg.max_steps,
                detail: format!("{steps} steps would be needed"),
            });
        }
        let x0 = cfg.robot.initial_state(cfg.clearance, cfg.speed)?;
        quad::rollout(&cfg.robot, &law, &x0, cfg.dt, steps)
    }))?;
    trajectory_dict(py, &t)
}

/// The core's defaults, so that the Python signatures show them without restating them.
fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("drop", drop_dict(py, &fm::Drop::default())?)?;
    out.set_item("tolerance", tolerance_defaults(py)?)?;
    out.set_item("dt", fm::SweepOptions::default().dt)?;
    out.set_item("k", fm::WorkbenchConfig::default().k)?;
    out.set_item("max_steps", fm::DEFAULT_MAX_STEPS)?;
    out.set_item("locate", fm::CorrectedOptions::default().locate)?;
    out.set_item("graze_speed", fm::DEFAULT_GRAZE_SPEED)?;
    let flow = fm::FlowOptions::default();
    out.set_item("root_rtol", flow.root_rtol)?;
    out.set_item("max_events", flow.max_events)?;
    out.set_item("exponent_range", fm::sweep::EXPONENT_RANGE)?;
    out.set_item("lands_below", fm::workbench::LANDS_BELOW)?;
    let desc = problem_dict(py, &Problem::default())?;
    desc.set_item("converged", experiment::CONVERGED)?;
    desc.set_item("max_iterations", experiment::MAX_ITERATIONS)?;
    out.set_item("descent", desc)?;
    let json = |text: String| py.import("json")?.call_method1("loads", (text,));
    out.set_item("check", json(to_json(&CheckOptions::default())?)?)?;
    out.set_item(
        "quadruped",
        json(to_json(&QuadrupedExperiment::default())?)?,
    )?;
    let h = HybridOptions::default();
    let hybrid = PyDict::new(py);
    hybrid.set_item("dt", h.dt)?;
    hybrid.set_item("graze_speed", h.graze_speed)?;
    hybrid.set_item("probe_rtol", h.probe_rtol)?;
    hybrid.set_item("max_steps", h.max_steps)?;
    out.set_item("hybrid", hybrid)?;
    Ok(out)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DEFAULTS", defaults(m.py())?)?;
    m.add("FIXTURES", fixtures::FIXTURES.to_vec())?;
    m.add("RECEIPT_SCHEMA", check::RECEIPT_SCHEMA)?;
    m.add("MODE_NAMES", mode_names())?;
    m.add("FOOT_NAMES", quad::FOOT_NAMES.to_vec())?;
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(validate_drop, m)?)?;
    m.add_function(wrap_pyfunction!(impact_speed, m)?)?;
    m.add_function(wrap_pyfunction!(first_impact_time, m)?)?;
    m.add_function(wrap_pyfunction!(exact, m)?)?;
    m.add_function(wrap_pyfunction!(fixed, m)?)?;
    m.add_function(wrap_pyfunction!(corrected, m)?)?;
    m.add_function(wrap_pyfunction!(flow, m)?)?;
    m.add_function(wrap_pyfunction!(tolerance, m)?)?;
    m.add_function(wrap_pyfunction!(blame, m)?)?;
    m.add_function(wrap_pyfunction!(divergence_exponent, m)?)?;
    m.add_function(wrap_pyfunction!(fit_loglog, m)?)?;
    m.add_function(wrap_pyfunction!(contact_share_exponent, m)?)?;
    m.add_function(wrap_pyfunction!(dt_refinement, m)?)?;
    m.add_function(wrap_pyfunction!(limit_restitution, m)?)?;
    m.add_function(wrap_pyfunction!(realised_restitution, m)?)?;
    m.add_function(wrap_pyfunction!(time_of_impact_term, m)?)?;
    m.add_function(wrap_pyfunction!(matched_dt, m)?)?;
    m.add_function(wrap_pyfunction!(log_grid, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(descent, m)?)?;
    m.add_function(wrap_pyfunction!(standard_arms, m)?)?;
    m.add_class::<PySweepRun>()?;
    m.add_class::<PyDescentRun>()?;
    m.add_class::<PyWorkbench>()?;
    m.add_function(wrap_pyfunction!(hybrid_jacobian, m)?)?;
    m.add_function(wrap_pyfunction!(check_gradient, m)?)?;
    m.add_function(wrap_pyfunction!(check_fixture, m)?)?;
    m.add_function(wrap_pyfunction!(conditioning, m)?)?;
    m.add_function(wrap_pyfunction!(quadruped, m)?)?;
    m.add_function(wrap_pyfunction!(equal_budget, m)?)?;
    m.add_function(wrap_pyfunction!(quadruped_rollout, m)?)?;
    m.add_class::<PyReceipt>()?;
    m.add_class::<PyQuadrupedRun>()?;
    Ok(())
}
