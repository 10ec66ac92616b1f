//! The black-box driver on soft contact: a step function whose law changes at a guard with
//! no reset (a push-only penalty force switching on at y = 0 and off at its release), its
//! branch decided at each step's start, as every engine does. The step here is written
//! from scratch as a user would (semi-implicit Euler, force `max(0, -k·y - c·v)` for
//! y < 0); the oracle is the `corrected` route at the same dt (the derivative of the
//! event-located Euler map, by forward-mode duals through the located switches: a second
//! route to the same object), and the fixed route for the unlocated map.
#![allow(clippy::disallowed_methods)] // native-only test: std floats are fine here

use ferromotion_core::hybrid::*;
use ferromotion_core::*;
use nalgebra::{DMatrix, DVector};

/// Semi-implicit Euler on the push-only penalty law, the branch read at the step's start.
struct Penalty {
    k: f64,
    c: f64,
    /// Declare the release (force back to zero) as a second guard.
    release: bool,
}

impl Penalty {
    fn new(k: f64, release: bool) -> Self {
        let d = Drop::default();
        Penalty {
            k,
            c: 2.0 * d.zeta * (k * d.mass).sqrt(),
            release,
        }
    }
}

impl StepSystem for Penalty {
    fn name(&self) -> String {
        "penalty Euler step".into()
    }
    fn dim(&self) -> usize {
        2
    }
    fn step(&self, x: &DVector<f64>, dt: f64) -> DVector<f64> {
        let d = Drop::default();
        let (y, v) = (x[0], x[1]);
        let force = if y < 0.0 {
            (-self.k * y - self.c * v).max(0.0)
        } else {
            0.0
        };
        let v = v + dt * (force / d.mass - d.gravity);
        DVector::from_vec(vec![y + dt * v, v])
    }
    fn guard_count(&self) -> usize {
        if self.release {
            2
        } else {
            1
        }
    }
    fn guard(&self, i: usize, x: &DVector<f64>) -> f64 {
        match i {
            0 => x[0],
            // The force's argument while below ground; positive (no switch) above it.
            _ if x[0] < 0.0 => -self.k * x[0] - self.c * x[1],
            _ => 1.0,
        }
    }
}

fn x0() -> DVector<f64> {
    let d = Drop::default();
    DVector::from_vec(vec![d.height, d.velocity])
}

fn corrected_j(k: f64, dt: f64) -> DMatrix<f64> {
    let r = corrected(&Drop::default(), k, dt, &CorrectedOptions::default()).unwrap();
    DMatrix::from_fn(2, 2, |i, j| r.jacobian[(i, j)])
}

fn gap(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).amax()
}

#[test]
fn a_penalty_euler_step_through_the_driver_matches_the_corrected_route_at_the_same_dt() {
    let dt = 1e-4;
    let opts = StepOptions {
        dt,
        ..StepOptions::default()
    };
    for k in [1e4, 1e5, 1e6] {
        let s = step_jacobian(&Penalty::new(k, true), &x0(), 0.0, 0.8, &opts).unwrap();
        let j = &s.solution.jacobian;
        let want = corrected_j(k, dt);
        assert!(
            gap(j, &want) < 1e-3,
            "k = {k:e}: {j} against corrected {want}"
        );
        // The right sign: dv(T)/dy0 > 0 (the fixed-step map's is negative).
        assert!(j[(1, 0)] > 0.0, "k = {k:e}: {j}");
        // Entry and release, each located once.
        let guards: Vec<usize> = s.solution.events.iter().map(|e| e.guard).collect();
        assert_eq!(guards, vec![0, 1], "k = {k:e}");
        // The entry's saltation: Xi = I + (f+ - f-)·∇gᵀ/(∇g·f-) with the force jumping from
        // 0 to c·|v|: its largest entry is c/m (the -c/m in dv+/dy-).
        let xi = s.solution.events[0].saltation_max;
        let c = Penalty::new(k, true).c;
        assert!(
            (xi - c).abs() < 1e-3 * c,
            "k = {k:e}: {xi} against c/m = {c}"
        );
        // dt/2 answered too: the corrected route at dt/2 again, and the spread is what the
        // two answers say.
        let half = s.half_dt.as_ref().unwrap();
        let want_half = corrected_j(k, 0.5 * dt);
        assert!(
            gap(&half.jacobian, &want_half) < 1e-3,
            "k = {k:e}: {} against {want_half}",
            half.jacobian
        );
        let spread = gap(j, &half.jacobian) / j.amax().max(1.0);
        assert!((half.spread - spread).abs() <= 1e-15 * spread.max(1.0));
        assert!(half.spread > 0.0 && s.step_calls > 0);
        eprintln!(
            "k = {k:e}: dv/dy0 {:.6} (corrected {:.6}, max gap {:.2e}), at dt/2 {:.6} (gap {:.2e}), \
             spread {:.2e}, {} step calls",
            j[(1, 0)],
            want[(1, 0)],
            gap(j, &want),
            half.jacobian[(1, 0)],
            gap(&half.jacobian, &want_half),
            half.spread,
            s.step_calls
        );
    }
}

#[test]
fn six_bounces_of_a_penalty_step_match_the_corrected_route_at_dt_and_dt_over_2() {
    // 1.9 s: six entries and six releases, the later ones slow (0.4 m/s); each release ends a
    // step that must not be taken for an unguarded switch.
    let drop = Drop {
        t_final: 1.9,
        ..Drop::default()
    };
    let (k, dt) = (1e5, 1e-4);
    let opts = StepOptions {
        dt,
        ..StepOptions::default()
    };
    let s = step_jacobian(&Penalty::new(k, true), &x0(), 0.0, 1.9, &opts).unwrap();
    let want = |dt: f64| {
        let r = corrected(&drop, k, dt, &CorrectedOptions::default()).unwrap();
        DMatrix::from_fn(2, 2, |i, j| r.jacobian[(i, j)])
    };
    assert_eq!(s.solution.events.len(), 12);
    let j = &s.solution.jacobian;
    assert!(
        gap(j, &want(dt)) < 1e-3 * j.amax(),
        "{j} against {}",
        want(dt)
    );
    let half = s.half_dt.unwrap().jacobian;
    assert!(gap(&half, &want(0.5 * dt)) < 1e-3 * half.amax(), "{half}");
}

#[test]
fn the_probe_gap_of_the_located_map_is_round_off() {
    let s = step_jacobian(
        &Penalty::new(1e5, true),
        &x0(),
        0.0,
        0.8,
        &StepOptions {
            dt: 1e-4,
            halve_dt: false,
            ..StepOptions::default()
        },
    )
    .unwrap();
    assert!(s.solution.probe_gap < 1e-7, "{}", s.solution.probe_gap);
    assert!(s.half_dt.is_none());
}

#[test]
fn without_the_release_guard_the_driver_locates_the_release_and_answers_as_if_declared() {
    // The release (the force back to zero) is not declared: the driver sees the step
    // Jacobian jump, locates the switch from the step's own behaviour and continues from it.
    // The answer must be the one the declared release guard gives (a second route to the same
    // located map), at dt and at dt/2, and the switch where the declared guard fires.
    let opts = StepOptions {
        dt: 1e-4,
        ..StepOptions::default()
    };
    for k in [1e4, 1e5, 1e6] {
        let declared = step_jacobian(&Penalty::new(k, true), &x0(), 0.0, 0.8, &opts).unwrap();
        let located = step_jacobian(&Penalty::new(k, false), &x0(), 0.0, 0.8, &opts).unwrap();
        let (a, b) = (&declared.solution.jacobian, &located.solution.jacobian);
        println!(
            "k = {k:e}: declared {a} located {b} gap {:.3e}, {} switches, calls {} vs {}",
            gap(a, b),
            located.switches.len(),
            declared.step_calls,
            located.step_calls
        );
        assert!(gap(a, b) < 1e-6 * a.amax(), "k = {k}: {a} against {b}");
        let (ha, hb) = (
            &declared.half_dt.as_ref().unwrap().jacobian,
            &located.half_dt.as_ref().unwrap().jacobian,
        );
        assert!(
            gap(ha, hb) < 1e-6 * ha.amax(),
            "k = {k} at dt/2: {ha} against {hb}"
        );
        // Every declared release is a located one, at the same time (to the bisection's
        // resolution, far below dt), numbered after the declared guard.
        let times = |s: &StepSolution, g: usize| -> Vec<f64> {
            s.solution
                .events
                .iter()
                .filter(|e| e.guard == g)
                .map(|e| e.t)
                .collect()
        };
        let (td, tl) = (times(&declared, 1), times(&located, 1));
        assert_eq!(td.len(), tl.len());
        assert!(!td.is_empty());
        for (p, q) in td.iter().zip(&tl) {
            assert!((p - q).abs() < 1e-9, "{p} against {q}");
        }
        assert_eq!(located.switches.len(), td.len());
    }
}

#[test]
fn six_undeclared_releases_are_located_in_turn_and_match_the_declared_guard() {
    // Six bounces, none of the releases declared: each is located in its turn (the answer
    // is computed again after each), and the result is the declared-release one.
    let opts = StepOptions {
        dt: 1e-4,
        ..StepOptions::default()
    };
    let k = 1e5;
    let declared = step_jacobian(&Penalty::new(k, true), &x0(), 0.0, 1.9, &opts).unwrap();
    let located = step_jacobian(&Penalty::new(k, false), &x0(), 0.0, 1.9, &opts).unwrap();
    let (a, b) = (&declared.solution.jacobian, &located.solution.jacobian);
    assert_eq!(located.switches.len(), 6);
    assert_eq!(located.solution.events.len(), 12);
    // Later bounces are slow (0.4 m/s): each located plane stands a few probes past its
    // switch, which moves J by ~1e-6 of its size over six of them.
    assert!(gap(a, b) < 1e-5 * a.amax(), "{a} against {b}");
    println!(
        "six releases: gap {:.3e}, {} step calls against {} declared",
        gap(a, b),
        located.step_calls,
        declared.step_calls
    );
}

#[test]
fn a_switch_where_the_field_jumps_is_refused_and_named() {
    // A penalty law without the push-only clamp whose force stops at y = 0 on the way up
    // (pulling before it: -k·y - c·v < 0 there): the step's field jumps at that switch, so
    // a plane near it is not exact, and no guard declares it: refused, saying why.
    struct Unclamped(Penalty);
    impl StepSystem for Unclamped {
        fn name(&self) -> String {
            "unclamped penalty".into()
        }
        fn dim(&self) -> usize {
            2
        }
        fn step(&self, x: &DVector<f64>, dt: f64) -> DVector<f64> {
            let d = Drop::default();
            let (y, v) = (x[0], x[1]);
            let force = if y < 0.0 {
                -self.0.k * y - self.0.c * v
            } else {
                0.0
            };
            let v = v + dt * (force / d.mass - d.gravity);
            DVector::from_vec(vec![y + dt * v, v])
        }
        fn guard_count(&self) -> usize {
            1
        }
        fn guard(&self, _: usize, x: &DVector<f64>) -> f64 {
            x[0]
        }
    }
    let r = step_jacobian(
        &Unclamped(Penalty::new(1e5, false)),
        &x0(),
        0.0,
        0.8,
        &StepOptions {
            dt: 1e-4,
            ..StepOptions::default()
        },
    );
    match r {
        Err(e @ FerroError::UnguardedSwitch { .. }) => {
            let s = e.to_string();
            assert!(s.contains("field jumps"), "{s}");
            assert!(s.contains("declare that switch as a guard"), "{s}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn with_no_guard_the_driver_differentiates_the_fixed_step_map_as_it_is() {
    // No guard: no event is located, and the answer is the fixed-step map's derivative,
    // the fixed route's wrong sign (what the guards are for).
    struct Bare(Penalty);
    impl StepSystem for Bare {
        fn name(&self) -> String {
            "bare".into()
        }
        fn dim(&self) -> usize {
            2
        }
        fn step(&self, x: &DVector<f64>, dt: f64) -> DVector<f64> {
            self.0.step(x, dt)
        }
    }
    let (k, dt) = (1e5, 1e-4);
    let opts = StepOptions {
        dt,
        halve_dt: false,
        ..StepOptions::default()
    };
    let s = step_jacobian(&Bare(Penalty::new(k, true)), &x0(), 0.0, 0.8, &opts).unwrap();
    let f = fixed(&Drop::default(), k, dt, &FixedOptions::default()).unwrap();
    let want = DMatrix::from_fn(2, 2, |i, j| f.jacobian[(i, j)]);
    assert!(gap(&s.solution.jacobian, &want) < 1e-6 * want.amax());
    assert!(s.solution.jacobian[(1, 0)] < 0.0);
}

#[test]
fn a_soft_entry_too_slow_is_grazing() {
    // Dropped from 40 nm onto the soft ground: the entry speed 8.9e-4 m/s is below 1e-3.
    let x = DVector::from_vec(vec![4e-8, 0.0]);
    let opts = StepOptions {
        dt: 1e-5,
        ..StepOptions::default()
    };
    let r = step_jacobian(&Penalty::new(1e5, true), &x, 0.0, 1.5e-4, &opts);
    assert!(matches!(r, Err(FerroError::Grazing { .. })), "{r:?}");
}
