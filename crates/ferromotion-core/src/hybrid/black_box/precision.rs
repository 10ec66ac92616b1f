//! A step function's arithmetic, declared: what the black-box driver's checks scale by.
//!
//! The driver differentiates by central differences, and a difference quotient with probe
//! `e` carries the step's round-off divided by `e`: relative noise of about `u/e` for a step
//! that rounds its state to a relative `u` (2^-53 in float64, 2^-24 in float32). The driver's
//! constants were set for float64 (probe 1e-6: noise ~1e-10, far below every threshold). A
//! float32 step (MuJoCo Warp's) at that probe carries noise ~6e-2: no check can pass. So a
//! step function declares its precision [`StepOptions::precision`] (the unit round-off u of
//! its arithmetic; default [`FLOAT64`]) and the driver scales three things by it:
//!
//! - **the probe**: `eps·(u/FLOAT64)^(1/3)`. A central difference's truncation error falls
//!   as e² and its round-off grows as u/e; their balance moves as u^(1/3), and `eps` is the
//!   float64 probe (1e-6 by default, about 8.1e-4 in float32). Exactly `eps` in float64.
//! - **the unguarded-switch check**: its own probe and floor. A step Jacobian's jump must
//!   exceed max([`SWITCH_FLOOR`], [`SWITCH_NOISE`]·u/e) of max(1, max|D|) (the noise two
//!   neighbouring difference quotients carry, with room; 1e-6 in float64 at any probe above
//!   7e-9). In float64 its probe is `eps`; coarser, it is the probe whose floor is
//!   [`SWITCH_RESOLVE`] (7.6e-5 in float32, against the Jacobian's 8.1e-4): the check probes
//!   single steps of the nominal run just after a switch, and a probe as large as the
//!   Jacobian's straddles the switch there (measured: MuJoCo Warp's cube, a corner's
//!   release, 124 N of force argument per probe against 45 per step), while a law change
//!   of consequence (a contact's stiffness k·dt entering or leaving D) is a jump of order
//!   max|D|, far above 5%.
//! - **the probe-tolerance check**: J(e) and J(e/2) must agree to max(`probe_rtol`,
//!   [`PROBE_NOISE`]·u/e) of max(1, max|J|) (the round-off of a whole event-located run,
//!   carried through the map and divided by e/2; 1.1e-7 in float64 at e = 1e-6, below the
//!   default 1e-6). A check switched off (`probe_rtol` <= 0) stays off.
//!
//! - **the hidden-state measurement's threshold**: [`split_rtol`].
//!
//! A float64 step's answers are therefore the same bits as before the precision existed (at
//! the default probe and tolerance). What is used is reported beside the answer
//! ([`Resolution`]); if the tolerance the noise allows is coarser than [`COARSEST`], the
//! precision cannot resolve a derivative and the driver refuses before it runs anything.

use super::system::{StepOptions, FLOAT32, FLOAT64, SPLIT_RTOL, SWITCH_FLOOR};
use crate::error::{FerroError, Result};
use serde::{Deserialize, Serialize};

/// Roundings' worth of noise a step Jacobian's jump must exceed (in units of u/e): two
/// neighbouring difference quotients, each of two rounded outputs and a rounded input, each
/// a few roundings of a step's arithmetic, with a factor of 4 of room.
pub const SWITCH_NOISE: f64 = 64.0;
/// Roundings' worth of noise J(e) and J(e/2) may differ by (in units of u/e): the round-off
/// of a run of many steps, carried to its end by the map (measured on MuJoCo Warp's drop and
/// cube: up to ~100 u/e; `docs/engines.md`), divided by e/2.
pub const PROBE_NOISE: f64 = 100.0;
/// The unguarded-switch check's floor, relative to max(1, max|D|), for a precision coarser
/// than float64: its probe is chosen to make the noise this (module docs).
pub const SWITCH_RESOLVE: f64 = 0.05;
/// Roundings' worth of noise the hidden-state measurement's split residual may hold (in
/// units of u, relative to max(1, max|x0|)): two runs of a few roundings each, with room.
pub const SPLIT_NOISE: f64 = 64.0;
/// A relative tolerance coarser than this is no derivative: the precision is refused.
pub const COARSEST: f64 = 0.1;

/// The probe, the tolerances and the precision an answer was measured with.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Resolution {
    /// The step's declared unit round-off.
    pub precision: f64,
    /// The central-difference probe used (relative: `eps·max(|x_j|, 1)`).
    pub eps: f64,
    /// J(eps) and J(eps/2) had to agree to this (relative to max(1, max|J|); 0: not checked).
    pub probe_rtol: f64,
    /// The unguarded-switch check's probe (relative, as `eps`).
    pub switch_eps: f64,
    /// The unguarded-switch check's floor (relative to max(1, max|D|)).
    pub switch_floor: f64,
}

/// The checks on `precision` and the resolution it gives `opts` (see the module docs).
pub fn resolve(opts: &StepOptions) -> Result<Resolution> {
    let u = opts.precision;
    if !(u.is_finite() && (FLOAT64..=1e-2).contains(&u)) {
        return Err(FerroError::InvalidParameter {
            name: "precision",
            value: u,
            limit: format!(
                "the step's unit round-off: from {FLOAT64:e} (float64) to 1e-2 ({FLOAT32:e} for float32)"
            ),
        });
    }
    let eps = if u == FLOAT64 {
        opts.eps
    } else {
        opts.eps * libm::cbrt(u / FLOAT64)
    };
    let noise = u / eps;
    let probe_rtol = if opts.probe_rtol > 0.0 {
        opts.probe_rtol.max(PROBE_NOISE * noise)
    } else {
        opts.probe_rtol
    };
    let (switch_eps, switch_floor) = switch_check(u, eps);
    if probe_rtol > COARSEST || switch_floor > COARSEST {
        return Err(FerroError::InvalidParameter {
            name: "precision",
            value: u,
            limit: format!(
                "too coarse to resolve a derivative at the probe eps = {eps:e}: its round-off allows J(eps) \
                 and J(eps/2) to differ by {:.3e} and a step Jacobian to jump by {switch_floor:.3e} (relative), \
                 above {COARSEST}; use a finer arithmetic or a larger eps",
                PROBE_NOISE * noise
            ),
        });
    }
    Ok(Resolution {
        precision: u,
        eps,
        probe_rtol,
        switch_eps,
        switch_floor,
    })
}

/// The split residual at or below which a step of unit round-off `u` passes the
/// hidden-state measurement outright: max([`SPLIT_RTOL`], [`SPLIT_NOISE`]·u) (1e-9 in
/// float64, 3.8e-6 in float32, where a step's own rounding leaves ~1e-7 that does not fall
/// when h halves).
pub fn split_rtol(u: f64) -> f64 {
    SPLIT_RTOL.max(SPLIT_NOISE * u)
}

/// The unguarded-switch check's probe and floor for a step of unit round-off `u` whose
/// Jacobian is probed at `eps` (module docs): `eps` and max(1e-6, 64·u/eps) in float64.
pub fn switch_check(u: f64, eps: f64) -> (f64, f64) {
    let e = if u == FLOAT64 {
        eps
    } else {
        eps.min(SWITCH_NOISE * u / SWITCH_RESOLVE)
    };
    (e, SWITCH_FLOOR.max(SWITCH_NOISE * u / e))
}

/// `opts` with the probe and the probe tolerance of `r`, and the time probe scaled as the
/// probe is (f- and f+ of the saltation estimate are differences in time): what every row
/// and check reads. The same options in float64.
pub fn resolved(opts: &StepOptions, r: &Resolution) -> StepOptions {
    if r.precision == FLOAT64 {
        return StepOptions {
            probe_rtol: r.probe_rtol,
            ..*opts
        };
    }
    StepOptions {
        eps: r.eps,
        probe_rtol: r.probe_rtol,
        time_eps: (opts.time_eps * r.eps / opts.eps).min(0.25),
        ..*opts
    }
}
