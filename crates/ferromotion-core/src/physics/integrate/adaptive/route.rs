//! The `tolerance` route on Dormand–Prince 5(4): its options, their validation and the
//! Jacobian by Richardson-combined central differences or forward sensitivities.

use super::rollout::{forward_needs_events, Dopri5};
use super::step::Stats;
use super::*;

/// How the `tolerance` route gets its Jacobian.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JacobianMethod {
    /// Central differences of whole rollouts at two probe sizes, Richardson-combined
    /// (8 rollouts besides the nominal one).
    #[default]
    Richardson,
    /// Forward sensitivities along one event-located rollout (needs `events`).
    Forward,
}

/// Options of the `tolerance` route.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToleranceOptions {
    /// Relative tolerance of each rollout.
    pub rtol: f64,
    /// Absolute tolerance; `None` means rtol·1e-2.
    pub atol: Option<f64>,
    /// Stop each rollout at the contact switches.
    pub events: bool,
    /// Larger probe size (m, m/s); the smaller is eps/2.
    pub eps: f64,
    /// Cap on steps per rollout.
    pub max_steps: u64,
    /// Smallest step the controller may ask for, s (0: no floor); below it the rollout
    /// is refused with `StepTooSmall`.
    pub min_step: f64,
    /// Richardson central differences (8 rollouts) or forward sensitivities (1 rollout).
    pub jacobian: JacobianMethod,
}

impl Default for ToleranceOptions {
    fn default() -> Self {
        ToleranceOptions {
            rtol: super::DEFAULT_RTOL,
            atol: None,
            events: false,
            eps: 1e-6,
            max_steps: super::DEFAULT_MAX_STEPS,
            min_step: 0.0,
            jacobian: JacobianMethod::Richardson,
        }
    }
}

/// The tightest relative tolerance the adaptive routes take: below it the step size
/// underflows mid-rollout on the drop (rtol = 1e-20 does at t = 0.45 s).
pub const RTOL_MIN: f64 = 1e-14;

impl ToleranceOptions {
    /// The integrator these options configure, validated.
    pub fn integrator(&self) -> Result<Dopri5> {
        let rtol = positive("rtol", self.rtol)?;
        // A relative tolerance of 1 or more controls nothing: the step size then wanders
        // (at rtol = 77 one rollout takes millions of steps). One below RTOL_MIN asks for
        // more than a double resolves: the step underflows mid-rollout. Refuse both.
        if !(RTOL_MIN..1.0).contains(&rtol) {
            return Err(FerroError::InvalidParameter {
                name: "rtol",
                value: rtol,
                limit: format!(
                    "must be at least {RTOL_MIN:e} and below 1 (a tighter rtol asks for more \
                     digits than a double holds: the step size underflows)"
                ),
            });
        }
        let atol = match self.atol {
            Some(a) => positive("atol", a)?,
            None => rtol * 1e-2,
        };
        positive("eps", self.eps)?;
        if !(self.min_step.is_finite() && self.min_step >= 0.0) {
            return Err(FerroError::InvalidParameter {
                name: "min_step",
                value: self.min_step,
                limit: "must be finite and >= 0 (0: no floor)".into(),
            });
        }
        // Refused here, before any rollout, so that a workbench or a sweep set to it is
        // refused when it is set, not at its first readout.
        if self.jacobian == JacobianMethod::Forward && !self.events {
            return Err(forward_needs_events());
        }
        Ok(Dopri5 {
            rtol,
            atol,
            events: self.events,
            max_steps: self.max_steps,
            min_step: self.min_step,
        })
    }
}

/// Fraction of max|J| beyond which the two probe sizes are said to disagree.
pub const PROBE_DEPENDENCE: f64 = 1e-3;

/// The `tolerance` route: the penalty drop on Dormand–Prince 5(4). With
/// [`JacobianMethod::Forward`], J from forward sensitivities of one event-located rollout
/// ([`Dopri5::rollout_with_tangent`]). With [`JacobianMethod::Richardson`], J by central
/// differences of whole rollouts at probes eps and eps/2, combined by Richardson
/// extrapolation `(4·D(eps/2) - D(eps))/3` (8 rollouts), flagged probe-dependent when
/// `max|D(eps) - D(eps/2)| > 1e-3·max|J|`.
pub fn tolerance(drop: &Drop, k: f64, opts: &ToleranceOptions) -> Result<RouteResult> {
    drop.validate()?;
    let law = drop.penalty(k)?;
    let dp = opts.integrator()?;
    let x0 = drop.x0();
    if opts.jacobian == JacobianMethod::Forward {
        let (state, jac, stats) = dp.rollout_with_tangent(&law, drop.gravity, x0, drop.t_final)?;
        check_finite("tolerance-route state", &state, &jac)?;
        return Ok(RouteResult::new(
            state,
            jac,
            Cost {
                steps: stats.accepted_steps,
                rejected_steps: stats.rejected_steps,
                force_evals: stats.num_eval,
                state_force_evals: 0,
                rollouts: 1,
            },
        ));
    }
    let (state, nominal) = dp.rollout(&law, drop.gravity, x0, drop.t_final)?;
    let mut probes = Stats::default();
    let mut diff = |eps: f64| -> Result<Jacobian> {
        let map = |x: &State| {
            let (xt, s) = dp.rollout(&law, drop.gravity, *x, drop.t_final)?;
            probes.num_eval += s.num_eval;
            probes.accepted_steps += s.accepted_steps;
            probes.rejected_steps += s.rejected_steps;
            Ok(xt)
        };
        fd::central_jacobian(map, &x0, fd::Probe::Absolute(eps))
    };
    let d_big = diff(opts.eps)?;
    let d_small = diff(0.5 * opts.eps)?;
    let jac = (4.0 * d_small - d_big) / 3.0;
    check_finite("tolerance-route state", &state, &jac)?;
    let gap = max_abs(&(d_big - d_small));
    Ok(RouteResult {
        state,
        jacobian: jac,
        cost: Cost {
            steps: probes.accepted_steps,
            rejected_steps: probes.rejected_steps,
            force_evals: probes.num_eval,
            state_force_evals: nominal.num_eval,
            rollouts: 8,
        },
        probe_gap: Some(gap),
        probe_dependent: gap > PROBE_DEPENDENCE * max_abs(&jac),
        step_stability: None,
        wall_s: None,
        wall_resolution_s: None,
    })
}

/// One adaptive rollout's x(T) and counters, for oracles and benchmarks.
pub fn tolerance_state(drop: &Drop, k: f64, opts: &ToleranceOptions) -> Result<(State, Stats)> {
    drop.validate()?;
    let law = drop.penalty(k)?;
    opts.integrator()?
        .rollout(&law, drop.gravity, drop.x0(), drop.t_final)
}
