//! The two-axis comparison over penalty stiffness: forward fidelity and gradient accuracy.
//!
//! Both laws start from the same state (the trot's first instant, feet `clearance` above
//! the ground, trunk moving forward) and run one gait period at `dt`. Nothing in a row is
//! measured against the other law.
//!
//! **Forward fidelity** (docs/model.md §8), per law: the largest penetration (m), the largest slip
//! speed of a foot the law says is sticking (m/s; the tangential constraint violation),
//! the net work of the contact impulses (J) and the mechanical energy at start and end,
//! and the distance of the trunk's path (m, max over the step times) to the *same law's*
//! run at `dt/refinement` — how far the step is from what the law converges to. The
//! distance between the two laws is reported for information only.
//!
//! **Gradient accuracy**, per law: the one-period Jacobian of the trunk's final state
//! `(x, z, pitch, ẋ, ż, pitch rate)` with respect to three inputs — the initial trunk
//! height z0 (moves every touchdown in time: the channel the drop is about), the initial
//! forward speed ẋ0 (loads friction: sticking vs sliding) and the PD stiffness kp (a
//! control parameter, what a policy optimiser differentiates). The law's own derivative is
//! the forward-mode tangent through every step ([`super::step::propagate_tangent`]). The
//! reference shares none of that machinery: central differences of whole rollouts,
//! `D(ε) = (y(+ε) - y(-ε))/2ε`. ε starts at 1e-3 (relative to 1 m, 1 m/s and the nominal
//! kp), is quartered while the per-step contact-mode sequence at +ε or -ε differs from the
//! nominal one, then halved; the first two consecutive probes that both keep the sequence
//! and agree to `probe_tol` give the reference (the smaller probe's D). A column that never
//! gets there down to `min_probe` is reported as not certified and left out of the errors.
//! Three numbers per law:
//!
//! - `tangent_error`: the tangent against that reference (is it the derivative of the map
//!   the simulator actually runs?);
//! - `typical_probe_error`: `D(1e-4)` — a simulator-typical probe — against the reference
//!   (how rough the map is at practical probe sizes, i.e. what finite differences or a
//!   smoothed gradient would see);
//! - `converged_error` (optional, expensive): the tangent against probe-stable central
//!   differences of the law run at `dt/refinement`, with probes kept inside one *event*
//!   sequence (the ordered list of mode changes; the step at which each happens may move) —
//!   how far the gradient at dt is from the gradient of the same scheme converged in dt;
//!   `refined_tangent_error` checks the law's own tangent at dt/refinement against the same
//!   reference, and `refined_tangent_spread` compares the tangents at dt/(refinement/2) and
//!   dt/refinement (is the reference itself settled?). Caveat for the penalty law: the
//!   probes that pass this test are usually far below |v|·dt/refinement, so the reference is
//!   the derivative of the refined *discrete* map and, like every fixed-step tangent, lacks
//!   the saltation of the push-only force's jump at touchdown (the drop's lesson, docs/model.md §2–3);
//!   where a passing probe does span step shifts, `refined_tangent_error` shows the gap. The
//!   rigid law's discrete map is continuous in the state (the gap enters the LCP as φ/dt),
//!   so its refined derivative carries the touchdown timing.
//!
//! Errors are column-wise `|J_c - R_c|₂ / |R_c|₂` (rows mix m, rad, m/s, rad/s), the
//! largest over the three columns.

use super::model::{QuadState, Quadruped, NDOF, NFEET};
use super::step::{propagate_tangent, step, ContactLaw, ContactMode, PenaltyContact, Tangent};
use crate::error::{positive, FerroError, Result};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

/// The Jacobian's inputs (columns): initial trunk height (m), initial forward speed (m/s),
/// PD stiffness (N·m/rad).
pub const INPUTS: [&str; 3] = ["z0", "xdot0", "kp"];
/// The Jacobian's outputs (rows): the trunk's final x (m), z (m), pitch (rad), ẋ (m/s),
/// ż (m/s), pitch rate (rad/s).
pub const OUTPUTS: [&str; 6] = ["x", "z", "pitch", "xdot", "zdot", "pitch_rate"];

/// Configuration of the comparison. Defaults: the default [`Quadruped`], one 0.5 s
/// period at dt = 1 ms (500 steps; the converged runs 50,000), stiffness 1e3..1e7 N/m per
/// foot, damping ratio 0.5 of a 0.2 kg reference mass, a landing from 1 cm at 0.3 m/s.
///
/// Why 0.2 kg: the mass that rides a foot's contact spring during an impact is the foot's
/// effective mass `1/(J_n M⁻¹ J_nᵀ)`, 0.16–0.24 kg here
/// ([`Quadruped::foot_effective_masses`]), not the trunk. Damping sized on half the robot
/// (8.6 kg) would make the foot 3.7× overdamped and the explicit damper unstable
/// (c·dt/m_foot > 2) from k = 1e4 N/m up at dt = 1 ms; with 0.2 kg the foot-level ratio
/// is the stated 0.5 and the law is stable up to about k = 1e5 N/m at that step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QuadrupedExperiment {
    /// The robot, its controller and its ground.
    pub robot: Quadruped,
    /// Fixed step, s.
    pub dt: f64,
    /// Horizon, s (a whole number of steps; default one gait period).
    pub t_final: f64,
    /// The converged runs use dt / refinement.
    pub refinement: u32,
    /// Penalty stiffness values, N/m per foot.
    pub stiffness: Vec<f64>,
    /// Damping ratio ζ of the penalty law (c = b = 2 ζ sqrt(k m_ref)).
    pub damping_ratio: f64,
    /// m_ref of the penalty damping, kg.
    pub reference_mass: f64,
    /// Initial foot clearance, m.
    pub clearance: f64,
    /// Initial forward trunk speed, m/s.
    pub speed: f64,
    /// The simulator-typical relative probe of `typical_probe_error`.
    pub typical_probe: f64,
    /// Agreement `|D(ε) - D(ε/2)|/|D(ε/2)|` a probe-stable column must reach.
    pub probe_tol: f64,
    /// Smallest relative probe tried before a column is declared not probe-stable.
    pub min_probe: f64,
    /// Also compute `converged_error` (about 20–60 rollouts at dt/refinement per law).
    pub converged_gradient: bool,
    /// Cap on the steps of one rollout.
    pub max_steps: u64,
}

impl Default for QuadrupedExperiment {
    fn default() -> Self {
        let robot = Quadruped::default();
        QuadrupedExperiment {
            robot,
            dt: 1e-3,
            t_final: robot.period,
            refinement: 100,
            stiffness: vec![1e3, 1e4, 1e5, 1e6, 1e7],
            damping_ratio: 0.5,
            reference_mass: 0.2,
            clearance: 0.01,
            speed: 0.3,
            typical_probe: 1e-4,
            probe_tol: 1e-6,
            min_probe: 1e-11,
            converged_gradient: false,
            max_steps: 10_000_000,
        }
    }
}

/// Contact-mode changes over a run: per foot per step, any change of mode counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ModeCounts {
    /// All changes.
    pub total: usize,
    /// Separated → pushing.
    pub touchdowns: usize,
    /// Pushing → separated.
    pub liftoffs: usize,
    /// Sticking → sliding.
    pub stick_to_slide: usize,
    /// Sliding → sticking.
    pub slide_to_stick: usize,
    /// Sliding forward ↔ sliding backward in one step.
    pub slide_reversals: usize,
    /// Changes per foot (FL, FR, HL, HR).
    pub per_foot: [usize; NFEET],
    /// Foot-steps with a normal impulse.
    pub contact_foot_steps: usize,
}

/// Count mode changes in a per-step mode record (every foot starts separated).
pub fn count_modes(modes: &[[ContactMode; NFEET]]) -> ModeCounts {
    use ContactMode::*;
    let mut c = ModeCounts::default();
    let mut prev = [Separated; NFEET];
    for m in modes {
        for f in 0..NFEET {
            if m[f] != Separated {
                c.contact_foot_steps += 1;
            }
            if m[f] == prev[f] {
                continue;
            }
            c.total += 1;
            c.per_foot[f] += 1;
            match (prev[f], m[f]) {
                (Separated, _) => c.touchdowns += 1,
                (_, Separated) => c.liftoffs += 1,
                (Sticking, _) => c.stick_to_slide += 1,
                (_, Sticking) => c.slide_to_stick += 1,
                _ => c.slide_reversals += 1,
            }
        }
        prev = *m;
    }
    c
}

/// The ordered list of mode changes `(foot, from, to)`, without the steps they happen at.
pub fn event_sequence(modes: &[[ContactMode; NFEET]]) -> Vec<(usize, ContactMode, ContactMode)> {
    let mut out = vec![];
    let mut prev = [ContactMode::Separated; NFEET];
    for m in modes {
        for f in 0..NFEET {
            if m[f] != prev[f] {
                out.push((f, prev[f], m[f]));
            }
        }
        prev = *m;
    }
    out
}

/// Worst LCP check over a rigid run's contact steps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LcpSummary {
    /// Steps that solved an LCP.
    pub steps: usize,
    /// Most Lemke pivots in one step.
    pub max_pivots: usize,
    /// Largest sign residual (z or w below zero), LCP units (N·s, m/s).
    pub max_negativity: f64,
    /// Largest complementarity product |z_i w_i|, J.
    pub max_complementarity: f64,
    /// Largest |λ_t| - μ λ_n, N·s.
    pub max_cone_violation: f64,
    /// Largest λ_t·ẋ_foot over sliding feet (friction along the slip), J.
    pub max_dissipation_violation: f64,
    /// Largest slip speed of a sticking foot, m/s.
    pub max_stick_slip: f64,
    /// Largest |φ/dt + ż_foot| of a pushing foot, m/s.
    pub max_normal_residual: f64,
}

/// A run's states and contact modes, for plots and the lab's animation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trajectory {
    /// Step times, s (n + 1).
    pub t: Vec<f64>,
    /// States `[q (11), v (11)]` per time, row-major (n + 1) × 22.
    pub state: Vec<f64>,
    /// Modes of the four feet in each step (n).
    pub modes: Vec<[ContactMode; NFEET]>,
    /// Drawing points per time, row-major (n + 1) × 12 × 2: hips, knees, feet (FL, FR,
    /// HL, HR each), `(x, z)` in m.
    pub points: Vec<f64>,
}

/// Forward fidelity of one law.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Forward {
    /// Largest penetration of any foot at any step time, m.
    pub max_penetration: f64,
    /// Largest slip speed of a foot whose mode is sticking, m/s.
    pub max_creep: f64,
    /// Net work of the contact impulses over the run, J (negative: dissipated).
    pub contact_work: f64,
    /// Mechanical energy (kinetic + gravitational) at the start, J.
    pub energy_start: f64,
    /// Mechanical energy at the end, J.
    pub energy_end: f64,
    /// Largest trunk position distance to the same law at dt/refinement over the step
    /// times, m.
    pub converged_distance: f64,
    /// |trunk velocity - that of the converged run| at the end, m/s.
    pub converged_final_velocity: f64,
    /// The converged run's own largest penetration, m.
    pub converged_penetration: f64,
    /// Largest trunk position distance to the rigid law's run at the same dt, m
    /// (information only: not a fidelity measure).
    pub distance_to_rigid: f64,
    /// Forward travel of the trunk over the run, m.
    pub travel: f64,
}

/// A central-difference reference for one input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeColumn {
    /// The derivative column (6 outputs).
    pub column: Vec<f64>,
    /// The probe ε of the column, in the input's unit.
    pub probe: f64,
    /// |D(2ε) - D(ε)|₂ / |D(ε)|₂ at the accepted pair.
    pub agreement: f64,
    /// The mode (or event) sequence held at ±2ε and ±ε and the two agreed to `probe_tol`.
    pub certified: bool,
    /// Rollouts spent.
    pub rollouts: usize,
}

/// Gradient accuracy of one law.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gradient {
    /// The law's forward-mode tangent, 6 × 3 row-major (rows [`OUTPUTS`], columns [`INPUTS`]).
    pub tangent: Vec<f64>,
    /// Largest |entry| of the tangent (a blown-up tangent shows here).
    pub tangent_max: f64,
    /// Probe-stable central differences of the same law at the same dt, one per input.
    pub reference: Vec<ProbeColumn>,
    /// Columns whose reference is certified (probe-stable).
    pub certified_columns: usize,
    /// max over certified columns of |tangent - reference|₂ / |reference|₂ (`None` when no
    /// column could be certified).
    pub tangent_error: Option<f64>,
    /// Central differences at the simulator-typical probe, 6 × 3 row-major.
    pub typical_probe: Vec<f64>,
    /// max over certified columns of |typical - reference|₂ / |reference|₂.
    pub typical_probe_error: Option<f64>,
    /// Inputs whose ±typical probe changed the per-step mode sequence.
    pub typical_probe_mode_changes: usize,
    /// Probe-stable central differences at dt/refinement, event sequence kept (when asked).
    pub converged_reference: Option<Vec<ProbeColumn>>,
    /// max over certified columns of |tangent - converged reference|₂ / |converged reference|₂.
    pub converged_error: Option<f64>,
    /// The law's tangent at dt/refinement, 6 × 3 row-major (when asked).
    pub refined_tangent: Option<Vec<f64>>,
    /// The refined tangent against the converged reference (does the tangent converge?).
    pub refined_tangent_error: Option<f64>,
    /// The tangent at dt/(refinement/2) against the one at dt/refinement: how settled the
    /// converged reference itself is.
    pub refined_tangent_spread: Option<f64>,
}

/// Both axes for one law.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LawReport {
    /// "rigid" or "penalty".
    pub law: &'static str,
    /// The law's parameters.
    pub contact: ContactLaw,
    /// The run (or its converged twin) failed: the error message; the axes are then absent.
    pub failure: Option<String>,
    /// Forward fidelity.
    pub forward: Option<Forward>,
    /// Gradient accuracy.
    pub gradient: Option<Gradient>,
    /// Contact-mode changes over the run at dt.
    pub modes: Option<ModeCounts>,
    /// Rigid law only: the worst LCP check over the run.
    pub lcp: Option<LcpSummary>,
    /// The run at dt.
    pub trajectory: Option<Trajectory>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuadrupedReport {
    /// What was run.
    pub config: QuadrupedExperiment,
    /// Column names of the Jacobians.
    pub inputs: [&'static str; 3],
    /// Row names of the Jacobians.
    pub outputs: [&'static str; 6],
    /// The rigid law.
    pub rigid: LawReport,
    /// The penalty law, one report per stiffness.
    pub penalty: Vec<LawReport>,
}

// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy)]
struct RunOptions {
    tangent: bool,
    trajectory: bool,
    sample_every: usize,
}

/// What a rollout yields.
struct Run {
    final_state: QuadState,
    modes: Vec<[ContactMode; NFEET]>,
    /// Trunk (x, z) every `sample_every` steps from t = 0.
    samples: Vec<[f64; 2]>,
    max_penetration: f64,
    max_creep: f64,
    contact_work: f64,
    lcp: Option<LcpSummary>,
    tangent: Option<Tangent>,
    trajectory: Option<Trajectory>,
}

fn drawing_points(robot: &Quadruped, q: &nalgebra::DVector<f64>, out: &mut Vec<f64>) {
    let k = robot.kin(&super::model::arr(q));
    for p in k.hip.iter().chain(k.knee.iter()).chain(k.foot.iter()) {
        out.extend_from_slice(p);
    }
}

fn run(
    robot: &Quadruped,
    law: &ContactLaw,
    x0: &QuadState,
    dt: f64,
    n: usize,
    opts: RunOptions,
) -> Result<Run> {
    let mut x = x0.clone();
    let mut modes = Vec::with_capacity(n);
    let mut samples = vec![[x.q[0], x.q[1]]];
    let (mut max_pen, mut max_creep, mut work) = (0.0_f64, 0.0_f64, 0.0);
    let mut lcp: Option<LcpSummary> = None;
    let mut tan = opts.tangent.then(|| {
        let mut dq = DMatrix::zeros(NDOF, 3);
        let mut dv = DMatrix::zeros(NDOF, 3);
        dq[(1, 0)] = 1.0;
        dv[(0, 1)] = 1.0;
        Tangent {
            dq,
            dv,
            dkp: vec![0.0, 0.0, 1.0],
        }
    });
    let mut traj = opts.trajectory.then(|| {
        let mut tr = Trajectory {
            t: Vec::with_capacity(n + 1),
            state: Vec::with_capacity((n + 1) * 2 * NDOF),
            modes: Vec::with_capacity(n),
            points: Vec::with_capacity((n + 1) * 24),
        };
        tr.t.push(x.t);
        tr.state.extend(x.to_vec());
        drawing_points(robot, &x.q, &mut tr.points);
        tr
    });
    for i in 0..n {
        let st = step(robot, law, &x, dt)?;
        if let Some(t) = tan.as_mut() {
            propagate_tangent(robot, law, &x, &st, dt, t)?;
        }
        let mut m = [ContactMode::Separated; NFEET];
        for (f, fc) in st.feet.iter().enumerate() {
            m[f] = fc.mode;
            max_pen = max_pen.max(-fc.gap);
            if fc.mode == ContactMode::Sticking {
                max_creep = max_creep.max(fc.slip_velocity.abs());
            }
        }
        work += st.contact_work;
        if let Some(c) = &st.lcp {
            let s = lcp.get_or_insert_with(LcpSummary::default);
            s.steps += 1;
            s.max_pivots = s.max_pivots.max(c.pivots);
            s.max_negativity = s
                .max_negativity
                .max(c.residuals.z_negativity.max(c.residuals.w_negativity));
            s.max_complementarity = s.max_complementarity.max(c.residuals.complementarity);
            s.max_cone_violation = s.max_cone_violation.max(c.cone_violation);
            s.max_dissipation_violation = s.max_dissipation_violation.max(c.dissipation_violation);
            s.max_stick_slip = s.max_stick_slip.max(c.stick_slip);
            s.max_normal_residual = s.max_normal_residual.max(c.normal_residual);
        }
        modes.push(m);
        x = st.state;
        if (i + 1) % opts.sample_every == 0 {
            samples.push([x.q[0], x.q[1]]);
        }
        if let Some(tr) = traj.as_mut() {
            tr.t.push(x.t);
            tr.state.extend(x.to_vec());
            tr.modes.push(m);
            drawing_points(robot, &x.q, &mut tr.points);
        }
    }
    let feet = robot.foot_positions(&x.q)?;
    for f in feet {
        max_pen = max_pen.max(-f[1]);
    }
    if lcp.is_none() && matches!(law, ContactLaw::Rigid) {
        lcp = Some(LcpSummary::default());
    }
    Ok(Run {
        final_state: x,
        modes,
        samples,
        max_penetration: max_pen,
        max_creep,
        contact_work: work,
        lcp,
        tangent: tan,
        trajectory: traj,
    })
}

/// Roll a law out for `steps` steps of `dt` from `x0`, calling the library's step (for
/// the rigid law, [`super::step::rigid_step`]) each time; returns the trajectory.
pub fn rollout(
    robot: &Quadruped,
    law: &ContactLaw,
    x0: &QuadState,
    dt: f64,
    steps: usize,
) -> Result<Trajectory> {
    // The trajectory is kept in memory: refuse what would not fit rather than abort.
    if steps as u64 > crate::integrate::DEFAULT_MAX_STEPS {
        return Err(FerroError::TooManySteps {
            route: "quadruped rollout",
            max_steps: crate::integrate::DEFAULT_MAX_STEPS,
            detail: format!("{steps} steps would be needed"),
        });
    }
    let r = run(
        robot,
        law,
        x0,
        dt,
        steps,
        RunOptions {
            tangent: false,
            trajectory: true,
            sample_every: 1,
        },
    )?;
    Ok(r.trajectory.expect("trajectory was requested"))
}

fn outputs(x: &QuadState) -> [f64; 6] {
    [x.q[0], x.q[1], x.q[2], x.v[0], x.v[1], x.v[2]]
}

/// Input `j` moved by `eps` (in its unit): robot and initial state.
fn perturb(robot: &Quadruped, x0: &QuadState, j: usize, eps: f64) -> (Quadruped, QuadState) {
    let (mut r, mut x) = (*robot, x0.clone());
    match j {
        0 => x.q[1] += eps,
        1 => x.v[0] += eps,
        _ => r.kp += eps,
    }
    (r, x)
}

/// Distance between two points in the plane (sqrt is correctly rounded on every target,
/// so native and wasm agree).
fn dist2(a: [f64; 2], b: [f64; 2]) -> f64 {
    let (dx, dz) = (a[0] - b[0], a[1] - b[1]);
    (dx * dx + dz * dz).sqrt()
}

fn norm(x: &[f64]) -> f64 {
    x.iter().map(|a| a * a).sum::<f64>().sqrt()
}

fn col_err(a: &[f64], b: &[f64]) -> f64 {
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    norm(&d) / norm(b)
}

/// Which sequence a probe must keep.
#[derive(Clone, Copy, PartialEq)]
enum Keep {
    /// The per-step mode of every foot.
    Steps,
    /// The ordered list of mode changes.
    Events,
}

/// A central difference of input `j` at probe `eps`, and whether both probes kept the
/// nominal sequence.
#[allow(clippy::too_many_arguments)]
fn central(
    robot: &Quadruped,
    law: &ContactLaw,
    x0: &QuadState,
    dt: f64,
    n: usize,
    j: usize,
    eps: f64,
    keep: Keep,
    nominal: &[[ContactMode; NFEET]],
) -> (Option<[f64; 6]>, bool) {
    let opts = RunOptions {
        tangent: false,
        trajectory: false,
        sample_every: usize::MAX,
    };
    let mut ys = [[0.0; 6]; 2];
    let mut same = true;
    for (k, s) in [1.0, -1.0].into_iter().enumerate() {
        let (r, x) = perturb(robot, x0, j, s * eps);
        match run(&r, law, &x, dt, n, opts) {
            Ok(out) => {
                ys[k] = outputs(&out.final_state);
                same &= match keep {
                    Keep::Steps => out.modes == nominal,
                    Keep::Events => event_sequence(&out.modes) == event_sequence(nominal),
                };
            }
            Err(_) => return (None, false),
        }
    }
    (Some(crate::check::fd::quotients(&ys[0], &ys[1], eps)), same)
}

/// Probe-stable central differences for input `j`: halve the probe until two consecutive
/// probes both keep the sequence and agree to `tol`.
#[allow(clippy::too_many_arguments)]
fn probe_stable(
    robot: &Quadruped,
    law: &ContactLaw,
    x0: &QuadState,
    dt: f64,
    n: usize,
    j: usize,
    scale: f64,
    keep: Keep,
    nominal: &[[ContactMode; NFEET]],
    tol: f64,
    min_probe: f64,
) -> ProbeColumn {
    // Quarter the probe while the sequence breaks (cheap levels), halve once it holds so
    // that consecutive probes form the (ε, ε/2) pair the agreement test needs.
    let mut h = 1e-3;
    let mut prev: Option<[f64; 6]> = None;
    let mut best: Option<ProbeColumn> = None;
    let mut rollouts = 0;
    while h >= min_probe {
        let eps = h * scale;
        let (d, same) = central(robot, law, x0, dt, n, j, eps, keep, nominal);
        rollouts += 2;
        match (d, same) {
            (Some(d), true) => {
                if let Some(p) = prev {
                    let agreement = col_err(&p, &d);
                    let cand = ProbeColumn {
                        column: d.to_vec(),
                        probe: eps,
                        agreement,
                        certified: agreement <= tol,
                        rollouts,
                    };
                    if cand.certified {
                        return cand;
                    }
                    if best.as_ref().is_none_or(|b| agreement < b.agreement) {
                        best = Some(cand);
                    }
                }
                prev = Some(d);
                h *= 0.5;
            }
            _ => {
                prev = None;
                h *= 0.25;
            }
        }
    }
    let mut b = best.unwrap_or(ProbeColumn {
        column: vec![f64::NAN; 6],
        probe: f64::NAN,
        agreement: f64::INFINITY,
        certified: false,
        rollouts,
    });
    b.rollouts = rollouts;
    b
}

fn steps_for(t_final: f64, dt: f64, max_steps: u64) -> Result<usize> {
    positive("dt", dt)?;
    positive("t_final", t_final)?;
    let ratio = t_final / dt;
    if ratio > max_steps as f64 {
        return Err(FerroError::TooManySteps {
            route: "quadruped",
            max_steps,
            detail: format!("T/dt = {ratio:e} steps would be needed"),
        });
    }
    let n = ratio.round();
    if n < 1.0 || ((n * dt - t_final) / t_final).abs() > 1e-9 {
        return Err(FerroError::StepDoesNotDivide { dt, t_final, ratio });
    }
    Ok(n as usize)
}

impl QuadrupedExperiment {
    /// Check the configuration.
    pub fn validate(&self) -> Result<()> {
        self.robot.validate()?;
        positive("dt", self.dt)?;
        positive("t_final", self.t_final)?;
        positive("refinement", self.refinement as f64)?;
        positive("reference_mass", self.reference_mass)?;
        positive("typical_probe", self.typical_probe)?;
        positive("probe_tol", self.probe_tol)?;
        positive("min_probe", self.min_probe)?;
        for &k in &self.stiffness {
            positive("stiffness", k)?;
        }
        let n = steps_for(self.t_final, self.dt, self.max_steps)?;
        let fine = n as f64 * self.refinement as f64;
        if fine > self.max_steps as f64 {
            return Err(FerroError::TooManySteps {
                route: "quadruped (converged run)",
                max_steps: self.max_steps,
                detail: format!("{fine:e} steps would be needed"),
            });
        }
        PenaltyContact::from_ratio(1.0, self.damping_ratio, self.reference_mass)?;
        self.robot.initial_state(self.clearance, self.speed)?;
        Ok(())
    }
}

fn law_report(cfg: &QuadrupedExperiment, law: ContactLaw, x0: &QuadState) -> Result<LawReport> {
    let name = match law {
        ContactLaw::Rigid => "rigid",
        ContactLaw::Penalty(_) => "penalty",
    };
    let robot = &cfg.robot;
    let n = steps_for(cfg.t_final, cfg.dt, cfg.max_steps)?;
    let r = cfg.refinement as usize;
    let fine_dt = cfg.dt / cfg.refinement as f64;
    let failed = |msg: String| LawReport {
        law: name,
        contact: law,
        failure: Some(msg),
        forward: None,
        gradient: None,
        modes: None,
        lcp: None,
        trajectory: None,
    };
    let nominal = match run(
        robot,
        &law,
        x0,
        cfg.dt,
        n,
        RunOptions {
            tangent: true,
            trajectory: true,
            sample_every: 1,
        },
    ) {
        Ok(v) => v,
        Err(e) => return Ok(failed(format!("run at dt: {e}"))),
    };
    let fine = match run(
        robot,
        &law,
        x0,
        fine_dt,
        n * r,
        RunOptions {
            tangent: false,
            trajectory: false,
            sample_every: r,
        },
    ) {
        Ok(v) => v,
        Err(e) => return Ok(failed(format!("converged run at dt/{r}: {e}"))),
    };
    let dist = |a: &[[f64; 2]], b: &[[f64; 2]]| {
        a.iter()
            .zip(b)
            .map(|(p, q)| dist2(*p, *q))
            .fold(0.0, f64::max)
    };
    let (xe, xf) = (&nominal.final_state, &fine.final_state);
    let forward = Forward {
        max_penetration: nominal.max_penetration,
        max_creep: nominal.max_creep,
        contact_work: nominal.contact_work,
        energy_start: robot.energy(&x0.q, &x0.v)?,
        energy_end: robot.energy(&xe.q, &xe.v)?,
        converged_distance: dist(&nominal.samples, &fine.samples),
        converged_final_velocity: dist2([xe.v[0], xe.v[1]], [xf.v[0], xf.v[1]]),
        converged_penetration: fine.max_penetration,
        distance_to_rigid: f64::NAN,
        travel: xe.q[0] - x0.q[0],
    };
    // Gradient axis.
    let tangent = jacobian_of(nominal.tangent.as_ref().expect("tangent was requested"));
    let scales = [1.0, 1.0, robot.kp];
    let mut reference = vec![];
    let mut typical = vec![0.0; 18];
    let mut typical_changes = 0;
    for (j, &scale) in scales.iter().enumerate() {
        reference.push(probe_stable(
            robot,
            &law,
            x0,
            cfg.dt,
            n,
            j,
            scale,
            Keep::Steps,
            &nominal.modes,
            cfg.probe_tol,
            cfg.min_probe,
        ));
        let (d, same) = central(
            robot,
            &law,
            x0,
            cfg.dt,
            n,
            j,
            cfg.typical_probe * scale,
            Keep::Steps,
            &nominal.modes,
        );
        let d = d.unwrap_or([f64::NAN; 6]);
        for o in 0..6 {
            typical[3 * o + j] = d[o];
        }
        if !same {
            typical_changes += 1;
        }
    }
    let (mut converged_reference, mut converged_error) = (None, None);
    let (mut refined_tangent, mut refined_tangent_error) = (None, None);
    let mut refined_tangent_spread = None;
    if cfg.converged_gradient {
        let mut cols = vec![];
        for (j, &scale) in scales.iter().enumerate() {
            cols.push(probe_stable(
                robot,
                &law,
                x0,
                fine_dt,
                n * r,
                j,
                scale,
                Keep::Events,
                &fine.modes,
                cfg.probe_tol,
                cfg.min_probe,
            ));
        }
        converged_error = matrix_error(&tangent, &cols);
        let opts = RunOptions {
            tangent: true,
            trajectory: false,
            sample_every: usize::MAX,
        };
        if let Ok(fr) = run(robot, &law, x0, fine_dt, n * r, opts) {
            let ft = jacobian_of(fr.tangent.as_ref().expect("tangent was requested"));
            refined_tangent_error = matrix_error(&ft, &cols);
            if r >= 2 && r % 2 == 0 {
                let half_dt = cfg.dt / (r / 2) as f64;
                if let Ok(hr) = run(robot, &law, x0, half_dt, n * r / 2, opts) {
                    let ht = jacobian_of(hr.tangent.as_ref().expect("tangent was requested"));
                    refined_tangent_spread = Some(
                        (0..3)
                            .map(|c| {
                                let a: Vec<f64> = (0..6).map(|o| ht[3 * o + c]).collect();
                                let b: Vec<f64> = (0..6).map(|o| ft[3 * o + c]).collect();
                                col_err(&a, &b)
                            })
                            .fold(0.0, f64::max),
                    );
                }
            }
            refined_tangent = Some(ft);
        }
        converged_reference = Some(cols);
    }
    Ok(LawReport {
        law: name,
        contact: law,
        failure: None,
        forward: Some(forward),
        gradient: Some(Gradient {
            tangent_max: tangent.iter().fold(0.0, |m: f64, x| m.max(x.abs())),
            tangent_error: matrix_error(&tangent, &reference),
            typical_probe_error: matrix_error(&typical, &reference),
            certified_columns: reference.iter().filter(|c| c.certified).count(),
            tangent,
            reference,
            typical_probe: typical,
            typical_probe_mode_changes: typical_changes,
            converged_reference,
            converged_error,
            refined_tangent,
            refined_tangent_error,
            refined_tangent_spread,
        }),
        modes: Some(count_modes(&nominal.modes)),
        lcp: nominal.lcp,
        trajectory: nominal.trajectory,
    })
}

/// The tangent's 6 × 3 Jacobian of the trunk's final state, row-major.
fn jacobian_of(tan: &Tangent) -> Vec<f64> {
    let mut out = vec![0.0; 18];
    for o in 0..6 {
        for c in 0..3 {
            out[3 * o + c] = if o < 3 {
                tan.dq[(o, c)]
            } else {
                tan.dv[(o - 3, c)]
            };
        }
    }
    out
}

/// max over the certified columns of |J_c - R_c|₂/|R_c|₂; `None` if none is certified.
/// A non-finite J makes the error infinite, never silently small.
fn matrix_error(j: &[f64], reference: &[ProbeColumn]) -> Option<f64> {
    let mut worst: Option<f64> = None;
    for (c, col) in reference.iter().enumerate() {
        if !col.certified {
            continue;
        }
        let jc: Vec<f64> = (0..6).map(|o| j[3 * o + c]).collect();
        let e = col_err(&jc, &col.column);
        let e = if e.is_finite() { e } else { f64::INFINITY };
        worst = Some(worst.map_or(e, |w: f64| w.max(e)));
    }
    worst
}

/// Trunk (x, z) per step time from a trajectory.
fn trunk_path(t: &Trajectory) -> Vec<[f64; 2]> {
    t.state.chunks(2 * NDOF).map(|s| [s[0], s[1]]).collect()
}

/// Run the comparison: the rigid law and the penalty law at every stiffness, both axes.
///
/// A law whose run fails (an unstable explicit step, a refused LCP) gets a report with
/// `failure` set and no axes; the comparison itself only fails on invalid configuration.
pub fn quadruped_experiment(cfg: &QuadrupedExperiment) -> Result<QuadrupedReport> {
    cfg.validate()?;
    let x0 = cfg.robot.initial_state(cfg.clearance, cfg.speed)?;
    let rigid = law_report(cfg, ContactLaw::Rigid, &x0)?;
    let rigid_path = rigid.trajectory.as_ref().map(trunk_path);
    let mut penalty = vec![];
    for &k in &cfg.stiffness {
        let law = PenaltyContact::from_ratio(k, cfg.damping_ratio, cfg.reference_mass)?;
        let mut rep = law_report(cfg, ContactLaw::Penalty(law), &x0)?;
        if let (Some(f), Some(tr), Some(rp)) = (
            rep.forward.as_mut(),
            rep.trajectory.as_ref(),
            rigid_path.as_ref(),
        ) {
            f.distance_to_rigid = trunk_path(tr)
                .iter()
                .zip(rp)
                .map(|(p, q)| dist2(*p, *q))
                .fold(0.0, f64::max);
        }
        penalty.push(rep);
    }
    let mut rigid = rigid;
    if let Some(f) = rigid.forward.as_mut() {
        f.distance_to_rigid = 0.0;
    }
    Ok(QuadrupedReport {
        config: cfg.clone(),
        inputs: INPUTS,
        outputs: OUTPUTS,
        rigid,
        penalty,
    })
}

impl QuadrupedReport {
    /// The two-axis table as fixed-width text, one row per law.
    pub fn table(&self) -> String {
        let opt = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |e| format!("{e:.2e}"));
        let mut s = String::new();
        s.push_str(&format!(
            "{:<16}|{:>9} {:>9} {:>8} {:>8} {:>9} {:>9} {:>6}|{:>9} {:>9} {:>9} {:>9} {:>4}\n",
            "law",
            "pen m",
            "creep m/s",
            "Wc J",
            "dE J",
            "conv m",
            "d_rigid m",
            "modes",
            "tan err",
            "1e-4 err",
            "conv err",
            "ref err",
            "cert",
        ));
        for rep in std::iter::once(&self.rigid).chain(self.penalty.iter()) {
            let label = match rep.contact {
                ContactLaw::Rigid => "rigid (LCP)".to_string(),
                ContactLaw::Penalty(p) => format!("penalty k={:.0e}", p.stiffness),
            };
            match (&rep.forward, &rep.gradient, &rep.modes) {
                (Some(f), Some(g), Some(m)) => s.push_str(&format!(
                    "{:<16}|{:>9.2e} {:>9.2e} {:>8.2} {:>8.2} {:>9.2e} {:>9.2e} {:>6}|{:>9} {:>9} {:>9} {:>9} {:>4}\n",
                    label,
                    f.max_penetration,
                    f.max_creep,
                    f.contact_work,
                    f.energy_end - f.energy_start,
                    f.converged_distance,
                    f.distance_to_rigid,
                    m.total,
                    opt(g.tangent_error),
                    opt(g.typical_probe_error),
                    opt(g.converged_error),
                    opt(g.refined_tangent_error),
                    format!("{}/3", g.certified_columns),
                )),
                _ => s.push_str(&format!(
                    "{:<16}| FAILED: {}\n",
                    label,
                    rep.failure.as_deref().unwrap_or("?")
                )),
            }
        }
        s
    }
}
