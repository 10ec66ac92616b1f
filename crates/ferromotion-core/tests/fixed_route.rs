//! The `fixed` route: its tangent is the exact derivative of its own discrete map away
//! from contact-pattern changes; against the physics it diverges like sqrt(k), flips
//! sign, and does not improve when dt is refined.

mod common;
use common::*;
use ferromotion_core::lab::readout::{
    exponent_stiffnesses, fit_loglog, fixed_gradient_error, matched_dt,
};
use ferromotion_core::physics::integrate::fixed::fixed_state;
use ferromotion_core::*;

/// A test-side semi-implicit Euler of the push-only drop that also records, step by
/// step, whether the contact branch was taken.
fn euler_with_pattern(drop: &Drop, k: f64, dt: f64, x0: &State) -> (State, Vec<bool>) {
    let n = (drop.t_final / dt).round() as usize;
    let c = 2.0 * drop.zeta * (k * drop.mass).sqrt();
    let (mut y, mut v) = (x0[0], x0[1]);
    let mut pattern = Vec::with_capacity(n);
    for _ in 0..n {
        let push = -k * y - c * v;
        let in_contact = y < 0.0 && push > 0.0;
        pattern.push(in_contact);
        let force = if in_contact { push } else { 0.0 };
        v += dt * (force / drop.mass - drop.gravity);
        y += dt * v;
    }
    (State::new(y, v), pattern)
}

#[test]
fn test_side_map_is_the_core_map() {
    let drop = Drop::default();
    for k in [1e2, 1e5, 1e8] {
        let core = fixed_state(&drop, k, 1e-4, &FixedOptions::default()).unwrap();
        let ours = euler_with_pattern(&drop, k, 1e-4, &drop.x0()).0;
        assert_eq!(core, ours, "k = {k:e}");
    }
}

#[test]
fn tangent_matches_central_differences_where_the_contact_pattern_is_unchanged() {
    let drop = Drop::default();
    for k in [1e2, 1e4, 1e6, 1e8] {
        for dt in [1e-4, 1e-5] {
            let r = fixed(&drop, k, dt, &FixedOptions::default()).unwrap();
            for j in 0..2 {
                // Probes far below |v|·dt do not move the first contact step; check it.
                let eps = 1e-8;
                let mut e = State::zeros();
                e[j] = eps;
                let (xp, pp) = euler_with_pattern(&drop, k, dt, &(drop.x0() + e));
                let (xm, pm) = euler_with_pattern(&drop, k, dt, &(drop.x0() - e));
                assert_eq!(
                    pp, pm,
                    "k = {k:e}, dt = {dt:e}: the probe changed the contact steps"
                );
                let fd = (xp - xm) / (2.0 * eps);
                let col = r.jacobian.column(j);
                let err = (fd - col).amax() / col.amax().max(1.0);
                assert!(err < 1e-5, "k = {k:e}, dt = {dt:e}, column {j}: {err:e}");
            }
        }
    }
}

#[test]
fn probes_larger_than_v_dt_change_the_contact_steps() {
    // The discrete map jumps when the first contact step moves; probes of order |v|·dt
    // (4.4e-4 m at dt = 1e-4) straddle such a jump and central differences stop
    // describing the tangent.
    let drop = Drop::default();
    let (k, dt, eps) = (1e6, 1e-4, 1e-3);
    let e = State::new(eps, 0.0);
    let (_, pp) = euler_with_pattern(&drop, k, dt, &(drop.x0() + e));
    let (_, pm) = euler_with_pattern(&drop, k, dt, &(drop.x0() - e));
    assert_ne!(pp, pm);
}

#[test]
fn gradient_error_grows_like_sqrt_k() {
    let drop = Drop::default();
    let reference = exact(&drop, &ExactOptions::default()).unwrap();
    let ks = exponent_stiffnesses();
    // At dt = 1e-4 the stiffest points are under-resolved (omega·dt = 1 at 1e8), which
    // bends the fit a little; at dt = 1e-6 every contact is resolved (omega·dt <= 0.01).
    // "Matched resolution" holds omega·dt near 0.1 at every k.
    type StepOf<'a> = Box<dyn Fn(f64) -> f64 + 'a>;
    let cases: [(&str, StepOf, f64); 3] = [
        ("dt = 1e-4", Box::new(|_| 1e-4), 0.05),
        ("dt = 1e-6", Box::new(|_| 1e-6), 0.02),
        ("matched", Box::new(|k| matched_dt(&drop, k).unwrap()), 0.05),
    ];
    for (name, dt_of, tol) in cases {
        let errs: Vec<f64> = ks
            .iter()
            .map(|&k| fixed_gradient_error(&drop, k, dt_of(k), &reference).unwrap())
            .collect();
        let fit = fit_loglog(&ks, &errs).unwrap();
        assert!(
            (fit.slope - 0.5).abs() < tol && fit.r2 > 0.98,
            "{name}: {fit:?}"
        );
    }
}

#[test]
fn sign_is_wrong_over_most_of_1e3_to_1e7() {
    let drop = Drop::default();
    let reference = exact(&drop, &ExactOptions::default()).unwrap();
    let ks = logspace(3.0, 7.0, 41);
    let wrong = ks
        .iter()
        .filter(|&&k| {
            !compare(
                &fixed(&drop, k, 1e-4, &FixedOptions::default()).unwrap(),
                &reference,
            )
            .right_sign
        })
        .count();
    assert!(
        wrong * 2 > ks.len(),
        "wrong sign at {wrong} of {} stiffnesses",
        ks.len()
    );
    // The softest setting agrees in sign: the lesson needs stiffness.
    assert!(
        compare(
            &fixed(&drop, 1e2, 1e-4, &FixedOptions::default()).unwrap(),
            &reference
        )
        .right_sign
    );
}

#[test]
fn refining_dt_does_not_reduce_the_gradient_error() {
    // A convergent first-order gradient would fall to ~0.1 and ~0.01 of its value.
    let drop = Drop::default();
    for k in [1e4, 1e5, 1e6, 1e7] {
        let r = dt_refinement(&drop, k, 1e-4).unwrap();
        assert!(r.ratio_10 > 0.5 && r.ratio_100 > 0.5, "k = {k:e}: {r:?}");
    }
}

#[test]
fn step_must_divide_the_final_time_and_respect_the_cap() {
    let drop = Drop::default();
    match fixed(&drop, 1e6, 3e-4, &FixedOptions::default()) {
        Err(FerroError::StepDoesNotDivide { dt, t_final, .. }) => {
            assert_eq!((dt, t_final), (3e-4, 0.8))
        }
        other => panic!("{other:?}"),
    }
    let msg = fixed(&drop, 1e6, 3e-4, &FixedOptions::default())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("3e-4") && msg.contains("0.8"), "{msg}");
    assert!(matches!(
        fixed(&drop, 1e6, 1e-8, &FixedOptions::default()),
        Err(FerroError::TooManySteps { .. })
    ));
    // dt = 1e-6 over 0.8 s is 8e5 steps: under the default cap of 1e7.
    assert_eq!(
        fixed(&drop, 1e6, 1e-6, &FixedOptions::default())
            .unwrap()
            .cost
            .steps,
        800_000
    );
}
