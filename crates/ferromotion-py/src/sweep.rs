//! Sweeps over stiffness (core: `lab/sweep.rs`): one call in, one answer out ([`answer`]);
//! rows leave as numpy columns.

use crate::convert::{clock, document, ks_from, options, to_json, DropArg, Options};
use crate::errors::py_result;
use ferromotion_core::lab::sweep::RouteRow;
use ferromotion_core::{
    self as fm, Blame, Curve, FerroError, Progress, Sweep, SweepOptions, Watch,
};
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

/// The sweep (core: `sweep::sweep_curve`), timed by this process's clock: the drop, the
/// stiffnesses `ks` (float64, shape (n,)), `options` the core's `SweepOptions` (`dt`,
/// `tolerance`, `corrected`, `blame`; missing keys take its defaults) and `progress`, a
/// callable the core calls with `(done, total)` between chunks of rows (with the GIL taken
/// back; Ctrl-C or an exception it raises stops the sweep and is raised here). Without
/// `progress` the rows run in one chunk. The answer is [`answer`].
#[pyfunction]
#[pyo3(signature = (drop, ks, options=None, progress=None))]
fn sweep<'py>(
    py: Python<'py>,
    drop: DropArg,
    ks: &Bound<'py, PyAny>,
    options: Option<Options<SweepOptions>>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let ks = ks_from(ks)?;
    let opts = self::options(options);
    let mut kept: Option<PyErr> = None;
    let curve = py.detach(|| {
        let clock = clock();
        let mut observe = |p: Progress| -> fm::Result<()> {
            Python::attach(|py| {
                let told = match &progress {
                    Some(f) => py
                        .check_signals()
                        .and_then(|()| f.call1(py, (p.done, p.total))),
                    None => Ok(py.None()),
                };
                told.map(|_| ()).map_err(|e| {
                    kept = Some(e);
                    FerroError::Scenario("stopped by the progress callback".into())
                })
            })
        };
        let watch = Watch {
            clock: Some(&clock),
            progress: match progress {
                Some(_) => Some(&mut observe),
                None => None,
            },
        };
        fm::sweep_curve(&drop.0, &ks, &opts, watch)
    });
    if let Some(e) = kept {
        return Err(e);
    }
    answer(py, &py_result(curve)?)
}

/// A sweep leaving for Python, the one way it does (`_core.sweep`, `Workbench.curve`): a dict
/// of `options` (the core's `SweepOptions` document), numpy columns (`k`, `fixed`, ...; see
/// [`sweep_columns`]), `exponent` and `exponent_error` (documents or None), `wrong_sign`
/// (the bands' documents) and `json`, the core's serialisation of the sweep (options, exact,
/// rows), for export.
pub fn answer<'py>(py: Python<'py>, c: &Curve) -> PyResult<Bound<'py, PyDict>> {
    let out = sweep_columns(py, &c.sweep)?;
    out.set_item("options", document(py, &c.sweep.options)?)?;
    out.set_item("exponent", document(py, &c.exponent)?)?;
    out.set_item("exponent_error", document(py, &c.exponent_error)?)?;
    out.set_item("wrong_sign", document(py, &c.wrong_sign)?)?;
    out.set_item("json", to_json(&c.sweep)?)?;
    Ok(out)
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
fn sweep_columns<'py>(py: Python<'py>, s: &Sweep) -> PyResult<Bound<'py, PyDict>> {
    let opts = &s.options;
    let out = PyDict::new(py);
    out.set_item("dt", opts.dt)?;
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
    m.add_function(wrap_pyfunction!(sweep, m)?)
}
