//! The settings of the fit demo, one place: `ferromotion fit --demo`, notebook 07
//! (`fm.fit_demo`) and the lab's "Fit a bounce" panel read them from here.

use serde::{Deserialize, Serialize};

/// The demo's truth, noise and grid: synthetic measurements of the default drop at a
/// penalty stiffness, fitted for its height and damping ratio.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FitDemo {
    /// The true initial height, m.
    pub height: f64,
    /// The true damping ratio.
    pub zeta: f64,
    /// Penalty stiffness of the data and of every fit, N/m (held).
    pub k: f64,
    /// Step of the grid routes, s (divides `step`).
    pub dt: f64,
    /// Standard deviation of the measured heights, m.
    pub sigma_y: f64,
    /// Standard deviation of the measured velocities, m/s.
    pub sigma_v: f64,
    /// Time between samples, s (the first sample at `step`).
    pub step: f64,
    /// The parameters fitted.
    pub params: Vec<String>,
    /// The horizons of the experiment, s: one bounce, and two to three.
    pub horizons: Vec<f64>,
}

impl Default for FitDemo {
    fn default() -> Self {
        FitDemo {
            height: 1.0,
            zeta: 0.1606,
            k: 1e6,
            dt: 1e-4,
            sigma_y: 1e-3,
            sigma_v: 1e-2,
            step: 0.02,
            params: vec!["height".into(), "zeta".into()],
            horizons: vec![0.8, 1.5],
        }
    }
}
