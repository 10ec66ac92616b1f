//! The one scenario format: a JSON document read by Rust, Python and JavaScript alike.
//!
//! ```json
//! {"drop": {"height": 1.0, "velocity": 0.0, "t_final": 0.8, "gravity": 9.81, "mass": 1.0, "zeta": 0.1606},
//!  "k": 1e6, "dt": 1e-4}
//! ```
//! Missing drop fields take the defaults of [`Drop::default`]; unknown fields are refused.

use crate::error::Result;
use crate::physics::model::Drop;
use serde::{Deserialize, Serialize};

/// A drop plus the penalty stiffness and fixed step to run it at.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The drop.
    #[serde(default)]
    pub drop: Drop,
    /// Penalty stiffness, N/m.
    pub k: f64,
    /// Fixed step, s.
    #[serde(default = "default_dt")]
    pub dt: f64,
}

fn default_dt() -> f64 {
    1e-4
}

impl Scenario {
    /// Parse and validate a scenario document.
    pub fn from_json(text: &str) -> Result<Scenario> {
        let sc: Scenario = serde_json::from_str(text)?;
        sc.drop.validate()?;
        crate::error::positive("k", sc.k)?;
        crate::error::positive("dt", sc.dt)?;
        Ok(sc)
    }

    /// Parse a JSON array of scenarios.
    pub fn list_from_json(text: &str) -> Result<Vec<Scenario>> {
        let list: Vec<Scenario> = serde_json::from_str(text)?;
        for sc in &list {
            sc.drop.validate()?;
            crate::error::positive("k", sc.k)?;
            crate::error::positive("dt", sc.dt)?;
        }
        Ok(list)
    }
}

/// Every route's answer for one scenario: what the golden parity test compares
/// between the native and the WebAssembly builds, bit for bit. Nothing here is timed: every
/// row's `wall_s` is `None` (null), because a wall time differs from run to run and build
/// to build (`tests/golden/parity.mjs` also leaves any `wall_s` out of the comparison).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evaluation {
    /// The rigid reference.
    pub exact: crate::lab::readout::Flat,
    /// The fixed route at the scenario's dt.
    pub fixed: crate::lab::sweep::RouteRow,
    /// The corrected route at the scenario's dt.
    pub corrected: crate::lab::sweep::RouteRow,
    /// The continuous penalty flow.
    pub flow: crate::lab::sweep::RouteRow,
    /// The tolerance route at rtol = 1e-6 with event location (cheap and smooth).
    pub tolerance: crate::lab::sweep::RouteRow,
    /// The same with forward sensitivities along one rollout (`jacobian = forward`).
    pub tolerance_forward: crate::lab::sweep::RouteRow,
    /// The rk4 route at the scenario's dt, or `None` where it refuses (a blown-up state).
    pub rk4: Option<crate::lab::sweep::RouteRow>,
    /// Restitution the law realises at k and the drop's impact speed.
    pub restitution_at_k: Option<f64>,
    /// The push-only law's stiff-limit restitution.
    pub restitution_limit: f64,
    /// The blame split at (k, dt).
    pub blame: crate::lab::readout::Blame,
}

/// Run every route on one scenario (see [`Evaluation`]).
pub fn evaluate(sc: &Scenario) -> Result<Evaluation> {
    use crate::lab::sweep::RouteRow;
    let d = &sc.drop;
    let reference = crate::exact(d, &crate::ExactOptions::default())?;
    let fixed = crate::fixed(d, sc.k, sc.dt, &crate::FixedOptions::default())?;
    let flow = crate::flow(d, sc.k, &crate::FlowOptions::default())?;
    let tol = crate::tolerance(
        d,
        sc.k,
        &crate::ToleranceOptions {
            rtol: 1e-6,
            events: true,
            ..Default::default()
        },
    )?;
    let forward = crate::tolerance(
        d,
        sc.k,
        &crate::ToleranceOptions {
            rtol: 1e-6,
            events: true,
            jacobian: crate::physics::integrate::adaptive::JacobianMethod::Forward,
            ..Default::default()
        },
    )?;
    let rk4 = crate::rk4(d, sc.k, sc.dt, &crate::Rk4Options::default()).ok();
    Ok(Evaluation {
        exact: (&reference).into(),
        fixed: RouteRow::from_route(&fixed, &reference),
        corrected: RouteRow::from_route(
            &crate::corrected(d, sc.k, sc.dt, &crate::CorrectedOptions::default())?,
            &reference,
        ),
        flow: RouteRow::from_route(&flow, &reference),
        tolerance: RouteRow::from_route(&tol, &reference),
        tolerance_forward: RouteRow::from_route(&forward, &reference),
        rk4: rk4.map(|r| RouteRow::from_route(&r, &reference)),
        restitution_at_k: crate::realised_restitution(d, sc.k, d.impact_speed())?,
        restitution_limit: crate::limit_restitution(d.zeta)?,
        blame: crate::blame(d, sc.k, sc.dt)?,
    })
}
