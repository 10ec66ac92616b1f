//! Sweeps over stiffness (core: `lab/sweep.rs`). Rows leave as numpy columns.

use crate::convert::{clock, document, ks_from, options, to_json, DropArg, Options};
use crate::errors::py_result;
use ferromotion_core::lab::sweep::RouteRow;
use ferromotion_core::{self as fm, Blame, Sweep, SweepOptions};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// One numpy column per named field across a slice of core values.
macro_rules! columns {
    ($py:expr, $items:expr; $($field:ident),+) => {{
        let out = PyDict::new($py);
        $(out.set_item(
            stringify!($field),
            PyArray1::from_iter($py, $items.iter().map(|x| x.$field)),
        )?;)+
        out
    }};
}

/// A sweep over stiffness, grown chunk by chunk (`extend`) so that the Python side can
/// show progress; the rows live in the core's own `Sweep`.
#[pyclass(module = "ferromotion._core", name = "SweepRun")]
pub struct PySweepRun {
    pub drop: fm::Drop,
    pub opts: SweepOptions,
    pub sweep: Sweep,
}

#[pymethods]
impl PySweepRun {
    /// `options` is the core's `SweepOptions` (`dt`, `tolerance`, `corrected`, `blame`);
    /// `dt`, when given, sets its step.
    #[new]
    #[pyo3(signature = (drop, dt=None, options=None))]
    fn new(
        py: Python<'_>,
        drop: DropArg,
        dt: Option<f64>,
        options: Option<Options<SweepOptions>>,
    ) -> PyResult<Self> {
        let mut opts = self::options(options);
        opts.dt = dt.unwrap_or(opts.dt);
        if let Some(t) = opts.tolerance {
            py_result(t.integrator())?;
        }
        // An empty sweep validates the drop and holds the rigid reference.
        let sweep = py_result(py.detach(|| fm::sweep(&drop.0, &[], &opts)))?;
        Ok(PySweepRun {
            drop: drop.0,
            opts,
            sweep,
        })
    }

    /// Run the routes at the stiffnesses `ks` and append the rows (each route timed).
    fn extend(&mut self, py: Python<'_>, ks: &Bound<'_, PyAny>) -> PyResult<()> {
        let ks = ks_from(ks)?;
        let (drop, opts) = (&self.drop, &self.opts);
        let part = py_result(py.detach(|| fm::sweep_timed(drop, &ks, opts, Some(&clock()))))?;
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
    fn exponent<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        document(py, &py_result(self.sweep.exponent())?)
    }

    /// The core's serialisation of the sweep (dt, exact, rows), for `Sweep.to_json`.
    fn to_json(&self) -> PyResult<String> {
        to_json(&self.sweep)
    }
}

/// One column per readout of a route across the sweep's rows. The error columns are
/// named for Python (`forward_error`, `gradient_error`), the cost columns as in the core;
/// `wall_s` is NaN for a row that was not timed.
fn route_columns<'py>(py: Python<'py>, rows: &[&RouteRow]) -> PyResult<Bound<'py, PyDict>> {
    let n = rows.len();
    let costs: Vec<_> = rows.iter().map(|r| r.cost).collect();
    let out = columns!(py, costs; steps, rejected_steps, force_evals, state_force_evals, rollouts);
    let errors: Vec<_> = rows.iter().map(|r| r.errors).collect();
    out.update(columns!(py, errors; dy, dv, dv_dy0, right_sign).as_mapping())?;
    let col = |f: &dyn Fn(&RouteRow) -> f64| PyArray1::from_iter(py, rows.iter().map(|r| f(r)));
    out.set_item("forward_error", col(&|r| r.errors.forward))?;
    out.set_item("gradient_error", col(&|r| r.errors.gradient))?;
    let units: Vec<&str> = rows.iter().map(|r| r.errors.forward_unit).collect();
    out.set_item("forward_unit", units)?;
    let signs: Vec<&str> = rows.iter().map(|r| r.errors.sign.as_str()).collect();
    out.set_item("sign", signs)?;
    let states: Vec<f64> = rows.iter().flat_map(|r| r.flat.state).collect();
    let jacobians: Vec<f64> = rows.iter().flat_map(|r| r.flat.jacobian).collect();
    out.set_item("state", PyArray1::from_vec(py, states).reshape([n, 2])?)?;
    let jacobians = PyArray1::from_vec(py, jacobians).reshape([n, 2, 2])?;
    out.set_item("jacobian", jacobians)?;
    out.set_item("wall_s", col(&|r| r.wall_s.unwrap_or(f64::NAN)))?;
    let probe: Vec<bool> = rows.iter().map(|r| r.probe_dependent).collect();
    out.set_item("probe_dependent", PyArray1::from_vec(py, probe))?;
    Ok(out)
}

/// A sweep as numpy columns: `k`, `exact` (the core's document), `fixed`, and `tolerance`
/// (with `tolerance_cost_ratio`) / `corrected` / `blame` when the sweep ran them (None
/// otherwise).
pub fn sweep_columns<'py>(
    py: Python<'py>,
    s: &Sweep,
    opts: &SweepOptions,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("dt", s.dt)?;
    out.set_item("k", PyArray1::from_iter(py, s.rows.iter().map(|r| r.k)))?;
    out.set_item("exact", document(py, &s.exact)?)?;
    let fixed: Vec<&RouteRow> = s.rows.iter().map(|r| &r.fixed).collect();
    out.set_item("fixed", route_columns(py, &fixed)?)?;
    let (mut tolerance, mut ratio, mut corrected, mut blame) = (None, None, None, None);
    if opts.tolerance.is_some() {
        let t: Vec<&RouteRow> = s.rows.iter().filter_map(|r| r.tolerance.as_ref()).collect();
        tolerance = Some(route_columns(py, &t)?);
        let r = s.rows.iter().filter_map(|r| r.tolerance_cost_ratio);
        ratio = Some(PyArray1::from_iter(py, r));
    }
    if opts.corrected {
        let c: Vec<&RouteRow> = s.rows.iter().filter_map(|r| r.corrected.as_ref()).collect();
        corrected = Some(route_columns(py, &c)?);
    }
    if opts.blame {
        let b: Vec<&Blame> = s.rows.iter().filter_map(|r| r.blame.as_ref()).collect();
        blame = Some(
            columns!(py, b; integrator_share, contact_share, ratio, noise_floor,
            integrator_below_floor, contact_below_floor),
        );
    }
    out.set_item("tolerance", tolerance)?;
    out.set_item("tolerance_cost_ratio", ratio)?;
    out.set_item("corrected", corrected)?;
    out.set_item("blame", blame)?;
    Ok(out)
}

/// The wrong-sign bands (core: `sweep::wrong_sign_bands_of`) as (from, to) pairs, N/m.
#[pyfunction]
fn wrong_sign_bands(k: Vec<f64>, right_sign: Vec<bool>) -> PyResult<Vec<(f64, f64)>> {
    let bands = py_result(fm::lab::sweep::wrong_sign_bands_of(&k, &right_sign))?;
    Ok(bands.iter().map(|b| (b.from, b.to)).collect())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(wrong_sign_bands, m)?)?;
    m.add_class::<PySweepRun>()
}
