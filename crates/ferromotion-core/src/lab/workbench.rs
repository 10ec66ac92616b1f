//! The bench: the state behind the browser lab's controls and every readout it shows.
//!
//! A [`Workbench`] holds the drop, the stiffness, the step and the tolerance switch, and
//! computes one [`WorkbenchReadout`] per change. Readouts that do not depend on k (the
//! divergence exponent at a given dt, the contact share's exponent) are cached, so a
//! slider move costs the three fixed-step rollouts of the dt-refinement readout, the
//! corrected route at the current step and a few closed-form evaluations. Those rollouts
//! resume from starts kept per step ([`FixedStart`], [`CorrectedStart`]): the first fall's
//! steps above ground, the same for every k, run once per drop and step (about half the
//! steps of the default drop), with the same bits as a rollout from t = 0.
//!
//! With a clock ([`Workbench::with_clock`], injected by the binding: see [`crate::lab::clock`])
//! every route's row also carries the wall time its Jacobian took (`wall_s`), measured here
//! around each route call; without one those are `None`.

use crate::error::{positive, FerroError, Result};
use crate::lab::clock::{plus, timed, Clock};
use crate::lab::readout::{
    blame_of, contact_share_exponent, divergence_exponent, Blame, Fit, Refinement,
};
use crate::lab::readout::{refinement_steps, DT_DIVISORS};
pub use crate::lab::sweep::Curve;
use crate::lab::sweep::{sweep_curve, Progress, RouteRow, Sweep, SweepOptions, Watch};
use crate::physics::contact::penalty::{
    flow, limit_restitution, realised_restitution, FlowOptions,
};
use crate::physics::contact::rigid::{exact, time_of_impact_term, ExactOptions};
use crate::physics::integrate::adaptive::{
    tolerance, JacobianMethod, ToleranceOptions, PROBE_DEPENDENCE,
};
use crate::physics::integrate::corrected::{corrected_from, CorrectedOptions, CorrectedStart};
use crate::physics::integrate::fixed::{fixed_from, FixedOptions, FixedStart};
use crate::physics::model::Drop;
use crate::physics::state::Cost;
use crate::physics::state::RouteResult;
use serde::{Deserialize, Serialize};

/// Gradient error below which a route "lands on the exact answer" (with the right sign and,
/// for the tolerance route, a derivative that does not depend on its probe size).
pub const LANDS_BELOW: f64 = 1e-2;

/// The bench's default relative tolerance for the tolerance route: the library's own
/// default ([`DEFAULT_RTOL`](crate::physics::integrate::DEFAULT_RTOL)), so the lab, the
/// package and the CLI open on one value.
pub const LAB_RTOL: f64 = crate::physics::integrate::DEFAULT_RTOL;

/// The lab's controls. Crosses to JS and back as a plain object with these keys (missing
/// keys take the defaults; unknown keys are refused).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkbenchConfig {
    /// The drop.
    pub drop: Drop,
    /// Penalty stiffness, N/m.
    pub k: f64,
    /// The base fixed step, s (the lab's "dt" button).
    pub base_dt: f64,
    /// 1, 10 or 100: the current step is base_dt / divisor.
    pub dt_divisor: u32,
    /// Run the tolerance route too.
    pub tolerance: bool,
    /// Its options.
    pub tolerance_options: ToleranceOptions,
}

impl Default for WorkbenchConfig {
    fn default() -> Self {
        WorkbenchConfig {
            drop: Drop::default(),
            k: 1e6,
            base_dt: 1e-4,
            dt_divisor: 1,
            tolerance: false,
            tolerance_options: ToleranceOptions {
                rtol: LAB_RTOL,
                ..ToleranceOptions::default()
            },
        }
    }
}

impl From<crate::lab::scenario::Scenario> for WorkbenchConfig {
    /// The lab's controls for a scenario: its drop, k, and its dt as the base step.
    fn from(sc: crate::lab::scenario::Scenario) -> Self {
        WorkbenchConfig {
            drop: sc.drop,
            k: sc.k,
            base_dt: sc.dt,
            ..WorkbenchConfig::default()
        }
    }
}

impl WorkbenchConfig {
    /// The current fixed step, s.
    pub fn dt(&self) -> f64 {
        self.base_dt / self.dt_divisor as f64
    }
}

/// What the rigid reference says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExactReadout {
    /// State and Jacobian.
    #[serde(flatten)]
    pub flat: crate::lab::readout::Flat,
    /// The restitution used: the push-only law's stiff limit for the drop's zeta.
    pub restitution: f64,
    /// Speed of the first impact, m/s.
    pub impact_speed: f64,
    /// (1+e)·g/|v| at that speed, 1/s.
    pub time_of_impact_term: f64,
}

/// Every number the lab shows for one setting of the controls.
///
/// Every cost ratio in it is taken against one yardstick, the fixed route at the base step
/// ([`WorkbenchReadout::yardstick`]), whichever step is current.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkbenchReadout {
    /// The drop the readout is for.
    pub drop: Drop,
    /// Stiffness, N/m.
    pub k: f64,
    /// Current fixed step, s.
    pub dt: f64,
    /// 1, 10 or 100: the current step is `refinement.base_dt / dt_divisor`.
    pub dt_divisor: u32,
    /// k·dt²/m: above about 4 the explicit contact step is unstable; near 1 it is under-resolved.
    pub k_dt2: f64,
    /// The rigid reference.
    pub exact: ExactReadout,
    /// The fixed-step route at the current step.
    pub fixed: RouteRow,
    /// The corrected route (fixed step with the contact switches located) at the current step.
    pub corrected: RouteRow,
    /// The continuous penalty flow (the blame split's reference).
    pub flow: RouteRow,
    /// The tolerance route, when switched on.
    pub tolerance: Option<ToleranceReadout>,
    /// Restitution the penalty law realises at this k and the drop's impact speed
    /// (`None` when the mass does not leave the ground).
    pub restitution_at_k: Option<f64>,
    /// Divergence exponent at the current step.
    pub exponent: Fit,
    /// Gradient error at base_dt, /10, /100 at this k.
    pub refinement: Refinement,
    /// Blame split at (k, current step).
    pub blame: Blame,
    /// The cost yardstick: the fixed route at the base step.
    pub yardstick: Yardstick,
    /// Force evaluations of the fixed route at the current step over the yardstick's.
    pub fixed_cost_ratio: f64,
    /// Force evaluations of the corrected route over the yardstick's.
    pub corrected_cost_ratio: f64,
    /// Fitted exponent of the contact share on k = 1e4..1e8.
    pub contact_exponent: Fit,
    /// The smallest step of the clock the wall times were read from, s (`None`: no clock,
    /// every `wall_s` is `None`). A wall time below it reads as "under one tick".
    pub wall_resolution_s: Option<f64>,
}

/// The tolerance route's readout.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToleranceReadout {
    /// State, Jacobian, errors and cost.
    #[serde(flatten)]
    pub row: RouteRow,
    /// Relative tolerance used.
    pub rtol: f64,
    /// Whether rollouts stopped at the contact switches.
    pub events: bool,
    /// How the Jacobian was obtained: `richardson` (central differences of 8 rollouts) or
    /// `forward` (sensitivities along one event-located rollout). Named apart from the
    /// row's own `jacobian` (the matrix, flattened in beside it).
    pub jacobian_method: JacobianMethod,
    /// max |D(eps) - D(eps/2)| between the two probe sizes (`None` for `forward`: no probes).
    pub probe_gap: Option<f64>,
    /// The flag threshold, 1e-3·max|J| (`None` for `forward`).
    pub probe_threshold: Option<f64>,
    /// Force evaluations of the Jacobian's rollouts over the yardstick's (the fixed route
    /// at the base step, whichever step is current).
    pub cost_ratio: f64,
    /// Lands on the exact answer: right sign, gradient error below [`LANDS_BELOW`], and not
    /// probe-dependent (a value that moves with the probe size is not to be trusted).
    pub lands: bool,
}

/// What every cost ratio of a readout is measured against.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Yardstick {
    /// The base step, s.
    pub dt: f64,
    /// The fixed route's work at that step.
    pub cost: Cost,
    /// Its wall time, s (`None` without a clock).
    pub wall_s: Option<f64>,
}

/// What a curve computes besides the fixed route (and the tolerance route when it is on).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CurveOptions {
    /// Also run the corrected route at the same step.
    pub corrected: bool,
    /// Also compute the blame split.
    pub blame: bool,
}

/// The bench: controls plus caches.
#[derive(Debug, Clone)]
pub struct Workbench {
    config: WorkbenchConfig,
    reference: RouteResult,
    exponent_cache: Vec<(f64, Fit)>,
    contact_exponent: Option<Fit>,
    /// Per step, where the fixed and corrected rollouts of every k begin to differ (the
    /// first fall's steps above ground), with the wall time they took: each slider move
    /// resumes from there, and its rows' `wall_s` add that time to the rest's, so they still
    /// say what a whole rollout costs.
    fixed_starts: Vec<(f64, FixedStart, Option<f64>)>,
    corrected_starts: Vec<(f64, CorrectedStart, Option<f64>)>,
    clock: Option<Clock>,
}

impl Workbench {
    /// A bench with the given controls (validated).
    pub fn new(config: WorkbenchConfig) -> Result<Workbench> {
        let reference = exact(&config.drop, &ExactOptions::default())?;
        let mut b = Workbench {
            config,
            reference,
            exponent_cache: Vec::new(),
            contact_exponent: None,
            fixed_starts: Vec::new(),
            corrected_starts: Vec::new(),
            clock: None,
        };
        b.set_config(config)?;
        Ok(b)
    }

    /// This bench, timing every route it runs with `clock` (the readout's `wall_s`).
    pub fn with_clock(mut self, clock: Clock) -> Workbench {
        self.clock = Some(clock);
        self
    }

    /// The clock the routes are timed with, if any.
    pub fn clock(&self) -> Option<&Clock> {
        self.clock.as_ref()
    }

    /// The current controls.
    pub fn config(&self) -> &WorkbenchConfig {
        &self.config
    }

    /// Replace the controls, validating them. A new drop clears the caches.
    pub fn set_config(&mut self, config: WorkbenchConfig) -> Result<()> {
        config.drop.validate()?;
        positive("k", config.k)?;
        positive("dt", config.base_dt)?;
        if ![1, 10, 100].contains(&config.dt_divisor) {
            return Err(FerroError::InvalidParameter {
                name: "dt_divisor",
                value: config.dt_divisor as f64,
                limit: "must be 1, 10 or 100".into(),
            });
        }
        config.tolerance_options.integrator()?;
        // The dt-refinement readout always runs base_dt/10 and base_dt/100: check the finest.
        for dt in [config.dt(), config.base_dt / 100.0] {
            crate::physics::integrate::fixed::step_count(
                config.drop.t_final,
                dt,
                FixedOptions::default().max_steps,
            )?;
        }
        if config.drop != self.config.drop {
            self.reference = exact(&config.drop, &ExactOptions::default())?;
            self.exponent_cache.clear();
            self.contact_exponent = None;
            self.fixed_starts.clear();
            self.corrected_starts.clear();
        }
        self.config = config;
        Ok(())
    }

    /// Set the stiffness, N/m.
    pub fn set_k(&mut self, k: f64) -> Result<()> {
        self.set_config(WorkbenchConfig { k, ..self.config })
    }

    /// Set the stiffness from the slider's log10 k (2..8 in the lab; any finite value here).
    pub fn set_log10_k(&mut self, log10_k: f64) -> Result<()> {
        crate::error::finite("log10_k", log10_k)?;
        self.set_k(libm::pow(10.0, log10_k))
    }

    /// Choose the current step by its value, s: one of the refinement steps base_dt,
    /// base_dt/10, base_dt/100, matched to 1e-9 relative (so a printed "1e-6" finds
    /// 1e-4/100). Anything else is refused, naming the steps on offer.
    pub fn set_dt(&mut self, dt: f64) -> Result<()> {
        let steps = refinement_steps(self.config.base_dt);
        match steps.iter().position(|s| (dt - s).abs() <= 1e-9 * s.abs()) {
            Some(i) => self.set_dt_divisor(DT_DIVISORS[i]),
            None => Err(FerroError::InvalidParameter {
                name: "dt",
                value: dt,
                limit: format!(
                    "must be one of the bench's steps {}, {} or {} s",
                    short(steps[0]),
                    short(steps[1]),
                    short(steps[2])
                ),
            }),
        }
    }

    /// Choose the current step: base_dt / divisor with divisor 1, 10 or 100.
    pub fn set_dt_divisor(&mut self, divisor: u32) -> Result<()> {
        self.set_config(WorkbenchConfig {
            dt_divisor: divisor,
            ..self.config
        })
    }

    /// Switch the tolerance route on or off, with its relative tolerance and events flag
    /// (its Jacobian method and other options unchanged).
    pub fn set_tolerance(&mut self, on: bool, rtol: f64, events: bool) -> Result<()> {
        self.set_tolerance_options(
            on,
            ToleranceOptions {
                rtol,
                events,
                ..self.config.tolerance_options
            },
        )
    }

    /// Switch the tolerance route on or off with all its options. `jacobian = forward`
    /// without `events` is refused (`InvalidParameter` naming `events`), on or off, and the
    /// controls stay as they were.
    pub fn set_tolerance_options(&mut self, on: bool, options: ToleranceOptions) -> Result<()> {
        self.set_config(WorkbenchConfig {
            tolerance: on,
            tolerance_options: options,
            ..self.config
        })
    }

    fn exponent_at(&mut self, dt: f64) -> Result<Fit> {
        if let Some((_, fit)) = self.exponent_cache.iter().find(|(d, _)| *d == dt) {
            return Ok(fit.clone());
        }
        let fit = divergence_exponent(&self.config.drop, dt)?;
        self.exponent_cache.push((dt, fit.clone()));
        Ok(fit)
    }

    /// The contact share's exponent for this drop (computed once, then cached).
    fn contact_exponent(&mut self) -> Result<Fit> {
        if let Some(f) = &self.contact_exponent {
            return Ok(f.clone());
        }
        let f = contact_share_exponent(&self.config.drop)?;
        self.contact_exponent = Some(f.clone());
        Ok(f)
    }

    /// Every readout for the current controls.
    pub fn readout(&mut self) -> Result<WorkbenchReadout> {
        let c = self.config;
        let drop = &c.drop;
        let dt = c.dt();
        // Each rollout below resumes from its step's start (the steps no k changes, computed
        // once per drop and step): a wall time is the rollout's own part only.
        let steps = refinement_steps(c.base_dt);
        // A copy: `self` is borrowed mutably below (the caches).
        let own_clock = self.clock;
        let clock = own_clock.as_ref();
        let (corrected_start, corrected_start_wall) =
            start_at(&mut self.corrected_starts, dt, clock, || {
                CorrectedStart::new(drop, dt, &CorrectedOptions::default())
            })?;
        let reference = &self.reference;
        let speed = drop.impact_speed();
        let exact_readout = exact_readout(drop, reference)?;
        // The three fixed-step rollouts of the dt-refinement readout include the current
        // step: run each once and share it with the fixed readout and the blame split.
        let (rollouts, walls) =
            refinement_rollouts(&mut self.fixed_starts, drop, c.k, steps, clock)?;
        let current = match c.dt_divisor {
            10 => 1,
            100 => 2,
            _ => 0,
        };
        let fixed_route = rollouts[current].clone();
        let yardstick = Yardstick {
            dt: c.base_dt,
            cost: rollouts[0].cost,
            wall_s: walls[0],
        };
        let per_yardstick =
            |cost: &Cost| cost.force_evals as f64 / yardstick.cost.force_evals as f64;
        let refinement = Refinement::from_errors(
            c.base_dt,
            std::array::from_fn(|i| crate::lab::readout::compare(&rollouts[i], reference)),
        );
        let (flow_route, flow_wall) = timed(clock, || flow(drop, c.k, &FlowOptions::default()));
        let flow_route = flow_route?;
        let (corrected_route, corrected_wall) = timed(clock, || {
            corrected_from(
                drop,
                c.k,
                dt,
                &CorrectedOptions::default(),
                &corrected_start,
            )
        });
        let corrected_route = corrected_route?;
        let corrected_wall = plus(corrected_start_wall, corrected_wall);
        let fixed_row = RouteRow::timed(&fixed_route, reference, walls[current]);
        let tol = if c.tolerance {
            Some(tolerance_readout(&c, reference, clock, yardstick.cost)?)
        } else {
            None
        };
        let exponent = self.exponent_at(dt)?;
        let contact_exponent = self.contact_exponent()?;
        let reference = &self.reference;
        Ok(WorkbenchReadout {
            drop: *drop,
            k: c.k,
            dt,
            dt_divisor: c.dt_divisor,
            k_dt2: c.k * dt * dt / drop.mass,
            exact: exact_readout,
            fixed: fixed_row,
            yardstick,
            fixed_cost_ratio: per_yardstick(&fixed_route.cost),
            corrected_cost_ratio: per_yardstick(&corrected_route.cost),
            corrected: RouteRow::timed(&corrected_route, reference, corrected_wall),
            flow: RouteRow::timed(&flow_route, reference, flow_wall),
            tolerance: tol,
            restitution_at_k: realised_restitution(drop, c.k, speed)?,
            exponent,
            refinement,
            blame: blame_of(drop, c.k, &fixed_route)?,
            contact_exponent,
            wall_resolution_s: clock.map(Clock::resolution),
        })
    }

    /// The time-of-impact term (1+e)·g/|v| (1/s) for this drop's limit restitution at any
    /// impact `speed` (m/s) the learner picks.
    pub fn time_of_impact_term(&self, speed: f64) -> Result<f64> {
        self.config.drop.time_of_impact_term(speed)
    }

    /// Forward and gradient error of the fixed route (and the tolerance route when on)
    /// against k, at the current step: the lab's log-log plot.
    pub fn curve(&self, ks: &[f64]) -> Result<Sweep> {
        Ok(self.curve_with(ks, &CurveOptions::default())?.sweep)
    }

    /// [`Workbench::curve`] with the corrected route and the blame split when asked, and
    /// the sweep's exponent fit and wrong-sign bands: what the lab's plots draw.
    pub fn curve_with(&self, ks: &[f64], opts: &CurveOptions) -> Result<Curve> {
        self.curve_watched(ks, opts, None)
    }

    /// [`Workbench::curve_with`], telling `progress` how far the sweep has got (see
    /// [`Watch`]): the lab's background worker reports it while the audit runs.
    pub fn curve_watched<'a>(
        &'a self,
        ks: &[f64],
        opts: &CurveOptions,
        progress: Option<&'a mut dyn FnMut(Progress) -> Result<()>>,
    ) -> Result<Curve> {
        let c = &self.config;
        let options = SweepOptions {
            dt: c.dt(),
            tolerance: c.tolerance.then_some(c.tolerance_options),
            blame: opts.blame,
            corrected: opts.corrected,
        };
        let watch = Watch {
            clock: self.clock.as_ref(),
            progress,
        };
        sweep_curve(&c.drop, ks, &options, watch)
    }
}

/// The fixed-step rollouts at the refinement's three steps, each resumed from its step's start
/// (cached in `cache`), with their wall times (the start's share included).
fn refinement_rollouts(
    cache: &mut Vec<(f64, FixedStart, Option<f64>)>,
    drop: &Drop,
    k: f64,
    steps: [f64; 3],
    clock: Option<&Clock>,
) -> Result<(Vec<RouteResult>, [Option<f64>; 3])> {
    let mut walls = [None; 3];
    let mut rollouts = Vec::with_capacity(3);
    for (&step, wall) in steps.iter().zip(walls.iter_mut()) {
        let (start, start_wall) = start_at(cache, step, clock, || {
            FixedStart::new(drop, step, &FixedOptions::default())
        })?;
        let (r, w) = timed(clock, || {
            fixed_from(drop, k, step, &FixedOptions::default(), &start)
        });
        *wall = plus(start_wall, w);
        rollouts.push(r?);
    }
    Ok((rollouts, walls))
}

/// The start at step `dt` in `cache` (each kept with its step and the wall time it took),
/// made by `make` and timed by `clock` on first use.
fn start_at<S: Copy>(
    cache: &mut Vec<(f64, S, Option<f64>)>,
    dt: f64,
    clock: Option<&Clock>,
    make: impl FnOnce() -> Result<S>,
) -> Result<(S, Option<f64>)> {
    if let Some(&(_, s, wall)) = cache.iter().find(|c| c.0 == dt) {
        return Ok((s, wall));
    }
    let (s, wall) = timed(clock, make);
    let s = s?;
    cache.push((dt, s, wall));
    Ok((s, wall))
}

/// A step for a message: exponential notation with at most 7 significant digits and no
/// trailing zeros ("1e-6", not "1.0000000000000002e-6").
fn short(x: f64) -> String {
    let s = format!("{x:.6e}");
    match s.split_once('e') {
        Some((mantissa, exponent)) if mantissa.contains('.') => {
            let m = mantissa.trim_end_matches('0').trim_end_matches('.');
            format!("{m}e{exponent}")
        }
        _ => s,
    }
}

/// The rigid reference's readout: its answer, the limit restitution for the drop's zeta, the
/// impact speed and the time-of-impact term.
fn exact_readout(drop: &Drop, reference: &RouteResult) -> Result<ExactReadout> {
    let e = limit_restitution(drop.zeta)?;
    let speed = drop.impact_speed();
    Ok(ExactReadout {
        flat: reference.into(),
        restitution: e,
        impact_speed: speed,
        time_of_impact_term: time_of_impact_term(e, drop.gravity, speed)?,
    })
}

/// The tolerance route's readout at the controls `c`: its row against the `reference`, its
/// probe gap and threshold, its cost against the yardstick's, and whether it lands (right
/// sign, error below LANDS_BELOW, not probe-dependent).
fn tolerance_readout(
    c: &WorkbenchConfig,
    reference: &RouteResult,
    clock: Option<&Clock>,
    yardstick: Cost,
) -> Result<ToleranceReadout> {
    let (t, wall) = timed(clock, || tolerance(&c.drop, c.k, &c.tolerance_options));
    let t = t?;
    let row = RouteRow::timed(&t, reference, wall);
    let lands = row.errors.right_sign && row.errors.gradient < LANDS_BELOW && !row.probe_dependent;
    let probes = t.probe_gap.is_some();
    Ok(ToleranceReadout {
        rtol: c.tolerance_options.rtol,
        events: c.tolerance_options.events,
        jacobian_method: c.tolerance_options.jacobian,
        probe_gap: t.probe_gap,
        probe_threshold: probes
            .then(|| PROBE_DEPENDENCE * crate::physics::state::max_abs(&t.jacobian)),
        cost_ratio: t.cost.force_evals as f64 / yardstick.force_evals as f64,
        lands,
        row,
    })
}
