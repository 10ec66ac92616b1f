//! The sweep is one call: `sweep_curve` validates the drop, its options and every k before any
//! row runs (typed errors naming the field), reports its progress to an observer on the
//! calling thread, stops when the observer says so, and returns the rows with the options
//! they ran with, the exponent fit (or the refusal to fit it) and the wrong-sign bands.
//! Watching a sweep changes no number: every row equals the unwatched sweep's and the single
//! route's, bit for bit.
use ferromotion_core::lab::readout::log_grid;
use ferromotion_core::lab::sweep::wrong_sign_bands;
use ferromotion_core::*;

fn all_routes() -> SweepOptions {
    SweepOptions {
        tolerance: Some(ToleranceOptions {
            rtol: 1e-6,
            events: true,
            ..ToleranceOptions::default()
        }),
        corrected: true,
        blame: true,
        ..SweepOptions::default()
    }
}

#[test]
fn a_watched_sweep_reports_every_chunk_and_changes_no_number() {
    let drop = Drop::default();
    let ks: Vec<f64> = log_grid(2.0, 8.0, 8).unwrap(); // 49 stiffnesses: several chunks
    let opts = SweepOptions::default();
    let mut seen: Vec<Progress> = Vec::new();
    let mut observe = |p: Progress| {
        seen.push(p);
        Ok(())
    };
    let watch = Watch {
        clock: None,
        progress: Some(&mut observe),
    };
    let watched = sweep_curve(&drop, &ks, &opts, watch).unwrap();
    let plain = sweep(&drop, &ks, &opts).unwrap();
    assert_eq!(watched.sweep, plain);
    // More than one report, each further on, the last at the end.
    assert!(seen.len() > 1, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].done < w[1].done));
    assert!(seen.iter().all(|p| p.total == ks.len()));
    assert_eq!(seen.last().unwrap().done, ks.len());
    // Each row is the fixed route's own answer at that k (a second route to the same numbers).
    for (row, &k) in watched.sweep.rows.iter().zip(&ks) {
        let f = fixed(&drop, k, opts.dt, &FixedOptions::default()).unwrap();
        assert_eq!(row.k, k);
        assert_eq!(
            row.fixed.flat.jacobian[2].to_bits(),
            f.jacobian[(1, 0)].to_bits()
        );
    }
}

#[test]
fn the_result_carries_its_options_and_what_is_read_off_it() {
    let drop = Drop::default();
    let ks = [1e3, 1e4, 1e6];
    let opts = all_routes();
    let curve = sweep_curve(&drop, &ks, &opts, Watch::default()).unwrap();
    assert_eq!(curve.sweep.options, opts);
    assert_eq!(curve.exponent, Some(curve.sweep.exponent().unwrap()));
    assert_eq!(curve.exponent_error, None);
    assert_eq!(curve.wrong_sign, wrong_sign_bands(&curve.sweep.rows));
    // The document names the options inline, as a reader of a sweep's JSON finds them.
    let doc = serde_json::to_value(&curve.sweep).unwrap();
    assert_eq!(doc["dt"], serde_json::json!(opts.dt));
    assert_eq!(
        doc["tolerance"],
        serde_json::to_value(opts.tolerance).unwrap()
    );
    assert_eq!(doc["corrected"], serde_json::json!(true));
    assert_eq!(doc["blame"], serde_json::json!(true));
    // Every asked-for route ran at every k.
    assert!(curve
        .sweep
        .rows
        .iter()
        .all(|r| r.tolerance.is_some() && r.corrected.is_some() && r.blame.is_some()));
}

#[test]
fn an_exponent_that_cannot_be_fitted_is_carried_as_the_cores_refusal() {
    let curve = sweep_curve(
        &Drop::default(),
        &[1e2, 1e3],
        &SweepOptions::default(),
        Watch::default(),
    )
    .unwrap();
    let err = curve.sweep.exponent().unwrap_err();
    assert_eq!(curve.exponent, None);
    let refusal = curve.exponent_error.unwrap();
    assert_eq!(
        (refusal.kind, refusal.message),
        (err.kind(), err.to_string())
    );
}

/// The field a refusal names.
fn named(e: FerroError) -> &'static str {
    match e {
        FerroError::InvalidParameter { name, .. } => name,
        other => panic!("expected InvalidParameter, got {other:?}"),
    }
}

#[test]
fn bad_options_are_refused_before_any_row_naming_the_field() {
    let drop = Drop::default();
    let cases: Vec<(SweepOptions, &[f64], &str)> = vec![
        (
            SweepOptions {
                dt: 0.0,
                ..SweepOptions::default()
            },
            &[1e6],
            "dt",
        ),
        (
            SweepOptions {
                tolerance: Some(ToleranceOptions {
                    rtol: 2.0,
                    ..ToleranceOptions::default()
                }),
                ..SweepOptions::default()
            },
            &[1e6],
            "rtol",
        ),
        (
            SweepOptions {
                tolerance: Some(ToleranceOptions {
                    jacobian: JacobianMethod::Forward,
                    events: false,
                    ..ToleranceOptions::default()
                }),
                ..SweepOptions::default()
            },
            &[1e6],
            "events",
        ),
        (SweepOptions::default(), &[1e6, -1.0], "k"),
    ];
    for (opts, ks, field) in cases {
        // Refused even with no stiffness to run, and before the observer hears anything.
        let mut heard = 0;
        let mut observe = |_: Progress| {
            heard += 1;
            Ok(())
        };
        let watch = Watch {
            clock: None,
            progress: Some(&mut observe),
        };
        assert_eq!(
            named(sweep_curve(&drop, ks, &opts, watch).unwrap_err()),
            field
        );
        assert_eq!(heard, 0, "{field}");
        if field != "k" {
            assert_eq!(named(sweep(&drop, &[], &opts).unwrap_err()), field);
            assert_eq!(named(opts.validate().unwrap_err()), field);
        }
    }
    let bad_drop = Drop {
        zeta: 1.5,
        ..Drop::default()
    };
    assert_eq!(
        named(sweep(&bad_drop, &[], &SweepOptions::default()).unwrap_err()),
        "zeta"
    );
}

#[test]
fn an_observer_that_refuses_stops_the_sweep_without_rows() {
    let ks = log_grid(2.0, 8.0, 8).unwrap();
    let mut calls = 0;
    let mut stop = |_: Progress| {
        calls += 1;
        Err(FerroError::Scenario("stopped by the observer".into()))
    };
    let watch = Watch {
        clock: None,
        progress: Some(&mut stop),
    };
    let err = sweep_curve(&Drop::default(), &ks, &SweepOptions::default(), watch).unwrap_err();
    assert_eq!(err, FerroError::Scenario("stopped by the observer".into()));
    assert_eq!(calls, 1);
}
