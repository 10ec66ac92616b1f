//! A planar rod (or dumbbell) landing on the ground y = 0 on its two ends: x = (x, y, θ, v_x,
//! v_y, ω) of its centre of mass, θ from the horizontal; end i (0: left, s = -1; 1: right,
//! s = +1) at height y + s·(L/2)·sin θ. Dropped flat, both ends touch at once.
//!
//! - [`RigidRod`]: frictionless Newton restitution at the touching end (an impulse along y at
//!   that end), simultaneous impacts applied in turn. The ends' impulses decouple exactly when
//!   1/m = (L/2)²/I (a dumbbell, I = m (L/2)²): then the orders agree; a uniform rod
//!   (I = m L²/12) couples them and the orders give different states.
//! - [`PenaltyRod`]: a push-only spring-damper per end, F_i = max(0, -k g_i - c ġ_i), forces
//!   summed. Modes: bit i set while end i is in contact; guard g_i while it is not, and the
//!   force's argument -k g_i - c ġ_i (its release) while it is. With damping the force lets go
//!   while the end is still below the ground (g_i < 0, rising): there the free end's guard is
//!   the argument's negative, so contact resumes only if the argument rises back through 0 (a
//!   gap guard there would read as crossed in every step, re-entering and leaving contact at
//!   one instant without end).

use nalgebra::{DMatrix, DVector};

use super::exact_from_closed_form;
use super::{Declared, Entry, Fallback, Param, Spec, GRAVITY, POSITIVE, RESTITUTION};
use crate::error::Result;
use crate::hybrid::HybridSystem;

const MASS: Param = Param {
    name: "mass",
    unit: "kg",
    default: Fallback::Values(&[1.0]),
    doc: "mass",
    ..POSITIVE
};
const LENGTH: Param = Param {
    name: "length",
    unit: "m",
    default: Fallback::Values(&[1.0]),
    doc: "distance between the two ends",
    ..POSITIVE
};
const INERTIA: Param = Param {
    name: "inertia",
    unit: "kg m^2",
    doc: "moment of inertia about the centre of mass (uniform rod: m L^2/12; dumbbell: m L^2/4)",
    ..POSITIVE
};

const STATE: &[&str] = &["x", "y", "theta", "v_x", "v_y", "omega"];
const UNITS: &[&str] = &["m", "m", "rad", "m/s", "m/s", "rad/s"];

/// The rigid rod's definition.
pub static RIGID_SPEC: Spec = Spec {
    kind: "rigid_rod",
    class: "RigidRod",
    summary: "a planar rod landing on the ground on its two ends, frictionless Newton restitution at each end, simultaneous impacts applied in turn",
    state_names: STATE,
    units: UNITS,
    params: &[MASS, LENGTH, INERTIA, RESTITUTION, GRAVITY],
    has_exact: true,
};

/// The rigid rod in the registry.
pub const RIGID_ENTRY: Entry = Entry {
    spec: &RIGID_SPEC,
    build: |v| {
        Box::new(RigidRod {
            mass: v[0],
            length: v[1],
            inertia: v[2],
            restitution: v[3],
            gravity: v[4],
        })
    },
};

/// The penalty rod's definition.
pub static PENALTY_SPEC: Spec = Spec {
    kind: "penalty_rod",
    class: "PenaltyRod",
    summary: "a planar rod landing on the ground on its two ends, a push-only spring-damper at each end (forces summed)",
    state_names: STATE,
    units: UNITS,
    params: &[
        MASS,
        LENGTH,
        INERTIA,
        Param {
            name: "stiffness",
            unit: "N/m",
            doc: "spring constant k of each end's contact",
            ..POSITIVE
        },
        Param {
            name: "damping",
            unit: "N s/m",
            lo_closed: true,
            range: ">= 0",
            doc: "damper constant c of each end's contact",
            ..POSITIVE
        },
        GRAVITY,
    ],
    has_exact: false,
};

/// The penalty rod in the registry.
pub const PENALTY_ENTRY: Entry = Entry {
    spec: &PENALTY_SPEC,
    build: |v| {
        Box::new(PenaltyRod {
            mass: v[0],
            length: v[1],
            inertia: v[2],
            stiffness: v[3],
            damping: v[4],
            gravity: v[5],
        })
    },
};

fn side(i: usize) -> f64 {
    if i == 0 {
        -1.0
    } else {
        1.0
    }
}

/// End i's height, its rate, and their gradients over x.
fn end(i: usize, half: f64, x: &DVector<f64>) -> (f64, f64, DVector<f64>, DVector<f64>) {
    let s = side(i);
    let (sn, cs) = (libm::sin(x[2]), libm::cos(x[2]));
    let g = x[1] + s * half * sn;
    let rate = x[4] + s * half * cs * x[5];
    let grad = DVector::from_vec(vec![0.0, 1.0, s * half * cs, 0.0, 0.0, 0.0]);
    let rate_grad = DVector::from_vec(vec![
        0.0,
        0.0,
        -s * half * sn * x[5],
        0.0,
        1.0,
        s * half * cs,
    ]);
    (g, rate, grad, rate_grad)
}

fn free_flow(x: &DVector<f64>, g: f64) -> DVector<f64> {
    DVector::from_vec(vec![x[3], x[4], x[5], 0.0, -g, 0.0])
}

fn free_jacobian() -> DMatrix<f64> {
    let mut a = DMatrix::zeros(6, 6);
    for k in 0..3 {
        a[(k, k + 3)] = 1.0;
    }
    a
}

/// A rod landing on its ends with rigid impacts (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RigidRod {
    /// Mass, kg.
    pub mass: f64,
    /// Length, m.
    pub length: f64,
    /// Moment of inertia about the centre of mass, kg m².
    pub inertia: f64,
    /// Restitution at each end.
    pub restitution: f64,
    /// Gravity, m/s².
    pub gravity: f64,
}

impl HybridSystem for RigidRod {
    fn name(&self) -> String {
        "rigid rod".into()
    }
    fn validate(&self) -> Result<()> {
        RIGID_SPEC.check(&self.values())
    }
    fn dim(&self) -> usize {
        6
    }
    fn rhs(&self, _: usize, x: &DVector<f64>) -> DVector<f64> {
        free_flow(x, self.gravity)
    }
    fn rhs_jacobian(&self, _: usize, _: &DVector<f64>) -> DMatrix<f64> {
        free_jacobian()
    }
    fn guard_count(&self, _: usize) -> usize {
        2
    }
    fn guard(&self, _: usize, i: usize, x: &DVector<f64>) -> f64 {
        end(i, 0.5 * self.length, x).0
    }
    fn guard_gradient(&self, _: usize, i: usize, x: &DVector<f64>) -> DVector<f64> {
        end(i, 0.5 * self.length, x).2
    }
    /// The impulse P = -(1+e)·u/w along y at end i (u its normal velocity, w = 1/m + r²/I,
    /// r = s (L/2) cos θ its lever arm): v_y += P/m, ω += r P/I.
    fn reset(&self, mode: usize, i: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        let (r, _) = self.arm(i, x[2]);
        let u = x[4] + r * x[5];
        let w = 1.0 / self.mass + r * r / self.inertia;
        let p = -(1.0 + self.restitution) * u / w;
        let mut y = x.clone();
        y[4] += p / self.mass;
        y[5] += r * p / self.inertia;
        (mode, y)
    }
    fn reset_jacobian(&self, _: usize, i: usize, x: &DVector<f64>) -> DMatrix<f64> {
        let (r, dr) = self.arm(i, x[2]);
        let (m, inertia, c) = (self.mass, self.inertia, 1.0 + self.restitution);
        let u = x[4] + r * x[5];
        let w = 1.0 / m + r * r / inertia;
        let p = -c * u / w;
        let (u_th, w_th) = (dr * x[5], 2.0 * r * dr / inertia);
        let p_th = -c * (u_th * w - u * w_th) / (w * w);
        let (p_vy, p_om) = (-c / w, -c * r / w);
        let mut out = DMatrix::identity(6, 6);
        out[(4, 2)] = p_th / m;
        out[(4, 4)] += p_vy / m;
        out[(4, 5)] = p_om / m;
        out[(5, 2)] = (dr * p + r * p_th) / inertia;
        out[(5, 4)] = r * p_vy / inertia;
        out[(5, 5)] += r * p_om / inertia;
        out
    }
}

impl RigidRod {
    /// End i's lever arm r = s (L/2) cos θ and dr/dθ.
    fn arm(&self, i: usize, theta: f64) -> (f64, f64) {
        let (s, half) = (side(i), 0.5 * self.length);
        (s * half * libm::cos(theta), -s * half * libm::sin(theta))
    }
}

impl Declared for RigidRod {
    fn spec(&self) -> &'static Spec {
        &RIGID_SPEC
    }
    fn values(&self) -> Vec<f64> {
        vec![
            self.mass,
            self.length,
            self.inertia,
            self.restitution,
            self.gravity,
        ]
    }
    exact_from_closed_form!();
}

/// How far ahead [`RigidRod`]'s closed form looks for an impact, s, and the scan's step.
const HORIZON: f64 = 20.0;
const SCAN: f64 = 1e-4;

impl super::ClosedForm for RigidRod {
    fn flight(&self, _: usize, x: &DVector<f64>, t: f64) -> DVector<f64> {
        let g = self.gravity;
        DVector::from_vec(vec![
            x[0] + x[3] * t,
            x[1] + x[4] * t - 0.5 * g * t * t,
            x[2] + x[5] * t,
            x[3],
            x[4] - g * t,
            x[5],
        ])
    }
    fn flight_jacobian(&self, _: usize, _: &DVector<f64>, t: f64) -> DMatrix<f64> {
        DMatrix::identity(6, 6) + free_jacobian() * t
    }
    /// End i's height along the flight, y(t) + s (L/2) sin(θ + ω t), scanned in steps of
    /// 0.1 ms for its first fall through zero (a guard leaving zero is skipped), then bisected
    /// to adjacent floats.
    fn time_to_guard(&self, mode: usize, i: usize, x: &DVector<f64>) -> Option<f64> {
        let h = |t: f64| end(i, 0.5 * self.length, &self.flight(mode, x, t)).0;
        let (g0, rate0, _, _) = end(i, 0.5 * self.length, x);
        if g0 <= 0.0 && rate0 < 0.0 {
            return Some(0.0);
        }
        let mut lo = 0.0;
        let mut t = SCAN;
        while t < HORIZON {
            if h(t) <= 0.0 && (h(lo) > 0.0 || lo > 0.0) {
                let mut hi = t;
                while hi - lo > f64::EPSILON * hi.max(1e-300) * 4.0 {
                    let mid = 0.5 * (lo + hi);
                    if h(mid) > 0.0 {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                return Some(hi);
            }
            lo = t;
            t += SCAN;
        }
        None
    }
}

/// A rod landing on its ends with a push-only spring-damper at each (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PenaltyRod {
    /// Mass, kg.
    pub mass: f64,
    /// Length, m.
    pub length: f64,
    /// Moment of inertia about the centre of mass, kg m².
    pub inertia: f64,
    /// Spring constant of each end, N/m.
    pub stiffness: f64,
    /// Damper constant of each end, N s/m.
    pub damping: f64,
    /// Gravity, m/s².
    pub gravity: f64,
}

impl PenaltyRod {
    fn touching(mode: usize, i: usize) -> bool {
        mode & (1 << i) != 0
    }
    /// End i's force argument -k g - c ġ and its gradient.
    fn push(&self, i: usize, x: &DVector<f64>) -> (f64, DVector<f64>) {
        let (g, rate, grad, rate_grad) = end(i, 0.5 * self.length, x);
        (
            -self.stiffness * g - self.damping * rate,
            -self.stiffness * grad - self.damping * rate_grad,
        )
    }
}

impl HybridSystem for PenaltyRod {
    fn name(&self) -> String {
        "penalty rod".into()
    }
    fn validate(&self) -> Result<()> {
        PENALTY_SPEC.check(&self.values())
    }
    fn dim(&self) -> usize {
        6
    }
    fn rhs(&self, mode: usize, x: &DVector<f64>) -> DVector<f64> {
        let mut f = free_flow(x, self.gravity);
        for i in 0..2 {
            if Self::touching(mode, i) {
                let (force, _) = self.push(i, x);
                let arm = side(i) * 0.5 * self.length * libm::cos(x[2]);
                f[4] += force / self.mass;
                f[5] += arm * force / self.inertia;
            }
        }
        f
    }
    fn rhs_jacobian(&self, mode: usize, x: &DVector<f64>) -> DMatrix<f64> {
        let mut a = free_jacobian();
        for i in 0..2 {
            if Self::touching(mode, i) {
                let (force, grad) = self.push(i, x);
                let half = side(i) * 0.5 * self.length;
                let (arm, d_arm) = (half * libm::cos(x[2]), -half * libm::sin(x[2]));
                for k in 0..6 {
                    a[(4, k)] += grad[k] / self.mass;
                    a[(5, k)] += arm * grad[k] / self.inertia;
                }
                a[(5, 2)] += d_arm * force / self.inertia;
            }
        }
        a
    }
    fn guard_count(&self, _: usize) -> usize {
        2
    }
    fn guard(&self, mode: usize, i: usize, x: &DVector<f64>) -> f64 {
        match (Self::touching(mode, i), end(i, 0.5 * self.length, x)) {
            (true, _) => self.push(i, x).0,
            (false, (g, rate, ..)) if g >= 0.0 || rate <= 0.0 => g,
            // Released below the ground and rising (the damper let go first): the force resumes
            // when its argument rises back through 0, not when the end reaches the ground. (A
            // descending end is met by its gap: a touchdown located just below 0 keeps it.)
            (false, _) => -self.push(i, x).0,
        }
    }
    fn guard_gradient(&self, mode: usize, i: usize, x: &DVector<f64>) -> DVector<f64> {
        match (Self::touching(mode, i), end(i, 0.5 * self.length, x)) {
            (true, _) => self.push(i, x).1,
            (false, (g, rate, grad, _)) if g >= 0.0 || rate <= 0.0 => grad,
            (false, _) => -self.push(i, x).1,
        }
    }
    fn reset(&self, mode: usize, i: usize, x: &DVector<f64>) -> (usize, DVector<f64>) {
        (mode ^ (1 << i), x.clone())
    }
    fn reset_jacobian(&self, _: usize, _: usize, _: &DVector<f64>) -> DMatrix<f64> {
        DMatrix::identity(6, 6)
    }
}

impl Declared for PenaltyRod {
    fn spec(&self) -> &'static Spec {
        &PENALTY_SPEC
    }
    fn values(&self) -> Vec<f64> {
        vec![
            self.mass,
            self.length,
            self.inertia,
            self.stiffness,
            self.damping,
            self.gravity,
        ]
    }
}
