//! Conversions between Python objects and the core's types, and nothing else.
//!
//! Jacobians leave as (2, 2) float64 arrays in row-major order: `J[i, j] = d x_i(T) / d x_j(0)`,
//! rows (y, v), columns (y0, v0); `hybrid_jacobian`'s and `conditioning`'s (n_out, n_in)
//! matrices the same way. nalgebra stores column-major; the core's `to_row_major` and
//! `matrix_array` / `matrix_from` here flatten, and this file is the only place that reshapes.
//!
//! Python callables the core calls back (`check_gradient`'s objective, a Python-defined
//! `HybridSystem`) go through [`Raised`]: the first exception is kept and re-raised unchanged
//! once the core returns.

use crate::errors::{invalid_parameter, py_result};
use ferromotion_core::check::{CheckOptions, Conditioning, EventSignature, ObjectiveInfo};
use ferromotion_core::descent::{Arm, ArmResult, Descent, Problem};
use ferromotion_core::hybrid::{
    BouncingDrop, HybridSolution, HybridSystem, SlopeBall, WarmStartedDrop,
};
use ferromotion_core::quadruped::{ContactMode, Trajectory, NDOF, NFEET};
use ferromotion_core::readout::Flat;
use ferromotion_core::state::to_row_major;
use ferromotion_core::sweep::RouteRow;
use ferromotion_core::{
    Blame, Drop, FerroError, Fit, Jacobian, Refinement, RouteResult, Sweep, SweepOptions,
    ToleranceOptions,
};
use nalgebra::{DMatrix, DVector};
use numpy::{
    AllowTypeChange, PyArray1, PyArrayDyn, PyArrayLikeDyn, PyArrayMethods, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::cell::RefCell;

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

// ---------------------------------------------------------------------------------------
// Gradient checks, hybrid_jacobian, conditioning

/// Numbers of a given shape from any array-like (lists, other dtypes), read in row-major
/// order; a wrong shape raises `InvalidParameter` naming `what` and both shapes.
/// `None` in `shape` accepts any length along that axis.
pub fn floats(obj: &Bound<'_, PyAny>, what: &str, shape: &[Option<usize>]) -> PyResult<Vec<f64>> {
    Ok(shaped(obj, what, shape)?.0)
}

/// `floats` with the shape found.
fn shaped(
    obj: &Bound<'_, PyAny>,
    what: &str,
    shape: &[Option<usize>],
) -> PyResult<(Vec<f64>, Vec<usize>)> {
    let py = obj.py();
    let arr: PyArrayLikeDyn<'_, f64, AllowTypeChange> = obj.extract().map_err(|e: PyErr| {
        invalid_parameter(
            py,
            format!("invalid parameter `{what}`: expected numbers: {e}"),
        )
    })?;
    let fits = arr.ndim() == shape.len()
        && arr
            .shape()
            .iter()
            .zip(shape)
            .all(|(&n, s)| s.is_none_or(|s| s == n));
    if !fits {
        let dims: Vec<String> = shape
            .iter()
            .zip(["n", "m"].iter().chain(std::iter::repeat(&"k")))
            .map(|(s, letter)| s.map_or_else(|| letter.to_string(), |n| n.to_string()))
            .collect();
        let expected = match dims.as_slice() {
            [one] => format!("({one},)"),
            many => format!("({})", many.join(", ")),
        };
        return Err(invalid_parameter(
            py,
            format!(
                "invalid parameter `{what}`: expected array of shape {expected}, got {:?}",
                Shape(arr.shape())
            ),
        ));
    }
    Ok((
        arr.as_array().iter().copied().collect(),
        arr.shape().to_vec(),
    ))
}

/// A row-major (rows, cols) array from a (column-major) nalgebra matrix.
pub fn matrix_array<'py>(py: Python<'py>, m: &DMatrix<f64>) -> PyResult<Bound<'py, PyAny>> {
    let (r, c) = m.shape();
    let flat = (0..r).flat_map(|i| (0..c).map(move |j| m[(i, j)]));
    Ok(PyArray1::from_iter(py, flat).reshape([r, c])?.into_any())
}

/// A (rows, cols) array of any shape as an nalgebra matrix: `J[i, j]` stays `J[i, j]`.
pub fn matrix_from(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<DMatrix<f64>> {
    let (data, shape) = shaped(obj, what, &[None, None])?;
    Ok(DMatrix::from_row_slice(shape[0], shape[1], &data))
}

/// Gradient-check options; `None` takes the core's default.
#[allow(clippy::too_many_arguments)]
pub fn check_options(
    eps: Option<Vec<f64>>,
    taylor_h: Option<Vec<f64>>,
    directions: Option<usize>,
    coordinates: Option<bool>,
    seed: Option<u64>,
    tol: Option<f64>,
    graze_speed: Option<f64>,
) -> CheckOptions {
    let d = CheckOptions::default();
    CheckOptions {
        eps: eps.unwrap_or(d.eps),
        taylor_h: taylor_h.unwrap_or(d.taylor_h),
        random_directions: directions.unwrap_or(d.random_directions),
        coordinates: coordinates.unwrap_or(d.coordinates),
        seed: seed.unwrap_or(d.seed),
        tol: tol.unwrap_or(d.tol),
        graze_speed: graze_speed.unwrap_or(d.graze_speed),
    }
}

/// What a check certifies against, read from a dict with the keys `name`, `units`,
/// `description`, `route`, `integrator` (str) and `tolerances` (a dict name -> float);
/// missing keys are empty.
pub struct ObjectiveArg(pub ObjectiveInfo);

impl<'a, 'py> FromPyObject<'a, 'py> for ObjectiveArg {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let d = obj.cast::<PyDict>()?;
        let text = |key: &str| -> PyResult<String> {
            Ok(match d.get_item(key)? {
                Some(v) => v.extract()?,
                None => String::new(),
            })
        };
        let tolerances: Vec<(String, f64)> = match d.get_item("tolerances")? {
            Some(t) => t
                .cast::<PyDict>()?
                .iter()
                .map(|(k, v)| Ok((k.extract()?, v.extract()?)))
                .collect::<PyResult<_>>()?,
            None => Vec::new(),
        };
        Ok(ObjectiveArg(ObjectiveInfo {
            name: text("name")?,
            units: text("units")?,
            description: text("description")?,
            route: text("route")?,
            integrator: text("integrator")?,
            tolerances,
        }))
    }
}

/// The first exception a Python callback raised while the core ran. The core sees a
/// placeholder error (or, inside `HybridSystem` methods, NaN), every later callback is
/// skipped, and `finish` raises the kept exception unchanged.
#[derive(Default)]
pub struct Raised(RefCell<Option<PyErr>>);

impl Raised {
    /// Run `f` unless a callback already raised; keep its exception.
    pub fn call<T>(&self, f: impl FnOnce() -> PyResult<T>) -> Option<T> {
        if self.0.borrow().is_some() {
            return None;
        }
        f().map_err(|e| *self.0.borrow_mut() = Some(e)).ok()
    }

    /// `call` as a core result.
    pub fn core<T>(&self, f: impl FnOnce() -> PyResult<T>) -> ferromotion_core::Result<T> {
        self.call(f).ok_or_else(|| FerroError::InvalidParameter {
            name: "callback",
            value: f64::NAN,
            limit: "a Python callback raised (its exception is re-raised)".into(),
        })
    }

    /// The kept exception if there is one, else the core's result.
    pub fn finish<T>(self, r: ferromotion_core::Result<T>) -> PyResult<T> {
        match self.0.into_inner() {
            Some(e) => Err(e),
            None => py_result(r),
        }
    }
}

/// What an `events` callable returned: a sequence of ints, one int, or
/// `(sequence, min_event_speed)` (the speed may be None).
pub fn event_signature(obj: &Bound<'_, PyAny>) -> PyResult<EventSignature> {
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

/// The conditioning readout: singular values (k,), condition number, weak input
/// combinations as rows of an (m, n_in) array.
pub fn conditioning_dict<'py>(
    py: Python<'py>,
    c: &Conditioning,
    n_in: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let out = fields!(py, c; condition_number);
    out.set_item(
        "singular_values",
        PyArray1::from_slice(py, &c.singular_values),
    )?;
    let weak: Vec<f64> = c.weak_directions.iter().flatten().copied().collect();
    out.set_item(
        "weak_directions",
        PyArray1::from_vec(py, weak).reshape([c.weak_directions.len(), n_in])?,
    )?;
    Ok(out)
}

/// A `hybrid_jacobian` answer: `x` (n,), `mode`, `jacobian` (n, n) row-major, `events`
/// (one dict per event), `probe_gap`, `spectral_radius` and `worst_gain`.
pub fn hybrid_dict<'py>(py: Python<'py>, s: &HybridSolution) -> PyResult<Bound<'py, PyDict>> {
    let out = fields!(py, s; mode, probe_gap, spectral_radius, worst_gain);
    out.set_item("x", PyArray1::from_slice(py, s.x.as_slice()))?;
    out.set_item("jacobian", matrix_array(py, &s.jacobian)?)?;
    let events = s
        .events
        .iter()
        .map(|e| Ok(fields!(py, e; t, mode_before, guard, mode_after, guard_speed, saltation_max)))
        .collect::<PyResult<Vec<_>>>()?;
    out.set_item("events", events)?;
    Ok(out)
}

/// One of the shipped hybrid systems, read from the public dataclass whose `_system`
/// class attribute names it (`"bouncing_drop"`, `"slope_ball"`, `"warm_started_drop"`).
#[derive(Clone, Copy)]
pub enum Shipped {
    /// `BouncingDrop(gravity, restitution)`.
    Drop(BouncingDrop),
    /// `SlopeBall(gravity, restitution, angle)`.
    Slope(SlopeBall),
    /// `WarmStartedDrop(gravity, restitution)`.
    Warm(WarmStartedDrop),
}

impl Shipped {
    /// The core's system.
    pub fn system(&self) -> &dyn HybridSystem {
        match self {
            Shipped::Drop(s) => s,
            Shipped::Slope(s) => s,
            Shipped::Warm(s) => s,
        }
    }

    /// Read a shipped system, or `None` when `obj` has no `_system` tag.
    pub fn from_tagged(obj: &Bound<'_, PyAny>) -> PyResult<Option<Self>> {
        let Ok(tag) = obj.getattr("_system") else {
            return Ok(None);
        };
        let num = |name: &str| -> PyResult<f64> { obj.getattr(name)?.extract() };
        let drop = || -> PyResult<BouncingDrop> {
            Ok(BouncingDrop {
                gravity: num("gravity")?,
                restitution: num("restitution")?,
            })
        };
        Ok(Some(match tag.extract::<String>()?.as_str() {
            "bouncing_drop" => Shipped::Drop(drop()?),
            "warm_started_drop" => Shipped::Warm(WarmStartedDrop(drop()?)),
            "slope_ball" => Shipped::Slope(SlopeBall {
                gravity: num("gravity")?,
                restitution: num("restitution")?,
                angle: num("angle")?,
            }),
            other => {
                return Err(invalid_parameter(
                    obj.py(),
                    format!("invalid parameter `system`: unknown shipped system {other:?}"),
                ))
            }
        }))
    }
}

/// The methods a Python-defined hybrid system must have: those of the core's
/// `HybridSystem` trait, with the same arguments (`hidden_state()` and `name` optional).
const SYSTEM_METHODS: [&str; 7] = [
    "rhs",
    "rhs_jacobian",
    "guard_count",
    "guard",
    "guard_gradient",
    "reset",
    "reset_jacobian",
];

/// A Python object implementing `HybridSystem`, called back with the GIL held. Arrays go
/// out as float64 (n,) copies; results are checked for shape. A callback that raises (or
/// returns a wrong shape) is kept in `raised`; the core then sees NaN and `finish`
/// re-raises the exception.
pub struct PySystem<'py> {
    obj: Bound<'py, PyAny>,
    dim: usize,
    name: String,
    hidden: Option<String>,
    /// The first exception a method raised.
    pub raised: Raised,
}

impl<'py> PySystem<'py> {
    /// Check the protocol and read `dim`, `name` and `hidden_state()`.
    pub fn new(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let missing: Vec<&str> = SYSTEM_METHODS
            .into_iter()
            .filter(|m| !obj.hasattr(*m).unwrap_or(false))
            .collect();
        if !missing.is_empty() || !obj.hasattr("dim")? {
            return Err(PyTypeError::new_err(format!(
                "a hybrid system is fm.BouncingDrop, fm.SlopeBall, fm.WarmStartedDrop or an object with \
                 `dim` and the methods {}; {} lacks {}",
                SYSTEM_METHODS.join(", "),
                obj.get_type().name()?,
                if missing.is_empty() { "`dim`".to_string() } else { missing.join(", ") }
            )));
        }
        let name = match obj.getattr("name") {
            Ok(n) => n.extract()?,
            Err(_) => obj.get_type().name()?.to_string(),
        };
        let hidden = match obj.getattr("hidden_state") {
            Ok(h) => h.call0()?.extract()?,
            Err(_) => None,
        };
        Ok(PySystem {
            obj: obj.clone(),
            dim: obj.getattr("dim")?.extract()?,
            name,
            hidden,
            raised: Raised::default(),
        })
    }

    fn call(
        &self,
        method: &str,
        mode: usize,
        i: Option<usize>,
        x: &DVector<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let xs = PyArray1::from_slice(self.obj.py(), x.as_slice());
        match i {
            Some(i) => self.obj.call_method1(method, (mode, i, xs)),
            None => self.obj.call_method1(method, (mode, xs)),
        }
    }

    fn vector(
        &self,
        method: &str,
        mode: usize,
        i: Option<usize>,
        x: &DVector<f64>,
    ) -> DVector<f64> {
        let n = self.dim;
        self.raised
            .call(|| {
                let v = floats(
                    &self.call(method, mode, i, x)?,
                    &format!("system.{method}"),
                    &[Some(n)],
                )?;
                Ok(DVector::from_vec(v))
            })
            .unwrap_or_else(|| DVector::from_element(n, f64::NAN))
    }

    fn matrix(
        &self,
        method: &str,
        mode: usize,
        i: Option<usize>,
        x: &DVector<f64>,
    ) -> DMatrix<f64> {
        let n = self.dim;
        self.raised
            .call(|| {
                let out = self.call(method, mode, i, x)?;
                let v = floats(&out, &format!("system.{method}"), &[Some(n), Some(n)])?;
                Ok(DMatrix::from_row_slice(n, n, &v))
            })
            .unwrap_or_else(|| DMatrix::from_element(n, n, f64::NAN))
    }
}

impl HybridSystem for PySystem<'_> {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn rhs(&self, mode: usize, x: &DVector<f64>) -> DVector<f64> {
        self.vector("rhs", mode, None, x)
    }
    fn rhs_jacobian(&self, mode: usize, x: &DVector<f64>) -> DMatrix<f64> {
        self.matrix("rhs_jacobian", mode, None, x)
    }
    fn guard_count(&self, mode: usize) -> usize {
        let count = || self.obj.call_method1("guard_count", (mode,))?.extract();
        self.raised.call(count).unwrap_or(0)
    }
    fn guard(&self, mode: usize, i: usize, x: &DVector<f64>) -> f64 {
        let g = || self.call("guard", mode, Some(i), x)?.extract();
        self.raised.call(g).unwrap_or(f64::NAN)
    }
    fn guard_gradient(&self, mode: usize, i: usize, x: &DVector<f64>) -> DVector<f64> {
        self.vector("guard_gradient", mode, Some(i), x)
    }
    fn reset(&self, mode: usize, i: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        let n = self.dim;
        self.raised
            .call(|| {
                let (m, xp): (usize, Bound<'_, PyAny>) =
                    self.call("reset", mode, Some(i), x)?.extract()?;
                Ok((
                    m,
                    DVector::from_vec(floats(&xp, "system.reset", &[Some(n)])?),
                ))
            })
            .unwrap_or_else(|| (mode, DVector::from_element(n, f64::NAN)))
    }
    fn reset_jacobian(&self, mode: usize, i: usize, x: &DVector<f64>) -> DMatrix<f64> {
        self.matrix("reset_jacobian", mode, Some(i), x)
    }
    fn hidden_state(&self) -> Option<String> {
        self.hidden.clone()
    }
}

// ---------------------------------------------------------------------------------------
// The quadruped

/// A quadruped run for plots and animation: `t` (n+1,), `state` (n+1, 22) = [q (11), v (11)],
/// `modes` (n, 4) int8 codes into `MODE_NAMES`, `points` (n+1, 12, 2) = hips, knees, feet
/// (FL, FR, HL, HR each), (x, z) in m.
pub fn trajectory_dict<'py>(py: Python<'py>, t: &Trajectory) -> PyResult<Bound<'py, PyDict>> {
    let n = t.t.len();
    let out = PyDict::new(py);
    out.set_item("t", PyArray1::from_slice(py, &t.t))?;
    out.set_item(
        "state",
        PyArray1::from_slice(py, &t.state).reshape([n, 2 * NDOF])?,
    )?;
    let codes = t.modes.iter().flatten().map(|&m| mode_code(m));
    out.set_item(
        "modes",
        PyArray1::from_iter(py, codes).reshape([t.modes.len(), NFEET])?,
    )?;
    out.set_item(
        "points",
        PyArray1::from_slice(py, &t.points).reshape([n, 3 * NFEET, 2])?,
    )?;
    Ok(out)
}

/// The contact modes' names in code order, as the core serialises them.
pub fn mode_names() -> Vec<String> {
    use ContactMode::*;
    [Separated, Sticking, SlidingForward, SlidingBackward]
        .iter()
        .map(|m| match serde_json::to_value(m) {
            Ok(serde_json::Value::String(name)) => name,
            _ => format!("{m:?}"),
        })
        .collect()
}

fn mode_code(m: ContactMode) -> i8 {
    match m {
        ContactMode::Separated => 0,
        ContactMode::Sticking => 1,
        ContactMode::SlidingForward => 2,
        ContactMode::SlidingBackward => 3,
    }
}
