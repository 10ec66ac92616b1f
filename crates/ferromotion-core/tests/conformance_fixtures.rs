//! The conformance fixtures' exact answers, each against an independent route, and the
//! verdict and refusals of `conformance`.

mod common;

use common::rel_err_dyn;
use ferromotion_core::experiments::conformance::*;
use ferromotion_core::experiments::hybrid::{hybrid_jacobian, HybridOptions, SlopeBall};
use ferromotion_core::*;
use nalgebra::{DMatrix, DVector};

fn ball() -> SlopeBall {
    SlopeBall {
        gravity: 9.81,
        restitution: limit_restitution(0.1606).unwrap(),
        angle: SLOPE_ANGLE,
    }
}

#[test]
fn slope_jacobian_equals_central_differences_of_the_closed_form_map() {
    let (x, j, impacts) = slope_exact(&ball(), &SLOPE_X0, 0.8).unwrap();
    assert_eq!(impacts.len(), 1, "{impacts:?}");
    let eps = 1e-6;
    let mut fd = DMatrix::zeros(4, 4);
    for c in 0..4 {
        let (mut p, mut m) = (SLOPE_X0, SLOPE_X0);
        p[c] += eps;
        m[c] -= eps;
        let (xp, _, ip) = slope_exact(&ball(), &p, 0.8).unwrap();
        let (xm, _, im) = slope_exact(&ball(), &m, 0.8).unwrap();
        assert_eq!(
            (ip.len(), im.len()),
            (1, 1),
            "a probe changed the impact count"
        );
        fd.set_column(c, &((xp - xm) / (2.0 * eps)));
    }
    assert!(rel_err_dyn(&j, &fd) < 1e-7, "{j} vs {fd}");
    // The reflection off the tilted plane couples x and z: dv_x(T)/dp_z0 is of order one, and
    // the key entry dv_z(T)/dp_z0 is positive (the drop's dv(T)/dy0 is too).
    assert!(j[(2, 1)].abs() > 0.5 && j[(3, 1)] > 0.0, "{j}");
    assert!(x.iter().all(|v| v.is_finite()));
}

#[test]
fn slope_exact_equals_the_located_rk4_route_of_hybrid_jacobian() {
    let x0 = DVector::from_row_slice(&SLOPE_X0);
    let opts = HybridOptions {
        probe_rtol: 0.0,
        ..Default::default()
    };
    let sol = hybrid_jacobian(&ball(), &x0, 0, 0.0, 0.8, &opts).unwrap();
    let (x, j, impacts) = slope_exact(&ball(), &SLOPE_X0, 0.8).unwrap();
    assert!(
        rel_err_dyn(&sol.jacobian, &j) < 1e-9,
        "{} vs {j}",
        sol.jacobian
    );
    assert!((&sol.x - &x).amax() < 1e-9);
    assert_eq!(sol.events.len(), impacts.len());
}

#[test]
fn a_level_slope_is_the_drop() {
    let flat = SlopeBall {
        angle: 0.0,
        ..ball()
    };
    let (x, j, _) = slope_exact(&flat, &[0.3, 1.0, 0.0, 0.0], 0.8).unwrap();
    let truth = exact(&Drop::default(), &ExactOptions::default()).unwrap();
    assert!((x[1] - truth.state[0]).abs() < 1e-12 && (x[3] - truth.state[1]).abs() < 1e-12);
    for (r, c) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        assert!((j[(1 + 2 * r, 1 + 2 * c)] - truth.jacobian[(r, c)]).abs() < 1e-10);
    }
}

#[test]
fn the_exact_answer_conforms_and_the_fixed_step_gradient_is_wrong() {
    let fx = fixtures().unwrap();
    assert_eq!(fx.len(), 2);
    for f in &fx {
        let c = conformance(f, &f.exact.state, &f.exact.jacobian).unwrap();
        assert_eq!(c.verdict, "conforms", "{}", f.name);
        assert_eq!(c.gradient_error, 0.0);
    }
    let drop = Drop::default();
    let r = fixed(&drop, 1e6, 1e-4, &FixedOptions::default()).unwrap();
    let jac = vec![
        vec![r.jacobian[(0, 0)], r.jacobian[(0, 1)]],
        vec![r.jacobian[(1, 0)], r.jacobian[(1, 1)]],
    ];
    let c = conformance(&fx[0], &[r.state[0], r.state[1]], &jac).unwrap();
    assert_eq!(c.verdict, "wrong");
    let truth = exact(&drop, &ExactOptions::default()).unwrap();
    assert_eq!(c.key_exact, truth.jacobian[(1, 0)]);
}

#[test]
fn a_bad_fixture_document_is_refused_naming_the_field() {
    let f = &fixtures().unwrap()[1];
    let mut doc = serde_json::to_value(f).unwrap();
    assert!(Fixture::from_json(&doc.to_string()).is_ok());
    doc["exact"]["jacobian"][2] = serde_json::json!([1.0, 2.0]);
    let e = Fixture::from_json(&doc.to_string())
        .unwrap_err()
        .to_string();
    assert!(e.contains("exact.jacobian[2]"), "{e}");
    doc["exact"].as_object_mut().unwrap().remove("jacobian");
    let e = Fixture::from_json(&doc.to_string())
        .unwrap_err()
        .to_string();
    assert!(e.contains("jacobian"), "{e}");
    let mut doc = serde_json::to_value(f).unwrap();
    doc["schema"] = "ferromotion.fixture/2".into();
    let e = Fixture::from_json(&doc.to_string())
        .unwrap_err()
        .to_string();
    assert!(e.contains("schema"), "{e}");
    let e = conformance(f, &[0.0; 3], &f.exact.jacobian)
        .unwrap_err()
        .to_string();
    assert!(e.contains("state"), "{e}");
}
