//! Lie-group states of a black-box step function: where a state's coordinates hold unit
//! quaternions, the driver probes and differentiates in the tangent space.
//!
//! A [`Joint`] names a block of x: `Free` at i is 7 coordinates (a position x, y, z in the
//! world frame, then a unit quaternion w, x, y, z), 6 tangent ones; `Ball` at i is 4 (a unit
//! quaternion), 3 tangent ones. Every other coordinate is its own tangent coordinate. The
//! convention is MuJoCo's (`mj_integratePos` / `mj_differentiatePos`):
//!
//! - retraction `x ⊕ δ`: positions `p + δp`; quaternions `q ⊗ exp(δθ)` with
//!   `exp(θ) = (cos(|θ|/2), sin(|θ|/2)·θ/|θ|)`: δθ is a rotation vector in the body's own
//!   (local) frame, multiplied on the right, then normalised;
//! - chart `x ⊖ b`: positions `p - b_p`; quaternions `log(b_q⁻¹ ⊗ q)`, the rotation vector of
//!   the shortest rotation (w ≥ 0) from b to x, in b's local frame.
//!
//! The Jacobian is then `d(x(t1) ⊖ x̄(t1)) / dδ` at δ = 0 for `x(t0) = x̄(t0) ⊕ δ`: for a
//! state (qpos, qvel) of a MuJoCo model with a free joint, the 6 + 6 coordinates MuJoCo's own
//! derivatives (`mjd_transitionFD`) use. A quaternion never leaves the unit sphere: every
//! probe is retracted and normalised, x0 and every state the step returns are checked to
//! within [`UNIT_TOL`] of unit norm.

use crate::error::{FerroError, Result};
use nalgebra::DVector;

/// How far from unit norm a quaternion may be (x0, or a state the step or a reset returns)
/// before it is refused: float32 engines (MJX by default) round at about 1e-7.
pub const UNIT_TOL: f64 = 1e-6;

/// The kind of a declared joint block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JointKind {
    /// Position (3, world frame) and unit quaternion (4, w x y z): 7 coordinates, 6 tangent.
    Free,
    /// A unit quaternion (w x y z): 4 coordinates, 3 tangent.
    Ball,
}

/// A joint block of the state, starting at coordinate `index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Joint {
    /// Free or ball.
    pub kind: JointKind,
    /// Its first coordinate in x.
    pub index: usize,
}

impl Joint {
    /// A block from its spelling, `"free"` or `"ball"`, refused otherwise (naming `manifold`).
    pub fn parse(kind: &str, index: usize) -> Result<Joint> {
        let kind = match kind {
            "free" => JointKind::Free,
            "ball" => JointKind::Ball,
            other => {
                return Err(FerroError::InvalidParameter {
                    name: "manifold",
                    value: index as f64,
                    limit: format!(
                    "a block is (\"free\", i) (7 coordinates: position 3, quaternion w x y z) or \
                         (\"ball\", i) (a quaternion, 4); got kind {other:?}"
                ),
                })
            }
        };
        Ok(Joint { kind, index })
    }

    fn len(&self) -> usize {
        match self.kind {
            JointKind::Free => 7,
            JointKind::Ball => 4,
        }
    }
}

/// One tangent coordinate: a plain coordinate of x, or one of a quaternion's three.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Axis {
    Flat(usize),
    /// The quaternion's first coordinate (w) in x, and which rotation-vector component.
    Turn(usize, usize),
}

/// The state space of a step function: R^n, or R^n with unit-quaternion blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifold {
    dim: usize,
    axes: Vec<Axis>,
    /// Where each quaternion's w sits in x.
    quats: Vec<usize>,
}

impl Manifold {
    /// R^n.
    pub fn flat(dim: usize) -> Manifold {
        Manifold {
            dim,
            axes: (0..dim).map(Axis::Flat).collect(),
            quats: Vec::new(),
        }
    }

    /// R^dim with the `joints` blocks; refused (naming `manifold`) when a block runs past
    /// the end of x or overlaps another.
    pub fn new(dim: usize, joints: &[Joint]) -> Result<Manifold> {
        let mut owner: Vec<Option<usize>> = vec![None; dim];
        let mut quats = Vec::new();
        for (b, j) in joints.iter().enumerate() {
            if j.index + j.len() > dim {
                return Err(FerroError::InvalidParameter {
                    name: "manifold",
                    value: j.index as f64,
                    limit: format!(
                        "block {b} ({:?} at {}) needs coordinates {}..{} but x holds {dim}",
                        j.kind,
                        j.index,
                        j.index,
                        j.index + j.len()
                    ),
                });
            }
            for (c, slot) in owner.iter_mut().enumerate().skip(j.index).take(j.len()) {
                if let Some(other) = slot.replace(b) {
                    return Err(FerroError::InvalidParameter {
                        name: "manifold",
                        value: j.index as f64,
                        limit: format!("block {b} overlaps block {other} at coordinate {c}"),
                    });
                }
            }
            quats.push(j.index + j.len() - 4);
        }
        quats.sort_unstable();
        let mut axes = Vec::with_capacity(dim);
        let mut c = 0;
        while c < dim {
            if quats.binary_search(&c).is_ok() {
                axes.extend((0..3).map(|k| Axis::Turn(c, k)));
                c += 4;
            } else {
                axes.push(Axis::Flat(c));
                c += 1;
            }
        }
        Ok(Manifold { dim, axes, quats })
    }

    /// Coordinates of x.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Tangent coordinates (the Jacobian's size): dim minus one per quaternion.
    pub fn tangent_dim(&self) -> usize {
        self.axes.len()
    }

    /// Whether every coordinate is flat (then charts and retractions are plain x).
    pub fn is_flat(&self) -> bool {
        self.quats.is_empty()
    }

    /// The value a probe size scales with for tangent coordinate j: x_j for a flat one, 0
    /// for a rotation (its chart is centred at x).
    pub fn probe_scale(&self, x: &DVector<f64>, j: usize) -> f64 {
        match self.axes[j] {
            Axis::Flat(c) => x[c],
            Axis::Turn(..) => 0.0,
        }
    }

    /// `x ⊕ (step · e_j)`: flat coordinates moved by `step`, a quaternion turned by `step`
    /// about its local axis j and normalised.
    pub fn nudge(&self, x: &DVector<f64>, j: usize, step: f64) -> DVector<f64> {
        let mut y = x.clone();
        match self.axes[j] {
            Axis::Flat(c) => y[c] += step,
            Axis::Turn(w, k) => {
                let mut v = [0.0; 3];
                v[k] = step;
                let q = normalise(mul(quat(x, w), exp(v)));
                y.rows_mut(w, 4).copy_from_slice(&q);
            }
        }
        y
    }

    /// `x ⊕ δ` for a whole tangent vector δ: flat coordinates moved by theirs, each
    /// quaternion turned by its rotation vector (body frame, on the right) and normalised.
    pub fn retract(&self, x: &DVector<f64>, delta: &DVector<f64>) -> DVector<f64> {
        let mut y = x.clone();
        let mut j = 0;
        while j < self.axes.len() {
            match self.axes[j] {
                Axis::Flat(c) => {
                    y[c] += delta[j];
                    j += 1;
                }
                Axis::Turn(w, _) => {
                    let v = [delta[j], delta[j + 1], delta[j + 2]];
                    let q = normalise(mul(quat(x, w), exp(v)));
                    y.rows_mut(w, 4).copy_from_slice(&q);
                    j += 3;
                }
            }
        }
        y
    }

    /// The chart of x at `base`: flat coordinates as they are (not shifted, so that their
    /// differences keep the bits of plain differences), a quaternion as `log(b⁻¹ ⊗ q)`.
    /// Differences of charts at one base are tangent differences.
    pub fn chart(&self, base: &DVector<f64>, x: &DVector<f64>) -> DVector<f64> {
        if self.is_flat() {
            return x.clone();
        }
        let mut out = DVector::zeros(self.axes.len());
        let mut j = 0;
        while j < self.axes.len() {
            match self.axes[j] {
                Axis::Flat(c) => {
                    out[j] = x[c];
                    j += 1;
                }
                Axis::Turn(w, _) => {
                    let v = log(mul(conj(quat(base, w)), quat(x, w)));
                    out.rows_mut(j, 3).copy_from_slice(&v);
                    j += 3;
                }
            }
        }
        out
    }

    /// x ⊖ base in tangent coordinates: the chart of x at `base` less the chart of `base`
    /// itself (flat coordinates are not shifted by [`Self::chart`]; a rotation's chart of its
    /// own base is 0).
    pub fn offset(&self, base: &DVector<f64>, x: &DVector<f64>) -> DVector<f64> {
        self.chart(base, x) - self.chart(base, base)
    }

    /// The first quaternion of x more than [`UNIT_TOL`] from unit norm: (where its w is,
    /// its norm).
    pub fn off_sphere(&self, x: &DVector<f64>) -> Option<(usize, f64)> {
        self.quats.iter().find_map(|&w| {
            let n = quat(x, w).iter().map(|v| v * v).sum::<f64>().sqrt();
            ((n - 1.0).abs() > UNIT_TOL).then_some((w, n))
        })
    }
}

type Quat = [f64; 4];

fn quat(x: &DVector<f64>, w: usize) -> Quat {
    [x[w], x[w + 1], x[w + 2], x[w + 3]]
}

fn mul(a: Quat, b: Quat) -> Quat {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

fn conj(q: Quat) -> Quat {
    [q[0], -q[1], -q[2], -q[3]]
}

fn normalise(q: Quat) -> Quat {
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    q.map(|v| v / n)
}

/// The unit quaternion of rotation vector v (angle |v| about v/|v|).
fn exp(v: [f64; 3]) -> Quat {
    let angle = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    let half = 0.5 * angle;
    // sin(|v|/2)/|v|, with its limit 1/2 at 0.
    let s = if angle > 0.0 {
        libm::sin(half) / angle
    } else {
        0.5
    };
    [libm::cos(half), s * v[0], s * v[1], s * v[2]]
}

/// The rotation vector of unit quaternion q, the shortest rotation (q and -q are one).
fn log(q: Quat) -> [f64; 3] {
    let q = if q[0] < 0.0 { q.map(|v| -v) } else { q };
    let n = (q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    // angle / n with angle = 2 atan2(n, w), and its limit 2/w at n = 0.
    let f = if n > 0.0 {
        2.0 * libm::atan2(n, q[0]) / n
    } else {
        2.0 / q[0]
    };
    [f * q[1], f * q[2], f * q[3]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_inverts_exp_and_a_chart_centres_its_base() {
        let v = [0.3, -0.2, 0.5];
        let back = log(exp(v));
        for k in 0..3 {
            assert!((back[k] - v[k]).abs() < 1e-15, "{back:?}");
        }
        let m = Manifold::new(7, &[Joint::parse("free", 0).unwrap()]).unwrap();
        let q = exp([0.1, 0.2, -0.3]);
        let x = DVector::from_vec(vec![1.0, 2.0, 3.0, q[0], q[1], q[2], q[3]]);
        assert_eq!(m.tangent_dim(), 6);
        let c = m.chart(&x, &m.nudge(&x, 4, 1e-3));
        assert_eq!(c[0], 1.0);
        assert!((c[4] - 1e-3).abs() < 1e-15 && c[3].abs() < 1e-15 && c[5].abs() < 1e-15);
    }

    #[test]
    fn blocks_past_the_end_or_overlapping_are_refused() {
        let ball = |i| Joint::parse("ball", i).unwrap();
        assert!(Manifold::new(5, &[ball(2)]).is_err());
        assert!(Manifold::new(8, &[ball(0), ball(3)]).is_err());
        assert!(Joint::parse("hinge", 0).is_err());
        assert_eq!(
            Manifold::new(8, &[ball(0), ball(4)]).unwrap().tangent_dim(),
            6
        );
    }
}
