//! The conformance fixtures' exact answers, each against an independent route, and the
//! verdict and refusals of `conformance`.

mod common;

use common::rel_err_dyn;
use ferromotion_core::conformance::*;
use ferromotion_core::hybrid::{hybrid_jacobian, HybridOptions};
use ferromotion_core::systems::{slope_exact, SlopeBall};
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
    let all = fixtures().unwrap();
    // The v1 fixtures (drop, slope); the v2 ones are held in the tests below.
    let fx: Vec<_> = all.into_iter().filter(|f| f.schema == SCHEMA).collect();
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

/// The shipped slope fixture edited by `edit`: (the edit, the field at fault or None for the
/// document as a whole, a word of the reason).
type Edit = fn(&mut serde_json::Value);

fn bad_documents() -> Vec<(&'static str, Edit, Option<&'static str>, &'static str)> {
    use serde_json::json;
    vec![
        (
            "a missing field",
            |d| {
                d["exact"].as_object_mut().unwrap().remove("jacobian");
            },
            Some("exact.jacobian"),
            "missing",
        ),
        (
            "a missing top-level field",
            |d| {
                d.as_object_mut().unwrap().remove("t_final");
            },
            Some("t_final"),
            "missing",
        ),
        (
            "a wrong type",
            |d| d["exact"]["jacobian"][1][2] = json!("0.5"),
            Some("exact.jacobian[1][2]"),
            "invalid type",
        ),
        (
            "a negative index",
            |d| d["key_entry"][1] = json!(-1),
            Some("key_entry[1]"),
            "invalid value",
        ),
        (
            "an unknown field",
            |d| d["parameters"]["friction"] = json!(0.3),
            Some("parameters.friction"),
            "unknown field",
        ),
        (
            "an out-of-range number",
            |d| d["parameters"]["zeta"] = json!(1.5),
            Some("parameters.zeta"),
            "in [0, 1)",
        ),
        (
            "a non-positive horizon",
            |d| d["t_final"] = json!(0.0),
            Some("t_final"),
            "> 0",
        ),
        (
            "a later schema version",
            |d| d["schema"] = json!("ferromotion.fixture/3"),
            Some("schema"),
            "later version",
        ),
        (
            "another schema",
            |d| d["schema"] = json!("something/1"),
            Some("schema"),
            "expected",
        ),
        (
            "a short row of J",
            |d| d["exact"]["jacobian"][2] = json!([1.0, 2.0]),
            Some("exact.jacobian[2]"),
            "2 entries",
        ),
        (
            "J with a missing row",
            |d| {
                d["exact"]["jacobian"].as_array_mut().unwrap().pop();
            },
            Some("exact.jacobian"),
            "3 entries",
        ),
        (
            "x(T) of another length",
            |d| {
                d["exact"]["state"].as_array_mut().unwrap().pop();
            },
            Some("exact.state"),
            "3 entries",
        ),
        (
            "a key entry outside J",
            |d| d["key_entry"] = json!([4, 0]),
            Some("key_entry"),
            "outside",
        ),
        (
            "an impact after T",
            |d| d["exact"]["impacts"][0] = json!(9.0),
            Some("exact.impacts[0]"),
            "t_final",
        ),
        (
            "a missing verdict",
            |d| {
                d["verdicts"].as_object_mut().unwrap().remove("wrong");
            },
            Some("verdicts.wrong"),
            "missing",
        ),
        (
            "a non-positive suggested dt",
            |d| d["suggested"]["dt"] = json!([-1e-4]),
            Some("suggested.dt[0]"),
            "> 0",
        ),
        (
            "not an object",
            |d| *d = json!([1, 2]),
            None,
            "not a JSON object",
        ),
        (
            "too deep",
            |d| {
                let mut v = json!(0);
                for _ in 0..40 {
                    v = json!([v]);
                }
                d["suggested"]["dt"] = v;
            },
            None,
            "nested deeper than 8",
        ),
    ]
}

#[test]
fn a_bad_fixture_document_is_refused_naming_its_source_and_the_field() {
    let good = serde_json::to_value(&fixtures().unwrap()[1]).unwrap();
    assert!(Fixture::from_json(&good.to_string()).is_ok());
    let dir = std::env::temp_dir().join(format!("ferromotion-bad-fixtures-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (what, edit, field, word) in bad_documents() {
        let mut doc = good.clone();
        edit(&mut doc);
        let text = doc.to_string();
        let file = dir.join("bad.json");
        std::fs::write(&file, &text).unwrap();
        let shown = file.display().to_string();
        for (source, got) in [
            (DOCUMENT.to_string(), Fixture::from_json(&text)),
            (shown.clone(), Fixture::read(&file)),
        ] {
            let e = got.expect_err(what);
            let FerroError::Fixture {
                path,
                field: f,
                reason,
            } = &e
            else {
                panic!("{what}: not a fixture error: {e}");
            };
            assert_eq!(path, &source, "{what}");
            assert_eq!(f.as_deref(), field, "{what}: {e}");
            assert!(reason.contains(word), "{what}: {e}");
            let message = e.to_string();
            assert!(
                message.starts_with(&format!("{source}: ")),
                "{what}: {message}"
            );
            if let Some(field) = field {
                assert!(
                    message.contains(&format!("field '{field}': ")),
                    "{what}: {message}"
                );
            }
        }
    }
    // A number f64 cannot hold is named by its field.
    let text = good
        .to_string()
        .replace("\"t_final\":0.8", "\"t_final\":1e999");
    let e = Fixture::from_json(&text).unwrap_err().to_string();
    assert!(
        e.starts_with("fixture document: field 't_final': number out of range"),
        "{e}"
    );
    // NaN and Infinity, as Python's json.dumps writes them: not JSON, and named by their field.
    for word in ["NaN", "-Infinity"] {
        let text = good.to_string().replace(
            "\"initial_state\":[0.0,1.0",
            &format!("\"initial_state\":[0.0,{word}"),
        );
        let e = Fixture::from_json(&text).unwrap_err().to_string();
        assert!(
            e.starts_with("fixture document: field 'initial_state[1]': not a finite number"),
            "{e}"
        );
    }
    // The whole file at fault: not JSON, not UTF-8, too large (refused before it is read), absent.
    let file = dir.join("bad.json");
    let shown = file.display().to_string();
    for (bytes, word) in [
        (b"{not json".to_vec(), "not JSON"),
        (vec![0xff, 0xfe, b'{'], "not UTF-8"),
        (vec![b' '; MAX_BYTES + 1], "more than the"),
    ] {
        std::fs::write(&file, bytes).unwrap();
        let e = Fixture::read(&file).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{shown}: ")) && e.contains(word),
            "{e}"
        );
    }
    std::fs::remove_file(&file).unwrap();
    // A missing file is most often a shipped fixture's name mistyped: the names are listed.
    let e = Fixture::read(&file).unwrap_err().to_string();
    let names: Vec<String> = fixtures().unwrap().into_iter().map(|f| f.name).collect();
    assert!(
        e.starts_with(&format!("{shown}: no such file")) && e.contains(&names.join(", ")),
        "{e}"
    );
    std::fs::remove_dir(&dir).unwrap();
}

#[test]
fn an_engine_answer_of_the_wrong_shape_is_refused_naming_it() {
    let f = &fixtures().unwrap()[1];
    let e = conformance(f, &[0.0; 3], &f.exact.jacobian).unwrap_err();
    assert!(
        matches!(e, FerroError::InvalidParameter { name: "state", .. }),
        "{e}"
    );
    let e = conformance(f, &f.exact.state, &f.exact.jacobian[..3]).unwrap_err();
    assert!(
        matches!(
            e,
            FerroError::InvalidParameter {
                name: "gradient",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn the_v2_fixtures_round_trip_and_say_what_kind_of_derivative_they_have() {
    let all = fixtures().unwrap();
    let by = |n: &str| all.iter().find(|f| f.name == n).unwrap();
    for f in &all {
        let text = serde_json::to_string(f).unwrap();
        assert_eq!(&Fixture::from_json(&text).unwrap(), f, "{}", f.name);
    }
    // The drop and the slope stay v1, written as before.
    assert_eq!(by("drop").schema, SCHEMA);
    assert_eq!(by("slope").schema, SCHEMA);
    let g90 = by("v_groove_90");
    assert_eq!(g90.schema, SCHEMA_V2);
    assert_eq!(g90.exact.outcome, Some(Outcome::Differentiable));
    assert_eq!(g90.exact.pieces.len(), 2, "the two orders, agreeing");
    let g100 = by("v_groove_100");
    assert_eq!(g100.exact.outcome, Some(Outcome::SetValued));
    assert!(g100.exact.state.is_empty() && g100.exact.outcomes.len() == 2);
    let sw = by("switched_field");
    assert_eq!(sw.exact.outcome, Some(Outcome::NotDifferentiable));
    assert!(sw.exact.jacobian.is_empty() && sw.exact.pieces.len() == 2);
    // No Jacobian to judge against: the verdict names the piece a J is nearest, or says it
    // averages them; the error and the sign are the named one's.
    for (i, p) in sw.exact.pieces.iter().enumerate() {
        let c = conformance(sw, &sw.exact.state, &p.jacobian).unwrap();
        assert_eq!(c.verdict, "not_differentiable");
        let near = c.pieces.unwrap();
        assert_eq!(near.nearest, Some(i), "{}", near.says);
        assert_eq!((c.gradient_error, c.key_exact), (0.0, p.jacobian[0][0]));
    }
    let (a, b) = (&sw.exact.pieces[0].jacobian, &sw.exact.pieces[1].jacobian);
    let avg: Vec<Vec<f64>> = a
        .iter()
        .zip(b)
        .map(|(r, s)| r.iter().zip(s).map(|(x, y)| 0.5 * (x + y)).collect())
        .collect();
    let c = conformance(sw, &sw.exact.state, &avg).unwrap();
    assert_eq!(c.pieces.as_ref().unwrap().nearest, None);
    assert!(c.pieces.unwrap().says.contains("average"));
    assert_eq!(c.gradient_error, 0.0);
    // Set-valued: the outcome x(T) is nearest is named; no sign, no gradient error.
    let j = vec![vec![0.0; 4]; 4];
    for (i, o) in g100.exact.outcomes.iter().enumerate() {
        let c = conformance(g100, &o.state, &j).unwrap();
        assert_eq!((c.verdict.as_str(), c.sign), ("set_valued", None));
        assert!(c.gradient_error.is_nan() && c.state_error == 0.0);
        assert_eq!(c.outcomes.unwrap().nearest, Some(i));
    }
    let c = by("cylinder");
    assert_eq!(
        conformance(c, &c.exact.state, &c.exact.jacobian)
            .unwrap()
            .verdict,
        "conforms"
    );
}

#[test]
fn a_v2_fixture_with_a_bad_system_is_refused_naming_the_field() {
    let all = fixtures().unwrap();
    let g = all.iter().find(|f| f.name == "cylinder").unwrap();
    let mut v: serde_json::Value = serde_json::to_value(g).unwrap();
    v["system"]["parameters"]["radius"] = serde_json::json!([-0.5]);
    match Fixture::from_json(&v.to_string()) {
        Err(FerroError::Fixture { field, reason, .. }) => {
            assert_eq!(
                field.as_deref(),
                Some("system.parameters.radius"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
    let mut v: serde_json::Value = serde_json::to_value(g).unwrap();
    v["schema"] = serde_json::json!(SCHEMA);
    assert!(matches!(
        Fixture::from_json(&v.to_string()),
        Err(FerroError::Fixture { field: Some(f), .. }) if f == "parameters"
    ));
    let mut v: serde_json::Value = serde_json::to_value(g).unwrap();
    v["schema"] = serde_json::json!("ferromotion.fixture/3");
    assert!(
        matches!(Fixture::from_json(&v.to_string()), Err(FerroError::Fixture { reason, .. }) if reason.contains("later version"))
    );
}
