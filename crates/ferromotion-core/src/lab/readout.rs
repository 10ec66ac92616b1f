//! The lab's readouts, one definition each (docs/model.md §4), computed from the routes.
//!
//! - forward error: |dy| (m), with |dv| (m/s) beside it, against `exact`. The lab's headline
//!   is |dy| in metres at every stiffness; `forward` (the larger number, unit in
//!   `forward_unit`) is kept for the Python package's sweep columns only.
//! - gradient error: `max_ij |J - J_exact| / max_ij |J_exact|` (relative, no unit).
//! - sign line: the sign of dv(T)/dy0 against `exact`'s, in three states ([`Sign`]): wrong,
//!   right, and right but at least [`FAR_OFF`] times the exact Jacobian's size away from it.
//! - divergence exponent: least-squares slope of log(gradient error) on log(k) over
//!   k = 10^4, 10^4.5, ..., 10^8 at one dt, with R².
//! - dt refinement: gradient error at dt/10 and dt/100 over that at the base dt; the readout
//!   carries the three steps and their divisors, so no caller divides.
//! - blame split: integrator share `max|J_fixed - J_flow|`, contact-model share
//!   `max|J_flow - J_exact|` (absolute), and the noise floor of `flow` itself.

use crate::error::{positive, FerroError, Result};
pub use crate::numeric::fit::{fit_loglog, Fit};
use crate::physics::contact::penalty::{flow, flow_detail, FlowOptions};
use crate::physics::contact::rigid::{exact, ExactOptions};
use crate::physics::integrate::fixed::{fixed, FixedOptions};
use crate::physics::model::Drop;
use crate::physics::state::{max_abs, to_row_major, RouteResult};
use serde::Serialize;

/// How far one route's answer lands from the rigid reference.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Errors {
    /// |y - y_exact| at T, m.
    pub dy: f64,
    /// |v - v_exact| at T, m/s.
    pub dv: f64,
    /// The larger of the two numbers (its unit is `forward_unit`).
    pub forward: f64,
    /// "m" when |dy| is the larger number, "m/s" otherwise.
    pub forward_unit: &'static str,
    /// max_ij |J - J_exact| / max_ij |J_exact|.
    pub gradient: f64,
    /// The route's dv(T)/dy0.
    pub dv_dy0: f64,
    /// `exact`'s dv(T)/dy0.
    pub dv_dy0_exact: f64,
    /// Whether the two have the same sign.
    pub right_sign: bool,
    /// The sign line's verdict: the sign and how far off the gradient is.
    pub sign: Sign,
}

/// Relative gradient error at or above which a right-signed derivative is called far off:
/// the error is then at least as large as the exact Jacobian's largest entry, so the sign
/// agreeing says nothing (at k = 1e8 N/m and dt = 1e-4 s the fixed route is right-signed
/// with a gradient error of about 600: its step is past the explicit integrator's stability
/// limit).
pub const FAR_OFF: f64 = 1.0;

/// The sign line's three states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sign {
    /// dv(T)/dy0 has the exact answer's sign and the gradient error is below [`FAR_OFF`].
    Right,
    /// dv(T)/dy0 has the wrong sign (or is not a number).
    Wrong,
    /// The sign agrees, but the gradient error is at least [`FAR_OFF`]: right by accident.
    RightFarOff,
}

impl Sign {
    /// The state's name as it serialises: `right`, `wrong` or `right_far_off`.
    pub fn as_str(self) -> &'static str {
        match self {
            Sign::Right => "right",
            Sign::Wrong => "wrong",
            Sign::RightFarOff => "right_far_off",
        }
    }

    /// The verdict for a derivative `route` against `exact` with relative gradient error
    /// `gradient`. A NaN error counts as far off; a NaN derivative as wrong.
    pub fn of(route: f64, exact: f64, gradient: f64) -> Sign {
        if route.signum() != exact.signum() || route.is_nan() {
            Sign::Wrong
        } else if gradient < FAR_OFF {
            Sign::Right
        } else {
            Sign::RightFarOff
        }
    }
}

/// Compare a route's answer with the rigid reference's.
pub fn compare(route: &RouteResult, reference: &RouteResult) -> Errors {
    let dy = (route.state[0] - reference.state[0]).abs();
    let dv = (route.state[1] - reference.state[1]).abs();
    let (forward, forward_unit) = if dy >= dv { (dy, "m") } else { (dv, "m/s") };
    let gradient = max_abs(&(route.jacobian - reference.jacobian)) / max_abs(&reference.jacobian);
    let (a, b) = (route.jacobian[(1, 0)], reference.jacobian[(1, 0)]);
    Errors {
        dy,
        dv,
        forward,
        forward_unit,
        gradient,
        dv_dy0: a,
        dv_dy0_exact: b,
        right_sign: a.signum() == b.signum(),
        sign: Sign::of(a, b, gradient),
    }
}

/// The nine stiffnesses of the divergence exponent: 10^4, 10^4.5, ..., 10^8 N/m.
pub fn exponent_stiffnesses() -> [f64; 9] {
    std::array::from_fn(|i| libm::pow(10.0, 4.0 + 0.5 * i as f64))
}

/// `n` log-spaced stiffnesses per decade from 10^lo to 10^hi, inclusive.
pub fn log_grid(lo: f64, hi: f64, per_decade: u32) -> Result<Vec<f64>> {
    let lo = crate::error::finite("k_min exponent", lo)?;
    let hi = crate::error::finite("k_max exponent", hi)?;
    if per_decade == 0 {
        return Err(FerroError::InvalidParameter {
            name: "per_decade",
            value: 0.0,
            limit: "must be >= 1".into(),
        });
    }
    if hi < lo {
        return Err(FerroError::InvalidParameter {
            name: "k_max",
            value: libm::pow(10.0, hi),
            limit: format!("must be >= k_min = {:e}", libm::pow(10.0, lo)),
        });
    }
    let n = ((hi - lo) * per_decade as f64).round() as usize;
    Ok((0..=n)
        .map(|i| libm::pow(10.0, lo + i as f64 / per_decade as f64))
        .collect())
}

/// The step at "matched resolution": dt = T/N with N = round(T·sqrt(k/m)/0.1), so that
/// omega·dt is close to 0.1.
pub fn matched_dt(drop: &Drop, k: f64) -> Result<f64> {
    positive("k", k)?;
    let n = (drop.t_final * (k / drop.mass).sqrt() / 0.1)
        .round()
        .max(1.0);
    Ok(drop.t_final / n)
}

/// Gradient error of the `fixed` route at (k, dt).
pub fn fixed_gradient_error(drop: &Drop, k: f64, dt: f64, reference: &RouteResult) -> Result<f64> {
    Ok(compare(&fixed(drop, k, dt, &FixedOptions::default())?, reference).gradient)
}

/// The divergence exponent of the fixed route at step `dt` over [`exponent_stiffnesses`].
pub fn divergence_exponent(drop: &Drop, dt: f64) -> Result<Fit> {
    let reference = exact(drop, &ExactOptions::default())?;
    let ks = exponent_stiffnesses();
    let errs = ks
        .iter()
        .map(|&k| fixed_gradient_error(drop, k, dt, &reference))
        .collect::<Result<Vec<_>>>()?;
    fit_loglog(&ks, &errs)
}

/// dt refinement at stiffness k: the gradient errors at base_dt, base_dt/10, base_dt/100.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refinement {
    /// The base step, s.
    pub base_dt: f64,
    /// Gradient error at base_dt, base_dt/10, base_dt/100.
    pub errors: [f64; 3],
    /// errors[1] / errors[0].
    pub ratio_10: f64,
    /// errors[2] / errors[0] (always against the base step, never a refined one).
    pub ratio_100: f64,
    /// The divisors of the three steps: 1, 10, 100.
    pub divisors: [u32; 3],
    /// The three steps, s: base_dt, base_dt/10, base_dt/100 (the lab's dt buttons).
    pub steps: [f64; 3],
    /// The sign line at each of the three steps: whether the refinement was made where the
    /// sign is wrong is read here, not from whichever step the workbench shows.
    pub signs: [Sign; 3],
}

/// The divisors of the dt-refinement steps (the lab's three dt buttons).
pub const DT_DIVISORS: [u32; 3] = [1, 10, 100];

/// The refinement steps from `base_dt`: base_dt / d for each d in [`DT_DIVISORS`], s.
pub fn refinement_steps(base_dt: f64) -> [f64; 3] {
    DT_DIVISORS.map(|d| base_dt / d as f64)
}

/// The dt-refinement readout at stiffness `k` from `base_dt`.
pub fn dt_refinement(drop: &Drop, k: f64, base_dt: f64) -> Result<Refinement> {
    let reference = exact(drop, &ExactOptions::default())?;
    let [a, b, c] = refinement_steps(base_dt);
    let at = |dt: f64| -> Result<Errors> {
        Ok(compare(
            &fixed(drop, k, dt, &FixedOptions::default())?,
            &reference,
        ))
    };
    Ok(Refinement::from_errors(base_dt, [at(a)?, at(b)?, at(c)?]))
}

impl Refinement {
    /// The readout from the route's errors at base_dt, /10 and /100.
    pub fn from_errors(base_dt: f64, compared: [Errors; 3]) -> Refinement {
        let errors = compared.map(|e| e.gradient);
        Refinement {
            base_dt,
            errors,
            ratio_10: errors[1] / errors[0],
            ratio_100: errors[2] / errors[0],
            divisors: DT_DIVISORS,
            steps: refinement_steps(base_dt),
            signs: compared.map(|e| e.sign),
        }
    }
}

/// The blame split of the fixed route's Jacobian error at (k, dt).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Blame {
    /// max_ij |J_fixed - J_flow|: what the fixed-step integrator and its tangent add.
    pub integrator_share: f64,
    /// max_ij |J_flow - J_exact|: what the contact model itself differs by.
    pub contact_share: f64,
    /// integrator_share / contact_share.
    pub ratio: f64,
    /// `flow`'s own bound on max_ij |J_flow - J_true| (round-off of its matrix product
    /// and of its switch times, [`crate::physics::contact::penalty::FlowDetail`]). A share
    /// below it cannot be resolved.
    pub noise_floor: f64,
    /// The integrator share is below the noise floor.
    pub integrator_below_floor: bool,
    /// The contact share is below the noise floor.
    pub contact_below_floor: bool,
}

/// The blame split at (k, dt) against `flow`, which shares no machinery with the
/// fixed-step integrator.
pub fn blame(drop: &Drop, k: f64, dt: f64) -> Result<Blame> {
    let fixed_route = fixed(drop, k, dt, &FixedOptions::default())?;
    blame_of(drop, k, &fixed_route)
}

/// The blame split of an already computed fixed-route answer at stiffness `k`.
pub fn blame_of(drop: &Drop, k: f64, fixed_route: &RouteResult) -> Result<Blame> {
    let reference = exact(drop, &ExactOptions::default())?;
    let detail = flow_detail(drop, k, &FlowOptions::default())?;
    let tight = detail.result;
    let integrator_share = max_abs(&(fixed_route.jacobian - tight.jacobian));
    let contact_share = max_abs(&(tight.jacobian - reference.jacobian));
    let noise_floor = detail.error_bound;
    // An infinite floor would read every share "< floor" and print "inf": say why instead.
    if !noise_floor.is_finite() {
        return Err(FerroError::NonFinite {
            what: "blame noise floor (the flow's error bound)",
            detail: format!(
                "k/m = {:e} 1/s² at k = {k:e} N/m: too stiff for the flow in f64",
                k / drop.mass
            ),
        });
    }
    Ok(Blame {
        integrator_share,
        contact_share,
        ratio: integrator_share / contact_share,
        noise_floor,
        integrator_below_floor: integrator_share < noise_floor,
        contact_below_floor: contact_share < noise_floor,
    })
}

/// Fitted exponent of the contact-model share on k = 10^4 .. 10^8 (no dt involved).
pub fn contact_share_exponent(drop: &Drop) -> Result<Fit> {
    let reference = exact(drop, &ExactOptions::default())?;
    let ks = exponent_stiffnesses();
    let shares = ks
        .iter()
        .map(|&k| {
            Ok(max_abs(
                &(flow(drop, k, &FlowOptions::default())?.jacobian - reference.jacobian),
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    fit_loglog(&ks, &shares)
}

/// A route's answer flattened for the bindings: state and row-major Jacobian.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flat {
    /// [y (m), v (m/s)] at T.
    pub state: [f64; 2],
    /// Row-major [dy/dy0, dy/dv0, dv/dy0, dv/dv0].
    pub jacobian: [f64; 4],
}

impl From<&RouteResult> for Flat {
    fn from(r: &RouteResult) -> Flat {
        Flat {
            state: [r.state[0], r.state[1]],
            jacobian: to_row_major(&r.jacobian),
        }
    }
}
