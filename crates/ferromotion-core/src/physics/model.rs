//! The drop: a point mass released above flat ground, and the contact laws' parameters.
//!
//! Free flight is `y'' = -g`. Contact is either the rigid impact (see
//! [`crate::physics::contact::rigid`]) or the push-only penalty law (see
//! [`crate::physics::contact::penalty`]) with damping `c = 2·zeta·sqrt(k·m)`, so that holding `zeta`
//! fixed while `k` sweeps keeps the restitution's stiff limit fixed.

use crate::error::{finite, positive, FerroError, Result};
use crate::physics::state::State;
use serde::{Deserialize, Serialize};

/// A point mass dropped onto the ground at y = 0. All quantities in SI units.
///
/// Construct with [`Drop::new`] (validated) or take [`Drop::default`], the spec's
/// defaults: h = 1 m from rest, T = 0.8 s, g = 9.81 m/s², m = 1 kg, zeta = 0.1606.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Drop {
    /// Initial height y0, m (> 0).
    pub height: f64,
    /// Initial velocity v0, m/s (positive up).
    pub velocity: f64,
    /// Final time T, s (> 0).
    pub t_final: f64,
    /// Gravitational acceleration g, m/s² (> 0).
    pub gravity: f64,
    /// Mass m, kg (> 0).
    pub mass: f64,
    /// Damping ratio of the penalty law, in [0, 1).
    pub zeta: f64,
}

impl Default for Drop {
    fn default() -> Self {
        Drop {
            height: 1.0,
            velocity: 0.0,
            t_final: 0.8,
            gravity: 9.81,
            mass: 1.0,
            zeta: 0.1606,
        }
    }
}

impl Drop {
    /// A validated drop; see [`Drop::validate`] for the limits.
    pub fn new(
        height: f64,
        velocity: f64,
        t_final: f64,
        gravity: f64,
        mass: f64,
        zeta: f64,
    ) -> Result<Drop> {
        let d = Drop {
            height,
            velocity,
            t_final,
            gravity,
            mass,
            zeta,
        };
        d.validate()?;
        Ok(d)
    }

    /// Check every parameter: finite, height/T/g/m > 0, zeta in [0, 1), and at least one
    /// impact before T (the point of the drop).
    pub fn validate(&self) -> Result<()> {
        positive("height", self.height)?;
        finite("velocity", self.velocity)?;
        positive("t_final", self.t_final)?;
        positive("gravity", self.gravity)?;
        positive("mass", self.mass)?;
        if !(self.zeta.is_finite() && (0.0..1.0).contains(&self.zeta)) {
            return Err(FerroError::InvalidParameter {
                name: "zeta",
                value: self.zeta,
                limit: "must be in [0, 1) (underdamped contact)".into(),
            });
        }
        if !self.impact_speed().is_finite() {
            return Err(FerroError::InvalidParameter {
                name: "velocity",
                value: self.velocity,
                limit: "v0² + 2·g·h must be finite".into(),
            });
        }
        let t_impact = self.first_impact_time();
        if t_impact.is_nan() || t_impact >= self.t_final {
            return Err(FerroError::NoImpact {
                t_final: self.t_final,
                t_impact,
            });
        }
        Ok(())
    }

    /// Initial state `[height, velocity]`.
    pub fn x0(&self) -> State {
        State::new(self.height, self.velocity)
    }

    /// The same drop started from another state (used by finite-difference probes).
    pub fn with_x0(&self, x0: &State) -> Drop {
        Drop {
            height: x0[0],
            velocity: x0[1],
            ..*self
        }
    }

    /// Time of the first ground contact in free flight, s.
    pub fn first_impact_time(&self) -> f64 {
        crate::physics::flight::time_to_ground(self.height, self.velocity, self.gravity)
    }

    /// Speed of the first impact, m/s: sqrt(v0² + 2·g·h).
    pub fn impact_speed(&self) -> f64 {
        (self.velocity * self.velocity + 2.0 * self.gravity * self.height).sqrt()
    }

    /// Penalty-law parameters at stiffness `k` (N/m), validated.
    pub fn penalty(&self, k: f64) -> Result<Penalty> {
        Penalty::new(k, self.zeta, self.mass)
    }
}

/// Push-only spring-damper parameters: force `max(0, -k·y - c·v)` while y < 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Penalty {
    /// Stiffness k, N/m.
    pub stiffness: f64,
    /// Damping c = 2·zeta·sqrt(k·m), N·s/m.
    pub damping: f64,
    /// Mass the law acts on, kg.
    pub mass: f64,
}

impl Penalty {
    /// The law of zero stiffness and damping on mass `m`: its force -0·y - 0·v is ±0, never
    /// > 0, so it never pushes (the routes' starts, shared by every k, run on it).
    pub fn free(m: f64) -> Penalty {
        Penalty {
            stiffness: 0.0,
            damping: 0.0,
            mass: m,
        }
    }

    /// Validated penalty law for stiffness `k` with damping ratio `zeta` on mass `m`.
    pub fn new(k: f64, zeta: f64, m: f64) -> Result<Penalty> {
        positive("k", k)?;
        Ok(Penalty {
            stiffness: k,
            damping: 2.0 * zeta * (k * m).sqrt(),
            mass: m,
        })
    }

    /// Natural angular frequency sqrt(k/m), rad/s.
    pub fn omega(&self) -> f64 {
        (self.stiffness / self.mass).sqrt()
    }
}
