//! The equal-budget table (issue 13, item 4): every row is its route called at the setting
//! the row names, within the budget, scored against `flow`; the adaptive rows are the tightest
//! rtol on the grid that fits; the probe-size trap is central differences computed here; the
//! clock only adds wall times.

use ferromotion_core::experiments::budget::{equal_budget, equal_budget_timed};
use ferromotion_core::lab::clock::{monotonic_seconds, Clock};
use ferromotion_core::lab::readout::Sign;
use ferromotion_core::physics::contact::penalty::{flow, FlowOptions};
use ferromotion_core::physics::integrate::adaptive::{tolerance, JacobianMethod, ToleranceOptions};
use ferromotion_core::physics::integrate::corrected::{corrected, CorrectedOptions};
use ferromotion_core::physics::integrate::fixed::{fixed, fixed_state, FixedOptions};
use ferromotion_core::physics::integrate::rk4::{rk4, rk4_state, Rk4Options};
use ferromotion_core::physics::model::Drop;
use ferromotion_core::physics::state::{Jacobian, RouteResult, State};
use ferromotion_core::{BudgetOptions, FerroError};

/// max_ij |J - J_ref| / max_ij |J_ref|, written out here.
fn relative(j: &Jacobian, reference: &Jacobian) -> f64 {
    let num = (0..4)
        .map(|i| (j[i] - reference[i]).abs())
        .fold(0.0, f64::max);
    let den = (0..4).map(|i| reference[i].abs()).fold(0.0, f64::max);
    num / den
}

/// The rtol a row's setting names ("rtol = 1e-7, ...").
fn rtol_of(setting: &str) -> f64 {
    let text = setting.trim_start_matches("rtol = ");
    text.split(',').next().unwrap().parse().unwrap()
}

fn same_route(row_dv: f64, row_evals: u64, row_err: f64, r: &RouteResult, reference: &RouteResult) {
    assert_eq!(row_dv, r.jacobian[(1, 0)]);
    assert_eq!(row_evals, r.cost.force_evals);
    assert_eq!(row_err, relative(&r.jacobian, &reference.jacobian));
}

#[test]
fn every_row_is_its_route_at_the_setting_it_names_within_the_budget() {
    let drop = Drop::default();
    for (k, budget) in [(1e6, 32_000u64), (1e5, 8_000), (1e7, 128_000)] {
        let opts = BudgetOptions {
            k,
            budget,
            ..BudgetOptions::default()
        };
        let table = equal_budget(&drop, &opts).unwrap();
        let reference = flow(&drop, k, &FlowOptions::default()).unwrap();
        let t = drop.t_final;
        let routes: Vec<&str> = table.rows.iter().map(|r| r.route.as_str()).collect();
        assert_eq!(
            routes,
            [
                "Euler uniform",
                "RK4 uniform",
                "adaptive",
                "adaptive + events",
                "adaptive + forward",
                "corrected"
            ]
        );
        for row in &table.rows {
            assert_eq!(row.wall_s, None, "untimed");
            let direct = match row.route.as_str() {
                "Euler uniform" => {
                    fixed(&drop, k, t / budget as f64, &FixedOptions::default()).unwrap()
                }
                "RK4 uniform" => {
                    rk4(&drop, k, 4.0 * t / budget as f64, &Rk4Options::default()).unwrap()
                }
                "corrected" => {
                    corrected(&drop, k, t / budget as f64, &CorrectedOptions::default()).unwrap()
                }
                adaptive => {
                    let (events, jacobian) = match adaptive {
                        "adaptive" => (false, JacobianMethod::Richardson),
                        "adaptive + events" => (true, JacobianMethod::Richardson),
                        _ => (true, JacobianMethod::Forward),
                    };
                    let rtol = rtol_of(&row.setting);
                    let at = |rtol: f64| {
                        let o = ToleranceOptions {
                            rtol,
                            events,
                            jacobian,
                            ..ToleranceOptions::default()
                        };
                        tolerance(&drop, k, &o)
                    };
                    // The next rtol on the grid (1e-n, 3e-(n+1), 1e-(n+1), ...) costs more
                    // than the budget, unless the grid ends (1e-12) first.
                    let (mantissa, exponent) = row.setting["rtol = ".len()..]
                        .split(',')
                        .next()
                        .unwrap()
                        .split_once("e-")
                        .unwrap();
                    let next = if mantissa == "1" {
                        format!("3e-{}", exponent.parse::<u32>().unwrap() + 1)
                    } else {
                        format!("1e-{exponent}")
                    };
                    if rtol != 1e-12 {
                        let tighter = at(next.parse().unwrap());
                        assert!(
                            tighter.map_or(true, |r| r.cost.force_evals > budget),
                            "{adaptive} at k {k}: a tighter rtol fits"
                        );
                    }
                    at(rtol).unwrap()
                }
            };
            same_route(
                row.dv_dy0,
                row.force_evals,
                row.gradient_error,
                &direct,
                &reference,
            );
            let agrees = direct.jacobian[(1, 0)].signum() == reference.jacobian[(1, 0)].signum();
            assert_eq!(row.right_sign, agrees);
            // The three states: a right sign with a gradient error of 1 or more is far off.
            let expected = match (agrees, row.gradient_error >= 1.0) {
                (false, _) => Sign::Wrong,
                (true, true) => Sign::RightFarOff,
                (true, false) => Sign::Right,
            };
            assert_eq!(row.sign, Some(expected), "{row:?}");
            // Within the budget; `corrected` adds one evaluation per located switch.
            let allowance = if row.route == "corrected" { 8 } else { 0 };
            assert!(row.force_evals <= budget + allowance, "{row:?}");
        }
        // One rollout buys what eight do not: at every budget here the forward row is
        // right-signed and at least as close to flow as Richardson's with events.
        let by = |name: &str| table.rows.iter().find(|r| r.route == name).unwrap();
        let (fwd, rich) = (by("adaptive + forward"), by("adaptive + events"));
        assert!(fwd.right_sign && fwd.gradient_error <= 1e-6, "{fwd:?}");
        assert!(fwd.force_evals < rich.force_evals);
        // The uniform steps carry the wrong sign at these k (the missing saltation).
        assert!(!by("Euler uniform").right_sign && !by("RK4 uniform").right_sign);
    }
}

#[test]
fn the_probe_size_trap_is_central_differences_of_the_uniform_maps() {
    let drop = Drop::default();
    let opts = BudgetOptions::default();
    let table = equal_budget(&drop, &opts).unwrap();
    let b = opts.budget as f64;
    let (dt_e, dt_r) = (drop.t_final / b, 4.0 * drop.t_final / b);
    let euler = |x: State| fixed_state(&drop.with_x0(&x), opts.k, dt_e, &FixedOptions::default());
    let rk = |x: State| rk4_state(&drop.with_x0(&x), opts.k, dt_r, &Rk4Options::default());
    let x0 = drop.x0();
    let dv_dy0 = |map: &dyn Fn(State) -> ferromotion_core::Result<State>, eps: f64| {
        let up = map(State::new(x0[0] + eps, x0[1])).unwrap();
        let down = map(State::new(x0[0] - eps, x0[1])).unwrap();
        (up[1] - down[1]) / (2.0 * eps)
    };
    assert_eq!(table.probe_trap.len(), opts.probes.len());
    let mut seen = vec![];
    for (row, &eps) in table.probe_trap.iter().zip(&opts.probes) {
        assert_eq!(row.probe, eps);
        assert_eq!(row.euler_dv_dy0, dv_dy0(&euler, eps));
        assert_eq!(row.rk4_dv_dy0, dv_dy0(&rk, eps));
        seen.push(row.euler_dv_dy0);
    }
    // The trap: the probe size changes the answer by far more than the answer's size.
    let (lo, hi) = seen
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    assert_eq!(table.probe_spread[0], hi - lo);
    assert!(hi - lo > 10.0 * table.flow_jacobian[2].abs());
}

#[test]
fn a_clock_adds_wall_times_and_changes_nothing_else() {
    let drop = Drop::default();
    let opts = BudgetOptions {
        budget: 8_000,
        ..BudgetOptions::default()
    };
    let plain = equal_budget(&drop, &opts).unwrap();
    let clock = Clock::new(monotonic_seconds);
    let mut timed = equal_budget_timed(&drop, &opts, Some(&clock)).unwrap();
    for row in &mut timed.rows {
        let wall = row.wall_s.take().expect("every fitting row is timed");
        assert!(wall.is_finite() && wall >= 0.0);
    }
    assert_eq!(timed.wall_resolution_s.take(), Some(clock.resolution()));
    assert_eq!(plain.wall_resolution_s, None);
    assert_eq!(format!("{timed:?}"), format!("{plain:?}"));
}

#[test]
fn bad_options_are_refused_by_name() {
    let drop = Drop::default();
    let refused = |o: BudgetOptions| match equal_budget(&drop, &o) {
        Err(FerroError::InvalidParameter { name, .. }) => name,
        other => panic!("{other:?}"),
    };
    let d = BudgetOptions::default;
    assert_eq!(refused(BudgetOptions { budget: 4, ..d() }), "budget");
    assert_eq!(
        refused(BudgetOptions {
            budget: 8_002,
            ..d()
        }),
        "budget"
    );
    assert_eq!(refused(BudgetOptions { k: -1.0, ..d() }), "k");
    assert_eq!(refused(BudgetOptions { k: f64::NAN, ..d() }), "k");
    assert_eq!(
        refused(BudgetOptions {
            probes: vec![1e-3, 0.0],
            ..d()
        }),
        "probes"
    );
}
