use ferromotion_core::readout::*;
use ferromotion_core::*;
fn main() {
    let d = Drop::default();
    let ex = exact(&d, &ExactOptions::default()).unwrap();
    println!(
        "e_lim {} exact J {:?} state {:?}",
        limit_restitution(d.zeta),
        ex.jacobian,
        ex.state
    );
    for &k in &[1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8] {
        let f = fixed(&d, k, 1e-4, &FixedOptions::default()).unwrap();
        let fl = flow(&d, k, &FlowOptions::default()).unwrap();
        let ef = compare(&f, &ex);
        let efl = compare(&fl, &ex);
        let b = blame(&d, k, 1e-4).unwrap();
        let r = dt_refinement(&d, k, 1e-4).unwrap();
        println!("k {:e}: fixed gerr {:.3e} dvdy0 {:.4} sign {} fwd {:.2e}{} | flow gerr {:.3e} dvdy0 {:.4} | blame {:.4e} {:.4e} floor {:.2e} | refine {:.3} {:.3} | e_k {:?}",
            k, ef.gradient, ef.dv_dy0, ef.right_sign, ef.forward, ef.forward_unit, efl.gradient, efl.dv_dy0, b.integrator_share, b.contact_share, b.noise_floor, r.ratio_10, r.ratio_100, realised_restitution(&d,k,d.impact_speed()).unwrap());
    }
    for dt in [1e-4, 1e-5, 1e-6] {
        println!(
            "exponent dt {dt}: {:?}",
            divergence_exponent(&d, dt).unwrap()
        );
    }
    println!(
        "contact exp {:?}",
        readout::contact_share_exponent(&d).unwrap()
    );
    // matched
    let ks = exponent_stiffnesses();
    let errs: Vec<f64> = ks
        .iter()
        .map(|&k| {
            let dt = matched_dt(&d, k).unwrap();
            fixed_gradient_error(&d, k, dt, &ex).unwrap()
        })
        .collect();
    println!("matched {:?}", fit_loglog(&ks, &errs).unwrap());
    for (rtol, ev) in [
        (1e-4, false),
        (1e-6, false),
        (1e-8, false),
        (1e-11, false),
        (1e-4, true),
        (1e-6, true),
        (1e-11, true),
    ] {
        for &k in &[1e4, 1e6, 1e8] {
            let t = tolerance(
                &d,
                k,
                &ToleranceOptions {
                    rtol,
                    events: ev,
                    ..Default::default()
                },
            )
            .unwrap();
            let e = compare(&t, &ex);
            let fl = flow(&d, k, &FlowOptions::default()).unwrap();
            let vs_flow =
                state::max_abs(&(t.jacobian - fl.jacobian)) / state::max_abs(&fl.jacobian);
            println!("tol rtol {rtol:e} ev {ev} k {k:e}: gerr {:.3e} vsflow {:.2e} dvdy0 {:.4} sign {} evals {} ratio {:.3} probe_dep {} gap {:.2e}", e.gradient, vs_flow, e.dv_dy0, e.right_sign, t.cost.force_evals, t.cost.force_evals as f64/8000.0, t.probe_dependent, t.probe_gap.unwrap());
        }
    }
}
