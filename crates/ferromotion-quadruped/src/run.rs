//! Rollouts of one law and the probe-stable central differences of whole rollouts.

use super::config::QuadrupedExperiment;
use super::model::{QuadState, Quadruped, NDOF, NFEET};
use super::report::ProbeColumn;
use super::report::{event_sequence, LcpSummary, Trajectory};
use super::step::{propagate_tangent, step, ContactLaw, ContactMode, PenaltyContact, Tangent};
use ferromotion_core::error::{FerroError, Result};

#[derive(Clone, Copy)]
pub(super) struct RunOptions {
    pub(super) tangent: bool,
    pub(super) trajectory: bool,
    pub(super) sample_every: usize,
}

/// What a rollout yields.
pub(super) struct Run {
    pub(super) final_state: QuadState,
    pub(super) modes: Vec<[ContactMode; NFEET]>,
    /// Trunk (x, z) every `sample_every` steps from t = 0.
    pub(super) samples: Vec<[f64; 2]>,
    pub(super) max_penetration: f64,
    pub(super) max_creep: f64,
    pub(super) contact_work: f64,
    pub(super) lcp: Option<LcpSummary>,
    pub(super) tangent: Option<Tangent>,
    pub(super) trajectory: Option<Trajectory>,
}

pub(super) fn drawing_points(robot: &Quadruped, q: &nalgebra::DVector<f64>, out: &mut Vec<f64>) {
    let k = robot.kin(&super::model::arr(q));
    for p in k.hip.iter().chain(k.knee.iter()).chain(k.foot.iter()) {
        out.extend_from_slice(p);
    }
}

pub(super) fn run(
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
    let mut tan = opts.tangent.then(Tangent::seed);
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
    if steps as u64 > ferromotion_core::DEFAULT_MAX_STEPS {
        return Err(FerroError::TooManySteps {
            route: "quadruped rollout",
            max_steps: ferromotion_core::DEFAULT_MAX_STEPS,
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

pub(super) fn outputs(x: &QuadState) -> [f64; 6] {
    [x.q[0], x.q[1], x.q[2], x.v[0], x.v[1], x.v[2]]
}

/// Input `j` moved by `eps` (in its unit): robot and initial state.
pub(super) fn perturb(
    robot: &Quadruped,
    x0: &QuadState,
    j: usize,
    eps: f64,
) -> (Quadruped, QuadState) {
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
pub(super) fn dist2(a: [f64; 2], b: [f64; 2]) -> f64 {
    let (dx, dz) = (a[0] - b[0], a[1] - b[1]);
    (dx * dx + dz * dz).sqrt()
}

pub(super) fn norm(x: &[f64]) -> f64 {
    x.iter().map(|a| a * a).sum::<f64>().sqrt()
}

pub(super) fn col_err(a: &[f64], b: &[f64]) -> f64 {
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    norm(&d) / norm(b)
}

/// Which sequence a probe must keep.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Keep {
    /// The per-step mode of every foot.
    Steps,
    /// The ordered list of mode changes.
    Events,
}

impl Keep {
    fn name(self) -> &'static str {
        match self {
            Keep::Steps => "per-step mode sequence",
            Keep::Events => "order of the contact events",
        }
    }
}

/// Which rollout the central differences difference.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Scheme {
    /// The law's own fixed step ([`run`]).
    Fixed,
    /// The penalty law with every switch located inside its step
    /// ([`super::located::located_run`]); the fixed step for the rigid law.
    Located,
}

/// Final state and per-step (or per-sub-step) modes of one rollout of `scheme`.
pub(super) fn rollout_of(
    robot: &Quadruped,
    law: &ContactLaw,
    x0: &QuadState,
    dt: f64,
    n: usize,
    scheme: Scheme,
) -> Result<(QuadState, Vec<[ContactMode; NFEET]>)> {
    match (scheme, law) {
        (Scheme::Located, ContactLaw::Penalty(p)) => {
            let r = super::located::located_run(robot, p, x0, dt, n, LOCATED_MAX_STEPS, false)?;
            Ok((r.final_state, r.modes))
        }
        _ => {
            let opts = RunOptions {
                tangent: false,
                trajectory: false,
                sample_every: usize::MAX,
            };
            let r = run(robot, law, x0, dt, n, opts)?;
            Ok((r.final_state, r.modes))
        }
    }
}

/// Cap on the sub-steps of one located rollout (steps plus located switches).
pub(super) const LOCATED_MAX_STEPS: u64 = 100_000_000;

/// A central difference of input `j` at probe `eps`, and whether both probes kept the
/// nominal sequence; the error of a probe rollout that failed.
#[allow(clippy::too_many_arguments)]
pub(super) fn central(
    robot: &Quadruped,
    law: &ContactLaw,
    x0: &QuadState,
    dt: f64,
    n: usize,
    j: usize,
    eps: f64,
    keep: Keep,
    nominal: &[[ContactMode; NFEET]],
    scheme: Scheme,
) -> std::result::Result<([f64; 6], bool), FerroError> {
    let mut ys = [[0.0; 6]; 2];
    let mut same = true;
    for (k, s) in [1.0, -1.0].into_iter().enumerate() {
        let (r, x) = perturb(robot, x0, j, s * eps);
        let (xf, modes) = rollout_of(&r, law, &x, dt, n, scheme)?;
        ys[k] = outputs(&xf);
        same &= match keep {
            Keep::Steps => modes == nominal,
            Keep::Events => event_sequence(&modes) == event_sequence(nominal),
        };
    }
    Ok((
        ferromotion_core::numeric::fd::quotients(&ys[0], &ys[1], eps),
        same,
    ))
}

/// Probe-stable central differences for input `j`: halve the probe until two consecutive
/// probes both keep the sequence and agree to `tol`. A column that never gets there says
/// why in its `failure`, with the number that failed.
#[allow(clippy::too_many_arguments)]
pub(super) fn probe_stable(
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
    scheme: Scheme,
) -> ProbeColumn {
    // Quarter the probe while the sequence breaks (cheap levels), halve once it holds so
    // that consecutive probes form the (ε, ε/2) pair the agreement test needs.
    let mut h = 1e-3;
    let mut prev: Option<[f64; 6]> = None;
    let mut best: Option<ProbeColumn> = None;
    let mut rollouts = 0;
    let (mut tried, mut kept) = (0, 0);
    let mut error: Option<String> = None;
    while h >= min_probe {
        let eps = h * scale;
        let d = central(robot, law, x0, dt, n, j, eps, keep, nominal, scheme);
        rollouts += 2;
        tried += 1;
        match d {
            Ok((d, true)) => {
                kept += 1;
                if let Some(p) = prev {
                    let agreement = col_err(&p, &d);
                    let cand = ProbeColumn {
                        column: d.to_vec(),
                        probe: eps,
                        agreement,
                        certified: agreement <= tol,
                        rollouts,
                        failure: None,
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
            other => {
                if let Err(e) = other {
                    error
                        .get_or_insert_with(|| format!("a probe rollout at {eps:.1e} failed: {e}"));
                }
                prev = None;
                h *= 0.25;
            }
        }
    }
    let (lo, hi) = (min_probe * scale, 1e-3 * scale);
    let why = match (&best, &error) {
        (Some(b), _) => format!(
            "no two consecutive probes agreed to {tol:.0e}: the best pair agreed to {:.1e} (at {:.1e}; {kept} of {tried} probes from {hi:.1e} down to {lo:.1e} kept the {})",
            b.agreement,
            b.probe,
            keep.name()
        ),
        (None, Some(e)) if kept == 0 => e.clone(),
        (None, _) if kept == 0 => format!(
            "none of {tried} probes from {hi:.1e} down to {lo:.1e} kept the {}",
            keep.name()
        ),
        (None, _) => format!(
            "only {kept} isolated probes of {tried} (from {hi:.1e} down to {lo:.1e}) kept the {}: no consecutive pair to compare",
            keep.name()
        ),
    };
    let mut b = best.unwrap_or(ProbeColumn {
        column: vec![f64::NAN; 6],
        probe: f64::NAN,
        agreement: f64::INFINITY,
        certified: false,
        rollouts,
        failure: None,
    });
    b.rollouts = rollouts;
    b.failure = Some(why);
    b
}

impl QuadrupedExperiment {
    /// One rollout of this configuration, for plots and animation: the rigid law
    /// (`stiffness` None) or the penalty law at `stiffness` N/m per foot, over `steps` steps
    /// of dt (default T/dt), refused above `max_steps`.
    pub fn rollout(&self, stiffness: Option<f64>, steps: Option<usize>) -> Result<Trajectory> {
        self.validate()?;
        let law = match stiffness {
            None => ContactLaw::Rigid,
            Some(k) => ContactLaw::Penalty(PenaltyContact::from_ratio(
                k,
                self.damping_ratio,
                self.reference_mass,
            )?),
        };
        // `validate` has checked that t_final is a whole number of steps within max_steps.
        let steps = steps.unwrap_or_else(|| (self.t_final / self.dt).round() as usize);
        if steps as u64 > self.max_steps {
            return Err(FerroError::TooManySteps {
                route: "quadruped rollout",
                max_steps: self.max_steps,
                detail: format!("{steps} steps would be needed"),
            });
        }
        let x0 = self.robot.initial_state(self.clearance, self.speed)?;
        rollout(&self.robot, &law, &x0, self.dt, steps)
    }
}
