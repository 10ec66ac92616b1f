//! Regression test for #14: the Taylor rung failed a right gradient of a fixed-step contact
//! rollout. Such a map (MJX's, MuJoCo's, our fixed route's) is piecewise smooth, with kinks
//! wherever the first or last contact step moves on the grid, |v|·dt = 4.4e-4 m apart in the
//! initial height at dt = 1e-4 s. Taylor steps larger than that measure the average slope
//! across the kinks, so the remainder stays flat there for a right gradient too, and a fit
//! begun at the large end read a slope ~0. The slope is now read at the small end, above the
//! evaluation noise. Checked here without an `events` callback, as a user of an engine checks.

mod common;

use common::fixed_final_velocity;
use ferromotion_core::check::*;
use ferromotion_core::*;

fn fixed_drop_check(scale: f64) -> CheckReport {
    let drop = Drop::default();
    let (k, dt) = (1e6, 1e-4);
    let x = [drop.height, drop.velocity];
    // The forward-mode tangent: the exact derivative of the fixed-step map (a second route,
    // independent of the differences the checker takes).
    let jf = fixed(&drop, k, dt, &FixedOptions::default())
        .unwrap()
        .jacobian;
    let mut f = |x: &[f64]| fixed_final_velocity(&drop, k, dt, x);
    let grad = [scale * jf[(1, 0)], jf[(1, 1)]];
    let opts = CheckOptions {
        tol: 1e-5,
        ..Default::default()
    };
    check_gradient(&mut f, None, None, &x, &grad, &opts).unwrap()
}

#[test]
fn a_right_gradient_of_a_fixed_step_contact_map_verifies_without_events() {
    let r = fixed_drop_check(1.0);
    assert_eq!(r.verdict, Verdict::Verified, "{}", r.why);
    for d in &r.directions {
        assert!(d.certified, "{}", d.label);
        // The penalty law is linear on each contact branch, so the map is affine between
        // kinks: below the kink spacing the remainder drops straight into round-off and no
        // slope is fitted; the plateau above it is never read as the slope.
        assert_eq!(d.taylor_slope, None, "{}", d.label);
    }
}

#[test]
fn the_same_gradient_off_by_a_tenth_of_a_percent_is_not_verified() {
    let r = fixed_drop_check(1.001);
    assert_eq!(r.verdict, Verdict::NotVerified, "{}", r.why);
    let d = r
        .directions
        .iter()
        .find(|d| d.label == "coordinate 0")
        .unwrap();
    assert!(!d.certified);
    // Flat down to the noise: the wrong claim's remainder does not fall.
    assert!(d.taylor_slope.unwrap().abs() < 0.2, "{:?}", d.taylor_slope);
}
