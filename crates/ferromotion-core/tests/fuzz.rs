//! Every public entry point, fed arbitrary numbers (finite, non-finite, huge, tiny):
//! never a panic, never a hang beyond the step cap, every output finite or a typed error.
//!
//! `cargo test` runs a short pass (PROPTEST_CASES, default 256 per property); `make fuzz`
//! runs the long one.
#![allow(clippy::disallowed_methods)] // native-only oracles: std floats are fine here

use ferromotion_core::check::{check_gradient, conditioning, CheckOptions};
use ferromotion_core::hybrid::{hybrid_jacobian, HybridOptions};
use ferromotion_core::lab::scenario::Scenario;
use ferromotion_core::systems::BouncingDrop;
use ferromotion_core::*;
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;

/// Numbers a user could type, and the ones that break naive code.
fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => -10.0..10.0f64,
        2 => (-300.0..300.0f64).prop_map(|e| 10f64.powf(e)),
        1 => (-300.0..300.0f64).prop_map(|e| -(10f64.powf(e))),
        1 => Just(0.0),
        1 => Just(-0.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(f64::MIN_POSITIVE),
        1 => Just(f64::MAX),
        2 => any::<f64>(),
    ]
}

/// Plausible drops with one parameter replaced by an arbitrary number.
fn drop_strategy() -> impl Strategy<Value = Drop> {
    (0usize..7, number(), 0.2..3.0f64, -2.0..2.0f64).prop_map(|(which, x, h, v)| {
        let mut d = Drop {
            height: h,
            velocity: v,
            t_final: 1.2,
            ..Drop::default()
        };
        match which {
            0 => d.height = x,
            1 => d.velocity = x,
            2 => d.t_final = x,
            3 => d.gravity = x,
            4 => d.mass = x,
            5 => d.zeta = x,
            _ => {}
        }
        d
    })
}

fn stiffness() -> impl Strategy<Value = f64> {
    prop_oneof![3 => (0.0..10.0f64).prop_map(|e| 10f64.powf(e)), 1 => number()]
}

fn step() -> impl Strategy<Value = f64> {
    prop_oneof![3 => prop::sample::select(vec![1e-3, 2e-4, 1e-4, 5e-5, 1e-5]), 1 => number()]
}

fn finite_or_typed(r: &Result<RouteResult>) -> bool {
    match r {
        Ok(r) => r
            .state
            .iter()
            .chain(r.jacobian.iter())
            .all(|v| v.is_finite()),
        Err(e) => !e.to_string().is_empty() && !e.kind().is_empty(),
    }
}

/// A cap small enough that the worst case stays fast: "never a hang beyond the cap".
const CAP: u64 = 200_000;

proptest! {
    #[test]
    fn routes_never_panic(drop in drop_strategy(), k in stiffness(), dt in step(), rtol in prop_oneof![Just(1e-6), Just(1e-9), number()]) {
        prop_assert!(finite_or_typed(&exact(&drop, &ExactOptions::default())));
        let fixed_opts = FixedOptions { max_steps: CAP };
        let corrected_opts = CorrectedOptions { max_steps: CAP, ..Default::default() };
        prop_assert!(finite_or_typed(&fixed(&drop, k, dt, &fixed_opts)));
        prop_assert!(finite_or_typed(&corrected(&drop, k, dt, &corrected_opts)));
        prop_assert!(finite_or_typed(&flow(&drop, k, &FlowOptions::default())));
        for events in [false, true] {
            let opts = ToleranceOptions { rtol, events, max_steps: CAP / 10, ..Default::default() };
            prop_assert!(finite_or_typed(&tolerance(&drop, k, &opts)));
        }
    }

    #[test]
    fn readouts_never_panic(drop in drop_strategy(), k in stiffness(), speed in number(), zeta in number()) {
        if let Ok(Some(e)) = realised_restitution(&drop, k, speed) {
            prop_assert!(e.is_finite() && e >= 0.0);
        }
        if let Ok(t) = drop.time_of_impact_term(speed) {
            prop_assert!(t.is_finite());
        }
        if let Ok(e) = limit_restitution(zeta) {
            prop_assert!(e.is_finite() && e > 0.0 && e <= 1.0);
        }
        if let Ok(b) = blame(&drop, k, 1e-4) {
            prop_assert!(b.integrator_share.is_finite() && b.contact_share.is_finite() && b.noise_floor.is_finite());
        }
    }

    #[test]
    fn bench_controls_never_panic(log10_k in number(), divisor in prop::sample::select(vec![0u32, 1, 3, 10, 100, 1000]), rtol in number(), on in any::<bool>()) {
        let mut b = Workbench::new(WorkbenchConfig::default()).unwrap();
        let _ = b.set_log10_k(log10_k);
        let _ = b.set_dt_divisor(divisor);
        let _ = b.set_tolerance(on, rtol, !on);
        // Whatever was refused, the bench keeps a valid state and reads out.
        let c = *b.config();
        prop_assert!(c.k > 0.0 && [1, 10, 100].contains(&c.dt_divisor));
    }

    #[test]
    fn hybrid_and_checks_never_panic(y in number(), v in number(), t1 in number(), dt in number(), e in number(), g0 in number(), g1 in number()) {
        let sys = BouncingDrop { gravity: 9.81, restitution: if e.is_finite() { e.clamp(0.0, 1.0) } else { 0.5 } };
        let opts = HybridOptions { dt, max_steps: CAP, ..Default::default() };
        if let Ok(s) = hybrid_jacobian(&sys, &DVector::from_vec(vec![y, v]), 0, 0.0, t1, &opts) {
            prop_assert!(s.x.iter().chain(s.jacobian.iter()).all(|a| a.is_finite()));
        }
        let mut f = |x: &[f64]| Ok(ferromotion_core::check::examples::linear_scalar(x[0], x[1]).0);
        let _ = check_gradient(&mut f, None, None, &[y, v], &[g0, g1], &CheckOptions { random_directions: 1, ..Default::default() });
        let _ = conditioning(&DMatrix::from_row_slice(2, 2, &[y, v, g0, g1]), 1e-8);
    }

    #[test]
    fn scenario_parsing_never_panics(text in ".{0,200}", k in number(), dt in number()) {
        let _ = Scenario::from_json(&text);
        let doc = format!("{{\"k\": {k}, \"dt\": {dt}}}");
        if let Ok(sc) = Scenario::from_json(&doc) {
            prop_assert!(sc.k > 0.0 && sc.dt > 0.0);
        }
    }
}
