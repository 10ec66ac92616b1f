//! Regression test for #12 (item 10): the fixed route flags a step beyond semi-implicit
//! Euler's stability limit instead of silently returning a blown-up x(T).
//!
//! Independent facts: the contact-phase step matrix has `λ² - tr·λ + det = 0` with
//! `tr = 2 - (ω dt)² - 2ζ(ω dt)` and `det = 1 - 2ζ(ω dt)`; its eigenvalue crosses -1 where
//! `1 + tr + det = 0`, i.e. `(ω dt)² + 4ζ(ω dt) = 4`, so the limit is `ω dt = 2(sqrt(ζ² + 1) - ζ)` (2 without
//! damping). Below it the step is stable; above it a rollout that stays in contact grows.

use ferromotion_core::physics::integrate::fixed::{
    drop_step_stability, euler, fixed, FixedOptions,
};
use ferromotion_core::*;

/// The closed-form limit of ω·dt for damping ratio ζ.
fn limit(zeta: f64) -> f64 {
    2.0 * ((zeta * zeta + 1.0).sqrt() - zeta)
}

/// A step dt giving ω·dt = `w` for the drop's mass at stiffness k.
fn dt_for(drop: &Drop, k: f64, w: f64) -> f64 {
    w / (k / drop.mass).sqrt()
}

#[test]
fn the_limit_is_the_closed_form_eigenvalue_crossing() {
    for zeta in [0.0, 0.1606, 0.5, 0.9] {
        let drop = Drop {
            zeta,
            ..Drop::default()
        };
        let k = 1e6;
        let w = limit(zeta);
        let below = drop_step_stability(&drop, k, dt_for(&drop, k, w * (1.0 - 1e-6))).unwrap();
        let above = drop_step_stability(&drop, k, dt_for(&drop, k, w * (1.0 + 1e-6))).unwrap();
        assert!(
            below.stable && below.spectral_radius <= 1.0 + 1e-9,
            "zeta {zeta}: {below:?}"
        );
        assert!(
            !above.stable && above.spectral_radius > 1.0,
            "zeta {zeta}: {above:?}"
        );
        assert!((below.omega_dt - w).abs() < 1e-5 * w);
    }
}

#[test]
fn an_unstable_step_grows_a_rollout_resting_in_contact() {
    // Resting on the ground, 1% off the equilibrium depth m·g/k: the damped contact
    // oscillation decays at a stable step and grows at an unstable one.
    let drop = Drop::default();
    let k = 1e6;
    let law = drop.penalty(k).unwrap();
    let y_eq = -drop.mass * drop.gravity / k;
    let off = |x: State| ((x[0] - y_eq).powi(2) + x[1] * x[1] * drop.mass / k).sqrt();
    for (w, grows) in [
        (0.5 * limit(drop.zeta), false),
        (1.05 * limit(drop.zeta), true),
    ] {
        let dt = dt_for(&drop, k, w);
        let x0 = State::new(1.01 * y_eq, 0.0);
        let x = euler(&law, drop.gravity, dt, 40, x0);
        assert_eq!(off(x) > off(x0), grows, "omega dt {w}: {x:?}");
        assert_eq!(drop_step_stability(&drop, k, dt).unwrap().stable, !grows);
    }
}

#[test]
fn the_fixed_route_reports_the_blown_up_drop() {
    // The case: k = 1e9, dt = 1e-4 throws a 1 m drop back up (y = 3.5 m, v = +8.3 m/s).
    let drop = Drop::default();
    let r = fixed(&drop, 1e9, 1e-4, &FixedOptions::default()).unwrap();
    let s = r.step_stability.unwrap();
    assert!(!s.stable && (s.omega_dt - 1e9f64.sqrt() * 1e-4).abs() < 1e-12);
    let energy = |y: f64, v: f64| drop.mass * (drop.gravity * y + 0.5 * v * v);
    assert!(energy(r.state[0], r.state[1]) > energy(drop.height, drop.velocity));
    let ok = fixed(&drop, 1e6, 1e-4, &FixedOptions::default()).unwrap();
    assert!(ok.step_stability.unwrap().stable);
    assert!(energy(ok.state[0], ok.state[1]) < energy(drop.height, drop.velocity));
    assert!(exact(&drop, &ExactOptions::default())
        .unwrap()
        .step_stability
        .is_none());
}
