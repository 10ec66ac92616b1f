//! A penalty rimless wheel whose stiff limit is McGeer's plastic impact (per unit mass).
//!
//! The hub is a point mass at p = (x, y) in the slope's frame (x downhill along the slope, y
//! normal to it), relative to the stance foot; gravity g·(sin slope, -cos slope). Each leg is
//! a spring-damper along its spoke, F = k·d + b·ḋ with d = L - |p - foot| its compression and
//! b = 2ζ√k, pushing the hub away from its foot.
//! - **Stance foot** (mode 0): the leg *holds* (acts in compression and in extension), so the
//!   wheel pivots on it as on McGeer's pin, the leg a little compressed.
//! - **Touchdown** (guard 0 in mode 0): the next spoke's tip, hub - L·(sin(φ - 2α), cos(φ - 2α))
//!   with φ = atan2(x, y) the stance spoke's angle, reaches the ground. The frame moves to the
//!   new foot (x' = x - x_tip) and the old foot's offset s = -x_tip is kept in the state.
//! - **Double support** (mode 1): the new foot holds, the old foot pushes only, and is released
//!   (guard 0 in mode 1) when its force F_old reaches zero: back to mode 0 on the new foot.
//!
//! State (x, y, v_x, v_y, s). As k → ∞ at fixed ζ ≥ 1 the new leg absorbs the hub's velocity
//! along the new spoke (critically damped or more, it does not give it back) and keeps the
//! component across it: ω+ = cos(2α)·ω-, McGeer's plastic impact. (A push-only new foot
//! released at zero force would return a part e(ζ) > 0 of it, and the wheel would hop.)

use nalgebra::{DMatrix, DVector, Matrix2, Vector2};

use super::multiplier::Reading;
use super::RimlessWheel;
use crate::error::{positive, Result};
use crate::hybrid::HybridSystem;

/// The penalty wheel (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PenaltyWheel {
    /// The rigid wheel's geometry and gravity.
    pub wheel: RimlessWheel,
    /// k/m, s⁻².
    pub stiffness: f64,
    /// ζ: b/m = 2ζ√k.
    pub damping_ratio: f64,
}

/// A leg's force on the hub and its derivatives: a = F·n, ∂a/∂p, ∂a/∂v, F, ∂F/∂p, ∂F/∂v.
struct Leg {
    acc: Vector2<f64>,
    da_dp: Matrix2<f64>,
    da_dv: Matrix2<f64>,
    force: f64,
    df_dp: Vector2<f64>,
    df_dv: Vector2<f64>,
}

impl PenaltyWheel {
    fn b(&self) -> f64 {
        2.0 * self.damping_ratio * libm::sqrt(self.stiffness)
    }

    fn leg(&self, p: Vector2<f64>, v: Vector2<f64>, foot: Vector2<f64>) -> Leg {
        let (k, b, l) = (self.stiffness, self.b(), self.wheel.length);
        let delta = p - foot;
        let r = delta.norm();
        let n = delta / r;
        let dn_dp = (Matrix2::identity() - n * n.transpose()) / r;
        let (d, dd) = (l - r, -n.dot(&v));
        let force = k * d + b * dd;
        let df_dp = -k * n - b * dn_dp.transpose() * v;
        let df_dv = -b * n;
        Leg {
            acc: force * n,
            da_dp: n * df_dp.transpose() + force * dn_dp,
            da_dv: n * df_dv.transpose(),
            force,
            df_dp,
            df_dv,
        }
    }

    fn parts(x: &DVector<f64>) -> (Vector2<f64>, Vector2<f64>, Vector2<f64>) {
        (
            Vector2::new(x[0], x[1]),
            Vector2::new(x[2], x[3]),
            Vector2::new(x[4], 0.0),
        )
    }

    fn gravity(&self) -> Vector2<f64> {
        let w = &self.wheel;
        w.gravity * Vector2::new(libm::sin(w.slope), -libm::cos(w.slope))
    }

    /// The stance spoke's angle φ and the next tip's height and its gradient in p.
    fn tip(&self, p: Vector2<f64>) -> (f64, f64, Vector2<f64>) {
        let (a, l) = (self.wheel.half_angle, self.wheel.length);
        let phi = libm::atan2(p[0], p[1]);
        let r2 = p.norm_squared();
        let dphi = Vector2::new(p[1] / r2, -p[0] / r2);
        let h = p[1] - l * libm::cos(phi - 2.0 * a);
        let grad = Vector2::new(0.0, 1.0) + l * libm::sin(phi - 2.0 * a) * dphi;
        (phi, h, grad)
    }

    /// The state on the section x = 0 of the rigid wheel's orbit (the leg at rest length).
    pub fn rigid_start(&self, omega_on_section: f64) -> DVector<f64> {
        let l = self.wheel.length;
        DVector::from_vec(vec![0.0, l, l * omega_on_section, 0.0, 0.0])
    }

    /// Checks k > 0 and ζ ≥ 1 (a smaller ζ returns radial velocity: not McGeer's limit).
    pub fn check(&self) -> Result<()> {
        self.wheel.validate()?;
        positive("stiffness", self.stiffness)?;
        if !(self.damping_ratio >= 1.0 && self.damping_ratio.is_finite()) {
            return Err(crate::error::FerroError::InvalidParameter {
                name: "damping_ratio",
                value: self.damping_ratio,
                limit: "must be finite and >= 1 (critically damped or more)".into(),
            });
        }
        Ok(())
    }
}

impl HybridSystem for PenaltyWheel {
    fn name(&self) -> String {
        format!("penalty rimless wheel, k = {:e}", self.stiffness)
    }
    fn validate(&self) -> Result<()> {
        self.check()
    }
    fn dim(&self) -> usize {
        5
    }
    fn rhs(&self, mode: usize, x: &DVector<f64>) -> DVector<f64> {
        let (p, v, old) = Self::parts(x);
        let mut a = self.gravity() + self.leg(p, v, Vector2::zeros()).acc;
        if mode == 1 {
            a += self.leg(p, v, old).acc;
        }
        DVector::from_vec(vec![v[0], v[1], a[0], a[1], 0.0])
    }
    fn rhs_jacobian(&self, mode: usize, x: &DVector<f64>) -> DMatrix<f64> {
        let (p, v, old) = Self::parts(x);
        let mut j = DMatrix::zeros(5, 5);
        j[(0, 2)] = 1.0;
        j[(1, 3)] = 1.0;
        let mut legs = vec![(self.leg(p, v, Vector2::zeros()), false)];
        if mode == 1 {
            legs.push((self.leg(p, v, old), true));
        }
        for (leg, moves) in legs {
            for r in 0..2 {
                for c in 0..2 {
                    j[(2 + r, c)] += leg.da_dp[(r, c)];
                    j[(2 + r, 2 + c)] += leg.da_dv[(r, c)];
                }
                if moves {
                    // The old foot at (s, 0): a depends on p - foot.
                    j[(2 + r, 4)] -= leg.da_dp[(r, 0)];
                }
            }
        }
        j
    }
    fn guard_count(&self, _: usize) -> usize {
        1
    }
    fn guard(&self, mode: usize, _: usize, x: &DVector<f64>) -> f64 {
        let (p, v, old) = Self::parts(x);
        if mode == 0 {
            self.tip(p).1
        } else {
            self.leg(p, v, old).force
        }
    }
    fn guard_gradient(&self, mode: usize, _: usize, x: &DVector<f64>) -> DVector<f64> {
        let (p, v, old) = Self::parts(x);
        if mode == 0 {
            let g = self.tip(p).2;
            DVector::from_vec(vec![g[0], g[1], 0.0, 0.0, 0.0])
        } else {
            let leg = self.leg(p, v, old);
            let (gp, gv) = (leg.df_dp, leg.df_dv);
            DVector::from_vec(vec![gp[0], gp[1], gv[0], gv[1], -gp[0]])
        }
    }
    fn reset(&self, mode: usize, _: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        if mode == 1 {
            return (0, x.clone());
        }
        let (a, l) = (self.wheel.half_angle, self.wheel.length);
        let phi = self.tip(Vector2::new(x[0], x[1])).0;
        let new_x = l * libm::sin(phi - 2.0 * a);
        let x_tip = x[0] - new_x;
        (1, DVector::from_vec(vec![new_x, x[1], x[2], x[3], -x_tip]))
    }
    fn reset_jacobian(&self, mode: usize, _: usize, x: &DVector<f64>) -> DMatrix<f64> {
        let mut j = DMatrix::identity(5, 5);
        if mode == 1 {
            return j;
        }
        let (a, l) = (self.wheel.half_angle, self.wheel.length);
        let p = Vector2::new(x[0], x[1]);
        let phi = self.tip(p).0;
        let r2 = p.norm_squared();
        let c = l * libm::cos(phi - 2.0 * a);
        let (dx_dx, dx_dy) = (c * p[1] / r2, -c * p[0] / r2);
        j[(0, 0)] = dx_dx;
        j[(0, 1)] = dx_dy;
        j[(4, 0)] = dx_dx - 1.0;
        j[(4, 1)] = dx_dy;
        j[(4, 4)] = 0.0;
        j
    }
}

/// The penalty wheel's return map on x = 0 (mode 0) from `x` (on it): the state one step
/// later (touchdown and release on the way), the time, and the map's 3×3 derivative in
/// (y, v_x, v_y), the flow's direction projected out. Newton on the end time from `guess`.
pub fn return_step(
    pw: &PenaltyWheel,
    x: &DVector<f64>,
    guess: f64,
    opts: &crate::hybrid::HybridOptions,
) -> Result<(DVector<f64>, f64, DMatrix<f64>)> {
    let mut t = guess;
    for _ in 0..40 {
        let s = crate::hybrid::hybrid_jacobian(pw, x, 0, 0.0, t, opts)?;
        let met = s.events.len();
        if met < 2 || s.mode != 0 {
            t *= 1.2;
            continue;
        }
        if met > 2 {
            t *= 0.85;
            continue;
        }
        let miss = s.x[0];
        if miss.abs() <= 1e-13 * pw.wheel.length {
            let f = pw.rhs(0, &s.x);
            let mut p = s.jacobian.clone();
            for c in 0..5 {
                let top = s.jacobian[(0, c)] / f[0];
                for r in 0..5 {
                    p[(r, c)] -= f[r] * top;
                }
            }
            return Ok((s.x, t, p.view((1, 1), (3, 3)).into_owned()));
        }
        let last = s.events.last().map_or(0.0, |e| e.t);
        t = (t - miss / s.x[2]).max(0.5 * (last + t));
    }
    Err(crate::error::FerroError::InvalidParameter {
        name: "stiffness",
        value: pw.stiffness,
        limit: "the penalty wheel did not return to x = 0 after one touchdown and release".into(),
    })
}

/// The largest eigenvalue's modulus of a square matrix, with its sign when it is real.
pub fn dominant(m: &DMatrix<f64>) -> f64 {
    let ev = m.complex_eigenvalues();
    let best = ev
        .iter()
        .max_by(|a, b| a.norm().total_cmp(&b.norm()))
        .copied()
        .unwrap_or_default();
    if best.im.abs() <= 1e-9 * best.norm() {
        best.re
    } else {
        best.norm()
    }
}

/// The penalty wheel's N-step multiplier at every horizon 1..=`horizon`: `warmup` steps from
/// the rigid orbit's state on x = 0 (onto the penalty wheel's own orbit), then one
/// `hybrid_jacobian` per step (RK4 at dt = 0.05/√k, events located, saltation), the one-step
/// maps multiplied (renormalised each step, the scale kept in logarithms); the N-step
/// derivative is the product's dominant eigenvalue (the others are the damped radial modes).
pub fn penalty_readings(
    pw: &PenaltyWheel,
    omega_on_section: f64,
    warmup: usize,
    horizon: usize,
) -> Result<Vec<Reading>> {
    pw.check()?;
    let opts = crate::hybrid::HybridOptions {
        dt: (0.05 / libm::sqrt(pw.stiffness)).min(1e-3),
        max_steps: u64::MAX / 2,
        ..Default::default()
    };
    let quick = crate::hybrid::HybridOptions {
        probe_rtol: 0.0,
        ..opts
    };
    let mut x = pw.rigid_start(omega_on_section);
    let mut guess = 2.0 * pw.wheel.half_angle / omega_on_section;
    for _ in 0..warmup {
        let (next, t, _) = return_step(pw, &x, guess, &quick)?;
        x = next;
        guess = t;
    }
    let (mut prod, mut log_scale) = (DMatrix::identity(3, 3), 0.0);
    let mut out = Vec::with_capacity(horizon);
    for n in 1..=horizon {
        let (next, t, m) = return_step(pw, &x, guess, &opts)?;
        prod = m * prod;
        let s = prod.amax();
        prod /= s;
        log_scale += libm::log(s);
        let d = dominant(&prod);
        let log_abs = log_scale + libm::log(d.abs());
        out.push(Reading::from_derivative(
            &pw.wheel,
            n,
            d.signum() * libm::exp(log_abs),
        ));
        x = next;
        guess = t;
    }
    Ok(out)
}
