//! The descent experiment: outcomes asserted from the computed landscape.

use ferromotion_core::experiments::descent::*;

#[test]
fn the_scan_finds_the_target_and_the_exact_gradient_reaches_it_from_every_start() {
    let p = Problem::default();
    let d = descent(&p, &[Arm::Exact, Arm::CentralDifferences]).unwrap();
    let l = &d.landscape;
    // The grid's minimum lies within one grid cell of θ* (where L = 0 by construction).
    let cell = [
        (p.height_range[1] - p.height_range[0]) / (p.grid - 1) as f64,
        (p.velocity_range[1] - p.velocity_range[0]) / (p.grid - 1) as f64,
    ];
    for ((m, o), c) in l.grid_minimum.iter().zip(&p.optimum).zip(&cell) {
        assert!((m - o).abs() <= c * (1.0 + 1e-9), "{:?}", l.grid_minimum);
    }
    // Four distinct starts, each at least a few cells from the optimum.
    assert_eq!(l.starts.len(), 4);
    for s in &l.starts {
        let far = (s[0] - p.optimum[0]).abs() > 3.0 * cell[0]
            || (s[1] - p.optimum[1]).abs() > 3.0 * cell[1];
        assert!(far, "start {s:?} too close to the optimum");
    }
    for arm in &d.arms {
        assert_eq!(arm.converged, 4, "{}: {:?}", arm.label, arm.runs);
        for run in &arm.runs {
            // Converged runs end where the loss vanishes (the target is reachable exactly).
            assert!(run.final_loss < 1e-8, "{}: {run:?}", arm.label);
            // Every accepted step went downhill (Armijo), so the path's loss decreases.
            let losses: Vec<f64> = run
                .path
                .iter()
                .map(|&t| p.loss(t, &state(&d)).unwrap())
                .collect();
            assert!(
                losses.windows(2).all(|w| w[1] < w[0]),
                "{}: {losses:?}",
                arm.label
            );
        }
    }
    // The control and the exact gradient agree on the route taken.
    let (a, b) = (&d.arms[0], &d.arms[1]);
    for (ra, rb) in a.runs.iter().zip(&b.runs) {
        assert_eq!(ra.iterations, rb.iterations);
    }
}

fn state(d: &Descent) -> ferromotion_core::State {
    ferromotion_core::State::new(d.target[0], d.target[1])
}

#[test]
fn the_fixed_step_gradient_does_not_reach_the_optimum_and_the_cures_do() {
    let p = Problem::default();
    let arms = [
        Arm::Fixed { k: 1e6, dt: 1e-4 },
        Arm::Tolerance {
            k: 1e6,
            rtol: 1e-11,
        },
        Arm::Corrected { k: 1e6, dt: 1e-4 },
    ];
    let d = descent(&p, &arms).unwrap();
    assert_eq!(d.arms[0].converged, 0, "{:?}", d.arms[0].runs);
    assert_eq!(d.arms[1].converged, 4, "{:?}", d.arms[1].runs);
    assert_eq!(d.arms[2].converged, 4, "{:?}", d.arms[2].runs);
    // Corrected spends the fixed route's N = T/dt = 8000 force evaluations per gradient,
    // plus one per located switch (a converged run computes one gradient per step).
    assert!(
        d.arms[2].force_evals <= d.arms[2].iterations as u64 * 8004,
        "{:?}",
        d.arms[2]
    );
}

#[test]
fn a_start_outside_the_one_bounce_region_is_refused() {
    let p = Problem::default();
    let target = p.target().unwrap();
    // From 10 m at rest the fall takes 1.43 s: no impact before T = 0.8 s.
    assert!(p.run(&Arm::Exact, [10.0, 0.0], &target).is_err());
}
