//! Regression test for #14: `hybrid_jacobian` needed analytic flow, guard and reset
//! Jacobians, which no simulator offers, and caught hidden state only when a system declared
//! it. The black-box driver (`hybrid::step_jacobian`) takes a step function alone; each
//! answer here is checked against an independent oracle: the closed-form rigid drop
//! (`exact`), the closed-form Jacobian of an explicit Euler map, or the split residual
//! worked out by hand.
#![allow(clippy::disallowed_methods)] // native-only oracles: std floats are fine here

mod common;

use common::rel_err_dyn;
use ferromotion_core::hybrid::*;
use ferromotion_core::*;
use nalgebra::{DMatrix, DVector};
use std::cell::Cell;

const G: f64 = 9.81;

fn restitution() -> f64 {
    limit_restitution(Drop::default().zeta).unwrap()
}

/// How a test system steps its free flight (x' = v, v' = -g).
#[derive(Clone, Copy)]
enum Integrator {
    /// The parabola, exact over any dt.
    Exact,
    /// Classical RK4 of the flow (exact too: the flow is polynomial of degree 2).
    Rk4,
    /// Explicit Euler: y += dt·v, v -= dt·g (first order; its split residual is g·h²).
    Euler,
}

fn flight(how: Integrator, x: &DVector<f64>, dt: f64) -> DVector<f64> {
    let f = |x: &DVector<f64>| DVector::from_vec(vec![x[1], -G]);
    match how {
        Integrator::Exact => {
            DVector::from_vec(vec![x[0] + x[1] * dt - 0.5 * G * dt * dt, x[1] - G * dt])
        }
        Integrator::Rk4 => {
            let k1 = f(x);
            let k2 = f(&(x + 0.5 * dt * &k1));
            let k3 = f(&(x + 0.5 * dt * &k2));
            let k4 = f(&(x + dt * &k3));
            x + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        }
        Integrator::Euler => DVector::from_vec(vec![x[0] + dt * x[1], x[1] - G * dt]),
    }
}

/// The drop as a black box: a free-flight step, guards `y - level` (no reset) and, when
/// `bounce`, guard 0 with the driver's reset (y, -e·v).
struct Flight {
    how: Integrator,
    levels: Vec<f64>,
    bounce: bool,
    /// An undeclared memory: the previous call's y, added (times this) to v.
    leak: f64,
    last: Cell<f64>,
    /// Below this height the step returns NaN.
    nan_below: f64,
    /// A fine ripple of this amplitude·dt (wavelength 1 nm in y): a map whose central
    /// differences depend on the probe.
    ripple: f64,
}

impl Flight {
    fn new(how: Integrator) -> Self {
        Flight {
            how,
            levels: vec![0.0],
            bounce: true,
            leak: 0.0,
            last: Cell::new(0.0),
            nan_below: f64::NEG_INFINITY,
            ripple: 0.0,
        }
    }
}

impl StepSystem for Flight {
    fn name(&self) -> String {
        "black-box drop".into()
    }
    fn dim(&self) -> usize {
        2
    }
    fn step(&self, x: &DVector<f64>, dt: f64) -> DVector<f64> {
        let mut y = flight(self.how, x, dt);
        y[1] += self.leak * self.last.get();
        y[1] += self.ripple * dt * (x[0] / 1e-9).sin();
        self.last.set(y[0]);
        if y[0] < self.nan_below {
            y[0] = f64::NAN;
        }
        y
    }
    fn guard_count(&self) -> usize {
        self.levels.len()
    }
    fn guard(&self, i: usize, x: &DVector<f64>) -> f64 {
        x[0] - self.levels[i]
    }
    fn has_reset(&self, i: usize) -> bool {
        self.bounce && i == 0
    }
    fn reset(&self, _: usize, x: &DVector<f64>) -> DVector<f64> {
        DVector::from_vec(vec![x[0], -restitution() * x[1]])
    }
}

fn exact_jacobian(t_final: f64) -> (DMatrix<f64>, State) {
    let drop = Drop {
        t_final,
        ..Drop::default()
    };
    let r = exact(&drop, &ExactOptions::default()).unwrap();
    let j = DMatrix::from_row_slice(
        2,
        2,
        &ferromotion_core::physics::state::to_row_major(&r.jacobian),
    );
    (j, r.state)
}

fn x0() -> DVector<f64> {
    DVector::from_vec(vec![1.0, 0.0])
}

#[test]
fn a_black_box_free_flight_with_guard_and_reset_reproduces_the_closed_form_drop() {
    for how in [Integrator::Exact, Integrator::Rk4] {
        for t_final in [0.8, 1.9] {
            let (j, state) = exact_jacobian(t_final);
            let s = step_jacobian(
                &Flight::new(how),
                &x0(),
                0.0,
                t_final,
                &StepOptions::default(),
            )
            .unwrap();
            let sol = &s.solution;
            assert!(
                rel_err_dyn(&sol.jacobian, &j) < 1e-6,
                "T = {t_final}: {} vs {}",
                sol.jacobian,
                j
            );
            assert!((sol.x[1] - state[1]).abs() < 1e-9 && (sol.x[0] - state[0]).abs() < 1e-9);
            // One bounce by 0.8 s; six by 1.9 s (the flights shrink by e each time).
            assert_eq!(sol.events.len(), if t_final < 1.0 { 1 } else { 6 });
            // A memoryless step: the split residual is round-off.
            assert!(s.split_residual < 1e-14, "{}", s.split_residual);
            assert!(sol.probe_gap < 1e-6);
            // Spectral radius and worst gain of the returned J, as their definitions say.
            let svd_max = sol.jacobian.clone().svd(false, false).singular_values.max();
            assert!((sol.worst_gain - svd_max).abs() < 1e-12 * svd_max);
            assert!(sol.spectral_radius <= sol.worst_gain * (1.0 + 1e-12));
        }
    }
}

#[test]
fn the_event_is_located_and_its_guard_speed_is_the_impact_speed() {
    let s = step_jacobian(
        &Flight::new(Integrator::Rk4),
        &x0(),
        0.0,
        0.8,
        &StepOptions::default(),
    )
    .unwrap();
    let ev = &s.solution.events[0];
    let t_impact = (2.0 / G).sqrt();
    assert!((ev.t - t_impact).abs() < 1e-12, "{} vs {t_impact}", ev.t);
    assert!(
        (ev.guard_speed + G * t_impact).abs() < 1e-7,
        "{}",
        ev.guard_speed
    );
}

#[test]
fn an_honest_euler_step_is_not_hidden_state_and_its_map_is_differentiated_exactly() {
    // Euler's split residual at h is g·h² (its local error), 9.8e-6 at h = 1 ms: above
    // SPLIT_RTOL, but it falls 4x when h halves, as a local error does.
    let mut sys = Flight::new(Integrator::Euler);
    sys.levels.clear();
    let dt = 1e-3;
    let opts = StepOptions {
        dt,
        ..StepOptions::default()
    };
    let s = step_jacobian(&sys, &x0(), 0.0, 0.5, &opts).unwrap();
    assert!(
        (s.split_residual - G * dt * dt).abs() < 1e-12,
        "{}",
        s.split_residual
    );
    // Each Euler step's Jacobian is [[1, dt], [0, 1]]: their product is [[1, T], [0, 1]].
    let want = DMatrix::from_row_slice(2, 2, &[1.0, 0.5, 0.0, 1.0]);
    assert!(
        rel_err_dyn(&s.solution.jacobian, &want) < 1e-8,
        "{}",
        s.solution.jacobian
    );
}

#[test]
fn undeclared_memory_is_measured_and_refused() {
    let mut sys = Flight::new(Integrator::Exact);
    sys.leak = 1e-6;
    match step_jacobian(&sys, &x0(), 0.0, 0.8, &StepOptions::default()) {
        Err(e @ FerroError::HiddenState { .. }) => {
            let m = e.to_string();
            assert!(
                m.contains("bit for bit") && m.contains("black-box drop"),
                "{m}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_nan_from_the_step_is_non_finite() {
    let mut sys = Flight::new(Integrator::Exact);
    sys.nan_below = 0.5;
    let r = step_jacobian(&sys, &x0(), 0.0, 0.8, &StepOptions::default());
    assert!(matches!(r, Err(FerroError::NonFinite { .. })), "{r:?}");
}

/// Heights the drop from 1 m passes at times `ta` and `tb` (y = 1 - g·t²/2).
fn levels(ta: f64, tb: f64) -> Vec<f64> {
    vec![1.0 - 0.5 * G * ta * ta, 1.0 - 0.5 * G * tb * tb]
}

#[test]
fn two_guards_close_together_are_located_in_order() {
    // Guards crossed at 0.3192 s and 0.3197 s (one 1 ms step) and at 0.3195 s and 0.3205 s
    // (adjacent steps), and two steps apart: each is located on its own, and without resets
    // the step's law is unchanged, so J is free flight's.
    let mut sys = Flight::new(Integrator::Exact);
    sys.bounce = false;
    let want = DMatrix::from_row_slice(2, 2, &[1.0, 0.4, 0.0, 1.0]);
    for (ta, tb) in [(0.3192, 0.3197), (0.3195, 0.3205), (0.3195, 0.3215)] {
        sys.levels = levels(ta, tb);
        let s = step_jacobian(&sys, &x0(), 0.0, 0.4, &StepOptions::default()).unwrap();
        let ev = &s.solution.events;
        assert_eq!(ev.iter().map(|e| e.guard).collect::<Vec<_>>(), vec![0, 1]);
        assert!((ev[0].t - ta).abs() < 1e-12 && (ev[1].t - tb).abs() < 1e-12);
        assert!(
            rel_err_dyn(&s.solution.jacobian, &want) < 1e-8,
            "{}",
            s.solution.jacobian
        );
    }
}

/// The drop from 1 m over the ground with the bounce (y, -e v): it lands at 0.4515 s at
/// 4.43 m/s and is back 2·e·4.43/g s later.
struct WeakBounce(Flight, f64);

impl StepSystem for WeakBounce {
    fn name(&self) -> String {
        "weak bounce".into()
    }
    fn dim(&self) -> usize {
        2
    }
    fn step(&self, x: &DVector<f64>, dt: f64) -> DVector<f64> {
        self.0.step(x, dt)
    }
    fn guard_count(&self) -> usize {
        1
    }
    fn guard(&self, _: usize, x: &DVector<f64>) -> f64 {
        x[0]
    }
    fn has_reset(&self, _: usize) -> bool {
        true
    }
    fn reset(&self, _: usize, x: &DVector<f64>) -> DVector<f64> {
        DVector::from_vec(vec![x[0], -self.1 * x[1]])
    }
}

#[test]
fn one_guard_crossed_twice_in_one_step_or_in_adjacent_steps_is_refused() {
    let opts = StepOptions {
        dt: 1e-2,
        graze_speed: 1e-6,
        ..StepOptions::default()
    };
    let t_land = (2.0 / G).sqrt();
    // e = 0.001: back 0.9 ms later, inside the same 10 ms step.
    let r = step_jacobian(
        &WeakBounce(Flight::new(Integrator::Exact), 0.001),
        &x0(),
        0.0,
        0.6,
        &opts,
    );
    match r {
        Err(FerroError::TwoEventsInOneStep { first, second, .. }) => {
            assert_eq!((first, second), (0, 0))
        }
        other => panic!("{other:?}"),
    }
    // e = 0.01: back 9.0 ms later, in the next step.
    let r = step_jacobian(
        &WeakBounce(Flight::new(Integrator::Exact), 0.01),
        &x0(),
        0.0,
        0.6,
        &opts,
    );
    match r {
        Err(FerroError::EventsInAdjacentSteps { first, second, dt }) => {
            let back = t_land + 2.0 * 0.01 * (2.0 * G).sqrt() / G;
            assert!((first - t_land).abs() < 1e-9 && (second - back).abs() < 1e-9);
            assert_eq!(dt, 1e-2);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn grazing_is_refused_with_the_term_it_would_have_had() {
    // Dropped from 40 nm: the impact speed is 8.9e-4 m/s < 1e-3 m/s.
    let opts = StepOptions {
        dt: 1e-5,
        ..StepOptions::default()
    };
    let x = DVector::from_vec(vec![4e-8, 0.0]);
    match step_jacobian(&Flight::new(Integrator::Exact), &x, 0.0, 1.5e-4, &opts) {
        Err(FerroError::Grazing { speed, term, .. }) => {
            let v = (2.0 * G * 4e-8_f64).sqrt();
            assert!((speed - v).abs() < 1e-6 * v, "{speed} vs {v}");
            // Xi's lower-left entry, (1 + e)·g/|v|.
            let want = (1.0 + restitution()) * G / v;
            assert!((term - want).abs() < 1e-4 * want, "{term} vs {want}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_map_whose_differences_depend_on_the_probe_is_refused() {
    // A ripple of wavelength 1 nm·2π in y: differences at probes 1e-6 and 5e-7 m disagree.
    let mut sys = Flight::new(Integrator::Exact);
    sys.levels.clear();
    sys.ripple = 1e-7;
    let r = step_jacobian(&sys, &x0(), 0.0, 0.3, &StepOptions::default());
    assert!(matches!(r, Err(FerroError::ProbeDependent { .. })), "{r:?}");
}

#[test]
fn too_many_steps_and_bad_options_are_typed() {
    let opts = StepOptions {
        max_steps: 10,
        ..StepOptions::default()
    };
    let r = step_jacobian(&Flight::new(Integrator::Exact), &x0(), 0.0, 0.8, &opts);
    assert!(matches!(r, Err(FerroError::TooManySteps { .. })), "{r:?}");
    for bad in [
        StepOptions {
            dt: -1.0,
            ..StepOptions::default()
        },
        StepOptions {
            eps: 0.0,
            ..StepOptions::default()
        },
    ] {
        let r = step_jacobian(&Flight::new(Integrator::Exact), &x0(), 0.0, 0.8, &bad);
        assert!(
            matches!(r, Err(FerroError::InvalidParameter { .. })),
            "{r:?}"
        );
    }
    let r = step_jacobian(
        &Flight::new(Integrator::Exact),
        &DVector::from_vec(vec![1.0]),
        0.0,
        0.8,
        &StepOptions::default(),
    );
    assert!(
        matches!(r, Err(FerroError::InvalidParameter { .. })),
        "{r:?}"
    );
}
