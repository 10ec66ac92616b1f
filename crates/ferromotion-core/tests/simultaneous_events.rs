//! Several events at one instant: the V-groove (orders that commute at 90°, a set-valued
//! outcome at 100°), the switched field (two exact pieces, no Jacobian), the cylinder (a
//! normal that turns with the impact point), and the systems' parameter refusals. The RK4
//! route is held against the closed-form route and against hand-derived saltation products;
//! the Python tests hold both against an exact simulation at 50 digits.

use std::collections::BTreeMap;

use ferromotion_core::hybrid::*;
use ferromotion_core::systems::*;
use ferromotion_core::FerroError;
use nalgebra::{DMatrix, DVector};

fn v(x: &[f64]) -> DVector<f64> {
    DVector::from_row_slice(x)
}

fn opts() -> HybridOptions {
    HybridOptions::default()
}

#[test]
fn a_right_angled_groove_commutes_and_gives_one_jacobian() {
    let g = VGroove {
        angle: std::f64::consts::FRAC_PI_2,
        restitution: 0.5,
        gravity: 9.81,
    };
    let x0 = v(&[0.0, 1.0, 0.0, 0.0]);
    let s = hybrid_jacobian(&g, &x0, 0, 0.0, 0.8, &opts()).unwrap();
    assert_eq!(s.pieces.list.len(), 2, "two orders enumerated");
    assert!(s.pieces.agree() && s.pieces.commuted());
    let exact = exact_events(&g, &x0, 0, 0.0, 0.8, &opts()).unwrap();
    let j = s.pieces.jacobian().unwrap();
    assert!((j - exact.pieces.jacobian().unwrap()).amax() < 1e-7);
    // The bounce straight up at e·v (orthogonal walls: the two resets compose to v+ = -e v).
    let t_hit = (2.0f64 / 9.81).sqrt();
    let up = 0.5 * 9.81 * t_hit;
    let tau = 0.8 - t_hit;
    assert!((exact.x[1] - (up * tau - 0.5 * 9.81 * tau * tau)).abs() < 1e-12);
    for d in [v(&[1.0, 0.0, 0.0, 0.0]), v(&[-0.3, 0.2, 1.0, -0.5])] {
        assert!((s.pieces.jvp(&d).unwrap() - j * &d).amax() < 1e-12);
    }
}

#[test]
fn an_obtuse_groove_is_set_valued_with_mirror_outcomes() {
    let g = VGroove {
        angle: 100.0 * (std::f64::consts::PI / 180.0),
        restitution: 0.5,
        gravity: 9.81,
    };
    let x0 = v(&[0.0, 1.0, 0.0, 0.0]);
    for r in [
        hybrid_jacobian(&g, &x0, 0, 0.0, 0.8, &opts()),
        exact_events(&g, &x0, 0, 0.0, 0.8, &opts()),
    ] {
        let Err(FerroError::SetValued {
            outcomes, spread, ..
        }) = r
        else {
            panic!("expected SetValued, got {r:?}");
        };
        assert_eq!(outcomes.len(), 2);
        // Mirror images in x: p_x of one order is minus the other's, and far from 0.
        assert!((outcomes[0][0] + outcomes[1][0]).abs() < 1e-6);
        assert!(outcomes[0][0].abs() > 0.1 && spread > 0.2);
    }
    // Off the axis the ball meets one wall at a time: a Jacobian, as the closed form.
    let off = v(&[0.05, 1.0, 0.0, 0.0]);
    let s = hybrid_jacobian(&g, &off, 0, 0.0, 0.8, &opts()).unwrap();
    let e = exact_events(&g, &off, 0, 0.0, 0.8, &opts()).unwrap();
    assert_eq!(s.pieces.list.len(), 1);
    assert!(
        (&s.jacobian - &e.jacobian).amax() < 1e-6,
        "{} vs {}",
        s.jacobian,
        e.jacobian
    );
}

#[test]
fn the_switched_field_has_two_exact_pieces_and_no_jacobian() {
    let f = SwitchedField::from_values(&[-1.0, -1.0, -1.0, -2.0, -2.0, -1.0, -3.0, -3.0]);
    let x0 = v(&[1.0, 1.0]);
    // By hand: x1 first: Xi_2(mode 1)·Xi_1 = [[1,1],[0,1.5]]·[[1,0],[1,1]]; x2 first:
    // [[1.5,0],[1,1]]·[[1,1],[0,1]] (Xi = I + (f+ - f-)∇gᵀ/(∇g·f-)).
    let x1_first = DMatrix::from_row_slice(2, 2, &[2.0, 1.0, 1.5, 1.5]);
    let x2_first = DMatrix::from_row_slice(2, 2, &[1.5, 1.5, 1.0, 2.0]);
    for s in [
        hybrid_jacobian(&f, &x0, 0, 0.0, 2.0, &opts()).unwrap(),
        exact_events(&f, &x0, 0, 0.0, 2.0, &opts()).unwrap(),
    ] {
        assert!(matches!(
            s.pieces.jacobian(),
            Err(FerroError::NotDifferentiable { pieces: 2, .. })
        ));
        assert!(s.jacobian.iter().all(|v| v.is_nan()));
        let by_order = |o: usize| {
            &s.pieces
                .list
                .iter()
                .find(|p| p.orders[0][0] == o)
                .unwrap()
                .matrix
        };
        assert!((by_order(0) - &x1_first).amax() < 1e-9);
        assert!((by_order(1) - &x2_first).amax() < 1e-9);
        // x1 is crossed first when its perturbation is the smaller: d1 < d2.
        let d = v(&[0.1, 0.7]);
        assert!((s.pieces.jvp(&d).unwrap() - &x1_first * &d).amax() < 1e-9);
        let d = v(&[0.7, -0.2]);
        assert!((s.pieces.jvp(&d).unwrap() - &x2_first * &d).amax() < 1e-9);
        // Continuous on the boundary d1 = d2.
        let d = v(&[0.4, 0.4]);
        assert!((&x1_first * &d - &x2_first * &d).amax() < 1e-12);
        // At t = 1 both reach 0; then 1 s of the field after both.
        assert!((s.x.clone() - v(&[-3.0, -3.0])).amax() < 1e-9);
    }
}

#[test]
fn the_jvp_along_d_orders_the_events_as_d_does() {
    let f = SwitchedField::from_values(&[-1.0, -1.0, -1.0, -2.0, -2.0, -1.0, -3.0, -3.0]);
    let x0 = v(&[1.0, 1.0]);
    let s = hybrid_jacobian(&f, &x0, 0, 0.0, 2.0, &opts()).unwrap();
    for d in [v(&[0.1, 0.7]), v(&[0.7, -0.2]), v(&[-1.0, 0.3])] {
        let along = hybrid_jvp(&f, &x0, 0, 0.0, 2.0, &d, &opts()).unwrap();
        assert!((along - s.pieces.jvp(&d).unwrap()).amax() < 1e-9);
    }
}

#[test]
fn the_cylinder_carries_the_curvature_of_its_normal() {
    let c = Cylinder {
        radius: 0.5,
        restitution: 0.6,
        gravity: 9.81,
    };
    let x0 = v(&[0.2, 1.2, 0.0, 0.0]);
    let s = hybrid_jacobian(&c, &x0, 0, 0.0, 0.8, &opts()).unwrap();
    let e = exact_events(&c, &x0, 0, 0.0, 0.8, &opts()).unwrap();
    assert_eq!(e.events.len(), 1);
    assert!((&s.jacobian - &e.jacobian).amax() < 1e-6);
    // The closed form against central differences of its own x(T) (a second route to J).
    let h = 1e-6;
    for k in 0..4 {
        let mut dp = x0.clone();
        let mut dm = x0.clone();
        dp[k] += h;
        dm[k] -= h;
        let xp = exact_events(&c, &dp, 0, 0.0, 0.8, &opts()).unwrap().x;
        let xm = exact_events(&c, &dm, 0, 0.0, 0.8, &opts()).unwrap().x;
        let col = (xp - xm) / (2.0 * h);
        assert!((col - e.jacobian.column(k)).amax() < 1e-6, "column {k}");
    }
    // Without the curvature term (the normal frozen at the impact point) J is not that.
    let n = c.guard_gradient(0, 0, &x0);
    assert!(n.norm() > 0.0);
}

#[test]
fn bad_parameters_are_refused_naming_them() {
    let named = |kind: &str, k: &str, value: f64| {
        let mut m = BTreeMap::new();
        m.insert(k.to_string(), vec![value]);
        if kind != "switched_field" && k != "restitution" {
            m.insert("restitution".to_string(), vec![0.5]);
        }
        if kind == "v_groove" && k != "angle" {
            m.insert("angle".to_string(), vec![1.0]);
        }
        if kind == "cylinder" && k != "radius" {
            m.insert("radius".to_string(), vec![0.5]);
        }
        match build(kind, &m) {
            Err(FerroError::InvalidParameter { name, .. }) => name,
            other => panic!("{kind}.{k} = {value}: {:?}", other.map(|s| s.values())),
        }
    };
    assert_eq!(named("cylinder", "radius", -0.5), "radius");
    assert_eq!(named("v_groove", "angle", 0.0), "angle");
    assert_eq!(named("v_groove", "angle", std::f64::consts::PI), "angle");
    assert_eq!(named("v_groove", "restitution", 1.5), "restitution");
    assert_eq!(named("cylinder", "restitution", -0.1), "restitution");
    assert_eq!(named("cylinder", "gravity", f64::NAN), "gravity");
    // And a struct built directly is refused by hybrid_jacobian the same way.
    let g = VGroove {
        angle: 4.0,
        restitution: 0.5,
        gravity: 9.81,
    };
    let r = hybrid_jacobian(&g, &v(&[0.0, 1.0, 0.0, 0.0]), 0, 0.0, 0.8, &opts());
    assert!(matches!(
        r,
        Err(FerroError::InvalidParameter { name: "angle", .. })
    ));
}

#[test]
fn every_registered_system_builds_at_its_defaults_or_names_what_it_needs() {
    for spec in catalogue() {
        assert_eq!(spec.state_names.len(), spec.units.len(), "{}", spec.kind);
        let r = build(spec.kind, &BTreeMap::new());
        let required: Vec<&str> = spec
            .params
            .iter()
            .filter(|p| p.default.numbers().is_none())
            .map(|p| p.name)
            .collect();
        match (r, required.first()) {
            (Ok(s), None) => assert_eq!(s.spec().kind, spec.kind),
            (Err(FerroError::Scenario(m)), Some(name)) => assert!(m.contains(name), "{m}"),
            (r, _) => panic!("{}: {:?}", spec.kind, r.map(|s| s.values())),
        }
    }
}

fn flat() -> DVector<f64> {
    v(&[0.0, 0.5, 0.0, 0.0, 0.0, 0.0])
}

#[test]
fn a_uniform_rigid_rod_landing_flat_is_set_valued() {
    let rod = RigidRod {
        mass: 1.0,
        length: 1.0,
        inertia: 1.0 / 12.0,
        restitution: 0.5,
        gravity: 9.81,
    };
    for r in [
        hybrid_jacobian(&rod, &flat(), 0, 0.0, 0.5, &opts()),
        exact_events(&rod, &flat(), 0, 0.0, 0.5, &opts()),
    ] {
        let Err(FerroError::SetValued { outcomes, .. }) = r else {
            panic!("{r:?}");
        };
        // Mirror images: the tilt rate of one order is minus the other's.
        assert!((outcomes[0][5] + outcomes[1][5]).abs() < 1e-6);
        assert!(outcomes[0][5].abs() > 0.1);
    }
}

#[test]
fn a_dumbbell_landing_flat_has_one_jacobian() {
    // I = m (L/2)²: the two ends' impulses decouple and the orders agree.
    let rod = RigidRod {
        mass: 1.0,
        length: 1.0,
        inertia: 0.25,
        restitution: 0.5,
        gravity: 9.81,
    };
    let s = hybrid_jacobian(&rod, &flat(), 0, 0.0, 0.5, &opts()).unwrap();
    let e = exact_events(&rod, &flat(), 0, 0.0, 0.5, &opts()).unwrap();
    assert!(s.pieces.commuted() && e.pieces.commuted());
    assert!((&s.jacobian - &e.jacobian).amax() < 1e-6);
    // Tilted either way by a little, the exact map's one-sided slopes are J's.
    let h = 1e-7;
    for sign in [1.0, -1.0] {
        let mut x = flat();
        x[2] = sign * h;
        let moved = exact_events(&rod, &x, 0, 0.0, 0.5, &opts()).unwrap().x;
        let slope = (moved - &e.x) / (sign * h);
        assert!((slope - e.jacobian.column(2)).amax() < 1e-5);
    }
}

#[test]
fn a_penalty_rod_landing_flat_commutes_and_its_jacobian_is_the_two_sided_difference() {
    let rod = PenaltyRod {
        mass: 1.0,
        length: 1.0,
        inertia: 1.0 / 12.0,
        stiffness: 1e4,
        damping: 10.0,
        gravity: 9.81,
    };
    let o = HybridOptions { dt: 1e-4, ..opts() };
    let s = hybrid_jacobian(&rod, &flat(), 0, 0.0, 0.6, &o).unwrap();
    assert!(s.pieces.commuted(), "{:?}", s.pieces.largest_difference);
    assert!(s.events.len() >= 4, "both ends in, both out");
    let x_at = |x: DVector<f64>| {
        let q = HybridOptions {
            probe_rtol: 0.0,
            ..o
        };
        hybrid_jacobian(&rod, &x, 0, 0.0, 0.6, &q).unwrap().x
    };
    let h = 1e-7;
    for k in 0..6 {
        let (mut p, mut m) = (flat(), flat());
        p[k] += h;
        m[k] -= h;
        let col = (x_at(p) - x_at(m)) / (2.0 * h);
        let scale = s.jacobian.amax().max(1.0);
        assert!(
            (&col - s.jacobian.column(k)).amax() < 1e-6 * scale,
            "column {k}: {col} vs {}",
            s.jacobian.column(k)
        );
    }
}

#[test]
fn a_damped_penalty_rod_lets_go_below_the_ground_and_flies_on() {
    // With damping the push-only force reaches 0 while the end is still below the ground: the
    // run must take the release and fly on (both ends in, both out), not re-enter and leave
    // contact at one instant without end.
    let rod = PenaltyRod {
        mass: 1.0,
        length: 1.0,
        inertia: 1.0 / 12.0,
        stiffness: 1e4,
        damping: 10.0,
        gravity: 9.81,
    };
    let o = HybridOptions {
        dt: 1e-4,
        probe_rtol: 0.0,
        ..opts()
    };
    let s = hybrid_jacobian(&rod, &flat(), 0, 0.0, 0.6, &o).unwrap();
    assert_eq!(s.events.len(), 4, "{:?}", s.events);
    // Flat, both ends move as the centre: the release is where the force's argument
    // -k y - c v_y reaches 0, with y < 0 and v_y > 0 (below the ground, rising).
    let t_r = s.events[2].t;
    assert!(
        (s.events[3].t - t_r).abs() < 1e-9,
        "both ends let go together"
    );
    let after = hybrid_jacobian(&rod, &flat(), 0, 0.0, t_r + 1e-7, &o)
        .unwrap()
        .x;
    let (y, v) = (after[1], after[4]);
    assert!(y < -1e-4 && v > 0.0, "y = {y}, v_y = {v}");
    assert!((rod.stiffness * y + rod.damping * v).abs() < 1e-3 * rod.damping * v);
    // Then free flight to T = 0.6 s: the closed form from that state.
    let tau = 0.6 - (t_r + 1e-7);
    let y_t = y + v * tau - 0.5 * rod.gravity * tau * tau;
    assert!((s.x[1] - y_t).abs() < 1e-9, "{} vs {y_t}", s.x[1]);
    assert!((s.x[4] - (v - rod.gravity * tau)).abs() < 1e-9);
}
