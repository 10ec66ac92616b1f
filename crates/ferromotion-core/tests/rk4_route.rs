//! The `rk4` route: classical RK4 at a fixed step with the forward-mode tangent. Away from
//! the contact switches it converges at fourth order to the closed form of a contact phase
//! (state and Jacobian); through the drop's switches it does not bring the Jacobian to the
//! flow's at all, and its state converges only at low order (issue 13: a higher order is
//! not what the right gradient needs).

use ferromotion_core::physics::contact::penalty::ContactPhase;
use ferromotion_core::physics::integrate::rk4::rk4_with_tangent;
use ferromotion_core::physics::state::max_abs;
use ferromotion_core::*;

/// log2 of the error ratio between step n and 2n: the observed order.
fn order(coarse: f64, fine: f64) -> f64 {
    (coarse / fine).log2()
}

#[test]
fn fourth_order_on_a_smooth_stretch_of_contact() {
    // A start inside the contact (pushing), run for half of the time until the force
    // returns to zero: no switch on the way, so the closed form is the exact answer.
    let drop = Drop::default();
    for k in [1e4, 1e6] {
        let law = drop.penalty(k).unwrap();
        let phase = ContactPhase::new(law, drop.gravity);
        let x0 = State::new(-0.2 * drop.gravity / law.omega().powi(2), -3.0);
        assert!(law.spring_damper(x0[0], x0[1]) > 0.0);
        let s_zero = phase.force_zero_time(&x0, 10.0, 1e-15).unwrap().s;
        let s = 0.5 * s_zero;
        let (x_ref, j_ref) = (phase.advance(&x0, s), phase.propagator(s));
        let errs: Vec<(f64, f64)> = [16u64, 32, 64]
            .iter()
            .map(|&n| {
                let (x, j) = rk4_with_tangent(
                    &law,
                    drop.gravity,
                    s / n as f64,
                    n,
                    x0,
                    Jacobian::identity(),
                );
                (
                    max_abs(&Jacobian::from_columns(&[x - x_ref, State::zeros()]))
                        / x_ref.abs().max(),
                    max_abs(&(j - j_ref)) / max_abs(&j_ref),
                )
            })
            .collect();
        for w in errs.windows(2) {
            let (ox, oj) = (order(w[0].0, w[1].0), order(w[0].1, w[1].1));
            assert!(
                (3.6..4.4).contains(&ox),
                "k = {k:e}: state order {ox} ({errs:?})"
            );
            assert!(
                (3.6..4.4).contains(&oj),
                "k = {k:e}: Jacobian order {oj} ({errs:?})"
            );
        }
    }
}

#[test]
fn through_the_switch_the_jacobian_does_not_converge() {
    // The whole drop against the flow route (the law's exact continuous derivative):
    // halving dt four times leaves the Jacobian's error of order one, with the wrong sign
    // of dv(T)/dy0 (the entry's saltation is missing, as in the fixed route), while the
    // state does converge.
    let drop = Drop::default();
    let k = 1e6;
    let reference = flow(&drop, k, &FlowOptions::default()).unwrap();
    let mut state_errs = vec![];
    for n in [8_000u64, 16_000, 32_000, 64_000] {
        let r = rk4(&drop, k, drop.t_final / n as f64, &Rk4Options::default()).unwrap();
        let e = compare(&r, &reference);
        assert!(e.gradient > 1.0, "n = {n}: {e:?}");
        assert!(!e.right_sign, "n = {n}: {e:?}");
        state_errs.push(e.forward);
    }
    let orders: Vec<f64> = state_errs.windows(2).map(|w| order(w[0], w[1])).collect();
    eprintln!("rk4 through the switch: state errors {state_errs:?}, observed orders {orders:?}");
    assert!(state_errs[3] < state_errs[0], "{state_errs:?}");
    for o in &orders {
        assert!(
            *o < 3.0,
            "through the switch the order falls below four: {orders:?}"
        );
    }
    // From 16,000 steps on, about second order (1.9..2.5 here); the coarsest pair is not
    // yet in the asymptotic range (the error grows: where the impact falls in its step
    // moves with dt).
    for o in &orders[1..] {
        assert!(*o > 1.5, "{orders:?}");
    }
}

#[test]
fn refusals() {
    let drop = Drop::default();
    assert!(matches!(
        rk4(&drop, 1e6, 3e-4, &Rk4Options::default()),
        Err(FerroError::StepDoesNotDivide { .. })
    ));
    assert!(matches!(
        rk4(&drop, 1e6, 1e-4, &Rk4Options { max_steps: 100 }),
        Err(FerroError::TooManySteps { route: "rk4", .. })
    ));
}
