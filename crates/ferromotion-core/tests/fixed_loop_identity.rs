//! The fixed route's hot loop skips the flight steps' zero terms of the tangent update
//! (`integrate/fixed.rs::euler_with_tangent`). This checks that it returns the same bits
//! as the general update `J <- A·J` written out for every step, the way the loop was
//! first written (and the way docs/model.md §3 states the route), on random drops, stiffnesses,
//! steps and starting tangents: equal bits whenever the result is finite, and a
//! non-finite result from both when either overflows.
#![allow(clippy::disallowed_methods)] // native-only oracles: std floats are fine here

mod common;

use common::bits;
use ferromotion_core::physics::integrate::fixed::euler_with_tangent;
use ferromotion_core::*;
use proptest::prelude::*;

/// The general update, as first written: `(acc, a_y, a_v)` from the branch, then `A·J`.
fn reference(
    law: &Penalty,
    gravity: f64,
    dt: f64,
    n: u64,
    x: State,
    jac: Jacobian,
) -> (State, Jacobian) {
    let (k, c, inv_m) = (law.stiffness, law.damping, 1.0 / law.mass);
    let (mut y, mut v) = (x[0], x[1]);
    let (mut j00, mut j01, mut j10, mut j11) = (jac[(0, 0)], jac[(0, 1)], jac[(1, 0)], jac[(1, 1)]);
    for _ in 0..n {
        let f = -k * y - c * v;
        let (acc, a_y, a_v) = if y < 0.0 && f > 0.0 {
            (f * inv_m - gravity, -k * inv_m, -c * inv_m)
        } else {
            (-gravity, 0.0, 0.0)
        };
        v += dt * acc;
        y += dt * v;
        let d10 = j10 + dt * (a_y * j00 + a_v * j10);
        let d11 = j11 + dt * (a_y * j01 + a_v * j11);
        j00 += dt * d10;
        j01 += dt * d11;
        j10 = d10;
        j11 = d11;
    }
    (State::new(y, v), Jacobian::new(j00, j01, j10, j11))
}

fn all_finite(j: &Jacobian) -> bool {
    j.iter().all(|a| a.is_finite())
}

/// A tangent entry: 0.0, 1.0 or a random finite number (never -0.0, see the loop's docs).
fn entry() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(1.0), -1e3..1e3f64]
        .prop_map(|a: f64| if a == 0.0 { 0.0 } else { a })
}

proptest! {
    #[test]
    fn same_bits_as_the_general_update(
        log_k in -2.0..12.0f64,
        zeta in 0.0..0.99f64,
        mass in 0.01..100.0f64,
        gravity in 0.1..100.0f64,
        log_dt in -6.0..-2.0f64,
        n in 1u64..20_000,
        y in -1.0..5.0f64,
        v in -20.0..20.0f64,
        identity in any::<bool>(),
        j in [entry(), entry(), entry(), entry()],
    ) {
        let law = Penalty::new(10f64.powf(log_k), zeta, mass).unwrap();
        let dt = 10f64.powf(log_dt);
        let jac = if identity { Jacobian::identity() } else { Jacobian::new(j[0], j[1], j[2], j[3]) };
        let x = State::new(y, v);
        let (xa, ja) = euler_with_tangent(&law, gravity, dt, n, x, jac);
        let (xb, jb) = reference(&law, gravity, dt, n, x, jac);
        // The state never depends on the tangent.
        prop_assert_eq!(xa.map(f64::to_bits), xb.map(f64::to_bits));
        if all_finite(&ja) && all_finite(&jb) {
            prop_assert_eq!(bits(&xa, &ja), bits(&xb, &jb));
        } else {
            prop_assert!(!all_finite(&ja) && !all_finite(&jb), "one overflowed alone: {ja} vs {jb}");
        }
    }
}

#[test]
fn fixed_route_same_bits_at_the_spec_settings() {
    let drop = Drop::default();
    for k in [1e2, 1e4, 1e6, 1e8] {
        for dt in [1e-4, 1e-5] {
            let r = fixed(&drop, k, dt, &FixedOptions::default()).unwrap();
            let law = drop.penalty(k).unwrap();
            let n = (drop.t_final / dt).round() as u64;
            let (x, j) = reference(&law, drop.gravity, dt, n, drop.x0(), Jacobian::identity());
            assert_eq!(
                bits(&r.state, &r.jacobian),
                bits(&x, &j),
                "k = {k:e}, dt = {dt:e}"
            );
        }
    }
}
