//! Two contacts at once: the V-groove (`systems/vgroove.rs`) dropped from a small sideways
//! offset, the rigid groove's exact answer beside a fixed-step soft-contact simulator's
//! (`systems/vgroove_soft.rs`), offset by offset through zero.
//!
//! From x0 = (offset, height, 0, 0) the ball falls onto the vertex region. Off the axis it
//! meets one wall and then the other: single impacts, a Jacobian. On the axis it meets both
//! at once, and the rigid answer is what the orders of the two impacts give (the core's
//! `exact_events`): at 90° both orders give one state and one matrix (a Jacobian: nothing
//! jumps); at any other angle they give mirror-image states (`SetValued`: the outcome jumps
//! at zero offset and no derivative exists there). The soft simulator's walls have the
//! damping ratio whose stiff-limit restitution is the rigid groove's (`zeta_for_restitution`),
//! so far from zero offset it approaches the rigid answer as k grows; at zero it reports one
//! state and one finite matrix either way.
//!
//! Every verdict is the core's: a row's `verdict` is `"Jacobian"` when the rigid answer has
//! one, else the refusal's kind as Python raises it (`SetValued`, `NotDifferentiable`, or
//! another refusal such as `Grazing`).

use crate::error::{positive, FerroError, Result};
use crate::fit::predict::zeta_for_restitution;
use crate::hybrid::{exact_events, HybridOptions, HybridSystem};
use crate::physics::contact::penalty::limit_restitution;
use crate::physics::integrate::DEFAULT_MAX_STEPS;
use crate::systems::vgroove_soft::{SoftAnswer, SoftVGroove};
use crate::systems::VGroove;
use nalgebra::DVector;
use serde::{Deserialize, Serialize};

/// Options of [`two_contacts`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TwoContactsOptions {
    /// Opening angle of the groove, degrees, in (0, 180).
    pub angle_degrees: f64,
    /// Restitution of the rigid walls, in [0, 1]; the soft walls' damping ratio is the one
    /// whose stiff-limit restitution is this.
    pub restitution: f64,
    /// Release height above the vertex, m.
    pub height: f64,
    /// Horizon T, s.
    pub t_final: f64,
    /// Gravity, m/s².
    pub gravity: f64,
    /// Largest sideways offset, m: the offsets run from -half_width to +half_width.
    pub half_width: f64,
    /// Offsets on each side of zero (zero itself is always one of them), 1 to 200.
    pub per_side: u32,
    /// Soft walls' stiffness, N/m.
    pub stiffness: f64,
    /// The soft simulator's fixed step, s (must divide t_final).
    pub dt: f64,
    /// Mass of the ball, kg.
    pub mass: f64,
}

impl Default for TwoContactsOptions {
    /// The groove (restitution 0.5, from 1 m, T = 0.8 s) at 90°, offsets ±20 mm in
    /// 1 mm steps, soft walls at k = 1e5 N/m stepped at dt = 1e-4 s (omega·dt = 0.03).
    fn default() -> Self {
        TwoContactsOptions {
            angle_degrees: 90.0,
            restitution: 0.5,
            height: 1.0,
            t_final: 0.8,
            gravity: 9.81,
            half_width: 0.02,
            per_side: 20,
            stiffness: 1e5,
            dt: 1e-4,
            mass: 1.0,
        }
    }
}

/// The rigid groove's answer at one offset.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RigidAnswer {
    /// `"Jacobian"`, or the refusal's kind (`SetValued`, `NotDifferentiable`, `Grazing`, ...).
    pub verdict: &'static str,
    /// x(T), m and m/s (`None` when set-valued or refused).
    pub x: Option<[f64; 4]>,
    /// dx(T)/dx(0), row-major (`None` without a Jacobian).
    pub jacobian: Option<Vec<f64>>,
    /// Simultaneous impacts whose orders gave one matrix (the switches commuted).
    pub commuted: bool,
    /// Impacts met before T.
    pub impacts: usize,
    /// Set-valued: each order of the simultaneous impacts (wall indices, first hit first).
    pub orders: Vec<Vec<usize>>,
    /// Set-valued: each order's x(T), in the same order.
    pub outcomes: Vec<Vec<f64>>,
    /// Set-valued: max |x_order - x_first| over the orders (how far the outcome jumps).
    pub spread: Option<f64>,
    /// The refusal's message, in the core's words (`None` with a Jacobian).
    pub message: Option<String>,
}

/// One offset: the rigid answer, the soft simulator's, and how far apart they are.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContactRow {
    /// Sideways offset of the release point, m.
    pub offset: f64,
    /// The rigid groove (exact events).
    pub rigid: RigidAnswer,
    /// The fixed-step soft-contact simulator.
    pub soft: SoftAnswer,
    /// max |x_soft(T) - x_rigid(T)| (m, m/s); where the rigid outcome is set-valued, to the
    /// nearest order's outcome; `None` when the rigid answer was refused otherwise.
    pub state_gap: Option<f64>,
    /// max |J_soft - J_rigid| / max |J_rigid| where the rigid Jacobian exists.
    pub gradient_error: Option<f64>,
}

/// The panel's document (module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TwoContacts {
    /// The options it was computed with.
    pub options: TwoContactsOptions,
    /// The opening angle, rad.
    pub angle: f64,
    /// The soft walls' damping ratio.
    pub zeta: f64,
    /// The soft walls' restitution as k grows without bound (equals `restitution`).
    pub soft_restitution: f64,
    /// Index of the zero offset in `rows`.
    pub zero: usize,
    /// One row per offset, from -half_width to +half_width.
    pub rows: Vec<ContactRow>,
}

fn check(o: &TwoContactsOptions) -> Result<()> {
    if !(o.angle_degrees > 0.0 && o.angle_degrees < 180.0) {
        return Err(FerroError::InvalidParameter {
            name: "angle_degrees",
            value: o.angle_degrees,
            limit: "must be in (0, 180) (degrees)".into(),
        });
    }
    // e = 0 has no underdamped spring-damper (the stiff-limit restitution reaches 0 only as
    // zeta -> 1), so the soft walls need e > 0.
    if !(o.restitution > 0.0 && o.restitution <= 1.0) {
        return Err(FerroError::InvalidParameter {
            name: "restitution",
            value: o.restitution,
            limit: "must be in (0, 1]".into(),
        });
    }
    positive("height", o.height)?;
    positive("t_final", o.t_final)?;
    positive("gravity", o.gravity)?;
    positive("half_width", o.half_width)?;
    if !(1..=200).contains(&o.per_side) {
        return Err(FerroError::InvalidParameter {
            name: "per_side",
            value: o.per_side as f64,
            limit: "must be a whole number in [1, 200]".into(),
        });
    }
    positive("stiffness", o.stiffness)?;
    positive("dt", o.dt)?;
    positive("mass", o.mass)?;
    Ok(())
}

/// The rigid groove from x0: its exact answer, or its refusal, as a row's `rigid`.
fn rigid(groove: &VGroove, x0: &DVector<f64>, t_final: f64) -> RigidAnswer {
    let mut answer = RigidAnswer {
        verdict: "Jacobian",
        x: None,
        jacobian: None,
        commuted: false,
        impacts: 0,
        orders: Vec::new(),
        outcomes: Vec::new(),
        spread: None,
        message: None,
    };
    match exact_events(groove, x0, 0, 0.0, t_final, &HybridOptions::default()) {
        Ok(sol) => {
            answer.x = Some([sol.x[0], sol.x[1], sol.x[2], sol.x[3]]);
            answer.impacts = sol.events.len();
            answer.commuted = sol.pieces.commuted();
            match sol.pieces.jacobian() {
                Ok(j) => answer.jacobian = Some(j.transpose().iter().copied().collect()),
                Err(e) => {
                    answer.verdict = e.kind();
                    answer.message = Some(e.to_string());
                }
            }
        }
        Err(e) => {
            answer.verdict = e.kind();
            answer.message = Some(e.to_string());
            if let FerroError::SetValued {
                orders,
                outcomes,
                spread,
                ..
            } = e
            {
                answer.orders = orders;
                answer.outcomes = outcomes;
                answer.spread = Some(spread);
            }
        }
    }
    answer
}

fn max_gap(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .fold(0.0_f64, |m, (x, y)| m.max((x - y).abs()))
}

/// How far the soft answer is from the rigid one (see [`ContactRow`]).
fn compare(rigid: &RigidAnswer, soft: &SoftAnswer) -> (Option<f64>, Option<f64>) {
    let state_gap = match (&rigid.x, rigid.outcomes.is_empty()) {
        (Some(x), _) => Some(max_gap(x, &soft.x)),
        (None, false) => rigid
            .outcomes
            .iter()
            .map(|o| max_gap(o, &soft.x))
            .reduce(f64::min),
        (None, true) => None,
    };
    let gradient_error = rigid.jacobian.as_ref().map(|j| {
        let scale = j.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        max_gap(j, &soft.jacobian) / scale
    });
    (state_gap, gradient_error)
}

/// The panel's document: the rigid groove and the soft simulator at every offset.
pub fn two_contacts(opts: &TwoContactsOptions) -> Result<TwoContacts> {
    check(opts)?;
    let angle = opts.angle_degrees.to_radians();
    let groove = VGroove {
        angle,
        restitution: opts.restitution,
        gravity: opts.gravity,
    };
    groove.validate()?;
    let zeta = zeta_for_restitution(opts.restitution)?;
    let soft = SoftVGroove {
        angle,
        stiffness: opts.stiffness,
        zeta,
        mass: opts.mass,
        gravity: opts.gravity,
    };
    let n = opts.per_side as i64;
    let step = opts.half_width / opts.per_side as f64;
    let mut rows = Vec::with_capacity(2 * n as usize + 1);
    for i in -n..=n {
        let offset = i as f64 * step;
        let x0 = [offset, opts.height, 0.0, 0.0];
        let rigid = rigid(&groove, &DVector::from_row_slice(&x0), opts.t_final);
        let soft = soft.fixed(x0, opts.t_final, opts.dt, DEFAULT_MAX_STEPS)?;
        let (state_gap, gradient_error) = compare(&rigid, &soft);
        rows.push(ContactRow {
            offset,
            rigid,
            soft,
            state_gap,
            gradient_error,
        });
    }
    Ok(TwoContacts {
        options: *opts,
        angle,
        zeta,
        soft_restitution: limit_restitution(zeta)?,
        zero: n as usize,
        rows,
    })
}
