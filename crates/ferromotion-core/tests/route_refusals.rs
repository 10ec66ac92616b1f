//! Issue 13, an outside audit's findings in the core: the equal-budget table refuses an empty
//! probe list instead of a spread of -inf, the `corrected` route says when its step is unstable
//! (as the `fixed` route does) instead of ending below ground without a word, and `flow`
//! refuses where its own error bound no longer vouches for it.

use ferromotion_core::*;

#[test]
fn the_equal_budget_table_refuses_an_empty_probe_list() {
    let opts = BudgetOptions {
        probes: vec![],
        ..BudgetOptions::default()
    };
    match equal_budget(&Drop::default(), &opts) {
        Err(FerroError::InvalidParameter { name: "probes", .. }) => {}
        other => panic!("expected a refusal naming `probes`, got {other:?}"),
    }
}

#[test]
fn an_unstable_corrected_step_is_flagged_as_the_fixed_one_is() {
    // The corrected route steps semi-implicit Euler in contact, so the fixed route's flag is
    // its flag. At k = 1e9 N/m and dt = 1e-4 s (omega·dt = 3.16, past the limit 1.70 at
    // zeta = 0.1606) it used to end 0.6 m below the ground with a Jacobian that looked
    // plausible and no word; at 1e6 (omega·dt = 0.1) it is stable.
    let drop = Drop::default();
    for (k, stable) in [(1e6, true), (1e9, false), (1e12, false)] {
        let c = corrected(&drop, k, 1e-4, &CorrectedOptions::default()).unwrap();
        let f = fixed(&drop, k, 1e-4, &FixedOptions::default()).unwrap();
        assert_eq!(c.step_stability, f.step_stability, "k = {k:e}");
        assert_eq!(c.step_stability.unwrap().stable, stable, "k = {k:e}");
    }
    let below = corrected(&drop, 1e9, 1e-4, &CorrectedOptions::default()).unwrap();
    assert!(below.state[0] < -0.1, "{:?}", below.state);
}

#[test]
fn flow_answers_only_where_its_own_bound_vouches_for_it() {
    // Oracle: the rigid `exact` route. The two differ by the contact-model share, which falls
    // like k^(-1/2) (1.03e-3 at 1e8 on this drop, docs/model.md §3); far beyond that, what is
    // left of |J_flow - J_exact| is the flow's own error.
    let drop = Drop::default();
    let ex = exact(&drop, &ExactOptions::default()).unwrap().jacobian;
    let scale = ferromotion_core::physics::state::max_abs(&ex);
    let mut answered = vec![];
    for i in 0..=32 {
        let k = 10f64.powi(8 + i);
        match flow(&drop, k, &FlowOptions::default()) {
            Ok(r) => {
                let share = 2e-3 * (1e8 / k).sqrt() * scale;
                let err = ferromotion_core::physics::state::max_abs(&(r.jacobian - ex));
                assert!(
                    err <= 1e-3 * scale + share,
                    "k = {k:e}: answered {err:e} away from the stiff limit"
                );
                answered.push(k);
            }
            Err(FerroError::InvalidParameter { name: "k", .. }) => {}
            Err(e) => panic!("k = {k:e}: {e}"),
        }
    }
    // The lab's whole range and well beyond is answered; the f64 wall is refused, not printed.
    assert!(
        answered.contains(&1e8) && answered.contains(&1e20),
        "{answered:?}"
    );
    assert!(!answered.contains(&1e40), "{answered:?}");
}

#[test]
fn a_blame_split_whose_floor_overflows_is_refused() {
    // The fuzzer's find: a mass of 1e-220 kg makes k/m overflow the flow's error bound; the
    // split used to print "noise floor inf" with both shares "< floor".
    let drop = Drop {
        height: 1.4676322977694831,
        velocity: -1.3095732691870094,
        t_final: 1.2,
        mass: 8.85611960804357e-221,
        ..Drop::default()
    };
    assert!(matches!(
        blame(&drop, 1.0, 1e-4),
        Err(FerroError::NonFinite { .. })
    ));
    // The default drop's split is untouched: a finite floor below both shares.
    let b = blame(&Drop::default(), 1e6, 1e-4).unwrap();
    assert!(b.noise_floor.is_finite() && b.noise_floor < b.contact_share);
}
