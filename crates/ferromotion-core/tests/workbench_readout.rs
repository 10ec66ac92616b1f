//! The lab's bench readout is the same numbers as the routes called one by one.

use ferromotion_core::lab::readout::dt_refinement;
use ferromotion_core::*;

#[test]
fn bench_readout_equals_the_routes_called_directly() {
    let drop = Drop::default();
    for (k, divisor) in [(1e2, 1), (1e6, 10), (1e8, 100)] {
        let mut b = Workbench::new(WorkbenchConfig {
            k,
            dt_divisor: divisor,
            ..WorkbenchConfig::default()
        })
        .unwrap();
        let r = b.readout().unwrap();
        let dt = 1e-4 / divisor as f64;
        let f = fixed(&drop, k, dt, &FixedOptions::default()).unwrap();
        assert_eq!(
            r.fixed.flat.jacobian,
            ferromotion_core::physics::state::to_row_major(&f.jacobian)
        );
        assert_eq!(r.blame, blame(&drop, k, dt).unwrap());
        assert_eq!(r.refinement, dt_refinement(&drop, k, 1e-4).unwrap());
        // Every cost ratio is against the fixed route at the base step, whatever the divisor.
        let base = fixed(&drop, k, 1e-4, &FixedOptions::default()).unwrap();
        let c = corrected(&drop, k, dt, &CorrectedOptions::default()).unwrap();
        assert_eq!(
            r.corrected_cost_ratio,
            c.cost.force_evals as f64 / base.cost.force_evals as f64
        );
        assert_eq!(r.yardstick.cost, base.cost);
        assert_eq!(r.yardstick.dt, 1e-4);
    }
}

/// One bench moved along k, as the slider moves it (its rollouts resume from starts it
/// keeps per step): every route row, the refinement and the blame split are those of the
/// routes called from t = 0 (no clock: every `wall_s` is `None` on both sides).
#[test]
fn a_moved_bench_reads_the_routes_called_from_t0() {
    use ferromotion_core::lab::sweep::RouteRow;
    let drop = Drop::default();
    let reference = exact(&drop, &ExactOptions::default()).unwrap();
    let mut b = Workbench::new(WorkbenchConfig::default()).unwrap();
    for divisor in [1, 10, 100] {
        b.set_dt_divisor(divisor).unwrap();
        let dt = 1e-4 / divisor as f64;
        for log_k in [2.0, 4.3, 6.0, 7.9] {
            b.set_log10_k(log_k).unwrap();
            let r = b.readout().unwrap();
            let k = r.k;
            let f = fixed(&drop, k, dt, &FixedOptions::default()).unwrap();
            let c = corrected(&drop, k, dt, &CorrectedOptions::default()).unwrap();
            assert_eq!(r.fixed, RouteRow::timed(&f, &reference, None));
            assert_eq!(r.corrected, RouteRow::timed(&c, &reference, None));
            assert_eq!(r.refinement, dt_refinement(&drop, k, 1e-4).unwrap());
            assert_eq!(r.blame, blame(&drop, k, dt).unwrap());
        }
    }
}

#[test]
fn drop_at_impact_speed_matches_the_time_of_impact_term_and_refuses_grazing() {
    use ferromotion_core::systems::drop_at_impact_speed;
    let drop = Drop::default();
    let e = limit_restitution(drop.zeta).unwrap();
    for speed in [4.0, 0.1, 0.01] {
        let r = drop_at_impact_speed(&drop, speed, DEFAULT_GRAZE_SPEED).unwrap();
        // One bounce from rest, ended at the top of the rebound: dv/dy0 is the
        // saltation's time-of-impact entry (1+e)·g/|v| (flight matrices leave it alone).
        let term = drop.time_of_impact_term(speed).unwrap();
        assert!(
            (r.jacobian[2] - term).abs() < 1e-6 * term,
            "{speed}: {} vs {term}",
            r.jacobian[2]
        );
        assert_eq!(r.events.len(), 1);
        assert!((r.t1 - (1.0 + e) * speed / drop.gravity).abs() < 1e-15);
    }
    assert!(matches!(
        drop_at_impact_speed(&drop, 5e-4, DEFAULT_GRAZE_SPEED),
        Err(FerroError::Grazing { .. })
    ));
}
