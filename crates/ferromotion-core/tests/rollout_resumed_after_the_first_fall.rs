//! The bench resumes every fixed and corrected rollout from the state after the first fall's
//! steps above ground, which no stiffness changes (`FixedStart`, `CorrectedStart`): the
//! answer must be the route's own from t = 0, bit for bit (state, Jacobian, cost, stability
//! flag, or the same refusal), on random drops, stiffnesses and steps, one start shared by
//! several k as the bench shares it.

mod common;

use common::bits;
use ferromotion_core::physics::integrate::corrected::{corrected_from, CorrectedStart};
use ferromotion_core::physics::integrate::fixed::{fixed_from, FixedStart};
use ferromotion_core::*;
use proptest::prelude::*;

/// Same bits, cost and stability, or the same error message.
fn same(
    what: &str,
    a: &Result<RouteResult>,
    b: &Result<RouteResult>,
) -> std::result::Result<(), String> {
    let ok = match (a, b) {
        (Ok(a), Ok(b)) => {
            bits(&a.state, &a.jacobian) == bits(&b.state, &b.jacobian)
                && a.cost == b.cost
                && a.step_stability == b.step_stability
        }
        (Err(a), Err(b)) => a.to_string() == b.to_string(),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{what}: from t = 0 {a:?}, resumed {b:?}"))
    }
}

fn check(drop: &Drop, dt: f64, ks: &[f64]) -> std::result::Result<(), String> {
    let fixed_opts = FixedOptions::default();
    let Ok(fs) = FixedStart::new(drop, dt, &fixed_opts) else {
        return Ok(()); // a refused step: the route refuses it too (checked by its own tests)
    };
    for locate in [true, false] {
        let opts = CorrectedOptions {
            locate,
            ..CorrectedOptions::default()
        };
        let cs = CorrectedStart::new(drop, dt, &opts).map_err(|e| e.to_string())?;
        for &k in ks {
            let at = format!("{drop:?} k = {k:e} dt = {dt:e} locate = {locate}");
            same(
                &format!("corrected, {at}"),
                &corrected(drop, k, dt, &opts),
                &corrected_from(drop, k, dt, &opts, &cs),
            )?;
            if locate {
                same(
                    &format!("fixed, {at}"),
                    &fixed(drop, k, dt, &fixed_opts),
                    &fixed_from(drop, k, dt, &fixed_opts, &fs),
                )?;
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn resumed_rollouts_have_the_bits_of_the_route_from_t0(
        height in 0.001..5.0f64,
        velocity in -10.0..10.0f64,
        zeta in 0.0..0.99f64,
        gravity in 0.5..30.0f64,
        mass in 0.05..20.0f64,
        t_final in 0.05..2.0f64,
        log_k in 2.0..8.5f64,
        log_n in 0.0..4.3f64,
    ) {
        let drop = Drop { height, velocity, zeta, gravity, mass, t_final };
        prop_assume!(drop.validate().is_ok());
        let k = libm::pow(10.0, log_k);
        // A dt that divides T: T/N for a random N (N = 1 included).
        let dt = t_final / libm::pow(10.0, log_n).round();
        check(&drop, dt, &[k, k * 3.7, k / 50.0]).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn resumed_rollouts_have_the_bits_of_the_route_from_t0_at_the_lab_settings() {
    let drop = Drop::default();
    let ks: Vec<f64> = (0..=24)
        .map(|i| libm::pow(10.0, 2.0 + 0.25 * i as f64))
        .collect();
    check(&drop, 1e-4, &ks).unwrap();
    check(&drop, 1e-5, &ks[..8]).unwrap();
    check(&drop, 1e-6, &[1e2, 1e5, 1e8]).unwrap();
}

#[test]
fn a_start_skips_the_first_fall_above_ground() {
    let drop = Drop::default();
    let n = 8000; // T/dt
    let fs = FixedStart::new(&drop, 1e-4, &FixedOptions::default()).unwrap();
    // Stopped at the first state below ground, about sqrt(2h/g) = 0.45 s into 0.8 s.
    assert!(fs.x[0] < 0.0, "{fs:?}");
    assert!((4500..=4520).contains(&fs.steps), "{fs:?}");
    // The corrected route's fast steps stop a little before the ground (a margin on the
    // height), never after the fixed route's first step below it.
    let cs = CorrectedStart::new(&drop, 1e-4, &CorrectedOptions::default()).unwrap();
    assert!(cs.steps > n / 2 && cs.steps <= fs.steps, "{cs:?}");
}

#[test]
fn a_start_for_another_drop_or_step_is_not_used() {
    let drop = Drop::default();
    let other = Drop {
        height: 0.5,
        ..drop
    };
    let fs = FixedStart::new(&other, 1e-4, &FixedOptions::default()).unwrap();
    let cs = CorrectedStart::new(&drop, 1e-5, &CorrectedOptions::default()).unwrap();
    let k = 1e6;
    same(
        "fixed, start of another drop",
        &fixed(&drop, k, 1e-4, &FixedOptions::default()),
        &fixed_from(&drop, k, 1e-4, &FixedOptions::default(), &fs),
    )
    .unwrap();
    same(
        "corrected, start at another step",
        &corrected(&drop, k, 1e-4, &CorrectedOptions::default()),
        &corrected_from(&drop, k, 1e-4, &CorrectedOptions::default(), &cs),
    )
    .unwrap();
}

/// A sweep shares one start per step among its stiffnesses: every row (fixed, corrected,
/// blame split of that same fixed rollout) is the routes' own from t = 0.
#[test]
fn a_sweep_reads_the_routes_called_from_t0() {
    use ferromotion_core::lab::sweep::RouteRow;
    let drop = Drop::default();
    let reference = exact(&drop, &ExactOptions::default()).unwrap();
    let ks: Vec<f64> = (0..=12)
        .map(|i| libm::pow(10.0, 2.0 + 0.5 * i as f64))
        .collect();
    for dt in [1e-4, 1e-5] {
        let opts = SweepOptions {
            dt,
            tolerance: None,
            blame: true,
            corrected: true,
        };
        let s = sweep(&drop, &ks, &opts).unwrap();
        for (row, &k) in s.rows.iter().zip(&ks) {
            let f = fixed(&drop, k, dt, &FixedOptions::default()).unwrap();
            let c = corrected(&drop, k, dt, &CorrectedOptions::default()).unwrap();
            assert_eq!(row.fixed, RouteRow::timed(&f, &reference, None));
            assert_eq!(row.corrected, Some(RouteRow::timed(&c, &reference, None)));
            assert_eq!(row.blame, Some(blame(&drop, k, dt).unwrap()));
        }
    }
}
