//! Every entry point refuses bad input with a typed error naming the parameter: never a
//! panic, never a silent NaN.

use ferromotion_core::*;

fn all_routes(drop: &Drop, k: f64, dt: f64) -> Vec<Result<RouteResult>> {
    vec![
        exact(drop, &ExactOptions::default()),
        fixed(drop, k, dt, &FixedOptions::default()),
        flow(drop, k, &FlowOptions::default()),
        tolerance(
            drop,
            k,
            &ToleranceOptions {
                rtol: 1e-4,
                ..Default::default()
            },
        ),
    ]
}

fn param_name(e: &FerroError) -> &'static str {
    match e {
        FerroError::InvalidParameter { name, .. } => name,
        _ => "",
    }
}

#[test]
fn non_finite_and_out_of_range_drop_parameters() {
    let d = Drop::default();
    let bad = [
        (
            "height",
            Drop {
                height: f64::NAN,
                ..d
            },
        ),
        ("height", Drop { height: -1.0, ..d }),
        (
            "velocity",
            Drop {
                velocity: f64::INFINITY,
                ..d
            },
        ),
        ("t_final", Drop { t_final: 0.0, ..d }),
        (
            "gravity",
            Drop {
                gravity: -9.81,
                ..d
            },
        ),
        ("mass", Drop { mass: 0.0, ..d }),
        ("zeta", Drop { zeta: 1.0, ..d }),
        ("zeta", Drop { zeta: -0.1, ..d }),
        (
            "zeta",
            Drop {
                zeta: f64::NAN,
                ..d
            },
        ),
    ];
    for (name, drop) in bad {
        for r in all_routes(&drop, 1e6, 1e-4) {
            let e = r.unwrap_err();
            assert_eq!(param_name(&e), name, "{e}");
            assert!(e.to_string().contains(name), "{e}");
        }
    }
}

#[test]
fn bad_stiffness_and_step() {
    let d = Drop::default();
    for k in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        for r in all_routes(&d, k, 1e-4).into_iter().skip(1) {
            assert_eq!(param_name(&r.unwrap_err()), "k");
        }
    }
    for dt in [0.0, -1e-4, f64::NAN] {
        assert_eq!(
            param_name(&fixed(&d, 1e6, dt, &FixedOptions::default()).unwrap_err()),
            "dt"
        );
    }
    let e = tolerance(
        &d,
        1e6,
        &ToleranceOptions {
            rtol: -1.0,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(param_name(&e), "rtol");
}

#[test]
fn no_impact_before_the_final_time() {
    let d = Drop {
        t_final: 0.3,
        ..Drop::default()
    };
    for r in all_routes(&d, 1e6, 1e-4) {
        assert!(matches!(r, Err(FerroError::NoImpact { .. })));
    }
}

#[test]
fn an_unstable_explicit_step_is_an_error_not_a_nan() {
    // omega·dt = 100 at k = 1e12, dt = 1e-4: semi-implicit Euler blows up.
    let r = fixed(&Drop::default(), 1e12, 1e-4, &FixedOptions::default());
    match r {
        Err(FerroError::NonFinite { .. }) => {}
        Ok(r) => assert!(r
            .state
            .iter()
            .chain(r.jacobian.iter())
            .all(|v| v.is_finite())),
        Err(e) => panic!("unexpected {e}"),
    }
}

#[test]
fn extreme_but_valid_inputs_give_finite_answers_or_typed_errors() {
    let d = Drop::default();
    for k in [1e-6, 1.0, 1e2, 1e8, 1e10] {
        for r in all_routes(&d, k, 1e-4) {
            match r {
                Ok(r) => assert!(
                    r.state
                        .iter()
                        .chain(r.jacobian.iter())
                        .all(|v| v.is_finite()),
                    "k = {k:e}"
                ),
                Err(e) => assert!(!e.to_string().is_empty()),
            }
        }
    }
}

#[test]
fn elastic_bounces_over_a_long_time_hit_the_impact_cap_instead_of_looping() {
    // zeta = 0 gives e = 1: the bounces never slow down and never graze.
    let d = Drop {
        zeta: 0.0,
        t_final: 1e12,
        ..Drop::default()
    };
    assert!(matches!(
        exact(&d, &ExactOptions::default()),
        Err(FerroError::TooManySteps { .. })
    ));
}
