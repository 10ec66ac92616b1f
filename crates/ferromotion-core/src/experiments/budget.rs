//! Equal budget: which buys the right gradient, a higher order, adaptivity or located events?
//!
//! Every route gets the same number of force evaluations `B` for one Jacobian of the drop
//! at stiffness k, and is scored against the `flow` route (the penalty law's exact
//! continuous derivative, docs/model.md §3):
//!
//! ```text
//! Euler uniform      N = B steps of semi-implicit Euler,   dt = T/B      (the `fixed` route)
//! RK4 uniform        N = B/4 steps of classical RK4,       dt = 4T/B     (the `rk4` route)
//! adaptive           Dormand–Prince at the tightest rtol on a half-decade grid whose
//! adaptive + events  evaluations (all 8 probe rollouts counted) stay within B (`tolerance`,
//!                    Richardson's central differences), without and with located switches
//! adaptive + forward the same search for the one-rollout forward sensitivities (events on)
//! corrected          N = B steps with the switches located, dt = T/B (+1 evaluation per switch)
//! ```
//!
//! Equal evaluations are not equal wall time: with a clock ([`equal_budget_timed`]) each
//! row also carries the wall time of its route call (`wall_s`), so the table shows what a
//! budget of evaluations costs each method on the machine it ran on.
//!
//! The probe-size trap: central differences of a uniform-step rollout's x(T), the
//! simulator user's usual fallback, at probes 1e-2 .. 1e-8 (m, m/s). The discrete map is
//! piecewise smooth with jumps wherever the first contact step changes, so each probe size
//! gives a different Jacobian and none is the flow's: large probes average over the jumps,
//! small ones see the branch-wise derivative (the fixed route's wrong answer).

use crate::error::{positive, FerroError, Result};
use crate::lab::clock::{timed, Clock};
use crate::lab::readout::{compare, Sign};
use crate::numeric::fd;
use crate::physics::contact::penalty::{flow, FlowOptions};
use crate::physics::integrate::adaptive::{tolerance, JacobianMethod, ToleranceOptions};
use crate::physics::integrate::corrected::{corrected, CorrectedOptions};
use crate::physics::integrate::fixed::{fixed, fixed_state, FixedOptions};
use crate::physics::integrate::rk4::{rk4, rk4_state, Rk4Options};
use crate::physics::model::Drop;
use crate::physics::state::{to_row_major, Jacobian, RouteResult, State};
use serde::{Deserialize, Serialize};

/// Options of [`equal_budget`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetOptions {
    /// Contact stiffness, N/m.
    pub k: f64,
    /// Force evaluations per Jacobian, shared by every route (a multiple of 4, so that
    /// RK4 gets a whole number of steps).
    pub budget: u64,
    /// Probe sizes of the central differences (m for y0, m/s for v0).
    pub probes: Vec<f64>,
}

impl Default for BudgetOptions {
    /// k = 1e6 N/m and B = 32,000: Euler at dt = 2.5e-5 s, RK4 at the lab's dt = 1e-4 s.
    fn default() -> Self {
        BudgetOptions {
            k: 1e6,
            budget: 32_000,
            probes: vec![1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8],
        }
    }
}

/// One route at the shared budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetRow {
    /// Route name.
    pub route: String,
    /// Its setting at this budget ("dt = 2.5e-5 s", "rtol = 1e-7").
    pub setting: String,
    /// Force evaluations it spent on the Jacobian.
    pub force_evals: u64,
    /// max_ij |J - J_flow| / max_ij |J_flow|.
    pub gradient_error: f64,
    /// Larger of |y - y_flow| (m) and |v - v_flow| (m/s) at T.
    pub state_error: f64,
    /// dv(T)/dy0 has the flow's sign.
    pub right_sign: bool,
    /// The sign line's three states, as the workbench's (`right`, `wrong`, `right_far_off`:
    /// the sign agrees but the gradient error is at least 1); `None` for a row that fits no
    /// tolerance within the budget (no answer to judge).
    pub sign: Option<Sign>,
    /// dv(T)/dy0.
    pub dv_dy0: f64,
    /// Wall time of the route call, s, when timed ([`equal_budget_timed`]); `None` otherwise.
    pub wall_s: Option<f64>,
}

/// Central differences of uniform-step rollouts at one probe size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeRow {
    /// The probe (m for y0, m/s for v0).
    pub probe: f64,
    /// Semi-implicit Euler at the budget's dt: dv(T)/dy0 from the central difference.
    pub euler_dv_dy0: f64,
    /// Its whole Jacobian's error against the flow's (relative, max entry).
    pub euler_error: f64,
    /// RK4 at the budget's dt: dv(T)/dy0 from the central difference.
    pub rk4_dv_dy0: f64,
    /// Its whole Jacobian's error against the flow's.
    pub rk4_error: f64,
}

/// The equal-budget table and the probe-size trap (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EqualBudget {
    /// Stiffness, N/m.
    pub k: f64,
    /// Force evaluations per Jacobian.
    pub budget: u64,
    /// The flow route's Jacobian, row-major, and its dv(T)/dy0 (the reference).
    pub flow_jacobian: [f64; 4],
    /// One row per route.
    pub rows: Vec<BudgetRow>,
    /// One row per probe size.
    pub probe_trap: Vec<ProbeRow>,
    /// Largest minus smallest dv(T)/dy0 across the probe sizes for Euler and for RK4 (1/s):
    /// how much the answer moves with the probe alone.
    pub probe_spread: [f64; 2],
    /// Resolution of the clock behind the rows' `wall_s`, s (`None` untimed): a wall time
    /// below it reads "under one tick" (a browser coarsens its clock to 100 µs).
    pub wall_resolution_s: Option<f64>,
}

fn row(
    route: &str,
    setting: String,
    (r, wall_s): (&RouteResult, Option<f64>),
    reference: &RouteResult,
) -> BudgetRow {
    let e = compare(r, reference);
    BudgetRow {
        route: route.into(),
        setting,
        force_evals: r.cost.force_evals,
        gradient_error: e.gradient,
        state_error: e.forward,
        right_sign: e.right_sign,
        sign: Some(e.sign),
        dv_dy0: e.dv_dy0,
        wall_s,
    }
}

/// A winner of [`within_budget`]: its rtol, its answer and the wall time of that call.
type Fit = (f64, RouteResult, Option<f64>);

/// The rtol grid 1e-2, 3e-3, 1e-3, 3e-4, ..., 1e-12: about half a decade apart, each value
/// parsed from the text the row prints, so that `rtol = 3e-7` in a setting is exactly the
/// 3e-7 a reader passes to the tolerance route to get the same row back.
pub fn rtol_grid() -> impl Iterator<Item = f64> {
    (0..=20u32).map(|i| {
        let text = if i % 2 == 0 {
            format!("1e-{}", 2 + i / 2)
        } else {
            format!("3e-{}", 3 + i / 2)
        };
        text.parse().expect("a decimal literal")
    })
}

/// The tightest rtol on [`rtol_grid`] whose route stays within `budget`.
fn within_budget(
    drop: &Drop,
    k: f64,
    (events, jacobian): (bool, JacobianMethod),
    budget: u64,
    clock: Option<&Clock>,
) -> Result<Option<Fit>> {
    let mut best = None;
    for rtol in rtol_grid() {
        let opts = ToleranceOptions {
            rtol,
            events,
            jacobian,
            ..ToleranceOptions::default()
        };
        match timed(clock, || tolerance(drop, k, &opts)) {
            (Ok(r), wall) if r.cost.force_evals <= budget => best = Some((rtol, r, wall)),
            (Ok(_), _) => break,
            // A tolerance the stepper refuses (too many steps) is over budget too.
            (Err(FerroError::TooManySteps { .. }), _) => break,
            (Err(e), _) => return Err(e),
        }
    }
    Ok(best)
}

/// The equal-budget table and the probe-size trap at `opts.k` (see the module docs), untimed
/// (every `wall_s` is `None`: the same document on every run and every build).
pub fn equal_budget(drop: &Drop, opts: &BudgetOptions) -> Result<EqualBudget> {
    equal_budget_timed(drop, opts, None)
}

/// [`equal_budget`], each row's route call timed with `clock` (its `wall_s`).
pub fn equal_budget_timed(
    drop: &Drop,
    opts: &BudgetOptions,
    clock: Option<&Clock>,
) -> Result<EqualBudget> {
    validate(drop, opts)?;
    let reference = flow(drop, opts.k, &FlowOptions::default())?;
    let b = opts.budget;
    let t = drop.t_final;
    let (dt_euler, dt_rk4) = (t / b as f64, t / (b / 4) as f64);
    let run = |f: &dyn Fn() -> Result<RouteResult>| -> Result<(RouteResult, Option<f64>)> {
        let (r, wall) = timed(clock, f);
        Ok((r?, wall))
    };
    let (euler, euler_wall) = run(&|| fixed(drop, opts.k, dt_euler, &FixedOptions::default()))?;
    let (rk, rk_wall) = run(&|| rk4(drop, opts.k, dt_rk4, &Rk4Options::default()))?;
    let mut rows = vec![
        row(
            "Euler uniform",
            format!("dt = {dt_euler:.3e} s"),
            (&euler, euler_wall),
            &reference,
        ),
        row(
            "RK4 uniform",
            format!("dt = {dt_rk4:.3e} s"),
            (&rk, rk_wall),
            &reference,
        ),
    ];
    rows.extend(adaptive_rows(drop, opts.k, b, clock, &reference)?);
    let (cor, cor_wall) = run(&|| corrected(drop, opts.k, dt_euler, &CorrectedOptions::default()))?;
    rows.push(row(
        "corrected",
        format!("dt = {dt_euler:.3e} s"),
        (&cor, cor_wall),
        &reference,
    ));
    let probe_trap = probe_trap(drop, opts, (dt_euler, dt_rk4), &reference.jacobian)?;
    let spread = |f: fn(&ProbeRow) -> f64| {
        let (lo, hi) = probe_trap
            .iter()
            .map(f)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(x), hi.max(x))
            });
        hi - lo
    };
    Ok(EqualBudget {
        k: opts.k,
        budget: b,
        flow_jacobian: to_row_major(&reference.jacobian),
        probe_spread: [spread(|r| r.euler_dv_dy0), spread(|r| r.rk4_dv_dy0)],
        wall_resolution_s: clock.map(Clock::resolution),
        rows,
        probe_trap,
    })
}

/// A count with thousands separators, as the lab prints one (`10,000,000`).
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The comparison's inputs refused as the core refuses any bad input: a valid drop, a
/// positive k, a budget every route can spend (a multiple of 4 from 8 to the step cap),
/// positive probes.
fn validate(drop: &Drop, opts: &BudgetOptions) -> Result<()> {
    drop.validate()?;
    positive("k", opts.k)?;
    // Every route spends the budget on whole steps: RK4 on budget/4 steps of 4 evaluations,
    // the Euler route on budget steps, which the fixed route's step cap bounds.
    let most = crate::physics::integrate::DEFAULT_MAX_STEPS;
    if opts.budget < 8 || opts.budget % 4 != 0 || opts.budget > most {
        let nearest = (opts.budget.saturating_add(2) / 4 * 4).clamp(8, most);
        return Err(FerroError::InvalidParameter {
            name: "budget",
            value: opts.budget as f64,
            limit: format!(
                "the force evaluations per Jacobian must be a multiple of 4 from 8 to {} \
                 (an RK4 step spends 4); the nearest allowed is {}",
                thousands(most),
                thousands(nearest)
            ),
        });
    }
    // With no probe the trap has no rows and its spread would be -inf - inf.
    if opts.probes.is_empty() {
        return Err(FerroError::InvalidParameter {
            name: "probes",
            value: 0.0,
            limit: "needs at least one probe size".into(),
        });
    }
    for &p in &opts.probes {
        positive("probes", p)?;
    }
    Ok(())
}

/// The three adaptive rows (Richardson without and with events, forward sensitivities),
/// each at the tightest rtol on the grid that fits the budget `b`, or a row saying none does.
fn adaptive_rows(
    drop: &Drop,
    k: f64,
    b: u64,
    clock: Option<&Clock>,
    reference: &RouteResult,
) -> Result<Vec<BudgetRow>> {
    let mut rows = Vec::new();
    for (name, method, detail) in [
        (
            "adaptive",
            (false, JacobianMethod::Richardson),
            "8 rollouts",
        ),
        (
            "adaptive + events",
            (true, JacobianMethod::Richardson),
            "8 rollouts",
        ),
        (
            "adaptive + forward",
            (true, JacobianMethod::Forward),
            "events, 1 rollout",
        ),
    ] {
        match within_budget(drop, k, method, b, clock)? {
            Some((rtol, r, wall)) => rows.push(row(
                name,
                format!("rtol = {rtol:.0e}, {detail}"),
                (&r, wall),
                reference,
            )),
            None => rows.push(BudgetRow {
                route: name.into(),
                setting: "no rtol on the grid fits the budget".into(),
                force_evals: 0,
                gradient_error: f64::NAN,
                state_error: f64::NAN,
                right_sign: false,
                sign: None,
                dv_dy0: f64::NAN,
                wall_s: None,
            }),
        }
    }
    Ok(rows)
}

/// The probe trap: the Euler and RK4 maps' central-difference Jacobians (the core's one
/// helper, the same absolute probe on both inputs) at every probe size, each against the
/// flow's Jacobian `reference`.
fn probe_trap(
    drop: &Drop,
    opts: &BudgetOptions,
    (dt_euler, dt_rk4): (f64, f64),
    reference: &Jacobian,
) -> Result<Vec<ProbeRow>> {
    let x0 = drop.x0();
    let euler_map =
        |x: &State| fixed_state(&drop.with_x0(x), opts.k, dt_euler, &FixedOptions::default());
    let rk4_map = |x: &State| rk4_state(&drop.with_x0(x), opts.k, dt_rk4, &Rk4Options::default());
    let scale = crate::physics::state::max_abs(reference);
    let err = |j: &Jacobian| crate::physics::state::max_abs(&(j - reference)) / scale;
    let mut probe_trap = vec![];
    for &eps in &opts.probes {
        let je = fd::central_jacobian(euler_map, &x0, fd::Probe::Absolute(eps))?;
        let jr = fd::central_jacobian(rk4_map, &x0, fd::Probe::Absolute(eps))?;
        probe_trap.push(ProbeRow {
            probe: eps,
            euler_dv_dy0: je[(1, 0)],
            euler_error: err(&je),
            rk4_dv_dy0: jr[(1, 0)],
            rk4_error: err(&jr),
        });
    }
    Ok(probe_trap)
}

impl EqualBudget {
    /// The two tables as fixed-width text.
    pub fn table(&self) -> String {
        let mut s = format!(
            "Equal budget: {} force evaluations per Jacobian at k = {:.0e} N/m; flow's dv(T)/dy0 = {:.4}\n",
            self.budget, self.k, self.flow_jacobian[2]
        );
        s.push_str(&format!(
            "  {:<18} {:<32} {:>10} {:>9} {:>11} {:>11} {:>11} {:>7}\n",
            "route", "setting", "evals", "wall", "grad err", "state err", "dv/dy0", "sign"
        ));
        for r in &self.rows {
            s.push_str(&format!(
                "  {:<18} {:<32} {:>10} {:>9} {:>11.3e} {:>11.3e} {:>11.4} {:>7}\n",
                r.route,
                r.setting,
                r.force_evals,
                r.wall_s.map_or("-".into(), wall_text),
                r.gradient_error,
                r.state_error,
                r.dv_dy0,
                match r.sign {
                    Some(Sign::Right) => "ok",
                    Some(Sign::RightFarOff) => "FAR OFF",
                    Some(Sign::Wrong) => "WRONG",
                    None => "-",
                }
            ));
        }
        s.push_str(&format!(
            "Probe-size trap: central differences of uniform-step rollouts (dv/dy0 moves by {:.3} for Euler, {:.3} for RK4)\n",
            self.probe_spread[0], self.probe_spread[1]
        ));
        s.push_str(&format!(
            "  {:>8} {:>13} {:>11} {:>13} {:>11}\n",
            "probe", "Euler dv/dy0", "error", "RK4 dv/dy0", "error"
        ));
        for p in &self.probe_trap {
            s.push_str(&format!(
                "  {:>8.0e} {:>13.4} {:>11.3e} {:>13.4} {:>11.3e}\n",
                p.probe, p.euler_dv_dy0, p.euler_error, p.rk4_dv_dy0, p.rk4_error
            ));
        }
        s
    }
}

/// A wall time in µs below a millisecond, else in ms.
fn wall_text(seconds: f64) -> String {
    if seconds < 1e-3 {
        format!("{:.1} µs", seconds * 1e6)
    } else {
        format!("{:.2} ms", seconds * 1e3)
    }
}
