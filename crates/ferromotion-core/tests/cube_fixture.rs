//! The tumbling cube as a conformance fixture: written, read back identical, judged; its
//! system refused naming the field; its J the central differences of the exact map (x(T) of
//! perturbed starts, orientations perturbed in tangent coordinates at both ends).

use ferromotion_core::conformance::{
    conformance, cube_fixture, fixtures, Fixture, Outcome, CUBE_T_FINAL, CUBE_X0, SCHEMA_V2,
};
use ferromotion_core::error::FerroError;
use ferromotion_core::numeric::so3;
use ferromotion_core::systems::tumbling_cube::{tumbling_cube, TumblingCube};
use nalgebra::Vector3;

#[test]
fn the_cube_fixture_round_trips_and_its_exact_answer_conforms() {
    let all = fixtures().unwrap();
    let f = all.iter().find(|f| f.name == "tumbling_cube").unwrap();
    assert_eq!(f.schema, SCHEMA_V2);
    assert_eq!(f.exact.outcome, Some(Outcome::Differentiable));
    assert_eq!(f.exact.impacts.len(), 2);
    let text = serde_json::to_string(f).unwrap();
    assert_eq!(&Fixture::from_json(&text).unwrap(), f);
    let c = conformance(f, &f.exact.state, &f.exact.jacobian).unwrap();
    assert_eq!(c.verdict, "conforms");
}

#[test]
fn the_cube_fixtures_jacobian_is_the_central_difference_of_its_exact_map() {
    let cube = TumblingCube::default();
    let f = cube_fixture(&cube, &CUBE_X0, CUBE_T_FINAL).unwrap();
    let end = |x: &[f64; 12]| tumbling_cube(&cube, x, CUBE_T_FINAL).unwrap().state;
    let r_star = so3::exp(&Vector3::new(
        f.exact.state[3],
        f.exact.state[4],
        f.exact.state[5],
    ));
    let h = 1e-6;
    let mut worst: f64 = 0.0;
    for j in 0..12 {
        let probe = |s: f64| {
            let mut x = CUBE_X0;
            if (3..6).contains(&j) {
                // Exp(s e_j) R0, written back as a rotation vector.
                let mut e = Vector3::zeros();
                e[j - 3] = s;
                let r0 = so3::exp(&Vector3::new(x[3], x[4], x[5]));
                let th = so3::log(&(so3::exp(&e) * r0));
                x[3..6].copy_from_slice(th.as_slice());
            } else {
                x[j] += s;
            }
            let y = end(&x);
            // Orientation rows: log(R(T) R*(T)^T), the world-frame tangent at T.
            let d = so3::log(&(so3::exp(&Vector3::new(y[3], y[4], y[5])) * r_star.transpose()));
            let mut out = y;
            out[3..6].copy_from_slice(d.as_slice());
            out
        };
        let (up, dn) = (probe(h), probe(-h));
        for i in 0..12 {
            let fd = (up[i] - dn[i]) / (2.0 * h);
            worst = worst.max((fd - f.exact.jacobian[i][j]).abs());
        }
    }
    // Entries reach ~70: central differences at h = 1e-6 carry ~1e-6 of round-off.
    assert!(worst < 1e-4, "max |J - FD| = {worst:e}");
}

#[test]
fn a_cube_fixture_with_a_bad_system_is_refused_naming_the_field() {
    let f = cube_fixture(&TumblingCube::default(), &CUBE_X0, CUBE_T_FINAL).unwrap();
    let field_of = |v: serde_json::Value| match Fixture::from_json(&v.to_string()) {
        Err(FerroError::Fixture { field, .. }) => field,
        other => panic!("{other:?}"),
    };
    let mut v = serde_json::to_value(&f).unwrap();
    v["system"]["parameters"]["mass"] = serde_json::json!([-1.0]);
    assert_eq!(field_of(v).as_deref(), Some("system.parameters.mass"));
    let mut v = serde_json::to_value(&f).unwrap();
    v["system"]["parameters"]["spin"] = serde_json::json!([1.0]);
    assert_eq!(field_of(v).as_deref(), Some("system.parameters.spin"));
    let mut v = serde_json::to_value(&f).unwrap();
    v["initial_state"] = serde_json::json!([0.0, 1.0]);
    assert!(field_of(v).is_some());
}
