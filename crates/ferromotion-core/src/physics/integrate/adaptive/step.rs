//! One Dormand–Prince 5(4) step: the Butcher tableau, the step stage by stage
//! (`dp_stages`) and, for an events mode's linear law, in closed form (`step_polys`,
//! `linear_step`) with its derivative `R(h·A)` ([`StepTangent`]), and the counters
//! of the evaluations steps stand for ([`Stats`]).

use super::modes::{Mode, System};
use super::*;

// Butcher tableau of Dormand–Prince 5(4).
const A21: f64 = 1.0 / 5.0;
const A31: f64 = 3.0 / 40.0;
const A32: f64 = 9.0 / 40.0;
const A41: f64 = 44.0 / 45.0;
const A42: f64 = -56.0 / 15.0;
const A43: f64 = 32.0 / 9.0;
const A51: f64 = 19372.0 / 6561.0;
const A52: f64 = -25360.0 / 2187.0;
const A53: f64 = 64448.0 / 6561.0;
const A54: f64 = -212.0 / 729.0;
const A61: f64 = 9017.0 / 3168.0;
const A62: f64 = -355.0 / 33.0;
const A63: f64 = 46732.0 / 5247.0;
const A64: f64 = 49.0 / 176.0;
const A65: f64 = -5103.0 / 18656.0;
const A71: f64 = 35.0 / 384.0;
const A73: f64 = 500.0 / 1113.0;
const A74: f64 = 125.0 / 192.0;
const A75: f64 = -2187.0 / 6784.0;
const A76: f64 = 11.0 / 84.0;
// Error coefficients: 5th-order weights minus the embedded 4th-order ones.
const E1: f64 = 71.0 / 57600.0;
const E3: f64 = -71.0 / 16695.0;
const E4: f64 = 71.0 / 1920.0;
const E5: f64 = -17253.0 / 339200.0;
const E6: f64 = 22.0 / 525.0;
const E7: f64 = -1.0 / 40.0;
// Dense output (Hairer's `contd5`).
const D1: f64 = -12715105075.0 / 11282082432.0;
const D3: f64 = 87487479700.0 / 32700410799.0;
const D4: f64 = -10690763975.0 / 1880347072.0;
const D5: f64 = 701980252875.0 / 199316789632.0;
const D6: f64 = -1453857185.0 / 822651844.0;
const D7: f64 = 69997945.0 / 29380423.0;

/// Counters of one or more rollouts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// Right-hand-side evaluations, counted stage by stage: six per step, accepted or
    /// rejected, one at the start and after each switch (the mode's first stage), one for
    /// the initial step guess. In events mode
    /// a step evaluates only its last stage and computes the other five in closed form
    /// (`linear_step`); it is still counted as the six evaluations of the stage-by-stage
    /// step it equals to round-off, so that the count compares across routes and modes.
    pub num_eval: u64,
    /// Accepted steps.
    pub accepted_steps: u64,
    /// Rejected steps.
    pub rejected_steps: u64,
    /// Contact switches located (events mode only).
    pub events: u64,
}

/// One Dormand–Prince step of size `h` from `x` with `k1 = f(x)`.
pub(super) struct Step {
    pub(super) x_new: State,
    /// `f(x_new)`: the last stage, and the next step's first (FSAL).
    pub(super) k7: State,
    pub(super) err: State,
    /// `h·Σ D_i·k_i`, the last coefficient of the dense output (see `DenseOutput`).
    pub(super) r5: State,
    /// The step's derivative `R(h·A)` in events mode (the identity without events, where
    /// it is never used: forward sensitivities need events).
    pub(super) tangent: StepTangent,
}

/// Every step costs six evaluations, FSAL: five inner stages and `k7`. In events mode the
/// step is computed in closed form (`linear_step`) and makes one real evaluation, `k7`;
/// it is still counted as the six stage evaluations it stands for (docs/model.md, cost).
pub(super) fn dp_step(
    sys: &System,
    mode: Mode,
    x: &State,
    k1: &State,
    h: f64,
    stats: &mut Stats,
) -> Step {
    stats.num_eval += 6;
    match mode {
        Mode::Clipped => dp_stages(|y| sys.rhs(Mode::Clipped, y), x, k1, h),
        Mode::Free => linear_step(sys, mode, (0.0, 0.0), x, k1, h),
        Mode::Pushing => linear_step(sys, mode, sys.pushing, x, k1, h),
    }
}

/// The step stage by stage, for any right-hand side `f` (the push-only law with its kink,
/// without events; and the definition `linear_step` is tested against).
#[inline(always)]
fn dp_stages(f: impl Fn(&State) -> State, x: &State, k1: &State, h: f64) -> Step {
    let k2 = f(&(x + h * (A21 * k1)));
    let k3 = f(&(x + h * (A31 * k1 + A32 * k2)));
    let k4 = f(&(x + h * (A41 * k1 + A42 * k2 + A43 * k3)));
    let k5 = f(&(x + h * (A51 * k1 + A52 * k2 + A53 * k3 + A54 * k4)));
    let k6 = f(&(x + h * (A61 * k1 + A62 * k2 + A63 * k3 + A64 * k4 + A65 * k5)));
    let x_new = x + h * (A71 * k1 + A73 * k3 + A74 * k4 + A75 * k5 + A76 * k6);
    let k7 = f(&x_new);
    let err = h * (E1 * k1 + E3 * k3 + E4 * k4 + E5 * k5 + E6 * k6 + E7 * k7);
    let r5 = h * (D1 * k1 + D3 * k3 + D4 * k4 + D5 * k5 + D6 * k6 + D7 * k7);
    Step {
        x_new,
        k7,
        err,
        r5,
        tangent: StepTangent::IDENTITY,
    }
}

/// `Z = h·A` for `A = [[0, 1], [a_y, a_v]]` (an events mode's constant Jacobian).
#[derive(Debug, Clone, Copy)]
struct StepMatrix {
    h: f64,
    ha_y: f64,
    ha_v: f64,
}

impl StepMatrix {
    fn new(h: f64, (a_y, a_v): (f64, f64)) -> Self {
        StepMatrix {
            h,
            ha_y: h * a_y,
            ha_v: h * a_v,
        }
    }

    /// `Z·v`, from A's companion shape.
    #[inline]
    fn times(&self, v: &State) -> State {
        State::new(self.h * v[1], self.ha_y * v[0] + self.ha_v * v[1])
    }

    /// `Z·M`, column by column.
    #[inline]
    fn times_matrix(&self, m: &Jacobian) -> Jacobian {
        Jacobian::new(
            self.h * m[(1, 0)],
            self.h * m[(1, 1)],
            self.ha_y * m[(0, 0)] + self.ha_v * m[(1, 0)],
            self.ha_y * m[(0, 1)] + self.ha_v * m[(1, 1)],
        )
    }

    /// `Z^j = p_j·I + q_j·Z` for j = 0..=6, by Cayley–Hamilton: `Z² = tr·Z - det·I` with
    /// `tr = h·a_v` and `-det = h²·a_y`, so `(a·I + b·Z)(c·I + d·Z) = (a·c - det·b·d)·I +
    /// (a·d + b·c + tr·b·d)·Z`. `Z⁴ = Z²·Z²`, `Z⁵ = Z²·Z³`, `Z⁶ = Z³·Z³`: five products
    /// deep rather than ten by `Z^(j+1) = Z^j·Z` (the powers are on the stepper's critical
    /// path: the step's error waits for them, the next step size for the error).
    #[inline]
    fn powers(&self) -> ([f64; 7], [f64; 7]) {
        let (s, t) = (self.h * self.ha_y, self.ha_v);
        let times = |(a, b): (f64, f64), (c, d): (f64, f64)| {
            let bd = b * d;
            (a * c + s * bd, (a * d + b * c) + t * bd)
        };
        let z2 = (s, t);
        let z3 = (s * t, s + t * t);
        let (z4, z5, z6) = (times(z2, z2), times(z2, z3), times(z3, z3));
        (
            [1.0, 0.0, z2.0, z3.0, z4.0, z5.0, z6.0],
            [0.0, 1.0, z2.1, z3.1, z4.1, z5.1, z6.1],
        )
    }
}

/// The derivative of one step of a linear law, `R(Z) = alpha·I + beta·Z`.
#[derive(Debug, Clone, Copy)]
pub(super) struct StepTangent {
    alpha: f64,
    beta: f64,
    z: StepMatrix,
}

impl StepTangent {
    const IDENTITY: StepTangent = StepTangent {
        alpha: 1.0,
        beta: 0.0,
        z: StepMatrix {
            h: 0.0,
            ha_y: 0.0,
            ha_v: 0.0,
        },
    };

    /// `Phi ← R(Z)·Phi`.
    #[inline]
    pub(super) fn apply(&self, phi: &Jacobian) -> Jacobian {
        self.alpha * phi + self.beta * self.z.times_matrix(phi)
    }
}

/// The polynomials in `Z = h·A` that make one Dormand–Prince 5(4) step of a linear law
/// `x' = A·x + b` (an events mode), each reduced to `alpha·I + beta·Z`. Each stage of such a
/// law is `k_i = K_i(Z)·k1` for a polynomial `K_i` (`K_1 = 1`, `K_i = 1 + z·Σ_j a_ij·K_j`),
/// so the step's combinations are polynomials in Z applied to `k1`, with exact rational
/// coefficients worked out from the tableau:
///
/// - `x_new = x + h·P(Z)·k1`, `P(z) = 1 + z/2 + z²/6 + z³/24 + z⁴/120 + z⁵/600`;
/// - the step's derivative (the variational equations through the same stages, step size
///   held), DOPRI5's stability polynomial `R(z) = 1 + z·P(z)`;
/// - `err = h·z⁴·(-97/120000 + 13/40000·z - 1/24000·z²)·k1`, the 5th- minus the embedded
///   4th-order solution (its first four powers cancel exactly: nothing left to round);
/// - `r5 = h·z³·(1/24 + 22358351/881412690·z - 2325839/881412690·z² + 13999589/3525650760·z³)·k1`,
///   the last dense-output coefficient (Hairer's `contd5`).
struct StepPolys {
    p: (f64, f64),
    r: StepTangent,
    e: (f64, f64),
    d: (f64, f64),
}

#[inline(always)]
fn step_polys(z: StepMatrix) -> StepPolys {
    const E4: f64 = -97.0 / 120000.0;
    const E5: f64 = 13.0 / 40000.0;
    const E6: f64 = -1.0 / 24000.0;
    const D3: f64 = 1.0 / 24.0;
    const D4: f64 = 22358351.0 / 881412690.0;
    const D5: f64 = -2325839.0 / 881412690.0;
    const D6: f64 = 13999589.0 / 3525650760.0;
    const P2: f64 = 1.0 / 6.0;
    const P3: f64 = 1.0 / 24.0;
    const P4: f64 = 1.0 / 120.0;
    const P5: f64 = 1.0 / 600.0;
    let (p, q) = z.powers();
    // P(z): its z term has p_1 = 0, q_1 = 1.
    let (pa, pb) = (
        1.0 + ((P2 * p[2] + P3 * p[3]) + (P4 * p[4] + P5 * p[5])),
        0.5 + ((P2 * q[2] + P3 * q[3]) + (P4 * q[4] + P5 * q[5])),
    );
    StepPolys {
        p: (pa, pb),
        // R = I + Z·(pa·I + pb·Z) = (1 - det·pb)·I + (pa + tr·pb)·Z.
        r: StepTangent {
            alpha: 1.0 + z.h * z.ha_y * pb,
            beta: pa + z.ha_v * pb,
            z,
        },
        e: (
            E4 * p[4] + (E5 * p[5] + E6 * p[6]),
            E4 * q[4] + (E5 * q[5] + E6 * q[6]),
        ),
        d: (
            (D3 * p[3] + D4 * p[4]) + (D5 * p[5] + D6 * p[6]),
            (D3 * q[3] + D4 * q[4]) + (D5 * q[5] + D6 * q[6]),
        ),
    }
}

/// One step of Dormand–Prince 5(4) in an events mode (`A = [[0, 1], [a_y, a_v]]`), in
/// closed form (`step_polys`): a few dozen scalar operations and products by `Z = h·A`
/// instead of five stage evaluations; `k7 = f(x_new)` is evaluated, to keep FSAL exact.
/// The same step as `dp_stages` to round-off (`tests::linear_step_is_the_stage_by_stage_step`).
#[inline(always)]
fn linear_step(sys: &System, mode: Mode, a: (f64, f64), x: &State, k1: &State, h: f64) -> Step {
    let polys = step_polys(StepMatrix::new(h, a));
    let zk1 = polys.r.z.times(k1);
    let apply = |(alpha, beta): (f64, f64)| h * (alpha * k1 + beta * zk1);
    let x_new = x + apply(polys.p);
    Step {
        x_new,
        k7: sys.rhs(mode, &x_new),
        err: apply(polys.e),
        r5: apply(polys.d),
        tangent: polys.r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stage-by-stage variational equations of one step (the Butcher tableau applied
    /// to `Phi' = A·Phi`), the definition the closed-form `StepPolys::r` shortens.
    fn stage_tangent(a: &Jacobian, phi: &Jacobian, h: f64) -> Jacobian {
        let t1 = a * phi;
        let t2 = a * (phi + h * (A21 * t1));
        let t3 = a * (phi + h * (A31 * t1 + A32 * t2));
        let t4 = a * (phi + h * (A41 * t1 + A42 * t2 + A43 * t3));
        let t5 = a * (phi + h * (A51 * t1 + A52 * t2 + A53 * t3 + A54 * t4));
        let t6 = a * (phi + h * (A61 * t1 + A62 * t2 + A63 * t3 + A64 * t4 + A65 * t5));
        phi + h * (A71 * t1 + A73 * t3 + A74 * t4 + A75 * t5 + A76 * t6)
    }

    #[test]
    fn stability_polynomial_is_the_stage_tangent() {
        let phi = Jacobian::new(0.3, -1.7, 2.5, 0.4);
        for (k, c) in [(1e4, 32.0), (1e6, 321.2), (1e8, 3212.0), (0.0, 0.0)] {
            for h in [1e-6, 1e-5, 1e-4, 3e-4] {
                let a = Jacobian::new(0.0, 1.0, -k, -c);
                let want = stage_tangent(&a, &phi, h);
                let got = step_polys(StepMatrix::new(h, (-k, -c))).r.apply(&phi);
                let err = max_abs(&(got - want)) / max_abs(&want);
                // Round-off only: at h·omega = 3 (k = 1e8, h = 3e-4, near the method's
                // stability limit) the polynomial's terms cancel, and both forms lose ~1e-13.
                assert!(err < 1e-12, "k = {k:e}, h = {h:e}: {err:e}");
            }
        }
    }

    /// The seven stages of one step, for the size of the terms a step sums.
    fn stages(f: impl Fn(&State) -> State, x: &State, k1: &State, h: f64) -> [State; 7] {
        let k2 = f(&(x + h * (A21 * k1)));
        let k3 = f(&(x + h * (A31 * k1 + A32 * k2)));
        let k4 = f(&(x + h * (A41 * k1 + A42 * k2 + A43 * k3)));
        let k5 = f(&(x + h * (A51 * k1 + A52 * k2 + A53 * k3 + A54 * k4)));
        let k6 = f(&(x + h * (A61 * k1 + A62 * k2 + A63 * k3 + A64 * k4 + A65 * k5)));
        let k7 = f(&(x + h * (A71 * k1 + A73 * k3 + A74 * k4 + A75 * k5 + A76 * k6)));
        [*k1, k2, k3, k4, k5, k6, k7]
    }

    /// The closed-form step of each events mode against the stage-by-stage step of the
    /// same right-hand side (`dp_stages`, the Butcher tableau applied evaluation by
    /// evaluation): every output to round-off of the stage form, i.e. relative to the size
    /// of the terms it sums (`|x| + h·max|k_i|` per component), across k, h and states
    /// from deep in contact to free flight.
    #[test]
    fn linear_step_is_the_stage_by_stage_step() {
        let states = [
            State::new(-3e-3, -2.5),
            State::new(-1e-4, 3.1),
            State::new(0.7, -0.2),
            State::new(2e-5, 1e-3),
        ];
        for k in [1e3, 1e5, 1e6, 1e8] {
            let law = Penalty::new(k, 0.1606, 0.35).unwrap();
            let sys = System::new(&law, 9.81);
            for mode in [Mode::Free, Mode::Pushing] {
                let a = if mode == Mode::Free {
                    (0.0, 0.0)
                } else {
                    sys.pushing
                };
                // Up to the method's stability limit h·omega ~ 3.3.
                let omega = (k / law.mass).sqrt();
                for h in [1e-7, 1e-5, 0.3 / omega, 3.0 / omega] {
                    for x in &states {
                        let k1 = sys.rhs(mode, x);
                        let got = linear_step(&sys, mode, a, x, &k1, h);
                        // Every stage, to size the round-off of the sums.
                        let f = |y: &State| sys.rhs(mode, y);
                        let want = dp_stages(f, x, &k1, h);
                        let k_max = stages(f, x, &k1, h)
                            .iter()
                            .fold(State::zeros(), |m, k| m.sup(&k.abs()));
                        let scale = x.abs() + h * k_max;
                        for (name, g, w) in [
                            ("x_new", got.x_new, want.x_new),
                            ("k7", got.k7, want.k7),
                            ("err", got.err, want.err),
                            ("r5", got.r5, want.r5),
                        ] {
                            for i in 0..2 {
                                let s = if name == "k7" { k_max[i] } else { scale[i] };
                                assert!(
                                    (g[i] - w[i]).abs() <= 1e-13 * s,
                                    "k = {k:e}, {mode:?}, h = {h:e}, x = {x:?}: {name}[{i}] \
                                     {} vs {}",
                                    g[i],
                                    w[i]
                                );
                            }
                        }
                        // And the step's derivative is the stage tangent of the same step.
                        let a_mat = Jacobian::new(0.0, 1.0, a.0, a.1);
                        let phi = Jacobian::new(0.3, -1.7, 2.5, 0.4);
                        let want_t = stage_tangent(&a_mat, &phi, h);
                        let got_t = got.tangent.apply(&phi);
                        let err = max_abs(&(got_t - want_t)) / max_abs(&want_t);
                        assert!(err < 1e-12, "k = {k:e}, {mode:?}, h = {h:e}: {err:e}");
                    }
                }
            }
        }
    }
}
