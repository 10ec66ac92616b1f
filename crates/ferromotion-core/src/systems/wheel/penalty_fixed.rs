//! The `fixed` route on the penalty wheel: semi-implicit Euler through its steps, the contact
//! switches (touchdown, the old foot's release) taken at the first step end past their guard,
//! and the tangent the product of the step Jacobians and the touchdown's frame change, with no
//! time-of-switch term: what autodiff through a penalty simulator of the wheel computes.
//!
//! Read as the other routes are: from a state on x = 0 (mode 0) of the route's own orbit
//! (after [`super::table::PENALTY_WARMUP`] steps of it from the rigid orbit), J at its N-th
//! return to x = 0 (a last partial step of the same scheme ending there), the run's own rate
//! there (the last step's d step/dτ) projected out, and the N-step derivative the dominant eigenvalue of the 3×3 map in
//! (y, v_x, v_y).

use nalgebra::{DMatrix, DVector};

use super::multiplier::Reading;
use super::penalty::{dominant, PenaltyWheel};
use crate::error::{FerroError, Result};
use crate::hybrid::HybridSystem;

/// One semi-implicit Euler step in `mode` and its Jacobian.
fn step(pw: &PenaltyWheel, mode: usize, x: &DVector<f64>, h: f64) -> (DVector<f64>, DMatrix<f64>) {
    let f = pw.rhs(mode, x);
    let jf = pw.rhs_jacobian(mode, x);
    let mut out = x.clone();
    out[2] += h * f[2];
    out[3] += h * f[3];
    out[0] += h * out[2];
    out[1] += h * out[3];
    // v' = v + h a(x): rows 2, 3; p' = p + h v': rows 0, 1.
    let mut a = DMatrix::identity(5, 5);
    for r in 2..4 {
        for c in 0..5 {
            a[(r, c)] += h * jf[(r, c)];
        }
    }
    for r in 0..2 {
        for c in 0..5 {
            a[(r, c)] += h * a[(r + 2, c)];
        }
    }
    (out, a)
}

/// d step(x, τ)/dτ in mode 0: the scheme's own rate at the end of a step of length τ.
fn rate(pw: &PenaltyWheel, x: &DVector<f64>, tau: f64) -> DVector<f64> {
    let f = pw.rhs(0, x);
    let mut r = f.clone();
    r[0] = x[2] + 2.0 * tau * f[2];
    r[1] = x[3] + 2.0 * tau * f[3];
    r
}

fn section_map(f: &DVector<f64>, j: &DMatrix<f64>) -> DMatrix<f64> {
    let mut p = j.clone();
    for c in 0..5 {
        let top = j[(0, c)] / f[0];
        for r in 0..5 {
            p[(r, c)] -= f[r] * top;
        }
    }
    p.view((1, 1), (3, 3)).into_owned()
}

/// The partial step τ in (0, h] from x (mode 0, x[0] < 0) ending on x = 0, by bisection.
fn to_section(pw: &PenaltyWheel, x: &DVector<f64>, h: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, h);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if step(pw, 0, x, mid).0[0] < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// The fixed route's readings at horizons 1..=`horizon` at step `dt`, after `warmup` returns
/// from `x0` (on x = 0, mode 0).
pub fn penalty_fixed(
    pw: &PenaltyWheel,
    x0: &DVector<f64>,
    dt: f64,
    warmup: usize,
    horizon: usize,
) -> Result<Vec<Reading>> {
    Ok(penalty_fixed_run(pw, x0, dt, warmup, horizon)?.readings)
}

/// What [`penalty_fixed_run`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct FixedRun {
    /// The readings at horizons 1..=N.
    pub readings: Vec<Reading>,
    /// The state at the N-th return to x = 0.
    pub last: DVector<f64>,
    /// The N-step map's 3×3 derivative in (y, v_x, v_y) there (the tangent, projected).
    pub map: DMatrix<f64>,
}

/// [`penalty_fixed`], with the last return's state and map.
pub fn penalty_fixed_run(
    pw: &PenaltyWheel,
    x0: &DVector<f64>,
    dt: f64,
    warmup: usize,
    horizon: usize,
) -> Result<FixedRun> {
    pw.check()?;
    crate::error::positive("dt", dt)?;
    let (mut x, mut mode, mut jac) = (x0.clone(), 0usize, DMatrix::identity(5, 5));
    let mut out = Vec::with_capacity(horizon);
    let mut returns = 0usize;
    let limit = ((warmup + horizon + 1) as f64 * 2.0 / dt) as u64;
    for _ in 0..limit {
        let (mut next, a) = step(pw, mode, &x, dt);
        let mut next_jac = &a * &jac;
        if mode == 0 && x[0] < 0.0 && next[0] >= 0.0 {
            let tau = to_section(pw, &x, dt);
            let (on, a_tau) = step(pw, 0, &x, tau);
            returns += 1;
            if returns == warmup {
                // Start measuring on the section of the route's own orbit.
                (x, mode, jac) = (on, 0, DMatrix::identity(5, 5));
                continue;
            }
            if returns > warmup {
                let m = section_map(&rate(pw, &x, tau), &(a_tau * &jac));
                let n = returns - warmup;
                out.push(Reading::from_derivative(&pw.wheel, n, dominant(&m)));
                if n == horizon {
                    return Ok(FixedRun {
                        readings: out,
                        last: on,
                        map: m,
                    });
                }
            }
        }
        if pw.guard(mode, 0, &next) <= 0.0 {
            let dr = pw.reset_jacobian(mode, 0, &next);
            (mode, next) = pw.reset(mode, 0, &next);
            next_jac = dr * next_jac;
        }
        if !next.iter().all(|v| v.is_finite()) {
            break;
        }
        (x, jac) = (next, next_jac);
    }
    Err(FerroError::InvalidParameter {
        name: "dt",
        value: dt,
        limit: format!(
            "the fixed route on the penalty wheel did not return to x = 0 {} times",
            warmup + horizon
        ),
    })
}
