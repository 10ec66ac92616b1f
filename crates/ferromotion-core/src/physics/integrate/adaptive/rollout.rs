//! One adaptive rollout ([`Dopri5`]): the controller's loop, with or without events, with
//! or without forward sensitivities, and the refusal of forward sensitivities without events.

use super::control::{inv_fifth_root, step_factor};
use super::modes::{Mode, System};
use super::step::{dp_step, Stats};
use super::switch::locate_switch;
use super::*;

/// The refusal of forward sensitivities without event location, one wording for every door
/// (the route, the workbench, the sweep; docs/model.md §9).
pub(super) fn forward_needs_events() -> FerroError {
    FerroError::InvalidParameter {
        name: "events",
        value: 0.0,
        limit: "forward sensitivities need events = true: without located switches \
                the tangent misses the saltation of the force jump at entry"
            .into(),
    }
}

/// Tolerances and caps of one adaptive rollout.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dopri5 {
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance (m and m/s).
    pub atol: f64,
    /// Stop the rollout at each contact switch and restart there.
    pub events: bool,
    /// Refuse rollouts that need more accepted plus rejected steps than this.
    pub max_steps: u64,
    /// Refuse a rollout whose controller asks for a step below this, s (0: no floor).
    /// The last step to T and the step that lands on a switch may be shorter.
    pub min_step: f64,
}

impl Dopri5 {
    fn norm(&self, err: &State, x: &State, x_new: &State) -> f64 {
        let mut sum = 0.0;
        for i in 0..2 {
            let sc = self.atol + self.rtol * x[i].abs().max(x_new[i].abs());
            let r = err[i] / sc;
            sum += r * r;
        }
        (0.5 * sum).sqrt()
    }

    /// Hairer's starting step guess; costs one evaluation beyond `f0`.
    fn initial_step(
        &self,
        sys: &System,
        mode: Mode,
        x: &State,
        f0: &State,
        span: f64,
        stats: &mut Stats,
    ) -> f64 {
        let scaled = |v: &State| {
            let mut s = 0.0;
            for i in 0..2 {
                let r = v[i] / (self.atol + self.rtol * x[i].abs());
                s += r * r;
            }
            (0.5 * s).sqrt()
        };
        let (d0, d1) = (scaled(x), scaled(f0));
        let h0 = if d0 < 1e-5 || d1 < 1e-5 {
            1e-6
        } else {
            0.01 * d0 / d1
        };
        let h0 = h0.min(span);
        let f1 = sys.rhs(mode, &(x + h0 * f0));
        stats.num_eval += 1;
        let d2 = scaled(&(f1 - f0)) / h0;
        let d = d1.max(d2);
        let h1 = if d <= 1e-15 {
            (h0 * 1e-3).max(1e-6)
        } else if d < 1e300 {
            // (0.01/d)^(1/5)
            inv_fifth_root(100.0 * d)
        } else {
            // Beyond inv_fifth_root's range (and NaN): the rollout fails on its first step.
            libm::pow(0.01 / d, 0.2)
        };
        (100.0 * h0).min(h1).min(span)
    }

    /// Integrate the penalty drop from `x0` at t = 0 to `t_end`.
    pub fn rollout(
        &self,
        law: &Penalty,
        gravity: f64,
        x0: State,
        t_end: f64,
    ) -> Result<(State, Stats)> {
        let (x, _, stats) = self.run::<false>(law, gravity, x0, t_end)?;
        Ok((x, stats))
    }

    /// [`Dopri5::rollout`] with forward sensitivities: the variational equation rides
    /// along each step (see `tangent_step`) and the saltation matrix is applied at each
    /// located switch, so one rollout gives J = dx(T)/dx0 (for the step sizes the
    /// controller chose). Needs `events`: without located switches the tangent never
    /// sees the entry jump, which is refused rather than returned wrong.
    pub fn rollout_with_tangent(
        &self,
        law: &Penalty,
        gravity: f64,
        x0: State,
        t_end: f64,
    ) -> Result<(State, Jacobian, Stats)> {
        if !self.events {
            return Err(forward_needs_events());
        }
        self.run::<true>(law, gravity, x0, t_end)
    }

    /// The step to try from t (the controller's `h`, cut to end at `t_end` when it reaches
    /// it) and whether it is the last; refused when the rollout has taken `max_steps`, when
    /// the controller asks for less than `min_step`, or when h underflows.
    #[inline]
    fn next_step(&self, t: f64, h: f64, t_end: f64, stats: &Stats) -> Result<(f64, bool)> {
        let taken = stats.accepted_steps + stats.rejected_steps;
        if taken >= self.max_steps {
            return Err(FerroError::TooManySteps {
                route: "tolerance",
                max_steps: self.max_steps,
                detail: format!(
                    "{taken} steps ({} accepted) reached t = {t} s of T = {t_end} s",
                    stats.accepted_steps
                ),
            });
        }
        let last = t + h >= t_end;
        if !last && h < self.min_step {
            return Err(FerroError::StepTooSmall {
                t,
                h,
                min_step: self.min_step,
            });
        }
        let h = if last { t_end - t } else { h };
        if h.is_nan() || h <= 1e-15 * t.max(1e-3) {
            return Err(FerroError::StepSizeUnderflow { t, h });
        }
        Ok((h, last))
    }

    fn run<const TANGENT: bool>(
        &self,
        law: &Penalty,
        gravity: f64,
        x0: State,
        t_end: f64,
    ) -> Result<(State, Jacobian, Stats)> {
        let sys = System::new(law, gravity);
        let mut stats = Stats::default();
        let mut mode = if !self.events {
            Mode::Clipped
        } else if sys.psi(&x0) > 0.0 {
            Mode::Pushing
        } else {
            Mode::Free
        };
        let mut x = x0;
        let mut phi = Jacobian::identity();
        let mut t = 0.0;
        let mut k1 = sys.rhs(mode, &x);
        stats.num_eval += 1;
        let mut h = self.initial_step(&sys, mode, &x, &k1, t_end, &mut stats);
        let mut just_rejected = false;
        while t < t_end {
            let last;
            (h, last) = self.next_step(t, h, t_end, &stats)?;
            let step = dp_step(&sys, mode, &x, &k1, h, &mut stats);
            let err = self.norm(&step.err, &x, &step.x_new);
            if !err.is_finite() {
                return Err(FerroError::NonFinite {
                    what: "adaptive step",
                    detail: format!("error estimate at t = {t} s, h = {h:e} s"),
                });
            }
            if err > 1.0 {
                stats.rejected_steps += 1;
                h *= step_factor(err, 1.0);
                just_rejected = true;
                continue;
            }
            // Accepted. In events mode, look for a switch inside the step first.
            if mode != Mode::Clipped {
                if let Some(theta) = locate_switch(&sys, mode, &x, &k1, &step, h) {
                    let land = dp_step(&sys, mode, &x, &k1, theta * h, &mut stats);
                    if TANGENT {
                        phi = land.tangent.apply(&phi);
                    }
                    stats.accepted_steps += 1;
                    stats.events += 1;
                    t += theta * h;
                    x = land.x_new;
                    let next = if mode == Mode::Free {
                        Mode::Pushing
                    } else {
                        Mode::Free
                    };
                    if TANGENT {
                        phi = sys.saltation(mode, next, &x) * phi;
                    }
                    mode = next;
                    k1 = sys.rhs(mode, &x);
                    stats.num_eval += 1;
                    just_rejected = false;
                    continue;
                }
            }
            if TANGENT {
                phi = step.tangent.apply(&phi);
            }
            stats.accepted_steps += 1;
            t = if last { t_end } else { t + h };
            x = step.x_new;
            k1 = step.k7;
            h *= step_factor(err, if just_rejected { 1.0 } else { 10.0 });
            just_rejected = false;
        }
        Ok((x, phi, stats))
    }
}
