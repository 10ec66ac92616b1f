//! Objectives with known answers for the gradient checker, each with its gradient and,
//! where it has events, its event signature.
//!
//! - [`linear_scalar`]: `x_{k+1} = a·x_k + b·u`, x0 = 1, u = 1, `J = ½·(x2 - 2)²`; at
//!   (a, b) = (0.5, 0.4) the gradient is (-1.61, -1.725) (by hand: x1 = a + b,
//!   x2 = a·x1 + b, dJ/da = (x2 - 2)·(x1 + a), dJ/db = (x2 - 2)·(a + 1)).
//! - [`Projectile`]: a point launched from the origin with velocity (vx, vz), stepped by
//!   semi-implicit Euler, landing where the step that crosses z = 0 is interpolated
//!   linearly; `J = ½·(x_land - target)²`. Smooth between changes of the landing step.
//! - The drop: v(T) of the rigid model (`exact`) and of the fixed-step map.

use crate::error::{positive, Result};
use crate::physics::jacobian::Dual;

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

/// The fixtures the CLI and the lab can check by name.
pub const FIXTURES: [&str; 7] = [
    "scalar",
    "projectile",
    "drop-exact",
    "drop-fixed",
    "drop-fixed-own-map",
    "drop-across-impact",
    "drop-grazing",
];

/// Run the gradient check of a named fixture and write its receipt.
pub fn check_fixture(
    name: &str,
    opts: &crate::check::CheckOptions,
) -> Result<crate::check::Receipt> {
    use crate::check::{check_gradient, EventSignature, ObjectiveInfo, Receipt};
    use crate::physics::contact::rigid::{exact, exact_with_impacts, ExactOptions};
    use crate::physics::integrate::fixed::{contact_signature, fixed, fixed_state, FixedOptions};
    use crate::physics::model::Drop;
    use crate::physics::state::State;

    let info = |name: &str,
                units: &str,
                description: &str,
                route: &str,
                integrator: &str,
                tolerances: &[(&str, f64)]| ObjectiveInfo {
        name: name.into(),
        units: units.into(),
        description: description.into(),
        route: route.into(),
        integrator: integrator.into(),
        tolerances: tolerances
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
    };
    let at = |d: &Drop, x: &[f64]| d.with_x0(&State::new(x[0], x[1]));
    // The rigid model's impacts as the event sequence.
    let exact_events = |d: Drop| {
        move |x: &[f64]| {
            let lenient = ExactOptions {
                graze_speed: 1e-12,
                ..Default::default()
            };
            let (_, impacts) = exact_with_impacts(&at(&d, x), &lenient)?;
            Ok(EventSignature {
                sequence: vec![impacts.len() as i64],
                min_event_speed: impacts.iter().map(|i| -i.v_minus).reduce(f64::min),
            })
        }
    };
    let v_row = |j: &crate::physics::state::Jacobian| [j[(1, 0)], j[(1, 1)]];
    let (k, dt) = (1e6, 1e-4);
    match name {
        "scalar" => {
            let x = [0.5, 0.4];
            let (_, g) = linear_scalar(x[0], x[1]);
            let report = check_gradient(
                &mut |x: &[f64]| Ok(linear_scalar(x[0], x[1]).0),
                None,
                None,
                &x,
                &g,
                opts,
            )?;
            Ok(Receipt::new(
                info(
                    "J = ½(x2 - 2)² of x_{k+1} = a·x_k + b·u, x0 = 1, u = 1",
                    "1",
                    "inputs (a, b)",
                    "forward-mode dual numbers",
                    "none (two map steps)",
                    &[],
                ),
                x.to_vec(),
                g.to_vec(),
                report,
            ))
        }
        "projectile" => {
            let p = Projectile::default();
            let x = [3.0, 4.0];
            let (_, g) = p.objective(x[0], x[1])?;
            let report = check_gradient(
                &mut |x: &[f64]| Ok(p.objective(x[0], x[1])?.0),
                Some(&mut |x: &[f64]| {
                    Ok(EventSignature {
                        sequence: vec![p.landing(x[0], x[1])?.1],
                        min_event_speed: None,
                    })
                }),
                None,
                &x,
                &g,
                opts,
            )?;
            Ok(Receipt::new(
                info(
                    "J = ½(x_land - 2 m)²",
                    "m²",
                    "inputs (vx0, vz0) in m/s",
                    "forward-mode dual numbers",
                    "semi-implicit Euler",
                    &[("dt", p.dt)],
                ),
                x.to_vec(),
                g.to_vec(),
                report,
            ))
        }
        "drop-exact" | "drop-fixed" | "drop-across-impact" | "drop-grazing" => {
            let d = match name {
                "drop-across-impact" => Drop {
                    t_final: Drop::default().first_impact_time() + 1e-12,
                    ..Drop::default()
                },
                "drop-grazing" => Drop {
                    height: 4e-8,
                    t_final: 1.5e-4,
                    ..Drop::default()
                },
                _ => Drop::default(),
            };
            let x = [d.height, d.velocity];
            let lenient = ExactOptions {
                graze_speed: 1e-12,
                ..Default::default()
            };
            let (g, route, integrator, tolerances): ([f64; 2], &str, &str, Vec<(&str, f64)>) =
                if name == "drop-fixed" {
                    (
                        v_row(&fixed(&d, k, dt, &FixedOptions::default())?.jacobian),
                        "fixed-step forward-mode tangent (penalty contact)",
                        "semi-implicit Euler",
                        vec![("k", k), ("dt", dt)],
                    )
                } else {
                    (
                        v_row(&exact(&d, &lenient)?.jacobian),
                        "saltation matrices (rigid impact)",
                        "closed-form flight",
                        vec![],
                    )
                };
            let mut objective = move |x: &[f64]| Ok(exact(&at(&d, x), &lenient)?.state[1]);
            let report = check_gradient(
                &mut objective,
                Some(&mut exact_events(d)),
                None,
                &x,
                &g,
                opts,
            )?;
            Ok(Receipt::new(
                info(
                    "v(T) of the rigid drop",
                    "m/s",
                    &format!("inputs (y0 m, v0 m/s), T = {} s", d.t_final),
                    route,
                    integrator,
                    &tolerances,
                ),
                x.to_vec(),
                g.to_vec(),
                report,
            ))
        }
        "drop-fixed-own-map" => {
            let d = Drop::default();
            let x = [d.height, d.velocity];
            let g = v_row(&fixed(&d, k, dt, &FixedOptions::default())?.jacobian);
            let report = check_gradient(
                &mut |x: &[f64]| Ok(fixed_state(&at(&d, x), k, dt, &FixedOptions::default())?[1]),
                Some(&mut |x: &[f64]| {
                    Ok(EventSignature {
                        sequence: contact_signature(&at(&d, x), k, dt, &FixedOptions::default())?,
                        min_event_speed: None,
                    })
                }),
                None,
                &x,
                &g,
                &crate::check::CheckOptions {
                    tol: opts.tol.max(1e-5),
                    ..opts.clone()
                },
            )?;
            Ok(Receipt::new(
                info(
                    "v(T) of the fixed-step penalty map itself",
                    "m/s",
                    "inputs (y0 m, v0 m/s); event sequence = the steps in contact",
                    "fixed-step forward-mode tangent (penalty contact)",
                    "semi-implicit Euler",
                    &[("k", k), ("dt", dt)],
                ),
                x.to_vec(),
                g.to_vec(),
                report,
            ))
        }
        other => Err(crate::FerroError::InvalidParameter {
            name: "fixture",
            value: f64::NAN,
            limit: format!("unknown fixture `{other}`; known: {}", FIXTURES.join(", ")),
        }),
    }
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
