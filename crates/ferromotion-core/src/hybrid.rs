//! `hybrid_jacobian`: the Jacobian of a hybrid system's flow through its events, or a
//! typed refusal when no honest Jacobian exists.
//!
//! A hybrid system declares, per mode, a smooth flow `x' = f(x)`, guards `g_i(x)` (an
//! event fires when one crosses from > 0 to <= 0) and resets `x+ = R_i(x-)`. Stepping with
//! a fixed step h, RK4 carries x and the flow Jacobian `Phi' = (df/dx)·Phi`. When a guard
//! changes sign across a step, the event is bracketed to that step, located inside it by
//! root-finding on the RK4 sub-step length, and the Jacobian passes through the saltation
//! matrix
//!
//! ```text
//! Xi = DR + (f+ - DR·f-)·∇gᵀ / (∇gᵀ·f-)
//! ```
//!
//! (f- before the reset, f+ after it, both at the event). The denominator is the guard
//! speed: as it goes to zero Xi blows up like 1/speed, so an event slower than
//! `graze_speed` is refused (grazing), saying how large Xi would have been. Also
//! refused: hidden state (a flow that depends on something outside x, such as a
//! warm-started solver), whether the system declares it or not: it is also *measured* on
//! every system (a repeated call must repeat; the flow over 2h whole and as two halves must
//! agree to `HIDDEN_STATE_RTOL` or fall like RK4's local error); two events inside one
//! step; and an answer that moves by more than `probe_rtol` when recomputed with half the
//! step. The answer carries J's spectral radius and worst-case gain (largest singular value).
//!
//! A system known only as a step function `step(x, dt) -> x` (a simulator) is qualified by
//! [`black_box::step_jacobian`], with every derivative measured on the step itself.

pub mod black_box;
pub use black_box::{
    step_jacobian, step_jacobian_watched, HalfDt, Joint, JointKind, Manifold, PartialPass,
    StepOptions, StepOutcome, StepPartial, StepProgress, StepSolution, StepSystem, StepWatch,
};

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

fn check_drop_like(gravity: f64, restitution: f64) -> Result<()> {
    positive("gravity", gravity)?;
    if !(restitution.is_finite() && (0.0..=1.0).contains(&restitution)) {
        return Err(FerroError::InvalidParameter {
            name: "restitution",
            value: restitution,
            limit: "must be in [0, 1]".into(),
        });
    }
    Ok(())
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
}

impl Default for HybridOptions {
    fn default() -> Self {
        HybridOptions {
            dt: 1e-3,
            graze_speed: crate::physics::contact::rigid::DEFAULT_GRAZE_SPEED,
            probe_rtol: 1e-6,
            max_steps: crate::physics::integrate::DEFAULT_MAX_STEPS,
        }
    }
}

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
    /// dx(t1)/dx(t0).
    pub jacobian: DMatrix<f64>,
    /// Events in order.
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
            let leaving = || sys.guard_gradient(mode, i, x).dot(&sys.rhs(mode, x)) > 0.0;
            (g0 > 0.0 || leaving()) && sys.guard(mode, i, y) <= 0.0
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

/// The guard a step from t of length h crossed, if any; two in one step are refused
/// (`TwoEventsInOneStep`): the analytic and the black-box drivers share it.
fn one_crossing(crossed: &[usize], t: f64, h: f64) -> Result<Option<usize>> {
    match crossed {
        [] => Ok(None),
        [i] => Ok(Some(*i)),
        [first, second, ..] => Err(FerroError::TwoEventsInOneStep {
            t,
            dt: h,
            first: *first,
            second: *second,
        }),
    }
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

/// One pass at step `dt` (no probe check).
fn solve(
    sys: &dyn HybridSystem,
    x0: &DVector<f64>,
    mode0: usize,
    t0: f64,
    t1: f64,
    opts: &HybridOptions,
) -> Result<HybridSolution> {
    let n = sys.dim();
    let mut x = x0.clone();
    let mut phi = DMatrix::identity(n, n);
    let mut mode = mode0;
    let mut t = t0;
    let mut events = Vec::new();
    let mut steps = 0u64;
    while t < t1 {
        steps += 1;
        step_cap("hybrid_jacobian", steps, opts.max_steps, t, t1)?;
        let h = opts.dt.min(t1 - t);
        let (y, phi_y) = rk4(sys, mode, &x, &phi, h);
        let crossed = crossings(sys, mode, &x, &y);
        let Some(i) = one_crossing(&crossed, t, h)? else {
            x = y;
            phi = phi_y;
            t = if t1 - t <= opts.dt { t1 } else { t + h };
            continue;
        };
        let hi = locate(sys, mode, i, (&x, &phi, &y), t, h);
        let (xm, phim) = rk4(sys, mode, &x, &phi, hi);
        let (event, xp, salt) = event_at(sys, mode, i, &xm, t + hi, opts.graze_speed)?;
        let new_mode = event.mode_after;
        events.push(event);
        // Finish the step from the event in the new mode; a second event here is refused.
        let rest = h - hi;
        let phi_plus = salt * phim;
        let (y2, phi2) = rk4(sys, new_mode, &xp, &phi_plus, rest);
        if let Some(&j) = crossings(sys, new_mode, &xp, &y2).first() {
            return Err(FerroError::TwoEventsInOneStep {
                t,
                dt: h,
                first: i,
                second: j,
            });
        }
        x = y2;
        phi = phi2;
        mode = new_mode;
        t = if t1 - t <= opts.dt { t1 } else { t + h };
    }
    if !(x.iter().chain(phi.iter()).all(|v| v.is_finite())) {
        return Err(FerroError::NonFinite {
            what: "hybrid_jacobian",
            detail: format!("at t = {t} s"),
        });
    }
    Ok(HybridSolution {
        x,
        mode,
        jacobian: phi,
        events,
        probe_gap: 0.0,
        spectral_radius: f64::NAN,
        worst_gain: f64::NAN,
    })
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

/// The Jacobian dx(t1)/dx(t0) of a hybrid system through its events (see the module docs).
pub fn hybrid_jacobian(
    sys: &dyn HybridSystem,
    x0: &DVector<f64>,
    mode0: usize,
    t0: f64,
    t1: f64,
    opts: &HybridOptions,
) -> Result<HybridSolution> {
    if let Some(what) = sys.hidden_state() {
        return Err(FerroError::HiddenState {
            system: sys.name(),
            what,
        });
    }
    sys.validate()?;
    positive("dt", opts.dt)?;
    positive("graze_speed", opts.graze_speed)?;
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
    let mut sol = solve(sys, x0, mode0, t0, t1, opts)?;
    if opts.probe_rtol > 0.0 {
        let half = solve(
            sys,
            x0,
            mode0,
            t0,
            t1,
            &HybridOptions {
                dt: 0.5 * opts.dt,
                ..*opts
            },
        )?;
        let gap = (&sol.jacobian - &half.jacobian)
            .iter()
            .fold(0.0_f64, |m, v| m.max(v.abs()));
        let scale = sol.jacobian.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
        let tolerance = opts.probe_rtol * scale;
        sol.probe_gap = gap;
        if gap > tolerance || half.events.len() != sol.events.len() {
            return Err(FerroError::ProbeDependent {
                probe: "dt/2".into(),
                gap,
                tolerance,
            });
        }
    }
    sol.spectral_radius = sol
        .jacobian
        .complex_eigenvalues()
        .iter()
        .fold(0.0_f64, |m, l| m.max(l.norm()));
    sol.worst_gain = sol.jacobian.singular_values().max();
    Ok(sol)
}

/// The drop as a hybrid system: x = (y, v), one mode, guard y, reset v+ = -e·v-.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
pub struct BouncingDrop {
    /// Gravity, m/s².
    pub gravity: f64,
    /// Restitution.
    pub restitution: f64,
}

impl HybridSystem for BouncingDrop {
    fn name(&self) -> String {
        "bouncing drop".into()
    }
    fn validate(&self) -> Result<()> {
        check_drop_like(self.gravity, self.restitution)
    }
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&self, _: usize, x: &DVector<f64>) -> DVector<f64> {
        DVector::from_vec(vec![x[1], -self.gravity])
    }
    fn rhs_jacobian(&self, _: usize, _: &DVector<f64>) -> DMatrix<f64> {
        DMatrix::from_row_slice(2, 2, &[0.0, 1.0, 0.0, 0.0])
    }
    fn guard_count(&self, _: usize) -> usize {
        1
    }
    fn guard(&self, _: usize, _: usize, x: &DVector<f64>) -> f64 {
        x[0]
    }
    fn guard_gradient(&self, _: usize, _: usize, _: &DVector<f64>) -> DVector<f64> {
        DVector::from_vec(vec![1.0, 0.0])
    }
    fn reset(&self, mode: usize, _: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        (
            mode,
            DVector::from_vec(vec![x[0], -self.restitution * x[1]]),
        )
    }
    fn reset_jacobian(&self, _: usize, _: usize, _: &DVector<f64>) -> DMatrix<f64> {
        DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, -self.restitution])
    }
}

/// A ball bouncing on a plane inclined by `angle` (rad) through the origin:
/// x = (p_x, p_z, v_x, v_z), guard n·p (height above the plane, n its unit normal),
/// reset v+ = v- - (1+e)·(n·v-)·n (frictionless, restitution on the normal part).
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
pub struct SlopeBall {
    /// Gravity, m/s².
    pub gravity: f64,
    /// Restitution on the normal velocity.
    pub restitution: f64,
    /// Inclination of the plane, rad.
    pub angle: f64,
}

impl SlopeBall {
    fn normal(&self) -> (f64, f64) {
        (-libm::sin(self.angle), libm::cos(self.angle))
    }
}

impl HybridSystem for SlopeBall {
    fn name(&self) -> String {
        "ball on a slope".into()
    }
    fn validate(&self) -> Result<()> {
        check_drop_like(self.gravity, self.restitution)?;
        if !(self.angle.is_finite() && self.angle.abs() < std::f64::consts::FRAC_PI_2) {
            return Err(FerroError::InvalidParameter {
                name: "angle",
                value: self.angle,
                limit: "must be finite and strictly between -pi/2 and pi/2 rad".into(),
            });
        }
        Ok(())
    }
    fn dim(&self) -> usize {
        4
    }
    fn rhs(&self, _: usize, x: &DVector<f64>) -> DVector<f64> {
        DVector::from_vec(vec![x[2], x[3], 0.0, -self.gravity])
    }
    fn rhs_jacobian(&self, _: usize, _: &DVector<f64>) -> DMatrix<f64> {
        let mut a = DMatrix::zeros(4, 4);
        a[(0, 2)] = 1.0;
        a[(1, 3)] = 1.0;
        a
    }
    fn guard_count(&self, _: usize) -> usize {
        1
    }
    fn guard(&self, _: usize, _: usize, x: &DVector<f64>) -> f64 {
        let (nx, nz) = self.normal();
        nx * x[0] + nz * x[1]
    }
    fn guard_gradient(&self, _: usize, _: usize, _: &DVector<f64>) -> DVector<f64> {
        let (nx, nz) = self.normal();
        DVector::from_vec(vec![nx, nz, 0.0, 0.0])
    }
    fn reset(&self, mode: usize, _: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        let (nx, nz) = self.normal();
        let vn = nx * x[2] + nz * x[3];
        let k = (1.0 + self.restitution) * vn;
        (
            mode,
            DVector::from_vec(vec![x[0], x[1], x[2] - k * nx, x[3] - k * nz]),
        )
    }
    fn reset_jacobian(&self, _: usize, _: usize, _: &DVector<f64>) -> DMatrix<f64> {
        let (nx, nz) = self.normal();
        let c = 1.0 + self.restitution;
        let mut r = DMatrix::identity(4, 4);
        r[(2, 2)] -= c * nx * nx;
        r[(2, 3)] -= c * nx * nz;
        r[(3, 2)] -= c * nz * nx;
        r[(3, 3)] -= c * nz * nz;
        r
    }
}

/// The drop whose contact is solved by a warm-started iterative solver: its result
/// depends on the previous solve, which x does not carry. `hybrid_jacobian` refuses it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
pub struct WarmStartedDrop(pub BouncingDrop);

impl HybridSystem for WarmStartedDrop {
    fn name(&self) -> String {
        "drop with a warm-started contact solver".into()
    }
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&self, m: usize, x: &DVector<f64>) -> DVector<f64> {
        self.0.rhs(m, x)
    }
    fn rhs_jacobian(&self, m: usize, x: &DVector<f64>) -> DMatrix<f64> {
        self.0.rhs_jacobian(m, x)
    }
    fn guard_count(&self, m: usize) -> usize {
        self.0.guard_count(m)
    }
    fn guard(&self, m: usize, i: usize, x: &DVector<f64>) -> f64 {
        self.0.guard(m, i, x)
    }
    fn guard_gradient(&self, m: usize, i: usize, x: &DVector<f64>) -> DVector<f64> {
        self.0.guard_gradient(m, i, x)
    }
    fn reset(&self, m: usize, i: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        self.0.reset(m, i, x)
    }
    fn reset_jacobian(&self, m: usize, i: usize, x: &DVector<f64>) -> DMatrix<f64> {
        self.0.reset_jacobian(m, i, x)
    }
    fn validate(&self) -> Result<()> {
        self.0.validate()
    }
    fn hidden_state(&self) -> Option<String> {
        Some("the contact impulse is warm-started from the previous step's solve".into())
    }
}

/// `hybrid_jacobian` of the drop arriving at the ground at `speed` (m/s): released from
/// rest at h = v²/(2g), run to the top of its first rebound t1 = (1+e)·v/g with 200
/// steps, using the drop's gravity and its penalty law's stiff-limit restitution. Below
/// `graze_speed` it is refused as grazing, like any other event.
pub fn drop_at_impact_speed(
    drop: &crate::physics::model::Drop,
    speed: f64,
    graze_speed: f64,
) -> Result<DropAtSpeed> {
    let e = crate::physics::contact::penalty::limit_restitution(drop.zeta)?;
    let g = positive("gravity", drop.gravity)?;
    positive("speed", speed)?;
    let height = speed * speed / (2.0 * g);
    let t1 = (1.0 + e) * speed / g;
    let opts = HybridOptions {
        dt: t1 / 200.0,
        graze_speed,
        ..HybridOptions::default()
    };
    let sys = BouncingDrop {
        gravity: g,
        restitution: e,
    };
    let sol = hybrid_jacobian(
        &sys,
        &DVector::from_vec(vec![height, 0.0]),
        0,
        0.0,
        t1,
        &opts,
    )?;
    Ok(DropAtSpeed {
        speed,
        height,
        t1,
        dt: opts.dt,
        x: sol.x.iter().copied().collect(),
        jacobian: sol.jacobian.transpose().iter().copied().collect(),
        events: sol.events,
        probe_gap: sol.probe_gap,
    })
}

/// What [`drop_at_impact_speed`] returns (SI units; the Jacobian row-major).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DropAtSpeed {
    /// Impact speed, m/s.
    pub speed: f64,
    /// Release height, m.
    pub height: f64,
    /// End time (top of the first rebound), s.
    pub t1: f64,
    /// Step used, s.
    pub dt: f64,
    /// x(t1) = [y, v].
    pub x: Vec<f64>,
    /// dx(t1)/dx(0), row-major.
    pub jacobian: Vec<f64>,
    /// The events met.
    pub events: Vec<HybridEvent>,
    /// max |J(dt) - J(dt/2)|.
    pub probe_gap: f64,
}
