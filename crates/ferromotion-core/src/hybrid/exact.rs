//! Exact answers: the event logic of [`super::hybrid_jacobian`] (events in time order,
//! simultaneous groups, their orders and pieces, set-valued outcomes) run on a closed-form
//! flight between events and closed-form event times, with no integrator: the answer is
//! exact to round-off.

use nalgebra::{DMatrix, DVector};

use super::qualify::check_start;
use super::solve::{set_valued, Run};
use super::{HybridOptions, HybridSolution, HybridSystem};
use crate::error::{FerroError, Result};

/// Events [`exact_events`] goes through before it gives up.
pub const MAX_EXACT_EVENTS: usize = 10_000;

/// A hybrid system whose flight between events has a closed form.
pub trait ClosedForm: HybridSystem {
    /// x after flying `t` in `mode`.
    fn flight(&self, mode: usize, x: &DVector<f64>, t: f64) -> DVector<f64>;
    /// d flight / dx.
    fn flight_jacobian(&self, mode: usize, x: &DVector<f64>, t: f64) -> DMatrix<f64>;
    /// The first time s >= 0 at which guard `i` reaches 0 from above flying in `mode` from x
    /// (after its own event, the next one); `None`: never.
    fn time_to_guard(&self, mode: usize, i: usize, x: &DVector<f64>) -> Option<f64>;
}

/// The exact x(t1) and the pieces of dx(t1)/dx(t0) of a closed-form system: the flight maps
/// composed with the saltation matrices, simultaneous events (within `opts.simultaneous` s)
/// taken in every order as [`super::hybrid_jacobian`] takes them. `opts.dt` and the probe
/// are unused; `probe_rtol` is the pieces' agreement tolerance.
pub fn exact_events<S: ClosedForm>(
    sys: &S,
    x0: &DVector<f64>,
    mode0: usize,
    t0: f64,
    t1: f64,
    opts: &HybridOptions,
) -> Result<HybridSolution> {
    sys.validate()?;
    check_start(sys, x0, t0, t1)?;
    let mut run = Run::new(x0, mode0);
    let mut t = t0;
    for _ in 0..MAX_EXACT_EVENTS {
        let times: Vec<(usize, f64)> = (0..sys.guard_count(run.mode))
            .filter_map(|i| sys.time_to_guard(run.mode, i, &run.x).map(|s| (i, s)))
            .collect();
        let first = times.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        if !(t + first < t1) {
            let rest = t1 - t;
            let f = sys.flight_jacobian(run.mode, &run.x, rest);
            run.x = sys.flight(run.mode, &run.x, rest);
            run.phi = f * &run.phi;
            return run.finish(opts, t1);
        }
        let group: Vec<usize> = times
            .iter()
            .filter(|p| p.1 <= first + opts.simultaneous)
            .map(|p| p.0)
            .collect();
        let xm = sys.flight(run.mode, &run.x, first);
        let phim = sys.flight_jacobian(run.mode, &run.x, first) * &run.phi;
        t += first;
        let (mode, x) = (run.mode, xm.clone());
        match run.fire(sys, &group, (xm, phim, t), opts, None) {
            Err(FerroError::SetValued { orders, .. }) => {
                return Err(set_valued_at_t1(sys, orders, (mode, &x), t, t1, opts));
            }
            r => r?,
        }
    }
    Err(FerroError::TooManySteps {
        route: "exact_events",
        max_steps: MAX_EXACT_EVENTS as u64,
        detail: format!("{MAX_EXACT_EVENTS} events by t = {t} s"),
    })
}

/// A set-valued outcome restated with each order's exact x(t1).
fn set_valued_at_t1<S: ClosedForm>(
    sys: &S,
    orders: Vec<Vec<usize>>,
    (mode, xm): (usize, &DVector<f64>),
    te: f64,
    t1: f64,
    opts: &HybridOptions,
) -> FerroError {
    let mut outcomes = Vec::new();
    for o in &orders {
        let end = super::pieces::apply_order(sys, (mode, xm), o, te, opts.graze_speed).and_then(
            |(m, x, _, _)| {
                if te < t1 {
                    exact_events(sys, &x, m, te, t1, opts).map(|s| s.x)
                } else {
                    Ok(x)
                }
            },
        );
        match end {
            Ok(x) => outcomes.push(x.iter().copied().collect::<Vec<f64>>()),
            Err(e) => return e,
        }
    }
    set_valued(te, orders, outcomes, t1)
}
