//! What finished before the driver stopped (Ctrl-C, an observer's error, a failed batch
//! call): per step size, x(t1) and the J columns whose probes finished, and a summary in words.

use super::*;

/// One step size's finished rows: x(t1) and the columns whose ±eps probes finished.
pub(crate) fn partial_pass(outs: &Outs, s: &Setup, p: &PassLayout, n: usize) -> PartialPass {
    let per_pass = 1 + 2 * n * if p.halves { 2 } else { 1 };
    let mine = &outs[p.start..p.start + per_pass];
    let refused = mine
        .iter()
        .find_map(|o| o.as_ref().and_then(|r| r.as_ref().err().cloned()));
    let nominal = mine[0].as_ref().and_then(|r| r.as_ref().ok());
    let mut jacobian = DMatrix::from_element(n, n, f64::NAN);
    let mut columns = Vec::new();
    if let Some(nominal) = nominal {
        let (_, sizes) = probes(s.manifold, s.x0, s.opts.eps);
        for (j, &size) in sizes.iter().enumerate() {
            let end = |k: usize| {
                mine[1 + 2 * j + k]
                    .as_ref()
                    .and_then(|r| r.as_ref().ok())
                    .filter(|r| r.fired == nominal.fired && nominal.groups.is_empty())
            };
            if let (Some(a), Some(b)) = (end(0), end(1)) {
                jacobian.set_column(j, &column(s.manifold, &nominal.x, &a.x, &b.x, size));
                columns.push(j);
            }
        }
    }
    PartialPass {
        dt: p.dt,
        x: nominal.map(|r| r.x.clone()),
        jacobian,
        columns,
        unfinished: mine.iter().filter(|o| o.is_none()).count(),
        refused,
    }
}

pub(crate) fn partial(
    cause: FerroError,
    split_residual: Option<f64>,
    passes: &[PartialPass],
    outs: &Outs,
    cost: &Cost,
) -> StepPartial {
    let mut p = StepPartial {
        cause,
        split_residual,
        passes: passes.to_vec(),
        rows_done: outs.iter().filter(|o| o.is_some()).count(),
        rows_total: outs.len(),
        step_calls: cost.states,
        batch_calls: cost.calls,
        summary: String::new(),
    };
    p.summary = summary(&p);
    p
}

/// What finished and what did not, in words.
pub(crate) fn summary(p: &StepPartial) -> String {
    let mut s = format!(
        "stopped ({}) after {} of {} rows",
        p.cause, p.rows_done, p.rows_total
    );
    if p.split_residual.is_none() {
        s.push_str(": the hidden-state measurement did not finish; nothing else ran");
        return s;
    }
    for pass in &p.passes {
        let n = pass.jacobian.ncols();
        s.push_str(&format!("; at dt = {:e} s: ", pass.dt));
        s.push_str(match pass.x {
            Some(_) => "x(t1) finished",
            None => "x(t1) did not finish",
        });
        s.push_str(&format!(
            ", J columns {:?} of {n} finished at eps (not checked against eps/2), {} rows not finished",
            pass.columns, pass.unfinished
        ));
        if let Some(e) = &pass.refused {
            s.push_str(&format!(" (a finished row was refused: {e})"));
        }
    }
    s
}
