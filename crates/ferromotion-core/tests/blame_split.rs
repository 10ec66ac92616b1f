//! The blame split: the fixed route's error is the integrator's, not the contact model's.

use ferromotion_core::*;

#[test]
fn integrator_share_dominates_by_orders_of_magnitude() {
    let drop = Drop::default();
    for k in [1e4, 1e5, 1e6, 1e7, 1e8] {
        let b = blame(&drop, k, 1e-4).unwrap();
        assert!(b.ratio > 100.0, "k = {k:e}: {b:?}");
        assert!(
            !b.integrator_below_floor && !b.contact_below_floor,
            "k = {k:e}: {b:?}"
        );
    }
}

#[test]
fn noise_floor_is_far_below_both_shares() {
    let drop = Drop::default();
    for k in [1e2, 1e4, 1e6, 1e8] {
        let b = blame(&drop, k, 1e-4).unwrap();
        assert!(b.noise_floor < 1e-9, "k = {k:e}: floor {:e}", b.noise_floor);
        assert!(b.noise_floor < 1e-3 * b.contact_share);
    }
}

#[test]
fn contact_share_does_not_depend_on_dt() {
    let drop = Drop::default();
    let a = blame(&drop, 1e6, 1e-4).unwrap();
    let b = blame(&drop, 1e6, 1e-6).unwrap();
    assert_eq!(a.contact_share, b.contact_share);
    // Refining dt changes the integrator share by less than a factor of two (it does not converge).
    assert!(
        (b.integrator_share / a.integrator_share - 1.0).abs() < 0.5,
        "{a:?} {b:?}"
    );
}
