//! The `flow` route (closed-form continuous penalty derivative) against independent
//! oracles: central differences of tightly toleranced adaptive rollouts, and a plain
//! RK4 integration of the finite-k restitution.

mod common;
use common::*;
use ferromotion_core::physics::integrate::adaptive::tolerance_state;
use ferromotion_core::*;

#[test]
fn flow_matches_central_differences_of_a_tight_adaptive_rollout() {
    // Event-located Dormand–Prince at rtol 1e-12: a smooth function of x0, so central
    // differences at eps = 1e-5 converge (truncation ~eps², noise ~1e-12/eps).
    let drop = Drop::default();
    let opts = ToleranceOptions {
        rtol: 1e-12,
        events: true,
        ..Default::default()
    };
    for k in [1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8] {
        let f = flow(&drop, k, &FlowOptions::default()).unwrap();
        let map = |x: &State| tolerance_state(&at(&drop, x), k, &opts).unwrap().0;
        let fd = central_jacobian(&map, &drop.x0(), 1e-5);
        let err = rel_err(&fd, &f.jacobian);
        assert!(
            err < 1e-5,
            "k = {k:e}: flow vs adaptive central differences {err:e}"
        );
        let state_gap = (tolerance_state(&drop, k, &opts).unwrap().0 - f.state).amax();
        assert!(
            state_gap < 1e-9,
            "k = {k:e}: states differ by {state_gap:e}"
        );
    }
}

#[test]
fn flow_handles_a_second_contact_episode() {
    // A soft, long run: the mass bounces twice before T.
    let drop = Drop {
        t_final: 1.5,
        ..Drop::default()
    };
    let opts = ToleranceOptions {
        rtol: 1e-12,
        events: true,
        ..Default::default()
    };
    for k in [1e3, 1e5] {
        let (r, episodes) = ferromotion_core::physics::contact::penalty::flow_with_episodes(
            &drop,
            k,
            &FlowOptions::default(),
        )
        .unwrap();
        assert!(
            episodes.len() >= 2,
            "k = {k:e}: {} episodes",
            episodes.len()
        );
        let map = |x: &State| tolerance_state(&at(&drop, x), k, &opts).unwrap().0;
        let err = rel_err(&central_jacobian(&map, &drop.x0(), 1e-5), &r.jacobian);
        assert!(err < 1e-5, "k = {k:e}: {err:e}");
    }
}

#[test]
fn flow_converges_to_exact_as_k_to_the_minus_half() {
    // The contact-model share |J_flow - J_exact| shrinks like k^-1/2 (the contact lasts
    // ~pi/omega and everything it perturbs scales with that duration).
    let drop = Drop::default();
    let fit = ferromotion_core::lab::readout::contact_share_exponent(&drop).unwrap();
    assert!((fit.slope + 0.5).abs() < 0.02 && fit.r2 > 0.999, "{fit:?}");
}

#[test]
fn finite_k_restitution_matches_rk4_and_tends_to_the_stiff_limit() {
    let drop = Drop::default();
    let speed = drop.impact_speed();
    for k in [1e2, 1e4, 1e6] {
        // Independent route: RK4 on y'' = -g + (-k·y - c·v)/m from y = 0, v = -speed,
        // until the force reaches zero, then the free-flight exit speed sqrt(v² + 2·g·y).
        let (m, g) = (drop.mass, drop.gravity);
        let c = 2.0 * drop.zeta * (k * m).sqrt();
        let f = |y: f64, v: f64| (v, -g + (-k * y - c * v) / m);
        let h = 1e-4 / (k / m).sqrt();
        let (mut y, mut v) = (0.0_f64, -speed);
        loop {
            let (a1, b1) = f(y, v);
            let (a2, b2) = f(y + 0.5 * h * a1, v + 0.5 * h * b1);
            let (a3, b3) = f(y + 0.5 * h * a2, v + 0.5 * h * b2);
            let (a4, b4) = f(y + h * a3, v + h * b3);
            let yn = y + h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4);
            let vn = v + h / 6.0 * (b1 + 2.0 * b2 + 2.0 * b3 + b4);
            let (f0, f1) = (-k * y - c * v, -k * yn - c * vn);
            if f1 <= 0.0 && yn < 0.0 {
                let s = f0 / (f0 - f1);
                y += s * (yn - y);
                v += s * (vn - v);
                break;
            }
            y = yn;
            v = vn;
        }
        let integrated = (v * v + 2.0 * g * y).sqrt() / speed;
        let closed = realised_restitution(&drop, k, speed).unwrap().unwrap();
        assert!(
            (integrated - closed).abs() < 1e-6,
            "k = {k:e}: rk4 {integrated}, closed form {closed}"
        );
    }
    // Stiffer is closer to the limit, and k = 1e2 is far from it.
    let e_lim = limit_restitution(drop.zeta).unwrap();
    let gaps: Vec<f64> = [1e2, 1e4, 1e6, 1e8]
        .iter()
        .map(|&k| (realised_restitution(&drop, k, speed).unwrap().unwrap() - e_lim).abs())
        .collect();
    assert!(gaps.windows(2).all(|w| w[1] < w[0]), "{gaps:?}");
    assert!(gaps[0] > 0.1 && gaps[3] < 1e-3, "{gaps:?}");
}
