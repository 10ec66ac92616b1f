//! WebAssembly bindings of `ferromotion-core` for the browser lab and the Node golden test.
//!
//! Each export converts its input, calls the core and converts the answer back; there is
//! no physics here. Structured results cross as JS values built from the core's `serde`
//! structs by `serde-wasm-bindgen` ([`to_js`]): plain objects with the same keys as the
//! core's JSON documents, arrays for fixed-size arrays and sequences, `null` for `None`,
//! and every f64 as a JS number, so NaN and ±Infinity arrive as themselves (JSON text
//! would have turned them into `null`). Options arrive the same way, as the core's own
//! serde structs, through the one reader in `door.rs` ([`from_js`]): every key is handed
//! to the struct, so an unknown key is refused, naming it, at every export and depth. Two exports keep JSON text on purpose:
//! `evaluateJson`, whose text the golden parity test compares with the native build's
//! serde_json dump, and `fixedJson`, the text `make bench` times on both sides.
//!
//! Every fallible export returns `Result<_, JsError>`: JS receives an `Error` with the
//! core's message and the variant as its `name` (see `errors.rs`). Only `web/js/sim.js`
//! imports the generated package.

mod door;
mod errors;
mod script;
mod types;

use door::{from_js, to_js};
use errors::IntoJs;
use ferromotion_core::experiments::descent::{descent as run_descent, Arm, Problem};
use ferromotion_core::lab::scenario::{self, Scenario};
use ferromotion_core::lab::workbench::CurveOptions;
use ferromotion_core::systems as hybrid;
use ferromotion_core::{Drop, FerroError, WorkbenchConfig, DEFAULT_GRAZE_SPEED};
use serde::Serialize;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
extern "C" {
    /// The page's (or worker's, or Node's) `performance.now()`, ms.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// Seconds from `performance.now()`: the core's clock for wall times here
/// (`std::time::Instant` panics on wasm32-unknown-unknown). Browsers coarsen it to 100 µs on
/// a page that is not cross-origin isolated; the readout carries the resolution seen.
#[cfg(target_arch = "wasm32")]
fn now_seconds() -> f64 {
    performance_now() * 1e-3
}

/// The native build of this crate (its tests, clippy) reads the core's `Instant` clock.
#[cfg(not(target_arch = "wasm32"))]
fn now_seconds() -> f64 {
    ferromotion_core::lab::clock::monotonic_seconds()
}

/// The clock every timed export reads, its resolution estimated once per page (the
/// estimate reads the clock until it has ticked, about 0.2 ms on a coarsened clock).
fn clock() -> ferromotion_core::Clock {
    static CLOCK: std::sync::OnceLock<ferromotion_core::Clock> = std::sync::OnceLock::new();
    *CLOCK.get_or_init(|| ferromotion_core::Clock::new(now_seconds))
}

#[wasm_bindgen]
extern "C" {
    /// A progress callback from JS (the lab's worker, the in-browser package): called with
    /// `(done, total)` rows between chunks of a sweep; a throw stops the sweep.
    pub type Progress;
    #[wasm_bindgen(method, catch, js_name = call)]
    fn call(this: &Progress, ctx: &JsValue, done: f64, total: f64) -> Result<JsValue, JsValue>;
}

/// The core's sweep observer for a JS `progress` callback (none when none was given): a throw
/// in the callback stops the sweep as the core's `Scenario` error naming it.
fn observer(
    progress: Option<&Progress>,
) -> Option<impl FnMut(ferromotion_core::Progress) -> ferromotion_core::Result<()> + '_> {
    progress.map(|f| {
        move |p: ferromotion_core::Progress| {
            f.call(&JsValue::UNDEFINED, p.done as f64, p.total as f64)
                .map(|_| ())
                .map_err(|e| FerroError::Scenario(format!("the progress callback threw: {e:?}")))
        }
    })
}

/// The lab's bench: the drop, stiffness, step and tolerance switch, with the core's caches.
/// An opaque handle: call `free()` when done with it.
#[wasm_bindgen]
pub struct Workbench(ferromotion_core::Workbench);

#[wasm_bindgen]
impl Workbench {
    /// A bench with the controls `config` (the core's `WorkbenchConfig` as an object: drop,
    /// k in N/m, base_dt in s, dt_divisor, tolerance, tolerance_options; missing keys take
    /// the core's defaults, so no argument is the lab's default bench). Every route it runs
    /// is timed with `performance.now()` (the readout's `wall_s`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "Given<WorkbenchConfig>")] config: JsValue,
    ) -> Result<Workbench, JsError> {
        let config: WorkbenchConfig = from_js(config)?;
        ferromotion_core::Workbench::new(config)
            .map(|b| Workbench(b.with_clock(clock())))
            .into_js()
    }

    /// The current controls (the core's `WorkbenchConfig`), the object `new Workbench`
    /// takes: the worker builds its own bench from it.
    #[wasm_bindgen(unchecked_return_type = "WorkbenchConfig")]
    pub fn config(&self) -> Result<JsValue, JsError> {
        to_js(self.0.config())
    }

    /// Set the stiffness from the slider's log10 k (k in N/m).
    #[wasm_bindgen(js_name = setLog10K)]
    pub fn set_log10_k(&mut self, log10_k: f64) -> Result<(), JsError> {
        self.0.set_log10_k(log10_k).into_js()
    }

    /// Set the stiffness, N/m.
    #[wasm_bindgen(js_name = setK)]
    pub fn set_k(&mut self, k: f64) -> Result<(), JsError> {
        self.0.set_k(k).into_js()
    }

    /// Current step = base dt / divisor, with divisor 1, 10 or 100.
    #[wasm_bindgen(js_name = setDtDivisor)]
    pub fn set_dt_divisor(&mut self, divisor: u32) -> Result<(), JsError> {
        self.0.set_dt_divisor(divisor).into_js()
    }

    /// Current step by value (s): one of the readout's `refinement.steps`.
    #[wasm_bindgen(js_name = setDt)]
    pub fn set_dt(&mut self, dt: f64) -> Result<(), JsError> {
        self.0.set_dt(dt).into_js()
    }

    /// Switch the tolerance route on or off, with its relative tolerance, event location and
    /// Jacobian method (`"richardson"` or `"forward"`; omitted: unchanged). `"forward"`
    /// without events is refused (`InvalidParameter` naming `events`).
    #[wasm_bindgen(js_name = setTolerance)]
    pub fn set_tolerance(
        &mut self,
        on: bool,
        rtol: f64,
        events: bool,
        jacobian: Option<String>,
    ) -> Result<(), JsError> {
        let current = self.0.config().tolerance_options;
        let jacobian = match jacobian {
            Some(name) => jacobian_method(&name)?,
            None => current.jacobian,
        };
        let options = ferromotion_core::ToleranceOptions {
            rtol,
            events,
            jacobian,
            ..current
        };
        self.0.set_tolerance_options(on, options).into_js()
    }

    /// Every readout for the current controls: the core's `WorkbenchReadout` as an object.
    #[wasm_bindgen(unchecked_return_type = "WorkbenchReadout")]
    pub fn readout(&mut self) -> Result<JsValue, JsError> {
        to_js(&self.0.readout().into_js()?)
    }

    /// The lab's curve at stiffnesses `ks` (N/m): the core's `Curve` ({sweep, exponent,
    /// wrong_sign}) for this bench's drop, current step and tolerance switch, with
    /// `options` the core's `CurveOptions` ({corrected, blame}; omitted: neither), and
    /// `progress`, when given, told `(done, total)` stiffnesses as the sweep goes.
    #[wasm_bindgen(unchecked_return_type = "Curve")]
    pub fn curve(
        &self,
        ks: &[f64],
        #[wasm_bindgen(unchecked_param_type = "Given<CurveOptions>")] options: JsValue,
        progress: Option<Progress>,
    ) -> Result<JsValue, JsError> {
        let opts: CurveOptions = from_js(options)?;
        let mut observe = observer(progress.as_ref());
        let progress = observe.as_mut().map(|f| f as _);
        to_js(&self.0.curve_watched(ks, &opts, progress).into_js()?)
    }

    /// `hybrid_jacobian` on this drop's rigid bounce (the core's `BouncingDrop`: its gravity
    /// and limit restitution), released from rest at the height whose impact speed is
    /// `speed` (m/s) and followed to the top of the first rebound: `{speed, height, t1, dt,
    /// x, jacobian (row-major), events, probe_gap}`, or the core's refusal (`Grazing` below
    /// its threshold) as the error.
    #[wasm_bindgen(js_name = hybridDrop, unchecked_return_type = "HybridDrop")]
    pub fn hybrid_drop(&self, speed: f64) -> Result<JsValue, JsError> {
        let drop = self.0.config().drop;
        to_js(&hybrid::drop_at_impact_speed(&drop, speed, DEFAULT_GRAZE_SPEED).into_js()?)
    }
}

/// A Jacobian method by its serde name (`"richardson"` | `"forward"`), as the core's options
/// read it; anything else is the core's `Scenario` error naming the two.
pub(crate) fn jacobian_method(name: &str) -> Result<ferromotion_core::JacobianMethod, JsError> {
    serde_json::from_value(serde_json::Value::from(name))
        .map_err(FerroError::from)
        .into_js()
}

/// The descent experiment at the core's defaults (`Problem::default()`, `Arm::standard()`):
/// the core's `Descent` (landscape, starts, one result per arm) as an object.
#[wasm_bindgen(unchecked_return_type = "Descent")]
pub fn descent() -> Result<JsValue, JsError> {
    to_js(&run_descent(&Problem::default(), &Arm::standard()).into_js()?)
}

/// The step cap: a route refuses a rollout of more steps than this (the core's default).
#[wasm_bindgen(js_name = maxSteps)]
pub fn max_steps() -> f64 {
    ferromotion_core::DEFAULT_MAX_STEPS as f64
}

/// Impacts slower than this (m/s) are refused as grazing (the core's default threshold).
#[wasm_bindgen(js_name = grazeSpeed)]
pub fn graze_speed() -> f64 {
    ferromotion_core::DEFAULT_GRAZE_SPEED
}

/// Every route on one scenario document: JSON of the core's `scenario::Evaluation`
/// (what the golden parity test compares with the native build, bit for bit).
#[wasm_bindgen(js_name = evaluateJson)]
pub fn evaluate_json(scenario_json: &str) -> Result<String, JsError> {
    let sc = Scenario::from_json(scenario_json).into_js()?;
    Ok(serde_json::to_string(&scenario::evaluate(&sc).into_js()?)?)
}

/// What `fixedJson` returns: x(T) (m, m/s), the row-major Jacobian and the cost.
#[derive(Serialize)]
struct FixedAnswer {
    #[serde(flatten)]
    flat: ferromotion_core::lab::readout::Flat,
    cost: ferromotion_core::Cost,
}

/// The fixed route alone for the drop `drop_json` (the core's `Drop`) at stiffness `k`
/// (N/m) and step `dt` (s), with the default step cap: JSON `{state, jacobian, cost}`.
/// `make bench` times it under Node and in Chromium.
#[wasm_bindgen(js_name = fixedJson)]
pub fn fixed_json(drop_json: &str, k: f64, dt: f64) -> Result<String, JsError> {
    let drop: Drop = serde_json::from_str(drop_json)
        .map_err(ferromotion_core::FerroError::from)
        .into_js()?;
    let r = ferromotion_core::fixed(&drop, k, dt, &ferromotion_core::FixedOptions::default())
        .into_js()?;
    Ok(serde_json::to_string(&FixedAnswer {
        flat: (&r).into(),
        cost: r.cost,
    })?)
}

/// The push-only penalty law's restitution in the stiff limit, for damping ratio zeta.
#[wasm_bindgen(js_name = limitRestitution)]
pub fn limit_restitution(zeta: f64) -> Result<f64, JsError> {
    ferromotion_core::limit_restitution(zeta).into_js()
}

/// Version of the bindings (the workspace version).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").into()
}

/// The quadruped's two-axis comparison (`quadruped::quadruped_experiment`, issue #7) for
/// the configuration `config` (the core's `QuadrupedExperiment` as an object; missing keys
/// take the core's defaults, no argument is the default experiment): the core's
/// `QuadrupedReport`, every law's run at dt included (times in s, states, contact modes and
/// drawing points in m, for the lab's animation).
#[wasm_bindgen(unchecked_return_type = "QuadrupedReport")]
pub fn quadruped(
    #[wasm_bindgen(unchecked_param_type = "Given<QuadrupedExperiment>")] config: JsValue,
) -> Result<JsValue, JsError> {
    let cfg: ferromotion_quadruped::QuadrupedExperiment = from_js(config)?;
    to_js(&ferromotion_quadruped::quadruped_experiment(&cfg).into_js()?)
}

/// Forward matching (core: `fit`): fit the drop `drop` (the core's `Drop`, the
/// guess) to `observations` (the core's `Observations`: `t`, `y` and/or `v`, `sigma_y`,
/// `sigma_v`, masks) with `options` (the core's `FitOptions`): the core's `FitReport`, timed by
/// this thread's clock.
#[wasm_bindgen(unchecked_return_type = "FitReport")]
pub fn fit(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Settings<Observations>")] observations: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Given<FitOptions>")] options: JsValue,
) -> Result<JsValue, JsError> {
    use ferromotion_core::fit::{fit as run_fit, FitOptions, Observations};
    let drop: Drop = from_js(drop)?;
    let obs: Observations = from_js(observations)?;
    let opts: FitOptions = from_js(options)?;
    to_js(&run_fit(&drop, &obs, &opts, Some(&clock())).into_js()?)
}

/// The predictions a fit compares with data, at the drop `drop` and sample times `t` (s) by
/// the route of `options` (the core's `FitOptions`): `{y, v, events}`.
#[wasm_bindgen(js_name = fitPredict, unchecked_return_type = "FitPredictions")]
pub fn fit_predict(
    #[wasm_bindgen(unchecked_param_type = "Given<Drop>")] drop: JsValue,
    t: Vec<f64>,
    #[wasm_bindgen(unchecked_param_type = "Given<FitOptions>")] options: JsValue,
) -> Result<JsValue, JsError> {
    use ferromotion_core::fit::{predictions, FitOptions};
    let drop: Drop = from_js(drop)?;
    let opts: FitOptions = from_js(options)?;
    to_js(&predictions(&drop, &t, &opts).into_js()?)
}

/// The fit demo's settings (the core's `FitDemo`: truth, k, dt, noise, sampling step, the
/// fitted parameters, the horizons), the same the Python package's `fm.fit_demo` reads.
#[wasm_bindgen(js_name = fitDemo)]
pub fn fit_demo() -> Result<JsValue, JsError> {
    to_js(&ferromotion_core::fit::FitDemo::default())
}

/// The "two contacts at once" panel (core: `experiments::two_contacts`): the V-groove dropped
/// at sideways offsets through zero, at the options `options` (the core's
/// `TwoContactsOptions`: angle in degrees, restitution, height, horizon, offsets, the soft
/// walls' stiffness and step; missing keys take the core's defaults). The core's
/// `TwoContacts`: per offset the rigid groove's verdict (`Jacobian`, `SetValued`, ...) with
/// its state and Jacobian or its outcomes, and the fixed-step soft simulator's state and tangent.
#[wasm_bindgen(js_name = twoContacts, unchecked_return_type = "TwoContacts")]
pub fn two_contacts(
    #[wasm_bindgen(unchecked_param_type = "Given<TwoContactsOptions>")] options: JsValue,
) -> Result<JsValue, JsError> {
    use ferromotion_core::experiments::two_contacts::{two_contacts, TwoContactsOptions};
    let opts: TwoContactsOptions = from_js(options)?;
    to_js(&two_contacts(&opts).into_js()?)
}
