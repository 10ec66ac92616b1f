//! The `tolerance` route: the same penalty law on an error-controlled integrator.
//! Tight tolerances land on `flow` (and so near `exact`); loose ones without event
//! location are garbage, and the probe check says so.

use ferromotion_core::physics::integrate::adaptive::tolerance_state;
use ferromotion_core::physics::state::max_abs;
use ferromotion_core::*;

fn rel_to_flow(r: &RouteResult, drop: &Drop, k: f64) -> f64 {
    let f = flow(drop, k, &FlowOptions::default()).unwrap();
    max_abs(&(r.jacobian - f.jacobian)) / max_abs(&f.jacobian)
}

#[test]
fn tight_tolerance_lands_on_the_exact_answer_at_1e6() {
    let drop = Drop::default();
    let k = 1e6;
    let r = tolerance(&drop, k, &ToleranceOptions::default()).unwrap();
    let e = compare(&r, &exact(&drop, &ExactOptions::default()).unwrap());
    // "Lands": right sign and gradient error below 1e-2. What is left is mostly the
    // contact model's own share (flow vs exact is 2.9e-3 at 1e6).
    assert!(e.right_sign && e.gradient < 1e-2, "{e:?}");
    assert!(rel_to_flow(&r, &drop, k) < 1e-2);
    assert_eq!(r.cost.rollouts, 8);
}

#[test]
fn loose_tolerance_without_events_is_garbage_and_flagged() {
    let drop = Drop::default();
    let reference = exact(&drop, &ExactOptions::default()).unwrap();
    for rtol in [1e-4, 1e-6] {
        let r = tolerance(
            &drop,
            1e6,
            &ToleranceOptions {
                rtol,
                ..Default::default()
            },
        )
        .unwrap();
        let e = compare(&r, &reference);
        // Errors larger than the answer itself, and the two probe sizes disagree.
        assert!(e.gradient > 1.0, "rtol {rtol:e}: {e:?}");
        assert!(r.probe_dependent, "rtol {rtol:e}: gap {:?}", r.probe_gap);
    }
}

#[test]
fn event_location_matches_flow_at_loose_tolerance_for_less_work_than_fixed() {
    let drop = Drop::default();
    let k = 1e6;
    let r = tolerance(
        &drop,
        k,
        &ToleranceOptions {
            rtol: 1e-6,
            events: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(rel_to_flow(&r, &drop, k) < 1e-5);
    assert!(!r.probe_dependent);
    let fixed_cost = fixed(&drop, k, 1e-4, &FixedOptions::default())
        .unwrap()
        .cost
        .force_evals;
    assert!(
        r.cost.force_evals < fixed_cost,
        "{} vs {}",
        r.cost.force_evals,
        fixed_cost
    );
}

#[test]
fn adaptive_rollout_meets_its_tolerance_against_the_closed_form() {
    // With events located, every phase is smooth (a quadratic in flight, a damped
    // sinusoid in contact), so the state error follows rtol down to 1e-12.
    let drop = Drop::default();
    for rtol in [1e-6, 1e-9, 1e-12] {
        let opts = ToleranceOptions {
            rtol,
            events: true,
            ..Default::default()
        };
        let (x, stats) = tolerance_state(&drop, 1e6, &opts).unwrap();
        let f = flow(&drop, 1e6, &FlowOptions::default()).unwrap();
        let err = (x - f.state).amax();
        // A global error within a modest multiple of the tolerance (error per step is
        // controlled, the global error accumulates over the accepted steps).
        assert!(
            err < 100.0 * rtol,
            "rtol {rtol:e}: {err:e} after {} steps",
            stats.accepted_steps
        );
        assert!(
            stats.events >= 2,
            "entry and force-zero must both be located"
        );
    }
}

#[test]
fn cost_counts_every_evaluation() {
    // Six evaluations per attempted step (FSAL), plus the start (2 for the step guess).
    let drop = Drop::default();
    let opts = ToleranceOptions {
        rtol: 1e-8,
        ..Default::default()
    };
    let (_, s) = tolerance_state(&drop, 1e5, &opts).unwrap();
    assert_eq!(s.num_eval, 6 * (s.accepted_steps + s.rejected_steps) + 2);
}
