//! Worked examples for the gradient checker: objectives with known answers, each with its
//! gradient and, where it has events, its event signature, checked by name ([`EXAMPLES`],
//! [`check_example`]). ("Fixture" means a conformance fixture, `crate::conformance`: a JSON
//! document with an exact answer an engine is judged against; these are examples of checks.)
//!
//! - [`linear_scalar`]: `x_{k+1} = a·x_k + b·u`, x0 = 1, u = 1, `J = ½·(x2 - 2)²`; at
//!   (a, b) = (0.5, 0.4) the gradient is (-1.61, -1.725) (by hand: x1 = a + b,
//!   x2 = a·x1 + b, dJ/da = (x2 - 2)·(x1 + a), dJ/db = (x2 - 2)·(a + 1)).
//! - [`Projectile`]: a point launched from the origin with velocity (vx, vz), stepped by
//!   semi-implicit Euler, landing where the step that crosses z = 0 is interpolated
//!   linearly; `J = ½·(x_land - target)²`. Smooth between changes of the landing step.
//! - The drop: v(T) of the rigid model (`exact`) and of the fixed-step map.

use crate::check::{
    check_gradient, CheckOptions, CheckReport, EventSignature, ObjectiveInfo, Receipt,
};
use crate::error::{positive, Result};
use crate::physics::contact::rigid::{exact, exact_with_impacts, ExactOptions};
use crate::physics::integrate::fixed::{contact_signature, fixed, fixed_state, FixedOptions};
use crate::physics::jacobian::Dual;
use crate::physics::model::Drop;
use crate::physics::state::{Jacobian, State};

/// The scalar linear system's objective and gradient at (a, b).
pub fn linear_scalar(a: f64, b: f64) -> (f64, [f64; 2]) {
    let (a, b) = (Dual::variable(a, 0), Dual::variable(b, 1));
    let u = Dual::constant(1.0);
    let mut x = Dual::constant(1.0);
    for _ in 0..2 {
        x = a * x + b * u;
    }
    let r = x - Dual::constant(2.0);
    let j = (r * r).scale(0.5);
    (j.v, j.d)
}

/// A projectile on semi-implicit Euler aimed at a landing point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projectile {
    /// Step, s.
    pub dt: f64,
    /// Gravity, m/s².
    pub gravity: f64,
    /// Target landing distance, m.
    pub target: f64,
}

impl Default for Projectile {
    fn default() -> Self {
        Projectile {
            dt: 1e-2,
            gravity: 9.81,
            target: 2.0,
        }
    }
}

impl Projectile {
    /// Landing distance (with its derivatives in vx, vz) and the index of the step that
    /// crosses the ground.
    pub fn landing(&self, vx: f64, vz: f64) -> Result<(Dual, i64)> {
        positive("vz", vz)?;
        crate::error::finite("vx", vx)?;
        positive("dt", self.dt)?;
        let (mut x, mut z) = (Dual::constant(0.0), Dual::constant(0.0));
        let (vx, mut vzd) = (Dual::variable(vx, 0), Dual::variable(vz, 1));
        let dt = Dual::constant(self.dt);
        // The flight lasts 2·vz/g; allow twice that before giving up.
        let max_steps = (4.0 * vz / self.gravity / self.dt).ceil() as i64 + 2;
        for i in 0..max_steps {
            vzd = vzd - Dual::constant(self.gravity) * dt;
            let (x1, z1) = (x + dt * vx, z + dt * vzd);
            if z1.v <= 0.0 && i > 0 {
                // Linear interpolation to z = 0 inside the step.
                let s = z / (z - z1);
                return Ok((x + s * (x1 - x), i));
            }
            x = x1;
            z = z1;
        }
        Err(crate::FerroError::TooManySteps {
            route: "projectile",
            max_steps: max_steps as u64,
            detail: format!("{max_steps} steps taken without reaching the target"),
        })
    }

    /// ½·(x_land - target)² and its gradient in (vx, vz).
    pub fn objective(&self, vx: f64, vz: f64) -> Result<(f64, [f64; 2])> {
        let (land, _) = self.landing(vx, vz)?;
        let r = land - Dual::constant(self.target);
        let j = (r * r).scale(0.5);
        Ok((j.v, j.d))
    }
}

/// The examples the CLI and the lab can check by name (the rows of [`TABLE`], in order).
pub const EXAMPLES: [&str; 7] = {
    let mut names = [""; 7];
    let mut i = 0;
    while i < TABLE.len() {
        names[i] = TABLE[i].name;
        i += 1;
    }
    names
};

/// One example: the objective its receipt describes and how its gradient is checked.
struct Example {
    name: &'static str,
    /// The objective, in words (with its formula), and its units.
    objective: &'static str,
    units: &'static str,
    /// How the claimed gradient is computed and the integrator behind the objective.
    route: &'static str,
    integrator: &'static str,
    /// The check itself: inputs, claimed gradient, the checker's report and what the
    /// receipt says of the inputs.
    check: fn(&CheckOptions) -> Result<Checked>,
}

/// An example's check, for its receipt.
struct Checked {
    x: [f64; 2],
    gradient: [f64; 2],
    report: CheckReport,
    /// The inputs and anything else a reader needs.
    description: String,
    tolerances: Vec<(&'static str, f64)>,
}

const RIGID: &str = "saltation matrices (rigid impact)";
const FIXED: &str = "fixed-step forward-mode tangent (penalty contact)";
const EULER: &str = "semi-implicit Euler";
const FLIGHT: &str = "closed-form flight";
/// The drop examples' stiffness (N/m) and step (s).
const K: f64 = 1e6;
const DT: f64 = 1e-4;

/// Every example: one row each.
const TABLE: [Example; 7] = [
    Example {
        name: "scalar",
        objective: "J = ½(x2 - 2)² of x_{k+1} = a·x_k + b·u, x0 = 1, u = 1",
        units: "1",
        route: "forward-mode dual numbers",
        integrator: "none (two map steps)",
        check: scalar,
    },
    Example {
        name: "projectile",
        objective: "J = ½(x_land - 2 m)²",
        units: "m²",
        route: "forward-mode dual numbers",
        integrator: EULER,
        check: projectile,
    },
    Example {
        name: "drop-exact",
        objective: "v(T) of the rigid drop",
        units: "m/s",
        route: RIGID,
        integrator: FLIGHT,
        check: |opts| rigid_drop(Drop::default(), Claim::Rigid, opts),
    },
    Example {
        name: "drop-fixed",
        objective: "v(T) of the rigid drop",
        units: "m/s",
        route: FIXED,
        integrator: EULER,
        check: |opts| rigid_drop(Drop::default(), Claim::FixedStep, opts),
    },
    Example {
        name: "drop-fixed-own-map",
        objective: "v(T) of the fixed-step penalty map itself",
        units: "m/s",
        route: FIXED,
        integrator: EULER,
        check: fixed_own_map,
    },
    Example {
        name: "drop-across-impact",
        objective: "v(T) of the rigid drop",
        units: "m/s",
        route: RIGID,
        integrator: FLIGHT,
        check: |opts| rigid_drop(across_impact(), Claim::Rigid, opts),
    },
    Example {
        name: "drop-grazing",
        objective: "v(T) of the rigid drop",
        units: "m/s",
        route: RIGID,
        integrator: FLIGHT,
        check: |opts| rigid_drop(grazing(), Claim::Rigid, opts),
    },
];

/// Run the gradient check of a named example and write its receipt.
pub fn check_example(name: &str, opts: &CheckOptions) -> Result<Receipt> {
    let Some(example) = TABLE.iter().find(|f| f.name == name) else {
        return Err(crate::FerroError::InvalidParameter {
            name: "example",
            value: f64::NAN,
            limit: format!("unknown example `{name}`; known: {}", EXAMPLES.join(", ")),
        });
    };
    let checked = (example.check)(opts)?;
    let info = ObjectiveInfo {
        name: example.objective.into(),
        units: example.units.into(),
        description: checked.description,
        route: example.route.into(),
        integrator: example.integrator.into(),
        tolerances: checked
            .tolerances
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
    };
    Ok(Receipt::new(
        info,
        checked.x.to_vec(),
        checked.gradient.to_vec(),
        checked.report,
    ))
}

fn scalar(opts: &CheckOptions) -> Result<Checked> {
    let x = [0.5, 0.4];
    let (_, gradient) = linear_scalar(x[0], x[1]);
    let mut objective = |x: &[f64]| Ok(linear_scalar(x[0], x[1]).0);
    let report = check_gradient(&mut objective, None, None, &x, &gradient, opts)?;
    Ok(Checked {
        x,
        gradient,
        report,
        description: "inputs (a, b)".into(),
        tolerances: vec![],
    })
}

fn projectile(opts: &CheckOptions) -> Result<Checked> {
    let p = Projectile::default();
    let x = [3.0, 4.0];
    let (_, gradient) = p.objective(x[0], x[1])?;
    let mut objective = |x: &[f64]| Ok(p.objective(x[0], x[1])?.0);
    let mut events = |x: &[f64]| {
        Ok(EventSignature {
            sequence: vec![p.landing(x[0], x[1])?.1],
            min_event_speed: None,
        })
    };
    let report = check_gradient(&mut objective, Some(&mut events), None, &x, &gradient, opts)?;
    Ok(Checked {
        x,
        gradient,
        report,
        description: "inputs (vx0, vz0) in m/s".into(),
        tolerances: vec![("dt", p.dt)],
    })
}

/// Which gradient a rigid-drop example claims for v(T): the rigid model's own, or the
/// fixed-step route's (which the rigid objective exposes as wrong).
#[derive(Clone, Copy, PartialEq)]
enum Claim {
    Rigid,
    FixedStep,
}

/// The rigid drop ending 1e-12 s after its first impact.
fn across_impact() -> Drop {
    Drop {
        t_final: Drop::default().first_impact_time() + 1e-12,
        ..Drop::default()
    }
}

/// A drop from 40 nm: its impact barely faster than nothing.
fn grazing() -> Drop {
    Drop {
        height: 4e-8,
        t_final: 1.5e-4,
        ..Drop::default()
    }
}

/// The rigid model, lenient about grazing (the checker probes near-grazing inputs).
fn lenient() -> ExactOptions {
    ExactOptions {
        graze_speed: 1e-12,
        ..Default::default()
    }
}

/// `d` started from x = (y0, v0).
fn at(d: &Drop, x: &[f64]) -> Drop {
    d.with_x0(&State::new(x[0], x[1]))
}

/// The v(T) row of a Jacobian: (dv/dy0, dv/dv0).
fn v_row(j: &Jacobian) -> [f64; 2] {
    [j[(1, 0)], j[(1, 1)]]
}

/// v(T) of the rigid drop `d`, checked against the gradient `claim` names; the rigid
/// model's impacts are the event sequence.
fn rigid_drop(d: Drop, claim: Claim, opts: &CheckOptions) -> Result<Checked> {
    let x = [d.height, d.velocity];
    let (gradient, tolerances) = match claim {
        Claim::FixedStep => (
            v_row(&fixed(&d, K, DT, &FixedOptions::default())?.jacobian),
            vec![("k", K), ("dt", DT)],
        ),
        Claim::Rigid => (v_row(&exact(&d, &lenient())?.jacobian), vec![]),
    };
    let mut objective = move |x: &[f64]| Ok(exact(&at(&d, x), &lenient())?.state[1]);
    let mut events = move |x: &[f64]| {
        let (_, impacts) = exact_with_impacts(&at(&d, x), &lenient())?;
        Ok(EventSignature {
            sequence: vec![impacts.len() as i64],
            min_event_speed: impacts.iter().map(|i| -i.v_minus).reduce(f64::min),
        })
    };
    let report = check_gradient(&mut objective, Some(&mut events), None, &x, &gradient, opts)?;
    Ok(Checked {
        x,
        gradient,
        report,
        description: format!("inputs (y0 m, v0 m/s), T = {} s", d.t_final),
        tolerances,
    })
}

/// v(T) of the fixed-step penalty map itself, checked against its own tangent; the steps
/// in contact are the event sequence. The map is rougher than the rigid one, so the
/// tolerance is at least 1e-5.
fn fixed_own_map(opts: &CheckOptions) -> Result<Checked> {
    let d = Drop::default();
    let o = FixedOptions::default();
    let x = [d.height, d.velocity];
    let gradient = v_row(&fixed(&d, K, DT, &o)?.jacobian);
    let mut objective = |x: &[f64]| Ok(fixed_state(&at(&d, x), K, DT, &o)?[1]);
    let mut events = |x: &[f64]| {
        Ok(EventSignature {
            sequence: contact_signature(&at(&d, x), K, DT, &o)?,
            min_event_speed: None,
        })
    };
    let opts = CheckOptions {
        tol: opts.tol.max(1e-5),
        ..opts.clone()
    };
    let report = check_gradient(
        &mut objective,
        Some(&mut events),
        None,
        &x,
        &gradient,
        &opts,
    )?;
    Ok(Checked {
        x,
        gradient,
        report,
        description: "inputs (y0 m, v0 m/s); event sequence = the steps in contact".into(),
        tolerances: vec![("k", K), ("dt", DT)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_scalar_gradient_by_hand() {
        let (_, g) = linear_scalar(0.5, 0.4);
        assert!(
            (g[0] + 1.61).abs() < 1e-12 && (g[1] + 1.725).abs() < 1e-12,
            "{g:?}"
        );
    }
}
