//! What a fit estimates and whose Jacobian it steps with: a leaf module, so the prediction
//! (`predict`) and the fit (`mod`) both name them without importing each other.

use crate::error::{FerroError, Result};
use serde::{Deserialize, Serialize};

/// A parameter the fit can estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Param {
    /// Damping ratio of the penalty law (rigid route: through its stiff-limit restitution).
    Zeta,
    /// Restitution e in (0, 1]: the rigid route's own; the penalty routes take the zeta
    /// whose stiff-limit restitution it is.
    Restitution,
    /// Penalty stiffness k, N/m.
    K,
    /// Initial height y0, m.
    Height,
    /// Initial velocity v0, m/s (the only parameter not in log form).
    Velocity,
    /// Gravity g, m/s².
    Gravity,
    /// Mass m, kg.
    Mass,
}

impl Param {
    /// Every parameter.
    pub const ALL: [Param; 7] = [
        Param::Zeta,
        Param::Restitution,
        Param::K,
        Param::Height,
        Param::Velocity,
        Param::Gravity,
        Param::Mass,
    ];

    /// Its name in documents.
    pub fn name(&self) -> &'static str {
        match self {
            Param::Zeta => "zeta",
            Param::Restitution => "restitution",
            Param::K => "k",
            Param::Height => "height",
            Param::Velocity => "velocity",
            Param::Gravity => "gravity",
            Param::Mass => "mass",
        }
    }

    /// Its unit.
    pub fn unit(&self) -> &'static str {
        match self {
            Param::Zeta | Param::Restitution => "1",
            Param::K => "N/m",
            Param::Height => "m",
            Param::Velocity => "m/s",
            Param::Gravity => "m/s²",
            Param::Mass => "kg",
        }
    }

    /// The parameter a name (or its short form: e, h, y0, v0, g, m) stands for.
    pub fn from_name(name: &str) -> Result<Param> {
        Ok(match name.trim().to_ascii_lowercase().as_str() {
            "zeta" | "damping_ratio" => Param::Zeta,
            "restitution" | "e" => Param::Restitution,
            "k" | "stiffness" => Param::K,
            "height" | "h" | "y0" => Param::Height,
            "velocity" | "v0" => Param::Velocity,
            "gravity" | "g" => Param::Gravity,
            "mass" | "m" => Param::Mass,
            _ => {
                return Err(FerroError::InvalidParameter {
                    name: "params",
                    value: f64::NAN,
                    limit: format!(
                        "unknown parameter {name:?}: expected one of zeta, restitution, k, height, velocity, gravity, mass"
                    ),
                })
            }
        })
    }

    /// Whether the fit works with its logarithm.
    pub fn is_log(&self) -> bool {
        !matches!(self, Param::Velocity)
    }

    /// The parameter's value from a fit coordinate.
    pub fn from_coordinate(&self, z: f64) -> f64 {
        if self.is_log() {
            libm::exp(z)
        } else {
            z
        }
    }

    /// The fit coordinate of a value.
    pub fn to_coordinate(&self, v: f64) -> f64 {
        if self.is_log() {
            libm::log(v)
        } else {
            v
        }
    }

    /// d(value)/dz at `value`.
    pub fn chain(&self, value: f64) -> f64 {
        if self.is_log() {
            value
        } else {
            1.0
        }
    }
}

/// Whose Jacobian the fit steps with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Route {
    /// Semi-implicit Euler on the penalty law, autodiff tangent (blind to the entry jump).
    Fixed,
    /// The same grid with the switches located, dual-number tangent.
    Corrected,
    /// Dormand–Prince 5(4) with event location and forward sensitivities.
    Tolerance,
    /// The continuous penalty ODE, closed form per phase.
    Flow,
    /// The rigid model (impacts with restitution), saltation matrices.
    Exact,
}

impl Route {
    /// Its name in documents.
    pub fn name(&self) -> &'static str {
        match self {
            Route::Fixed => "fixed",
            Route::Corrected => "corrected",
            Route::Tolerance => "tolerance",
            Route::Flow => "flow",
            Route::Exact => "exact",
        }
    }

    /// The route a name stands for.
    pub fn from_name(name: &str) -> Result<Route> {
        Ok(match name.trim().to_ascii_lowercase().as_str() {
            "fixed" => Route::Fixed,
            "corrected" => Route::Corrected,
            "tolerance" => Route::Tolerance,
            "flow" => Route::Flow,
            "exact" => Route::Exact,
            _ => {
                return Err(FerroError::InvalidParameter {
                    name: "route",
                    value: f64::NAN,
                    limit: format!(
                    "unknown route {name:?}: expected fixed, corrected, tolerance, flow or exact"
                ),
                })
            }
        })
    }

    pub(super) fn integrator(&self) -> &'static str {
        match self {
            Route::Fixed => "semi-implicit Euler, fixed step dt, push-only penalty law",
            Route::Corrected => "semi-implicit Euler, fixed step dt, switches located inside the step (quadratic roots)",
            Route::Tolerance => "Dormand–Prince 5(4), error control, switches located on the dense output",
            Route::Flow => "none: closed form of each phase of the penalty ODE, force-zero times to adjacent floats",
            Route::Exact => "none: closed-form flight between rigid impacts",
        }
    }

    pub(super) fn derivative(&self) -> &'static str {
        match self {
            Route::Fixed => "forward-mode tangent through every step in height, velocity, zeta, k, gravity, mass; the contact branch is taken as given (what JAX/PyTorch/Warp return for this loop)",
            Route::Corrected => "height, velocity: the corrected route's dual-number tangent through the located switches; other parameters: Richardson-combined central differences (probes h, h/2) of the same map with probe control",
            Route::Tolerance => "height, velocity: forward sensitivities with saltation at each located switch; other parameters: Richardson-combined central differences (probes h, h/2) of the same map with probe control",
            Route::Flow => "height, velocity: the exact Jacobian of the penalty ODE's flow (entry saltation included); other parameters: Richardson-combined central differences (probes h, h/2) of the same closed form with probe control",
            Route::Exact => "height, velocity: flight matrices and saltation matrices of the rigid impacts; other parameters: Richardson-combined central differences (probes h, h/2) of the same closed form with probe control",
        }
    }

    pub(super) fn event_treatment(&self) -> &'static str {
        match self {
            Route::Fixed => "none: the step that first detects contact is differentiated as if the branch were fixed; the jump of the discrete map is not in the tangent",
            Route::Corrected => "hybrid: each switch is located inside its step and differentiated with its time (discrete saltation)",
            Route::Tolerance => "hybrid: each switch is located and the tangent jumps by the saltation matrix there",
            Route::Flow => "hybrid: entry saltation [[1, 0], [-c/m, 1]] at each contact entry; exit time by root-finding",
            Route::Exact => "hybrid: rigid saltation matrix at each impact; grazing impacts (< 1e-3 m/s) refused",
        }
    }

    pub(super) fn penalty(&self) -> bool {
        !matches!(self, Route::Exact)
    }
}
