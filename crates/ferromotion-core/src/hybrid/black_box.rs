//! Black-box hybrid qualification: the Jacobian of a system given only as a step function.
//!
//! A simulator offers `step(x, dt) -> x` and nothing else: no flow Jacobian, no guard
//! gradient, no reset Jacobian. [`step_jacobian`] qualifies it the way
//! [`hybrid_jacobian`](super::hybrid_jacobian) qualifies a declared system, with every
//! derivative measured on the step function itself. What it differentiates is the
//! **event-located map** at the engine's dt (the `corrected` route's idea,
//! `physics/integrate/corrected.rs`, and the quadruped's located reference,
//! `experiments/quadruped/located.rs`):
//!
//! - **Events.** Optional guards `g_i(x)` (an event when one crosses from > 0 to <= 0
//!   between two step ends) bracket an event to one step of length h; the event is located
//!   inside it by secant and bisection on the sub-step length τ of `step(x, τ)`, to about
//!   1e-15·h. An optional reset `R_i` is then applied by the driver (for a step function,
//!   such as free flight, that does not apply it itself). Without one the step function's
//!   own law changes at the guard (a penalty contact switching on, or off at its release),
//!   and the step decides its law from its start: the run is continued from a state
//!   strictly past the guard's zero (τ moved on by a few ulps if g is exactly 0 there), so
//!   a step deciding on `g < 0` and one deciding on `g <= 0` both take the new law.
//! - **Grid restarted at every event.** After an event the steps of `dt` start from the
//!   event (the last one shortened to end at t1), so the discretisation of each phase does
//!   not depend on where the event fell between grid points: if it did, its error would
//!   vary with x0 on the scale of |v|·dt and the derivative would pick that variation up
//!   (the fixed-step contact map's wrong sign).
//! - **Jacobian.** The located map is continuous in x0 and smooth within one sequence of
//!   events, and every probe of it keeps its mode sequence: each probe's run locates its
//!   own events and starts each segment on the new law's side. J is taken by central
//!   differences of the whole located map (probe policy [`Probe::Relative`]:
//!   `eps·max(|x_j|, 1)`, the core's one helper, `check/fd.rs`), once with `eps` and once
//!   with `eps/2`; they must agree to `probe_rtol` (relative to max(1, max|J|)), and each
//!   probe must fire the same guards in the same order, or the answer is refused as
//!   probe-dependent. The differences carry each event's saltation (the force jump at a
//!   contact's entry, the reset's) with the event time's own dependence on x0.
//! - **Saltation, measured.** At each event `Xi = DR + (f+ - DR·f-)·∇gᵀ / (∇gᵀ·f-)` is
//!   also estimated from the step function: f- = d step(x, s)/ds at s = τ (second-order
//!   one-sided differences before the event), f+ = d step(x+, s)/ds at s = 0+ (after it),
//!   ∇g and DR by central differences. Its guard speed |∇g·f-| below `graze_speed` is
//!   refused as grazing; its largest entry is reported.
//! - **The engine's own dt, said.** The answer is the derivative of the located map *at the
//!   engine's dt*: it approaches the continuous law's derivative as dt shrinks (first order
//!   for a first-order step), and is not that derivative. With `halve_dt` (the default) it
//!   is also computed at dt/2 and the spread max|J(dt) - J(dt/2)| / max(1, max|J(dt)|) is
//!   reported beside it.
//! - **A switch without a guard is located, or refused.** In every segment that begins at
//!   an event without a reset, the step Jacobians of successive steps (central differences)
//!   must change smoothly; a jump means the law changed again inside a step where no guard
//!   locates it (a penalty contact's release, its force back to zero). Where the field is
//!   continuous across it and the jump is one switch, the driver locates it from the step's
//!   own Jacobian and makes it a guard of its own (`black_box/switches.rs`: bracketed to
//!   one step, its surface's normal from the jump, a plane through it armed near its time;
//!   every row locates its own crossing), and computes the answer again with it; located
//!   switches are guards numbered after the declared ones, listed in
//!   [`StepSolution::switches`]. What cannot be located so is refused with
//!   [`FerroError::UnguardedSwitch`], which says why and names the guard to declare.
//! - **Hidden state, measured.** Before anything else, a step function must be a function
//!   of (x, dt) alone: `step(x0, 2h)` called twice, with another call between, must repeat
//!   bit for bit; and `step(x0, 2h)` against `step(step(x0, h), h)` must agree to
//!   [`SPLIT_RTOL`] relative to max(1, max|x0|), or else that split residual must fall at
//!   least [`SPLIT_FALL`]× when h is halved. An honest integrator's split residual is the
//!   difference of its local errors, O(h^(p+1)) for order p ≥ 1, so it falls at least 4×
//!   (Euler) or 32× (RK4): such steps pass. A step biased by memory of an earlier call
//!   (a warm start, a cache) does not repeat, or leaves a residual that does not fall.
//! - **Refused too:** two events in one step and events in adjacent steps (the cells of the
//!   grid t0 + k·dt that hold them: the step does not resolve them apart, a chattering
//!   contact, and a pair of crossings between two step ends could hide there), more than
//!   `max_steps` steps, and a NaN or infinity from the step or a guard.
//!
//! - **Rows, batched.** Every run that does not depend on another (the nominal run, the
//!   ±eps and ±eps/2 probes of every coordinate, the same at dt/2) is a row, written as
//!   sequential code; the scheduler (`black_box/rows.rs`) steps all rows together, asking
//!   the system for one batch per round ([`StepSystem::step_batch`]: the steps of one exact
//!   length, each guard's, each reset's calls). Each row keeps its own event location:
//!   while it locates an event it asks for its own sub-step lengths, and afterwards it
//!   rejoins the others' batches on its own grid. A one-state step function is the same
//!   scheduler with one row per call, in the order the rows are listed; the arithmetic of a
//!   row does not depend on its company, so a batched step that computes each row as its
//!   one-state twin does gives the same bits. Refusals are per row and reported in the
//!   rows' order (the nominal run, then each probe, dt before dt/2), the first one that no
//!   unfinished row can overtake ending the run.
//! - **Lie-group states.** A step function may declare free and ball joints
//!   ([`StepSystem::manifold`], `black_box/manifold.rs`): their quaternions are probed in
//!   the tangent space (MuJoCo's convention: a body-frame rotation vector multiplied on the
//!   right) and J is reported in tangent coordinates, d(x(t1) ⊖ x̄(t1))/dδ with x(t0) =
//!   x̄(t0) ⊕ δ; saltation matrices, the unguarded-switch check and the probe-tolerance
//!   check likewise. A quaternion never leaves the unit sphere.
//! - **A step's precision, declared.** [`StepOptions::precision`] is the unit round-off of
//!   the step's arithmetic (float64 by default; float32 for MuJoCo Warp): the probe, the
//!   probe tolerance and the unguarded-switch check's floor are scaled by the noise it puts
//!   in a difference quotient (`black_box/precision.rs`), the same numbers in float64; the
//!   answer reports them ([`StepSolution::resolution`]).
//! - **Progress, and stopping.** [`step_jacobian_watched`] reports rows done, the work done
//!   and the time left ([`StepProgress`]); an observer's error or a failed batch call stops
//!   it with what finished ([`StepOutcome::Stopped`]).
//!
//! The answer carries J's spectral radius and worst-case gain, as the declared driver's
//! does, and the number of step-function calls it took.

mod link;
mod locate;
mod manifold;
mod measured;
mod missing;
mod partial;
mod precision;
mod rows;
mod run;
mod switches;
mod system;

pub use manifold::{Joint, JointKind, Manifold, UNIT_TOL};
pub use precision::{Resolution, COARSEST, PROBE_NOISE, SWITCH_NOISE};
pub use rows::{Observer, StepProgress, StepWatch, REPORT_EVERY};
pub use switches::{Switch, CLASSIFY_EPS, FIELD_RTOL, MAX_SWITCHES, RANK_ONE, WINDOW};
pub use system::{
    StepOptions, StepSystem, FLOAT32, FLOAT64, SPLIT_FALL, SPLIT_RTOL, SWITCH_FLOOR, SWITCH_RATIO,
};

use super::{HybridSolution, Piece};
use crate::error::{finite, positive, FerroError, Result};
use link::{amax, column, probes, Link};
pub(crate) use missing::fill_missing;
use nalgebra::{DMatrix, DVector};
pub(crate) use partial::{partial, partial_pass, summary};
use rows::{Caller, Cost, Row};
use run::Run;

/// What [`step_jacobian`] returns: the same solution as the declared driver's (mode 0
/// throughout; `probe_gap` is max|J(eps) - J(eps/2)| / max(1, max|J(eps)|) of the
/// event-located map), the measured split residual, the answer at dt/2 and the cost.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSolution {
    /// x(t1), J = dx(t1)/dx(t0), the events, spectral radius and worst gain, at `dt`.
    pub solution: HybridSolution,
    /// |step(x0, 2h) - step(step(x0, h), h)| / max(1, max|x0|) at h = min(dt, (t1-t0)/2).
    pub split_residual: f64,
    /// The same answer at dt/2 (when [`StepOptions::halve_dt`]).
    pub half_dt: Option<HalfDt>,
    /// States stepped, all passes together (the hidden-state measurement, the runs, the
    /// probes, event location, Xi, the unguarded-switch check, dt/2 too): a one-state step
    /// function's calls.
    pub step_calls: u64,
    /// Calls of the step function: `step_calls` for a one-state one, far fewer batched.
    pub batch_calls: u64,
    /// Rows (independent runs) the answer took.
    pub rows: usize,
    /// The switches no guard declared, located from the step's behaviour at dt (their
    /// events are guards `guard_count() + k`).
    pub switches: Vec<Switch>,
    /// The probe and tolerances used, from the step's declared precision
    /// (`black_box/precision.rs`).
    pub resolution: Resolution,
}

/// The answer at dt/2, beside the one at dt.
#[derive(Debug, Clone, PartialEq)]
pub struct HalfDt {
    /// x(t1) at dt/2.
    pub x: DVector<f64>,
    /// J at dt/2.
    pub jacobian: DMatrix<f64>,
    /// Events met at dt/2.
    pub events: usize,
    /// max|J(dt) - J(dt/2)| / max(1, max|J(dt)|): the engine's own discretisation, seen
    /// from one halving (the derivative of the located map is first order in dt for a
    /// first-order step).
    pub spread: f64,
}

/// What [`step_jacobian_watched`] returns: the answer, or what finished before it stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum StepOutcome {
    /// Every row finished: the answer.
    Answered(StepSolution),
    /// Stopped (the observer's error, e.g. Ctrl-C, or a failed batch call) before the end.
    Stopped(StepPartial),
}

/// What finished before the driver stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct StepPartial {
    /// Why it stopped.
    pub cause: FerroError,
    /// The hidden-state measurement, if it finished.
    pub split_residual: Option<f64>,
    /// At dt, then at dt/2 (when [`StepOptions::halve_dt`]).
    pub passes: Vec<PartialPass>,
    /// Rows finished, of all.
    pub rows_done: usize,
    /// Rows in all.
    pub rows_total: usize,
    /// States stepped and calls made so far.
    pub step_calls: u64,
    /// Calls of the step function so far.
    pub batch_calls: u64,
    /// What finished and what did not, in words.
    pub summary: String,
}

/// One step size's rows, as far as they got.
#[derive(Debug, Clone, PartialEq)]
pub struct PartialPass {
    /// The step, s.
    pub dt: f64,
    /// x(t1) of the nominal run, if it finished.
    pub x: Option<DVector<f64>>,
    /// J with the columns whose ±eps probes finished (keeping the nominal run's events),
    /// NaN elsewhere (tangent coordinates); not checked against eps/2.
    pub jacobian: DMatrix<f64>,
    /// The columns filled in.
    pub columns: Vec<usize>,
    /// Rows of this step size not finished.
    pub unfinished: usize,
    /// The first refusal among this step size's finished rows, if any.
    pub refused: Option<FerroError>,
}

/// Where a step size's rows sit in the row list: the nominal run at `start`, then (+, -)
/// per tangent coordinate at eps, then at eps/2 when `halves`.
#[derive(Clone, Copy)]
pub(crate) struct PassLayout {
    dt: f64,
    start: usize,
    halves: bool,
}

/// What the finished rows decide.
enum Verdict<'r> {
    /// Not yet: an unfinished row comes before any refusal.
    Pending,
    /// Every step size's nominal run finished, and some located a switch no guard declared
    /// (in its `found`): the rows are run again with them.
    Found,
    Refused(FerroError),
    /// Every step size's answer.
    Answered(Vec<Answer<'r>>),
}

/// One step size's answer: the nominal run and the derivative's pieces (one, J by central
/// differences of the event-located map, when no events were simultaneous) with probes eps
/// and eps/2.
pub(crate) struct Answer<'r> {
    run: &'r Run,
    dt: f64,
    pieces: super::Pieces,
    /// Pieces no coordinate probe reached, with their cones (measured next by
    /// [`fill_missing`]).
    missing: Vec<measured::Unreached>,
    probe_gap: f64,
}

impl Answer<'_> {
    /// J where the pieces agree; NaN otherwise.
    fn jacobian(&self) -> DMatrix<f64> {
        match self.pieces.jacobian() {
            Ok(j) => j.clone(),
            Err(_) => {
                let n = self.pieces.list.first().map_or(0, |p| p.matrix.ncols());
                DMatrix::from_element(n, n, f64::NAN)
            }
        }
    }
}

/// The problem the rows answer, for reading them.
pub(crate) struct Setup<'a> {
    manifold: &'a Manifold,
    x0: &'a DVector<f64>,
    t0: f64,
    t1: f64,
    opts: &'a StepOptions,
}

pub(crate) type Outs = [Option<Result<Run>>];

/// Row `i`: Ok(None) unfinished, its refusal, or its run.
fn row(outs: &Outs, i: usize) -> Result<Option<&Run>> {
    match &outs[i] {
        None => Ok(None),
        Some(Err(e)) => Err(e.clone()),
        Some(Ok(r)) => Ok(Some(r)),
    }
}

/// One coordinate's probe runs (+, -) and its probe size.
type Ends<'r> = ([&'r Run; 2], f64);

/// The probe runs at `eps` from the rows from `first` on, in order (+, - per tangent
/// coordinate), with the probe sizes; Ok(None) when a row is unfinished before any refusal.
/// A probe that changes which events happen (beyond their order inside a simultaneous
/// group of the nominal run) is refused as probe-dependent.
fn probed<'r>(
    outs: &'r Outs,
    s: &Setup,
    nominal: &'r Run,
    first: usize,
    eps: f64,
) -> Result<Option<Vec<Ends<'r>>>> {
    let (_, sizes) = probes(s.manifold, s.x0, eps);
    let mut out = Vec::with_capacity(sizes.len());
    for (j, &size) in sizes.iter().enumerate() {
        let mut ends = [nominal, nominal];
        for (k, end) in ends.iter_mut().enumerate() {
            let Some(r) = row(outs, first + 2 * j + k)? else {
                return Ok(None);
            };
            if !measured::same_events(nominal, r) {
                return Err(FerroError::ProbeDependent {
                    probe: format!(
                        "probe eps = {eps:e} (relative): it changed the guards fired from {:?} to {:?}",
                        nominal.fired, r.fired
                    ),
                    gap: f64::INFINITY,
                    tolerance: s.opts.probe_rtol,
                });
            }
            *end = r;
        }
        out.push((ends, size));
    }
    Ok(Some(out))
}

/// J by central differences of the probe runs (tangent coordinates at the nominal x(t1)).
fn central(s: &Setup, nominal: &Run, ends: &[Ends]) -> DMatrix<f64> {
    let n = ends.len();
    let mut jac = DMatrix::zeros(n, n);
    for (j, ([p, m], size)) in ends.iter().enumerate() {
        jac.set_column(j, &column(s.manifold, &nominal.x, &p.x, &m.x, *size));
    }
    jac
}

/// One step size's answer from its rows, in the order the sequential driver met them.
fn pass_answer<'r>(outs: &'r Outs, s: &Setup, p: &PassLayout) -> Result<Option<Answer<'r>>> {
    let opts = StepOptions {
        dt: p.dt,
        ..*s.opts
    };
    let Some(nominal) = row(outs, p.start)? else {
        return Ok(None);
    };
    let n = s.manifold.tangent_dim();
    let Some(at_eps) = probed(outs, s, nominal, p.start + 1, opts.eps)? else {
        return Ok(None);
    };
    let half = if p.halves {
        let Some(h) = probed(outs, s, nominal, p.start + 1 + 2 * n, 0.5 * opts.eps)? else {
            return Ok(None);
        };
        Some(h)
    } else {
        None
    };
    let (pieces, missing, gap) = if nominal.groups.is_empty() {
        let jacobian = central(s, nominal, &at_eps);
        let gap = half
            .as_ref()
            .map_or(0.0, |h| amax(&(&jacobian - central(s, nominal, h))));
        (super::Pieces::one(&jacobian), Vec::new(), gap)
    } else {
        let m = simultaneous(s, nominal, &at_eps, half.as_deref(), &opts)?;
        (m.pieces, m.missing, m.gap)
    };
    let scale = pieces
        .list
        .iter()
        .fold(1.0_f64, |m, q| m.max(amax(&q.matrix)));
    let probe_gap = gap / scale;
    if p.halves && probe_gap > opts.probe_rtol {
        return Err(FerroError::ProbeDependent {
            probe: format!(
                "eps/2 on the event-located map from t = {} s to {} s at dt = {:e} s ({} events)",
                s.t0,
                s.t1,
                opts.dt,
                nominal.fired.len()
            ),
            gap: probe_gap,
            tolerance: opts.probe_rtol,
        });
    }
    if !pieces
        .list
        .iter()
        .all(|q| q.matrix.iter().all(|v| v.is_finite()))
    {
        return Err(FerroError::NonFinite {
            what: "hybrid_jacobian (step function)",
            detail: format!("the Jacobian at t1 = {} s", s.t1),
        });
    }
    Ok(Some(Answer {
        run: nominal,
        dt: p.dt,
        pieces,
        missing,
        probe_gap,
    }))
}

/// The pieces of a derivative whose nominal run met simultaneous events, measured from the
/// probes (`black_box/measured.rs`); a probe whose order at eps/2 is not its order at eps is
/// refused as probe-dependent. Returns the pieces and the central columns' gap.
fn simultaneous(
    s: &Setup,
    nominal: &Run,
    at_eps: &[Ends],
    half: Option<&[Ends]>,
    opts: &StepOptions,
) -> Result<measured::Measured> {
    let coords: Vec<measured::Coordinate> = at_eps
        .iter()
        .enumerate()
        .map(|(j, (ends, size))| measured::Coordinate {
            size: *size,
            eps: *ends,
            half: half.map(|h| h[j].0),
        })
        .collect();
    for (j, c) in coords.iter().enumerate() {
        if let Some(h) = c.half {
            if !(measured::same_order(nominal, c.eps[0], h[0])
                && measured::same_order(nominal, c.eps[1], h[1]))
            {
                return Err(FerroError::ProbeDependent {
                    probe: format!(
                        "eps/2 along coordinate {j}: it crossed the simultaneous events in another order than eps"
                    ),
                    gap: f64::INFINITY,
                    tolerance: opts.probe_rtol,
                });
            }
        }
    }
    measured::measure(s.manifold, nominal, &coords, opts.probe_rtol)
}

fn judge<'r>(outs: &'r Outs, s: &Setup, passes: &[PassLayout]) -> Verdict<'r> {
    let nominals: Vec<&Option<Result<Run>>> = passes.iter().map(|p| &outs[p.start]).collect();
    if nominals
        .iter()
        .any(|o| matches!(o, Some(Ok(r)) if r.found.is_some()))
    {
        return if nominals.iter().all(|o| o.is_some()) {
            Verdict::Found
        } else {
            Verdict::Pending
        };
    }
    let mut answers = Vec::with_capacity(passes.len());
    for p in passes {
        match pass_answer(outs, s, p) {
            Ok(Some(a)) => answers.push(a),
            Ok(None) => return Verdict::Pending,
            Err(e) => return Verdict::Refused(e),
        }
    }
    Verdict::Answered(answers)
}

/// The Jacobian dx(t1)/dx(t0) of a black-box step function through its events (see the
/// module docs), or a typed refusal. A batch call's error is returned as it is.
pub fn step_jacobian(
    sys: &dyn StepSystem,
    x0: &DVector<f64>,
    t0: f64,
    t1: f64,
    opts: &StepOptions,
) -> Result<StepSolution> {
    match step_jacobian_watched(sys, x0, t0, t1, opts, StepWatch::default())? {
        StepOutcome::Answered(s) => Ok(s),
        StepOutcome::Stopped(p) => Err(p.cause),
    }
}

/// The checks on the arguments: the options, t0 < t1, x0 (its length, finite, its
/// quaternions unit), the batch size; the state space.
fn validate(
    sys: &dyn StepSystem,
    x0: &DVector<f64>,
    t0: f64,
    t1: f64,
    opts: &StepOptions,
) -> Result<Manifold> {
    positive("dt", opts.dt)?;
    positive("graze_speed", opts.graze_speed)?;
    positive("eps", opts.eps)?;
    positive("time_eps", opts.time_eps)?;
    finite("t0", t0)?;
    positive("t1 - t0", t1 - t0)?;
    if x0.len() != sys.dim() || sys.dim() == 0 || x0.iter().any(|v| !v.is_finite()) {
        return Err(FerroError::InvalidParameter {
            name: "x0",
            value: x0.len() as f64,
            limit: format!("must hold {} finite numbers", sys.dim()),
        });
    }
    if sys.batch_rows() == 0 {
        return Err(FerroError::InvalidParameter {
            name: "batch",
            value: 0.0,
            limit: "at least 1 state per call (or every row at once)".into(),
        });
    }
    let manifold = Manifold::new(sys.dim(), &sys.manifold())?;
    if let Some((w, norm)) = manifold.off_sphere(x0) {
        return Err(FerroError::InvalidParameter {
            name: "x0",
            value: norm,
            limit: format!(
                "the quaternion x0[{w}..{}] must be unit (within {UNIT_TOL:e})",
                w + 4
            ),
        });
    }
    Ok(manifold)
}

/// The hidden-state measurement, as one row alone: the split residual, or what finished
/// when it was stopped.
fn hidden_state(
    sys: &dyn StepSystem,
    manifold: &Manifold,
    x0: &DVector<f64>,
    (t0, t1): (f64, f64),
    opts: &StepOptions,
    cost: &mut Cost,
) -> Result<std::result::Result<f64, StepPartial>> {
    let caller = Caller::default();
    let h = opts.dt.min(0.5 * (t1 - t0));
    let l = Link {
        sys,
        manifold,
        caller: caller.clone(),
        switches: &[],
    };
    let hidden = Row {
        fut: Box::pin(
            async move { run::measure_hidden_state(&l, x0, (h, t0), opts.precision).await },
        ),
        caller,
        weight: 1.0,
    };
    let ran = rows::drive(
        sys,
        vec![hidden],
        sys.batch_rows(),
        &mut StepWatch::default(),
        cost,
        |_| false,
    );
    match (ran.stopped, ran.outs.into_iter().next().flatten()) {
        (None, Some(r)) => Ok(Ok(r?)),
        (cause, _) => {
            let cause = cause.unwrap_or_else(|| FerroError::Scenario("stopped".into()));
            Ok(Err(partial(cause, None, &[], &[], cost)))
        }
    }
}

/// [`step_jacobian`], watched: progress reported to `watch`, and stopped with what finished
/// when its observer (or a batch call) returns an error.
pub fn step_jacobian_watched(
    sys: &dyn StepSystem,
    x0: &DVector<f64>,
    t0: f64,
    t1: f64,
    opts: &StepOptions,
    mut watch: StepWatch<'_>,
) -> Result<StepOutcome> {
    let manifold = validate(sys, x0, t0, t1, opts)?;
    // The probe and the checks' tolerances scaled by the step's precision (the same options
    // in float64).
    let resolution = precision::resolve(opts)?;
    let opts = &precision::resolved(opts, &resolution);
    let cap = sys.batch_rows();
    let mut cost = Cost::default();
    // The hidden-state measurement first, alone: a step with memory is refused before
    // anything else is spent on it.
    let split_residual = match hidden_state(sys, &manifold, x0, (t0, t1), opts, &mut cost)? {
        Ok(r) => r,
        Err(stopped) => return Ok(StepOutcome::Stopped(stopped)),
    };
    let setup = Setup {
        manifold: &manifold,
        x0,
        t0,
        t1,
        opts,
    };
    // Per step size, the switches located so far; the rows run again while the nominal
    // runs locate new ones.
    let passes = if opts.halve_dt { 2 } else { 1 };
    let mut found: Vec<Vec<Switch>> = vec![Vec::new(); passes];
    let (layout, ran, total) = loop {
        let (layout, rows) = probe_rows(sys, &manifold, x0, (t0, t1), opts, &found);
        let total = rows.len();
        let ran = rows::drive(sys, rows, cap, &mut watch, &mut cost, |outs| {
            !matches!(judge(outs, &setup, &layout), Verdict::Pending)
        });
        if ran.stopped.is_none() {
            if let Verdict::Found = judge(&ran.outs, &setup, &layout) {
                for (k, p) in layout.iter().enumerate() {
                    if let Some(Ok(r)) = &ran.outs[p.start] {
                        found[k].extend(r.found.clone());
                    }
                }
                continue;
            }
        }
        break (layout, ran, total);
    };
    if let Some(cause) = ran.stopped {
        let done = ran.outs.iter().filter(|o| o.is_some()).count();
        let passes: Vec<PartialPass> = layout
            .iter()
            .map(|p| partial_pass(&ran.outs, &setup, p, manifold.tangent_dim()))
            .collect();
        let mut part = partial(cause, Some(split_residual), &passes, &ran.outs, &cost);
        (part.rows_done, part.rows_total) = (done, total);
        part.summary = summary(&part);
        return Ok(StepOutcome::Stopped(part));
    }
    let mut answers = match judge(&ran.outs, &setup, &layout) {
        Verdict::Answered(a) => a,
        Verdict::Refused(e) => return Err(e),
        Verdict::Pending | Verdict::Found => {
            unreachable!("every row finished, nothing new found")
        }
    };
    if let Some(cause) = fill_missing(sys, &setup, &mut answers, &found, &mut watch, &mut cost)? {
        let passes: Vec<PartialPass> = layout
            .iter()
            .map(|p| partial_pass(&ran.outs, &setup, p, manifold.tangent_dim()))
            .collect();
        let mut part = partial(cause, Some(split_residual), &passes, &ran.outs, &cost);
        part.summary = summary(&part);
        return Ok(StepOutcome::Stopped(part));
    }
    let mut out = solution(answers, split_residual, &cost, (total, resolution));
    out.switches = found.swap_remove(0);
    Ok(StepOutcome::Answered(out))
}

/// Every run of every step size, as rows: the nominal run, then (+, -) per tangent
/// coordinate at eps, then at eps/2; and where each step size's rows sit.
fn probe_rows<'a>(
    sys: &'a dyn StepSystem,
    manifold: &'a Manifold,
    x0: &DVector<f64>,
    (t0, t1): (f64, f64),
    opts: &StepOptions,
    found: &'a [Vec<Switch>],
) -> (Vec<PassLayout>, Vec<Row<'a, Run>>) {
    let link = |caller: &Caller, pass: usize| Link {
        sys,
        manifold,
        caller: caller.clone(),
        switches: &found[pass],
    };
    let mut dts = vec![opts.dt];
    if opts.halve_dt {
        dts.push(0.5 * opts.dt);
    }
    let halves = opts.probe_rtol > 0.0;
    let mut layout = Vec::new();
    let mut rows = Vec::new();
    for (pass, &dt) in dts.iter().enumerate() {
        let o = StepOptions { dt, ..*opts };
        layout.push(PassLayout {
            dt,
            start: rows.len(),
            halves,
        });
        let mut starts = vec![(x0.clone(), true)];
        for eps in [o.eps, 0.5 * o.eps]
            .into_iter()
            .take(if halves { 2 } else { 1 })
        {
            starts.extend(probes(manifold, x0, eps).0.into_iter().map(|p| (p, false)));
        }
        for (x, nominal) in starts {
            let caller = Caller::default();
            let l = link(&caller, pass);
            rows.push(Row {
                fut: Box::pin(locate::row_run(l, x, t0, t1, o, nominal)),
                caller,
                weight: (t1 - t0) / dt,
            });
        }
    }
    (layout, rows)
}

/// The answer at dt, with the one at dt/2 beside it.
fn solution(
    answers: Vec<Answer>,
    split_residual: f64,
    cost: &Cost,
    (rows, resolution): (usize, Resolution),
) -> StepSolution {
    let mut answers = answers.into_iter();
    let at = answers.next().expect("the answer at dt");
    let half_dt = answers.next().map(|h| HalfDt {
        x: h.run.x.clone(),
        spread: spread(&at.pieces, &h.pieces),
        jacobian: h.jacobian(),
        events: h.run.events.len(),
    });
    let jac = at.jacobian();
    let (mut spectral_radius, mut worst_gain) = (f64::NAN, f64::NAN);
    if at.pieces.agree() {
        spectral_radius = crate::numeric::svd::spectral_radius(&jac);
        worst_gain = jac.singular_values().max();
    }
    StepSolution {
        solution: HybridSolution {
            x: at.run.x.clone(),
            mode: 0,
            pieces: at.pieces,
            jacobian: jac,
            events: at.run.events.clone(),
            probe_gap: at.probe_gap,
            spectral_radius,
            worst_gain,
        },
        split_residual,
        half_dt,
        step_calls: cost.states,
        batch_calls: cost.calls,
        rows,
        switches: Vec::new(),
        resolution,
    }
}

/// max|M(dt) - M(dt/2)| over the pieces of the same orders, relative to max(1, max|M(dt)|)
/// (infinite when dt/2 met other pieces).
fn spread(at: &super::Pieces, half: &super::Pieces) -> f64 {
    let scale = at.list.iter().fold(1.0_f64, |m, p| m.max(amax(&p.matrix)));
    at.list
        .iter()
        .map(|p| {
            half.list
                .iter()
                .find(|q| q.orders == p.orders)
                .map_or(f64::INFINITY, |q| amax(&(&p.matrix - &q.matrix)))
        })
        .fold(0.0_f64, f64::max)
        / scale
}
