//! The planar quadruped (issue #7): the rigid-body tree against independent oracles, the
//! time-stepping scheme's conservation laws, the checked LCP, the rigid-step identity
//! control, the probe-stability of the Jacobian reference, and the two-axis comparison
//! asserted from the numbers it computes.
#![allow(clippy::disallowed_methods)] // native-only oracles: std floats are fine here

use ferromotion_core::FerroError;
use ferromotion_quadruped::{
    count_modes, quadruped_experiment, rigid_step, rollout, step, ContactLaw, ContactMode,
    PenaltyContact, QuadState, Quadruped, QuadrupedExperiment, QuadrupedReport, NDOF,
};
use nalgebra::{DMatrix, DVector};
use std::sync::OnceLock;

/// Deterministic pseudo-random numbers in [-1, 1) (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    fn vec(&mut self, scale: f64) -> DVector<f64> {
        DVector::from_fn(NDOF, |_, _| scale * self.next())
    }
}

/// A pose with the trunk anywhere and joints over their working range.
fn random_pose(rng: &mut Rng) -> DVector<f64> {
    let mut q = rng.vec(1.5);
    q[1] += 2.0;
    q
}

/// Kinetic energy from first principles: body velocities by central differences of the
/// body poses along v (no mass matrix, no Jacobian, no RNEA).
fn kinetic_energy_from_poses(robot: &Quadruped, q: &DVector<f64>, v: &DVector<f64>) -> f64 {
    let h = 1e-6;
    let a = robot.body_poses(&(q + h * v)).unwrap();
    let b = robot.body_poses(&(q - h * v)).unwrap();
    robot
        .body_mass_properties()
        .iter()
        .enumerate()
        .map(|(i, (m, inertia))| {
            let vx = (a[i][0] - b[i][0]) / (2.0 * h);
            let vz = (a[i][1] - b[i][1]) / (2.0 * h);
            let w = (a[i][2] - b[i][2]) / (2.0 * h);
            0.5 * m * (vx * vx + vz * vz) + 0.5 * inertia * w * w
        })
        .sum()
}

#[test]
fn mass_matrix_is_spd_and_is_the_kinetic_energy() {
    let robot = Quadruped::default();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..20 {
        let q = random_pose(&mut rng);
        let v = rng.vec(2.0);
        let m = robot.mass_matrix(&q).unwrap();
        let asym = (&m - m.transpose()).amax() / m.amax();
        assert!(asym == 0.0, "M not symmetric: {asym:e}");
        let eig = m.clone().symmetric_eigenvalues();
        let (lo, hi) = (eig.min(), eig.max());
        // The smallest eigenvalue is a shank's inertia about its knee (~4e-3 kg·m² less
        // coupling); positive with a wide margin, condition number ~1e4.
        assert!(lo > 1e-4 && hi / lo < 1e6, "eigenvalues {lo:e} .. {hi:e}");
        let t_m = 0.5 * v.dot(&(&m * &v));
        let t_fd = kinetic_energy_from_poses(&robot, &q, &v);
        // Central differences at h = 1e-6 are good to ~1e-10 relative here.
        assert!(
            ((t_m - t_fd) / t_fd).abs() < 1e-8,
            "½vᵀMv = {t_m} J, from body velocities {t_fd} J"
        );
    }
}

#[test]
fn mass_matrix_equals_rnea_columns_and_bias_is_lagrange() {
    let robot = Quadruped::default();
    let mut rng = Rng(12345);
    for _ in 0..5 {
        let q = random_pose(&mut rng);
        let v = rng.vec(2.0);
        let m = robot.mass_matrix(&q).unwrap();
        let zero = DVector::zeros(NDOF);
        let g = robot.inverse_dynamics(&q, &zero, &zero).unwrap();
        for i in 0..NDOF {
            let mut e = DVector::zeros(NDOF);
            e[i] = 1.0;
            let col = robot.inverse_dynamics(&q, &zero, &e).unwrap() - &g;
            let err = (&col - m.column(i)).amax();
            assert!(err < 1e-12 * m.amax(), "column {i}: RNEA vs CRBA {err:e}");
        }
        // Lagrange: h = Ṁ v - ∂T/∂q + ∂V/∂q, every derivative by central differences of M
        // and of the potential energy (h = 1e-6: ~1e-9 relative).
        let h = robot.bias_forces(&q, &v).unwrap();
        let eps = 1e-6;
        let mdot = (robot.mass_matrix(&(&q + eps * &v)).unwrap()
            - robot.mass_matrix(&(&q - eps * &v)).unwrap())
            / (2.0 * eps);
        let mut lag = &mdot * &v;
        for i in 0..NDOF {
            let mut e = DVector::zeros(NDOF);
            e[i] = eps;
            let (qp, qm) = (&q + &e, &q - &e);
            let dt = (robot.kinetic_energy(&qp, &v).unwrap()
                - robot.kinetic_energy(&qm, &v).unwrap())
                / (2.0 * eps);
            let dv = (robot.potential_energy(&qp).unwrap() - robot.potential_energy(&qm).unwrap())
                / (2.0 * eps);
            lag[i] += dv - dt;
        }
        let err = (&lag - &h).amax() / h.amax();
        assert!(err < 1e-7, "RNEA bias vs Lagrange: {err:e}");
    }
}

#[test]
fn contact_jacobians_are_the_foot_velocities() {
    let robot = Quadruped::default();
    let mut rng = Rng(777);
    for _ in 0..5 {
        let q = random_pose(&mut rng);
        let v = rng.vec(2.0);
        let (jn, jt) = robot.contact_jacobians(&q).unwrap();
        let eps = 1e-6;
        let a = robot.foot_positions(&(&q + eps * &v)).unwrap();
        let b = robot.foot_positions(&(&q - eps * &v)).unwrap();
        for f in 0..4 {
            let vx = (a[f][0] - b[f][0]) / (2.0 * eps);
            let vz = (a[f][1] - b[f][1]) / (2.0 * eps);
            assert!((jt.row(f).dot(&v.transpose()) - vx).abs() < 1e-8);
            assert!((jn.row(f).dot(&v.transpose()) - vz).abs() < 1e-8);
        }
    }
}

#[test]
fn foot_effective_mass_is_a_shank_not_a_trunk() {
    // The penalty law's damping is sized on 0.2 kg because of this (see QuadrupedExperiment).
    let robot = Quadruped::default();
    let x0 = robot.initial_state(0.01, 0.3).unwrap();
    for m in robot.foot_effective_masses(&x0.q).unwrap() {
        assert!((0.15..0.25).contains(&m), "foot effective mass {m} kg");
    }
}

/// A robot tumbling in the air: no control, feet far from the ground.
fn free_flight(gravity: f64, dt: f64, t_final: f64) -> (Quadruped, QuadState, QuadState) {
    let robot = Quadruped {
        gravity,
        kp: 0.0,
        kd: 0.0,
        ..Quadruped::default()
    };
    let mut rng = Rng(2024);
    let mut x0 = robot.initial_state(50.0, 1.0).unwrap();
    x0.v += rng.vec(3.0);
    let n = (t_final / dt).round() as usize;
    let tr = rollout(&robot, &ContactLaw::Rigid, &x0, dt, n).unwrap();
    assert!(tr
        .modes
        .iter()
        .flatten()
        .all(|&m| m == ContactMode::Separated));
    let last = &tr.state[tr.state.len() - 2 * NDOF..];
    let x = QuadState {
        t: t_final,
        q: DVector::from_row_slice(&last[..NDOF]),
        v: DVector::from_row_slice(&last[NDOF..]),
    };
    (robot, x0, x)
}

/// Total linear momentum Σ m_b ċ_b, kg·m/s: the first two rows of M(q)·v.
fn linear_momentum(robot: &Quadruped, x: &QuadState) -> [f64; 2] {
    let p = robot.mass_matrix(&x.q).unwrap() * &x.v;
    [p[0], p[1]]
}

#[test]
fn free_flight_conserves_momentum_to_first_order_in_dt() {
    // Without gravity or control, x and z are cyclic: (M v)_x and (M v)_z are conserved by
    // the flow. Semi-implicit Euler keeps (M(q_n) v_{n+1}) = (M(q_n) v_n) on those rows
    // exactly and loses O(dt) through M(q_{n+1}) ≠ M(q_n), so the drift must fall tenfold
    // with dt.
    let mut drift = vec![];
    for dt in [1e-3, 1e-4] {
        let (robot, x0, x) = free_flight(0.0, dt, 1.0);
        let (p0, p1) = (linear_momentum(&robot, &x0), linear_momentum(&robot, &x));
        let scale = robot.total_mass() * x0.v.amax();
        drift.push(((p1[0] - p0[0]).hypot(p1[1] - p0[1])) / scale);
    }
    println!("relative momentum drift over 1 s at 1 ms, 0.1 ms: {drift:?}");
    assert!(drift[0] < 5e-4, "momentum drift at 1 ms: {:e}", drift[0]);
    let ratio = drift[0] / drift[1];
    assert!(
        (5.0..20.0).contains(&ratio),
        "drift ratio dt/(dt/10) = {ratio}"
    );
}

#[test]
fn free_flight_with_gravity_energy_drift_is_bounded_and_first_order() {
    // Gravity on, no control, no contact: E = T + V is conserved by the flow. The scheme
    // is not symplectic for this non-separable Lagrangian (Coriolis terms are explicit), so
    // the drift is bounded by O(dt) over the run, not zero. Vertical momentum must follow
    // d(Mv)_z/dt = -m g exactly on the rows, up to the same O(dt).
    let mut drift = vec![];
    for dt in [1e-3, 1e-4] {
        let (robot, x0, x) = free_flight(9.81, dt, 1.0);
        let e0 = robot.energy(&x0.q, &x0.v).unwrap();
        let e1 = robot.energy(&x.q, &x.v).unwrap();
        let ke = robot.kinetic_energy(&x0.q, &x0.v).unwrap();
        drift.push((e1 - e0).abs() / ke);
        let (p0, p1) = (linear_momentum(&robot, &x0), linear_momentum(&robot, &x));
        let gz = p1[1] - p0[1] + robot.total_mass() * 9.81 * 1.0;
        assert!(
            gz.abs() < 10.0 * dt * robot.total_mass() * 9.81,
            "vertical momentum off the -m g t line by {gz} kg·m/s at dt = {dt}"
        );
    }
    println!("energy drift over 1 s / kinetic energy at 1 ms, 0.1 ms: {drift:?}");
    assert!(
        drift[0] < 1e-2,
        "energy drift at 1 ms: {:e} of the kinetic energy",
        drift[0]
    );
    let ratio = drift[0] / drift[1];
    assert!(
        (5.0..20.0).contains(&ratio),
        "drift ratio dt/(dt/10) = {ratio}"
    );
}

#[test]
fn lcp_solutions_hold_at_every_contact_step_of_a_trot() {
    // Check the physics from the step records, not the solver's own summary.
    let robot = Quadruped::default();
    let mut x = robot.initial_state(0.01, 0.3).unwrap();
    let (dt, mu) = (1e-3, robot.friction);
    let (mut contact_steps, mut sliding, mut sticking) = (0, 0, 0);
    for _ in 0..1000 {
        let s = rigid_step(&robot, &x, dt).unwrap();
        for f in s.feet.iter() {
            if f.gap >= robot.activation_distance {
                continue;
            }
            // Normal complementarity: 0 ≤ λ_n ⊥ φ/dt + ż⁺ ≥ 0 (m/s; λ_n in N·s).
            let w = f.gap / dt + f.normal_velocity;
            assert!(
                f.normal_impulse >= 0.0 && w > -1e-12,
                "λ_n {} w {w}",
                f.normal_impulse
            );
            assert!(
                (f.normal_impulse * w).abs() < 1e-14,
                "λ_n·w = {:e} J",
                f.normal_impulse * w
            );
            // Friction cone |λ_t| ≤ μ λ_n.
            assert!(f.tangential_impulse.abs() <= mu * f.normal_impulse + 1e-14);
            match f.mode {
                ContactMode::Separated => assert!(f.normal_impulse <= 1e-12),
                ContactMode::Sticking => {
                    sticking += 1;
                    assert!(
                        f.slip_velocity.abs() < 1e-12,
                        "sticking foot slips {}",
                        f.slip_velocity
                    );
                }
                ContactMode::SlidingForward | ContactMode::SlidingBackward => {
                    sliding += 1;
                    // On the cone, opposing the slip (maximal dissipation).
                    assert!((f.tangential_impulse.abs() - mu * f.normal_impulse).abs() < 1e-14);
                    assert!(f.tangential_impulse * f.slip_velocity <= 1e-15);
                    let forward = f.mode == ContactMode::SlidingForward;
                    assert!(f.slip_velocity == 0.0 || (f.slip_velocity > 0.0) == forward);
                }
            }
        }
        if let Some(c) = s.lcp {
            if s.feet.iter().any(|f| f.normal_impulse > 0.0) {
                contact_steps += 1;
            }
            assert!(c.worst() < 1e-12, "LCP residual {:e}", c.worst());
        }
        x = s.state;
    }
    // Two trot periods: the trunk is held by the feet almost all the time, and both
    // sticking and sliding occur.
    assert!(contact_steps > 900, "{contact_steps} contact steps");
    assert!(
        sticking > 100 && sliding > 10,
        "{sticking} sticking, {sliding} sliding foot-steps"
    );
}

#[test]
fn steps_refuse_bad_input() {
    let robot = Quadruped::default();
    let x = robot.initial_state(0.01, 0.3).unwrap();
    let bad = |r: Result<_, FerroError>| matches!(r, Err(FerroError::InvalidParameter { .. }));
    assert!(bad(rigid_step(&robot, &x, 0.0).map(|_| ())));
    assert!(bad(rigid_step(&robot, &x, f64::NAN).map(|_| ())));
    let mut short = x.clone();
    short.q = DVector::zeros(3);
    assert!(bad(rigid_step(&robot, &short, 1e-3).map(|_| ())));
    let mut nan = x.clone();
    nan.v[4] = f64::NAN;
    assert!(bad(rigid_step(&robot, &nan, 1e-3).map(|_| ())));
    let soft = PenaltyContact::from_ratio(1e4, 0.5, 0.2).unwrap();
    let neg = PenaltyContact {
        stiffness: -1.0,
        ..soft
    };
    assert!(bad(
        step(&robot, &ContactLaw::Penalty(neg), &x, 1e-3).map(|_| ())
    ));
    assert!(bad(PenaltyContact::from_ratio(1e4, -0.1, 0.2).map(|_| ())));
    let heavy = Quadruped {
        thigh_mass: 0.0,
        ..robot
    };
    assert!(bad(rigid_step(&heavy, &x, 1e-3).map(|_| ())));
    let cfg = QuadrupedExperiment {
        dt: 3e-3,
        t_final: 0.5,
        ..QuadrupedExperiment::default()
    };
    assert!(matches!(
        quadruped_experiment(&cfg),
        Err(FerroError::StepDoesNotDivide { .. })
    ));
}

#[test]
fn mode_changes_are_counted_per_foot_per_step() {
    use ContactMode::*;
    let m = |a: ContactMode| [a, Separated, Separated, Separated];
    let seq = [
        m(Separated),
        m(Sticking),
        m(Sticking),
        m(SlidingForward),
        m(SlidingBackward),
        m(Sticking),
        m(Separated),
    ];
    let c = count_modes(&seq);
    assert_eq!(
        (
            c.total,
            c.touchdowns,
            c.stick_to_slide,
            c.slide_reversals,
            c.slide_to_stick,
            c.liftoffs
        ),
        (5, 1, 1, 1, 1, 1)
    );
    assert_eq!(c.per_foot, [5, 0, 0, 0]);
    assert_eq!(c.contact_foot_steps, 5);
}

// ---------------------------------------------------------------------------------------
// The comparison (computed once, shared by the tests below).

/// The default sweep, k = 1e3..1e7 N/m at dt = 1 ms, forward axis against dt/100 and the
/// gradient axis at dt; the converged-gradient reference is the expensive part and is
/// computed separately on two laws.
fn sweep() -> &'static QuadrupedReport {
    static R: OnceLock<QuadrupedReport> = OnceLock::new();
    R.get_or_init(|| quadruped_experiment(&QuadrupedExperiment::default()).unwrap())
}

/// Rigid and k = 1e4 N/m with the gradient's converged reference at dt/20 (50 µs; the
/// example runs dt/100, which costs ~40 rollouts of 50,000 steps per law).
fn converged() -> &'static QuadrupedReport {
    static R: OnceLock<QuadrupedReport> = OnceLock::new();
    R.get_or_init(|| {
        quadruped_experiment(&QuadrupedExperiment {
            stiffness: vec![1e4],
            refinement: 20,
            converged_gradient: true,
            ..QuadrupedExperiment::default()
        })
        .unwrap()
    })
}

fn penalty(rep: &QuadrupedReport, k: f64) -> &ferromotion_quadruped::LawReport {
    rep.penalty
        .iter()
        .find(|r| matches!(r.contact, ContactLaw::Penalty(p) if p.stiffness == k))
        .unwrap()
}

#[test]
fn rigid_trajectory_of_the_comparison_is_the_library_step_bit_for_bit() {
    let rep = sweep();
    let cfg = &rep.config;
    let tr = rep.rigid.trajectory.as_ref().unwrap();
    let mut x = cfg.robot.initial_state(cfg.clearance, cfg.speed).unwrap();
    let n = (cfg.t_final / cfg.dt).round() as usize;
    assert_eq!(tr.t.len(), n + 1);
    for i in 0..=n {
        let row = &tr.state[i * 2 * NDOF..(i + 1) * 2 * NDOF];
        for (a, b) in row.iter().zip(x.q.iter().chain(x.v.iter())) {
            assert_eq!(a.to_bits(), b.to_bits(), "step {i}: {a} vs {b}");
        }
        assert_eq!(tr.t[i].to_bits(), x.t.to_bits());
        if i < n {
            x = rigid_step(&cfg.robot, &x, cfg.dt).unwrap().state;
        }
    }
}

/// Central difference of the trunk's final state along input j (0: z0, 1: ẋ0, 2: kp) at
/// probe eps, by whole rollouts through the public API, and the per-step modes kept.
fn probe(rep: &QuadrupedReport, law: &ContactLaw, j: usize, eps: f64) -> (Vec<f64>, bool) {
    let cfg = &rep.config;
    let n = (cfg.t_final / cfg.dt).round() as usize;
    let x0 = cfg.robot.initial_state(cfg.clearance, cfg.speed).unwrap();
    let nominal = rollout(&cfg.robot, law, &x0, cfg.dt, n).unwrap().modes;
    let mut out = [[0.0; 6]; 2];
    let mut same = true;
    for (k, s) in [1.0, -1.0].into_iter().enumerate() {
        let (mut robot, mut x) = (cfg.robot, x0.clone());
        match j {
            0 => x.q[1] += s * eps,
            1 => x.v[0] += s * eps,
            _ => robot.kp += s * eps,
        }
        let tr = rollout(&robot, law, &x, cfg.dt, n).unwrap();
        same &= tr.modes == nominal;
        let l = &tr.state[n * 2 * NDOF..];
        out[k] = [l[0], l[1], l[2], l[NDOF], l[NDOF + 1], l[NDOF + 2]];
    }
    (
        (0..6)
            .map(|o| (out[0][o] - out[1][o]) / (2.0 * eps))
            .collect(),
        same,
    )
}

fn rel(a: &[f64], b: &[f64]) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
    let n: f64 = b.iter().map(|y| y * y).sum();
    (d / n).sqrt()
}

#[test]
fn jacobian_reference_is_stable_under_probe_changes() {
    // The reference was accepted at probe ε with D(2ε) ≈ D(ε); at ε/2 and ε/4 (independent
    // rollouts here) the mode sequence must still hold and D must not move by more than
    // 1e-5 — otherwise the "reference" would be a property of the probe, not of the map.
    let rep = sweep();
    for law in [&rep.rigid, penalty(rep, 1e4)] {
        let g = law.gradient.as_ref().unwrap();
        assert_eq!(g.certified_columns, 3);
        for (j, col) in g.reference.iter().enumerate() {
            assert!(col.certified && col.agreement <= rep.config.probe_tol);
            for f in [0.5, 0.25] {
                let (d, same) = probe(rep, &law.contact, j, col.probe * f);
                assert!(
                    same,
                    "{} input {j}: modes changed at {:e}",
                    law.law,
                    col.probe * f
                );
                let e = rel(&d, &col.column);
                assert!(
                    e < 1e-5,
                    "{} input {j}: D({:e}) moved {e:e}",
                    law.law,
                    col.probe * f
                );
            }
        }
    }
}

#[test]
fn two_axis_comparison() {
    let rep = sweep();
    let rigid = &rep.rigid;
    let (rf, rg) = (rigid.forward.unwrap(), rigid.gradient.as_ref().unwrap());
    let rm = rigid.modes.unwrap();
    println!("{}", rep.table());

    // Forward fidelity, rigid: no penetration beyond the linearisation error of φ/dt
    // (measured 0 m), no slip of a sticking foot, contact dissipates energy, and the run
    // at 1 ms is within 1 mm of the same law at 10 µs.
    assert!(
        rf.max_penetration < 1e-6,
        "rigid penetration {:e} m",
        rf.max_penetration
    );
    assert!(rf.max_creep < 1e-12);
    assert!(rf.contact_work < 0.0);
    assert!(
        rf.converged_distance < 1e-3,
        "rigid vs its dt/100 run: {:e} m",
        rf.converged_distance
    );
    let lcp = rigid.lcp.unwrap();
    assert!(lcp.steps > 400 && lcp.max_complementarity < 1e-14 && lcp.max_cone_violation < 1e-14);
    // 18 mode changes in the period (6 touchdowns, 2 lift-offs, 5 stick→slide, 5 back).
    assert!(
        (10..40).contains(&rm.total),
        "rigid mode changes {}",
        rm.total
    );

    // Forward fidelity, penalty: the soft laws (1e3, 1e4 N/m) are resolved at 1 ms (within
    // 1 mm of their dt/100 runs) but sink 1.8–12 cm and creep 0.4–1 m/s on "sticking"
    // feet; from 1e5 N/m the explicit spring-damper chatters at 1 ms (hundreds of mode
    // changes, centimetres from its own converged run), from 1e6 N/m it injects energy.
    for k in [1e3, 1e4] {
        let p = penalty(rep, k);
        let f = p.forward.unwrap();
        assert!(
            f.max_penetration > 1e-2,
            "k = {k}: penetration {:e}",
            f.max_penetration
        );
        assert!(f.max_creep > 0.1, "k = {k}: creep {:e}", f.max_creep);
        assert!(f.converged_distance < 1e-3);
        assert!(p.modes.unwrap().total < 40);
    }
    let f5 = penalty(rep, 1e5).forward.unwrap();
    assert!(f5.converged_distance > 1e-2 && penalty(rep, 1e5).modes.unwrap().total > 200);
    for k in [1e6, 1e7] {
        let f = penalty(rep, k).forward.unwrap();
        assert!(
            f.contact_work > 0.0,
            "k = {k}: contact work {} J",
            f.contact_work
        );
        assert!(f.converged_distance > 1e-2);
    }
    // Every penalty row is worse than the rigid one on penetration and creep.
    for p in &rep.penalty {
        let f = p.forward.unwrap();
        assert!(f.max_penetration > 100.0 * rf.max_penetration.max(1e-9));
        assert!(f.max_creep > 1e6 * rf.max_creep.max(1e-15));
    }

    // Gradient accuracy against the same law's probe-stable differences at 1 ms: every
    // tangent whose reference exists is the derivative of its map (to 1e-6); the chattering
    // explicit laws (1e6, 1e7) have no probe that keeps their mode sequence, and their
    // tangents blow up.
    assert!(rg.tangent_error.unwrap() < 1e-6);
    for k in [1e3, 1e4, 1e5] {
        let g = penalty(rep, k).gradient.as_ref().unwrap();
        assert_eq!(g.certified_columns, 3);
        assert!(
            g.tangent_error.unwrap() < 1e-6,
            "k = {k}: {:?}",
            g.tangent_error
        );
    }
    for k in [1e6, 1e7] {
        let g = penalty(rep, k).gradient.as_ref().unwrap();
        assert_eq!(g.certified_columns, 0);
        assert!(
            g.tangent_max > 1e10,
            "k = {k}: tangent max {:e}",
            g.tangent_max
        );
    }
    // At a simulator-typical probe (1e-4), the rigid map is nearly smooth (continuous in the
    // state); the penalty maps are rough (the push-only force jumps at touchdown).
    let rt = rg.typical_probe_error.unwrap();
    assert!(rt < 1e-2, "rigid typical-probe error {rt:e}");
    for k in [1e3, 1e4, 1e5] {
        let e = penalty(rep, k)
            .gradient
            .as_ref()
            .unwrap()
            .typical_probe_error
            .unwrap();
        assert!(
            e > 10.0 * rt,
            "k = {k}: typical-probe error {e:e} vs rigid {rt:e}"
        );
    }
}

#[test]
fn gradient_at_dt_against_the_converged_scheme() {
    // The 1 ms tangent against probe-stable differences (event order kept) of the same law
    // at dt/20: the rigid law's own fixed step, the penalty law's event-located rollout
    // (switches located inside the step, so the reference carries the touchdown's
    // saltation). Measured: rigid 5.1e-2; penalty 1e4 N/m 0.70, nearly all of it the
    // saltation the fixed step's tangent leaves out at every dt (its dt/20 tangent is 0.69
    // from the same reference).
    let rep = converged();
    let rg = rep.rigid.gradient.as_ref().unwrap();
    let pg = penalty(rep, 1e4).gradient.as_ref().unwrap();
    println!("{}", rep.table());
    for g in [rg, pg] {
        let cols = g.converged_reference.as_ref().unwrap();
        assert!(cols.iter().all(|c| c.certified && c.failure.is_none()));
        assert_eq!(g.converged_certified_columns, Some(3));
    }
    assert_eq!(rg.converged_scheme, Some("fixed step"));
    assert_eq!(pg.converged_scheme, Some("event-located"));
    // Each reference is the derivative of its own map, by a second route: the rigid
    // law's fixed-step tangent at dt/20, and the located scheme's own tangent (carried
    // through every switch with the switch time's derivative).
    assert!(
        rg.refined_tangent_error.unwrap() < 1e-6,
        "{:?}",
        rg.refined_tangent_error
    );
    let located = pg.converged_tangent_error.unwrap();
    assert!(
        located < 1e-6,
        "located tangent vs its differences {located:e}"
    );
    // The located reference is settled in dt (against dt/40 at the same probes).
    let spread = pg.converged_spread.unwrap();
    assert!(
        spread < 1e-2,
        "penalty reference dt/20 vs dt/40: {spread:e}"
    );
    let (re, pe) = (rg.converged_error.unwrap(), pg.converged_error.unwrap());
    assert!(
        (0.02..0.2).contains(&re),
        "rigid 1 ms tangent vs dt/20: {re:e}"
    );
    // The fixed step's penalty tangent misses the saltation at 1 ms and at dt/20 alike.
    let gap = pg.refined_tangent_error.unwrap();
    assert!(
        pe > 0.1 && gap > 0.1,
        "penalty: {pe:e} at 1 ms, {gap:e} at dt/20"
    );
    assert!((pe - gap).abs() < 0.2 * pe, "{pe:e} vs {gap:e}");
}

/// The forward-mode tangent of a whole run (z0, ẋ0, kp columns), 6 × 3 row-major, and the
/// mode changes, through the public step API.
fn tangent_run(
    robot: &Quadruped,
    law: &ContactLaw,
    dt: f64,
    n: usize,
) -> (Vec<f64>, ferromotion_quadruped::ModeCounts) {
    use ferromotion_quadruped::{propagate_tangent, Tangent};
    let mut x = robot.initial_state(0.01, 0.3).unwrap();
    let mut dq = DMatrix::zeros(NDOF, 3);
    let mut dv = DMatrix::zeros(NDOF, 3);
    dq[(1, 0)] = 1.0;
    dv[(0, 1)] = 1.0;
    let mut t = Tangent {
        dq,
        dv,
        dkp: vec![0.0, 0.0, 1.0],
    };
    let mut modes = vec![];
    for _ in 0..n {
        let s = step(robot, law, &x, dt).unwrap();
        propagate_tangent(robot, law, &x, &s, dt, &mut t).unwrap();
        modes.push(s.feet.map(|f| f.mode));
        x = s.state;
    }
    let mut j = vec![0.0; 18];
    for o in 0..6 {
        for c in 0..3 {
            j[3 * o + c] = if o < 3 {
                t.dq[(o, c)]
            } else {
                t.dv[(o - 3, c)]
            };
        }
    }
    (j, count_modes(&modes))
}

fn jac_err(a: &[f64], b: &[f64]) -> f64 {
    (0..3)
        .map(|c| {
            let x: Vec<f64> = (0..6).map(|o| a[3 * o + c]).collect();
            let y: Vec<f64> = (0..6).map(|o| b[3 * o + c]).collect();
            rel(&x, &y)
        })
        .fold(0.0, f64::max)
}

#[test]
fn rigid_jacobian_moves_when_dt_resolves_multi_foot_impacts() {
    // Each tangent is the exact derivative of its own discrete map (checked against
    // probe-stable differences in the comparison). Between 1 ms and 50 µs the rigid
    // one-period Jacobian moves 5%; at 10 µs a landing foot's impulse lifts another stance
    // foot off for a step (3 lift-offs instead of 2; the 18 mode changes are a different
    // 18) and the Jacobian moves by ~50%. The soft penalty law's Jacobian converges steadily
    // (~first order).
    let robot = Quadruped::default();
    let soft = ContactLaw::Penalty(PenaltyContact::from_ratio(1e4, 0.5, 0.2).unwrap());
    let (r3, m3) = tangent_run(&robot, &ContactLaw::Rigid, 1e-3, 500);
    let (r5, m5) = tangent_run(&robot, &ContactLaw::Rigid, 1e-5, 50_000);
    let (r45, _) = tangent_run(&robot, &ContactLaw::Rigid, 5e-5, 10_000);
    let (p3, _) = tangent_run(&robot, &soft, 1e-3, 500);
    let (p4, _) = tangent_run(&robot, &soft, 1e-4, 5_000);
    let (p5, _) = tangent_run(&robot, &soft, 1e-5, 50_000);
    let (rigid_near, rigid_far) = (jac_err(&r3, &r45), jac_err(&r3, &r5));
    println!(
        "rigid: |J(1ms) - J(50µs)| {rigid_near:e}, |J(1ms) - J(10µs)| {rigid_far:e}, modes {m3:?} -> {m5:?}"
    );
    assert!(rigid_near < 0.1 && rigid_far > 0.3);
    assert!(
        m5.liftoffs > m3.liftoffs,
        "lift-offs at 10 µs vs 1 ms: {m5:?} {m3:?}"
    );
    let (e3, e4) = (jac_err(&p3, &p5), jac_err(&p4, &p5));
    println!("penalty 1e4: |J(1ms) - J(10µs)| {e3:e}, |J(100µs) - J(10µs)| {e4:e}");
    assert!(e3 < 0.03 && e4 < 0.2 * e3);
}
