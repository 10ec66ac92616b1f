//! `hybrid_jacobian`: the derivative of a hybrid system's flow through its events — a
//! Jacobian, or the pieces of a derivative that has none, or a typed refusal when no honest
//! derivative exists.
//!
//! A hybrid system declares, per mode, a smooth flow `x' = f(x)`, guards `g_i(x)` (an
//! event fires when one crosses from > 0 to <= 0) and resets `x+ = R_i(x-)`. The systems
//! shipped with the core are defined once in [`crate::systems`]. Stepping with a fixed step
//! h, RK4 carries x and the flow Jacobian `Phi' = (df/dx)·Phi`. When guards change sign across
//! a step, each is located inside it by root-finding on the RK4 sub-step length; the earliest
//! fires first and the step goes on from it (several events in one step are taken in their
//! order). The Jacobian passes through the saltation matrix
//!
//! ```text
//! Xi = DR + (f+ - DR·f-)·∇gᵀ / (∇gᵀ·f-)
//! ```
//!
//! (f- before the reset, f+ after it, both at the event). The denominator is the guard
//! speed: as it goes to zero Xi blows up like 1/speed, so an event slower than
//! `graze_speed` is refused (grazing), saying how large Xi would have been.
//!
//! Guards crossed within `simultaneous` seconds of each other are one simultaneous group
//! ([`pieces`]): every order of up to three is enumerated, each order's resets applied in
//! turn and its saltation matrices composed. Orders that give different states are refused
//! as [`FerroError::SetValued`] (with each order's x(t1)); orders that give one state carry
//! one *piece* each (its event order, the cone of perturbations it holds for, its matrix),
//! and the result's Jacobian exists only when the pieces agree within the probe tolerance
//! ([`Pieces::jacobian`], else [`FerroError::NotDifferentiable`]); the directional
//! derivative ([`Pieces::jvp`]) exists either way. Beyond three, [`hybrid_jvp`] orders the
//! events along d.
//!
//! Also refused: hidden state (a flow that depends on something outside x, such as a
//! warm-started solver), whether the system declares it or not: it is also *measured* on
//! every system (a repeated call must repeat; the flow over 2h whole and as two halves must
//! agree to `HIDDEN_STATE_RTOL` or fall like RK4's local error); more events in one step than
//! located apart ([`MAX_EVENTS_PER_STEP`]); and an answer that moves by more than
//! `probe_rtol` when recomputed with half the step. The answer carries J's spectral radius
//! and worst-case gain (largest singular value).
//!
//! Systems with a closed-form flight between events also have their exact answer,
//! [`exact_events`] (the same event logic on exact flights and exact event times).
//!
//! A system known only as a step function `step(x, dt) -> x` (a simulator) is qualified by
//! [`black_box::step_jacobian`], with every derivative measured on the step itself.

pub mod black_box;
pub mod exact;
pub mod pieces;
pub use black_box::{
    step_jacobian, step_jacobian_watched, HalfDt, Joint, JointKind, Manifold, PartialPass,
    StepOptions, StepOutcome, StepPartial, StepProgress, StepSolution, StepSystem, StepWatch,
};
pub use exact::{exact_events, ClosedForm};
pub use pieces::{Piece, Pieces, MAX_ENUMERATED};

use crate::error::{positive, FerroError, Result};
use nalgebra::{DMatrix, DVector};
use serde::Serialize;

/// A hybrid system: modes, smooth flows, guards and resets. SI units are the system's.
pub trait HybridSystem {
    /// A name for messages and receipts.
    fn name(&self) -> String;
    /// Dimension of x.
    fn dim(&self) -> usize;
    /// The flow f(x) in `mode`.
    fn rhs(&self, mode: usize, x: &DVector<f64>) -> DVector<f64>;
    /// df/dx in `mode`.
    fn rhs_jacobian(&self, mode: usize, x: &DVector<f64>) -> DMatrix<f64>;
    /// Number of guards watched in `mode`.
    fn guard_count(&self, mode: usize) -> usize;
    /// Guard `i` in `mode`; the event fires when it crosses from > 0 to <= 0.
    fn guard(&self, mode: usize, i: usize, x: &DVector<f64>) -> f64;
    /// ∇g_i.
    fn guard_gradient(&self, mode: usize, i: usize, x: &DVector<f64>) -> DVector<f64>;
    /// Reset of guard `i`: the new mode and x+.
    fn reset(&self, mode: usize, i: usize, x: &DVector<f64>) -> (usize, DVector<f64>);
    /// dR/dx of guard `i`'s reset.
    fn reset_jacobian(&self, mode: usize, i: usize, x: &DVector<f64>) -> DMatrix<f64>;
    /// State the flow depends on that x does not carry (`None` when there is none).
    fn hidden_state(&self) -> Option<String> {
        None
    }
    /// Check the system's own parameters (called by [`hybrid_jacobian`]).
    fn validate(&self) -> Result<()> {
        Ok(())
    }
}

/// Options of [`hybrid_jacobian`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HybridOptions {
    /// Fixed step, s.
    pub dt: f64,
    /// Events whose guard speed |∇g·f-| is below this are refused as grazing.
    pub graze_speed: f64,
    /// Recompute with dt/2 and refuse if the Jacobian moves by more than this times
    /// max(1, max|J|). Non-positive disables the check.
    pub probe_rtol: f64,
    /// Refuse more than this many steps.
    pub max_steps: u64,
    /// Events located within this many seconds of each other are one simultaneous group.
    pub simultaneous: f64,
}

impl Default for HybridOptions {
    fn default() -> Self {
        HybridOptions {
            dt: 1e-3,
            graze_speed: crate::physics::contact::rigid::DEFAULT_GRAZE_SPEED,
            probe_rtol: 1e-6,
            max_steps: crate::physics::integrate::DEFAULT_MAX_STEPS,
            simultaneous: DEFAULT_SIMULTANEOUS,
        }
    }
}

/// Events located within this many seconds of each other are simultaneous (the default of
/// [`HybridOptions::simultaneous`]).
pub const DEFAULT_SIMULTANEOUS: f64 = 1e-9;

/// One event met on the way.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HybridEvent {
    /// Time, s.
    pub t: f64,
    /// Mode before.
    pub mode_before: usize,
    /// Guard index that fired.
    pub guard: usize,
    /// Mode after.
    pub mode_after: usize,
    /// Guard speed ∇g·f- (negative: the guard was falling).
    pub guard_speed: f64,
    /// Largest |entry| of the saltation matrix.
    pub saltation_max: f64,
}

/// State, Jacobian and events at t1.
#[derive(Debug, Clone, PartialEq)]
pub struct HybridSolution {
    /// x(t1).
    pub x: DVector<f64>,
    /// Mode at t1.
    pub mode: usize,
    /// dx(t1)/dx(t0) when the pieces agree (`pieces.agree()`); NaN otherwise (use
    /// `pieces.jacobian()` for the typed refusal, `pieces.jvp(d)` for the directional
    /// derivative).
    pub jacobian: DMatrix<f64>,
    /// The derivative's linear pieces (one when no events were simultaneous).
    pub pieces: Pieces,
    /// Events in order (of a simultaneous group: its first order's).
    pub events: Vec<HybridEvent>,
    /// max |J(dt) - J(dt/2)| (0 when the probe check is off).
    pub probe_gap: f64,
    /// Spectral radius of J: the largest |eigenvalue| (growth of a repeated map).
    pub spectral_radius: f64,
    /// Worst-case gain of J: its largest singular value (max |J·d| over unit d).
    pub worst_gain: f64,
}

fn rk4(
    sys: &dyn HybridSystem,
    mode: usize,
    x: &DVector<f64>,
    phi: &DMatrix<f64>,
    h: f64,
) -> (DVector<f64>, DMatrix<f64>) {
    let f = |x: &DVector<f64>| sys.rhs(mode, x);
    let a = |x: &DVector<f64>| sys.rhs_jacobian(mode, x);
    let k1 = f(x);
    let p1 = a(x) * phi;
    let x2 = x + 0.5 * h * &k1;
    let phi2 = phi + 0.5 * h * &p1;
    let k2 = f(&x2);
    let p2 = a(&x2) * &phi2;
    let x3 = x + 0.5 * h * &k2;
    let phi3 = phi + 0.5 * h * &p2;
    let k3 = f(&x3);
    let p3 = a(&x3) * &phi3;
    let x4 = x + h * &k3;
    let phi4 = phi + h * &p3;
    let k4 = f(&x4);
    let p4 = a(&x4) * &phi4;
    (
        x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4),
        phi + h / 6.0 * (p1 + 2.0 * p2 + 2.0 * p3 + p4),
    )
}

/// A guard within this much of zero (relative to max(1, max|x|)) sits at its zero: where
/// an event just left it, up to the round-off of locating it.
const AT_ZERO: f64 = 1e-9;

/// Guards that cross from > 0 to <= 0 between x and y in `mode`. A guard that starts at
/// or just below zero while moving up (right after its own reset) counts as positive.
fn crossings(
    sys: &dyn HybridSystem,
    mode: usize,
    x: &DVector<f64>,
    y: &DVector<f64>,
) -> Vec<usize> {
    (0..sys.guard_count(mode))
        .filter(|&i| {
            let g0 = sys.guard(mode, i, x);
            // A guard left at its zero by the event just fired (within round-off of it) and
            // leaving it counts as above zero; one well below zero (a penalty contact's end
            // still below ground after its release, rising) has not crossed anything.
            let at_zero = g0.abs() <= AT_ZERO * x.amax().max(1.0);
            let leaving = || sys.guard_gradient(mode, i, x).dot(&sys.rhs(mode, x)) > 0.0;
            (g0 > 0.0 || (at_zero && leaving())) && sys.guard(mode, i, y) <= 0.0
        })
        .collect()
}

/// Refuse step `steps` of a run from t to t1 when it is past the cap (`TooManySteps`, saying
/// how far the run got): the analytic and the black-box drivers share it.
fn step_cap(route: &'static str, steps: u64, max_steps: u64, t: f64, t1: f64) -> Result<()> {
    if steps > max_steps {
        return Err(FerroError::TooManySteps {
            route,
            max_steps,
            detail: format!("reached t = {t} s of t1 = {t1} s"),
        });
    }
    Ok(())
}

/// Where guard `i` crosses zero inside the step from (x, phi) of length h that ends at `y`:
/// the sub-step length, on (0, h], by secant and bisection in turn.
fn locate(
    sys: &dyn HybridSystem,
    mode: usize,
    i: usize,
    (x, phi, y): (&DVector<f64>, &DMatrix<f64>, &DVector<f64>),
    t: f64,
    h: f64,
) -> f64 {
    let g_at = |s: f64| sys.guard(mode, i, &rk4(sys, mode, x, phi, s).0);
    // The bracket's ends with their guard values: [(lo, g_lo), (hi, g_hi)], g_lo > 0 >= g_hi.
    let mut b = [(0.0, sys.guard(mode, i, x)), (h, sys.guard(mode, i, y))];
    let narrow = |b: &mut [(f64, f64); 2], s: f64, g: f64| b[usize::from(g <= 0.0)] = (s, g);
    for _ in 0..200 {
        let [(lo, g_lo), (hi, g_hi)] = b;
        let secant = lo - g_lo * (hi - lo) / (g_hi - g_lo);
        let s = if secant > lo && secant < hi {
            secant
        } else {
            0.5 * (lo + hi)
        };
        let g = g_at(s);
        narrow(&mut b, s, g);
        if b[1].0 - b[0].0 <= 1e-15 * h.max(t.abs()) || g == 0.0 {
            break;
        }
        // A bisection after every secant step keeps the bracket shrinking even when
        // the secant sticks to one end.
        let mid = 0.5 * (b[0].0 + b[1].0);
        narrow(&mut b, mid, g_at(mid));
    }
    b[1].0
}

/// The event of guard `i` at the state `xm` reached at `t_event`: its report entry, the
/// state after the reset and the saltation matrix; a grazing event (guard speed below
/// `graze_speed`) refused.
fn event_at(
    sys: &dyn HybridSystem,
    mode: usize,
    i: usize,
    xm: &DVector<f64>,
    t_event: f64,
    graze_speed: f64,
) -> Result<(HybridEvent, DVector<f64>, DMatrix<f64>)> {
    let f_minus = sys.rhs(mode, xm);
    let grad = sys.guard_gradient(mode, i, xm);
    let speed = grad.dot(&f_minus);
    let (new_mode, xp) = sys.reset(mode, i, xm);
    let dr = sys.reset_jacobian(mode, i, xm);
    let f_plus = sys.rhs(new_mode, &xp);
    let salt = &dr + (&f_plus - &dr * &f_minus) * grad.transpose() / speed;
    let salt_max = salt.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    if !(speed.abs() >= graze_speed) {
        return Err(FerroError::Grazing {
            t: t_event,
            speed: speed.abs(),
            threshold: graze_speed,
            term: salt_max,
        });
    }
    let event = HybridEvent {
        t: t_event,
        mode_before: mode,
        guard: i,
        mode_after: new_mode,
        guard_speed: speed,
        saltation_max: salt_max,
    };
    Ok((event, xp, salt))
}

/// Events one step may hold before it is refused as [`FerroError::TwoEventsInOneStep`] (a
/// chattering guard the step cannot take apart).
pub const MAX_EVENTS_PER_STEP: usize = 64;

/// A run's state: where it is, its Jacobian blocks (n columns per branch: one branch per
/// combination of orders of the simultaneous groups met) and what it met.
struct Run {
    x: DVector<f64>,
    phi: DMatrix<f64>,
    branches: Vec<pieces::Branch>,
    mode: usize,
    events: Vec<HybridEvent>,
    enumerated: bool,
    largest_group: usize,
}

impl Run {
    fn new(x0: &DVector<f64>, mode0: usize) -> Run {
        let n = x0.len();
        Run {
            x: x0.clone(),
            phi: DMatrix::identity(n, n),
            branches: vec![pieces::Branch::default()],
            mode: mode0,
            events: Vec::new(),
            enumerated: true,
            largest_group: 0,
        }
    }

    /// Fire `group` at (xm, phim) reached at `te`: one event through its saltation matrix,
    /// several through [`pieces::fire_group`].
    fn fire(
        &mut self,
        sys: &dyn HybridSystem,
        group: &[usize],
        (xm, phim, te): (DVector<f64>, DMatrix<f64>, f64),
        opts: &HybridOptions,
        along: Option<&DVector<f64>>,
    ) -> Result<()> {
        if let [i] = group {
            let (event, xp, salt) = event_at(sys, self.mode, *i, &xm, te, opts.graze_speed)?;
            self.phi = salt * phim;
            self.mode = event.mode_after;
            self.x = xp;
            self.events.push(event);
            return Ok(());
        }
        let state_tol = if opts.probe_rtol > 0.0 {
            opts.probe_rtol
        } else {
            1e-9
        };
        let (fired, enumerated) = pieces::fire_group(
            sys,
            (self.mode, &xm, &phim),
            group,
            &self.branches,
            te,
            opts.graze_speed,
            state_tol,
            along,
        )?;
        self.enumerated &= enumerated;
        self.largest_group = self.largest_group.max(group.len());
        self.phi = fired.phi;
        self.branches = fired.branches;
        self.mode = fired.mode;
        self.x = fired.x;
        self.events.extend(fired.events);
        Ok(())
    }

    /// The answer: the pieces measured, the Jacobian where they agree.
    fn finish(self, opts: &HybridOptions, t: f64) -> Result<HybridSolution> {
        if !(self.x.iter().chain(self.phi.iter()).all(|v| v.is_finite())) {
            return Err(FerroError::NonFinite {
                what: "hybrid_jacobian",
                detail: format!("at t = {t} s"),
            });
        }
        let n = self.x.len();
        let list = self
            .branches
            .into_iter()
            .enumerate()
            .map(|(b, br)| Piece {
                orders: br.orders,
                cone: br.cone,
                matrix: self.phi.columns(b * n, n).into_owned(),
            })
            .collect();
        let pieces = Pieces::measured(list, self.largest_group, self.enumerated, opts.probe_rtol);
        let jacobian = match pieces.jacobian() {
            Ok(j) => j.clone(),
            Err(_) => DMatrix::from_element(n, n, f64::NAN),
        };
        Ok(HybridSolution {
            x: self.x,
            mode: self.mode,
            jacobian,
            pieces,
            events: self.events,
            probe_gap: 0.0,
            spectral_radius: f64::NAN,
            worst_gain: f64::NAN,
        })
    }
}

/// The guards crossed between x and y (a sub-step of length h from t), each located: the
/// earliest's time inside the sub-step and every guard within `simultaneous` s of it.
fn earliest_group(
    sys: &dyn HybridSystem,
    mode: usize,
    (x, y): (&DVector<f64>, &DVector<f64>),
    t: f64,
    h: f64,
    simultaneous: f64,
) -> Option<(f64, Vec<usize>)> {
    let crossed = crossings(sys, mode, x, y);
    if crossed.is_empty() {
        return None;
    }
    let none = DMatrix::zeros(x.len(), 0);
    let located: Vec<(usize, f64)> = crossed
        .iter()
        .map(|&i| (i, locate(sys, mode, i, (x, &none, y), t, h)))
        .collect();
    let first = located.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let group = located
        .iter()
        .filter(|p| p.1 <= first + simultaneous)
        .map(|p| p.0)
        .collect();
    Some((first, group))
}

/// One pass at step `dt` (no probe check); `along` a direction d: every simultaneous group
/// taken in the order d gives it (one piece, the JVP's).
fn solve(
    sys: &dyn HybridSystem,
    (x0, mode0): (&DVector<f64>, usize),
    t0: f64,
    t1: f64,
    opts: &HybridOptions,
    along: Option<&DVector<f64>>,
) -> Result<HybridSolution> {
    let mut run = Run::new(x0, mode0);
    let mut t = t0;
    let mut steps = 0u64;
    while t < t1 {
        steps += 1;
        step_cap("hybrid_jacobian", steps, opts.max_steps, t, t1)?;
        let h = opts.dt.min(t1 - t);
        let mut done = 0.0;
        let mut fired = 0usize;
        loop {
            let rest = h - done;
            let (y, phi_y) = rk4(sys, run.mode, &run.x, &run.phi, rest);
            let found = earliest_group(
                sys,
                run.mode,
                (&run.x, &y),
                t + done,
                rest,
                opts.simultaneous,
            );
            let Some((s, group)) = found else {
                run.x = y;
                run.phi = phi_y;
                break;
            };
            fired += 1;
            if fired > MAX_EVENTS_PER_STEP {
                return Err(FerroError::TwoEventsInOneStep {
                    t,
                    dt: h,
                    first: run.events.last().map_or(group[0], |e| e.guard),
                    second: group[0],
                });
            }
            let (xm, phim) = rk4(sys, run.mode, &run.x, &run.phi, s);
            let te = t + done + s;
            let (mode, x) = (run.mode, xm.clone());
            match run.fire(sys, &group, (xm, phim, te), opts, along) {
                Err(e @ FerroError::SetValued { .. }) => {
                    return Err(outcomes_at_t1(sys, e, (mode, &x), te, t1, opts));
                }
                r => r?,
            }
            done += s;
            if !(done < h) {
                break;
            }
        }
        t = if t1 - t <= opts.dt { t1 } else { t + h };
    }
    run.finish(opts, t)
}

/// A [`FerroError::SetValued`] found at `te` (from `xm` in `mode`) restated with each order's
/// x(t1), each order's outcome run on to t1 (kept as it was where that run is refused).
fn outcomes_at_t1(
    sys: &dyn HybridSystem,
    e: FerroError,
    (mode, xm): (usize, &DVector<f64>),
    te: f64,
    t1: f64,
    opts: &HybridOptions,
) -> FerroError {
    let FerroError::SetValued { t, orders, .. } = e else {
        return e;
    };
    let later = HybridOptions {
        probe_rtol: 0.0,
        ..*opts
    };
    let mut outcomes = Vec::new();
    for o in &orders {
        let Ok((m, x, _, _)) = pieces::apply_order(sys, (mode, xm), o, te, opts.graze_speed) else {
            return e_again(t, orders, xm);
        };
        let end = if te < t1 {
            solve(sys, (&x, m), te, t1, &later, None).map(|s| s.x)
        } else {
            Ok(x)
        };
        match end {
            Ok(x) => outcomes.push(x.iter().copied().collect::<Vec<f64>>()),
            Err(_) => return e_again(t, orders, xm),
        }
    }
    let spread = outcomes
        .iter()
        .map(|x| {
            x.iter()
                .zip(&outcomes[0])
                .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()))
        })
        .fold(0.0_f64, f64::max);
    FerroError::SetValued {
        t,
        orders,
        outcomes,
        spread,
        at: format!("at t1 = {t1} s"),
    }
}

/// The set-valued refusal said at the event (when an order's run to t1 is itself refused).
fn e_again(t: f64, orders: Vec<Vec<usize>>, xm: &DVector<f64>) -> FerroError {
    FerroError::SetValued {
        t,
        orders,
        outcomes: vec![xm.iter().copied().collect()],
        spread: f64::NAN,
        at: "(an order's run on to t1 was refused; the state before the events shown)".into(),
    }
}

/// Whole-vs-split residual above which a system is refused with `HiddenState`, relative
/// to max(1, max|x0|).
pub const HIDDEN_STATE_RTOL: f64 = 1e-9;

/// Hidden state, *measured* (whether the system declares it or not), two ways:
///
/// - a repeated call must repeat: RK4 over 2h from x0, twice, must agree to
///   `HIDDEN_STATE_RTOL` (a memoryless flow gives the same bits);
/// - the flow over 2h taken whole must equal the flow taken as two halves. For a memoryless
///   flow the residual is RK4's local error, O(h⁵): it falls at least 16× (order ≥ 4) when h
///   is halved. A flow that remembers its previous call (a warm-started solver, a cache)
///   leaves a residual that does not fall like that. Refused when the residual exceeds
///   `HIDDEN_STATE_RTOL` and falls by less than 16× from h to h/2.
///
/// Residuals are relative to max(1, max|x0|); stepped in `mode0` without events.
fn measured_hidden_state(
    sys: &dyn HybridSystem,
    x0: &DVector<f64>,
    mode0: usize,
    h: f64,
) -> Option<String> {
    let phi = DMatrix::identity(x0.len(), x0.len());
    let scale = x0.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
    let split_gap = |h: f64| {
        let (whole, _) = rk4(sys, mode0, x0, &phi, 2.0 * h);
        let (half, _) = rk4(sys, mode0, x0, &phi, h);
        let (split, _) = rk4(sys, mode0, &half, &phi, h);
        ((&whole - &split).amax() / scale, whole)
    };
    let (gap, whole) = split_gap(h);
    let (again, _) = rk4(sys, mode0, x0, &phi, 2.0 * h);
    let repeat_gap = (&whole - &again).amax() / scale;
    if repeat_gap > HIDDEN_STATE_RTOL {
        return Some(format!(
            "measured: the same flow call (2h = {:e} s from x0) repeated differs by {repeat_gap:.3e} \
             (relative to max(1, |x0|); a memoryless flow repeats to {HIDDEN_STATE_RTOL:e})",
            2.0 * h
        ));
    }
    if gap > HIDDEN_STATE_RTOL {
        let (gap_half, _) = split_gap(0.5 * h);
        // NaN (a flow that failed) is left to the solve, which reports it.
        if gap_half * MEMORYLESS_FALL > gap {
            return Some(format!(
                "measured: the flow over 2h whole and as two halves differs by {gap:.3e} at h = {h:e} s and \
                 {gap_half:.3e} at h/2 (relative to max(1, |x0|)): above {HIDDEN_STATE_RTOL:e} and not falling \
                 {MEMORYLESS_FALL}x like RK4's local error"
            ));
        }
    }
    None
}

/// How much RK4's local error (O(h⁵)) falls at least when h halves, with margin for the
/// pre-asymptotic regime (2⁴ = 16, not 32).
const MEMORYLESS_FALL: f64 = 16.0;

/// The checks every answer starts with: declared and measured hidden state, the system's
/// parameters, the options, t0 < t1 and x0's length.
fn admit(
    sys: &dyn HybridSystem,
    (x0, mode0): (&DVector<f64>, usize),
    t0: f64,
    t1: f64,
    opts: &HybridOptions,
) -> Result<()> {
    if let Some(what) = sys.hidden_state() {
        return Err(FerroError::HiddenState {
            system: sys.name(),
            what,
        });
    }
    sys.validate()?;
    positive("dt", opts.dt)?;
    positive("graze_speed", opts.graze_speed)?;
    if !(opts.simultaneous >= 0.0 && opts.simultaneous.is_finite()) {
        return Err(FerroError::InvalidParameter {
            name: "simultaneous",
            value: opts.simultaneous,
            limit: "must be finite and >= 0 (s)".into(),
        });
    }
    crate::error::finite("t0", t0)?;
    positive("t1 - t0", t1 - t0)?;
    if x0.len() != sys.dim() || x0.iter().any(|v| !v.is_finite()) {
        return Err(FerroError::InvalidParameter {
            name: "x0",
            value: x0.len() as f64,
            limit: format!("must hold {} finite numbers", sys.dim()),
        });
    }
    if let Some(what) = measured_hidden_state(sys, x0, mode0, opts.dt) {
        return Err(FerroError::HiddenState {
            system: sys.name(),
            what,
        });
    }
    Ok(())
}

/// The run at dt, checked against the run at dt/2 (`probe_rtol`): every piece's matrix must
/// move by at most `probe_rtol·max(1, max|M|)`, and the events must repeat.
fn probed(
    sys: &dyn HybridSystem,
    start: (&DVector<f64>, usize),
    t0: f64,
    t1: f64,
    opts: &HybridOptions,
    along: Option<&DVector<f64>>,
) -> Result<HybridSolution> {
    let mut sol = solve(sys, start, t0, t1, opts, along)?;
    if opts.probe_rtol > 0.0 {
        let halved = HybridOptions {
            dt: 0.5 * opts.dt,
            ..*opts
        };
        let half = solve(sys, start, t0, t1, &halved, along)?;
        let (a, b) = (&sol.pieces.list, &half.pieces.list);
        let gap = a
            .iter()
            .zip(b)
            .map(|(p, q)| (&p.matrix - &q.matrix).amax())
            .fold(0.0_f64, f64::max);
        let scale = a.iter().fold(1.0_f64, |m, p| m.max(p.matrix.amax()));
        let tolerance = opts.probe_rtol * scale;
        sol.probe_gap = gap;
        if !(gap <= tolerance) || a.len() != b.len() || half.events.len() != sol.events.len() {
            return Err(FerroError::ProbeDependent {
                probe: "dt/2".into(),
                gap,
                tolerance,
            });
        }
    }
    if sol.pieces.agree() {
        sol.spectral_radius = crate::numeric::svd::spectral_radius(&sol.jacobian);
        sol.worst_gain = sol.jacobian.singular_values().max();
    }
    Ok(sol)
}

/// The derivative dx(t1)/dx(t0) of a hybrid system through its events (see the module
/// docs): `jacobian` where the pieces agree, the pieces always.
pub fn hybrid_jacobian(
    sys: &dyn HybridSystem,
    x0: &DVector<f64>,
    mode0: usize,
    t0: f64,
    t1: f64,
    opts: &HybridOptions,
) -> Result<HybridSolution> {
    admit(sys, (x0, mode0), t0, t1, opts)?;
    probed(sys, (x0, mode0), t0, t1, opts, None)
}

/// The directional derivative of x(t1) along a perturbation `d` of x(t0), with every
/// simultaneous group taken in the order d gives it (the polynomial-time action: no orders
/// enumerated, any number of simultaneous events). The same checks as [`hybrid_jacobian`].
pub fn hybrid_jvp(
    sys: &dyn HybridSystem,
    x0: &DVector<f64>,
    mode0: usize,
    t0: f64,
    t1: f64,
    d: &DVector<f64>,
    opts: &HybridOptions,
) -> Result<DVector<f64>> {
    admit(sys, (x0, mode0), t0, t1, opts)?;
    if d.len() != x0.len() || d.iter().any(|v| !v.is_finite()) {
        return Err(FerroError::InvalidParameter {
            name: "d",
            value: d.len() as f64,
            limit: format!(
                "must hold {} finite numbers (a perturbation of x0)",
                x0.len()
            ),
        });
    }
    let sol = probed(sys, (x0, mode0), t0, t1, opts, Some(d))?;
    Ok(&sol.pieces.list[0].matrix * d)
}
