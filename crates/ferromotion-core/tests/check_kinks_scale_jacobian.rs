//! The checker where researchers' gradients live: kinks exactly at x (refused with both
//! one-sided slopes named), C¹ points (still verified), many parameters (random directions
//! with a stated guarantee, memory linear in n) and vector outputs (Jacobians, JVPs, VJPs).
//! Every expected slope and gradient is written in closed form.
#![allow(clippy::disallowed_methods)] // native-only oracles: std floats are fine here

use ferromotion_core::check::*;
use ferromotion_core::Result;

fn check(f: &mut dyn FnMut(&[f64]) -> Result<f64>, x: &[f64], g: &[f64]) -> CheckReport {
    check_gradient(f, None, None, x, g, &CheckOptions::default()).unwrap()
}

/// The kink the report names (the first direction showing one), with its claim reading.
fn kink_of(r: &CheckReport) -> &Kink {
    r.directions
        .iter()
        .find_map(|d| d.kink.as_ref())
        .unwrap_or_else(|| panic!("no kink named: {} {}", r.verdict, r.why))
}

#[test]
fn relu_at_zero_is_refused_whichever_subgradient_is_claimed() {
    let mut relu = |x: &[f64]| Ok(x[0].max(0.0));
    for (claim, equals) in [(0.5, "average"), (0.0, "backward"), (1.0, "forward")] {
        let r = check(&mut relu, &[0.0], &[claim]);
        assert_eq!(r.verdict, Verdict::Refused, "claim {claim}: {}", r.why);
        // Along a direction p the forward slope of max(t, 0) is max(p, 0), the backward min(p, 0).
        for d in &r.directions {
            let (k, p) = (
                d.kink.as_ref().expect("every direction kinked"),
                d.direction[0],
            );
            assert!((k.forward - p.max(0.0)).abs() < 1e-9, "{k:?} p {p}");
            assert!((k.backward - p.min(0.0)).abs() < 1e-9, "{k:?} p {p}");
        }
        // Along +1 the claim reads as given; along -1 forward and backward trade places.
        let along = |p: f64| {
            let d = r.directions.iter().find(|d| d.direction[0] == p).unwrap();
            d.kink.as_ref().unwrap().claim_equals.clone()
        };
        assert_eq!(along(1.0), equals);
        let mirrored = match equals {
            "forward" => "backward",
            "backward" => "forward",
            other => other,
        };
        if r.directions.iter().any(|d| d.direction[0] == -1.0) {
            assert_eq!(along(-1.0), mirrored);
        }
        assert!(
            r.why.contains("kink at x") && r.why.contains("forward") && r.why.contains("backward"),
            "{}",
            r.why
        );
    }
}

#[test]
fn every_kink_at_x_is_refused() {
    type Case = (
        &'static str,
        Box<dyn FnMut(&[f64]) -> Result<f64>>,
        Vec<f64>,
        Vec<f64>,
    );
    let cases: Vec<Case> = vec![
        (
            "|x| at 0",
            Box::new(|x: &[f64]| Ok(x[0].abs())),
            vec![0.0],
            vec![0.0],
        ),
        (
            "slopes 1 and 3, claimed 2",
            Box::new(|x: &[f64]| Ok(if x[0] < 0.0 { x[0] } else { 3.0 * x[0] })),
            vec![0.0],
            vec![2.0],
        ),
        (
            "max(x0, x1) at a tie",
            Box::new(|x: &[f64]| Ok(x[0].max(x[1]))),
            vec![0.7, 0.7],
            vec![0.5, 0.5],
        ),
        (
            "L1 norm with a zero coordinate",
            Box::new(|x: &[f64]| Ok(x.iter().map(|v| v.abs()).sum())),
            vec![0.3, 0.0, -1.2],
            vec![1.0, 0.0, -1.0],
        ),
        (
            "hinge at its margin",
            // max(0, 1 - y w·a) with y = 1, a = (2, 1): w = (0.25, 0.5) puts it on the margin.
            Box::new(|w: &[f64]| Ok((1.0 - (2.0 * w[0] + w[1])).max(0.0))),
            vec![0.25, 0.5],
            vec![-1.0, -0.5],
        ),
        (
            "median of three at a tie",
            Box::new(|x: &[f64]| {
                let mut v = x.to_vec();
                v.sort_by(f64::total_cmp);
                Ok(v[1])
            }),
            vec![0.4, 0.4, 2.0],
            vec![0.5, 0.5, 0.0],
        ),
        (
            "ReLU in badly scaled units",
            Box::new(|x: &[f64]| Ok((1e6 * (x[0] - 2e-3)).max(0.0))),
            vec![2e-3],
            vec![5e5],
        ),
    ];
    for (name, mut f, x, g) in cases {
        let r = check(f.as_mut(), &x, &g);
        assert_eq!(r.verdict, Verdict::Refused, "{name}: {}", r.why);
        let k = kink_of(&r);
        assert!(
            (k.forward - k.backward).abs() > 10.0 * k.noise,
            "{name}: {k:?}"
        );
    }
}

#[test]
fn c1_points_and_a_kink_away_from_x_are_judged_as_before() {
    // x|x| at 0 (derivative 0, C¹), Huber at its threshold δ = 1 (derivative δ), softplus.
    let mut xabsx = |x: &[f64]| Ok(x[0] * x[0].abs());
    let r = check(&mut xabsx, &[0.0], &[0.0]);
    assert!(r.directions.iter().all(|d| d.kink.is_none()), "{}", r.why);
    assert!(
        matches!(r.verdict, Verdict::Verified | Verdict::VerifiedAbsolute),
        "x|x|: {} {}",
        r.verdict,
        r.why
    );
    let huber = |t: f64| {
        if t.abs() <= 1.0 {
            0.5 * t * t
        } else {
            t.abs() - 0.5
        }
    };
    let mut h = |x: &[f64]| Ok(huber(x[0]) + huber(x[1]));
    let r = check(&mut h, &[1.0, -0.3], &[1.0, -0.3]);
    assert_eq!(r.verdict, Verdict::Verified, "Huber: {}", r.why);
    let mut softplus = |x: &[f64]| Ok((1.0 + x[0].exp()).ln() + (1.0 + x[1].exp()).ln());
    let s = |t: f64| 1.0 / (1.0 + (-t).exp());
    let r = check(&mut softplus, &[0.0, 1.5], &[s(0.0), s(1.5)]);
    assert_eq!(r.verdict, Verdict::Verified, "softplus: {}", r.why);
    // A kink 1e-3 from x: the probes below it are smooth, the slope there is 1.
    let mut away = |x: &[f64]| Ok((x[0] - 1e-3).abs());
    let r = check(&mut away, &[0.0], &[-1.0]);
    assert_eq!(r.verdict, Verdict::Verified, "kink away: {}", r.why);
    let r = check(&mut away, &[0.0], &[1.0]);
    assert_eq!(
        r.verdict,
        Verdict::NotVerified,
        "kink away, wrong sign: {}",
        r.why
    );
}

/// Σ (xᵢ²/2 + sin(xᵢ)·cᵢ) with cᵢ = 1 + i mod 7, and its gradient.
fn quad_sines(n: usize) -> (impl Fn(&[f64]) -> f64, Vec<f64>, Vec<f64>) {
    let c = |i: usize| 1.0 + (i % 7) as f64;
    let f = move |x: &[f64]| {
        x.iter()
            .enumerate()
            .map(|(i, v)| 0.5 * v * v + c(i) * v.sin())
            .sum::<f64>()
    };
    let x: Vec<f64> = (0..n)
        .map(|i| ((i * 37) % 101) as f64 / 50.0 - 1.0)
        .collect();
    let g: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, v)| v + c(i) * v.cos())
        .collect();
    (f, x, g)
}

#[test]
fn a_hundred_thousand_parameters_verify_in_a_hundred_evaluations_with_a_guarantee() {
    let n = 100_000;
    let (f, x, g) = quad_sines(n);
    let mut obj = |y: &[f64]| Ok(f(y));
    let r = check(&mut obj, &x, &g);
    assert_eq!(r.verdict, Verdict::Verified, "{}", r.why);
    assert!(r.evaluations <= 100, "{} evaluations", r.evaluations);
    let gu = r.guarantee.as_ref().expect("a guarantee");
    assert!(!gu.coordinates && gu.directions >= 8 && gu.dimension == n);
    assert!(gu.delta < 1e-3, "{gu:?}");
    assert!(gu.beta_at_one_percent < 1e-6, "{gu:?}");
    assert!(r.why.contains("Random directions only"), "{}", r.why);
    // An error of 1% of |g| in norm, along a direction drawn independently of the check's seed.
    let norm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
    let e: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64 - 499.5).collect();
    let en = e.iter().map(|v| v * v).sum::<f64>().sqrt();
    let wrong: Vec<f64> = g
        .iter()
        .zip(&e)
        .map(|(a, b)| a + 0.01 * norm * b / en)
        .collect();
    let r = check(&mut obj, &x, &wrong);
    assert_eq!(r.verdict, Verdict::NotVerified, "{}", r.why);
}

#[test]
fn a_request_that_cannot_fit_is_refused_with_a_sentence() {
    let (f, x, g) = quad_sines(100_000);
    let mut obj = |y: &[f64]| Ok(f(y));
    let opts = CheckOptions {
        random_directions: 10_000,
        ..Default::default()
    };
    let err = check_gradient(&mut obj, None, None, &x, &g, &opts).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("directions") && msg.contains("at most 500"),
        "{msg}"
    );
}

#[test]
fn random_directions_only_on_request_state_their_guarantee() {
    let (f, x, g) = quad_sines(5);
    let mut obj = |y: &[f64]| Ok(f(y));
    let opts = CheckOptions {
        coordinates: false,
        ..Default::default()
    };
    let r = check_gradient(&mut obj, None, None, &x, &g, &opts).unwrap();
    assert_eq!(r.directions.len(), 4);
    assert!(r.why.contains("coordinates=False"), "{}", r.why);
    assert_eq!(r.guarantee.as_ref().unwrap().directions, 4);
}

/// f(x) = (x0² x1, sin(x0) + 3 x1, x0 x1 x1): R² → R³, and its Jacobian.
fn vector_f(x: &[f64]) -> Vec<f64> {
    vec![
        x[0] * x[0] * x[1],
        x[0].sin() + 3.0 * x[1],
        x[0] * x[1] * x[1],
    ]
}

fn vector_j(x: &[f64]) -> Vec<f64> {
    vec![
        2.0 * x[0] * x[1],
        x[0] * x[0],
        x[0].cos(),
        3.0,
        x[1] * x[1],
        2.0 * x[0] * x[1],
    ]
}

#[test]
fn a_right_jacobian_is_verified_and_one_entry_one_percent_off_is_not() {
    let x = [0.7, -1.3];
    let mut f = |y: &[f64]| Ok(vector_f(y));
    let opts = CheckOptions::default();
    let j = vector_j(&x);
    let r = check_jacobian(&mut f, JacobianClaim::Matrix(&j), &x, &opts)
        .unwrap()
        .0;
    assert_eq!(r.verdict, Verdict::Verified, "{}", r.why);
    assert!(r
        .directions
        .iter()
        .any(|d| d.label.starts_with("output 2, ")));
    let mut off = j.clone();
    off[4] *= 1.01;
    let r = check_jacobian(&mut f, JacobianClaim::Matrix(&off), &x, &opts)
        .unwrap()
        .0;
    assert_eq!(r.verdict, Verdict::NotVerified, "{}", r.why);
    assert!(r.why.starts_with("output 2"), "{}", r.why);
}

#[test]
fn jvp_and_vjp_callables_are_checked_like_the_matrix() {
    let x = [0.7, -1.3];
    let j = vector_j(&x);
    let opts = CheckOptions::default();
    for bad in [false, true] {
        let mut jm = j.clone();
        if bad {
            jm[1] *= 1.01;
        }
        let want = if bad {
            Verdict::NotVerified
        } else {
            Verdict::Verified
        };
        let mut f = |y: &[f64]| Ok(vector_f(y));
        let mut jvp = |p: &[f64]| {
            Ok((0..3)
                .map(|r| jm[2 * r] * p[0] + jm[2 * r + 1] * p[1])
                .collect())
        };
        let r = check_jacobian(&mut f, JacobianClaim::Jvp(&mut jvp), &x, &opts)
            .unwrap()
            .0;
        assert_eq!(r.verdict, want, "jvp: {}", r.why);
        let mut vjp = |w: &[f64]| {
            Ok((0..2)
                .map(|c| (0..3).map(|r| jm[2 * r + c] * w[r]).sum())
                .collect())
        };
        let r = check_jacobian(&mut f, JacobianClaim::Vjp(&mut vjp), &x, &opts)
            .unwrap()
            .0;
        assert_eq!(r.verdict, want, "vjp: {}", r.why);
    }
}

#[test]
fn a_jvp_of_the_wrong_length_is_refused_naming_it() {
    let x = [0.7, -1.3];
    let mut f = |y: &[f64]| Ok(vector_f(y));
    let mut jvp = |_: &[f64]| Ok(vec![1.0, 2.0]);
    let err = check_jacobian(
        &mut f,
        JacobianClaim::Jvp(&mut jvp),
        &x,
        &CheckOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("jvp"), "{err}");
}
