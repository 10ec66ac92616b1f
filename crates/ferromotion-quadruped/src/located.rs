//! The event-located penalty rollout: the drop's `corrected` idea
//! (`physics/integrate/corrected.rs`) on the quadruped, for the converged-in-dt reference.
//!
//! # Why the fixed-step penalty map has no usable derivative reference
//!
//! The push-only law's normal force jumps from 0 to `c·|φ̇|` when a foot's gap φ crosses
//! zero from above, and its friction with it. A fixed step reads the law at the start of
//! the step, so as an input moves, a touchdown jumps from one step to the next and the
//! final state jumps by about `dt·c·|φ̇|/m_foot` (a velocity) each time: the map is a
//! staircase. Central differences either stay inside one stair (probes far below
//! `|φ̇|·dt` per unit input: the derivative of the discrete map, without the touchdown's
//! saltation) or straddle stairs (their answer then moves with the probe). Lift-off and
//! stick/slide changes are kinks, not jumps, but the same step-to-step hopping leaves an
//! O(dt·c/m_foot) wobble in the derivative.
//!
//! # The located scheme
//!
//! Each step is the library's penalty step ([`super::step::penalty_step_on`]) with every
//! foot's branch held (separated, sticking, sliding forward or backward). Along the step's
//! own path `v(s) = v + s·a`, `q(s) = q + s·v(s)` (a frozen, 0 ≤ s ≤ h) the branch the law
//! would pick is read at the middle and the end; if either differs, the first switch is
//! located as the first root of one of each foot's four switching functions
//!
//! ```text
//! φ(s),   F_n(s) = -k φ - c φ̇,   μ F_n + F_t,   μ F_n - F_t        (F_t = -b ẋ_foot)
//! ```
//!
//! after which the branch changes (regula falsi with the Illinois modification, to a few
//! ulps of s). The step is cut there, the state taken at the switch, the branch swapped,
//! and the grid restarted at the switch (so that the discretisation of each phase does not
//! depend on where the switch fell between grid points, as in `corrected`). The map is
//! then continuous in the inputs and smooth within one ordering of the switches: its
//! central differences settle as the probe shrinks, and they carry the saltation of every
//! jump. It converges to the penalty law's flow at first order in dt.
//!
//! One wrinkle remains: when a switch crosses a grid point (the phase since the previous
//! switch wraps), the path's slope there changes by O(h·|a|), so the switch time's
//! derivative has a kink of relative size O(h·|a|/|ė|). Over a gait period at 10 µs the
//! differences of a probe that straddles one move by 1e-5 to 5e-4; the probe-stable search
//! halves past them, and the forward-mode tangent below (carried through each switch with
//! its time's derivative, `ds = -∇E·dΦ / (∇E·∂Φ/∂s)`, and the clock's shift through the
//! control) checks the accepted differences by a second route.
//!
//! Without a switch, a step is the fixed route's step bit for bit.

use super::model::{arr, dual_arr, foot_jacobian, Dual, QuadState, Quadruped, Real, NDOF, NFEET};
use super::step::{
    penalty_step_on, propagate_tangent, ContactLaw, ContactMode, PenaltyContact, Step, Tangent,
};
use ferromotion_core::error::{FerroError, Result};
use nalgebra::DVector;

/// What a located rollout yields.
#[derive(Debug, Clone, PartialEq)]
pub struct LocatedRun {
    /// The state at `x0.t + n·dt`.
    pub final_state: QuadState,
    /// The branch of every foot in each sub-step (steps and cut steps alike).
    pub modes: Vec<[ContactMode; NFEET]>,
    /// Switches located inside a step (a switch that falls exactly on a step's end is
    /// taken there and also counts).
    pub events: usize,
    /// When asked: the tangent of this map in (z0, ẋ0, kp), carried through every step
    /// and every located switch (the switch time's own derivative included); `None`
    /// also when a switch was found without being the root of one switching function.
    pub tangent: Option<Tangent>,
}

/// The four switching functions of each foot at (q, v), and the branch the law picks.
fn switching(
    robot: &Quadruped,
    law: &PenaltyContact,
    q: &DVector<f64>,
    v: &DVector<f64>,
) -> ([[f64; 4]; NFEET], [ContactMode; NFEET]) {
    let kin = robot.kin(&arr(q));
    let mu = robot.friction;
    let mut g = [[0.0; 4]; NFEET];
    let mut modes = [ContactMode::Separated; NFEET];
    for leg in 0..NFEET {
        let (jn, jt) = foot_jacobian(&kin, leg);
        let (mut vn, mut vt) = (0.0, 0.0);
        for j in 0..NDOF {
            vn += jn[j] * v[j];
            vt += jt[j] * v[j];
        }
        let gap = kin.foot[leg][1];
        let fn_ = -law.stiffness * gap - law.damping * vn;
        let ft = -law.tangential_damping * vt;
        g[leg] = [gap, fn_, mu * fn_ + ft, mu * fn_ - ft];
        // The choice `penalty_step` makes from the same numbers.
        modes[leg] = if !(gap < 0.0 && fn_ > 0.0) {
            ContactMode::Separated
        } else if ft.abs() > mu * fn_ {
            if ft < 0.0 {
                ContactMode::SlidingForward
            } else {
                ContactMode::SlidingBackward
            }
        } else {
            ContactMode::Sticking
        };
    }
    (g, modes)
}

/// A sub-step's path: `v(s) = v + s·a`, `q(s) = q + s·v(s)`.
struct Path<'a> {
    q: &'a DVector<f64>,
    v: &'a DVector<f64>,
    a: DVector<f64>,
}

impl Path<'_> {
    fn at(&self, s: f64) -> (DVector<f64>, DVector<f64>) {
        let v = self.v + s * &self.a;
        let q = self.q + s * &v;
        (q, v)
    }
}

/// The root of `f` in (lo, hi] given `f(lo) = flo`, `f(hi) = fhi` on opposite sides of
/// zero (`flo > 0` differs from `fhi > 0`): regula falsi with the Illinois modification,
/// bisection when an iterate falls outside the bracket, until the bracket is a few ulps.
/// Returns the end on `hi`'s side, so that at the returned s the function has crossed.
fn root(
    mut f: impl FnMut(f64) -> f64,
    mut lo: f64,
    mut flo: f64,
    mut hi: f64,
    mut fhi: f64,
) -> f64 {
    let hi_side = fhi > 0.0;
    let mut last = 0i8;
    for _ in 0..200 {
        if hi - lo <= 4.0 * f64::EPSILON * hi.abs() {
            break;
        }
        let mut c = (lo * fhi - hi * flo) / (fhi - flo);
        if !(c > lo && c < hi) {
            c = 0.5 * (lo + hi);
        }
        let fc = f(c);
        if (fc > 0.0) == hi_side {
            hi = c;
            fhi = fc;
            if last == -1 {
                flo *= 0.5;
            }
            last = -1;
        } else {
            lo = c;
            flo = fc;
            if last == 1 {
                fhi *= 0.5;
            }
            last = 1;
        }
    }
    hi
}

/// A located switch: its time in the step, the branch after it, and the switching
/// function (foot, index) whose root it is.
type Switch = (f64, [ContactMode; NFEET], Option<(usize, usize)>);

/// Where, along the path over [0, h], the branch first leaves `held`: the switch time,
/// the branch after it and the switching function (foot, index) whose root it is (none for
/// a switch at the start of the step or one found without a root). `None` when the middle
/// and the end keep `held`.
fn first_switch(
    robot: &Quadruped,
    law: &PenaltyContact,
    path: &Path,
    held: &[ContactMode; NFEET],
    g0: &[[f64; 4]; NFEET],
    h: f64,
) -> Option<Switch> {
    let eval = |s: f64| {
        let (q, v) = path.at(s);
        switching(robot, law, &q, &v)
    };
    let (gm, mm) = eval(0.5 * h);
    let (gh, mh) = eval(h);
    let (lo, glo, hi, ghi) = if mm != *held {
        (0.0, *g0, 0.5 * h, gm)
    } else if mh != *held {
        (0.5 * h, gm, h, gh)
    } else {
        return None;
    };
    // Roots below this are the switch just taken, seen through rounding.
    let floor = lo.max(1e-9 * h);
    let mut points = vec![];
    for leg in 0..NFEET {
        for k in 0..4 {
            let (a, b) = (glo[leg][k], ghi[leg][k]);
            if (a > 0.0) == (b > 0.0) {
                continue;
            }
            let r = root(|s| eval(s).0[leg][k], lo, a, hi, b);
            if r > floor {
                points.push((r, Some((leg, k))));
            }
        }
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points.push((hi, None));
    // Between consecutive points the branch is constant: the switch is at the start of the
    // first interval whose middle is on another branch.
    let (mut start, mut which) = (lo, None);
    for &(p, w) in &points {
        if p > start {
            let m = eval(0.5 * (start + p)).1;
            if m != *held {
                return Some((start, m, which));
            }
            start = p;
            which = w;
        }
    }
    Some((start, mh, which))
}

/// The derivative of foot `leg`'s switching function `k` at (q, v) along (dq, dv).
#[allow(clippy::too_many_arguments)]
fn switching_derivative(
    robot: &Quadruped,
    law: &PenaltyContact,
    q: &DVector<f64>,
    v: &DVector<f64>,
    dq: &DVector<f64>,
    dv: &DVector<f64>,
    leg: usize,
    k: usize,
) -> f64 {
    let kin = robot.kin(&dual_arr(q, dq.as_slice()));
    let (jn, jt) = foot_jacobian(&kin, leg);
    let (mut vn, mut vt) = (Dual::cst(0.0), Dual::cst(0.0));
    for j in 0..NDOF {
        let vj = Dual { v: v[j], d: dv[j] };
        vn = vn + jn[j] * vj;
        vt = vt + jt[j] * vj;
    }
    let gap = kin.foot[leg][1];
    let fn_ = gap * Dual::cst(-law.stiffness) - vn * Dual::cst(law.damping);
    let ft = vt * Dual::cst(-law.tangential_damping);
    let mu = Dual::cst(robot.friction);
    [gap, fn_, mu * fn_ + ft, mu * fn_ - ft][k].d
}

/// ∂τ/∂t of the clocked PD torques at (t, q, v), N·m/s: a central difference in t at
/// 1e-6 of the gait period (the trot's reference is smooth in t; its error here is
/// ~1e-10 relative, far below what the tangent is checked to).
fn control_rate(robot: &Quadruped, t: f64, q: &DVector<f64>, v: &DVector<f64>) -> DVector<f64> {
    let d = 1e-6 * robot.period;
    (robot.control(t + d, q, v) - robot.control(t - d, q, v)) / (2.0 * d)
}

/// What the fixed-length tangent of a sub-step (`propagate_tangent` with the clock and
/// the length held) leaves out, part one: the clock's shift `dtime` through the control,
/// `Δv = s·M⁻¹·∂τ/∂t·dtime`, `Δq = s·Δv`.
fn clock_terms(
    robot: &Quadruped,
    x: &QuadState,
    st: &Step,
    s: f64,
    tan: &mut Tangent,
    dtime: &[f64; 3],
) {
    if dtime.iter().all(|&d| d == 0.0) {
        return;
    }
    let rate = st.mass_solve(&control_rate(robot, x.t, &x.q, &x.v));
    for (c, &d) in dtime.iter().enumerate() {
        let dvx = (s * d) * &rate;
        let (nv, nq) = (tan.dv.column(c) + &dvx, tan.dq.column(c) + s * &dvx);
        tan.dv.set_column(c, &nv);
        tan.dq.set_column(c, &nq);
    }
}

/// Part two: a change `ds` of the sub-step's length along its path,
/// `∂(q⁺, v⁺)/∂s = (v⁺ + s·a, a)`; the clock after it moves by `ds` too.
fn length_terms(
    x: &QuadState,
    st: &Step,
    s: f64,
    tan: &mut Tangent,
    dtime: &mut [f64; 3],
    ds: &[f64; 3],
) {
    let a = (&st.state.v - &x.v) / s;
    let dir_q = &st.state.v + s * &a;
    for (c, &d) in ds.iter().enumerate() {
        if d == 0.0 {
            continue;
        }
        let (nv, nq) = (tan.dv.column(c) + d * &a, tan.dq.column(c) + d * &dir_q);
        tan.dv.set_column(c, &nv);
        tan.dq.set_column(c, &nq);
        dtime[c] += d;
    }
}

/// Roll the penalty law out over `n` steps of `dt` (to `x0.t + n·dt`) with every switch
/// located inside its step (see the module docs). At most `max_steps` sub-steps.
///
/// Errors: invalid robot, law, state or dt (as [`super::step::penalty_step`]); a
/// velocity beyond [`super::step::MAX_SPEED`] (dt too large for the stiffness);
/// `TooManySteps` past `max_steps` sub-steps; `NonFinite` at a Zeno point (switches
/// without time advancing).
pub fn located_run(
    robot: &Quadruped,
    law: &PenaltyContact,
    x0: &QuadState,
    dt: f64,
    n: usize,
    max_steps: u64,
    tangent: bool,
) -> Result<LocatedRun> {
    let t_final = x0.t + n as f64 * dt;
    let contact = ContactLaw::Penalty(*law);
    let mut tan = tangent.then(Tangent::seed);
    // d(clock)/d(input): the grid restarts at every switch, so the clock moves with them.
    let mut dtime = [0.0; 3];
    let mut x = x0.clone();
    let (mut g, mut held) = switching(robot, law, &x.q, &x.v);
    let mut modes = Vec::with_capacity(n + 64);
    let mut events = 0;
    let mut stalls = 0;
    // Until the first switch the grid is the fixed step's: exactly n steps of dt, so that
    // a run without switches is that step's run bit for bit. After one, the grid restarts
    // at each switch and the last step ends on t_final.
    let mut taken = 0;
    loop {
        let remaining = t_final - x.t;
        let (h, last) = if events == 0 {
            if taken >= n {
                break;
            }
            (dt, taken + 1 == n)
        } else {
            if remaining <= 0.0 {
                break;
            }
            let last = remaining <= dt * (1.0 + 1e-9);
            (if last { remaining } else { dt }, last)
        };
        if modes.len() as u64 >= max_steps {
            return Err(FerroError::TooManySteps {
                route: "quadruped (event-located)",
                max_steps,
                detail: format!(
                    "{} sub-steps and {events} switches by t = {} s",
                    modes.len(),
                    x.t
                ),
            });
        }
        let st = penalty_step_on(robot, law, &x, h, Some(&held))?;
        let switch = {
            let path = Path {
                q: &x.q,
                v: &x.v,
                a: (&st.state.v - &x.v) / h,
            };
            first_switch(robot, law, &path, &held, &g, h)
        };
        match switch {
            None => {
                stalls = 0;
                if let Some(tn) = tan.as_mut() {
                    propagate_tangent(robot, &contact, &x, &st, h, tn)?;
                    clock_terms(robot, &x, &st, h, tn, &dtime);
                    // After a switch the last step ends on t_final: its length moves
                    // against the clock.
                    if events > 0 && last {
                        let ds = dtime.map(|d| -d);
                        length_terms(&x, &st, h, tn, &mut dtime, &ds);
                    }
                }
                modes.push(held);
                x = st.state;
                taken += 1;
                if last {
                    break;
                }
                g = switching(robot, law, &x.q, &x.v).0;
            }
            Some((s, next, _)) if s <= 0.0 => {
                // The branch changes at the start of the step (a grazing switch): take
                // the new one without moving; a run of these is a Zeno point.
                stalls += 1;
                if stalls > 16 {
                    return Err(FerroError::NonFinite {
                        what: "event-located quadruped rollout",
                        detail: format!(
                            "the branches keep switching without time advancing at t = {} s (a Zeno point of the penalty law)",
                            x.t
                        ),
                    });
                }
                held = next;
            }
            Some((s, next, which)) => {
                stalls = 0;
                let cut = penalty_step_on(robot, law, &x, s, Some(&held))?;
                // A switch that is not the root of one switching function (a double
                // crossing inside half a step) has no switch-time derivative: the
                // tangent is dropped, the values go on.
                if which.is_none() {
                    tan = None;
                }
                if let (Some(tn), Some((leg, k))) = (tan.as_mut(), which) {
                    propagate_tangent(robot, &contact, &x, &cut, s, tn)?;
                    clock_terms(robot, &x, &cut, s, tn, &dtime);
                    // The switch time moves with the inputs: E(Φ(x, s)) = 0 gives
                    // ds = -∇E·dΦ / (∇E·∂Φ/∂s), ∂Φ/∂s = (v⁺ + s·a, a).
                    let (q1, v1) = (&cut.state.q, &cut.state.v);
                    let a = (v1 - &x.v) / s;
                    let along =
                        switching_derivative(robot, law, q1, v1, &(v1 + s * &a), &a, leg, k);
                    let mut ds = [0.0; 3];
                    for (c, d) in ds.iter_mut().enumerate() {
                        let dq = tn.dq.column(c).clone_owned();
                        let dv = tn.dv.column(c).clone_owned();
                        *d = -switching_derivative(robot, law, q1, v1, &dq, &dv, leg, k) / along;
                    }
                    length_terms(&x, &cut, s, tn, &mut dtime, &ds);
                }
                modes.push(held);
                x = cut.state;
                g = switching(robot, law, &x.q, &x.v).0;
                held = next;
                events += 1;
            }
        }
    }
    Ok(LocatedRun {
        final_state: x,
        modes,
        events,
        tangent: tan,
    })
}
