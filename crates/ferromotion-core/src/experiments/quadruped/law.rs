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

use super::config::{steps_for, QuadrupedExperiment, INPUTS, OUTPUTS};
use super::model::{QuadState, NDOF};
use super::report::{
    count_modes, Forward, Gradient, LawReport, ProbeColumn, QuadrupedReport, Trajectory,
};
use super::run::{central, col_err, dist2, probe_stable, run, Keep, RunOptions};
use super::step::{ContactLaw, PenaltyContact, Tangent};
use super::verdict::verdict;
use crate::error::Result;

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
