//! The rimless wheel's return map, measured: its N-step derivative read off `hybrid_jacobian`
//! two ways, beside the closed form c^(2N).
//!
//! **Where it is read.** On the mid-stance section Σ = {θ = [`SECTION_THETA`]} (the stance
//! spoke normal to the slope), crossed once per step away from the impact. The return map's
//! derivative at the fixed point is the same number on every section that crosses the orbit
//! (the maps on two sections are conjugate), so its Floquet multiplier is c² there too. A
//! perturbation δω of a state on Σ is carried to the next crossing of Σ; the flow's own
//! direction is projected out: on a section {θ = const}, `dω'/dω = J[1,1] - (f_ω/f_θ)·J[0,1]`,
//! with J = dx(t)/dx(0) at the crossing and f the flow there.
//!
//! **Two readings of the N-step derivative.**
//! - *Chained* ([`chained`]): one `hybrid_jacobian` per step, from each crossing of Σ to the
//!   next (one impact), its one-step derivative p_i read as above, and the N-step derivative
//!   the product p_1·…·p_N, multiplied in logarithms. Each p_i is O(1) and right to the
//!   integrator's accuracy (~1e-12 relative), so the product is right to ~N·1e-12 *relative*
//!   and its N-th root to ~1e-12 at any horizon.
//! - *Direct* ([`direct`]): one `hybrid_jacobian` over all N impacts, read once. Its J keeps
//!   the eigenvalue 1 along the flow, so its entries stay O(1) while the derivative on the
//!   section, c^(2N), shrinks: it is a difference of O(1) entries, and J's *absolute* error
//!   (~1e-12) swamps it once c^(2N) falls to that size (N ≈ 70 at half_angle 0.3). The
//!   N-th root hides the loss until then.
//!
//! Each crossing is found by Newton's method on the end time t1 of `hybrid_jacobian`
//! (θ(t1) = θ_Σ, to 1e-13 rad); nothing here uses the closed form.

use nalgebra::{DMatrix, DVector};

use super::RimlessWheel;
use crate::error::{FerroError, Result};
use crate::hybrid::{hybrid_jacobian, HybridOptions, HybridSystem};

/// The section on which the return map is read: θ = 0, the stance spoke normal to the slope.
pub const SECTION_THETA: f64 = 0.0;

/// A crossing of the section reached from a state on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossing {
    /// Time from the start, s.
    pub t: f64,
    /// The state at the crossing.
    pub x: DVector<f64>,
    /// dx(t)/dx(0) from `hybrid_jacobian`.
    pub jacobian: DMatrix<f64>,
    /// Impacts on the way.
    pub impacts: usize,
}

impl Crossing {
    /// The derivative of the map carried along the flow between two sections {θ = const}:
    /// dω(t)/dω(0) with the flow's direction at x(t) projected out.
    pub fn section_derivative(&self, w: &RimlessWheel) -> f64 {
        let f = w.rhs(0, &self.x);
        let j = &self.jacobian;
        j[(1, 1)] - f[1] / f[0] * j[(0, 1)]
    }
}

/// One horizon's reading: the N-step derivative and its per-step multiplier.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Reading {
    /// Impacts N.
    pub horizon: usize,
    /// The N-step return map's derivative dω_N/dω_0 on the section.
    pub derivative: f64,
    /// Its signed N-th root, sign(d)·|d|^(1/N): the per-step multiplier.
    pub per_step: f64,
    /// The closed form's N-step derivative, c^(2N).
    pub closed_form: f64,
}

impl Reading {
    fn new(w: &RimlessWheel, horizon: usize, sign: f64, log_abs: f64) -> Reading {
        Reading {
            horizon,
            derivative: sign * libm::exp(log_abs),
            per_step: sign * libm::exp(log_abs / horizon as f64),
            closed_form: libm::pow(w.multiplier(), horizon as f64),
        }
    }

    /// A reading from an N-step derivative d (signed root).
    pub fn from_derivative(w: &RimlessWheel, horizon: usize, d: f64) -> Reading {
        let sign = if d < 0.0 { -1.0 } else { 1.0 };
        Reading::new(w, horizon, sign, libm::log(d.abs()))
    }

    /// |per_step - c²|.
    pub fn error(&self) -> f64 {
        (self.per_step - libm::pow(self.closed_form, 1.0 / self.horizon as f64)).abs()
    }
}

/// Run `hybrid_jacobian` from `x` (on the section, or anywhere in stance) to the time its
/// `impacts`-th impact is followed by a crossing of Σ, found by Newton's method from `guess`
/// (s). Refused if no such time is found in 30 iterations.
pub fn cross(
    w: &RimlessWheel,
    x: &DVector<f64>,
    impacts: usize,
    guess: f64,
    opts: &HybridOptions,
) -> Result<Crossing> {
    let mut t = guess;
    for _ in 0..30 {
        let s = hybrid_jacobian(w, x, 0, 0.0, t, opts)?;
        let met = s.events.len();
        let (theta, omega) = (s.x[0], s.x[1]);
        if met < impacts {
            t *= 1.5;
            continue;
        }
        if met > impacts {
            t *= 0.75;
            continue;
        }
        let miss = theta - SECTION_THETA;
        if miss.abs() <= 1e-13 {
            return Ok(Crossing {
                t,
                x: s.x,
                jacobian: s.jacobian,
                impacts,
            });
        }
        // Newton on θ(t) = θ_Σ; kept past the last impact.
        let last = s.events.last().map_or(0.0, |e| e.t);
        t = (t - miss / omega).max(0.5 * (last + t));
    }
    Err(FerroError::InvalidParameter {
        name: "x0",
        value: x[0],
        limit: format!(
            "the wheel must roll on through {impacts} impacts to the section theta = {SECTION_THETA} (no such crossing found from t = {guess} s)"
        ),
    })
}

/// The chained reading at every horizon 1..=`horizon` from the post-impact state `x0`
/// (θ = -half_angle, ω > 0): the wheel is run to Σ, then one `hybrid_jacobian` per step;
/// also the start on Σ and the crossing times (for [`direct`]). Progress: `each(n)` after
/// step n.
pub fn chained(
    w: &RimlessWheel,
    x0: &DVector<f64>,
    horizon: usize,
    opts: &HybridOptions,
    each: &mut dyn FnMut(usize),
) -> Result<Chain> {
    let omega = x0[1].abs().max(1e-3);
    let start = cross(w, x0, 0, (SECTION_THETA - x0[0]).abs() / omega, opts)?;
    let mut x = start.x.clone();
    let mut guess = 2.0 * w.half_angle / omega;
    let (mut sign, mut log_abs, mut t) = (1.0, 0.0, 0.0);
    let mut readings = Vec::with_capacity(horizon);
    let mut times = Vec::with_capacity(horizon);
    for n in 1..=horizon {
        let c = cross(w, &x, 1, guess, opts)?;
        let p = c.section_derivative(w);
        if p < 0.0 {
            sign = -sign;
        }
        log_abs += libm::log(p.abs());
        t += c.t;
        times.push(t);
        readings.push(Reading::new(w, n, sign, log_abs));
        guess = c.t;
        x = c.x;
        each(n);
    }
    Ok(Chain {
        start: start.x,
        times,
        readings,
    })
}

/// What [`chained`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// The state on Σ the steps start from.
    pub start: DVector<f64>,
    /// The time of the n-th return to Σ from `start`, s (index n - 1).
    pub times: Vec<f64>,
    /// The chained reading at horizons 1, 2, ….
    pub readings: Vec<Reading>,
}

/// The direct reading at horizon N: one `hybrid_jacobian` from `start` (on Σ) over N impacts
/// to the N-th return to Σ, near `t_guess` (the chain's time: Newton refines it).
pub fn direct(
    w: &RimlessWheel,
    start: &DVector<f64>,
    horizon: usize,
    t_guess: f64,
    opts: &HybridOptions,
) -> Result<Reading> {
    let c = cross(w, start, horizon, t_guess, opts)?;
    Ok(Reading::from_derivative(
        w,
        horizon,
        c.section_derivative(w),
    ))
}

/// Both readings at each of `horizons`, beside the closed form.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Measured {
    /// Impacts N.
    pub horizon: usize,
    /// c^(2N).
    pub closed_form: f64,
    /// The chained reading (one `hybrid_jacobian` per step).
    pub chained: Reading,
    /// The direct reading (one `hybrid_jacobian` over N impacts), when asked for.
    pub direct: Option<Reading>,
}

/// The return map's N-step derivative at each of `horizons` (1 to [`MAX_HORIZON`] impacts)
/// from the fixed point: chained always, direct when `with_direct`. Progress: `each(done,
/// total)` in steps of work.
pub fn measure(
    w: &RimlessWheel,
    horizons: &[usize],
    with_direct: bool,
    opts: &HybridOptions,
    each: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Measured>> {
    w.validate()?;
    let top = match horizons.iter().copied().max() {
        Some(n) if n <= MAX_HORIZON && !horizons.contains(&0) => n,
        _ => {
            return Err(FerroError::InvalidParameter {
                name: "horizons",
                value: horizons.iter().copied().max().unwrap_or(0) as f64,
                limit: format!("one or more horizons, each 1 to {MAX_HORIZON} impacts"),
            })
        }
    };
    let direct_work: usize = if with_direct {
        horizons.iter().sum()
    } else {
        0
    };
    let total = top + direct_work;
    let x0 = DVector::from_row_slice(&w.fixed_point());
    let chain = chained(w, &x0, top, opts, &mut |n| each(n, total))?;
    let mut done = top;
    let mut out = Vec::with_capacity(horizons.len());
    for &n in horizons {
        let direct = if with_direct {
            let r = direct(w, &chain.start, n, chain.times[n - 1], opts)?;
            done += n;
            each(done, total);
            Some(r)
        } else {
            None
        };
        out.push(Measured {
            horizon: n,
            closed_form: libm::pow(w.multiplier(), n as f64),
            chained: chain.readings[n - 1],
            direct,
        });
    }
    Ok(out)
}

/// The longest horizon [`measure`] takes, impacts.
pub const MAX_HORIZON: usize = 2000;
