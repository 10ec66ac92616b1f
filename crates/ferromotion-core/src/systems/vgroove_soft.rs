//! The V-groove with soft walls, stepped the way a fixed-step differentiable simulator
//! steps it: each wall is the drop's push-only spring-damper (`physics/contact/penalty.rs`)
//! acting along its own normal, the two forces summed, and semi-implicit Euler carries the
//! state with a forward-mode tangent through every step (what JAX, PyTorch or Warp return
//! for this loop).
//!
//! ```text
//! g_i = n_i·p                (wall i's gap, m; n_0 = (cos a/2, sin a/2), n_1 = (-cos a/2, sin a/2))
//! F_i = max(0, -k·g_i - c·(n_i·v))  if g_i < 0,   0 otherwise,     c = 2·zeta·sqrt(k·m)
//! v+  = v + dt·(-g·e_y + (F_0·n_0 + F_1·n_1)/m),   p+ = p + dt·v+
//! ```
//!
//! The tangent takes each wall's branch as given (`dF_i/dg_i = -k`, `dF_i/d(n_i·v) = -c`
//! while it pushes, 0 otherwise) and never sees the jump of F_i at entry; the rigid groove's
//! saltation matrices are not in it. Where the rigid groove's two impacts are simultaneous
//! and their orders give different states (any angle but 90°), the soft walls still give one
//! continuous outcome and this tangent one finite matrix: a gradient where none exists.
//!
//! At 90° the normals are orthogonal and each wall's force depends on its own coordinate
//! n_i·p only, so the motion splits into two independent penalty drops, one along each normal
//! (`tests/vgroove_soft.rs` checks that against the drop's closed-form flow).

use crate::error::{positive, FerroError, Result};
use crate::physics::integrate::fixed::step_count;
use crate::physics::model::Penalty;
use serde::Serialize;

/// A ball in a V-groove of opening `angle` with push-only spring-damper walls (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SoftVGroove {
    /// Opening angle, rad, in (0, pi).
    pub angle: f64,
    /// Wall stiffness k, N/m.
    pub stiffness: f64,
    /// Damping ratio zeta in [0, 1): c = 2·zeta·sqrt(k·m).
    pub zeta: f64,
    /// Mass of the ball, kg.
    pub mass: f64,
    /// Gravity, m/s², along -y.
    pub gravity: f64,
}

/// What the fixed-step simulator reports at T.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SoftAnswer {
    /// x(T) = (p_x, p_y, v_x, v_y), m and m/s.
    pub x: [f64; 4],
    /// The tangent dx(T)/dx(0), row-major (entry 4·i + j is dx_i(T)/dx_j(0)).
    pub jacobian: [f64; 16],
    /// Steps taken (one force evaluation each).
    pub steps: u64,
}

impl SoftVGroove {
    /// Refuse a parameter outside its range, by name.
    pub fn validate(&self) -> Result<()> {
        if !(self.angle > 0.0 && self.angle < std::f64::consts::PI) {
            return Err(FerroError::InvalidParameter {
                name: "angle",
                value: self.angle,
                limit: "must be in (0, pi) (rad)".into(),
            });
        }
        positive("stiffness", self.stiffness)?;
        if !(self.zeta >= 0.0 && self.zeta < 1.0) {
            return Err(FerroError::InvalidParameter {
                name: "zeta",
                value: self.zeta,
                limit: "must be in [0, 1) (underdamped contact)".into(),
            });
        }
        positive("mass", self.mass)?;
        crate::error::finite("gravity", self.gravity)?;
        Ok(())
    }

    /// Unit normal of wall i (into the free space), as the rigid groove's.
    pub fn normal(&self, i: usize) -> [f64; 2] {
        let (c, s) = (libm::cos(0.5 * self.angle), libm::sin(0.5 * self.angle));
        if i == 0 {
            [c, s]
        } else {
            [-c, s]
        }
    }

    /// Step from `x0` to `t_final` at the fixed step `dt` (which must divide it), carrying the
    /// tangent; refuses more than `max_steps` steps and a non-finite answer.
    pub fn fixed(&self, x0: [f64; 4], t_final: f64, dt: f64, max_steps: u64) -> Result<SoftAnswer> {
        self.validate()?;
        if x0.iter().any(|v| !v.is_finite()) {
            return Err(FerroError::InvalidParameter {
                name: "x0",
                value: x0
                    .iter()
                    .copied()
                    .find(|v| !v.is_finite())
                    .unwrap_or(f64::NAN),
                limit: "must hold 4 finite numbers (p_x, p_y, v_x, v_y)".into(),
            });
        }
        positive("t_final", t_final)?;
        let steps = step_count(t_final, dt, max_steps)?;
        let law = Penalty::new(self.stiffness, self.zeta, self.mass)?;
        let (x, jac) = self.run(&law, x0, dt, steps);
        if x.iter().chain(jac.iter()).any(|v| !v.is_finite()) {
            return Err(FerroError::NonFinite {
                what: "the soft V-groove",
                detail: format!("at T = {t_final} s with dt = {dt:e} s"),
            });
        }
        Ok(SoftAnswer {
            x,
            jacobian: jac,
            steps,
        })
    }

    /// The loop: `steps` semi-implicit Euler steps with the tangent (rows p_x, p_y, v_x, v_y).
    fn run(&self, law: &Penalty, x0: [f64; 4], dt: f64, steps: u64) -> ([f64; 4], [f64; 16]) {
        let normals = [self.normal(0), self.normal(1)];
        let inv_m = 1.0 / law.mass;
        let (mut p, mut v) = ([x0[0], x0[1]], [x0[2], x0[3]]);
        // Tangent rows of p and v: jp[r][j] = dp_r/dx0_j, jv[r][j] = dv_r/dx0_j.
        let mut jp = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]];
        let mut jv = [[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]];
        for _ in 0..steps {
            let mut a = [0.0, -self.gravity];
            // da/dp and da/dv: the sum over the walls that push of -k·n nᵀ/m and -c·n nᵀ/m.
            let mut a_p = [[0.0; 2]; 2];
            let mut a_v = [[0.0; 2]; 2];
            for n in &normals {
                let gap = n[0] * p[0] + n[1] * p[1];
                let rate = n[0] * v[0] + n[1] * v[1];
                let f = law.force(gap, rate);
                if f > 0.0 {
                    for r in 0..2 {
                        a[r] += f * inv_m * n[r];
                        for s in 0..2 {
                            a_p[r][s] -= law.stiffness * inv_m * n[r] * n[s];
                            a_v[r][s] -= law.damping * inv_m * n[r] * n[s];
                        }
                    }
                }
            }
            // v first (it feeds p), for the state and for the tangent alike.
            let mut jv_next = jv;
            for r in 0..2 {
                for j in 0..4 {
                    let da = a_p[r][0] * jp[0][j]
                        + a_p[r][1] * jp[1][j]
                        + a_v[r][0] * jv[0][j]
                        + a_v[r][1] * jv[1][j];
                    jv_next[r][j] = jv[r][j] + dt * da;
                }
            }
            jv = jv_next;
            for r in 0..2 {
                v[r] += dt * a[r];
                p[r] += dt * v[r];
                for j in 0..4 {
                    jp[r][j] += dt * jv[r][j];
                }
            }
        }
        let mut jac = [0.0; 16];
        for (block, row) in jac.chunks_exact_mut(4).zip([jp[0], jp[1], jv[0], jv[1]]) {
            block.copy_from_slice(&row);
        }
        ([p[0], p[1], v[0], v[1]], jac)
    }
}
