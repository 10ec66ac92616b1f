//! What the comparison reports: per law, forward fidelity, gradient accuracy, the contact
//! modes and the run itself. The whole comparison with its verdict per axis is
//! [`QuadrupedReport`](super::verdict::QuadrupedReport).

use super::model::NFEET;
use super::step::{ContactLaw, ContactMode};
use serde::Serialize;

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
    /// Why the column is not certified, with the number that failed (`None` when it is).
    pub failure: Option<String>,
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
    /// What the converged reference differences: `"event-located"` (penalty: every
    /// contact switch located inside its step, so the map is continuous and its
    /// differences carry the saltation of the force's jump at touchdown) or `"fixed step"`
    /// (rigid: its map is continuous already).
    pub converged_scheme: Option<&'static str>,
    /// Columns of the converged reference that are certified (probe-stable).
    pub converged_certified_columns: Option<usize>,
    /// Contact switches in the converged nominal run: located switches (event-located) or
    /// per-step mode changes (fixed step).
    pub converged_switches: Option<usize>,
    /// How settled the converged reference is in dt: each certified column against the
    /// same probe's central difference at dt/(2·refinement), max over columns
    /// (`|R(h) - R(h/2)|₂ / |R(h/2)|₂`, about R(h)'s own error at first order).
    pub converged_spread: Option<f64>,
    /// Event-located (penalty) only: that scheme's own forward-mode tangent at
    /// dt/refinement, carried through every located switch with the switch time's
    /// derivative, against the converged reference — a second route to the same
    /// derivative (they agree when the reference is the derivative of its map).
    pub converged_tangent_error: Option<f64>,
    /// Why the converged reference is missing or its spread could not be measured
    /// (column-level reasons are in each column's `failure`).
    pub converged_failure: Option<String>,
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
