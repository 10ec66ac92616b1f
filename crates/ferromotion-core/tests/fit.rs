//! Forward matching: the fit recovers known parameters, its sensitivities are the routes'
//! own derivatives, and a design that cannot identify its parameters is flagged.

use ferromotion_core::fit::{
    fit, predictions, FitOptions, Observations, Route, SigmaScale, Status,
};
use ferromotion_core::numeric::dist::student_t_quantile;
use ferromotion_core::{exact, fixed, flow, Drop, ExactOptions, FixedOptions, FlowOptions};

fn times(step: f64, horizon: f64) -> Vec<f64> {
    let n = (horizon / step).round() as usize;
    (1..=n).map(|i| i as f64 * step).collect()
}

fn opts(route: Route, params: &[&str], k: f64) -> FitOptions {
    FitOptions {
        params: params.iter().map(|s| s.to_string()).collect(),
        route,
        k,
        check: false,
        ..FitOptions::default()
    }
}

/// The predictions at T are the routes' own x(T), bit for bit.
#[test]
fn predictions_at_the_horizon_are_the_routes_states() {
    let drop = Drop::default();
    let t = times(0.02, 0.8);
    let k = 1e6;
    let p = predictions(&drop, &t, &opts(Route::Flow, &["zeta"], k)).unwrap();
    let f = flow(&drop, k, &FlowOptions::default()).unwrap();
    assert_eq!(
        (p.y[t.len() - 1], p.v[t.len() - 1]),
        (f.state[0], f.state[1])
    );
    let p = predictions(&drop, &t, &opts(Route::Exact, &["zeta"], k)).unwrap();
    let e = exact(&drop, &ExactOptions::default()).unwrap();
    assert_eq!(
        (p.y[t.len() - 1], p.v[t.len() - 1]),
        (e.state[0], e.state[1])
    );
    let mut o = opts(Route::Fixed, &["zeta"], k);
    o.dt = 1e-4;
    let p = predictions(&drop, &t, &o).unwrap();
    let x = fixed(&drop, k, 1e-4, &FixedOptions::default()).unwrap();
    assert_eq!(
        (p.y[t.len() - 1], p.v[t.len() - 1]),
        (x.state[0], x.state[1])
    );
    // Before the first impact (0.4515 s) every route is free flight: y0 - g t²/2.
    assert!((p.y[0] - (1.0 - 0.5 * 9.81 * 0.02 * 0.02)).abs() < 1e-5);
}

/// Noise-free data from the flow's closed form: the flow route's fit lands on the truth
/// from a start 40% off, with the gradient checks verified at the solution.
#[test]
fn flow_fit_recovers_noise_free_parameters() {
    let truth = Drop {
        zeta: 0.25,
        height: 1.1,
        ..Drop::default()
    };
    let k = 1e4;
    let t = times(0.02, 1.0);
    let p = predictions(&truth, &t, &opts(Route::Flow, &["zeta"], k)).unwrap();
    let obs = Observations {
        t: t.clone(),
        y: Some(p.y.clone()),
        v: Some(p.v.clone()),
        sigma_y: Some(1e-3),
        sigma_v: Some(1e-2),
        ..Observations::default()
    };
    let guess = Drop {
        zeta: 0.15,
        height: 0.9,
        ..Drop::default()
    };
    let mut o = opts(Route::Flow, &["zeta", "height", "k"], 2e4);
    o.check = true;
    let r = fit(&guess, &obs, &o, None).unwrap();
    assert_eq!(r.status, Status::Converged, "{:?}", r.iterations.last());
    let est: Vec<f64> = r.params.iter().map(|e| e.estimate).collect();
    assert!((est[0] - 0.25).abs() < 1e-6, "{est:?}");
    assert!((est[1] - 1.1).abs() < 1e-6, "{est:?}");
    assert!((est[2] / 1e4 - 1.0).abs() < 1e-4, "{est:?}");
    assert!(r.identifiable, "{:?}", r.weak_directions);
    // The cost is stationary at the solution: its gradient is below what differences resolve,
    // so the checker agrees there in absolute terms only (docs/checking.md).
    assert!(
        ["verified", "verified-absolute"].contains(&r.receipt.verdicts.1.as_str()),
        "{:?}",
        r.receipt.check_solution.as_ref().map(|c| &c.why)
    );
}

/// The flow route's central-difference column in zeta agrees with the fixed route's
/// forward-mode tangent before contact (zero) and the rigid route has no k at all.
#[test]
fn heights_sampled_in_flight_before_the_bounce_cannot_identify_contact_parameters() {
    let truth = Drop::default();
    let t = times(0.02, 0.44); // the first impact is at 0.4515 s
    let t_all: Vec<f64> = t.iter().copied().chain([0.8]).collect();
    let p = predictions(&truth, &t_all, &opts(Route::Flow, &["zeta"], 1e6)).unwrap();
    // One sample after the bounce sets the horizon but is masked: only flight is seen.
    let mut mask = vec![true; t_all.len()];
    *mask.last_mut().unwrap() = false;
    let obs = Observations {
        t: t_all,
        y: Some(p.y),
        sigma_y: Some(1e-3),
        mask_y: Some(mask),
        ..Observations::default()
    };
    let r = fit(&truth, &obs, &opts(Route::Flow, &["zeta", "k"], 1e6), None).unwrap();
    assert!(!r.identifiable);
    assert_eq!(r.weak_directions.len(), 2);
    assert!(r.weak_directions.iter().all(|w| w.kind == "unidentifiable"));
    assert_eq!(r.singular_values, vec![0.0, 0.0]);
}

#[test]
fn bad_observations_are_refused_naming_the_field() {
    let d = Drop::default();
    let o = opts(Route::Flow, &["zeta"], 1e6);
    let base = Observations {
        t: vec![0.1, 0.5, 0.8],
        y: Some(vec![0.9, 0.0, 0.1]),
        sigma_y: Some(1e-3),
        ..Observations::default()
    };
    let err = |obs: Observations, o: &FitOptions| fit(&d, &obs, o, None).unwrap_err().to_string();
    assert!(err(
        Observations {
            t: vec![0.1, 0.1, 0.8],
            ..base.clone()
        },
        &o
    )
    .contains("`t`"));
    assert!(err(
        Observations {
            y: Some(vec![0.9, f64::NAN, 0.1]),
            ..base.clone()
        },
        &o
    )
    .contains("`y`"));
    assert!(err(
        Observations {
            sigma_y: Some(0.0),
            ..base.clone()
        },
        &o
    )
    .contains("`sigma_y`"));
    assert!(err(
        Observations {
            sigma_y: None,
            ..base.clone()
        },
        &o
    )
    .contains("`sigma_y`"));
    let three = opts(Route::Flow, &["zeta", "k", "height"], 1e6);
    assert!(err(base.clone(), &three).contains("too few samples"));
    assert!(err(base.clone(), &opts(Route::Flow, &["spin"], 1e6)).contains("unknown parameter"));
    assert!(err(
        Observations {
            y: Some(vec![0.9, 0.1]),
            ..base
        },
        &o
    )
    .contains("`y`"));
}

use ferromotion_core::fit::predict::{sensitivity, Layout, Model, RouteSetup};
use ferromotion_core::fit::Param;

fn setup(route: Route) -> RouteSetup {
    RouteSetup {
        route,
        dt: 1e-4,
        tolerance: Default::default(),
        probe: 1e-4,
    }
}

/// Time scaling, derived independently of any route: y(μt; h, v0, g, k/m) solves the drop
/// with (h, μ·v0, μ²·g, μ²·k/m) and the same zeta, so at μ = 1
/// `t·v(t) = v0·∂y/∂v0 + 2·∂y/∂ln g + 2·∂y/∂ln k` and `∂y/∂ln m = −∂y/∂ln k`.
/// The flow route's g, k and m columns come from central differences, its v0 column from
/// its flow Jacobian: the identity ties them together at every sample time.
#[test]
fn flow_columns_obey_the_time_scaling_identity() {
    let drop = Drop {
        velocity: 0.5,
        zeta: 0.2,
        t_final: 1.5,
        ..Drop::default()
    };
    let t = times(0.05, 1.5);
    let params = vec![Param::Velocity, Param::Gravity, Param::K, Param::Mass];
    let layout = Layout {
        params: params.clone(),
        base: Model {
            drop,
            k: 1e5,
            restitution: None,
        },
    };
    let z = layout.coordinates(&layout.base);
    let s = sensitivity(&setup(Route::Flow), &layout, &z, &t).unwrap();
    for (i, &ti) in t.iter().enumerate() {
        let lhs = ti * s.prediction.v[i];
        let rhs = 0.5 * s.dy[(i, 0)] + 2.0 * s.dy[(i, 1)] + 2.0 * s.dy[(i, 2)];
        assert!(
            (lhs - rhs).abs() < 1e-7 * (1.0 + lhs.abs()),
            "t = {ti}: {lhs} vs {rhs}"
        );
        assert!(
            (s.dy[(i, 2)] + s.dy[(i, 3)]).abs() < 1e-7 * (1.0 + s.dy[(i, 2)].abs()),
            "t = {ti}"
        );
    }
}

/// The same identity for the rigid model (no stiffness): `t·v = v0·∂y/∂v0 + 2·∂y/∂ln g`, and
/// mass does not enter at all.
#[test]
fn exact_columns_obey_the_time_scaling_identity() {
    let drop = Drop {
        velocity: 0.5,
        t_final: 1.5,
        ..Drop::default()
    };
    let t = times(0.05, 1.5);
    let layout = Layout {
        params: vec![Param::Velocity, Param::Gravity, Param::Mass],
        base: Model {
            drop,
            k: 1e6,
            restitution: Some(0.7),
        },
    };
    let z = layout.coordinates(&layout.base);
    let s = sensitivity(&setup(Route::Exact), &layout, &z, &t).unwrap();
    for (i, &ti) in t.iter().enumerate() {
        let lhs = ti * s.prediction.v[i];
        let rhs = 0.5 * s.dy[(i, 0)] + 2.0 * s.dy[(i, 1)];
        assert!(
            (lhs - rhs).abs() < 1e-7 * (1.0 + lhs.abs()),
            "t = {ti}: {lhs} vs {rhs}"
        );
        assert_eq!(s.dy[(i, 2)], 0.0);
    }
}

/// The fixed route's parameter tangent is the derivative of its own discrete map inside one
/// smooth piece: central differences with a probe small enough to keep every contact step
/// where it is (the event counts equal on both sides) agree with it in every direction.
#[test]
fn fixed_tangent_matches_central_differences_of_its_own_map_inside_a_piece() {
    let drop = Drop {
        velocity: 0.3,
        zeta: 0.2,
        t_final: 0.8,
        ..Drop::default()
    };
    let t = times(0.02, 0.8);
    let params = vec![
        Param::Height,
        Param::Velocity,
        Param::Zeta,
        Param::K,
        Param::Gravity,
        Param::Mass,
    ];
    let layout = Layout {
        params: params.clone(),
        base: Model {
            drop,
            k: 1e4,
            restitution: None,
        },
    };
    let z = layout.coordinates(&layout.base);
    let su = setup(Route::Fixed);
    let s = sensitivity(&su, &layout, &z, &t).unwrap();
    let h = 1e-8;
    for (j, p) in params.iter().enumerate() {
        let mut zp = z.clone();
        zp[j] += h;
        let mut zm = z.clone();
        zm[j] -= h;
        let (a, b) = (
            sensitivity(&su, &layout, &zp, &t).unwrap(),
            sensitivity(&su, &layout, &zm, &t).unwrap(),
        );
        assert_eq!(
            a.prediction.events, b.prediction.events,
            "{p:?}: the probe crossed a step"
        );
        for (i, ti) in t.iter().enumerate() {
            for (fd, claim) in [
                (
                    (a.prediction.y[i] - b.prediction.y[i]) / (2.0 * h),
                    s.dy[(i, j)],
                ),
                (
                    (a.prediction.v[i] - b.prediction.v[i]) / (2.0 * h),
                    s.dv[(i, j)],
                ),
            ] {
                assert!(
                    (fd - claim).abs() < 1e-5 * (1.0 + claim.abs()),
                    "{p:?} at t = {ti}: tangent {claim}, differences {fd}"
                );
            }
        }
    }
}

/// Heights in free flight are linear in the initial velocity, y = y0 + v0·t − g·t²/2: the
/// profile-likelihood interval of v0 is then the Wald interval, v̂0 ± 1.96·σ/sqrt(Σ t_i²), and
/// both are found (profile bounds by root bracketing on Φ, Wald from SᵀS).
#[test]
fn profile_interval_of_a_parameter_the_model_is_linear_in_is_the_closed_form() {
    let truth = Drop::default();
    let t = times(0.02, 0.44); // the first impact is at 0.4515 s
    let t_all: Vec<f64> = t.iter().copied().chain([0.8]).collect();
    let p = predictions(&truth, &t_all, &opts(Route::Flow, &["zeta"], 1e6)).unwrap();
    let sigma = 1e-3;
    let mut y = p.y.clone();
    for (i, yi) in y.iter_mut().enumerate() {
        *yi += sigma * libm::sin(1.7 * i as f64); // deterministic "noise"
    }
    let mut mask = vec![true; t_all.len()];
    *mask.last_mut().unwrap() = false;
    let obs = Observations {
        t: t_all,
        y: Some(y.clone()),
        sigma_y: Some(sigma),
        mask_y: Some(mask),
        ..Observations::default()
    };
    let guess = Drop {
        velocity: 0.3,
        ..Drop::default()
    };
    let r = fit(&guess, &obs, &opts(Route::Flow, &["velocity"], 1e6), None).unwrap();
    assert_eq!(r.status, Status::Converged);
    // Least squares in closed form: v̂0 = Σ t_i (y_i − y0 + g t_i²/2) / Σ t_i².
    let stt: f64 = t.iter().map(|ti| ti * ti).sum();
    let v_hat: f64 = t
        .iter()
        .zip(&y)
        .map(|(ti, yi)| ti * (yi - truth.height + 0.5 * truth.gravity * ti * ti))
        .sum::<f64>()
        / stt;
    let half = 1.959_963_984_540_054 * sigma / stt.sqrt();
    let e = &r.params[0];
    assert!(
        (e.estimate - v_hat).abs() < 1e-9,
        "{} vs {v_hat}",
        e.estimate
    );
    assert_eq!(
        e.interval_method,
        ("profile".to_string(), "profile".to_string())
    );
    for (got, want) in [
        (e.interval.0, v_hat - half),
        (e.interval.1, v_hat + half),
        (e.wald_interval.0, v_hat - half),
        (e.wald_interval.1, v_hat + half),
    ] {
        assert!((got - want).abs() < 1e-6 * half, "{got} vs {want}");
    }
    assert!(r.receipt.intervals.notes.is_empty());
    assert!(r.receipt.intervals.evaluations > 0);
    // The same closed form with σ's scale from the residuals: half-width t·s·σ/sqrt(Σ t_i²),
    // s² = Σ(y_i − ŷ_i)²/σ²/ν, t Student's 97.5% quantile with ν = n − 1 degrees of freedom
    // (tabulated 2.0796 at ν = 21; here from the closed forms' own residuals). The default
    // takes the wider of the two.
    let nu = t.len() as f64 - 1.0;
    let chi2: f64 = t
        .iter()
        .zip(&y)
        .map(|(ti, yi)| {
            let fit = truth.height + v_hat * ti - 0.5 * truth.gravity * ti * ti;
            ((yi - fit) / sigma).powi(2)
        })
        .sum();
    let tq = student_t_quantile(0.975, nu).unwrap();
    assert_eq!(t.len(), 22);
    assert!((tq - 2.0796).abs() < 1e-4, "{tq}");
    let residual_half = tq * (chi2 / nu).sqrt() * sigma / stt.sqrt();
    for (scale, want) in [
        (SigmaScale::Residual, residual_half),
        (SigmaScale::Either, residual_half.max(half)),
        (SigmaScale::Stated, half),
    ] {
        let mut o = opts(Route::Flow, &["velocity"], 1e6);
        o.sigma_scale = scale;
        let r = fit(&guess, &obs, &o, None).unwrap();
        let e = &r.params[0];
        for (got, want) in [
            (e.interval.0, v_hat - want),
            (e.interval.1, v_hat + want),
            (e.wald_interval.0, v_hat - want),
            (e.wald_interval.1, v_hat + want),
        ] {
            assert!(
                (got - want).abs() < 1e-6 * half,
                "{scale:?}: {got} vs {want}"
            );
        }
        assert_eq!(r.receipt.intervals.sigma_scale, scale);
    }
}

/// With σ a hundred times smaller than the noise, the residual scale (s ≈ 100) takes over the
/// default intervals, which widen with it, while the stated rule's stay 1.96σ-wide.
#[test]
fn understated_noise_widens_the_default_intervals_by_the_residual_scale() {
    let truth = Drop::default();
    let t = times(0.02, 0.44);
    let t_all: Vec<f64> = t.iter().copied().chain([0.8]).collect();
    let p = predictions(&truth, &t_all, &opts(Route::Flow, &["zeta"], 1e6)).unwrap();
    let mut y = p.y.clone();
    for (i, yi) in y.iter_mut().enumerate() {
        *yi += 1e-3 * libm::sin(1.7 * i as f64);
    }
    let mut mask = vec![true; t_all.len()];
    *mask.last_mut().unwrap() = false;
    let obs = Observations {
        t: t_all,
        y: Some(y),
        sigma_y: Some(1e-5),
        mask_y: Some(mask),
        ..Observations::default()
    };
    let mut widths = Vec::new();
    for scale in [SigmaScale::Stated, SigmaScale::Either] {
        let mut o = opts(Route::Flow, &["velocity"], 1e6);
        o.sigma_scale = scale;
        let r = fit(&truth, &obs, &o, None).unwrap();
        let i = &r.receipt.intervals;
        assert!(i.residual_scale > 50.0, "{}", i.residual_scale);
        widths.push(r.params[0].interval.1 - r.params[0].interval.0);
        if scale == SigmaScale::Either {
            let want = i.residual_scale * i.t_quantile / 1.959_963_984_540_054;
            assert!(
                (widths[1] / widths[0] / want - 1.0).abs() < 1e-6,
                "{widths:?} {want}"
            );
            assert!(!r.consistent);
        }
    }
}

/// A start half a metre low sees the bounce 0.1 s early, where no sample is in contact and
/// the column of ln k is nearly zero: an unbounded Gauss–Newton step leaps there (it once
/// took k from 6.6e3 to 3e78 N/m in three steps and stalled, its Jacobian zero). Each step
/// of a log parameter is bounded by `max_step` (a factor e), the damping growing until it
/// fits, and the fit walks to the truth.
#[test]
fn a_far_start_walks_to_the_truth_in_bounded_steps() {
    let truth = Drop {
        zeta: 0.2,
        ..Drop::default()
    };
    let k = 1e4;
    let t = times(0.05, 0.8);
    let p = predictions(&truth, &t, &opts(Route::Flow, &["zeta"], k)).unwrap();
    let obs = Observations {
        t,
        y: Some(p.y),
        sigma_y: Some(1e-3),
        ..Observations::default()
    };
    let guess = Drop {
        zeta: 0.28,
        height: 0.62,
        ..Drop::default()
    };
    let o = opts(Route::Flow, &["zeta", "k", "height"], 6.6e3);
    let r = fit(&guess, &obs, &o, None).unwrap();
    assert_eq!(r.status, Status::Converged, "{:?}", r.iterations.last());
    let est: Vec<f64> = r.params.iter().map(|e| e.estimate).collect();
    for (got, want) in est.iter().zip([0.2, k, 1.0]) {
        assert!((got / want - 1.0).abs() < 1e-6, "{est:?}");
    }
    for w in r.iterations.windows(2) {
        for j in 0..3 {
            let step = libm::log(w[1].theta[j] / w[0].theta[j]).abs();
            assert!(step <= o.max_step * (1.0 + 1e-12), "{j}: {step}");
        }
    }
}

/// A sample time off the fixed route's grid is refused naming the sample as given (six
/// figures), not a t_final the user never set; a name that is not a parameter prints no NaN.
#[test]
fn refusals_name_the_sample_and_the_parameter_in_the_users_words() {
    let t0 = 0.05 + 3e-5; // 0.050030000000000005 in binary floating point
    assert_eq!(format!("{t0}"), "0.050030000000000005");
    let obs = Observations {
        t: vec![t0, 0.5, 0.8],
        y: Some(vec![0.99, 0.1, 0.3]),
        sigma_y: Some(1e-3),
        ..Observations::default()
    };
    let mut o = opts(Route::Fixed, &["zeta"], 1e6);
    o.dt = 1e-4;
    let e = fit(&Drop::default(), &obs, &o, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`t`") && e.contains("0.05003 s") && !e.contains("t_final"),
        "{e}"
    );
    let e = fit(
        &Drop::default(),
        &obs,
        &opts(Route::Flow, &["damping"], 1e6),
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("`params`") && e.contains("damping") && !e.contains("NaN"),
        "{e}"
    );
    // A log parameter's start at 0 is named, not the checker's `x` = -inf.
    let e = fit(
        &Drop {
            zeta: 0.0,
            ..Drop::default()
        },
        &obs,
        &opts(Route::Flow, &["zeta"], 1e6),
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("`zeta`") && !e.contains("`x`"), "{e}");
}
