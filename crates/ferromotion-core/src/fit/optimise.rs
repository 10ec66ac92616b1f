//! Levenberg–Marquardt with a bounded step, and the continuation over the horizon of a fit
//! whose χ² is inconsistent with the noise.

use super::observations::Observations;
use super::options::FitOptions;
use super::params::Param;
use super::problem::{Counters, Eval, FitProblem};
use super::report::{chi2_limit, Continuation, Iteration, Status};
use crate::error::Result;
use crate::physics::model::Drop;
use nalgebra::{DMatrix, DVector};

/// Where a Levenberg–Marquardt run ended.
pub(super) struct Minimum {
    pub(super) z: Vec<f64>,
    pub(super) cost: f64,
    pub(super) eval: Eval,
    pub(super) status: Status,
}

/// Levenberg–Marquardt (Marquardt's diagonal scaling) on Φ from `z` (`cur`: its
/// evaluation), the coordinate `held` (if any) kept where it is: its row and column of the
/// normal equations are decoupled and its gradient entry zeroed, so its step is exactly 0.
/// `record` receives every iteration.
pub(super) fn levenberg_marquardt(
    problem: &FitProblem,
    mut z: Vec<f64>,
    mut cur: Eval,
    held: Option<usize>,
    opts: &FitOptions,
    counters: &mut Counters,
    record: &mut dyn FnMut(Iteration),
) -> Result<Minimum> {
    let mut cost = 0.5 * cur.r.norm_squared();
    let mut lambda = 1e-3;
    let mut status = Status::MaxIterations;
    for it in 1..=opts.max_iterations {
        let (a, g, diag, dmax) = normal_equations(&cur, held);
        let mut accepted = None;
        while lambda < 1e16 {
            let Some(step) =
                bounded_step(&a, &g, &diag, lambda, &problem.layout.params, opts.max_step)
            else {
                lambda *= 10.0;
                continue;
            };
            let trial: Vec<f64> = z.iter().zip(step.iter()).map(|(a, b)| a + b).collect();
            match problem.cost(&trial, &mut counters.evaluations) {
                Ok(c) if c < cost => {
                    accepted = Some((trial, c, step.amax()));
                    break;
                }
                _ => lambda *= 10.0,
            }
        }
        let gradient_norm = g.amax();
        let Some((trial, c, step_norm)) = accepted else {
            record(Iteration {
                iteration: it,
                cost,
                lambda,
                theta: problem.theta(&z),
                gradient_norm,
                step_norm: 0.0,
                accepted: false,
                evaluations: counters.evaluations,
                wall_s: None,
            });
            // No damping finds a lower Φ. At a minimum (to the precision of Φ and of S) the
            // Gauss–Newton model itself promises no decrease worth having; a route whose
            // gradient does not point downhill promises one and cannot deliver it.
            status = if promised_decrease(a, &g, dmax) <= 1e3 * opts.ftol * cost.max(1.0) {
                Status::Converged
            } else {
                Status::Stalled
            };
            break;
        };
        let drop_frac = (cost - c) / cost.max(f64::MIN_POSITIVE);
        z = trial;
        cost = c;
        cur = problem.eval(&z, &mut counters.evaluations, &mut counters.halved)?;
        record(Iteration {
            iteration: it,
            cost,
            lambda,
            theta: problem.theta(&z),
            gradient_norm,
            step_norm,
            accepted: true,
            evaluations: counters.evaluations,
            wall_s: None,
        });
        lambda = (lambda * 0.1).max(1e-12);
        if drop_frac < opts.ftol || step_norm < opts.xtol {
            status = Status::Converged;
            break;
        }
    }
    Ok(Minimum {
        z,
        cost,
        eval: cur,
        status,
    })
}

/// The Gauss–Newton normal equations at `cur`: A = SᵀS and g = Sᵀr with the coordinate
/// `held` (if any) decoupled (its row and column zeroed, its diagonal 1, its gradient entry
/// 0), Marquardt's diagonal scaling D (A's diagonal floored at 1e-12 of its largest free
/// entry) and that largest entry.
fn normal_equations(
    cur: &Eval,
    held: Option<usize>,
) -> (DMatrix<f64>, DVector<f64>, Vec<f64>, f64) {
    let np = cur.s.ncols();
    let mut a = cur.s.transpose() * &cur.s;
    let mut g = cur.s.transpose() * &cur.r;
    if let Some(j) = held {
        for i in 0..np {
            a[(i, j)] = 0.0;
            a[(j, i)] = 0.0;
        }
        a[(j, j)] = 1.0;
        g[j] = 0.0;
    }
    let dmax = (0..np)
        .filter(|&j| Some(j) != held)
        .map(|j| a[(j, j)])
        .fold(0.0_f64, f64::max);
    let diag: Vec<f64> = (0..np)
        .map(|j| a[(j, j)].max(1e-12 * dmax).max(1e-300))
        .collect();
    (a, g, diag, dmax)
}

/// The decrease of Φ the Gauss–Newton model promises from here, ½·gᵀA⁺g (A's
/// pseudo-inverse cut at 1e-14 of its largest diagonal entry; infinite when it fails).
fn promised_decrease(a: DMatrix<f64>, g: &DVector<f64>, dmax: f64) -> f64 {
    a.pseudo_inverse(1e-14 * dmax)
        .map(|inv| 0.5 * g.dot(&(inv * g)))
        .unwrap_or(f64::INFINITY)
}

/// The damped Gauss–Newton step (AᵀA + λ·D) d = −g with every log coordinate's change
/// bounded by `max_step`: the minimiser of the damped model subject to |d_j| ≤ max_step. A
/// coordinate past its bound gets its own multiplier μ_j on the diagonal (the Lagrange
/// multiplier of its constraint), raised until the step keeps within the bound, so the
/// constraint shortens that coordinate's step alone: raising λ instead shortens every
/// coordinate's, and a column the data barely see (k while no sample is in contact, whose
/// Gauss–Newton step is decades long) then stalls the well-seen ones for as many iterations
/// as it keeps pulling. Steps within the bound are the plain damped step, bit for bit.
/// `None` when the damped matrix is not positive definite or no multiplier bounds the step.
pub(super) fn bounded_step(
    a: &DMatrix<f64>,
    g: &DVector<f64>,
    diag: &[f64],
    lambda: f64,
    params: &[Param],
    max_step: f64,
) -> Option<DVector<f64>> {
    let np = g.len();
    let mut mu = vec![0.0_f64; np];
    for _ in 0..64 {
        let mut m = a.clone();
        for j in 0..np {
            m[(j, j)] += lambda * diag[j];
            if mu[j] > 0.0 {
                m[(j, j)] += mu[j];
            }
        }
        let d: Vec<f64> = (0..np).map(|j| m[(j, j)]).collect();
        let step = m.cholesky()?.solve(&(-g));
        let mut within = true;
        for (j, p) in params.iter().enumerate() {
            let over = step[j].abs() / max_step;
            if p.is_log() && over > 1.0 {
                within = false;
                // For a decoupled coordinate the step is g_j over its diagonal: scaling the
                // diagonal by the overshoot (and a margin) brings it to the bound; coupling
                // to the others makes this a guess, so the loop checks again.
                mu[j] += d[j] * (over * 1.0625 - 1.0);
            }
        }
        if within {
            return Some(step);
        }
    }
    None
}

/// The continuation of a fit whose χ² is inconsistent with the noise ([`Continuation`]):
/// the first half of the samples from the start, then all of them. Returns the receipt and,
/// when its Φ is below the direct fit's and it converged, its minimum (`record` got the last
/// stage's iterations). A stage the model refuses ends it with the direct fit kept.
pub(super) fn continue_over_horizon(
    guess: &Drop,
    obs: &Observations,
    opts: &FitOptions,
    problem: &FitProblem,
    direct: &Minimum,
    counters: &mut Counters,
    record: &mut dyn FnMut(Iteration),
) -> (Continuation, Option<Minimum>) {
    let n = obs.t.len();
    let first = n.div_ceil(2);
    let mut receipt = Continuation {
        samples: vec![first, n],
        cost_direct: direct.cost,
        cost: None,
        adopted: false,
        note: String::new(),
    };
    let prefix = |v: &Option<Vec<f64>>| v.as_ref().map(|v| v[..first].to_vec());
    let half = Observations {
        t: obs.t[..first].to_vec(),
        y: prefix(&obs.y),
        v: prefix(&obs.v),
        mask_y: obs.mask_y.as_ref().map(|m| m[..first].to_vec()),
        mask_v: obs.mask_v.as_ref().map(|m| m[..first].to_vec()),
        ..obs.clone()
    };
    let staged = (|| -> Result<Minimum> {
        let p = FitProblem::new(guess, &half, opts)?;
        let z = p.start();
        let e = p.eval(&z, &mut counters.evaluations, &mut counters.halved)?;
        let m = levenberg_marquardt(&p, z, e, None, opts, counters, &mut |_| {})?;
        let e = problem.eval(&m.z, &mut counters.evaluations, &mut counters.halved)?;
        levenberg_marquardt(problem, m.z, e, None, opts, counters, record)
    })();
    match staged {
        Err(e) => receipt.note = format!("a stage failed, the direct fit is kept: {e}"),
        Ok(m) => {
            receipt.cost = Some(m.cost);
            if m.status == Status::Converged && m.cost < direct.cost {
                receipt.adopted = true;
                receipt.note =
                    "the continuation's minimum is lower: it replaces the direct fit's".into();
                return (receipt, Some(m));
            }
            receipt.note = if m.status != Status::Converged {
                "the continuation did not converge: the direct fit is kept".into()
            } else {
                "the continuation's minimum is not lower: the direct fit is kept".into()
            };
        }
    }
    (receipt, None)
}

/// The continuation phase of [`fit`]: a converged minimum whose χ² is inconsistent with the
/// data (above the 99.9% limit at `dof`) is refitted over a growing horizon
/// ([`continue_over_horizon`]); the better minimum is kept, and its iterations are appended to
/// `iterations`, numbered after the direct fit's.
pub(super) fn after_local_minimum(
    (guess, obs, opts, problem): (&Drop, &Observations, &FitOptions, &FitProblem),
    min: Minimum,
    dof: i64,
    counters: &mut Counters,
    iterations: &mut Vec<Iteration>,
    since: &dyn Fn() -> Option<f64>,
) -> (Minimum, Option<Continuation>) {
    if !(opts.continuation && min.status == Status::Converged && 2.0 * min.cost > chi2_limit(dof)) {
        return (min, None);
    }
    let mut staged = Vec::new();
    let (c, better) = continue_over_horizon(
        guess,
        obs,
        opts,
        problem,
        &min,
        counters,
        &mut |it: Iteration| staged.push(it),
    );
    let Some(better) = better else {
        return (min, Some(c));
    };
    let offset = iterations.len() - 1;
    for mut it in staged {
        it.iteration += offset;
        it.wall_s = since();
        iterations.push(it);
    }
    (better, Some(c))
}
