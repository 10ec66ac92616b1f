//! The rimless wheel: one impact per step over many steps. Its return map's Floquet multiplier
//! is c² = cos²(2·half_angle) in closed form (from the energy balance of a stance and the
//! impact's ω+ = c·ω-). Measured two ways on the mid-stance section θ = 0
//! (`systems/wheel/multiplier.rs`): chained, one `hybrid_jacobian` per step, right at every
//! horizon; and direct, one `hybrid_jacobian` over N impacts, right only while c^(2N) stays
//! above J's absolute error.

use ferromotion_core::hybrid::*;
use ferromotion_core::systems::wheel::multiplier::{self, cross, measure, SECTION_THETA};
use ferromotion_core::systems::wheel::penalty::{self, PenaltyWheel};
use ferromotion_core::systems::wheel::penalty_fixed;
use ferromotion_core::systems::wheel::routes::{self, Scheme};
use ferromotion_core::systems::wheel::table::{markdown, route_table, TableOptions};
use ferromotion_core::systems::RimlessWheel;
use nalgebra::DVector;

fn wheel() -> RimlessWheel {
    RimlessWheel {
        half_angle: 0.3,
        slope: 0.08,
        length: 1.0,
        gravity: 9.81,
    }
}

/// The one-step return map on θ = 0 in closed form, from the stance's energy
/// ω²/2 + (g/L) cos(θ + slope) and the impact ω+ = c ω-: ω1 from ω0.
fn closed_return(w: &RimlessWheel, omega0: f64) -> f64 {
    let (a, s, gl) = (w.half_angle, w.slope, w.gravity / w.length);
    let c = libm::cos(2.0 * a);
    let pre = omega0 * omega0 + 2.0 * gl * (libm::cos(s) - libm::cos(a + s));
    libm::sqrt(c * c * pre + 2.0 * gl * (libm::cos(s - a) - libm::cos(s)))
}

/// The closed form, independently: ω*² from the fixed point of ω'² = c²(ω² + K).
#[test]
fn the_fixed_point_is_one_of_the_return_map() {
    let w = wheel();
    let [theta, omega] = w.fixed_point();
    let c = libm::cos(2.0 * w.half_angle);
    let k = 4.0 * w.gravity / w.length * libm::sin(w.half_angle) * libm::sin(w.slope);
    assert_eq!(theta, -w.half_angle);
    assert!(((c * c * (omega * omega + k)).sqrt() - omega).abs() < 1e-14);
    // The multiplier as the derivative of that map by differences: c²·ω/ω' = c² at ω*.
    let map = |om: f64| (c * c * (om * om + k)).sqrt();
    let h = 1e-6;
    let slope = (map(omega + h) - map(omega - h)) / (2.0 * h);
    assert!((slope - w.multiplier()).abs() < 1e-9);
}

/// Off the fixed point, one step's section derivative read off `hybrid_jacobian` is the
/// closed-form return map's, c²·ω0/ω1, and the crossing lands where that map says.
#[test]
fn one_steps_section_derivative_is_the_closed_return_maps_off_the_fixed_point() {
    let w = wheel();
    let opts = HybridOptions::default();
    for omega0 in [1.2, 1.6, 2.5] {
        let x = DVector::from_vec(vec![SECTION_THETA, omega0]);
        let c = cross(&w, &x, 1, 0.4, &opts).unwrap();
        let omega1 = closed_return(&w, omega0);
        assert!((c.x[0] - SECTION_THETA).abs() < 1e-12);
        assert!((c.x[1] - omega1).abs() < 1e-10, "{} vs {omega1}", c.x[1]);
        let expected = w.multiplier() * omega0 / omega1;
        let got = c.section_derivative(&w);
        assert!(
            (got - expected).abs() < 1e-10,
            "ω0 = {omega0}: {got} vs {expected}"
        );
    }
}

/// The chained reading's N-th root is c² to 1e-8 at every horizon, 200 impacts included.
#[test]
fn the_chained_multiplier_is_the_closed_form_at_every_horizon() {
    let w = wheel();
    let horizons = [1, 10, 20, 50, 200];
    let m = measure(
        &w,
        &horizons,
        false,
        &HybridOptions::default(),
        &mut |_, _| {},
    )
    .unwrap();
    for r in &m {
        let c2 = w.multiplier();
        assert!(
            (r.chained.per_step - c2).abs() < 1e-8,
            "N = {}: {} vs {c2}",
            r.horizon,
            r.chained.per_step
        );
        // The N-step derivative itself, relative.
        let cf = libm::pow(c2, r.horizon as f64);
        assert!(((r.chained.derivative - cf) / cf).abs() < 1e-8 * r.horizon as f64);
        assert!(r.direct.is_none());
    }
}

/// The direct reading (one `hybrid_jacobian` over N impacts) agrees with the chain where
/// c^(2N) is well above J's error, and its J's determinant is c^(2N) (the stance keeps area,
/// each impact scales it by c²).
#[test]
fn the_direct_reading_agrees_with_the_chain_at_short_horizons() {
    let w = wheel();
    let opts = HybridOptions::default();
    let m = measure(&w, &[10, 20], true, &opts, &mut |_, _| {}).unwrap();
    for r in &m {
        let d = r.direct.unwrap();
        assert!((d.per_step - r.chained.per_step).abs() < 1e-8, "{r:?}");
        assert!((d.per_step - w.multiplier()).abs() < 1e-8, "{r:?}");
    }
    let x0 = DVector::from_row_slice(&w.fixed_point());
    let chain = multiplier::chained(&w, &x0, 10, &opts, &mut |_| {}).unwrap();
    let c = cross(&w, &chain.start, 10, chain.times[9], &opts).unwrap();
    assert_eq!(c.impacts, 10);
    let det = c.jacobian.determinant();
    assert!((libm::pow(det, 0.1) - w.multiplier()).abs() < 1e-10);
}

#[test]
fn a_horizon_out_of_range_is_refused_by_name() {
    let w = wheel();
    let opts = HybridOptions::default();
    for bad in [&[][..], &[0][..], &[multiplier::MAX_HORIZON + 1][..]] {
        let e = measure(&w, bad, false, &opts, &mut |_, _| {}).unwrap_err();
        assert!(e.to_string().contains("horizons"), "{e}");
    }
}

/// The fixed route differentiates through its steps with the reset's Jacobian diag(1, c) and
/// no time-of-impact term: as dt shrinks its one-step reading goes to the exact flows'
/// Jacobians composed through diag(1, c) instead of the saltation matrix, built here from
/// `hybrid_jacobian` over the two stance segments (no event in either) — not to c².
#[test]
fn the_fixed_route_tends_to_the_product_without_saltation() {
    let w = wheel();
    let opts = HybridOptions::default();
    let x0 = DVector::from_row_slice(&w.fixed_point());
    let start = multiplier::chained(&w, &x0, 1, &opts, &mut |_| {})
        .unwrap()
        .start;
    let whole = cross(&w, &start, 1, 0.4, &opts).unwrap();
    let t_e = hybrid_jacobian(&w, &start, 0, 0.0, whole.t, &opts)
        .unwrap()
        .events[0]
        .t;
    // Up to the impact: 1e-12 rad short of the guard's zero, by bisection on the flow alone.
    let target = w.half_angle - 1e-12;
    let short = |t: f64| {
        let s = hybrid_jacobian(&w, &start, 0, 0.0, t, &opts).unwrap();
        (s.events.is_empty() && s.x[0] <= target, s)
    };
    let (mut lo, mut hi) = (t_e - 1e-3, t_e);
    for _ in 0..50 {
        let mid = 0.5 * (lo + hi);
        if short(mid).0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let (ok, pre) = short(lo);
    assert!(ok && (pre.x[0] - target).abs() < 1e-13, "{}", pre.x[0]);
    let (_, plus) = w.reset(0, 0, &pre.x);
    let post = cross(&w, &plus, 0, 0.2, &opts).unwrap();
    let j = &post.jacobian * w.reset_jacobian(0, 0, &pre.x) * &pre.jacobian;
    let f = w.rhs(0, &post.x);
    let limit = j[(1, 1)] - f[1] / f[0] * j[(0, 1)];
    assert!((limit - w.multiplier()).abs() > 0.5, "{limit}");
    let err = |dt: f64| {
        let r = routes::fixed(&w, Scheme::SemiImplicitEuler, &start, dt, 1).unwrap();
        (r[0].derivative - limit).abs()
    };
    let (coarse, fine) = (err(1e-3), err(1e-4));
    assert!(fine < 2e-3 * limit.abs(), "{fine} of {limit}");
    assert!(fine < 0.5 * coarse, "{coarse} -> {fine}");
}

/// The black-box driver on the same step function with the guard and reset declared
/// differentiates the event-located map: its one-step reading goes to c² as dt shrinks (semi-implicit
/// Euler: first order, with the event's place on the grid in it too), and with RK4 steps it is c² to its difference error.
#[test]
fn the_black_box_route_tends_to_the_closed_form() {
    let w = wheel();
    let opts = HybridOptions::default();
    let x0 = DVector::from_row_slice(&w.fixed_point());
    let start = multiplier::chained(&w, &x0, 1, &opts, &mut |_| {})
        .unwrap()
        .start;
    let err = |scheme, dt| {
        let r = routes::black_box(&w, scheme, &start, dt, 1).unwrap();
        (r.per_step - w.multiplier()).abs()
    };
    let (coarse, fine) = (
        err(Scheme::SemiImplicitEuler, 1e-2),
        err(Scheme::SemiImplicitEuler, 1e-4),
    );
    assert!(fine < 1e-3 && fine < 0.1 * coarse, "{coarse} -> {fine}");
    assert!(err(Scheme::Rk4, 1e-3) < 1e-7);
}

/// The table's rows: the chained saltation route never has the wrong sign; where a route's
/// first wrong sign is reported, its reading there is negative and one horizon earlier
/// positive (recomputed here).
#[test]
fn the_route_table_reports_each_routes_first_wrong_sign_where_it_is() {
    let w = wheel();
    let opts = TableOptions {
        horizons: vec![10, 20],
        scan_to: 80,
        fixed_dts: vec![1e-3],
        black_box_dts: vec![],
        penalty_ks: vec![],
    };
    let rows = route_table(&w, &opts, &mut |_| {}).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].first_wrong_sign, None);
    let hopts = HybridOptions::default();
    let x0 = DVector::from_row_slice(&w.fixed_point());
    let chain = multiplier::chained(&w, &x0, 80, &hopts, &mut |_| {}).unwrap();
    let direct = |n: usize| {
        multiplier::direct(&w, &chain.start, n, chain.times[n - 1], &hopts)
            .unwrap()
            .derivative
    };
    if let Some(n) = rows[1].first_wrong_sign {
        assert!(direct(n) < 0.0 && direct(n - 1) > 0.0, "N = {n}");
    }
    let fixed = routes::fixed(&w, Scheme::SemiImplicitEuler, &chain.start, 1e-3, 80).unwrap();
    let first = fixed.iter().find(|r| r.derivative < 0.0).map(|r| r.horizon);
    assert_eq!(rows[2].first_wrong_sign, first);
    assert!(markdown(&w, &rows).contains("first wrong sign"));
}

fn penalty(k: f64) -> PenaltyWheel {
    PenaltyWheel {
        wheel: wheel(),
        stiffness: k,
        damping_ratio: 1.0,
    }
}

/// The penalty wheel's declared derivatives (flow, guards, touchdown reset) are those of its
/// own functions, by central differences, in both modes.
#[test]
fn the_penalty_wheels_derivatives_are_its_functions_by_differences() {
    let pw = penalty(1e4);
    let x = DVector::from_vec(vec![0.31, 0.93, 1.3, -0.4, -0.52]);
    let h = 1e-6;
    let fd = |f: &dyn Fn(&DVector<f64>) -> DVector<f64>| {
        let mut j = nalgebra::DMatrix::zeros(f(&x).len(), 5);
        for c in 0..5 {
            let mut e = DVector::zeros(5);
            e[c] = h;
            j.set_column(c, &((f(&(&x + &e)) - f(&(&x - &e))) / (2.0 * h)));
        }
        j
    };
    for mode in [0, 1] {
        let j = fd(&|y| pw.rhs(mode, y));
        let scale = j.amax();
        assert!(
            (pw.rhs_jacobian(mode, &x) - j).amax() < 1e-7 * scale,
            "mode {mode}"
        );
        let g = fd(&|y| DVector::from_vec(vec![pw.guard(mode, 0, y)]));
        let grad = pw.guard_gradient(mode, 0, &x).transpose();
        assert!((grad - &g).amax() < 1e-6 * g.amax().max(1.0), "mode {mode}");
        let r = fd(&|y| pw.reset(mode, 0, y).1);
        assert!(
            (pw.reset_jacobian(mode, 0, &x) - r).amax() < 1e-8,
            "mode {mode}"
        );
    }
}

/// The penalty wheel's one-step return map derivative (hybrid_jacobian, saltation at touchdown
/// and release) is its return map's, by central differences of whole steps.
#[test]
fn the_penalty_wheels_return_map_derivative_is_its_return_maps_by_differences() {
    let pw = penalty(1e4);
    let opts = HybridOptions {
        dt: 5e-4,
        ..HybridOptions::default()
    };
    let x0 = DVector::from_vec(vec![0.0, 0.999, 1.45, 0.01, 0.0]);
    let (_, t, m) = penalty::return_step(&pw, &x0, 0.45, &opts).unwrap();
    let h = 1e-6;
    for c in 0..3 {
        let mut e = DVector::zeros(5);
        e[1 + c] = h;
        let up = penalty::return_step(&pw, &(&x0 + &e), t, &opts).unwrap().0;
        let down = penalty::return_step(&pw, &(&x0 - &e), t, &opts).unwrap().0;
        for r in 0..3 {
            let fd = (up[1 + r] - down[1 + r]) / (2.0 * h);
            assert!(
                (m[(r, c)] - fd).abs() < 1e-6 * m.amax(),
                "({r}, {c}): {} vs {fd}",
                m[(r, c)]
            );
        }
    }
}

/// As k grows the penalty wheel's multiplier goes to McGeer's c² (its law holds the new foot,
/// so its stiff limit is the plastic impact).
#[test]
fn the_penalty_wheels_multiplier_tends_to_the_closed_form_as_k_grows() {
    let w = wheel();
    let x0 = DVector::from_row_slice(&w.fixed_point());
    let start = multiplier::chained(&w, &x0, 1, &HybridOptions::default(), &mut |_| {})
        .unwrap()
        .start;
    let err = |k: f64| {
        let r = penalty::penalty_readings(&penalty(k), start[1], 30, 5).unwrap();
        (r[4].per_step - w.multiplier()).abs()
    };
    let (soft, stiff) = (err(1e3), err(1e5));
    assert!(stiff < 1e-3 && stiff < 0.05 * soft, "{soft} -> {stiff}");
    let bad = penalty::penalty_readings(
        &PenaltyWheel {
            damping_ratio: 0.5,
            ..penalty(1e4)
        },
        start[1],
        1,
        1,
    );
    assert!(bad.unwrap_err().to_string().contains("damping_ratio"));
}

/// The fixed route's tangent on the penalty wheel is the derivative of its own discrete map
/// within one switching pattern (differences small enough to move no switch to another step),
/// and still its multiplier stays far from c² as dt shrinks: the switch times' dependence on
/// x0 is what it leaves out.
#[test]
fn the_fixed_route_on_the_penalty_wheel_is_its_discrete_maps_tangent_and_misses_c2() {
    let pw = penalty(1e4);
    let x0 = DVector::from_vec(vec![0.0, 0.999, 1.45, 0.01, 0.0]);
    let dt = 5e-4;
    let run = penalty_fixed::penalty_fixed_run(&pw, &x0, dt, 0, 1).unwrap();
    let h = 1e-9;
    for c in 0..3 {
        let mut e = DVector::zeros(5);
        e[1 + c] = h;
        let up = penalty_fixed::penalty_fixed_run(&pw, &(&x0 + &e), dt, 0, 1)
            .unwrap()
            .last;
        let down = penalty_fixed::penalty_fixed_run(&pw, &(&x0 - &e), dt, 0, 1)
            .unwrap()
            .last;
        for r in 0..3 {
            let fd = (up[1 + r] - down[1 + r]) / (2.0 * h);
            let m = run.map[(r, c)];
            assert!(
                (m - fd).abs() < 1e-4 * run.map.amax(),
                "({r}, {c}): {m} vs {fd}"
            );
        }
    }
    for dt in [5e-4, 5e-5] {
        let r = penalty_fixed::penalty_fixed(&pw, &x0, dt, 20, 10).unwrap();
        assert!((r[9].per_step - pw.wheel.multiplier()).abs() > 0.5, "{r:?}");
    }
}

/// Each scheme's rate d step(x, τ)/dτ (the direction a discrete run meets the section along)
/// is the step's own, by central differences in τ.
#[test]
fn a_schemes_rate_is_its_steps_derivative_in_the_step_length() {
    let x = DVector::from_vec(vec![0.1, 1.4]);
    for scheme in [Scheme::SemiImplicitEuler, Scheme::Rk4] {
        let s = routes::WheelStep {
            wheel: wheel(),
            scheme,
        };
        for tau in [1e-4, 3e-3, 0.05] {
            let d = 1e-6;
            let fd = (s.step_with_tangent(&x, tau + d).0 - s.step_with_tangent(&x, tau - d).0)
                / (2.0 * d);
            assert!((s.rate(&x, tau) - fd).amax() < 1e-8, "{scheme:?} τ = {tau}");
        }
    }
}
