//! Conversions between Python objects and the core's types, and nothing else.
//!
//! Jacobians leave as (2, 2) float64 arrays in row-major order: `J[i, j] = d x_i(T) / d x_j(0)`,
//! rows (y, v), columns (y0, v0). nalgebra stores column-major; the core's
//! `to_row_major` flattens, and this file is the only place that reshapes.

use crate::errors::{invalid_parameter, py_result};
use ferromotion_core::descent::{Arm, ArmResult, Descent, Problem};
use ferromotion_core::readout::Flat;
use ferromotion_core::state::to_row_major;
use ferromotion_core::sweep::RouteRow;
use ferromotion_core::{
    Blame, Drop, Fit, Jacobian, Refinement, RouteResult, Sweep, SweepOptions, ToleranceOptions,
};
use numpy::{PyArray1, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A dict of named fields of a core value: `fields!(py, fit; slope, r2)`.
macro_rules! fields {
    ($py:expr, $value:expr; $($field:ident),+) => {{
        let out = PyDict::new($py);
        $(out.set_item(stringify!($field), $value.$field)?;)+
        out
    }};
}

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

/// The six fields of a drop, in the order `Drop::new` takes them.
const DROP_FIELDS: [&str; 6] = ["height", "velocity", "t_final", "gravity", "mass", "zeta"];

/// A drop read from any object with the attributes `height`, `velocity`, `t_final`,
/// `gravity`, `mass` and `zeta` (the public `ferromotion.Drop`), validated by the core.
pub struct DropArg(pub Drop);

impl<'a, 'py> FromPyObject<'a, 'py> for DropArg {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let mut v = [0.0; 6];
        for (slot, name) in v.iter_mut().zip(DROP_FIELDS) {
            *slot = obj.getattr(name)?.extract::<f64>()?;
        }
        Ok(DropArg(py_result(Drop::new(
            v[0], v[1], v[2], v[3], v[4], v[5],
        ))?))
    }
}

/// A drop as a dict of its fields (used for the defaults the core owns).
pub fn drop_dict<'py>(py: Python<'py>, d: &Drop) -> PyResult<Bound<'py, PyDict>> {
    Ok(fields!(py, d; height, velocity, t_final, gravity, mass, zeta))
}

/// Stiffnesses from a float64 array of shape (n,).
pub fn ks_from(obj: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    let py = obj.py();
    let Ok(arr) = obj.cast::<PyArrayDyn<f64>>() else {
        let what = match obj.getattr("dtype") {
            Ok(dtype) => format!("an array of dtype {dtype}"),
            Err(_) => format!("{}", obj.get_type().name()?),
        };
        return Err(invalid_parameter(
            py,
            format!(
                "invalid parameter `k`: expected a float64 numpy array of shape (n,), got {what}"
            ),
        ));
    };
    if arr.ndim() != 1 {
        return Err(invalid_parameter(
            py,
            format!(
                "invalid parameter `k`: expected array of shape (n,), got {:?}",
                Shape(arr.shape())
            ),
        ));
    }
    let view = arr.readonly();
    Ok(view.as_array().iter().copied().collect())
}

/// A shape printed the numpy way: `(3, 2)`, `(4,)`, `()`.
struct Shape<'a>(&'a [usize]);

impl std::fmt::Debug for Shape<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            [n] => write!(f, "({n},)"),
            dims => {
                let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
                write!(f, "({})", parts.join(", "))
            }
        }
    }
}

/// A state `[y, v]` as a (2,) array.
fn state_array<'py>(py: Python<'py>, x: [f64; 2]) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_slice(py, &x)
}

/// A row-major flat Jacobian `[J00, J01, J10, J11]` as a (2, 2) array.
fn jacobian_array(py: Python<'_>, row_major: [f64; 4]) -> PyResult<Bound<'_, PyAny>> {
    Ok(PyArray1::from_slice(py, &row_major)
        .reshape([2, 2])?
        .into_any())
}

/// A nalgebra (column-major) Jacobian as a (2, 2) row-major array.
pub fn jacobian_from_matrix<'py>(py: Python<'py>, j: &Jacobian) -> PyResult<Bound<'py, PyAny>> {
    jacobian_array(py, to_row_major(j))
}

/// One route's answer: state, Jacobian, cost counters and the tolerance route's probe flags.
pub fn route_dict<'py>(py: Python<'py>, r: &RouteResult) -> PyResult<Bound<'py, PyDict>> {
    let out = fields!(py, r.cost; steps, rejected_steps, force_evals, state_force_evals, rollouts);
    out.set_item("state", state_array(py, [r.state[0], r.state[1]]))?;
    out.set_item("jacobian", jacobian_from_matrix(py, &r.jacobian)?)?;
    out.set_item("probe_gap", r.probe_gap)?;
    out.set_item("probe_dependent", r.probe_dependent)?;
    Ok(out)
}

/// A least-squares fit in log-log space.
pub fn fit_dict<'py>(py: Python<'py>, f: &Fit) -> PyResult<Bound<'py, PyDict>> {
    Ok(fields!(py, f; slope, intercept, r2, points))
}

/// The blame split.
pub fn blame_dict<'py>(py: Python<'py>, b: &Blame) -> PyResult<Bound<'py, PyDict>> {
    Ok(
        fields!(py, b; integrator_share, contact_share, ratio, noise_floor,
            integrator_below_floor, contact_below_floor),
    )
}

/// The dt-refinement readout.
pub fn refinement_dict<'py>(py: Python<'py>, r: &Refinement) -> PyResult<Bound<'py, PyDict>> {
    let out = fields!(py, r; base_dt, ratio_10, ratio_100);
    out.set_item("errors", PyArray1::from_slice(py, &r.errors))?;
    Ok(out)
}

/// Tolerance-route options from keyword arguments; `None` takes the core's default.
pub fn tolerance_options(
    rtol: Option<f64>,
    atol: Option<f64>,
    events: bool,
    eps: Option<f64>,
    max_steps: Option<u64>,
) -> ToleranceOptions {
    let d = ToleranceOptions::default();
    ToleranceOptions {
        rtol: rtol.unwrap_or(d.rtol),
        atol: atol.or(d.atol),
        events,
        eps: eps.unwrap_or(d.eps),
        max_steps: max_steps.unwrap_or(d.max_steps),
    }
}

/// The core's default tolerance options as a dict (`atol` None means rtol·1e-2).
pub fn tolerance_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    Ok(fields!(py, ToleranceOptions::default(); rtol, atol, events, eps, max_steps))
}

/// A rigid reference (or any flat answer) as `state` and `jacobian` arrays.
fn flat_dict<'py>(py: Python<'py>, f: &Flat) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("state", state_array(py, f.state))?;
    out.set_item("jacobian", jacobian_array(py, f.jacobian)?)?;
    Ok(out)
}

/// One column per readout of a route across the sweep's rows. The error columns are
/// named for Python (`forward_error`, `gradient_error`), the cost columns as in the core.
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
    let states: Vec<f64> = rows.iter().flat_map(|r| r.flat.state).collect();
    let jacobians: Vec<f64> = rows.iter().flat_map(|r| r.flat.jacobian).collect();
    out.set_item("state", PyArray1::from_vec(py, states).reshape([n, 2])?)?;
    out.set_item(
        "jacobian",
        PyArray1::from_vec(py, jacobians).reshape([n, 2, 2])?,
    )?;
    let probe: Vec<bool> = rows.iter().map(|r| r.probe_dependent).collect();
    out.set_item("probe_dependent", PyArray1::from_vec(py, probe))?;
    Ok(out)
}

/// A sweep as numpy columns: `k`, `exact`, `fixed`, and `tolerance` (with
/// `tolerance_cost_ratio`) / `corrected` / `blame` when the sweep ran them (None otherwise).
pub fn sweep_columns<'py>(
    py: Python<'py>,
    s: &Sweep,
    opts: &SweepOptions,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("dt", s.dt)?;
    out.set_item("k", PyArray1::from_iter(py, s.rows.iter().map(|r| r.k)))?;
    out.set_item("exact", flat_dict(py, &s.exact)?)?;
    let fixed: Vec<&RouteRow> = s.rows.iter().map(|r| &r.fixed).collect();
    out.set_item("fixed", route_columns(py, &fixed)?)?;
    if opts.tolerance.is_some() {
        let t: Vec<&RouteRow> = s.rows.iter().filter_map(|r| r.tolerance.as_ref()).collect();
        out.set_item("tolerance", route_columns(py, &t)?)?;
        let ratio = s.rows.iter().filter_map(|r| r.tolerance_cost_ratio);
        out.set_item("tolerance_cost_ratio", PyArray1::from_iter(py, ratio))?;
    } else {
        out.set_item("tolerance", py.None())?;
        out.set_item("tolerance_cost_ratio", py.None())?;
    }
    if opts.corrected {
        let c: Vec<&RouteRow> = s.rows.iter().filter_map(|r| r.corrected.as_ref()).collect();
        out.set_item("corrected", route_columns(py, &c)?)?;
    } else {
        out.set_item("corrected", py.None())?;
    }
    if opts.blame {
        let b: Vec<&Blame> = s.rows.iter().filter_map(|r| r.blame.as_ref()).collect();
        let d = columns!(py, b; integrator_share, contact_share, ratio, noise_floor,
            integrator_below_floor, contact_below_floor);
        out.set_item("blame", d)?;
    } else {
        out.set_item("blame", py.None())?;
    }
    Ok(out)
}

/// A gradient arm of the descent experiment, read from any object with the attributes
/// `route` (`"exact"`, `"fixed"`, `"tolerance"`, `"corrected"` or `"central_differences"`)
/// and `k`, `dt`, `rtol` (floats, or None where the route takes none; the public
/// `ferromotion.Arm`). The core validates the numbers when the arm runs.
pub struct ArmArg(pub Arm);

impl<'a, 'py> FromPyObject<'a, 'py> for ArmArg {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let py = obj.py();
        let route: String = obj.getattr("route")?.extract()?;
        let number = |name: &str| -> PyResult<f64> {
            obj.getattr(name)?.extract::<Option<f64>>()?.ok_or_else(|| {
                invalid_parameter(
                    py,
                    format!("invalid parameter `{name}`: the `{route}` arm needs {name}, got None"),
                )
            })
        };
        Ok(ArmArg(match route.as_str() {
            "exact" => Arm::Exact,
            "fixed" => Arm::Fixed {
                k: number("k")?,
                dt: number("dt")?,
            },
            "tolerance" => Arm::Tolerance {
                k: number("k")?,
                rtol: number("rtol")?,
            },
            "corrected" => Arm::Corrected {
                k: number("k")?,
                dt: number("dt")?,
            },
            "central_differences" => Arm::CentralDifferences,
            other => {
                return Err(invalid_parameter(
                    py,
                    format!(
                    "invalid parameter `route` = {other:?}: must be one of \"exact\", \"fixed\", \
                         \"tolerance\", \"corrected\", \"central_differences\""
                ),
                ))
            }
        }))
    }
}

/// An arm as a dict `route`, `k`, `dt`, `rtol` (None where the route takes none), plus its
/// table label.
pub fn arm_dict<'py>(py: Python<'py>, arm: &Arm) -> PyResult<Bound<'py, PyDict>> {
    let (route, k, dt, rtol) = match *arm {
        Arm::Exact => ("exact", None, None, None),
        Arm::Fixed { k, dt } => ("fixed", Some(k), Some(dt), None),
        Arm::Tolerance { k, rtol } => ("tolerance", Some(k), None, Some(rtol)),
        Arm::Corrected { k, dt } => ("corrected", Some(k), Some(dt), None),
        Arm::CentralDifferences => ("central_differences", None, None, None),
    };
    let out = PyDict::new(py);
    out.set_item("route", route)?;
    out.set_item("k", k)?;
    out.set_item("dt", dt)?;
    out.set_item("rtol", rtol)?;
    out.set_item("label", arm.label())?;
    Ok(out)
}

/// Points `[a, b]` as an (n, 2) array.
fn points_array<'py>(py: Python<'py>, points: &[[f64; 2]]) -> PyResult<Bound<'py, PyAny>> {
    let flat: Vec<f64> = points.iter().flatten().copied().collect();
    Ok(PyArray1::from_vec(py, flat)
        .reshape([points.len(), 2])?
        .into_any())
}

/// The descent problem's settings (the drop's height and velocity are not used).
pub fn problem_dict<'py>(py: Python<'py>, p: &Problem) -> PyResult<Bound<'py, PyDict>> {
    let out = fields!(py, p; optimum, height_range, velocity_range, grid);
    out.set_item("drop", drop_dict(py, &p.drop)?)?;
    Ok(out)
}

/// One arm over all starts: its totals and one dict per start with the path as an (m, 2) array.
fn arm_result_dict<'py>(py: Python<'py>, a: &ArmResult) -> PyResult<Bound<'py, PyDict>> {
    let out = fields!(py, a; converged, cannot_step, iterations, force_evals);
    out.set_item("arm", arm_dict(py, &a.arm)?)?;
    let runs = a
        .runs
        .iter()
        .map(|r| {
            let d = fields!(py, r; iterations, converged, cannot_step, force_evals, final_loss);
            d.set_item("path", points_array(py, &r.path)?)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    out.set_item("runs", runs)?;
    Ok(out)
}

/// The descent experiment: problem, target, the landscape (loss as an (n_height,
/// n_velocity) array, NaN outside the one-bounce region) and one dict per arm.
pub fn descent_columns<'py>(py: Python<'py>, d: &Descent) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("problem", problem_dict(py, &d.problem)?)?;
    out.set_item("target", state_array(py, d.target))?;
    let l = &d.landscape;
    let land = fields!(py, l; local_minima);
    land.set_item("heights", PyArray1::from_slice(py, &l.heights))?;
    land.set_item("velocities", PyArray1::from_slice(py, &l.velocities))?;
    land.set_item(
        "loss",
        PyArray1::from_slice(py, &l.loss).reshape([l.heights.len(), l.velocities.len()])?,
    )?;
    land.set_item("grid_minimum", state_array(py, l.grid_minimum))?;
    land.set_item("starts", points_array(py, &l.starts)?)?;
    out.set_item("landscape", land)?;
    let arms = d
        .arms
        .iter()
        .map(|a| arm_result_dict(py, a))
        .collect::<PyResult<Vec<_>>>()?;
    out.set_item("arms", arms)?;
    Ok(out)
}

/// Any serialisable core value as a JSON string (parsed with `json.loads` on the Python side).
/// The core's types always serialise (non-finite numbers become `null`); a failure is a bug.
pub fn to_json<T: serde::Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}
