//! Simultaneous events and the pieces of the derivative (the Bouligand derivative of a
//! piecewise-differentiable flow: Council, Revzen & Burden).
//!
//! When several guards reach zero at one instant (a ball at a V-groove's vertex, a rod landing
//! flat, the diagonal feet of a trot), a perturbation d of x(t0) decides the order in which
//! they are crossed: guard i is crossed first-order earlier by
//! `δτ_i = a_i·d`, `a_i = -(∇g_iᵀ·Φ)/(∇g_i·f-)` (Φ the flow Jacobian up to the event, f- the
//! flow before it). Each order σ holds on the cone `a_σ1·d <= a_σ2·d <= ...` and gives its own
//! matrix: the saltation matrices composed in that order. [`fire_group`] enumerates the orders
//! (up to [`MAX_ENUMERATED`] simultaneous events), applies the resets in each order (sequential
//! law: the order's guards fire in turn while their guard is approaching), and compares what the
//! orders give:
//!
//! - different states: no derivative exists at all: refused as [`FerroError::SetValued`];
//! - one state, different matrices: the flow is continuous but not C¹; the pieces and the
//!   directional derivative remain ([`Pieces::jvp`]), the Jacobian is refused
//!   ([`Pieces::jacobian`], [`FerroError::NotDifferentiable`]);
//! - one state, matrices within tolerance: C¹ (the switches commuted): the Jacobian.
//!
//! The decision is made on what the orders give, never on a system's parameters.

use nalgebra::{DMatrix, DVector};

use super::locate::event_at;
use super::{HybridEvent, HybridSystem};
use crate::error::{FerroError, Result};

/// The most simultaneous events whose orders are enumerated (3! = 6 orders); beyond, only
/// the directional derivative along a given d, by ordering the events along d
/// ([`super::hybrid_jvp`]).
pub const MAX_ENUMERATED: usize = 3;

/// Impacts the sequential law may apply at one instant before it is refused.
const MAX_SEQUENTIAL: usize = 256;

/// One linear piece of dx(t1)/dx(t0).
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    /// Per simultaneous group met (in time order), the order its guards were crossed in
    /// (guard indices, first crossed first). Empty when no events were simultaneous.
    pub orders: Vec<Vec<usize>>,
    /// The cone of perturbations d of x(t0) this piece holds for: every row r has r·d <= 0
    /// (empty: every d).
    pub cone: Vec<DVector<f64>>,
    /// The matrix: dx(t1) = matrix·d for d in the cone.
    pub matrix: DMatrix<f64>,
}

impl Piece {
    /// How far d is outside the cone: max(0, max_r r·d/|r|) (0 inside).
    pub fn outside(&self, d: &DVector<f64>) -> f64 {
        self.cone
            .iter()
            .map(|r| {
                let norm = r.norm();
                if norm > 0.0 {
                    r.dot(d) / norm
                } else {
                    0.0
                }
            })
            .fold(0.0_f64, f64::max)
    }
}

/// The pieces of a hybrid flow's derivative, and whether they agree.
#[derive(Debug, Clone, PartialEq)]
pub struct Pieces {
    /// Every piece (one when no events were simultaneous).
    pub list: Vec<Piece>,
    /// False when a group had more than [`MAX_ENUMERATED`] simultaneous events: its orders
    /// were not enumerated, and only the JVP along a given d is available
    /// ([`super::hybrid_jvp`]).
    pub enumerated: bool,
    /// Largest simultaneous group met (0 or 1: none).
    pub largest_group: usize,
    /// max |M_a - M_b| over pairs of pieces (0 with one piece).
    pub largest_difference: f64,
    /// The pieces agree when `largest_difference` is at most this: `probe_rtol·max(1, max|M|)`.
    pub tolerance: f64,
}

impl Pieces {
    /// One piece holding for every d: a smooth flow's Jacobian.
    pub fn one(matrix: &DMatrix<f64>) -> Pieces {
        Pieces {
            list: vec![Piece {
                orders: Vec::new(),
                cone: Vec::new(),
                matrix: matrix.clone(),
            }],
            enumerated: true,
            largest_group: 0,
            largest_difference: 0.0,
            tolerance: 0.0,
        }
    }

    /// The pieces from their matrices, orders and cones, with their agreement measured.
    pub fn measured(list: Vec<Piece>, largest_group: usize, enumerated: bool, rtol: f64) -> Pieces {
        let mut largest_difference = 0.0_f64;
        let mut scale = 1.0_f64;
        for (k, a) in list.iter().enumerate() {
            scale = scale.max(a.matrix.amax());
            for b in &list[k + 1..] {
                largest_difference = largest_difference.max((&a.matrix - &b.matrix).amax());
            }
        }
        Pieces {
            list,
            enumerated,
            largest_group,
            largest_difference,
            tolerance: rtol.max(f64::EPSILON) * scale,
        }
    }

    /// Whether one Jacobian represents the derivative: every order enumerated and the pieces
    /// within tolerance of each other (the switches commuted).
    pub fn agree(&self) -> bool {
        self.enumerated && self.largest_difference <= self.tolerance
    }

    /// Whether the events met commuted: simultaneous events were met and their orders gave
    /// one matrix.
    pub fn commuted(&self) -> bool {
        self.largest_group > 1 && self.agree()
    }

    /// The Jacobian when the pieces agree; otherwise [`FerroError::NotDifferentiable`] naming
    /// the pieces and their largest difference.
    pub fn jacobian(&self) -> Result<&DMatrix<f64>> {
        if self.agree() {
            return Ok(&self.list[0].matrix);
        }
        Err(FerroError::NotDifferentiable {
            pieces: self.list.len(),
            orders: self.orders_said(),
            largest_difference: self.largest_difference,
            tolerance: self.tolerance,
            enumerated: self.enumerated,
        })
    }

    /// The orders of every piece in words (`[0, 1] | [1, 0]`).
    pub fn orders_said(&self) -> String {
        if !self.enumerated {
            return format!(
                "not enumerated: {} events at one instant, more than {MAX_ENUMERATED}",
                self.largest_group
            );
        }
        self.list
            .iter()
            .map(|p| {
                p.orders
                    .iter()
                    .map(|o| format!("{o:?}"))
                    .collect::<Vec<_>>()
                    .join(" then ")
            })
            .collect::<Vec<_>>()
            .join(" | ")
    }

    /// The piece whose cone holds d (on a boundary, the first of those it touches; d
    /// outside every cone by round-off: the nearest).
    pub fn piece_for(&self, d: &DVector<f64>) -> Result<&Piece> {
        if !self.enumerated {
            return Err(FerroError::NotDifferentiable {
                pieces: self.list.len(),
                orders: self.orders_said(),
                largest_difference: f64::NAN,
                tolerance: self.tolerance,
                enumerated: false,
            });
        }
        let n = self.list[0].matrix.ncols();
        if d.len() != n || d.iter().any(|v| !v.is_finite()) {
            return Err(FerroError::InvalidParameter {
                name: "d",
                value: d.len() as f64,
                limit: format!("must hold {n} finite numbers (a perturbation of x(t0))"),
            });
        }
        let scale = d.amax().max(f64::MIN_POSITIVE);
        let mut best = &self.list[0];
        let mut best_out = f64::INFINITY;
        for p in &self.list {
            let out = p.outside(d) / scale;
            if out < best_out {
                best_out = out;
                best = p;
            }
            if out <= 0.0 {
                break;
            }
        }
        Ok(best)
    }

    /// The directional derivative along d: the matrix of the piece holding d, times d.
    pub fn jvp(&self, d: &DVector<f64>) -> Result<DVector<f64>> {
        Ok(&self.piece_for(d)?.matrix * d)
    }
}

/// The branches a run carries: one per combination of orders of the groups met so far, each
/// with its block of n columns in the flow Jacobian.
#[derive(Debug, Clone, Default)]
pub(super) struct Branch {
    pub orders: Vec<Vec<usize>>,
    pub cone: Vec<DVector<f64>>,
}

/// What firing a simultaneous group gave: the common new mode and state, the new Jacobian
/// blocks (one per branch and order), the new branches, and the events of the first order.
pub(super) struct Fired {
    pub mode: usize,
    pub x: DVector<f64>,
    pub phi: DMatrix<f64>,
    pub branches: Vec<Branch>,
    pub events: Vec<HybridEvent>,
}

/// Every order of `group` (all permutations, in lexicographic order of positions).
pub(crate) fn permutations(group: &[usize]) -> Vec<Vec<usize>> {
    if group.len() <= 1 {
        return vec![group.to_vec()];
    }
    let mut out = Vec::new();
    for (k, &first) in group.iter().enumerate() {
        let rest: Vec<usize> = group
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != k)
            .map(|(_, &g)| g)
            .collect();
        for mut tail in permutations(&rest) {
            tail.insert(0, first);
            out.push(tail);
        }
    }
    out
}

/// What one order gave: the new mode, the state, the composed saltation matrix, the events.
pub(super) type Applied = (usize, DVector<f64>, DMatrix<f64>, Vec<HybridEvent>);

/// The resets of `order` applied at one instant from `xm` in `mode` by the sequential law:
/// the order's guards fire in turn, each while its guard is approaching (∇g·f < 0 in the
/// current mode; the first always), until a pass fires none. The new mode, state, the
/// composed saltation matrix and the events.
pub(super) fn apply_order(
    sys: &dyn HybridSystem,
    (mode, xm): (usize, &DVector<f64>),
    order: &[usize],
    t: f64,
    graze_speed: f64,
) -> Result<Applied> {
    let n = xm.len();
    let (mut m, mut x, mut xi) = (mode, xm.clone(), DMatrix::identity(n, n));
    let mut events: Vec<HybridEvent> = Vec::new();
    while events.len() < MAX_SEQUENTIAL {
        let before = events.len();
        for &i in order {
            if i >= sys.guard_count(m) {
                continue;
            }
            let speed = sys.guard_gradient(m, i, &x).dot(&sys.rhs(m, &x));
            if !events.is_empty() && !(speed < 0.0) {
                continue;
            }
            let (event, xp, salt) = event_at(sys, m, i, &x, t, graze_speed)?;
            m = event.mode_after;
            x = xp;
            xi = salt * xi;
            events.push(event);
        }
        if events.len() == before {
            return Ok((m, x, xi, events));
        }
    }
    Err(FerroError::TooManySteps {
        route: "hybrid_jacobian",
        max_steps: MAX_SEQUENTIAL as u64,
        detail: format!(
            "the sequential impacts of guards {order:?} at t = {t} s did not settle (each still approaching)"
        ),
    })
}

/// Fire the simultaneous `group` at `xm` (time t, Jacobian blocks `phim`, one per branch):
/// every order enumerated (or, beyond [`MAX_ENUMERATED`], or `along` a direction, the order
/// along d), the states the orders give compared (refused as [`FerroError::SetValued`] when
/// they differ beyond `state_tol`), each branch split into one per order with its cone.
#[allow(clippy::too_many_arguments)]
pub(super) fn fire_group(
    sys: &dyn HybridSystem,
    (mode, xm, phim): (usize, &DVector<f64>, &DMatrix<f64>),
    group: &[usize],
    branches: &[Branch],
    t: f64,
    graze_speed: f64,
    state_tol: f64,
    along: Option<&DVector<f64>>,
) -> Result<(Fired, bool)> {
    let n = xm.len();
    let f_minus = sys.rhs(mode, xm);
    // a_i per branch: δτ_i = a_i·d.
    let a = |b: usize, i: usize| -> DVector<f64> {
        let grad = sys.guard_gradient(mode, i, xm);
        let block = phim.columns(b * n, n);
        -(block.transpose() * &grad) / grad.dot(&f_minus)
    };
    let enumerated = group.len() <= MAX_ENUMERATED;
    let orders_of = |b: usize| -> Vec<Vec<usize>> {
        match along {
            Some(d) => {
                let mut o = group.to_vec();
                let key = |i: usize| a(b, i).dot(d);
                o.sort_by(|&p, &q| key(p).total_cmp(&key(q)));
                vec![o]
            }
            None if enumerated => permutations(group),
            None => vec![group.to_vec()],
        }
    };
    let orders = orders_of(0);
    let applied = orders
        .iter()
        .map(|o| apply_order(sys, (mode, xm), o, t, graze_speed))
        .collect::<Result<Vec<_>>>()?;
    let (m0, x0, _, ev0) = &applied[0];
    let spread = applied
        .iter()
        .map(|(_, x, _, _)| (x - x0).amax())
        .fold(0.0_f64, f64::max);
    let tol = state_tol * x0.amax().max(1.0);
    if !(spread <= tol) || applied.iter().any(|(m, _, _, _)| m != m0) {
        return Err(FerroError::SetValued {
            t,
            orders: orders.clone(),
            outcomes: applied
                .iter()
                .map(|(_, x, _, _)| x.iter().copied().collect())
                .collect(),
            spread,
            at: "just after the simultaneous events".into(),
        });
    }
    let mut cols = Vec::new();
    let mut next = Vec::new();
    for (b, branch) in branches.iter().enumerate() {
        let block = phim.columns(b * n, n).into_owned();
        let orders_b = if along.is_some() {
            orders_of(b)
        } else {
            orders.clone()
        };
        for order in orders_b {
            let k = orders.iter().position(|o| *o == order).unwrap_or(0);
            let xi = &applied[k].2;
            cols.push(xi * &block);
            let mut cone = branch.cone.clone();
            for w in order.windows(2) {
                cone.push(a(b, w[0]) - a(b, w[1]));
            }
            let mut o = branch.orders.clone();
            o.push(order);
            next.push(Branch { orders: o, cone });
        }
    }
    let phi = DMatrix::from_columns(
        &cols
            .iter()
            .flat_map(|c| c.column_iter().map(|v| v.into_owned()))
            .collect::<Vec<_>>(),
    );
    Ok((
        Fired {
            mode: *m0,
            x: x0.clone(),
            phi,
            branches: next,
            events: ev0.clone(),
        },
        enumerated || along.is_some(),
    ))
}
