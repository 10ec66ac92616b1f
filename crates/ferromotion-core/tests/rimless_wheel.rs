//! The rimless wheel: one impact per step over many steps. Its return map's Floquet multiplier
//! is c² = cos²(2·half_angle) in closed form (from the energy balance of a stance and the
//! impact's ω+ = c·ω-). Measured two ways on the mid-stance section θ = 0
//! (`systems/wheel/multiplier.rs`): chained, one `hybrid_jacobian` per step, right at every
//! horizon; and direct, one `hybrid_jacobian` over N impacts, right only while c^(2N) stays
//! above J's absolute error.

use ferromotion_core::hybrid::*;
use ferromotion_core::systems::wheel::multiplier::{self, cross, measure, SECTION_THETA};
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
