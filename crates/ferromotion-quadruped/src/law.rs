//! The law report: the two-axis comparison over penalty stiffness, forward fidelity and
//! gradient accuracy, one law at a time.
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
//!   differences of the law converged in dt, run at `dt/refinement`, with probes kept inside
//!   one *event* sequence (the ordered list of mode changes; the step at which each happens
//!   may move) — how far the gradient at dt is from the gradient of the law converged in
//!   dt. For the penalty law the differenced rollout is the *event-located* one
//!   ([`super::located`]): every touchdown, lift-off and stick/slide switch is located
//!   inside its step, so the map is continuous and its differences carry the saltation of
//!   the force's jump at touchdown. (The fixed step's map at dt/refinement is a staircase
//!   in the inputs: at 1e6 N/m and 10 µs its z0 differences move by up to 50 % with the
//!   probe down to 4e-6 m, settle only below ~1e-8 m, and there give the derivative of the
//!   discrete map without the saltation, half the located one in the trunk's x row.) The
//!   rigid law's discrete map
//!   is continuous in the state already (the gap enters the LCP as φ/dt), so its reference
//!   differences its own fixed step. `converged_spread` says how settled that reference
//!   is: each certified column against the same probe's difference at dt/(2·refinement).
//!   `refined_tangent_error` checks the law's own fixed-step tangent at dt/refinement
//!   against the reference (for the penalty law: the saltation the fixed step's tangent
//!   leaves out, at the refined step), and `refined_tangent_spread` compares the tangents
//!   at dt/(refinement/2) and dt/refinement.
//!
//! Every column that is not certified says why in its `failure`, with the number that
//! failed (no probe kept the sequence; the best agreement reached; a rollout's error).
//!
//! Errors are column-wise `|J_c - R_c|₂ / |R_c|₂` (rows mix m, rad, m/s, rad/s), the
//! largest over the three columns.

use super::config::{steps_for, QuadrupedExperiment, INPUTS, OUTPUTS};
use super::located::located_run;
use super::model::{QuadState, Quadruped, NDOF, NFEET};
use super::report::{count_modes, Forward, Gradient, LawReport, ProbeColumn, Trajectory};
use super::run::{
    central, col_err, dist2, probe_stable, rollout_of, run, Keep, Run, RunOptions, Scheme,
    LOCATED_MAX_STEPS,
};
use super::step::{ContactLaw, ContactMode, PenaltyContact, Tangent};
use super::verdict::{verdict, QuadrupedReport};
use ferromotion_core::error::Result;

pub(super) fn law_report(
    cfg: &QuadrupedExperiment,
    law: ContactLaw,
    x0: &QuadState,
) -> Result<LawReport> {
    let name = match law {
        ContactLaw::Rigid => "rigid",
        ContactLaw::Penalty(_) => "penalty",
    };
    let robot = &cfg.robot;
    let n = steps_for(cfg.t_final, cfg.dt, cfg.max_steps)?;
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
    let (nominal, fine) = match nominal_and_fine(cfg, &law, x0, n) {
        Ok(runs) => runs,
        Err(msg) => return Ok(failed(msg)),
    };
    let forward = forward_axis(robot, x0, &nominal, &fine)?;
    // Gradient axis.
    let tangent = jacobian_of(nominal.tangent.as_ref().expect("tangent was requested"));
    let Probed {
        reference,
        typical,
        changes: typical_changes,
    } = probed_reference(cfg, &law, x0, n, &nominal.modes);
    let mut conv = Converged::default();
    let mut refined = Refined::default();
    if cfg.converged_gradient {
        conv = converged(cfg, &law, x0, n, &fine.modes);
        if let Some(cols) = &conv.reference {
            conv.error = matrix_error(&tangent, cols);
        }
        refined = refined_tangent(cfg, &law, x0, n, conv.reference.as_deref());
    }
    let Refined {
        tangent: refined_tangent,
        error: refined_tangent_error,
        spread: refined_tangent_spread,
    } = refined;
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
            converged_certified_columns: conv
                .reference
                .as_ref()
                .map(|c| c.iter().filter(|c| c.certified).count()),
            converged_reference: conv.reference,
            converged_error: conv.error,
            converged_scheme: conv.scheme,
            converged_switches: conv.switches,
            converged_spread: conv.spread,
            converged_tangent_error: conv.tangent_error,
            converged_failure: conv.failure,
            refined_tangent,
            refined_tangent_error,
            refined_tangent_spread,
        }),
        modes: Some(count_modes(&nominal.modes)),
        lcp: nominal.lcp,
        trajectory: nominal.trajectory,
    })
}

/// The nominal run at dt (with its tangent and trajectory) and the run at dt/refinement
/// (sampled at dt); a failure as the report's message.
fn nominal_and_fine(
    cfg: &QuadrupedExperiment,
    law: &ContactLaw,
    x0: &QuadState,
    n: usize,
) -> std::result::Result<(Run, Run), String> {
    let r = cfg.refinement as usize;
    let fine_dt = cfg.dt / cfg.refinement as f64;
    let nominal = RunOptions {
        tangent: true,
        trajectory: true,
        sample_every: 1,
    };
    let nominal =
        run(&cfg.robot, law, x0, cfg.dt, n, nominal).map_err(|e| format!("run at dt: {e}"))?;
    let fine = RunOptions {
        tangent: false,
        trajectory: false,
        sample_every: r,
    };
    let fine = run(&cfg.robot, law, x0, fine_dt, n * r, fine)
        .map_err(|e| format!("converged run at dt/{r}: {e}"))?;
    Ok((nominal, fine))
}

/// The forward axis: what the nominal run at dt did, and how far it is from the run at
/// dt/refinement (`fine`).
fn forward_axis(robot: &Quadruped, x0: &QuadState, nominal: &Run, fine: &Run) -> Result<Forward> {
    let dist = |a: &[[f64; 2]], b: &[[f64; 2]]| {
        a.iter()
            .zip(b)
            .map(|(p, q)| dist2(*p, *q))
            .fold(0.0, f64::max)
    };
    let (xe, xf) = (&nominal.final_state, &fine.final_state);
    Ok(Forward {
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
    })
}

/// The probed reference at dt: per input column, the stable central difference (on the
/// nominal modes) and the one at the typical probe size, with how many of those changed mode.
struct Probed {
    reference: Vec<ProbeColumn>,
    /// 6 x 3 row-major.
    typical: Vec<f64>,
    changes: usize,
}

fn probed_reference(
    cfg: &QuadrupedExperiment,
    law: &ContactLaw,
    x0: &QuadState,
    n: usize,
    modes: &[[ContactMode; NFEET]],
) -> Probed {
    let robot = &cfg.robot;
    let scales = [1.0, 1.0, robot.kp];
    let mut out = Probed {
        reference: vec![],
        typical: vec![0.0; 18],
        changes: 0,
    };
    for (j, &scale) in scales.iter().enumerate() {
        out.reference.push(probe_stable(
            robot,
            law,
            x0,
            cfg.dt,
            n,
            j,
            scale,
            Keep::Steps,
            modes,
            cfg.probe_tol,
            cfg.min_probe,
            Scheme::Fixed,
        ));
        let (d, same) = central(
            robot,
            law,
            x0,
            cfg.dt,
            n,
            j,
            cfg.typical_probe * scale,
            Keep::Steps,
            modes,
            Scheme::Fixed,
        )
        .unwrap_or(([f64::NAN; 6], false));
        for (o, &v) in d.iter().enumerate() {
            out.typical[3 * o + j] = v;
        }
        if !same {
            out.changes += 1;
        }
    }
    out
}

/// The tangent at dt/refinement, its error against the converged reference, and its spread
/// against the tangent at dt/(refinement/2) (an even refinement only). All None where a run
/// fails.
#[derive(Default)]
struct Refined {
    tangent: Option<Vec<f64>>,
    error: Option<f64>,
    spread: Option<f64>,
}

fn refined_tangent(
    cfg: &QuadrupedExperiment,
    law: &ContactLaw,
    x0: &QuadState,
    n: usize,
    reference: Option<&[ProbeColumn]>,
) -> Refined {
    let robot = &cfg.robot;
    let r = cfg.refinement as usize;
    let fine_dt = cfg.dt / cfg.refinement as f64;
    let opts = RunOptions {
        tangent: true,
        trajectory: false,
        sample_every: usize::MAX,
    };
    let mut out = Refined::default();
    let Ok(fr) = run(robot, law, x0, fine_dt, n * r, opts) else {
        return out;
    };
    let ft = jacobian_of(fr.tangent.as_ref().expect("tangent was requested"));
    out.error = reference.and_then(|c| matrix_error(&ft, c));
    if r >= 2 && r % 2 == 0 {
        let half_dt = cfg.dt / (r / 2) as f64;
        if let Ok(hr) = run(robot, law, x0, half_dt, n * r / 2, opts) {
            let ht = jacobian_of(hr.tangent.as_ref().expect("tangent was requested"));
            out.spread = Some(
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
    out.tangent = Some(ft);
    out
}

/// The converged-in-dt reference of one law and what certifies it.
#[derive(Default)]
struct Converged {
    reference: Option<Vec<ProbeColumn>>,
    error: Option<f64>,
    scheme: Option<&'static str>,
    switches: Option<usize>,
    spread: Option<f64>,
    tangent_error: Option<f64>,
    failure: Option<String>,
}

/// Probe-stable central differences of the law at dt/refinement, keeping the order of
/// the contact events: of the event-located rollout for the penalty law
/// ([`super::located`]), of the fixed step for the rigid one. Then, at each certified
/// column's probe, the same difference at dt/(2·refinement): the spread says how settled
/// the reference is in dt.
fn converged(
    cfg: &QuadrupedExperiment,
    law: &ContactLaw,
    x0: &QuadState,
    n: usize,
    fixed_modes: &[[ContactMode; NFEET]],
) -> Converged {
    let robot = &cfg.robot;
    let r = cfg.refinement as usize;
    let fine_dt = cfg.dt / cfg.refinement as f64;
    let (scheme, name) = match law {
        ContactLaw::Rigid => (Scheme::Fixed, "fixed step"),
        ContactLaw::Penalty(_) => (Scheme::Located, "event-located"),
    };
    let mut out = Converged {
        scheme: Some(name),
        ..Converged::default()
    };
    let mut located_tangent = None;
    let nominal = match law {
        ContactLaw::Rigid => fixed_modes.to_vec(),
        ContactLaw::Penalty(p) => {
            match located_run(robot, p, x0, fine_dt, n * r, LOCATED_MAX_STEPS, true) {
                Ok(run) => {
                    located_tangent = run.tangent.as_ref().map(jacobian_of);
                    run.modes
                }
                Err(e) => {
                    out.failure = Some(format!("the event-located run at dt/{r} failed: {e}"));
                    return out;
                }
            }
        }
    };
    out.switches = Some(super::report::event_sequence(&nominal).len());
    let scales = [1.0, 1.0, robot.kp];
    let cols: Vec<ProbeColumn> = scales
        .iter()
        .enumerate()
        .map(|(j, &scale)| {
            probe_stable(
                robot,
                law,
                x0,
                fine_dt,
                n * r,
                j,
                scale,
                Keep::Events,
                &nominal,
                cfg.probe_tol,
                cfg.min_probe,
                scheme,
            )
        })
        .collect();
    // The dt-spread at the certified columns' probes.
    (out.spread, out.failure) = dt_spread(cfg, law, x0, n, scheme, &cols);
    out.tangent_error = located_tangent.and_then(|t| matrix_error(&t, &cols));
    out.reference = Some(cols);
    out
}

/// The converged reference's dt-spread: the largest change of a certified column when the
/// run's step is halved again (dt/(2·refinement)), at that column's own probe; with why it
/// could not be measured (a run failed, or a probe changed the order of the contact events).
fn dt_spread(
    cfg: &QuadrupedExperiment,
    law: &ContactLaw,
    x0: &QuadState,
    n: usize,
    scheme: Scheme,
    cols: &[ProbeColumn],
) -> (Option<f64>, Option<String>) {
    let robot = &cfg.robot;
    let r = cfg.refinement as usize;
    let fine_dt = cfg.dt / cfg.refinement as f64;
    if !cols.iter().any(|c| c.certified) {
        return (None, None);
    }
    let half = match rollout_of(robot, law, x0, 0.5 * fine_dt, 2 * n * r, scheme) {
        Ok((_, m)) => m,
        Err(e) => return (None, Some(format!("the run at dt/{} failed: {e}", 2 * r))),
    };
    let mut spread = 0.0_f64;
    let mut failure = None;
    for (j, col) in cols.iter().enumerate().filter(|c| c.1.certified) {
        match central(
            robot,
            law,
            x0,
            0.5 * fine_dt,
            2 * n * r,
            j,
            col.probe,
            Keep::Events,
            &half,
            scheme,
        ) {
            Ok((d, true)) => spread = spread.max(col_err(&col.column, &d)),
            Ok((_, false)) => {
                failure = Some(format!(
                    "at dt/{}, the probe {:.1e} of input {} changes the order of the contact events: no spread",
                    2 * r,
                    col.probe,
                    INPUTS[j]
                ));
                spread = f64::NAN;
                break;
            }
            Err(e) => {
                failure = Some(format!("a probe rollout at dt/{} failed: {e}", 2 * r));
                spread = f64::NAN;
                break;
            }
        }
    }
    (spread.is_finite().then_some(spread), failure)
}

/// The tangent's 6 × 3 Jacobian of the trunk's final state, row-major.
pub(super) fn jacobian_of(tan: &Tangent) -> Vec<f64> {
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
pub(super) fn matrix_error(j: &[f64], reference: &[ProbeColumn]) -> Option<f64> {
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
pub(super) fn trunk_path(t: &Trajectory) -> Vec<[f64; 2]> {
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
        verdict: verdict(cfg, &rigid, &penalty),
        config: cfg.clone(),
        inputs: INPUTS,
        outputs: OUTPUTS,
        rigid,
        penalty,
    })
}
