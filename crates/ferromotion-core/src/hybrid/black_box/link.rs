//! A row's view of the system ([`Link`]): every call it makes (steps, guards, resets) asked
//! through the scheduler (`rows.rs`) and every answer checked; the probe points and the
//! central-difference columns every part of the driver shares.

use super::manifold::Manifold;
use super::rows::{Caller, Item, Reply};
use super::switches::Switch;
use super::system::StepSystem;
use crate::error::{FerroError, Result};
use crate::numeric::fd::{quotient, Probe};
use nalgebra::{DMatrix, DVector};

/// A row's view of the system: its metadata from `sys`, its calls through `caller`, every
/// answer checked (length, finite, quaternions unit). The switches located from the step's
/// behaviour (`switches.rs`) are guards after the declared ones, evaluated here.
pub(super) struct Link<'a> {
    pub sys: &'a dyn StepSystem,
    pub manifold: &'a Manifold,
    pub caller: Caller,
    pub switches: &'a [Switch],
}

impl Link<'_> {
    /// step(x, h) for each (x, h), as one ask.
    pub async fn steps(
        &self,
        calls: Vec<(DVector<f64>, f64)>,
        t: f64,
    ) -> Result<Vec<DVector<f64>>> {
        let items = calls
            .iter()
            .map(|(x, h)| Item::Step(x.clone(), *h))
            .collect();
        let replies = self.caller.ask(items).await;
        calls
            .iter()
            .zip(replies)
            .map(|((x, h), r)| match r {
                Reply::State(y) => self.state(y, "step(x, dt)", x, *h, t),
                _ => unreachable!("a step is answered with a state"),
            })
            .collect()
    }

    pub async fn step(&self, x: &DVector<f64>, h: f64, t: f64) -> Result<DVector<f64>> {
        Ok(self.steps(vec![(x.clone(), h)], t).await?.remove(0))
    }

    /// Every guard at x (reached at time t), checked finite: the declared ones, then the
    /// located switches'.
    pub async fn guards(&self, x: &DVector<f64>, t: f64) -> Result<Vec<f64>> {
        let mut g = Vec::new();
        if self.sys.guard_count() > 0 {
            let r = self.caller.ask(vec![Item::Guards(x.clone())]).await;
            let Some(Reply::Values(declared)) = r.into_iter().next() else {
                unreachable!("guards are answered with values")
            };
            for (i, v) in declared.iter().enumerate() {
                finite_guard(i, *v, x, t)?;
            }
            g = declared;
        }
        g.extend(self.switches.iter().map(|s| s.value(self.manifold, x, t)));
        Ok(g)
    }

    /// Whether guard i has a reset the driver applies (a located switch has none).
    pub fn has_reset(&self, i: usize) -> bool {
        i < self.sys.guard_count() && self.sys.has_reset(i)
    }

    /// Guard i at each x (reached at time t), as one ask.
    pub async fn guard_at(&self, i: usize, xs: Vec<DVector<f64>>, t: f64) -> Result<Vec<f64>> {
        if let Some(s) = i
            .checked_sub(self.sys.guard_count())
            .and_then(|k| self.switches.get(k))
        {
            return Ok(xs.iter().map(|x| s.value(self.manifold, x, t)).collect());
        }
        let items = xs.iter().map(|x| Item::Guard(i, x.clone())).collect();
        let replies = self.caller.ask(items).await;
        xs.iter()
            .zip(replies)
            .map(|(x, r)| match r {
                Reply::Value(g) => finite_guard(i, g, x, t),
                _ => unreachable!("a guard is answered with a value"),
            })
            .collect()
    }

    pub async fn guard(&self, i: usize, x: &DVector<f64>, t: f64) -> Result<f64> {
        Ok(self.guard_at(i, vec![x.clone()], t).await?[0])
    }

    /// Reset i at each x (identity without one: no call), as one ask.
    pub async fn resets(
        &self,
        i: usize,
        xs: Vec<DVector<f64>>,
        t: f64,
    ) -> Result<Vec<DVector<f64>>> {
        if !self.has_reset(i) {
            return Ok(xs);
        }
        let items = xs.iter().map(|x| Item::Reset(i, x.clone())).collect();
        let replies = self.caller.ask(items).await;
        xs.iter()
            .zip(replies)
            .map(|(x, r)| match r {
                Reply::State(y) => self.state(y, "reset", x, f64::NAN, t),
                _ => unreachable!("a reset is answered with a state"),
            })
            .collect()
    }

    pub async fn reset(&self, i: usize, x: &DVector<f64>, t: f64) -> Result<DVector<f64>> {
        Ok(self.resets(i, vec![x.clone()], t).await?.remove(0))
    }

    /// A state the step (`what` = "step(x, dt)") or a reset returned, checked: `dim`
    /// numbers, every one finite, every quaternion unit.
    fn state(
        &self,
        y: DVector<f64>,
        what: &'static str,
        x: &DVector<f64>,
        h: f64,
        t: f64,
    ) -> Result<DVector<f64>> {
        let name = if what == "reset" { "reset" } else { "step" };
        let n = self.sys.dim();
        if y.len() != n {
            return Err(FerroError::InvalidParameter {
                name,
                value: y.len() as f64,
                limit: format!("{what} must return {n} numbers"),
            });
        }
        if !y.iter().all(|v| v.is_finite()) {
            let detail = if what == "reset" {
                format!("a reset returned {:?} at t = {t} s", y.as_slice())
            } else {
                format!(
                    "it returned {:?} for dt = {h:e} s from x = {:?} at t = {t} s",
                    y.as_slice(),
                    x.as_slice()
                )
            };
            return Err(FerroError::NonFinite { what, detail });
        }
        if let Some((w, norm)) = self.manifold.off_sphere(&y) {
            return Err(FerroError::InvalidParameter {
                name,
                value: norm,
                limit: format!(
                    "{what} returned the quaternion x[{w}..{}] with norm {norm}: a declared free or ball \
                     block must stay on the unit sphere (within {:e}; normalise it in the step)",
                    w + 4,
                    super::manifold::UNIT_TOL
                ),
            });
        }
        Ok(y)
    }

    /// The probe points x ⊕ (±size_j e_j) for every tangent coordinate j, in the order
    /// (+, -) per coordinate, with the sizes.
    pub fn probes(&self, x: &DVector<f64>, eps: f64) -> (Vec<DVector<f64>>, Vec<f64>) {
        probes(self.manifold, x, eps)
    }
}

/// The probe points x ⊕ (±size_j e_j), (+, -) per tangent coordinate j, and the sizes
/// `eps·max(|x_j|, 1)` (the core's one probe rule, `numeric/fd.rs`; 0 stands for x_j on a
/// rotation, whose chart is centred at x).
pub(super) fn probes(m: &Manifold, x: &DVector<f64>, eps: f64) -> (Vec<DVector<f64>>, Vec<f64>) {
    let probe = Probe::Relative {
        factor: eps,
        floor: 1.0,
    };
    let mut points = Vec::with_capacity(2 * m.tangent_dim());
    let mut sizes = Vec::with_capacity(m.tangent_dim());
    for j in 0..m.tangent_dim() {
        let size = probe.size(m.probe_scale(x, j));
        points.push(m.nudge(x, j, size));
        points.push(m.nudge(x, j, -size));
        sizes.push(size);
    }
    (points, sizes)
}

/// The central-difference column (chart(plus) - chart(minus)) / (2·size), charts at `base`.
pub(super) fn column(
    m: &Manifold,
    base: &DVector<f64>,
    plus: &DVector<f64>,
    minus: &DVector<f64>,
    size: f64,
) -> DVector<f64> {
    m.chart(base, plus)
        .zip_map(&m.chart(base, minus), |a, b| quotient(a, b, size))
}

fn finite_guard(i: usize, g: f64, x: &DVector<f64>, t: f64) -> Result<f64> {
    if g.is_finite() {
        Ok(g)
    } else {
        Err(FerroError::NonFinite {
            what: "guard",
            detail: format!(
                "guard {i} returned {g} at x = {:?}, t = {t} s",
                x.as_slice()
            ),
        })
    }
}

pub(super) fn amax(m: &DMatrix<f64>) -> f64 {
    m.iter().fold(0.0_f64, |a, v| a.max(v.abs()))
}
