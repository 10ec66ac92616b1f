//! The soft V-groove (a fixed-step penalty simulator, `systems/vgroove_soft.rs`) and the lab's
//! "two contacts at once" document built on it (`experiments/two_contacts.rs`), held against
//! what does not come from them: at 90° the two walls decouple into two penalty drops (the
//! drop's closed-form flow and its own fixed route), far from the axis the soft walls
//! approach the rigid groove's exact answer as they stiffen, the tangent is the derivative of
//! the discrete map (finite differences), and a mirrored release mirrors the outcome.

use ferromotion_core::experiments::two_contacts::{two_contacts, TwoContactsOptions};
use ferromotion_core::hybrid::{exact_events, HybridOptions};
use ferromotion_core::physics::integrate::fixed::{fixed, FixedOptions};
use ferromotion_core::systems::vgroove_soft::SoftVGroove;
use ferromotion_core::systems::VGroove;
use ferromotion_core::{flow, Drop, FerroError, FlowOptions, DEFAULT_MAX_STEPS};
use nalgebra::DVector;
use std::f64::consts::FRAC_PI_2;

const G: f64 = 9.81;
const T: f64 = 0.8;
const ZETA: f64 = 0.2;

fn soft(angle: f64, k: f64) -> SoftVGroove {
    SoftVGroove {
        angle,
        stiffness: k,
        zeta: ZETA,
        mass: 1.0,
        gravity: G,
    }
}

fn gap(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .fold(0.0_f64, |m, (x, y)| m.max((x - y).abs()))
}

/// At 90°, the state along each normal (u = n0·p, w = n1·p) is a penalty drop under gravity
/// g·sin 45°: the drop of height u0 (resp. w0) from rest.
fn wall_drop(height: f64, k: f64) -> (Drop, f64) {
    let s = libm::sin(0.25 * std::f64::consts::PI);
    (Drop::new(height, 0.0, T, G * s, 1.0, ZETA).unwrap(), k)
}

/// x(T) of the 90° groove from its two normal coordinates' (position, velocity).
fn from_normals(u: (f64, f64), w: (f64, f64)) -> [f64; 4] {
    let (c, s) = (
        libm::cos(0.25 * std::f64::consts::PI),
        libm::sin(0.25 * std::f64::consts::PI),
    );
    [
        c * (u.0 - w.0),
        s * (u.0 + w.0),
        c * (u.1 - w.1),
        s * (u.1 + w.1),
    ]
}

#[test]
fn at_ninety_degrees_the_soft_groove_converges_at_first_order_to_two_penalty_drops_flows() {
    let (k, offset) = (1e4, 0.03);
    let (c, s) = (
        libm::cos(0.25 * std::f64::consts::PI),
        libm::sin(0.25 * std::f64::consts::PI),
    );
    let (u0, w0) = (c * offset + s, -c * offset + s);
    let closed = |h: f64| {
        let (drop, k) = wall_drop(h, k);
        let r = flow(&drop, k, &FlowOptions::default()).unwrap();
        (r.state[0], r.state[1])
    };
    let exact = from_normals(closed(u0), closed(w0));
    let errors: Vec<f64> = [1e-4, 1e-5, 1e-6, 1e-7]
        .iter()
        .map(|&dt| {
            let x = soft(FRAC_PI_2, k)
                .fixed([offset, 1.0, 0.0, 0.0], T, dt, DEFAULT_MAX_STEPS)
                .unwrap()
                .x;
            gap(&x, &exact)
        })
        .collect();
    // Semi-implicit Euler is first order: error/dt stays bounded over three decades of dt
    // (measured 39, 14, 50, 47 m/s: the contact entry's phase inside a step makes the
    // constant uneven), so the error goes to zero with dt.
    let steps = [1e-4, 1e-5, 1e-6, 1e-7];
    for (e, dt) in errors.iter().zip(steps) {
        assert!(*e < 100.0 * dt, "{errors:?}");
    }
    assert!(errors[3] < 1e-5, "{errors:?}");
}

#[test]
fn at_ninety_degrees_the_soft_tangent_is_the_drop_fixed_routes_tangent_along_each_normal() {
    let (k, dt, offset) = (1e5, 1e-4, -0.012);
    let (c, s) = (
        libm::cos(0.25 * std::f64::consts::PI),
        libm::sin(0.25 * std::f64::consts::PI),
    );
    let (u0, w0) = (c * offset + s, -c * offset + s);
    let wall = |h: f64| {
        let (drop, k) = wall_drop(h, k);
        fixed(&drop, k, dt, &FixedOptions::default()).unwrap()
    };
    let (ru, rw) = (wall(u0), wall(w0));
    let got = soft(FRAC_PI_2, k)
        .fixed([offset, 1.0, 0.0, 0.0], T, dt, DEFAULT_MAX_STEPS)
        .unwrap();
    let x = from_normals((ru.state[0], ru.state[1]), (rw.state[0], rw.state[1]));
    assert!(gap(&got.x, &x) < 1e-9, "{:?} vs {x:?}", got.x);
    // Column p_y0 of the groove's tangent: u0 and w0 both move by s per unit p_y0, so each
    // normal coordinate moves by s times its drop's column y0; back to (p, v) by the rotation.
    let (ju, jw) = (ru.jacobian, rw.jacobian);
    let col = from_normals(
        (s * ju[(0, 0)], s * ju[(1, 0)]),
        (s * jw[(0, 0)], s * jw[(1, 0)]),
    );
    let tangent: Vec<f64> = (0..4).map(|r| got.jacobian[4 * r + 1]).collect();
    let scale = col.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
    assert!(gap(&tangent, &col) < 1e-8 * scale, "{tangent:?} vs {col:?}");
}

#[test]
fn far_from_the_axis_the_soft_walls_approach_the_rigid_groove_as_they_stiffen() {
    for (degrees, offset) in [
        (100.0_f64, 0.01),
        (100.0, -0.015),
        (90.0, 0.01),
        (110.0, 0.02),
    ] {
        let angle = degrees.to_radians();
        let e = ferromotion_core::limit_restitution(ZETA).unwrap();
        let groove = VGroove {
            angle,
            restitution: e,
            gravity: G,
        };
        let x0 = [offset, 1.0, 0.0, 0.0];
        let rigid = exact_events(
            &groove,
            &DVector::from_row_slice(&x0),
            0,
            0.0,
            T,
            &HybridOptions::default(),
        )
        .unwrap();
        let errors: Vec<f64> = [(1e4, 1e-4), (1e5, 2e-5), (1e6, 5e-6)]
            .iter()
            .map(|&(k, dt)| {
                let x = soft(angle, k)
                    .fixed(x0, T, dt, DEFAULT_MAX_STEPS)
                    .unwrap()
                    .x;
                gap(&x, rigid.x.as_slice())
            })
            .collect();
        // Measured at 100° and 0.01 m: 0.64, 0.18, 0.020 (m and m/s) at k = 1e4, 1e5, 1e6.
        assert!(
            errors[1] < errors[0] && errors[2] < errors[1] && errors[2] < 0.1 * errors[0],
            "{degrees}° at {offset} m: {errors:?}"
        );
    }
}

#[test]
fn the_soft_tangent_is_the_derivative_of_the_discrete_map() {
    let sim = soft(100_f64.to_radians(), 1e5);
    let x0 = [0.004, 1.0, 0.0, 0.0];
    let base = sim.fixed(x0, T, 1e-4, DEFAULT_MAX_STEPS).unwrap();
    let h = 1e-8;
    for j in 0..4 {
        let at = |sign: f64| {
            let mut x = x0;
            x[j] += sign * h;
            sim.fixed(x, T, 1e-4, DEFAULT_MAX_STEPS).unwrap().x
        };
        let (plus, minus) = (at(1.0), at(-1.0));
        for r in 0..4 {
            let forward = (plus[r] - base.x[r]) / h;
            let backward = (base.x[r] - minus[r]) / h;
            let tangent = base.jacobian[4 * r + j];
            let tol = 1e-4 * tangent.abs().max(1.0);
            // Both one-sided differences: no contact step changed inside the probe.
            assert!(
                (forward - tangent).abs() < tol,
                "J[{r},{j}] {tangent} vs {forward}"
            );
            assert!(
                (backward - tangent).abs() < tol,
                "J[{r},{j}] {tangent} vs {backward}"
            );
        }
    }
}

#[test]
fn a_mirrored_release_gives_the_mirrored_outcome_and_the_axis_lands_on_it() {
    let sim = soft(100_f64.to_radians(), 1e5);
    let right = sim
        .fixed([0.007, 1.0, 0.0, 0.0], T, 1e-4, DEFAULT_MAX_STEPS)
        .unwrap();
    let left = sim
        .fixed([-0.007, 1.0, 0.0, 0.0], T, 1e-4, DEFAULT_MAX_STEPS)
        .unwrap();
    assert_eq!(left.x, [-right.x[0], right.x[1], -right.x[2], right.x[3]]);
    let axis = sim
        .fixed([0.0, 1.0, 0.0, 0.0], T, 1e-4, DEFAULT_MAX_STEPS)
        .unwrap();
    assert_eq!((axis.x[0], axis.x[2]), (0.0, 0.0));
}

#[test]
fn the_panel_document_says_jacobian_at_ninety_degrees_and_set_valued_elsewhere() {
    let right = two_contacts(&TwoContactsOptions::default()).unwrap();
    let zero = &right.rows[right.zero];
    assert_eq!(zero.offset, 0.0);
    assert_eq!(zero.rigid.verdict, "Jacobian");
    assert!(zero.rigid.commuted);
    // The value from a 50-digit event-driven simulation: J[0,0] = 0.6577.
    let j = zero.rigid.jacobian.as_ref().unwrap();
    assert!((j[0] - 0.6577).abs() < 1e-4, "{}", j[0]);
    assert!((right.soft_restitution - 0.5).abs() < 1e-12);

    let obtuse = two_contacts(&TwoContactsOptions {
        angle_degrees: 100.0,
        ..TwoContactsOptions::default()
    })
    .unwrap();
    let zero = &obtuse.rows[obtuse.zero];
    assert_eq!(zero.rigid.verdict, "SetValued");
    assert!(zero.rigid.x.is_none() && zero.rigid.jacobian.is_none());
    // The mirror-image outcomes x(T) = ±0.279 m.
    let xs: Vec<f64> = zero.rigid.outcomes.iter().map(|o| o[0]).collect();
    assert_eq!(xs.len(), 2);
    assert!(
        (xs[0] + xs[1]).abs() < 1e-12 && (xs[0].abs() - 0.279).abs() < 1e-3,
        "{xs:?}"
    );
    // The soft simulator answers at zero anyway: one state (p_x = 0 by symmetry), one matrix.
    assert_eq!(zero.soft.x[0], 0.0);
    assert!(zero.soft.jacobian.iter().all(|v| v.is_finite()));
    // ... which is neither order's: at least |p_x| of either outcome away from both.
    assert!(zero.state_gap.unwrap() >= xs[0].abs());
    assert!(zero.gradient_error.is_none());
    for (i, row) in obtuse.rows.iter().enumerate() {
        if i != obtuse.zero {
            assert_eq!(row.rigid.verdict, "Jacobian", "offset {}", row.offset);
        }
    }
}

#[test]
fn the_panel_refuses_bad_options_by_name() {
    let cases: [(TwoContactsOptions, &str); 6] = [
        (
            TwoContactsOptions {
                angle_degrees: 180.0,
                ..Default::default()
            },
            "angle_degrees",
        ),
        (
            TwoContactsOptions {
                angle_degrees: f64::NAN,
                ..Default::default()
            },
            "angle_degrees",
        ),
        (
            TwoContactsOptions {
                restitution: 0.0,
                ..Default::default()
            },
            "restitution",
        ),
        (
            TwoContactsOptions {
                restitution: 1.5,
                ..Default::default()
            },
            "restitution",
        ),
        (
            TwoContactsOptions {
                per_side: 0,
                ..Default::default()
            },
            "per_side",
        ),
        (
            TwoContactsOptions {
                stiffness: -1.0,
                ..Default::default()
            },
            "stiffness",
        ),
    ];
    for (opts, name) in cases {
        match two_contacts(&opts) {
            Err(FerroError::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    let uneven = TwoContactsOptions {
        dt: 3e-4,
        ..Default::default()
    };
    assert!(matches!(
        two_contacts(&uneven),
        Err(FerroError::StepDoesNotDivide { .. })
    ));
}
