//! The rimless wheel: one impact per step over many steps. Its return map's Floquet multiplier
//! is c² = cos²(2·half_angle) in closed form (from the energy balance of a stance and the
//! impact's ω+ = c·ω-); `hybrid_jacobian` of the flow over N steps, read on the post-impact
//! section, gives the N-step return map's derivative, whose N-th root must be c².

use ferromotion_core::hybrid::*;
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

#[test]
fn the_return_maps_multiplier_from_hybrid_jacobian_is_the_closed_form() {
    let w = wheel();
    let x0 = DVector::from_row_slice(&w.fixed_point());
    let opts = HybridOptions::default();
    // The period: the first impact's time from the fixed point.
    let probe = hybrid_jacobian(&w, &x0, 0, 0.0, 2.0, &opts).unwrap();
    let period = probe.events[0].t;
    // At N = 50 the N-step multiplier c^100 = 4.6e-9 is the difference of O(1) entries of J
    // (the flow's own direction keeps eigenvalue 1): round-off of 1e-13 in J is 2e-5 of it, and
    // the N-th root carries 1/N of that. The tolerance says so.
    for (n, tol) in [(10usize, 1e-8), (20, 1e-8), (50, 1e-4)] {
        // A little past the n-th impact; the flow after it is projected out along f.
        let t1 = n as f64 * period + 0.01;
        let s = hybrid_jacobian(&w, &x0, 0, 0.0, t1, &opts).unwrap();
        assert_eq!(s.events.len(), n);
        let f = w.rhs(0, &s.x);
        let j = &s.jacobian;
        // On the section θ = θ(t1): dω/dω0 = J[1,1] - (f_ω/f_θ)·J[0,1]; carried back to the
        // post-impact section θ = -half_angle along the stance's energy (ω dω is the same on
        // both sections): times ω(t1)/ω*.
        let on_t1 = j[(1, 1)] - f[1] / f[0] * j[(0, 1)];
        let poincare = on_t1 * s.x[1] / x0[1];
        let per_step = libm::pow(poincare, 1.0 / n as f64);
        println!(
            "N = {n}: multiplier {per_step:.12} (closed form {:.12})",
            w.multiplier()
        );
        assert!(
            (per_step - w.multiplier()).abs() < tol,
            "N = {n}: {per_step}"
        );
        // Liouville: the stance flow keeps area; each impact scales it by c².
        assert!((libm::pow(j.determinant(), 1.0 / n as f64) - w.multiplier()).abs() < tol);
    }
}
