//! One pass from t0 to t1 at a fixed step: the run's state (x, its Jacobian blocks, the
//! events met), each event or simultaneous group fired in turn, and a set-valued outcome
//! restated with each order's x(t1).

use super::locate::{earliest_group, event_at, rk4, step_cap, MAX_EVENTS_PER_STEP};
use super::pieces;
use super::*;

/// A run's state: where it is, its Jacobian blocks (n columns per branch: one branch per
/// combination of orders of the simultaneous groups met) and what it met.
pub(super) struct Run {
    pub(super) x: DVector<f64>,
    pub(super) phi: DMatrix<f64>,
    pub(super) branches: Vec<pieces::Branch>,
    pub(super) mode: usize,
    pub(super) events: Vec<HybridEvent>,
    pub(super) enumerated: bool,
    pub(super) largest_group: usize,
}

impl Run {
    pub(super) fn new(x0: &DVector<f64>, mode0: usize) -> Run {
        let n = x0.len();
        Run {
            x: x0.clone(),
            phi: DMatrix::identity(n, n),
            branches: vec![pieces::Branch::default()],
            mode: mode0,
            events: Vec::new(),
            enumerated: true,
            largest_group: 0,
        }
    }

    /// Fire `group` at (xm, phim) reached at `te`: one event through its saltation matrix,
    /// several through [`pieces::fire_group`].
    pub(super) fn fire(
        &mut self,
        sys: &dyn HybridSystem,
        group: &[usize],
        (xm, phim, te): (DVector<f64>, DMatrix<f64>, f64),
        opts: &HybridOptions,
        along: Option<&DVector<f64>>,
    ) -> Result<()> {
        if let [i] = group {
            let (event, xp, salt) = event_at(sys, self.mode, *i, &xm, te, opts.graze_speed)?;
            self.phi = salt * phim;
            self.mode = event.mode_after;
            self.x = xp;
            self.events.push(event);
            return Ok(());
        }
        let state_tol = if opts.probe_rtol > 0.0 {
            opts.probe_rtol
        } else {
            1e-9
        };
        let (fired, enumerated) = pieces::fire_group(
            sys,
            (self.mode, &xm, &phim),
            group,
            &self.branches,
            te,
            opts.graze_speed,
            state_tol,
            along,
        )?;
        self.enumerated &= enumerated;
        self.largest_group = self.largest_group.max(group.len());
        self.phi = fired.phi;
        self.branches = fired.branches;
        self.mode = fired.mode;
        self.x = fired.x;
        self.events.extend(fired.events);
        Ok(())
    }

    /// The answer: the pieces measured, the Jacobian where they agree.
    pub(super) fn finish(self, opts: &HybridOptions, t: f64) -> Result<HybridSolution> {
        if !(self.x.iter().chain(self.phi.iter()).all(|v| v.is_finite())) {
            return Err(FerroError::NonFinite {
                what: "hybrid_jacobian",
                detail: format!("at t = {t} s"),
            });
        }
        let n = self.x.len();
        let list = self
            .branches
            .into_iter()
            .enumerate()
            .map(|(b, br)| Piece {
                orders: br.orders,
                cone: br.cone,
                matrix: self.phi.columns(b * n, n).into_owned(),
            })
            .collect();
        let pieces = Pieces::measured(list, self.largest_group, self.enumerated, opts.probe_rtol);
        let jacobian = match pieces.jacobian() {
            Ok(j) => j.clone(),
            Err(_) => DMatrix::from_element(n, n, f64::NAN),
        };
        Ok(HybridSolution {
            x: self.x,
            mode: self.mode,
            jacobian,
            pieces,
            events: self.events,
            probe_gap: 0.0,
            spectral_radius: f64::NAN,
            worst_gain: f64::NAN,
        })
    }
}

/// One pass at step `dt` (no probe check); `along` a direction d: every simultaneous group
/// taken in the order d gives it (one piece, the JVP's).
pub(super) fn solve(
    sys: &dyn HybridSystem,
    (x0, mode0): (&DVector<f64>, usize),
    t0: f64,
    t1: f64,
    opts: &HybridOptions,
    along: Option<&DVector<f64>>,
) -> Result<HybridSolution> {
    let mut run = Run::new(x0, mode0);
    let mut t = t0;
    let mut steps = 0u64;
    while t < t1 {
        steps += 1;
        step_cap("hybrid_jacobian", steps, opts.max_steps, t, t1)?;
        let h = opts.dt.min(t1 - t);
        let mut done = 0.0;
        let mut fired = 0usize;
        loop {
            let rest = h - done;
            let (y, phi_y) = rk4(sys, run.mode, &run.x, &run.phi, rest);
            let found = earliest_group(
                sys,
                run.mode,
                (&run.x, &y),
                t + done,
                rest,
                opts.simultaneous,
            );
            let Some((s, group)) = found else {
                run.x = y;
                run.phi = phi_y;
                break;
            };
            fired += 1;
            if fired > MAX_EVENTS_PER_STEP {
                return Err(FerroError::TwoEventsInOneStep {
                    t,
                    dt: h,
                    first: run.events.last().map_or(group[0], |e| e.guard),
                    second: group[0],
                });
            }
            let (xm, phim) = rk4(sys, run.mode, &run.x, &run.phi, s);
            let te = t + done + s;
            let (mode, x) = (run.mode, xm.clone());
            match run.fire(sys, &group, (xm, phim, te), opts, along) {
                Err(e @ FerroError::SetValued { .. }) => {
                    return Err(outcomes_at_t1(sys, e, (mode, &x), te, t1, opts));
                }
                r => r?,
            }
            done += s;
            if !(done < h) {
                break;
            }
        }
        t = if t1 - t <= opts.dt { t1 } else { t + h };
    }
    run.finish(opts, t)
}

/// A [`FerroError::SetValued`] found at `te` (from `xm` in `mode`) restated with each order's
/// x(t1), each order's outcome run on to t1 (kept as it was where that run is refused).
pub(super) fn outcomes_at_t1(
    sys: &dyn HybridSystem,
    e: FerroError,
    (mode, xm): (usize, &DVector<f64>),
    te: f64,
    t1: f64,
    opts: &HybridOptions,
) -> FerroError {
    let FerroError::SetValued { t, orders, .. } = e else {
        return e;
    };
    let later = HybridOptions {
        probe_rtol: 0.0,
        ..*opts
    };
    let mut outcomes = Vec::new();
    for o in &orders {
        let Ok((m, x, _, _)) = pieces::apply_order(sys, (mode, xm), o, te, opts.graze_speed) else {
            return e_again(t, orders, xm);
        };
        let end = if te < t1 {
            solve(sys, (&x, m), te, t1, &later, None).map(|s| s.x)
        } else {
            Ok(x)
        };
        match end {
            Ok(x) => outcomes.push(x.iter().copied().collect::<Vec<f64>>()),
            Err(_) => return e_again(t, orders, xm),
        }
    }
    set_valued(t, orders, outcomes, t1)
}

/// The set-valued refusal of a group at `t` whose orders end at these x(t1): their spread is
/// the largest distance (max norm) of an outcome from the first.
pub(super) fn set_valued(
    t: f64,
    orders: Vec<Vec<usize>>,
    outcomes: Vec<Vec<f64>>,
    t1: f64,
) -> FerroError {
    let spread = outcomes
        .iter()
        .map(|x| {
            x.iter()
                .zip(&outcomes[0])
                .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()))
        })
        .fold(0.0_f64, f64::max);
    FerroError::SetValued {
        t,
        orders,
        outcomes,
        spread,
        at: format!("at t1 = {t1} s"),
    }
}

/// The set-valued refusal said at the event (when an order's run to t1 is itself refused).
fn e_again(t: f64, orders: Vec<Vec<usize>>, xm: &DVector<f64>) -> FerroError {
    FerroError::SetValued {
        t,
        orders,
        outcomes: vec![xm.iter().copied().collect()],
        spread: f64::NAN,
        at: "(an order's run on to t1 was refused; the state before the events shown)".into(),
    }
}
