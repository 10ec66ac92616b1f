//! The rigid reference: its saltation Jacobian against central differences of the
//! closed-form rigid flow, several impacts, grazing, and the stiff-limit restitution.
#![allow(clippy::disallowed_methods)] // native-only oracles: std floats are fine here

mod common;
use common::*;
use ferromotion_core::physics::contact::rigid::{exact_state, exact_with_impacts};
use ferromotion_core::*;

fn rigid_map(drop: &Drop, opts: &ExactOptions) -> impl Fn(&State) -> State {
    let (drop, opts) = (*drop, *opts);
    move |x: &State| exact_state(&at(&drop, x), &opts).unwrap()
}

#[test]
fn saltation_jacobian_matches_central_differences_of_the_rigid_flow() {
    // One bounce (the default drop), a throw upwards, and a long run with several impacts.
    let cases = [
        Drop::default(),
        Drop {
            velocity: 1.5,
            t_final: 1.2,
            ..Drop::default()
        },
        Drop {
            t_final: 1.9,
            ..Drop::default()
        },
    ];
    for drop in cases {
        let opts = ExactOptions::default();
        let (r, impacts) = exact_with_impacts(&drop, &opts).unwrap();
        let (err, eps) = best_over_eps(&rigid_map(&drop, &opts), &drop.x0(), &r.jacobian);
        assert!(
            err < 1e-8,
            "{} impacts: best central-difference agreement {err:e} at eps {eps:e}",
            impacts.len()
        );
    }
}

#[test]
fn several_impacts_are_composed_before_the_final_time() {
    let drop = Drop {
        t_final: 1.9,
        ..Drop::default()
    };
    let (_, impacts) = exact_with_impacts(&drop, &ExactOptions::default()).unwrap();
    // Flight times between impacts shrink by e each bounce, so many fit before 2.0 s.
    assert!(impacts.len() >= 5, "only {} impacts", impacts.len());
    let e = limit_restitution(drop.zeta).unwrap();
    for w in impacts.windows(2) {
        // Each bounce leaves at e times the arrival speed and returns at the same speed.
        assert!((w[1].v_minus + w[0].v_plus).abs() < 1e-12);
        assert!((w[0].v_plus + e * w[0].v_minus).abs() < 1e-15);
    }
}

#[test]
fn dv_dv0_is_one_for_a_drop_from_rest_whatever_e() {
    // From rest the impact speed is g·t_impact, so (1+e)·g/|v-|·t_impact - e = 1.
    // e >= 0.45 keeps the second impact after T = 0.8 s (softer bounces return sooner).
    for e in [0.45, 0.5, 0.632, 0.8, 0.95, 1.0] {
        let r = exact(
            &Drop::default(),
            &ExactOptions {
                restitution: Some(e),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(
            (r.jacobian[(1, 1)] - 1.0).abs() < 1e-12,
            "e = {e}: dv/dv0 = {}",
            r.jacobian[(1, 1)]
        );
    }
}

#[test]
fn time_of_impact_term_is_the_saltation_entry() {
    let drop = Drop::default();
    let e = limit_restitution(drop.zeta).unwrap();
    let r = exact(&drop, &ExactOptions::default()).unwrap();
    let term = time_of_impact_term(e, drop.gravity, drop.impact_speed()).unwrap();
    // One bounce from rest: dv(T)/dy0 is exactly the saltation's lower-left entry
    // (the flight matrices before and after leave that entry unchanged).
    assert!((r.jacobian[(1, 0)] - term).abs() < 1e-12 * term);
    // The spec's quoted values follow from (1+e)·g/|v|.
    assert!((time_of_impact_term(e, 9.81, 4.0).unwrap() - 4.00).abs() < 5e-3);
    assert!((time_of_impact_term(e, 9.81, 0.01).unwrap() - 1601.0).abs() < 1.0);
}

#[test]
fn grazing_impact_is_refused_with_the_term_it_would_have_had() {
    // Dropped from 40 nm the impact speed is sqrt(2·g·h) = 8.9e-4 m/s < 1e-3 m/s.
    // T = 0.15 ms leaves room for that impact only (the next one would come 0.11 ms later).
    let drop = Drop {
        height: 4e-8,
        t_final: 1.5e-4,
        ..Drop::default()
    };
    match exact(&drop, &ExactOptions::default()) {
        Err(FerroError::Grazing {
            speed,
            term,
            threshold,
            ..
        }) => {
            assert!(speed < threshold);
            assert!(
                (term - (1.0 + limit_restitution(drop.zeta).unwrap()) * drop.gravity / speed).abs()
                    < 1e-9 * term
            );
        }
        other => panic!("expected a grazing refusal, got {other:?}"),
    }
    // Zeno: the bounces of a long run slow down until one grazes.
    let long = Drop {
        t_final: 2.1,
        ..Drop::default()
    };
    assert!(matches!(
        exact(&long, &ExactOptions::default()),
        Err(FerroError::Grazing { .. })
    ));
    // The threshold is a parameter.
    let lenient = ExactOptions {
        graze_speed: 1e-4,
        ..Default::default()
    };
    assert!(exact(&drop, &lenient).is_ok());
}

#[test]
fn stiff_limit_restitution_is_the_push_only_law_not_the_pulling_one() {
    let zeta: f64 = 0.1606;
    let e = limit_restitution(zeta).unwrap();
    let pulling = (-zeta * std::f64::consts::PI / (1.0 - zeta * zeta).sqrt()).exp();
    assert!((e - 0.632).abs() < 5e-4, "e = {e}");
    assert!((pulling - 0.600).abs() < 5e-4 && (e - pulling).abs() > 0.03);
    assert_eq!(limit_restitution(0.0).unwrap(), 1.0);
}

#[test]
fn stiff_limit_restitution_matches_an_independent_integration_of_the_law() {
    // RK4 with a tiny step on the push-only law without gravity, from y = 0 at unit
    // speed, until the force -k·y - c·v reaches zero; the exit speed is the restitution.
    for zeta in [0.05, 0.1606, 0.4, 0.8] {
        let (k, m) = (1.0_f64, 1.0_f64);
        let c = 2.0 * zeta * (k * m).sqrt();
        let f = |y: f64, v: f64| -> (f64, f64) { (v, (-k * y - c * v) / m) };
        let (mut y, mut v, h) = (0.0_f64, -1.0_f64, 1e-5);
        loop {
            let (a1, b1) = f(y, v);
            let (a2, b2) = f(y + 0.5 * h * a1, v + 0.5 * h * b1);
            let (a3, b3) = f(y + 0.5 * h * a2, v + 0.5 * h * b2);
            let (a4, b4) = f(y + h * a3, v + h * b3);
            let (yn, vn) = (
                y + h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4),
                v + h / 6.0 * (b1 + 2.0 * b2 + 2.0 * b3 + b4),
            );
            if -k * yn - c * vn <= 0.0 && yn < 0.0 {
                // Linear interpolation to the zero of the force inside the last step.
                let (f0, f1) = (-k * y - c * v, -k * yn - c * vn);
                let s = f0 / (f0 - f1);
                v += s * (vn - v);
                break;
            }
            y = yn;
            v = vn;
        }
        // Without gravity the mass coasts out at v: the restitution is v / 1.
        let e = limit_restitution(zeta).unwrap();
        assert!(
            (v - e).abs() < 1e-6,
            "zeta {zeta}: integrated {v}, closed form {e}"
        );
    }
}
