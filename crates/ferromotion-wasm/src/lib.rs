//! WebAssembly bindings of `ferromotion-core` for the browser lab and the Node golden test.
//!
//! Each export converts its input, calls the core and converts the answer back; there is
//! no physics here. Results cross as JSON text of the core's `serde` structs (the same
//! documents the Python package and the golden files use). Every fallible export returns
//! `Result<_, JsError>`: JS receives an `Error` with the core's message and the variant as
//! its `name` (see `errors.rs`). Only `web/js/sim.js` imports the generated package.

mod errors;
mod script;

use errors::IntoJs;
use ferromotion_core::descent::{descent, Arm, Problem};
use ferromotion_core::hybrid;
use ferromotion_core::scenario::{self, Scenario};
use ferromotion_core::{
    sweep, Drop, Fit, Sweep, SweepOptions, ToleranceOptions, WorkbenchConfig, DEFAULT_GRAZE_SPEED,
};
use serde::Serialize;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// The lab's bench: the drop, stiffness, step and tolerance switch, with the core's caches.
/// An opaque handle: call `free()` when done with it.
#[wasm_bindgen]
pub struct Workbench(ferromotion_core::Workbench);

#[wasm_bindgen]
impl Workbench {
    /// A bench at the spec's defaults (k = 1e6 N/m, dt = 1e-4 s, tolerance off), or at the
    /// drop, k (N/m) and dt (s) of a scenario document when one is given.
    #[wasm_bindgen(constructor)]
    pub fn new(scenario_json: Option<String>) -> Result<Workbench, JsError> {
        let config = match scenario_json {
            None => WorkbenchConfig::default(),
            Some(text) => {
                let sc = Scenario::from_json(&text).into_js()?;
                WorkbenchConfig {
                    drop: sc.drop,
                    k: sc.k,
                    base_dt: sc.dt,
                    ..WorkbenchConfig::default()
                }
            }
        };
        ferromotion_core::Workbench::new(config)
            .map(Workbench)
            .into_js()
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

    /// Switch the tolerance route on or off, with its relative tolerance and event location.
    #[wasm_bindgen(js_name = setTolerance)]
    pub fn set_tolerance(&mut self, on: bool, rtol: f64, events: bool) -> Result<(), JsError> {
        self.0.set_tolerance(on, rtol, events).into_js()
    }

    /// The bench's drop: JSON of the core's `Drop` (SI units).
    #[wasm_bindgen(js_name = dropJson)]
    pub fn drop_json(&self) -> Result<String, JsError> {
        Ok(serde_json::to_string(&self.0.config().drop)?)
    }

    /// Every readout for the current controls: JSON of the core's `WorkbenchReadout`.
    #[wasm_bindgen(js_name = readoutJson)]
    pub fn readout_json(&mut self) -> Result<String, JsError> {
        Ok(serde_json::to_string(&self.0.readout().into_js()?)?)
    }

    /// Errors against k at the current step (N/m in, JSON of the core's `Sweep` out).
    #[wasm_bindgen(js_name = curveJson)]
    pub fn curve_json(&self, ks: &[f64]) -> Result<String, JsError> {
        Ok(serde_json::to_string(&self.0.curve(ks).into_js()?)?)
    }

    /// The time-of-impact term (1+e)·g/|v| in 1/s with this drop's limit restitution, at
    /// an impact `speed` (m/s) of the learner's choosing.
    #[wasm_bindgen(js_name = timeOfImpactTerm)]
    pub fn time_of_impact_term(&self, speed: f64) -> Result<f64, JsError> {
        self.0.time_of_impact_term(speed).into_js()
    }

    /// `hybrid_jacobian` on this drop's rigid bounce (the core's `BouncingDrop`: its gravity
    /// and limit restitution), released from rest at the height whose impact speed is
    /// `speed` (m/s) and followed to the top of the first rebound. JSON
    /// `{speed, height, t1, dt, x, jacobian (row-major), events, probe_gap}`, or the core's
    /// refusal (`Grazing` below its threshold) as the error.
    #[wasm_bindgen(js_name = hybridDropJson)]
    pub fn hybrid_drop_json(&self, speed: f64) -> Result<String, JsError> {
        let drop = self.0.config().drop;
        let answer = hybrid::drop_at_impact_speed(&drop, speed, DEFAULT_GRAZE_SPEED).into_js()?;
        Ok(serde_json::to_string(&answer)?)
    }
}

/// What `sweepJson` returns: the sweep and its exponent fit (`None` when fewer than two of
/// its stiffnesses lie in the fit's range).
#[derive(Serialize)]
struct SweepAnswer {
    sweep: Sweep,
    exponent: Option<Fit>,
}

/// The routes against k for the lab's plots: JSON of the core's `Sweep` for the drop
/// `drop_json` (the core's `Drop`), stiffnesses `ks` (N/m) and fixed step `dt` (s), with
/// the tolerance route at `rtol` (and `events`) when `rtol` is given, the corrected route
/// and the blame split when asked.
#[wasm_bindgen(js_name = sweepJson)]
pub fn sweep_json(
    drop_json: &str,
    ks: &[f64],
    dt: f64,
    rtol: Option<f64>,
    events: bool,
    corrected: bool,
    blame: bool,
) -> Result<String, JsError> {
    let drop: Drop = serde_json::from_str(drop_json)
        .map_err(ferromotion_core::FerroError::from)
        .into_js()?;
    let opts = SweepOptions {
        dt,
        tolerance: rtol.map(|rtol| ToleranceOptions {
            rtol,
            events,
            ..ToleranceOptions::default()
        }),
        blame,
        corrected,
    };
    let sweep = sweep(&drop, ks, &opts).into_js()?;
    let exponent = sweep.exponent().ok();
    Ok(serde_json::to_string(&SweepAnswer { sweep, exponent })?)
}

/// The descent experiment at the core's defaults (`Problem::default()`, `Arm::standard()`):
/// JSON of the core's `Descent` (landscape, starts, one result per arm).
#[wasm_bindgen(js_name = descentJson)]
pub fn descent_json() -> Result<String, JsError> {
    let d = descent(&Problem::default(), &Arm::standard()).into_js()?;
    Ok(serde_json::to_string(&d)?)
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
    flat: ferromotion_core::readout::Flat,
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

/// The time-of-impact term (1+e)·g/|v| in 1/s, for restitution e, gravity g (m/s²) and
/// impact speed |v| (m/s).
#[wasm_bindgen(js_name = timeOfImpactTerm)]
pub fn time_of_impact_term(restitution: f64, gravity: f64, speed: f64) -> Result<f64, JsError> {
    ferromotion_core::time_of_impact_term(restitution, gravity, speed).into_js()
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
/// the configuration `config_json` (the core's `QuadrupedExperiment`; missing fields take
/// the core's defaults, `"{}"` is the default experiment): JSON of the core's
/// `QuadrupedReport`, every law's run at dt included (times in s, states, contact modes and
/// drawing points in m, for the lab's animation).
#[wasm_bindgen(js_name = quadrupedJson)]
pub fn quadruped_json(config_json: &str) -> Result<String, JsError> {
    let cfg: ferromotion_core::quadruped::QuadrupedExperiment = serde_json::from_str(config_json)
        .map_err(ferromotion_core::FerroError::from)
        .into_js()?;
    let report = ferromotion_core::quadruped::quadruped_experiment(&cfg).into_js()?;
    Ok(serde_json::to_string(&report)?)
}
