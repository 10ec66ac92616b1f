//! WebAssembly bindings of `ferromotion-core` for the browser lab and the Node golden test.
//!
//! Each export converts its input, calls the core and converts the answer back; there is
//! no physics here. Results cross as JSON text of the core's `serde` structs (the same
//! documents the Python package and the golden files use). Every fallible export returns
//! `Result<_, JsError>`: JS receives an `Error` with the core's message and the variant as
//! its `name` (see `errors.rs`). Only `web/js/sim.js` imports the generated package.

mod errors;

use errors::IntoJs;
use ferromotion_core::scenario::{self, Scenario};
use ferromotion_core::BenchConfig;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// The lab's bench: the drop, stiffness, step and tolerance switch, with the core's caches.
/// An opaque handle: call `free()` when done with it.
#[wasm_bindgen]
pub struct Bench(ferromotion_core::Bench);

#[wasm_bindgen]
impl Bench {
    /// A bench at the spec's defaults (k = 1e6 N/m, dt = 1e-4 s, tolerance off), or at the
    /// drop, k (N/m) and dt (s) of a scenario document when one is given.
    #[wasm_bindgen(constructor)]
    pub fn new(scenario_json: Option<String>) -> Result<Bench, JsError> {
        let config = match scenario_json {
            None => BenchConfig::default(),
            Some(text) => {
                let sc = Scenario::from_json(&text).into_js()?;
                BenchConfig {
                    drop: sc.drop,
                    k: sc.k,
                    base_dt: sc.dt,
                    ..BenchConfig::default()
                }
            }
        };
        ferromotion_core::Bench::new(config).map(Bench).into_js()
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

    /// Every readout for the current controls: JSON of the core's `BenchReadout`.
    #[wasm_bindgen(js_name = readoutJson)]
    pub fn readout_json(&mut self) -> Result<String, JsError> {
        Ok(serde_json::to_string(&self.0.readout().into_js()?)?)
    }

    /// Errors against k at the current step (N/m in, JSON of the core's `Sweep` out).
    #[wasm_bindgen(js_name = curveJson)]
    pub fn curve_json(&self, ks: &[f64]) -> Result<String, JsError> {
        Ok(serde_json::to_string(&self.0.curve(ks).into_js()?)?)
    }
}

/// Every route on one scenario document: JSON of the core's `scenario::Evaluation`
/// (what the golden parity test compares with the native build, bit for bit).
#[wasm_bindgen(js_name = evaluateJson)]
pub fn evaluate_json(scenario_json: &str) -> Result<String, JsError> {
    let sc = Scenario::from_json(scenario_json).into_js()?;
    Ok(serde_json::to_string(&scenario::evaluate(&sc).into_js()?)?)
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
