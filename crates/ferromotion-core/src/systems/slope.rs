//! A ball bouncing on a plane inclined by `angle` through the origin.

use nalgebra::{DMatrix, DVector};

use super::{falling_root, fly, fly_jacobian, Ball, Declared, Entry, Fallback, Param, Spec};
use super::{BALL_UNITS, GRAVITY, LIMIT_RESTITUTION};
use crate::error::{FerroError, Result};
use crate::hybrid::HybridSystem;
use crate::physics::contact::rigid::DEFAULT_GRAZE_SPEED;

/// Impacts [`slope_exact`] goes through before it gives up.
const MAX_IMPACTS: usize = 64;

/// The slope ball's definition.
pub static SPEC: Spec = Spec {
    kind: "slope_ball",
    class: "SlopeBall",
    summary: "a ball above a frictionless plane inclined by `angle` through the origin: guard n.p, reset v+ = v- - (1+e)(n.v-) n",
    state_names: &["p_x", "p_z", "v_x", "v_z"],
    units: BALL_UNITS,
    params: &[
        Param {
            name: "angle",
            unit: "rad",
            len: 1,
            lo: -std::f64::consts::FRAC_PI_2,
            lo_closed: false,
            hi: std::f64::consts::FRAC_PI_2,
            hi_closed: false,
            range: "(-pi/2, pi/2)",
            default: Fallback::Required,
            doc: "inclination of the plane",
        },
        LIMIT_RESTITUTION,
        GRAVITY,
    ],
    has_exact: true,
};

/// The slope ball in the registry.
pub const ENTRY: Entry = Entry {
    spec: &SPEC,
    build: |v| {
        Box::new(SlopeBall {
            angle: v[0],
            restitution: v[1],
            gravity: v[2],
        })
    },
};

/// A ball bouncing on a plane inclined by `angle` (rad) through the origin:
/// x = (p_x, p_z, v_x, v_z), guard n·p (height above the plane, n its unit normal),
/// reset v+ = v- - (1+e)·(n·v-)·n (frictionless, restitution on the normal part).
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
pub struct SlopeBall {
    /// Gravity, m/s².
    pub gravity: f64,
    /// Restitution on the normal velocity.
    pub restitution: f64,
    /// Inclination of the plane, rad.
    pub angle: f64,
}

impl Ball for SlopeBall {
    const NAME: &'static str = "ball on a slope";
    fn gravity(&self) -> f64 {
        self.gravity
    }
    fn restitution(&self) -> f64 {
        self.restitution
    }
    fn surfaces(&self) -> usize {
        1
    }
    fn surface_normal(&self, _: usize, _: &DVector<f64>) -> (f64, f64) {
        (-libm::sin(self.angle), libm::cos(self.angle))
    }
}

impl Declared for SlopeBall {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn values(&self) -> Vec<f64> {
        vec![self.angle, self.restitution, self.gravity]
    }
}

/// The slope's exact rigid answer: (x(T), J, impact times), closed form.
pub fn slope_exact(
    ball: &SlopeBall,
    x0: &[f64; 4],
    t_final: f64,
) -> Result<(DVector<f64>, DMatrix<f64>, Vec<f64>)> {
    ball.validate()?;
    crate::error::positive("t_final", t_final)?;
    let g = ball.gravity;
    let guard_grad = ball.guard_gradient(0, 0, &DVector::zeros(4));
    let (nx, nz) = (guard_grad[0], guard_grad[1]);
    let an = -g * nz; // normal acceleration (< 0)
    let mut x = DVector::from_row_slice(x0);
    let mut jac = DMatrix::identity(4, 4);
    let mut t = 0.0;
    let mut impacts = Vec::new();
    let h0 = nx * x[0] + nz * x[1];
    if !(h0 > 0.0) {
        return Err(FerroError::InvalidParameter {
            name: "initial_state",
            value: h0,
            limit: "the ball must start above the plane (n·p > 0)".into(),
        });
    }
    loop {
        // After an impact h is 0 up to round-off and v_n > 0: the larger root is the next impact.
        let h = nx * x[0] + nz * x[1];
        let vn = nx * x[2] + nz * x[3];
        let s = match falling_root(h, vn, an) {
            Some(s) if t + s < t_final => s,
            _ => {
                let rest = t_final - t;
                x = fly(&x, g, rest);
                jac = fly_jacobian(rest) * jac;
                break;
            }
        };
        if impacts.len() >= MAX_IMPACTS {
            return Err(FerroError::TooManySteps {
                route: "slope_exact",
                max_steps: MAX_IMPACTS as u64,
                detail: format!("{} impacts by t = {t} s", impacts.len()),
            });
        }
        t += s;
        let mut xm = fly(&x, g, s);
        // Land exactly on the plane: move p along n by the round-off left in the guard.
        let miss = nx * xm[0] + nz * xm[1];
        xm[0] -= miss * nx;
        xm[1] -= miss * nz;
        jac = fly_jacobian(s) * jac;
        let speed = -(nx * xm[2] + nz * xm[3]);
        if speed < DEFAULT_GRAZE_SPEED {
            return Err(FerroError::Grazing {
                t,
                speed,
                threshold: DEFAULT_GRAZE_SPEED,
                term: (1.0 + ball.restitution) * g * nz / speed,
            });
        }
        impacts.push(t);
        let f_minus = ball.rhs(0, &xm);
        let (_, xp) = ball.reset(0, 0, &xm);
        let f_plus = ball.rhs(0, &xp);
        let dr = ball.reset_jacobian(0, 0, &xm);
        let speed_g = guard_grad.dot(&f_minus);
        let salt = &dr + (&f_plus - &dr * &f_minus) * guard_grad.transpose() / speed_g;
        jac = salt * jac;
        x = xp;
    }
    Ok((x, jac, impacts))
}
