//! The `corrected` route: the fixed step with the contact switches located inside their
//! steps, the grid restarted there, and the tangent carried through the switch times.

mod common;
use common::*;
use ferromotion_core::physics::state::max_abs;
use ferromotion_core::*;

fn corrected_state(drop: &Drop, k: f64, dt: f64) -> State {
    corrected(drop, k, dt, &CorrectedOptions::default())
        .unwrap()
        .state
}

#[test]
fn tangent_is_the_derivative_of_its_own_map() {
    // With the switches located the map is smooth in x(0): central differences of the
    // forward map (values only) agree with the dual-number tangent.
    let drop = Drop::default();
    for k in [1e2, 1e4, 1e6, 1e8] {
        let r = corrected(&drop, k, 1e-4, &CorrectedOptions::default()).unwrap();
        let map = |x: &State| corrected_state(&at(&drop, x), k, 1e-4);
        let (err, eps) = best_over_eps(&map, &drop.x0(), &r.jacobian);
        assert!(err < 1e-6, "k = {k:e}: {err:e} at eps {eps:e}");
    }
}

#[test]
fn converges_to_flow_at_first_order_in_dt() {
    let drop = Drop::default();
    for k in [1e5, 1e6] {
        let f = flow(&drop, k, &FlowOptions::default()).unwrap();
        let err = |dt: f64| {
            let c = corrected(&drop, k, dt, &CorrectedOptions::default()).unwrap();
            max_abs(&(c.jacobian - f.jacobian)) / max_abs(&f.jacobian)
        };
        let (e4, e5, e6) = (err(1e-4), err(1e-5), err(1e-6));
        // First order: each tenfold refinement cuts the error about tenfold.
        for ratio in [e5 / e4, e6 / e5] {
            assert!(
                ratio > 0.05 && ratio < 0.2,
                "k = {k:e}: {e4:e} {e5:e} {e6:e}"
            );
        }
    }
}

#[test]
fn lands_on_the_exact_answer_at_the_fixed_routes_cost() {
    let drop = Drop::default();
    let reference = exact(&drop, &ExactOptions::default()).unwrap();
    for k in [1e5, 1e6, 1e7] {
        let c = corrected(&drop, k, 1e-4, &CorrectedOptions::default()).unwrap();
        let f = fixed(&drop, k, 1e-4, &FixedOptions::default()).unwrap();
        let e = compare(&c, &reference);
        assert!(e.right_sign, "k = {k:e}: {e:?}");
        assert!(
            e.gradient < 0.1 * compare(&f, &reference).gradient,
            "k = {k:e}: {e:?}"
        );
        // One extra force evaluation per located switch.
        assert!(c.cost.force_evals <= f.cost.force_evals + 4, "{:?}", c.cost);
    }
    let e = compare(
        &corrected(&drop, 1e6, 1e-4, &CorrectedOptions::default()).unwrap(),
        &reference,
    );
    assert!(e.gradient < 1e-2, "{e:?}");
}

#[test]
fn the_shortcut_without_location_removes_only_part_of_the_error() {
    let drop = Drop::default();
    let reference = exact(&drop, &ExactOptions::default()).unwrap();
    let k = 1e6;
    let fixed_err = compare(
        &fixed(&drop, k, 1e-4, &FixedOptions::default()).unwrap(),
        &reference,
    )
    .gradient;
    let shortcut = corrected(
        &drop,
        k,
        1e-4,
        &CorrectedOptions {
            locate: false,
            ..Default::default()
        },
    )
    .unwrap();
    let located = corrected(&drop, k, 1e-4, &CorrectedOptions::default()).unwrap();
    let (s, l) = (
        compare(&shortcut, &reference).gradient,
        compare(&located, &reference).gradient,
    );
    assert!(
        s < fixed_err && s > 10.0 * l,
        "fixed {fixed_err:e}, shortcut {s:e}, located {l:e}"
    );
}

#[test]
fn corrected_is_close_to_flow_wherever_the_contact_is_resolved() {
    // Grid over k = 1e2..1e8 and dt = 1e-4, 1e-5, 1e-6. The contact is resolved when
    // omega·dt = sqrt(k/m)·dt is small; find the largest omega·dt below which every
    // point stays within 1e-2 of `flow`, and check the error grows about linearly in it.
    let drop = Drop::default();
    let mut points = Vec::new();
    for k in logspace(2.0, 8.0, 13) {
        let f = flow(&drop, k, &FlowOptions::default()).unwrap();
        for dt in [1e-4, 1e-5, 1e-6] {
            let c = corrected(&drop, k, dt, &CorrectedOptions::default()).unwrap();
            let err = max_abs(&(c.jacobian - f.jacobian)) / max_abs(&f.jacobian);
            points.push(((k / drop.mass).sqrt() * dt, err));
        }
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let boundary = points
        .iter()
        .take_while(|p| p.1 < 1e-2)
        .last()
        .map(|p| p.0)
        .unwrap();
    println!("corrected within 1e-2 of flow for every omega·dt <= {boundary:.3}");
    assert!(boundary >= 0.1, "boundary at omega·dt = {boundary}");
    // First order in omega·dt: the error over omega·dt stays bounded across the grid.
    for &(w, e) in &points {
        assert!(e < 0.2 * w + 1e-4, "omega·dt = {w:.3e}: error {e:.3e}");
    }
    // ...and the region ends: an under-resolved contact (omega·dt = 1) is not within 1e-2.
    assert!(points.iter().any(|p| p.0 >= 0.99 && p.1 > 1e-2));
}
