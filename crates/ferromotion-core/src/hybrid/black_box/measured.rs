//! The pieces of a black-box derivative, measured from the probes (see the module docs of
//! `black_box.rs`).
//!
//! When the nominal run meets a simultaneous group (guards crossed within
//! [`super::run::SIMULTANEOUS`] s of each other), each probe x0 ⊕ (±size·e_j) crosses them in
//! its own order: the order its perturbation selects. The derivative is then piecewise linear
//! in the perturbation (Council, Revzen & Burden), one piece per order, and every column of a
//! piece is measured from the probes whose order it is:
//!
//! - a coordinate whose + and - probes both fall in a piece's cone (the same order, or a tie on
//!   the cones' boundary) gives that piece its central difference, as a smooth map would;
//! - a coordinate whose probes fall in different cones gives each of those pieces a one-sided
//!   difference: second order from the probes at eps and eps/2 (`(4·(x(h/2) - x̄) - (x(h) -
//!   x̄))/h`), first order when only eps was probed;
//! - a piece that no probe of some coordinate reaches stays unmeasured, and the pieces are then
//!   not all enumerated (three or more events at one instant can leave orders no coordinate
//!   selects): the Jacobian and `jvp` are refused for it, the measured pieces are listed.
//!
//! The cone of each order is measured from the probes' event times: guard p is crossed before
//! guard q along d when `w_pq·d < 0`, `w_pq,j = ((t_p - t_q)(+) - (t_p - t_q)(-)) / (2·size_j)`.

use super::manifold::Manifold;
use super::run::{Run, SIMULTANEOUS};
use crate::error::{FerroError, Result};
use crate::hybrid::pieces::permutations;
use crate::hybrid::{Piece, Pieces};
use crate::numeric::fd::quotient;
use nalgebra::{DMatrix, DVector};

/// One coordinate's probe runs: at eps, and at eps/2 when probed; (+, -) each.
pub(super) struct Coordinate<'r> {
    pub size: f64,
    pub eps: [&'r Run; 2],
    pub half: Option<[&'r Run; 2]>,
}

/// A probe's fired sequence must be the nominal one up to the order inside each of the
/// nominal's simultaneous groups; otherwise the probe changed which events happen, and the
/// answer is refused as probe-dependent.
pub(super) fn same_events(nominal: &Run, probe: &Run) -> bool {
    if probe.fired.len() != nominal.fired.len() {
        return false;
    }
    let mut k = 0;
    for &(start, len) in &nominal.groups {
        if nominal.fired[k..start] != probe.fired[k..start] {
            return false;
        }
        let mut a = nominal.fired[start..start + len].to_vec();
        let mut b = probe.fired[start..start + len].to_vec();
        a.sort_unstable();
        b.sort_unstable();
        if a != b {
            return false;
        }
        k = start + len;
    }
    nominal.fired[k..] == probe.fired[k..]
}

/// The time a probe crossed guard `guard` inside the group at `start` of length `len`.
fn time_of(run: &Run, (start, len): (usize, usize), guard: usize) -> f64 {
    (start..start + len)
        .find(|&k| run.fired[k] == guard)
        .map(|k| run.times[k])
        .expect("a probe crosses every guard of the group")
}

/// Whether `order` (guards, first crossed first) is consistent with what `run` did in the
/// group: no guard listed before another was crossed more than [`SIMULTANEOUS`] s after it.
fn consistent(run: &Run, group: (usize, usize), order: &[usize]) -> bool {
    order.iter().enumerate().all(|(a, &p)| {
        order[a + 1..]
            .iter()
            .all(|&q| time_of(run, group, p) <= time_of(run, group, q) + SIMULTANEOUS)
    })
}

/// Whether a probe lies in the cone of the piece with `orders` (one per group): in every
/// group its order is consistent with the probe's, or the coordinate does not move that
/// group's order at all (its + and - probes cross it alike).
fn holds(nominal: &Run, orders: &[Vec<usize>], side: &Run, other: &Run) -> bool {
    nominal
        .groups
        .iter()
        .zip(orders)
        .all(|(&g, o)| alike(side, other, g) || consistent(side, g, o))
}

/// Whether two probes crossed a group in the same order (ties alike).
fn alike(a: &Run, b: &Run, g: (usize, usize)) -> bool {
    let guards = &a.fired[g.0..g.0 + g.1];
    guards.iter().all(|&p| {
        guards.iter().all(|&q| {
            let before = |r: &Run| time_of(r, g, p) + SIMULTANEOUS < time_of(r, g, q);
            before(a) == before(b)
        })
    })
}

/// Whether two probes of one coordinate side (at eps and eps/2) crossed every group of the
/// nominal run in compatible orders: no two guards crossed strictly one way in one and
/// strictly the other way in the other (a tie, the halved probe's events within
/// [`SIMULTANEOUS`] s, is compatible with either).
pub(super) fn same_order(nominal: &Run, a: &Run, b: &Run) -> bool {
    nominal.groups.iter().all(|&g| {
        let guards = &a.fired[g.0..g.0 + g.1];
        guards.iter().all(|&p| {
            guards.iter().all(|&q| {
                let before = |r: &Run| time_of(r, g, p) + SIMULTANEOUS < time_of(r, g, q);
                let after = |r: &Run| time_of(r, g, q) + SIMULTANEOUS < time_of(r, g, p);
                !(before(a) && after(b))
            })
        })
    })
}

/// Every combination of orders, one per group of the nominal run (lexicographic).
fn combinations(nominal: &Run) -> Vec<Vec<Vec<usize>>> {
    let mut out: Vec<Vec<Vec<usize>>> = vec![Vec::new()];
    for &(start, len) in &nominal.groups {
        let orders = permutations(&nominal.fired[start..start + len]);
        out = out
            .into_iter()
            .flat_map(|prefix| {
                orders.iter().map(move |o| {
                    let mut p = prefix.clone();
                    p.push(o.clone());
                    p
                })
            })
            .collect();
    }
    out
}

/// A piece no coordinate probe reached: its orders (one per group) and its cone.
pub(super) type Unreached = (Vec<Vec<usize>>, Vec<DVector<f64>>);

/// What the probes measure of a derivative with simultaneous groups.
pub(super) struct Measured {
    pub pieces: Pieces,
    /// The combinations of orders no coordinate probe reached, each with its cone: measured
    /// next along directions inside that cone ([`inside`], [`from_directions`]).
    pub missing: Vec<Unreached>,
    /// max over the central columns of |J(eps) - J(eps/2)| (the probe-tolerance check's
    /// measure; one-sided columns are second-order combinations of both probes).
    pub gap: f64,
}

/// The most pieces measured (combinations of orders over all groups).
const MAX_PIECES: usize = 36;

/// The pieces from the coordinates' probes (module docs); `chart(base, x)` reads x in
/// tangent coordinates at `base`.
pub(super) fn measure(
    m: &Manifold,
    nominal: &Run,
    coords: &[Coordinate],
    rtol: f64,
) -> Result<Measured> {
    let n = coords.len();
    let largest_group = nominal.groups.iter().map(|g| g.1).max().unwrap_or(0);
    let combos = combinations(nominal);
    if combos.len() > MAX_PIECES {
        return Err(FerroError::NotDifferentiable {
            pieces: combos.len(),
            orders: format!(
                "not enumerated: {} orders of the simultaneous groups met, more than {MAX_PIECES}",
                combos.len()
            ),
            largest_difference: f64::NAN,
            tolerance: rtol,
            enumerated: false,
        });
    }
    let chart = |x: &DVector<f64>| m.chart(&nominal.x, x);
    let base = chart(&nominal.x);
    let one_sided = |c: &Coordinate, k: usize| -> DVector<f64> {
        let sign = if k == 0 { 1.0 } else { -1.0 };
        let far = chart(&c.eps[k].x) - &base;
        match &c.half {
            Some(h) => (4.0 * (chart(&h[k].x) - &base) - far) * (sign / c.size),
            None => far * (sign / c.size),
        }
    };
    let central = |ends: [&Run; 2], size: f64| -> DVector<f64> {
        chart(&ends[0].x).zip_map(&chart(&ends[1].x), |a, b| quotient(a, b, size))
    };
    let mut gap = 0.0_f64;
    let mut list = Vec::new();
    let mut missing = Vec::new();
    for orders in combos {
        let mut matrix = DMatrix::zeros(n, n);
        let mut measured = true;
        for (j, c) in coords.iter().enumerate() {
            let [p, q] = c.eps;
            let col = match (holds(nominal, &orders, p, q), holds(nominal, &orders, q, p)) {
                (true, true) => {
                    let at_eps = central(c.eps, c.size);
                    if let Some(h) = c.half {
                        gap = gap.max((&at_eps - central(h, 0.5 * c.size)).amax());
                    }
                    at_eps
                }
                (true, false) => one_sided(c, 0),
                (false, true) => one_sided(c, 1),
                (false, false) => {
                    measured = false;
                    break;
                }
            };
            matrix.set_column(j, &col);
        }
        let cone = cone(nominal, &orders, coords);
        if !measured {
            missing.push((orders, cone));
            continue;
        }
        list.push(Piece {
            orders,
            cone,
            matrix,
        });
    }
    Ok(Measured {
        pieces: Pieces::measured(list, largest_group, missing.is_empty(), rtol),
        missing,
        gap,
    })
}

/// The cone of the piece with `orders`: per group, a row w_pq per consecutive pair (p, q)
/// of its order (p crossed before q where w_pq·d <= 0), measured from the probes' times.
fn cone(nominal: &Run, orders: &[Vec<usize>], coords: &[Coordinate]) -> Vec<DVector<f64>> {
    let mut rows = Vec::new();
    for (&g, order) in nominal.groups.iter().zip(orders) {
        for pair in order.windows(2) {
            let (p, q) = (pair[0], pair[1]);
            let split = |r: &Run| time_of(r, g, p) - time_of(r, g, q);
            rows.push(DVector::from_iterator(
                coords.len(),
                coords
                    .iter()
                    .map(|c| quotient(split(c.eps[0]), split(c.eps[1]), c.size)),
            ));
        }
    }
    rows
}

/// The least time, s, by which a probe inside a cone must separate its events (beyond
/// [`SIMULTANEOUS`], so that its order is the cone's).
const RESOLVED: f64 = 100.0 * SIMULTANEOUS;

/// The most a probe inside a thin cone is lengthened, in probe sizes.
const MAX_REACH: f64 = 1e3;

/// Directions inside a cone (rows r, r·d <= 0), for a piece no coordinate probe reached:
/// δ_0 deep inside, and δ_j = β·δ_0 + e_j leaning towards each axis but still inside, each
/// scaled to the coordinates' probe sizes (`sizes`) so that no entry exceeds its size.
/// None when the cone is empty to first order (its rows admit no d with every r·d < 0).
pub(super) fn inside(cone: &[DVector<f64>], sizes: &[f64]) -> Option<Vec<DVector<f64>>> {
    let n = sizes.len();
    // In units of the probe sizes: u with δ = S·u.
    let w = DMatrix::from_fn(cone.len(), n, |r, j| cone[r][j] * sizes[j]);
    let target = DVector::from_element(cone.len(), -1.0);
    let gram = &w * w.transpose();
    let floor = 1e-12 * gram.amax().max(f64::MIN_POSITIVE);
    let y = gram.pseudo_inverse(floor).ok()? * &target;
    let mut u = w.transpose() * y;
    if !((&w * &u - &target).amax() < 1e-6) || u.amax() == 0.0 {
        return None;
    }
    u /= u.amax();
    let margin = (&w * &u).iter().fold(f64::INFINITY, |m, v| m.min(-v));
    if !(margin > 0.0) {
        return None;
    }
    let beta = 2.0 * w.amax() / margin;
    // Far enough inside that every order is resolved: the probe at δ/2 separates the
    // cone's events by at least RESOLVED s (the probes of a thin cone are longer).
    // δ_j separates them by about reach·margin/2 at full length, half that at δ/2.
    let reach = (4.0 * RESOLVED / margin).clamp(1.0, MAX_REACH);
    let scaled = |v: DVector<f64>| {
        let v = &v * (reach / v.amax());
        DVector::from_iterator(n, v.iter().zip(sizes).map(|(a, s)| a * s))
    };
    let mut out = vec![scaled(u.clone())];
    for j in 0..n {
        let mut v = beta * &u;
        v[j] += 1.0;
        out.push(scaled(v));
    }
    Some(out)
}

/// A piece's matrix from its directional derivatives y_k = M·δ_k along the directions
/// δ_k of [`inside`] (least squares over the n + 1 of them).
pub(super) fn from_directions(
    deltas: &[DVector<f64>],
    ys: &[DVector<f64>],
) -> Option<DMatrix<f64>> {
    let d = DMatrix::from_columns(deltas);
    let y = DMatrix::from_columns(ys);
    let gram = &d * d.transpose();
    let inv = gram.try_inverse()?;
    Some(y * d.transpose() * inv)
}

/// Whether a run crossed every group of the nominal run in an order consistent with
/// `orders` (a probe taken inside that piece's cone must).
pub(super) fn in_piece(nominal: &Run, orders: &[Vec<usize>], run: &Run) -> bool {
    nominal
        .groups
        .iter()
        .zip(orders)
        .all(|(&g, o)| consistent(run, g, o))
}
