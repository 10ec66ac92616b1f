//! The black-box driver's scheduler: every independent run (the nominal one, each probe's,
//! those at dt/2) is a *row*, written as plain sequential code (an `async fn` whose every
//! call of the step function, a guard or a reset is an `await`). The scheduler polls every
//! admitted row up to its next call, groups the calls of all rows (steps by their exact
//! step length, guards and resets by their index), asks the system for each group in one
//! batch ([`StepSystem::step_batch`]), hands the answers back and polls again. A row that
//! meets an event simply asks for other step lengths while it locates it, and rejoins the
//! others' batches on its own grid afterwards.
//!
//! A row's arithmetic does not depend on which rows share its batches: with one row per
//! call (a one-state step function) the calls come in the order the sequential driver
//! made them, and a batched step function that computes each row as its one-state twin
//! does gives the same bits.

use super::system::StepSystem;
use crate::error::{FerroError, Result};
use crate::lab::clock::Clock;
use nalgebra::DVector;
use serde::Serialize;
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// One call a row asks for.
pub(super) enum Item {
    /// step(x, h).
    Step(DVector<f64>, f64),
    /// Every guard at x.
    Guards(DVector<f64>),
    /// Guard i at x.
    Guard(usize, DVector<f64>),
    /// Reset i at x.
    Reset(usize, DVector<f64>),
}

/// Its answer, unchecked (the row checks it).
pub(super) enum Reply {
    State(DVector<f64>),
    Values(Vec<f64>),
    Value(f64),
}

#[derive(Default)]
struct Slot {
    ask: Option<Vec<Item>>,
    reply: Option<Vec<Reply>>,
    /// How far the row has got, 0..1 (of its own run).
    reached: f64,
}

/// A row's line to the scheduler.
#[derive(Clone, Default)]
pub(super) struct Caller(Rc<RefCell<Slot>>);

impl Caller {
    /// Ask for `items` (answered in order) and wait for the batch.
    pub(super) async fn ask(&self, items: Vec<Item>) -> Vec<Reply> {
        Ask {
            slot: &self.0,
            items: Some(items),
        }
        .await
    }

    /// Tell the scheduler how far the row has got (0..1), for progress reports.
    pub(super) fn reached(&self, fraction: f64) {
        self.0.borrow_mut().reached = fraction;
    }
}

struct Ask<'a> {
    slot: &'a RefCell<Slot>,
    items: Option<Vec<Item>>,
}

impl Future for Ask<'_> {
    type Output = Vec<Reply>;
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Vec<Reply>> {
        if let Some(items) = self.items.take() {
            self.slot.borrow_mut().ask = Some(items);
            return Poll::Pending;
        }
        match self.slot.borrow_mut().reply.take() {
            Some(r) => Poll::Ready(r),
            None => Poll::Pending,
        }
    }
}

/// A row: its future, its line, and its weight in the progress estimate (its expected
/// number of step rounds).
pub(super) struct Row<'a, T> {
    pub fut: Pin<Box<dyn Future<Output = Result<T>> + 'a>>,
    pub caller: Caller,
    pub weight: f64,
}

/// How far the rows have got, as the driver reports it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepProgress {
    /// Rows (independent runs: the nominal ones and every probe's) finished.
    pub rows_done: usize,
    /// Rows in all.
    pub rows_total: usize,
    /// Fraction of the work done (each row weighted by its expected steps), 0..1.
    pub fraction: f64,
    /// Wall time since the rows started, s (None without a clock).
    pub elapsed_s: Option<f64>,
    /// Estimated wall time left, s: elapsed·(1 - fraction)/fraction (None without a clock
    /// or before any work is done).
    pub remaining_s: Option<f64>,
}

/// The observer of [`StepWatch`].
pub type Observer<'a> = &'a mut dyn FnMut(&StepProgress) -> Result<()>;

/// Who watches the driver: a clock, and an observer told the [`StepProgress`] whenever a row
/// finishes and at most every [`REPORT_EVERY`] s between. An observer that returns an error
/// stops the driver (a binding's cancel: Ctrl-C); what finished is kept
/// ([`super::StepOutcome::Stopped`]).
#[derive(Default)]
pub struct StepWatch<'a> {
    /// The clock (none: no times in the reports, and reports only when rows finish).
    pub clock: Option<&'a Clock>,
    /// Called with the progress.
    pub progress: Option<Observer<'a>>,
}

/// Seconds between two progress reports while no row finishes.
pub const REPORT_EVERY: f64 = 0.5;

/// What running the rows gave: each row's result (None: not finished), the calls made, and
/// why it stopped early, if it did.
pub(super) struct Ran<T> {
    pub outs: Vec<Option<Result<T>>>,
    pub stopped: Option<FerroError>,
}

/// Counts of what the rows cost.
#[derive(Default, Clone, Copy)]
pub(crate) struct Cost {
    /// States stepped (a one-state step function's calls).
    pub states: u64,
    /// Calls of the (batched) step function.
    pub calls: u64,
}

/// Run `rows` in order of priority, at most `cap` rows admitted and at most `cap` states per
/// call. After every round in which a row finished, `settled` is asked whether the
/// finished rows already decide the answer (a refusal no unfinished row can overtake); if
/// so, the rest are dropped.
pub(super) fn drive<T>(
    sys: &dyn StepSystem,
    mut rows: Vec<Row<'_, T>>,
    cap: usize,
    watch: &mut StepWatch<'_>,
    cost: &mut Cost,
    mut settled: impl FnMut(&[Option<Result<T>>]) -> bool,
) -> Ran<T> {
    let mut outs: Vec<Option<Result<T>>> = rows.iter().map(|_| None).collect();
    let total_weight: f64 = rows.iter().map(|r| r.weight).sum();
    let start = watch.clock.map(|c| c.now());
    let mut last_report = start;
    let mut cx = Context::from_waker(Waker::noop());
    let mut done = 0usize;
    loop {
        let mut finished = false;
        let mut admitted = Vec::new();
        for (i, row) in rows.iter_mut().enumerate() {
            if admitted.len() >= cap {
                break;
            }
            if outs[i].is_some() {
                continue;
            }
            if row.caller.0.borrow().ask.is_none() {
                if let Poll::Ready(r) = row.fut.as_mut().poll(&mut cx) {
                    outs[i] = Some(r);
                    row.caller.reached(1.0);
                    done += 1;
                    finished = true;
                    continue;
                }
            }
            admitted.push(i);
        }
        // The finished rows may decide the answer (a refusal nothing can overtake, or the
        // last row): the rest are dropped after a last report.
        let over = (finished && settled(&outs)) || admitted.is_empty();
        let report = |watch: &mut StepWatch<'_>, rows: &[Row<'_, T>]| -> Result<()> {
            let Some(observe) = watch.progress.as_mut() else {
                return Ok(());
            };
            let work: f64 = rows
                .iter()
                .map(|r| r.weight * r.caller.0.borrow().reached)
                .sum();
            let fraction = if total_weight > 0.0 {
                (work / total_weight).min(1.0)
            } else {
                1.0
            };
            let elapsed = watch.clock.zip(start).map(|(c, s)| c.now() - s);
            observe(&StepProgress {
                rows_done: done,
                rows_total: rows.len(),
                fraction,
                elapsed_s: elapsed,
                remaining_s: elapsed
                    .filter(|_| fraction > 0.0)
                    .map(|e| e * (1.0 - fraction) / fraction),
            })
        };
        let now = watch.clock.map(|c| c.now());
        let due = matches!((now, last_report), (Some(n), Some(l)) if n - l >= REPORT_EVERY);
        if finished || due || over {
            last_report = now;
            if let Err(e) = report(watch, &rows) {
                if !over {
                    return Ran {
                        outs,
                        stopped: Some(e),
                    };
                }
            }
        }
        if over {
            return Ran {
                outs,
                stopped: None,
            };
        }
        if let Err(e) = serve(sys, &rows, &admitted, cap, cost) {
            return Ran {
                outs,
                stopped: Some(e),
            };
        }
    }
}

/// Which batch an item joins: steps of one exact length, or one guard's or reset's calls.
#[derive(PartialEq, Clone, Copy)]
enum Key {
    Step(u64),
    Guard(usize),
    Reset(usize),
}

/// The states of one batch key, and where each answer goes: (row among the admitted, item).
struct Group {
    key: Key,
    to: Vec<(usize, usize)>,
    xs: Vec<DVector<f64>>,
}

/// Every admitted row's items, moved out of its slot into one group per batch key; and a
/// reply per item, to be filled in.
fn gather<T>(
    sys: &dyn StepSystem,
    rows: &[Row<'_, T>],
    admitted: &[usize],
) -> (Vec<Group>, Vec<Vec<Reply>>) {
    let guards = sys.guard_count();
    let mut replies: Vec<Vec<Reply>> = Vec::with_capacity(admitted.len());
    let mut groups: Vec<Group> = Vec::new();
    let mut join = |key: Key, to: (usize, usize), x: DVector<f64>| match groups
        .iter_mut()
        .find(|g| g.key == key)
    {
        Some(g) => {
            g.to.push(to);
            g.xs.push(x);
        }
        None => groups.push(Group {
            key,
            to: vec![to],
            xs: vec![x],
        }),
    };
    for (a, &r) in admitted.iter().enumerate() {
        let items = rows[r].caller.0.borrow_mut().ask.take().unwrap_or_default();
        let mut out = Vec::with_capacity(items.len());
        for (k, item) in items.into_iter().enumerate() {
            match item {
                Item::Step(x, h) => {
                    join(Key::Step(h.to_bits()), (a, k), x);
                    out.push(Reply::State(DVector::zeros(0)));
                }
                Item::Guards(x) => {
                    for i in 0..guards {
                        join(Key::Guard(i), (a, k), x.clone());
                    }
                    out.push(Reply::Values(vec![f64::NAN; guards]));
                }
                Item::Guard(i, x) => {
                    join(Key::Guard(i), (a, k), x);
                    out.push(Reply::Value(f64::NAN));
                }
                Item::Reset(i, x) => {
                    join(Key::Reset(i), (a, k), x);
                    out.push(Reply::State(DVector::zeros(0)));
                }
            }
        }
        replies.push(out);
    }
    (groups, replies)
}

/// One round: every admitted row's items (moved out of its slot), grouped into batches of
/// at most `cap` states, called, and answered.
fn serve<T>(
    sys: &dyn StepSystem,
    rows: &[Row<'_, T>],
    admitted: &[usize],
    cap: usize,
    cost: &mut Cost,
) -> Result<()> {
    let (groups, mut replies) = gather(sys, rows, admitted);
    for g in groups {
        for (to, xs) in g.to.chunks(cap.max(1)).zip(g.xs.chunks(cap.max(1))) {
            let m = xs.len();
            let wrong = |what: &str, got: usize| FerroError::InvalidParameter {
                name: "batch",
                value: got as f64,
                limit: format!("the batched {what} must return one answer per state ({m})"),
            };
            match g.key {
                Key::Step(h) => {
                    cost.states += m as u64;
                    cost.calls += 1;
                    let ys = sys.step_batch(xs, f64::from_bits(h))?;
                    if ys.len() != m {
                        return Err(wrong("step", ys.len()));
                    }
                    for (&(a, k), y) in to.iter().zip(ys) {
                        replies[a][k] = Reply::State(y);
                    }
                }
                Key::Guard(i) => {
                    let gs = sys.guard_batch(i, xs)?;
                    if gs.len() != m {
                        return Err(wrong("guard", gs.len()));
                    }
                    for (&(a, k), g) in to.iter().zip(gs) {
                        match &mut replies[a][k] {
                            Reply::Values(v) => v[i] = g,
                            other => *other = Reply::Value(g),
                        }
                    }
                }
                Key::Reset(i) => {
                    let ys = sys.reset_batch(i, xs)?;
                    if ys.len() != m {
                        return Err(wrong("reset", ys.len()));
                    }
                    for (&(a, k), y) in to.iter().zip(ys) {
                        replies[a][k] = Reply::State(y);
                    }
                }
            }
        }
    }
    for (&r, reply) in admitted.iter().zip(replies) {
        rows[r].caller.0.borrow_mut().reply = Some(reply);
    }
    Ok(())
}
