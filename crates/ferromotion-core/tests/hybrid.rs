//! `hybrid_jacobian`: verified against independent routes, and every refusal triggered.

mod common;

use common::rel_err_dyn;
use ferromotion_core::hybrid::*;
use ferromotion_core::systems::*;
use ferromotion_core::*;
use nalgebra::{DMatrix, DVector};

fn drop_system() -> BouncingDrop {
    BouncingDrop {
        gravity: 9.81,
        restitution: limit_restitution(0.1606).unwrap(),
    }
}

fn fd(
    sys: &dyn HybridSystem,
    x0: &DVector<f64>,
    t1: f64,
    opts: &HybridOptions,
    eps: f64,
) -> (DMatrix<f64>, bool) {
    // Central differences of the forward map, and whether every probe kept the event count.
    let n = x0.len();
    let nominal = hybrid_jacobian(sys, x0, 0, 0.0, t1, opts).unwrap();
    let mut j = DMatrix::zeros(n, n);
    let mut same = true;
    for c in 0..n {
        let mut e = DVector::zeros(n);
        e[c] = eps;
        let p = hybrid_jacobian(sys, &(x0 + &e), 0, 0.0, t1, opts).unwrap();
        let m = hybrid_jacobian(sys, &(x0 - &e), 0, 0.0, t1, opts).unwrap();
        same &= p.events.len() == nominal.events.len() && m.events.len() == nominal.events.len();
        j.set_column(c, &((p.x - m.x) / (2.0 * eps)));
    }
    (j, same)
}

#[test]
fn drop_matches_the_closed_form_exact_route_for_one_and_several_bounces() {
    let opts = HybridOptions {
        probe_rtol: 0.0,
        ..Default::default()
    };
    for t_final in [0.8, 1.9] {
        let drop = Drop {
            t_final,
            ..Drop::default()
        };
        let truth = exact(&drop, &ExactOptions::default()).unwrap();
        let x0 = DVector::from_vec(vec![drop.height, drop.velocity]);
        let sol = hybrid_jacobian(&drop_system(), &x0, 0, 0.0, t_final, &opts).unwrap();
        let j = DMatrix::from_row_slice(
            2,
            2,
            &ferromotion_core::physics::state::to_row_major(&truth.jacobian),
        );
        assert!(
            rel_err_dyn(&sol.jacobian, &j) < 1e-9,
            "T = {t_final}: {} vs {}",
            sol.jacobian,
            j
        );
        assert!((sol.x[1] - truth.state[1]).abs() < 1e-9);
        assert!(sol.events.len() >= if t_final > 1.0 { 5 } else { 1 });
    }
}

#[test]
fn slope_ball_matches_central_differences_that_keep_the_event_sequence() {
    let sys = SlopeBall {
        gravity: 9.81,
        restitution: 0.7,
        angle: 0.3,
    };
    let x0 = DVector::from_vec(vec![0.0, 1.0, 0.5, 0.0]);
    let opts = HybridOptions {
        probe_rtol: 0.0,
        ..Default::default()
    };
    let sol = hybrid_jacobian(&sys, &x0, 0, 0.0, 1.2, &opts).unwrap();
    assert!(sol.events.len() >= 2, "{:?}", sol.events);
    let (j, same) = fd(&sys, &x0, 1.2, &opts, 1e-6);
    assert!(same, "the probes changed the event sequence");
    assert!(
        rel_err_dyn(&sol.jacobian, &j) < 1e-6,
        "{} vs {}",
        sol.jacobian,
        j
    );
}

#[test]
fn grazing_is_refused_with_the_term_it_would_have_had() {
    // Dropped from 40 nm: the impact speed is 8.9e-4 m/s < 1e-3 m/s.
    let x0 = DVector::from_vec(vec![4e-8, 0.0]);
    let opts = HybridOptions {
        dt: 1e-5,
        probe_rtol: 0.0,
        ..Default::default()
    };
    match hybrid_jacobian(&drop_system(), &x0, 0, 0.0, 1.5e-4, &opts) {
        Err(FerroError::Grazing { speed, term, .. }) => {
            let e = limit_restitution(0.1606).unwrap();
            assert!(
                (term - (1.0 + e) * 9.81 / speed).abs() < 1e-6 * term,
                "{term} at {speed}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn hidden_state_is_refused() {
    let x0 = DVector::from_vec(vec![1.0, 0.0]);
    let r = hybrid_jacobian(
        &WarmStartedDrop(drop_system()),
        &x0,
        0,
        0.0,
        0.8,
        &HybridOptions::default(),
    );
    assert!(matches!(r, Err(FerroError::HiddenState { .. })), "{r:?}");
}

#[test]
fn two_events_in_one_step_are_located_in_order() {
    // A tiny bounce (restitution 0.01) returns 9 ms after the impact (at 0.4606 s): both
    // impacts fall in the 50 ms step from 0.45 s, and each is located; the answer is the
    // closed form's. t1 is before the third impact (90 µs later).
    let sys = BouncingDrop {
        gravity: 9.81,
        restitution: 0.01,
    };
    let x0 = DVector::from_vec(vec![1.0, 0.0]);
    let t_hit = (2.0f64 / 9.81).sqrt();
    let t1 = t_hit * 1.02 + 5e-5;
    let opts = HybridOptions {
        dt: 5e-2,
        graze_speed: 1e-6,
        ..Default::default()
    };
    let s = hybrid_jacobian(&sys, &x0, 0, 0.0, t1, &opts).unwrap();
    let e = exact_events(&sys, &x0, 0, 0.0, t1, &opts).unwrap();
    assert_eq!(s.events.len(), 2);
    assert_eq!(e.events.len(), 2);
    assert!(
        (&s.jacobian - &e.jacobian).amax() < 1e-6,
        "{} {}",
        s.jacobian,
        e.jacobian
    );
    assert!((s.events[1].t - t_hit * 1.02).abs() < 1e-9);
}

#[test]
fn a_zeno_cascade_inside_one_step_is_refused() {
    // Restitution 0.01 with no grazing floor: the bounces shrink 100x each, all inside one
    // step, until more are met than a step may hold.
    let sys = BouncingDrop {
        gravity: 9.81,
        restitution: 0.01,
    };
    let x0 = DVector::from_vec(vec![1.0, 0.0]);
    let opts = HybridOptions {
        dt: 1e-2,
        probe_rtol: 0.0,
        graze_speed: 1e-300,
        ..Default::default()
    };
    let r = hybrid_jacobian(&sys, &x0, 0, 0.0, 0.6, &opts);
    assert!(
        matches!(
            r,
            Err(FerroError::TwoEventsInOneStep { .. }) | Err(FerroError::Grazing { .. })
        ),
        "{r:?}"
    );
}

/// A mass on a spring (omega = 10 rad/s) that bounces off a wall at x = -0.05 m:
/// a flow RK4 does not integrate exactly, so a coarse step moves the Jacobian.
struct SpringWall;

impl HybridSystem for SpringWall {
    fn name(&self) -> String {
        "spring against a wall".into()
    }
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&self, _: usize, x: &DVector<f64>) -> DVector<f64> {
        DVector::from_vec(vec![x[1], -100.0 * x[0]])
    }
    fn rhs_jacobian(&self, _: usize, _: &DVector<f64>) -> DMatrix<f64> {
        DMatrix::from_row_slice(2, 2, &[0.0, 1.0, -100.0, 0.0])
    }
    fn guard_count(&self, _: usize) -> usize {
        1
    }
    fn guard(&self, _: usize, _: usize, x: &DVector<f64>) -> f64 {
        x[0] + 0.05
    }
    fn guard_gradient(&self, _: usize, _: usize, _: &DVector<f64>) -> DVector<f64> {
        DVector::from_vec(vec![1.0, 0.0])
    }
    fn reset(&self, m: usize, _: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        (m, DVector::from_vec(vec![x[0], -0.8 * x[1]]))
    }
    fn reset_jacobian(&self, _: usize, _: usize, _: &DVector<f64>) -> DMatrix<f64> {
        DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, -0.8])
    }
}

#[test]
fn a_probe_dependent_answer_is_refused() {
    // omega·dt = 0.5: RK4's Jacobian moves by ~1e-4 relative between dt and dt/2.
    let x0 = DVector::from_vec(vec![0.1, 0.0]);
    let coarse = HybridOptions {
        dt: 0.05,
        ..Default::default()
    };
    let r = hybrid_jacobian(&SpringWall, &x0, 0, 0.0, 1.0, &coarse);
    assert!(matches!(r, Err(FerroError::ProbeDependent { .. })), "{r:?}");
    // At omega·dt = 0.01 the same check passes, and the answer matches central
    // differences of the forward map.
    let fine = HybridOptions {
        dt: 1e-3,
        ..Default::default()
    };
    let sol = hybrid_jacobian(&SpringWall, &x0, 0, 0.0, 1.0, &fine).unwrap();
    assert!(sol.events.len() >= 2);
    let (j, same) = fd(
        &SpringWall,
        &x0,
        1.0,
        &HybridOptions {
            probe_rtol: 0.0,
            ..fine
        },
        1e-6,
    );
    assert!(same);
    assert!(
        rel_err_dyn(&sol.jacobian, &j) < 1e-6,
        "{} vs {}",
        sol.jacobian,
        j
    );
}

/// The drop whose flow remembers its previous call (a warm start it does not declare):
/// f(x) + 0.5·(x_prev - x), x_prev the state of the previous call.
struct UndeclaredMemory {
    drop: BouncingDrop,
    last: std::cell::RefCell<Option<DVector<f64>>>,
}

impl HybridSystem for UndeclaredMemory {
    fn name(&self) -> String {
        "drop with an undeclared warm start".into()
    }
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&self, mode: usize, x: &DVector<f64>) -> DVector<f64> {
        let f = self.drop.rhs(mode, x);
        let prev = self.last.replace(Some(x.clone()));
        match prev {
            Some(p) => f + 0.5 * (p - x),
            None => f,
        }
    }
    fn rhs_jacobian(&self, mode: usize, x: &DVector<f64>) -> DMatrix<f64> {
        self.drop.rhs_jacobian(mode, x)
    }
    fn guard_count(&self, mode: usize) -> usize {
        self.drop.guard_count(mode)
    }
    fn guard(&self, mode: usize, i: usize, x: &DVector<f64>) -> f64 {
        self.drop.guard(mode, i, x)
    }
    fn guard_gradient(&self, mode: usize, i: usize, x: &DVector<f64>) -> DVector<f64> {
        self.drop.guard_gradient(mode, i, x)
    }
    fn reset(&self, mode: usize, i: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        self.drop.reset(mode, i, x)
    }
    fn reset_jacobian(&self, mode: usize, i: usize, x: &DVector<f64>) -> DMatrix<f64> {
        self.drop.reset_jacobian(mode, i, x)
    }
}

#[test]
fn undeclared_hidden_state_is_measured_and_refused() {
    // Issue 14: the system does not declare its memory; the whole-vs-split residual finds it.
    let sys = UndeclaredMemory {
        drop: drop_system(),
        last: std::cell::RefCell::new(None),
    };
    let x0 = DVector::from_vec(vec![1.0, 0.0]);
    match hybrid_jacobian(&sys, &x0, 0, 0.0, 0.8, &HybridOptions::default()) {
        Err(FerroError::HiddenState { what, .. }) => {
            assert!(what.starts_with("measured"), "{what}")
        }
        other => panic!("{other:?}"),
    }
    // The same drop without the memory passes the measurement (free flight is a quadratic:
    // RK4 is exact on it, so whole and split agree to round-off).
    assert!(hybrid_jacobian(&drop_system(), &x0, 0, 0.0, 0.8, &HybridOptions::default()).is_ok());
}

#[test]
fn spectral_radius_and_worst_gain_match_the_closed_form_jacobian() {
    // The drop's J through one bounce, in closed form from the exact rigid route: its
    // eigenvalues and singular values, computed independently on the 2x2 by hand.
    let x0 = DVector::from_vec(vec![1.0, 0.0]);
    let s = hybrid_jacobian(&drop_system(), &x0, 0, 0.0, 0.8, &HybridOptions::default()).unwrap();
    let je = exact(&Drop::default(), &ExactOptions::default())
        .unwrap()
        .jacobian;
    let (a, b, c, d) = (je[(0, 0)], je[(0, 1)], je[(1, 0)], je[(1, 1)]);
    let (tr, det) = (a + d, a * d - b * c);
    let disc = tr * tr - 4.0 * det;
    let rho = if disc >= 0.0 {
        (0.5 * (tr.abs() + disc.sqrt())).abs()
    } else {
        det.abs().sqrt()
    };
    let fro2 = a * a + b * b + c * c + d * d;
    let gain = (0.5 * (fro2 + (fro2 * fro2 - 4.0 * det * det).sqrt())).sqrt();
    assert!(
        (s.spectral_radius - rho).abs() < 1e-6 * rho,
        "{} vs {rho}",
        s.spectral_radius
    );
    assert!(
        (s.worst_gain - gain).abs() < 1e-6 * gain,
        "{} vs {gain}",
        s.worst_gain
    );
    assert!(s.worst_gain >= s.spectral_radius);
}
