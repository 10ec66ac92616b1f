//! The defaults every binding's signatures show, as one document: the native package's
//! `fm.defaults()` (which adds the Python-only experiments' defaults to it) and the in-browser
//! package's `scriptDefaults` both serialise [`Defaults`], so a default changed here reaches
//! both without either restating it.

use crate::check::CheckOptions;
use crate::lab::sweep::SweepOptions;
use crate::lab::workbench::WorkbenchConfig;
use crate::physics::contact::penalty::FlowOptions;
use crate::physics::contact::rigid::DEFAULT_GRAZE_SPEED;
use crate::physics::integrate::adaptive::ToleranceOptions;
use crate::physics::integrate::corrected::CorrectedOptions;
use crate::physics::integrate::DEFAULT_MAX_STEPS;
use crate::physics::model::Drop;
use serde::Serialize;

/// The routes' and the checker's defaults, under the keys the packages read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Defaults {
    /// The default drop.
    pub drop: Drop,
    /// The tolerance route's options.
    pub tolerance: ToleranceOptions,
    /// The fixed-step routes' dt, s (a sweep's).
    pub dt: f64,
    /// The lab's stiffness, N/m.
    pub k: f64,
    /// The step cap of every stepping route.
    pub max_steps: u64,
    /// Whether `corrected` locates contact events.
    pub locate: bool,
    /// Impacts slower than this (m/s) are refused as grazing.
    pub graze_speed: f64,
    /// The flow route's root tolerance.
    pub root_rtol: f64,
    /// The flow route's event cap.
    pub max_events: u64,
    /// The gradient checker's options.
    pub check: CheckOptions,
}

impl Default for Defaults {
    fn default() -> Self {
        let flow = FlowOptions::default();
        Defaults {
            drop: Drop::default(),
            tolerance: ToleranceOptions::default(),
            dt: SweepOptions::default().dt,
            k: WorkbenchConfig::default().k,
            max_steps: DEFAULT_MAX_STEPS,
            locate: CorrectedOptions::default().locate,
            graze_speed: DEFAULT_GRAZE_SPEED,
            root_rtol: flow.root_rtol,
            max_events: flow.max_events,
            check: CheckOptions::default(),
        }
    }
}
