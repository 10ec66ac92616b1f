//! Exports for the lab's Python panel (`web/py/ferromotion`, run by pyodide): one export per
//! native `ferromotion._core` function the in-browser package needs, each converting its
//! arguments, calling the core and returning the answer as a JS value (plain objects with
//! the core's serde keys). No physics and no decisions here: the same core calls as
//! `crates/ferromotion-py/src/lib.rs`, with the same defaults taken from the core.

use crate::door::{core_value, from_js, read, to_js};
use crate::errors::{js_error, IntoJs};
use crate::Progress;
use ferromotion_core as fm;
use ferromotion_core::lab::readout;
use ferromotion_core::{Drop, FerroError, RouteResult, ToleranceOptions};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

/// A validated drop from the core's `Drop` as an object (`{height, velocity, t_final, gravity,
/// mass, zeta}`, read by [`from_js`] as `lib.rs` reads every core struct), checked by the core's
/// `Drop::validate`, as the native binding's `DropArg` is.
fn drop_from(value: JsValue) -> Result<Drop, JsError> {
    let drop: Drop = from_js(value)?;
    drop.validate().into_js()?;
    Ok(drop)
}

/// Run one route timed by this page's clock (`performance.now()`), as the native binding
/// does: the core's `RouteResult` document, carrying the call's `wall_s` beside its force
/// evaluations.
fn route(run: impl FnOnce() -> fm::Result<RouteResult>) -> Result<JsValue, JsError> {
    to_js(&fm::lab::clock::timed_route(&crate::clock(), run).into_js()?)
}

/// The core's defaults the Python signatures show (`defaults::Defaults`; native `_core.DEFAULTS`
/// holds the same document and the Python-only experiments' defaults beside it).
#[wasm_bindgen(js_name = scriptDefaults, unchecked_return_type = "Defaults")]
pub fn script_defaults() -> Result<JsValue, JsError> {
    to_js(&fm::defaults::Defaults::default())
}

/// Validate a drop (the error is the core's).
#[wasm_bindgen(js_name = validateDrop)]
pub fn validate_drop(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
) -> Result<(), JsError> {
    drop_from(drop).map(|_| ())
}

/// Speed of the first impact, m/s.
#[wasm_bindgen(js_name = dropImpactSpeed)]
pub fn drop_impact_speed(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
) -> Result<f64, JsError> {
    Ok(drop_from(drop)?.impact_speed())
}

/// Time of the first ground contact in free flight, s.
#[wasm_bindgen(js_name = dropFirstImpactTime)]
pub fn drop_first_impact_time(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
) -> Result<f64, JsError> {
    Ok(drop_from(drop)?.first_impact_time())
}

/// The rigid reference; `options` the core's `ExactOptions` (`restitution`, `graze_speed`;
/// missing keys take its defaults, `restitution` absent: the penalty law's limit).
#[wasm_bindgen(js_name = routeExact, unchecked_return_type = "RouteResult")]
pub fn route_exact(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Given<ExactOptions>")] options: JsValue,
) -> Result<JsValue, JsError> {
    let drop = drop_from(drop)?;
    let opts: fm::ExactOptions = from_js(options)?;
    route(|| fm::exact(&drop, &opts))
}

/// The fixed route (k in N/m, dt in s); `options` the core's `FixedOptions` (`max_steps`).
#[wasm_bindgen(js_name = routeFixed, unchecked_return_type = "RouteResult")]
pub fn route_fixed(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
    k: f64,
    dt: f64,
    #[wasm_bindgen(unchecked_param_type = "Given<FixedOptions>")] options: JsValue,
) -> Result<JsValue, JsError> {
    let drop = drop_from(drop)?;
    let opts: fm::FixedOptions = from_js(options)?;
    route(|| fm::fixed(&drop, k, dt, &opts))
}

/// The corrected route; `options` the core's `CorrectedOptions` (`locate`, `max_steps`).
#[wasm_bindgen(js_name = routeCorrected, unchecked_return_type = "RouteResult")]
pub fn route_corrected(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
    k: f64,
    dt: f64,
    #[wasm_bindgen(unchecked_param_type = "Given<CorrectedOptions>")] options: JsValue,
) -> Result<JsValue, JsError> {
    let drop = drop_from(drop)?;
    let opts: fm::CorrectedOptions = from_js(options)?;
    route(|| fm::corrected(&drop, k, dt, &opts))
}

/// The exact derivative of the penalty ODE; `options` the core's `FlowOptions` (`root_rtol`,
/// `max_events`).
#[wasm_bindgen(js_name = routeFlow, unchecked_return_type = "RouteResult")]
pub fn route_flow(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
    k: f64,
    #[wasm_bindgen(unchecked_param_type = "Given<FlowOptions>")] options: JsValue,
) -> Result<JsValue, JsError> {
    let drop = drop_from(drop)?;
    let opts: fm::FlowOptions = from_js(options)?;
    route(|| fm::flow(&drop, k, &opts))
}

/// The tolerance route; `options` the core's `ToleranceOptions` (`rtol`, `atol`, `events`,
/// `eps`, `max_steps`, `min_step`, `jacobian`; missing keys take its defaults).
#[wasm_bindgen(js_name = routeTolerance, unchecked_return_type = "RouteResult")]
pub fn route_tolerance(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
    k: f64,
    #[wasm_bindgen(unchecked_param_type = "Given<ToleranceOptions>")] options: JsValue,
) -> Result<JsValue, JsError> {
    let drop = drop_from(drop)?;
    let opts: ToleranceOptions = from_js(options)?;
    route(|| fm::tolerance(&drop, k, &opts))
}

/// The rk4 route: classical RK4 at a fixed step, tangent by forward mode; `options` the
/// core's `Rk4Options` (`max_steps`).
#[wasm_bindgen(js_name = routeRk4, unchecked_return_type = "RouteResult")]
pub fn route_rk4(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
    k: f64,
    dt: f64,
    #[wasm_bindgen(unchecked_param_type = "Given<Rk4Options>")] options: JsValue,
) -> Result<JsValue, JsError> {
    let drop = drop_from(drop)?;
    let opts: fm::Rk4Options = from_js(options)?;
    route(|| fm::rk4(&drop, k, dt, &opts))
}

/// The blame split at (k, dt).
#[wasm_bindgen(js_name = blameSplit, unchecked_return_type = "Blame")]
pub fn blame_split(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
    k: f64,
    dt: f64,
) -> Result<JsValue, JsError> {
    to_js(&fm::blame(&drop_from(drop)?, k, dt).into_js()?)
}

/// The divergence exponent at step dt.
#[wasm_bindgen(js_name = divergenceExponent, unchecked_return_type = "ExponentFit")]
pub fn divergence_exponent(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
    dt: f64,
) -> Result<JsValue, JsError> {
    to_js(&fm::divergence_exponent(&drop_from(drop)?, dt).into_js()?)
}

/// (1+e)·g/|v| in 1/s with this drop's limit restitution (`speed` undefined: its impact speed).
#[wasm_bindgen(js_name = dropTimeOfImpactTerm)]
pub fn drop_time_of_impact_term(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
    speed: Option<f64>,
) -> Result<f64, JsError> {
    let d = drop_from(drop)?;
    d.time_of_impact_term(speed.unwrap_or_else(|| d.impact_speed()))
        .into_js()
}

/// Every route at one force-evaluation budget and the probe-size trap (the core's
/// `EqualBudget` document), each row's route call timed with `performance.now()` (`wall_s`).
#[wasm_bindgen(js_name = equalBudget, unchecked_return_type = "EqualBudget")]
pub fn equal_budget(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
    k: f64,
    budget: f64,
) -> Result<JsValue, JsError> {
    let opts = fm::BudgetOptions {
        k,
        budget: count("budget", budget)?,
        ..fm::BudgetOptions::default()
    };
    let drop = drop_from(drop)?;
    to_js(&fm::equal_budget_timed(&drop, &opts, Some(&crate::clock())).into_js()?)
}

/// The sweep (core: `sweep::sweep_curve`) over stiffnesses `ks` (N/m) with `options` the core's
/// `SweepOptions` (`dt`, `tolerance`, `corrected`, `blame`; missing keys take its defaults),
/// each route timed with `performance.now()` (`wall_s`), `progress` told `(done, total)` when
/// given: the core's `Curve` ({sweep (its options inline, exact, rows), exponent,
/// exponent_error, wrong_sign}), the object the lab's `Workbench.curve` returns.
#[wasm_bindgen(unchecked_return_type = "Curve")]
pub fn sweep(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
    ks: &[f64],
    #[wasm_bindgen(unchecked_param_type = "Given<SweepOptions>")] options: JsValue,
    progress: Option<Progress>,
) -> Result<JsValue, JsError> {
    let drop = drop_from(drop)?;
    let opts: fm::SweepOptions = from_js(options)?;
    let clock = crate::clock();
    let mut observe = crate::observer(progress.as_ref());
    let watch = fm::Watch {
        clock: Some(&clock),
        progress: observe.as_mut().map(|f| f as _),
    };
    to_js(&fm::sweep_curve(&drop, ks, &opts, watch).into_js()?)
}

fn count(name: &'static str, value: f64) -> Result<u64, JsError> {
    if value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= u64::MAX as f64 {
        Ok(value as u64)
    } else {
        Err(js_error(FerroError::InvalidParameter {
            name,
            value,
            limit: "must be a whole number >= 0".into(),
        }))
    }
}

/// Stiffnesses 10^lo .. 10^hi (N/m), `per_decade` points per decade (the core's grid).
#[wasm_bindgen(js_name = logGrid)]
pub fn log_grid(lo: f64, hi: f64, per_decade: u32) -> Result<Vec<f64>, JsError> {
    readout::log_grid(lo, hi, per_decade).into_js()
}

#[wasm_bindgen]
extern "C" {
    /// A callback from the Python package: called with a fresh Float64Array; returns a
    /// number (`f`), a list of numbers (`hvp`), `{sequence, min_event_speed}` (`events`), or
    /// `undefined` when the Python function raised (the package keeps the exception).
    pub type Callback;
    #[wasm_bindgen(method, js_name = call)]
    fn call(this: &Callback, ctx: &JsValue, x: Vec<f64>) -> JsValue;
}

/// An `events` callback's answer.
#[derive(Deserialize)]
struct EventFields {
    sequence: Vec<i64>,
    min_event_speed: Option<f64>,
}

/// The placeholder the core sees when a Python callback raised: the check stops and the
/// package raises the kept exception instead.
fn raised() -> FerroError {
    FerroError::InvalidParameter {
        name: "callback",
        value: f64::NAN,
        limit: "raised an exception (re-raised by the Python package)".into(),
    }
}

/// `check::check_gradient` on Python callbacks, then the receipt: `{json, summary}`, the
/// receipt's JSON text as the native binding writes it and the core's one-line summary.
/// `objective` and `options` are the core's `ObjectiveInfo` and `CheckOptions` (missing keys
/// take the core's defaults); `extra` the environment's `[key, value]` pairs.
#[wasm_bindgen(js_name = checkGradient, unchecked_return_type = "CheckAnswer")]
#[allow(clippy::too_many_arguments)]
pub fn check_gradient(
    f: &Callback,
    grad: Vec<f64>,
    x: Vec<f64>,
    #[wasm_bindgen(unchecked_param_type = "Settings<ObjectiveInfo>")] objective: JsValue,
    events: Option<Callback>,
    hvp: Option<Callback>,
    #[wasm_bindgen(unchecked_param_type = "Given<CheckOptions>")] options: JsValue,
    #[wasm_bindgen(unchecked_param_type = "[string, string][] | null | undefined")] extra: JsValue,
) -> Result<JsValue, JsError> {
    let info: fm::check::ObjectiveInfo = read(objective)?;
    // The core's own options type: a key the package leaves out takes the core's default.
    let opts: fm::check::CheckOptions = from_js(options)?;
    let extra: Vec<(String, String)> = from_js(extra)?;
    let this = JsValue::UNDEFINED;
    let mut fv = |p: &[f64]| f.call(&this, p.to_vec()).as_f64().ok_or_else(raised);
    let mut ev = events.as_ref().map(|e| {
        move |p: &[f64]| -> fm::Result<fm::check::EventSignature> {
            let v = e.call(&JsValue::UNDEFINED, p.to_vec());
            if v.is_undefined() {
                return Err(raised());
            }
            let s: EventFields = core_value(v)?;
            Ok(fm::check::EventSignature {
                sequence: s.sequence,
                min_event_speed: s.min_event_speed,
            })
        }
    });
    let mut hv = hvp.as_ref().map(|h| {
        move |d: &[f64]| -> fm::Result<Vec<f64>> {
            let v = h.call(&JsValue::UNDEFINED, d.to_vec());
            if v.is_undefined() {
                return Err(raised());
            }
            core_value(v)
        }
    });
    let report = fm::check::check_gradient(
        &mut fv,
        ev.as_mut()
            .map(|e| e as &mut dyn FnMut(&[f64]) -> fm::Result<fm::check::EventSignature>),
        hv.as_mut()
            .map(|h| h as &mut dyn FnMut(&[f64]) -> fm::Result<Vec<f64>>),
        &x,
        &grad,
        &opts,
    )
    .into_js()?;
    let mut receipt = fm::check::Receipt::new(info, x, grad, report);
    receipt.environment.extra.extend(extra);
    #[derive(Serialize)]
    struct Answer {
        json: String,
        summary: String,
    }
    to_js(&Answer {
        json: serde_json::to_string(&receipt)?,
        summary: receipt.summary(),
    })
}
