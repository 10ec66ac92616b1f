//! Rigid impact with restitution, and the `exact` route built on it.
//!
//! Between impacts the mass flies: `y(t) = y0 + v0·t - g·t²/2`, whose state-transition
//! matrix is `[[1, t], [0, 1]]`. At y = 0 with v- < 0 the velocity resets to `v+ = -e·v-`.
//! Differentiating through the reset needs the saltation matrix
//!
//! ```text
//! Xi = R + (f+ - R·f-)·nᵀ / (nᵀ·f-),   R = diag(1, -e),  f = (v, -g),  n = (1, 0)
//!    = [[ -e,              0 ],
//!       [ (1+e)·g/|v-|,   -e ]]
//! ```
//!
//! Its lower-left entry is the time-of-impact term: moving y0 moves the impact time, and
//! that shifts the bounce by an amount that grows as 1/|v-| (3.61 1/s at this drop's
//! 4.43 m/s with e = 0.632; 1,601 1/s at 1 cm/s). No smooth contact model carries it.

use crate::error::{FerroError, Result};
use crate::physics::flight::{flight_jacobian, fly, time_to_ground};
use crate::physics::model::Drop;
use crate::physics::state::{Cost, Jacobian, RouteResult, State};

/// Default grazing threshold: impacts slower than this (m/s) are refused.
pub const DEFAULT_GRAZE_SPEED: f64 = 1e-3;

/// Most impacts the `exact` route composes before T. With e < 1 the bounces slow down
/// until one grazes long before this; with e = 1 (zeta = 0) they never do, and a long T
/// would otherwise loop for T/(2·v/g) impacts.
pub const MAX_IMPACTS: usize = 1_000_000;

/// The time-of-impact term (1+e)·g/|v|, 1/s: the saltation matrix's dv+/dy- entry.
pub fn time_of_impact_term(restitution: f64, gravity: f64, speed: f64) -> Result<f64> {
    crate::error::positive("speed", speed)?;
    crate::error::positive("gravity", gravity)?;
    if !(restitution.is_finite() && (0.0..=1.0).contains(&restitution)) {
        return Err(FerroError::InvalidParameter {
            name: "restitution",
            value: restitution,
            limit: "must be in [0, 1]".into(),
        });
    }
    let term = (1.0 + restitution) * gravity / speed;
    if !term.is_finite() {
        return Err(FerroError::InvalidParameter {
            name: "speed",
            value: speed,
            limit: "too small: (1+e)·g/speed overflows".into(),
        });
    }
    Ok(term)
}

impl Drop {
    /// The time-of-impact term (1+e)·g/|v| (1/s) with this drop's limit restitution, at an
    /// impact `speed` (m/s) of the caller's choosing.
    pub fn time_of_impact_term(&self, speed: f64) -> Result<f64> {
        self.validate()?;
        time_of_impact_term(
            crate::physics::contact::penalty::limit_restitution(self.zeta)?,
            self.gravity,
            speed,
        )
    }
}

/// Saltation matrix of a rigid impact at velocity `v_minus` < 0 (see the module docs).
pub fn saltation(restitution: f64, gravity: f64, v_minus: f64) -> Jacobian {
    let e = restitution;
    Jacobian::new(-e, 0.0, -(1.0 + e) * gravity / v_minus, -e)
}

/// One rigid impact met by the `exact` route.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Impact {
    /// Time of the impact, s.
    pub t: f64,
    /// Velocity just before, m/s (negative).
    pub v_minus: f64,
    /// Velocity just after, m/s.
    pub v_plus: f64,
}

/// Options of the `exact` route.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExactOptions {
    /// Coefficient of restitution e in [0, 1]; `None` takes the push-only penalty law's
    /// stiff limit for the drop's zeta ([`crate::physics::contact::penalty::limit_restitution`]).
    pub restitution: Option<f64>,
    /// Impacts slower than this (m/s) are refused as grazing.
    pub graze_speed: f64,
}

impl Default for ExactOptions {
    fn default() -> Self {
        ExactOptions {
            restitution: None,
            graze_speed: DEFAULT_GRAZE_SPEED,
        }
    }
}

/// The rigid reference: x(T) and its Jacobian through every impact before T, composed
/// from flight matrices and saltation matrices. Refuses grazing impacts.
pub fn exact(drop: &Drop, opts: &ExactOptions) -> Result<RouteResult> {
    Ok(exact_with_impacts(drop, opts)?.0)
}

/// [`exact`], also returning the impacts it went through.
pub fn exact_with_impacts(drop: &Drop, opts: &ExactOptions) -> Result<(RouteResult, Vec<Impact>)> {
    drop.validate()?;
    crate::error::positive("graze_speed", opts.graze_speed)?;
    let e = match opts.restitution {
        Some(e) => {
            if !(e.is_finite() && (0.0..=1.0).contains(&e)) {
                return Err(FerroError::InvalidParameter {
                    name: "restitution",
                    value: e,
                    limit: "must be in [0, 1]".into(),
                });
            }
            e
        }
        None => crate::physics::contact::penalty::limit_restitution_unchecked(drop.zeta),
    };
    let g = drop.gravity;
    let mut x = drop.x0();
    let mut t = 0.0;
    let mut jac = Jacobian::identity();
    let mut impacts = Vec::new();
    loop {
        let dt_hit = time_to_ground(x[0], x[1], g);
        if t + dt_hit >= drop.t_final {
            let rest = drop.t_final - t;
            x = fly(&x, rest, g);
            jac = flight_jacobian(rest) * jac;
            break;
        }
        if impacts.len() >= MAX_IMPACTS {
            return Err(FerroError::TooManySteps {
                route: "exact",
                max_steps: MAX_IMPACTS as u64,
                detail: format!("{} impacts by t = {t} s", impacts.len()),
            });
        }
        // Land exactly on the ground: y = 0, v- from energy, not from round-off.
        let v_minus = x[1] - g * dt_hit;
        t += dt_hit;
        jac = flight_jacobian(dt_hit) * jac;
        let speed = -v_minus;
        if speed < opts.graze_speed {
            return Err(FerroError::Grazing {
                t,
                speed,
                threshold: opts.graze_speed,
                term: (1.0 + e) * g / speed,
            });
        }
        let v_plus = -e * v_minus;
        impacts.push(Impact { t, v_minus, v_plus });
        if v_plus <= 0.0 {
            // e = 0: the mass stays on the ground; nothing about x(T) depends on x(0).
            x = State::zeros();
            jac = Jacobian::zeros();
            break;
        }
        jac = saltation(e, g, v_minus) * jac;
        x = State::new(0.0, v_plus);
    }
    Ok((RouteResult::new(x, jac, Cost::default()), impacts))
}

/// The rigid flow's state at T alone (no Jacobian), for finite-difference oracles.
pub fn exact_state(drop: &Drop, opts: &ExactOptions) -> Result<State> {
    Ok(exact(drop, opts)?.state)
}
