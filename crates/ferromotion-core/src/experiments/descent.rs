//! Does a wrong gradient matter? Gradient descent through one impact.
//!
//! Choose the initial state θ = (h0, v0) so that the drop's state at T hits a target:
//!
//! ```text
//! L(θ) = ½·[(y(T) - y*)² + (T·(v(T) - v*))²]      (m²; the velocity error is weighted by T)
//! ```
//!
//! where x(T) is always the rigid `exact` model's (the true problem) and the target
//! (y*, v*) is that model's x(T) from a chosen θ*. Only the Jacobian J = dx(T)/dθ handed
//! to the step differs between arms: `exact`, `fixed` at several stiffnesses,
//! `tolerance`, `corrected`, and central differences of the true x(T) (the control,
//! probe 1e-6). The gradient is g = Jᵀ·W·r with the true residual r and W = diag(1, T²).
//!
//! Step rule, the same for every arm: Gauss–Newton with Armijo backtracking. The
//! direction is d = -(JᵀWJ)⁻¹·g (steepest descent, d = -g, if JᵀWJ is singular), the step
//! θ ← θ + α·d with α = 1, 1/2, 1/4, ... (at most 60 halvings) until
//! `L(θ + α·d) <= L(θ) + 1e-4·α·gᵀd`. A trial point that leaves the one-bounce region (no
//! impact before T, or a second one) is not downhill. A start "cannot step" when no α
//! passes on the very first iteration. (Plain steepest descent needs thousands of steps
//! in this valley even with the exact gradient: JᵀWJ has a condition number near 1e3.)
//!
//! The landscape is scanned on a grid first: the feasible (one-bounce) region, the
//! grid's minimum, and the starts (four grid points nearest the corners of the feasible
//! region shrunk by a tenth of the grid, so that no start has its impact at T).
//! "Converged" means |θ - θ*| < 1e-4 within 500 iterations.

use crate::error::{positive, FerroError, Result};
use crate::numeric::fd;
use crate::physics::contact::rigid::{exact, exact_with_impacts, ExactOptions};
use crate::physics::integrate::adaptive::{tolerance, ToleranceOptions};
use crate::physics::integrate::corrected::{corrected, CorrectedOptions};
use crate::physics::integrate::fixed::{fixed, FixedOptions};
use crate::physics::model::Drop;
use crate::physics::state::{Jacobian, State};
use serde::Serialize;

/// Distance to the optimum (m and m/s combined) below which a start has converged.
pub const CONVERGED: f64 = 1e-4;
/// Iteration cap per start.
pub const MAX_ITERATIONS: usize = 500;
/// Armijo sufficient-decrease constant.
pub const ARMIJO: f64 = 1e-4;
/// Most step halvings in one line search.
pub const MAX_HALVINGS: usize = 60;

/// Where a gradient comes from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(tag = "route", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arm {
    /// The rigid model's saltation Jacobian.
    Exact,
    /// The fixed-step autodiff tangent of the penalty model.
    Fixed {
        /// Stiffness, N/m.
        k: f64,
        /// Step, s.
        dt: f64,
    },
    /// Central differences of adaptive rollouts of the penalty model.
    Tolerance {
        /// Stiffness, N/m.
        k: f64,
        /// Relative tolerance.
        rtol: f64,
    },
    /// The fixed step with the contact switches located.
    Corrected {
        /// Stiffness, N/m.
        k: f64,
        /// Step, s.
        dt: f64,
    },
    /// Central differences of the true objective (the control), probe 1e-6.
    CentralDifferences,
}

impl Arm {
    /// A short label for tables.
    pub fn label(&self) -> String {
        match self {
            Arm::Exact => "exact".into(),
            Arm::Fixed { k, dt } => format!("fixed k={k:.0e} dt={dt:.0e}"),
            Arm::Tolerance { k, rtol } => format!("tolerance k={k:.0e} rtol={rtol:.0e}"),
            Arm::Corrected { k, dt } => format!("corrected k={k:.0e} dt={dt:.0e}"),
            Arm::CentralDifferences => "central differences".into(),
        }
    }

    /// The arms of the experiment: exact, fixed at 1e4/1e6/1e8, tolerance and corrected
    /// at 1e6, and the control.
    pub fn standard() -> Vec<Arm> {
        vec![
            Arm::Exact,
            Arm::Fixed { k: 1e4, dt: 1e-4 },
            Arm::Fixed { k: 1e6, dt: 1e-4 },
            Arm::Fixed { k: 1e8, dt: 1e-4 },
            Arm::Tolerance {
                k: 1e6,
                rtol: 1e-11,
            },
            Arm::Corrected { k: 1e6, dt: 1e-4 },
            Arm::CentralDifferences,
        ]
    }
}

/// The descent problem: a base drop (its T, g, m, zeta), the target's θ* and the grid.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Problem {
    /// Everything but (height, velocity) is taken from here.
    pub drop: Drop,
    /// θ* = (h*, v*) whose exact x(T) is the target.
    pub optimum: [f64; 2],
    /// Grid bounds for h0, m.
    pub height_range: [f64; 2],
    /// Grid bounds for v0, m/s.
    pub velocity_range: [f64; 2],
    /// Grid points per axis.
    pub grid: usize,
}

impl Default for Problem {
    fn default() -> Self {
        Problem {
            drop: Drop::default(),
            optimum: [1.0, 0.0],
            height_range: [0.4, 1.8],
            velocity_range: [-2.0, 2.0],
            grid: 41,
        }
    }
}

/// The scanned landscape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Landscape {
    /// Grid values of h0, m.
    pub heights: Vec<f64>,
    /// Grid values of v0, m/s.
    pub velocities: Vec<f64>,
    /// L at each grid point, row-major [i_height][i_velocity]; NaN where infeasible.
    pub loss: Vec<f64>,
    /// Grid point with the smallest L.
    pub grid_minimum: [f64; 2],
    /// Strict local minima of L on the grid (feasible points below all feasible neighbours).
    pub local_minima: usize,
    /// The four starts.
    pub starts: Vec<[f64; 2]>,
}

/// One start's descent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    /// θ after each accepted step, starting with the start.
    pub path: Vec<[f64; 2]>,
    /// Accepted steps.
    pub iterations: usize,
    /// Reached |θ - θ*| < 1e-4.
    pub converged: bool,
    /// No downhill step was possible on the first iteration.
    pub cannot_step: bool,
    /// Force evaluations spent on gradients.
    pub force_evals: u64,
    /// L at the end, m².
    pub final_loss: f64,
}

/// One arm over all starts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArmResult {
    /// The gradient's source.
    pub arm: Arm,
    /// Its label.
    pub label: String,
    /// One run per start.
    pub runs: Vec<Run>,
    /// Starts that converged.
    pub converged: usize,
    /// Starts that could not take a single step.
    pub cannot_step: usize,
    /// Accepted steps summed over starts.
    pub iterations: usize,
    /// Force evaluations summed over starts.
    pub force_evals: u64,
}

/// The experiment's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Descent {
    /// The problem.
    pub problem: Problem,
    /// The target x(T) = (y*, v*).
    pub target: [f64; 2],
    /// The scanned landscape.
    pub landscape: Landscape,
    /// One entry per arm.
    pub arms: Vec<ArmResult>,
}

impl Problem {
    fn drop_at(&self, theta: [f64; 2]) -> Drop {
        self.drop.with_x0(&State::new(theta[0], theta[1]))
    }

    /// x(T) of the rigid model from θ, or `None` outside the one-bounce region.
    fn state(&self, theta: [f64; 2]) -> Option<State> {
        if theta[0].is_nan() || theta[0] <= 0.0 || !theta[1].is_finite() {
            return None;
        }
        match exact_with_impacts(&self.drop_at(theta), &ExactOptions::default()) {
            Ok((r, impacts)) if impacts.len() == 1 => Some(r.state),
            _ => None,
        }
    }

    fn weights(&self) -> State {
        State::new(1.0, self.drop.t_final * self.drop.t_final)
    }

    /// The true objective L(θ), m²; `None` outside the one-bounce region.
    pub fn loss(&self, theta: [f64; 2], target: &State) -> Option<f64> {
        let r = self.state(theta)? - target;
        Some(0.5 * r.component_mul(&self.weights()).dot(&r))
    }

    /// The target state.
    pub fn target(&self) -> Result<State> {
        self.state(self.optimum)
            .ok_or(FerroError::InvalidParameter {
                name: "optimum",
                value: self.optimum[0],
                limit: "θ* must bounce exactly once before T".into(),
            })
    }

    /// Scan the landscape and pick the starts.
    pub fn scan(&self, target: &State) -> Result<Landscape> {
        if self.grid < 3 {
            return Err(FerroError::InvalidParameter {
                name: "grid",
                value: self.grid as f64,
                limit: "needs at least 3 points per axis".into(),
            });
        }
        let axis = |r: [f64; 2]| -> Vec<f64> {
            (0..self.grid)
                .map(|i| r[0] + (r[1] - r[0]) * i as f64 / (self.grid - 1) as f64)
                .collect()
        };
        let heights = axis(self.height_range);
        let velocities = axis(self.velocity_range);
        let n = self.grid;
        let mut loss = vec![f64::NAN; n * n];
        for (i, &h) in heights.iter().enumerate() {
            for (j, &v) in velocities.iter().enumerate() {
                if let Some(l) = self.loss([h, v], target) {
                    loss[i * n + j] = l;
                }
            }
        }
        let feasible: Vec<(usize, usize)> = (0..n * n)
            .filter(|&p| !loss[p].is_nan())
            .map(|p| (p / n, p % n))
            .collect();
        if feasible.len() < 4 {
            return Err(FerroError::InvalidParameter {
                name: "grid",
                value: feasible.len() as f64,
                limit: "fewer than 4 feasible (one-bounce) grid points".into(),
            });
        }
        let best = feasible
            .iter()
            .min_by(|a, b| loss[a.0 * n + a.1].total_cmp(&loss[b.0 * n + b.1]))
            .copied()
            .unwrap_or((0, 0));
        let local_minima = local_minima(&loss, n, &feasible);
        let starts = starts(&loss, n, &feasible, best)
            .iter()
            .map(|p| [heights[p.0], velocities[p.1]])
            .collect();
        Ok(Landscape {
            grid_minimum: [heights[best.0], velocities[best.1]],
            heights,
            velocities,
            loss,
            local_minima,
            starts,
        })
    }

    /// The arm's Jacobian dx(T)/dθ at θ and the force evaluations it cost.
    fn jacobian(&self, arm: &Arm, theta: [f64; 2]) -> Result<(Jacobian, u64)> {
        let drop = self.drop_at(theta);
        Ok(match *arm {
            Arm::Exact => (exact(&drop, &ExactOptions::default())?.jacobian, 0),
            Arm::Fixed { k, dt } => {
                let f = fixed(&drop, k, dt, &FixedOptions::default())?;
                (f.jacobian, f.cost.force_evals)
            }
            Arm::Tolerance { k, rtol } => {
                let t = tolerance(
                    &drop,
                    k,
                    &ToleranceOptions {
                        rtol,
                        ..Default::default()
                    },
                )?;
                (t.jacobian, t.cost.force_evals)
            }
            Arm::Corrected { k, dt } => {
                let c = corrected(&drop, k, dt, &CorrectedOptions::default())?;
                (c.jacobian, c.cost.force_evals)
            }
            Arm::CentralDifferences => {
                // A probe that leaves the one-bounce region leaves its column NaN.
                let mut j = Jacobian::from_element(f64::NAN);
                let map = |x: &State| self.state([x[0], x[1]]).ok_or(());
                let at = State::new(theta[0], theta[1]);
                for i in 0..2 {
                    if let Ok(col) = fd::central_column(map, &at, i, fd::Probe::Absolute(1e-6)) {
                        j.set_column(i, &col);
                    }
                }
                (j, 0)
            }
        })
    }

    /// Descend from `start` with the arm's gradient.
    pub fn run(&self, arm: &Arm, start: [f64; 2], target: &State) -> Result<Run> {
        let mut theta = start;
        let mut path = vec![theta];
        let mut evals = 0;
        let mut cannot_step = false;
        let mut l = self
            .loss(theta, target)
            .ok_or(FerroError::InvalidParameter {
                name: "start",
                value: start[0],
                limit: "outside the one-bounce region".into(),
            })?;
        let dist = |t: [f64; 2]| {
            ((t[0] - self.optimum[0]).powi(2) + (t[1] - self.optimum[1]).powi(2)).sqrt()
        };
        for it in 0..MAX_ITERATIONS {
            if dist(theta) < CONVERGED {
                break;
            }
            let (j, e) = self.jacobian(arm, theta)?;
            evals += e;
            let r = self
                .state(theta)
                .map(|x| x - target)
                .unwrap_or(State::from_element(f64::NAN));
            let wm = Jacobian::from_diagonal(&self.weights());
            let g = j.transpose() * wm * r;
            let d = (j.transpose() * wm * j)
                .try_inverse()
                .map_or(-g, |h| -(h * g));
            let slope = g.dot(&d);
            let mut alpha = 1.0;
            let mut accepted = None;
            if slope.is_finite() && slope < 0.0 {
                for _ in 0..=MAX_HALVINGS {
                    let trial = [theta[0] + alpha * d[0], theta[1] + alpha * d[1]];
                    if let Some(lt) = self.loss(trial, target) {
                        if lt <= l + ARMIJO * alpha * slope {
                            accepted = Some((trial, lt));
                            break;
                        }
                    }
                    alpha *= 0.5;
                }
            }
            match accepted {
                Some((t, lt)) => {
                    theta = t;
                    l = lt;
                    path.push(theta);
                }
                None => {
                    cannot_step = it == 0;
                    break;
                }
            }
        }
        Ok(Run {
            iterations: path.len() - 1,
            converged: dist(theta) < CONVERGED,
            cannot_step,
            force_evals: evals,
            final_loss: l,
            path,
        })
    }
}

/// Run the whole experiment: scan, then every arm from every start.
pub fn descent(problem: &Problem, arms: &[Arm]) -> Result<Descent> {
    problem.drop.validate()?;
    positive(
        "height_range span",
        problem.height_range[1] - problem.height_range[0],
    )?;
    positive(
        "velocity_range span",
        problem.velocity_range[1] - problem.velocity_range[0],
    )?;
    let target = problem.target()?;
    let landscape = problem.scan(&target)?;
    let mut results = Vec::with_capacity(arms.len());
    for arm in arms {
        let runs = landscape
            .starts
            .iter()
            .map(|&s| problem.run(arm, s, &target))
            .collect::<Result<Vec<_>>>()?;
        results.push(ArmResult {
            arm: *arm,
            label: arm.label(),
            converged: runs.iter().filter(|r| r.converged).count(),
            cannot_step: runs.iter().filter(|r| r.cannot_step).count(),
            iterations: runs.iter().map(|r| r.iterations).sum(),
            force_evals: runs.iter().map(|r| r.force_evals).sum(),
            runs,
        });
    }
    Ok(Descent {
        problem: *problem,
        target: [target[0], target[1]],
        landscape,
        arms: results,
    })
}

/// Grid points of the n x n `loss` (NaN: infeasible) at or below none of their feasible
/// neighbours (8-connected): the landscape's local minima.
fn local_minima(loss: &[f64], n: usize, feasible: &[(usize, usize)]) -> usize {
    let mut local_minima = 0;
    for &(i, j) in feasible {
        let l = loss[i * n + j];
        let mut lowest = true;
        for (di, dj) in [
            (-1i64, 0i64),
            (1, 0),
            (0, -1),
            (0, 1),
            (-1, -1),
            (-1, 1),
            (1, -1),
            (1, 1),
        ] {
            let (a, b) = (i as i64 + di, j as i64 + dj);
            if a < 0 || b < 0 || a >= n as i64 || b >= n as i64 {
                continue;
            }
            let m = loss[a as usize * n + b as usize];
            if !m.is_nan() && m <= l {
                lowest = false;
            }
        }
        if lowest {
            local_minima += 1;
        }
    }
    local_minima
}

/// The four starts, as grid indices: interior points (every grid point within a margin of
/// cells is feasible, so no start sits on an impact at T or a second bounce at T), the four
/// nearest the corners of the interior's bounding box, so that they spread over the basin
/// (all feasible points when fewer than 4 are interior; `best` if none is nearer).
fn starts(
    loss: &[f64],
    n: usize,
    feasible: &[(usize, usize)],
    best: (usize, usize),
) -> Vec<(usize, usize)> {
    let margin = (n / 10).max(1) as i64;
    let interior: Vec<(usize, usize)> = feasible
        .iter()
        .copied()
        .filter(|&(i, j)| {
            (-margin..=margin).all(|di| {
                (-margin..=margin).all(|dj| {
                    let (a, b) = (i as i64 + di, j as i64 + dj);
                    a >= 0
                        && b >= 0
                        && a < n as i64
                        && b < n as i64
                        && !loss[a as usize * n + b as usize].is_nan()
                })
            })
        })
        .collect();
    let pool = if interior.len() >= 4 {
        &interior[..]
    } else {
        feasible
    };
    let (imin, imax) = pool
        .iter()
        .fold((n, 0), |a, p| (a.0.min(p.0), a.1.max(p.0)));
    let (jmin, jmax) = pool
        .iter()
        .fold((n, 0), |a, p| (a.0.min(p.1), a.1.max(p.1)));
    [(imin, jmin), (imin, jmax), (imax, jmin), (imax, jmax)]
        .iter()
        .map(|&(ci, cj)| {
            pool.iter()
                .min_by_key(|p| (p.0 as i64 - ci as i64).pow(2) + (p.1 as i64 - cj as i64).pow(2))
                .copied()
                .unwrap_or(best)
        })
        .collect()
}
