//! Pieces no coordinate probe reached, measured along directions inside their cones as one
//! more batch of rows (see `black_box/measured.rs` for the measurement itself).

use super::*;

/// One piece to measure along directions inside its cone: which answer, its orders and
/// cone, the directions, and where its rows start (x0 ⊕ δ_k, then x0 ⊕ δ_k/2, per k).
struct Planned {
    answer: usize,
    orders: Vec<Vec<usize>>,
    cone: Vec<DVector<f64>>,
    deltas: Vec<DVector<f64>>,
    start: usize,
}

/// The pieces no coordinate probe reached (three or more orders' worth of simultaneous
/// events: a landing whose touchdowns and lift-offs are both simultaneous), measured along
/// directions inside each one's cone (`black_box/measured.rs`): n + 1 directions, each
/// probed at δ and δ/2 (a second-order one-sided difference), as one more batch of rows. A
/// cone empty to first order holds no piece. Ok(None) when every piece is measured; the
/// cause when the rows were stopped.
pub(crate) fn fill_missing(
    sys: &dyn StepSystem,
    s: &Setup,
    answers: &mut [Answer],
    found: &[Vec<Switch>],
    watch: &mut StepWatch<'_>,
    cost: &mut Cost,
) -> Result<Option<FerroError>> {
    let (plan, rows) = plan_missing(sys, s, answers, found);
    if rows.is_empty() {
        for a in answers.iter_mut() {
            a.pieces.enumerated = true;
        }
        return Ok(None);
    }
    let ran = rows::drive(sys, rows, sys.batch_rows(), watch, cost, |outs| {
        outs.iter().any(|o| matches!(o, Some(Err(_))))
    });
    if let Some(cause) = ran.stopped {
        return Ok(Some(cause));
    }
    take_measured(s, answers, plan, &ran.outs)?;
    Ok(None)
}

/// The rows of [`fill_missing`]: per unreached piece with a non-empty cone, its directions
/// inside the cone, each probed at δ and δ/2 at its answer's dt.
fn plan_missing<'a>(
    sys: &'a dyn StepSystem,
    s: &Setup<'a>,
    answers: &mut [Answer],
    found: &'a [Vec<Switch>],
) -> (Vec<Planned>, Vec<Row<'a, Run>>) {
    let (_, sizes) = probes(s.manifold, s.x0, s.opts.eps);
    let mut plan = Vec::new();
    let mut rows = Vec::new();
    for (a, answer) in answers.iter_mut().enumerate() {
        for (orders, cone) in std::mem::take(&mut answer.missing) {
            let Some(deltas) = measured::inside(&cone, &sizes) else {
                continue;
            };
            let o = StepOptions {
                dt: answer.dt,
                ..*s.opts
            };
            plan.push(Planned {
                answer: a,
                orders,
                cone,
                deltas: deltas.clone(),
                start: rows.len(),
            });
            for d in &deltas {
                for x in [
                    s.manifold.retract(s.x0, d),
                    s.manifold.retract(s.x0, &(0.5 * d)),
                ] {
                    let caller = Caller::default();
                    let link = Link {
                        sys,
                        manifold: s.manifold,
                        caller: caller.clone(),
                        switches: &found[a],
                    };
                    rows.push(Row {
                        fut: Box::pin(locate::row_run(link, x, s.t0, s.t1, o, false)),
                        caller,
                        weight: (s.t1 - s.t0) / o.dt,
                    });
                }
            }
        }
    }
    (plan, rows)
}

/// Each planned piece's matrix from its rows (every probe must cross the events in the
/// piece's orders, or the answer is refused as probe-dependent), added to its answer's.
fn take_measured(s: &Setup, answers: &mut [Answer], plan: Vec<Planned>, outs: &Outs) -> Result<()> {
    let mut added: Vec<Vec<Piece>> = answers.iter().map(|_| Vec::new()).collect();
    let mut whole = vec![true; answers.len()];
    for p in plan {
        let nominal = answers[p.answer].run;
        let base = s.manifold.chart(&nominal.x, &nominal.x);
        let mut ys = Vec::with_capacity(p.deltas.len());
        for k in 0..p.deltas.len() {
            let mut at = [nominal, nominal];
            for (h, end) in at.iter_mut().enumerate() {
                let Some(r) = row(outs, p.start + 2 * k + h)? else {
                    unreachable!("every row finished")
                };
                if !(measured::same_events(nominal, r) && measured::in_piece(nominal, &p.orders, r))
                {
                    return Err(FerroError::ProbeDependent {
                        probe: format!(
                            "a probe inside the cone of the orders {:?} crossed the events as {:?}",
                            p.orders, r.fired
                        ),
                        gap: f64::INFINITY,
                        tolerance: s.opts.probe_rtol,
                    });
                }
                *end = r;
            }
            let c = |r: &Run| s.manifold.chart(&nominal.x, &r.x) - &base;
            ys.push(4.0 * c(at[1]) - c(at[0]));
        }
        let Some(matrix) = measured::from_directions(&p.deltas, &ys) else {
            whole[p.answer] = false;
            continue;
        };
        added[p.answer].push(Piece {
            orders: p.orders,
            cone: p.cone,
            matrix,
        });
    }
    for ((a, more), whole) in answers.iter_mut().zip(added).zip(whole) {
        if a.run.groups.is_empty() {
            continue;
        }
        let mut list = std::mem::take(&mut a.pieces.list);
        list.extend(more);
        list.sort_by(|p, q| p.orders.cmp(&q.orders));
        a.pieces =
            crate::hybrid::Pieces::measured(list, a.pieces.largest_group, whole, s.opts.probe_rtol);
    }
    Ok(())
}
