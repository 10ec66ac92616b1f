//! The gradient checker: its worked examples, its evidence ladder and its refusals, each
//! cross-checked by an independent route.
#![allow(clippy::disallowed_methods)] // native-only oracles: std floats are fine here

mod common;

use common::fixed_final_velocity;
use ferromotion_core::check::examples::{linear_scalar, Projectile};
use ferromotion_core::check::*;
use ferromotion_core::physics::contact::rigid::exact_with_impacts;
use ferromotion_core::physics::integrate::fixed::contact_signature;
use ferromotion_core::*;
use nalgebra::DMatrix;

fn scalar(x: &[f64]) -> Result<f64> {
    Ok(linear_scalar(x[0], x[1]).0)
}

#[test]
fn scalar_example_verifies_and_its_sweep_is_a_v() {
    let x = [0.5, 0.4];
    let (_, g) = linear_scalar(x[0], x[1]);
    // The printed digits, from the hand derivation in the example's docs.
    assert_eq!(format!("({:.2}, {:.3})", g[0], g[1]), "(-1.61, -1.725)");
    // The whole ladder (the walk stops early otherwise), to see the V.
    let opts = CheckOptions {
        full_sweep: true,
        ..Default::default()
    };
    let r = check_gradient(&mut scalar, None, None, &x, &g, &opts).unwrap();
    assert_eq!(r.verdict, Verdict::Verified, "{}", r.why);
    // J is quadratic in b (coordinate 1), where central differences are exact and only
    // round-off remains; every direction that involves a shows the V.
    for d in r.directions.iter().filter(|d| d.label != "coordinate 1") {
        let errs: Vec<f64> = d.probes.iter().map(|p| p.rel_error).collect();
        let (imin, &emin) = errs
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .unwrap();
        // Truncation dominates the largest probes, round-off the smallest: a V.
        assert!(
            imin > 0 && imin < errs.len() - 1,
            "{}: minimum at an end {errs:?}",
            d.label
        );
        assert!(
            errs[0] > 100.0 * emin && errs[errs.len() - 1] > 100.0 * emin,
            "{}: {errs:?}",
            d.label
        );
        let slope = d.taylor_slope.unwrap();
        assert!(
            (slope - 1.0).abs() < 0.1,
            "{}: Taylor slope {slope}",
            d.label
        );
    }
}

#[test]
fn a_wrong_gradient_is_not_verified_and_its_taylor_slope_is_flat() {
    let x = [0.5, 0.4];
    let (_, g) = linear_scalar(x[0], x[1]);
    let wrong = [g[0] * 1.1, g[1]];
    let r = check_gradient(
        &mut scalar,
        None,
        None,
        &x,
        &wrong,
        &CheckOptions::default(),
    )
    .unwrap();
    assert_eq!(r.verdict, Verdict::NotVerified);
    let d = r
        .directions
        .iter()
        .find(|d| d.label == "coordinate 0")
        .unwrap();
    assert!(d.taylor_slope.unwrap().abs() < 0.1, "{:?}", d.taylor_slope);
}

#[test]
fn second_order_taylor_slope_with_a_hessian_vector_product() {
    // f = ½·xᵀ·A·x + sin(x0): gradient A·x + (cos x0, 0), Hessian A + diag(-sin x0, 0).
    let a = [[3.0, 1.0], [1.0, 2.0]];
    let x = [0.3, -0.7];
    let mut f = |x: &[f64]| -> Result<f64> {
        Ok(
            0.5 * (a[0][0] * x[0] * x[0] + 2.0 * a[0][1] * x[0] * x[1] + a[1][1] * x[1] * x[1])
                + x[0].sin(),
        )
    };
    let g = [
        a[0][0] * x[0] + a[0][1] * x[1] + x[0].cos(),
        a[1][0] * x[0] + a[1][1] * x[1],
    ];
    let mut hvp = |d: &[f64]| -> Result<Vec<f64>> {
        Ok(vec![
            (a[0][0] - x[0].sin()) * d[0] + a[0][1] * d[1],
            a[1][0] * d[0] + a[1][1] * d[1],
        ])
    };
    // The second-order remainder falls like h³ before dividing by h: start the Taylor
    // sweep at 1e-1 so that several points stay above round-off.
    let taylor_h = (0..=6).map(|i| 10f64.powf(-1.0 - 0.5 * i as f64)).collect();
    let opts = CheckOptions {
        taylor_h,
        ..Default::default()
    };
    let r = check_gradient(&mut f, None, Some(&mut hvp), &x, &g, &opts).unwrap();
    assert_eq!(r.verdict, Verdict::Verified, "{}", r.why);
    // Along coordinate 1 the objective is exactly quadratic: the second-order remainder
    // vanishes to round-off and has no slope to fit. Every other direction has one.
    let mut fitted = 0;
    for d in &r.directions {
        assert!(d.taylor_second_order);
        if let Some(s) = d.taylor_slope {
            assert!((s - 2.0).abs() < 0.15, "{}: {s}", d.label);
            fitted += 1;
        }
    }
    assert!(
        fitted >= r.directions.len() - 1,
        "{:#?}",
        r.directions
            .iter()
            .map(|d| (&d.label, &d.direction, d.taylor_slope))
            .collect::<Vec<_>>()
    );
}

#[test]
fn projectile_check_passes_and_descent_lands_on_the_target() {
    let p = Projectile::default();
    let mut f = |x: &[f64]| Ok(p.objective(x[0], x[1])?.0);
    let mut ev = |x: &[f64]| {
        Ok(EventSignature {
            sequence: vec![p.landing(x[0], x[1])?.1],
            min_event_speed: None,
        })
    };
    let mut x = [3.0, 4.0];
    let (_, g) = p.objective(x[0], x[1]).unwrap();
    let r = check_gradient(
        &mut f,
        Some(&mut ev),
        None,
        &x,
        &g,
        &CheckOptions::default(),
    )
    .unwrap();
    assert_eq!(r.verdict, Verdict::Verified, "{}", r.why);
    // Steepest descent with backtracking on the checked gradient.
    for _ in 0..200 {
        let (l, g) = p.objective(x[0], x[1]).unwrap();
        let mut alpha = 1.0;
        while alpha > 1e-12 {
            let t = [x[0] - alpha * g[0], x[1] - alpha * g[1]];
            if p.objective(t[0], t[1]).map(|v| v.0 < l).unwrap_or(false) {
                x = t;
                break;
            }
            alpha *= 0.5;
        }
    }
    let (land, _) = p.landing(x[0], x[1]).unwrap();
    assert!((land.v - p.target).abs() < 1e-6, "landed at {}", land.v);
}

fn exact_v(drop: &Drop) -> impl FnMut(&[f64]) -> Result<f64> + '_ {
    move |x: &[f64]| {
        Ok(exact(
            &drop.with_x0(&State::new(x[0], x[1])),
            &ExactOptions::default(),
        )?
        .state[1])
    }
}

fn exact_events(drop: &Drop) -> impl FnMut(&[f64]) -> Result<EventSignature> + '_ {
    move |x: &[f64]| {
        let lenient = ExactOptions {
            graze_speed: 1e-9,
            ..Default::default()
        };
        let (_, impacts) = exact_with_impacts(&drop.with_x0(&State::new(x[0], x[1])), &lenient)?;
        Ok(EventSignature {
            sequence: vec![impacts.len() as i64],
            min_event_speed: impacts.iter().map(|i| -i.v_minus).reduce(f64::min),
        })
    }
}

/// Check a claimed gradient of the rigid drop's v(T) against that objective, with its
/// impacts as the event sequence.
fn check_drop_v(drop: &Drop, grad: &[f64], opts: &CheckOptions) -> CheckReport {
    let x = [drop.height, drop.velocity];
    check_gradient(
        &mut exact_v(drop),
        Some(&mut exact_events(drop)),
        None,
        &x,
        grad,
        opts,
    )
    .unwrap()
}

#[test]
fn drop_exact_gradient_is_verified_and_the_fixed_one_is_not() {
    let drop = Drop::default();
    let je = exact(&drop, &ExactOptions::default()).unwrap().jacobian;
    let jf = fixed(&drop, 1e6, 1e-4, &FixedOptions::default())
        .unwrap()
        .jacobian;
    let opts = CheckOptions::default();
    let r = check_drop_v(&drop, &[je[(1, 0)], je[(1, 1)]], &opts);
    assert_eq!(r.verdict, Verdict::Verified, "{}", r.why);
    let r = check_drop_v(&drop, &[jf[(1, 0)], jf[(1, 1)]], &opts);
    assert_eq!(r.verdict, Verdict::NotVerified, "{}", r.why);
}

#[test]
fn fixed_tangent_verifies_against_its_own_map_only_for_small_probes() {
    let drop = Drop::default();
    let (k, dt) = (1e6, 1e-4);
    let x = [drop.height, drop.velocity];
    let jf = fixed(&drop, k, dt, &FixedOptions::default())
        .unwrap()
        .jacobian;
    let mut f = |x: &[f64]| fixed_final_velocity(&drop, k, dt, x);
    let mut ev = |x: &[f64]| {
        Ok(EventSignature {
            sequence: contact_signature(
                &drop.with_x0(&State::new(x[0], x[1])),
                k,
                dt,
                &FixedOptions::default(),
            )?,
            min_event_speed: None,
        })
    };
    // Central differences of a stiff map lose digits to round-off: tolerance 1e-5. The
    // whole ladder, to see the large probes cross the contact steps.
    let opts = CheckOptions {
        tol: 1e-5,
        full_sweep: true,
        ..Default::default()
    };
    let r = check_gradient(
        &mut f,
        Some(&mut ev),
        None,
        &x,
        &[jf[(1, 0)], jf[(1, 1)]],
        &opts,
    )
    .unwrap();
    assert_eq!(r.verdict, Verdict::Verified, "{}", r.why);
    let impact_speed = drop.impact_speed();
    for d in &r.directions {
        // Probes of order |v|·dt and larger move the contact steps: event-crossing.
        let below = d.smooth_below.unwrap();
        assert!(
            below < impact_speed * dt,
            "{}: smooth up to {below:e}",
            d.label
        );
        assert!(d
            .probes
            .iter()
            .any(|p| p.classification == Classification::EventCrossing));
    }
}

#[test]
fn a_direction_across_the_impact_is_event_crossing_and_refused() {
    // T a picosecond after the impact: every probe moves the impact across T.
    let t_hit = Drop::default().first_impact_time();
    let drop = Drop {
        t_final: t_hit + 1e-12,
        ..Drop::default()
    };
    let je = exact(&drop, &ExactOptions::default()).unwrap().jacobian;
    let r = check_drop_v(&drop, &[je[(1, 0)], je[(1, 1)]], &CheckOptions::default());
    assert_eq!(r.verdict, Verdict::Refused, "{}", r.why);
    assert!(r
        .directions
        .iter()
        .any(|d| d.classification == Classification::EventCrossing));
}

#[test]
fn a_grazing_impact_is_refused() {
    // Dropped from 40 nm the impact speed is 8.9e-4 m/s, below 1e-3 m/s.
    let drop = Drop {
        height: 4e-8,
        t_final: 1.5e-4,
        ..Drop::default()
    };
    let x = [drop.height, drop.velocity];
    let lenient = ExactOptions {
        graze_speed: 1e-9,
        ..Default::default()
    };
    let je = exact(&drop, &lenient).unwrap().jacobian;
    let mut f = |x: &[f64]| Ok(exact(&drop.with_x0(&State::new(x[0], x[1])), &lenient)?.state[1]);
    let opts = CheckOptions {
        eps: vec![1e-12, 1e-13],
        taylor_h: vec![1e-12],
        ..Default::default()
    };
    let r = check_gradient(
        &mut f,
        Some(&mut exact_events(&drop)),
        None,
        &x,
        &[je[(1, 0)], je[(1, 1)]],
        &opts,
    )
    .unwrap();
    assert_eq!(r.verdict, Verdict::Refused, "{}", r.why);
    assert!(r
        .directions
        .iter()
        .all(|d| d.classification == Classification::Grazing));
}

#[test]
fn conditioning_finds_the_weak_combination() {
    // Rank one: the input combination (2, -1)/sqrt(5) is not observed at all.
    let j = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0]);
    let c = conditioning(&j, 1e-8).unwrap();
    assert!((c.singular_values[0] - 5.0).abs() < 1e-12 && c.singular_values[1] < 1e-12);
    assert_eq!(c.weak_directions.len(), 1);
    let w = &c.weak_directions[0];
    assert!((w[0] * 1.0 + w[1] * 2.0).abs() < 1e-12, "{w:?}");
    // A wide matrix (one output, two inputs) leaves one combination unobserved.
    let wide = DMatrix::from_row_slice(1, 2, &[3.0, 4.0]);
    let c = conditioning(&wide, 1e-8).unwrap();
    assert_eq!(c.singular_values.len(), 2);
    assert!((c.singular_values[0] - 5.0).abs() < 1e-12);
    // The drop's exact Jacobian: singular values match the 2x2 closed form.
    let je = exact(&Drop::default(), &ExactOptions::default())
        .unwrap()
        .jacobian;
    let m = DMatrix::from_row_slice(2, 2, &ferromotion_core::physics::state::to_row_major(&je));
    let c = conditioning(&m, 1e-8).unwrap();
    let (s0, s1) = (c.singular_values[0], c.singular_values[1]);
    let det = je.determinant().abs();
    let fro2: f64 = je.iter().map(|v| v * v).sum();
    assert!((s0 * s1 - det).abs() < 1e-12 * det && (s0 * s0 + s1 * s1 - fro2).abs() < 1e-12 * fro2);
}

#[test]
fn every_example_gives_the_verdict_its_physics_implies() {
    use ferromotion_core::check::examples::{check_example, EXAMPLES};
    let expected = [
        ("scalar", Verdict::Verified),
        ("projectile", Verdict::Verified),
        ("drop-exact", Verdict::Verified),
        ("drop-fixed", Verdict::NotVerified),
        ("drop-fixed-own-map", Verdict::Verified),
        ("drop-across-impact", Verdict::Refused),
        ("drop-grazing", Verdict::Refused),
    ];
    assert_eq!(expected.len(), EXAMPLES.len());
    for (name, verdict) in expected {
        let r = check_example(name, &CheckOptions::default()).unwrap();
        assert_eq!(r.report.verdict, verdict, "{name}: {}", r.report.why);
        let json: serde_json::Value = serde_json::from_str(&r.to_json().unwrap()).unwrap();
        assert_eq!(json["schema"], RECEIPT_SCHEMA);
        assert_eq!(json["report"]["directions"].as_array().unwrap().len(), 6);
    }
    assert!(check_example("nope", &CheckOptions::default()).is_err());
}
