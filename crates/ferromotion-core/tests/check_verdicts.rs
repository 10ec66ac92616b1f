//! The checker's verdicts where gradients live: small and badly scaled derivatives, float32
//! objectives, kinks no `events` callback reports. Every right answer here is computed by a
//! second route (a closed form, or a forward-mode tangent carried through the same float32
//! arithmetic), never by the checker.
#![allow(clippy::disallowed_methods)] // native-only oracles: std floats are fine here

use ferromotion_core::check::*;
use ferromotion_core::Result;

fn check(f: &mut dyn FnMut(&[f64]) -> Result<f64>, x: &[f64], g: &[f64]) -> CheckReport {
    check_gradient(f, None, None, x, g, &CheckOptions::default()).unwrap()
}

fn scaled(g: &[f64], s: f64) -> Vec<f64> {
    g.iter().map(|v| v * s).collect()
}

/// A smooth bowl with its minimum at (1, -2, 0.5): f = Σ w_i (x_i - c_i)² + (x_0 - c_0)³.
fn bowl(x: &[f64]) -> Result<f64> {
    let (c, w) = ([1.0, -2.0, 0.5], [1.0, 3.0, 0.5]);
    Ok((0..3).map(|i| w[i] * (x[i] - c[i]).powi(2)).sum::<f64>() + (x[0] - c[0]).powi(3))
}

fn bowl_grad(x: &[f64]) -> Vec<f64> {
    let (c, w) = ([1.0, -2.0, 0.5], [1.0, 3.0, 0.5]);
    let mut g: Vec<f64> = (0..3).map(|i| 2.0 * w[i] * (x[i] - c[i])).collect();
    g[0] += 3.0 * (x[0] - c[0]).powi(2);
    g
}

#[test]
fn near_an_optimum_a_sign_flipped_gradient_is_not_verified_and_the_right_one_is() {
    let x = [1.0 + 1e-4, -2.0 - 3e-5, 0.5 + 2e-4];
    let g = bowl_grad(&x);
    let right = check(&mut bowl, &x, &g);
    assert_eq!(right.verdict, Verdict::Verified, "{}", right.why);
    let flipped = check(&mut bowl, &x, &scaled(&g, -1.0));
    assert_eq!(flipped.verdict, Verdict::NotVerified, "{}", flipped.why);
    // Relative and absolute discrepancy are both reported: here |g·p| ~ 1e-4, so the
    // absolute error is tiny while the relative one is 2.
    let d = &flipped.directions[0];
    assert!(d.abs_error.unwrap() < 1e-3 && (d.rel_error.unwrap() - 2.0).abs() < 1e-3);
}

#[test]
fn at_the_optimum_itself_agreement_is_only_absolute() {
    let x = [1.0, -2.0, 0.5];
    let r = check(&mut bowl, &x, &[0.0, 0.0, 0.0]);
    assert_eq!(r.verdict, Verdict::VerifiedAbsolute, "{}", r.why);
    assert!(r.why.contains("absolute"));
    // A claim of a resolvable slope where f is flat is caught.
    let r = check(&mut bowl, &x, &[1e-3, 0.0, 0.0]);
    assert_eq!(r.verdict, Verdict::NotVerified, "{}", r.why);
}

#[test]
fn inputs_of_size_a_million_catch_a_one_percent_error_with_and_without_scale() {
    // f = Σ (x_i / 1e6 - 1)² · 1e3 + sin(x_0 / 1e6): derivatives ~1e-3, inputs ~1e6.
    let mut f = |x: &[f64]| -> Result<f64> {
        Ok(1e3 * x.iter().map(|v| (v / 1e6 - 1.0).powi(2)).sum::<f64>() + (x[0] / 1e6).sin())
    };
    let x: [f64; 2] = [1.3e6, 0.7e6];
    let g = [
        2e3 * (x[0] / 1e6 - 1.0) / 1e6 + (x[0] / 1e6).cos() / 1e6,
        2e3 * (x[1] / 1e6 - 1.0) / 1e6,
    ];
    assert_eq!(check(&mut f, &x, &g).verdict, Verdict::Verified);
    assert_eq!(
        check(&mut f, &x, &scaled(&g, 1.01)).verdict,
        Verdict::NotVerified
    );
    let opts = CheckOptions {
        scale: Some(vec![1e6, 1e6]),
        ..Default::default()
    };
    let r = check_gradient(&mut f, None, None, &x, &g, &opts).unwrap();
    assert_eq!(r.verdict, Verdict::Verified, "{}", r.why);
    assert_eq!(r.options.scale, Some(vec![1e6, 1e6]));
    // The direction is p = scale ⊙ d: coordinate 1 moves x_1 by eps·1e6.
    assert_eq!(r.directions.last().unwrap().direction, vec![0.0, 1e6]);
    let wrong = check_gradient(&mut f, None, None, &x, &scaled(&g, 1.0001), &opts).unwrap();
    assert_eq!(wrong.verdict, Verdict::NotVerified, "{}", wrong.why);
    let bad = CheckOptions {
        scale: Some(vec![1.0]),
        ..Default::default()
    };
    assert!(check_gradient(&mut f, None, None, &x, &g, &bad).is_err());
}

/// A smooth objective computed in float32, and its gradient by the chain rule in float32.
fn smooth_f32(x: &[f64]) -> (f64, Vec<f64>) {
    let (a, b) = (x[0] as f32, x[1] as f32);
    let mut v = 0.0f32;
    let (mut da, mut db) = (0.0f32, 0.0f32);
    // A long float32 sum: round-off accumulates as in a rollout.
    for i in 0..200 {
        let t = i as f32 * 0.01;
        let s = (a * t).sin();
        v += s * b + 0.5 * b * b * t;
        da += (a * t).cos() * t * b;
        db += s + b * t;
    }
    (v as f64, vec![da as f64, db as f64])
}

#[test]
fn a_float32_objective_with_its_exact_gradient_is_verified_within_noise_and_five_percent_off_is_not(
) {
    let x = [0.7, 1.3];
    let (_, g) = smooth_f32(&x);
    let mut f = |x: &[f64]| Ok(smooth_f32(x).0);
    let r = check(&mut f, &x, &g);
    assert_eq!(r.verdict, Verdict::VerifiedWithinNoise, "{}", r.why);
    assert!(r.why.contains("float32"), "{}", r.why);
    assert!(
        r.noise.relative > 1e-9 && r.noise.relative < 1e-5,
        "{:?}",
        r.noise
    );
    let wrong = check(&mut f, &x, &scaled(&g, 1.05));
    assert_eq!(wrong.verdict, Verdict::NotVerified, "{}", wrong.why);
    for r in [&r, &wrong] {
        assert!(r.evaluations <= 95, "{}", r.evaluations);
    }
}

/// The drop in float32: semi-implicit Euler on the push-only penalty law, v(T) as a
/// function of (y0, v0), and its forward-mode tangent carried through the same float32 steps.
fn drop_f32(x: &[f64]) -> (f64, [f64; 2]) {
    let (k, dt, g, steps) = (1e4f32, 1e-3f32, 9.81f32, 600);
    let (mut y, mut v) = (x[0] as f32, x[1] as f32);
    // Tangent rows: d(y, v)/d(y0, v0).
    let (mut dy, mut dv) = ([1.0f32, 0.0], [0.0f32, 1.0]);
    for _ in 0..steps {
        let inside = y < 0.0;
        let a = -g + if inside { -k * y } else { 0.0 };
        v += dt * a;
        for j in 0..2 {
            if inside {
                dv[j] += dt * (-k * dy[j]);
            }
        }
        y += dt * v;
        for j in 0..2 {
            dy[j] += dt * dv[j];
        }
    }
    (v as f64, [dv[0] as f64, dv[1] as f64])
}

#[test]
fn a_float32_drop_rollout_with_its_exact_tangent_is_verified_within_noise() {
    let x = [1.0, 0.0];
    let (_, g) = drop_f32(&x);
    let mut f = |x: &[f64]| Ok(drop_f32(x).0);
    let r = check(&mut f, &x, &g);
    assert_eq!(r.verdict, Verdict::VerifiedWithinNoise, "{}", r.why);
    assert!(r.why.contains("float32"), "{}", r.why);
    // The map kinks wherever a contact step moves on the grid, |v|·dt = 4.4e-3 apart in y0:
    // nothing that large is claimed smooth.
    for d in &r.directions {
        assert!(
            d.smooth_below.unwrap() < 4.4e-3,
            "{}: {:?}",
            d.label,
            d.smooth_below
        );
    }
    let wrong = check(&mut f, &x, &scaled(&g, 1.05));
    assert_eq!(wrong.verdict, Verdict::NotVerified, "{}", wrong.why);
}

#[test]
fn without_events_a_kink_is_measured_and_the_average_slope_across_it_is_not_verified() {
    // f = 2·|x0 - 3e-4| + x1²: slope -2 in x0 left of the kink, +2 right of it. The local
    // slope at x0 = 0 is -2; the average across the kink (what a large probe reads) is 0.
    let mut f = |x: &[f64]| -> Result<f64> { Ok(2.0 * (x[0] - 3e-4).abs() + x[1] * x[1]) };
    let x = [0.0, 0.5];
    let right = check(&mut f, &x, &[-2.0, 1.0]);
    assert_eq!(right.verdict, Verdict::Verified, "{}", right.why);
    let c0 = right
        .directions
        .iter()
        .find(|d| d.label == "coordinate 0")
        .unwrap();
    assert!(c0.smooth_below.unwrap() < 3e-4, "{:?}", c0.smooth_below);
    let average = check(&mut f, &x, &[0.0, 1.0]);
    assert_eq!(average.verdict, Verdict::NotVerified, "{}", average.why);
    // A full sweep sees the large probes straddle the kink, and says so.
    let opts = CheckOptions {
        full_sweep: true,
        ..Default::default()
    };
    let full = check_gradient(&mut f, None, None, &x, &[-2.0, 1.0], &opts).unwrap();
    let c0 = full
        .directions
        .iter()
        .find(|d| d.label == "coordinate 0")
        .unwrap();
    assert!(c0
        .probes
        .iter()
        .any(|p| p.eps > 3e-4 && p.classification == Classification::NonSmooth));
    assert!(c0.smooth_below.unwrap() < 3e-4);
}

#[test]
fn a_jump_at_x_is_refused_not_verified() {
    // A step of height 1e-6 a hair right of x: every probe straddles it.
    let mut f = |x: &[f64]| -> Result<f64> { Ok(x[0] + if x[0] > 1e-13 { 1e-6 } else { 0.0 }) };
    let r = check_gradient(
        &mut f,
        None,
        None,
        &[0.0],
        &[1.0],
        &CheckOptions {
            random_directions: 0,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(r.verdict, Verdict::Refused, "{}", r.why);
    assert_eq!(r.directions[0].classification, Classification::NonSmooth);
}

#[test]
fn bad_input_keeps_its_typed_errors() {
    let mut f = |x: &[f64]| -> Result<f64> { Ok(x[0] * x[0]) };
    let opts = CheckOptions::default();
    assert!(check_gradient(&mut f, None, None, &[1.0], &[f64::NAN], &opts).is_err());
    assert!(check_gradient(&mut f, None, None, &[1.0], &[1.0, 2.0], &opts).is_err());
    let mut nan_at_x = |_: &[f64]| -> Result<f64> { Ok(f64::NAN) };
    let e = check_gradient(&mut nan_at_x, None, None, &[1.0], &[2.0], &opts).unwrap_err();
    assert!(e.to_string().contains("f(x) = NaN"), "{e}");
    let empty = CheckOptions {
        eps: vec![],
        ..Default::default()
    };
    assert!(check_gradient(&mut f, None, None, &[1.0], &[2.0], &empty).is_err());
}
