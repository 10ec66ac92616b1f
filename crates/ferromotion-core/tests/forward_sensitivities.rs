//! Regression test for #13: the right answer cost more wall time than the wrong one
//! because the tolerance route's Jacobian took 8 probe rollouts. Forward sensitivities
//! (variational equations along one event-located Dormand–Prince rollout, the saltation
//! applied at each located switch) give J from one rollout; checked against `flow` (the
//! closed-form derivative of the same ODE) and `exact` (the rigid limit). Also the
//! stepper's refusals: `min_step` and an honest `TooManySteps`.

mod common;
use common::{logspace, rel_err};
use ferromotion_core::*;

fn forward(rtol: f64) -> ToleranceOptions {
    ToleranceOptions {
        rtol,
        events: true,
        jacobian: JacobianMethod::Forward,
        ..Default::default()
    }
}

#[test]
fn one_rollout_gives_the_flow_jacobian_for_every_k_from_1e5_to_1e8() {
    let drop = Drop::default();
    let rigid = exact(&drop, &ExactOptions::default()).unwrap();
    for k in logspace(5.0, 8.0, 7) {
        let f = flow(&drop, k, &FlowOptions::default()).unwrap();
        let r = tolerance(&drop, k, &forward(1e-6)).unwrap();
        assert_eq!(r.cost.rollouts, 1);
        let vs_flow = rel_err(&r.jacobian, &f.jacobian);
        assert!(vs_flow <= 1e-6, "k = {k:e}: forward vs flow {vs_flow:e}");
        let vs_exact = rel_err(&r.jacobian, &rigid.jacobian);
        assert!(vs_exact <= 1e-2, "k = {k:e}: forward vs exact {vs_exact:e}");
        assert_eq!(
            r.jacobian[(1, 0)].signum(),
            rigid.jacobian[(1, 0)].signum(),
            "k = {k:e}: wrong sign of dv/dy0"
        );
        // And it converges with the tolerance, like the derivative of the scheme should.
        let tight = tolerance(&drop, k, &forward(1e-10)).unwrap();
        let vs_flow_tight = rel_err(&tight.jacobian, &f.jacobian);
        assert!(
            vs_flow_tight < 1e-9,
            "k = {k:e}: rtol 1e-10 gives {vs_flow_tight:e}"
        );
        // The state is the same rollout's.
        let (x, _) =
            physics::integrate::adaptive::tolerance_state(&drop, k, &forward(1e-6)).unwrap();
        assert_eq!(x, r.state);
    }
}

#[test]
fn forward_sensitivities_survive_several_bounces() {
    let drop = Drop {
        t_final: 1.5,
        ..Drop::default()
    };
    for k in [1e3, 1e5] {
        let f = flow(&drop, k, &FlowOptions::default()).unwrap();
        let r = tolerance(&drop, k, &forward(1e-10)).unwrap();
        let err = rel_err(&r.jacobian, &f.jacobian);
        assert!(err < 1e-8, "k = {k:e}: {err:e}");
    }
}

#[test]
fn forward_without_events_is_refused() {
    let opts = ToleranceOptions {
        events: false,
        ..forward(1e-6)
    };
    let r = tolerance(&Drop::default(), 1e6, &opts);
    assert!(
        matches!(r, Err(FerroError::InvalidParameter { name: "events", .. })),
        "{r:?}"
    );
}

#[test]
fn a_step_below_min_step_is_refused_and_without_the_floor_it_runs() {
    // At k = 1e8 the contact lasts pi/1e4 s; rtol 1e-10 needs steps far below 1e-5 s.
    let drop = Drop::default();
    let floored = ToleranceOptions {
        rtol: 1e-10,
        events: true,
        min_step: 1e-5,
        ..Default::default()
    };
    match tolerance(&drop, 1e8, &floored) {
        Err(FerroError::StepTooSmall { h, min_step, t }) => {
            assert!(h < min_step && t > 0.0 && t < drop.t_final, "h {h:e} t {t}");
        }
        other => panic!("expected StepTooSmall, got {other:?}"),
    }
    let free = ToleranceOptions {
        min_step: 0.0,
        ..floored
    };
    assert!(tolerance(&drop, 1e8, &free).is_ok());
    let bad = ToleranceOptions {
        min_step: -1.0,
        ..floored
    };
    assert!(matches!(
        tolerance(&drop, 1e8, &bad),
        Err(FerroError::InvalidParameter {
            name: "min_step",
            ..
        })
    ));
}

#[test]
fn too_many_steps_reports_the_cap_and_what_was_reached() {
    let opts = ToleranceOptions {
        rtol: 1e-12,
        max_steps: 50,
        ..Default::default()
    };
    let err = tolerance(&Drop::default(), 1e6, &opts).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(
        err,
        FerroError::TooManySteps { max_steps: 50, .. }
    ));
    assert!(
        msg.contains("its cap of 50 steps (`max_steps`)")
            && msg.contains("50 steps")
            && msg.contains("reached t ="),
        "{msg}"
    );
    assert!(!msg.contains("would need"), "{msg}");
}
