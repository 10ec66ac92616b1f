//! The `corrected` route: the fixed step with the missing event term restored.
//!
//! The `fixed` route's tangent is blind to the force jump at contact entry: the
//! continuous flow's Jacobian carries the entry saltation `[[1, 0], [-c/m, 1]]`, whose
//! -c/m ~ sqrt(k) entry no step-by-step derivative of the branch can produce. Here each
//! step of semi-implicit Euler follows its own sub-step path
//!
//! ```text
//! v(s) = v + s·a,   y(s) = y + s·v(s) = y + s·v + s²·a,     a = a(y, v) frozen over the sub-step
//! ```
//!
//! and the switches of the push-only law along that path are located exactly, as roots
//! of quadratics in s: entry (y reaches 0 from above and the force jumps from 0 to c·|v|),
//! the force returning to zero, and re-engagement below ground. The step is split there
//! and the rest of it follows the other law; the grid of N = T/dt steps is kept. Every
//! sub-step costs one force evaluation, so the cost is the fixed route's plus one
//! evaluation per switch.
//!
//! With the switches located the map is a smooth function of x(0), and its tangent is
//! computed by forward-mode dual numbers through everything, the switch times included:
//! that is the discrete saltation of the implemented map. (Applying the continuous
//! saltation to an Euler tangent instead is inconsistent at O(omega·dt) times c/m: at
//! k = 1e6, dt = 1e-4 it leaves a gradient error of 2, with the wrong sign.)
//!
//! With `locate: false` the continuous entry saltation is applied at the step where
//! contact is first detected, without splitting the step: the tempting shortcut, kept
//! so that what it leaves behind can be measured.

use crate::error::Result;
use crate::physics::contact::penalty::check_finite;
use crate::physics::integrate::fixed::{step_count, step_stability};
use crate::physics::jacobian::Dual;
use crate::physics::model::{Drop, Penalty};
use crate::physics::state::{Cost, Jacobian, RouteResult, State};

/// The fixed step's count, its cap refused in the corrected route's name.
fn corrected_steps(t_final: f64, dt: f64, max_steps: u64) -> Result<u64> {
    step_count(t_final, dt, max_steps).map_err(|e| match e {
        crate::error::FerroError::TooManySteps {
            max_steps, detail, ..
        } => crate::error::FerroError::TooManySteps {
            route: "corrected",
            max_steps,
            detail,
        },
        other => other,
    })
}

/// Options of the `corrected` route.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CorrectedOptions {
    /// Locate each switch inside its step (true), or only apply the entry saltation at
    /// the step that detects contact (false: the shortcut, kept to measure it).
    pub locate: bool,
    /// Refuse rollouts longer than this many steps.
    pub max_steps: u64,
}

impl Default for CorrectedOptions {
    fn default() -> Self {
        CorrectedOptions {
            locate: true,
            max_steps: super::DEFAULT_MAX_STEPS,
        }
    }
}

/// Smallest root in (0, s_max] of q0 + q1·s + q2·s² (values only), for the root selection.
fn roots_in(q: [f64; 3], s_max: f64, out: &mut Vec<(f64, bool)>, is_height: bool) {
    let [c, b, a] = q;
    let mut push = |r: f64| {
        if r > 0.0 && r <= s_max {
            out.push((r, is_height));
        }
    };
    if a == 0.0 {
        if b != 0.0 {
            push(-c / b);
        }
        return;
    }
    let disc = b * b - 4.0 * a * c;
    if disc < 0.0 {
        return;
    }
    let q = -0.5 * (b + b.signum() * disc.sqrt());
    push(q / a);
    if q != 0.0 {
        push(c / q);
    }
}

/// The root `r` (its value known) of the dual quadratic q0 + q1·s + q2·s², with its
/// derivatives by the implicit-function rule ds = -(dq0 + s·dq1 + s²·dq2)/(q1 + 2·q2·s).
fn dual_root(q: [Dual; 3], r: f64) -> Dual {
    let slope = q[1].v + 2.0 * q[2].v * r;
    let mut d = [0.0; 2];
    for (i, di) in d.iter_mut().enumerate() {
        *di = -(q[0].d[i] + r * q[1].d[i] + r * r * q[2].d[i]) / slope;
    }
    Dual { v: r, d }
}

/// Along the sub-step path, the first switch in (0, s_max] of the push-only law against
/// `pushing`: its time and whether it is on the height (entry/exit) or the force.
fn first_switch(
    height: [f64; 3],
    force: [f64; 3],
    pushing: bool,
    s_max: f64,
) -> Option<(f64, bool)> {
    let at = |q: [f64; 3], s: f64| q[0] + s * (q[1] + s * q[2]);
    // Fast path (almost every step): neither quadratic changes sign on [0, s_max], so
    // the branch cannot change. A quadratic keeps its sign when its value at both ends
    // and at an interior vertex share the sign of a nonzero start.
    let keeps_sign = |q: [f64; 3]| {
        let q0 = q[0];
        if q0 == 0.0 {
            return false;
        }
        let same = |v: f64| (v > 0.0) == (q0 > 0.0) && v != 0.0;
        let vertex = if q[2] != 0.0 {
            -q[1] / (2.0 * q[2])
        } else {
            -1.0
        };
        same(at(q, s_max)) && (vertex <= 0.0 || vertex >= s_max || same(at(q, vertex)))
    };
    if keeps_sign(height) && keeps_sign(force) {
        return None;
    }
    let mut points = Vec::with_capacity(4);
    roots_in(height, s_max, &mut points, true);
    roots_in(force, s_max, &mut points, false);
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Between consecutive candidate points the law's branch is constant; the switch is
    // at the start of the first interval whose midpoint is on the other side.
    let mut prev: Option<(f64, bool)> = None;
    for &(p, h) in points.iter().chain(std::iter::once(&(s_max, false))) {
        let start = prev.map_or(0.0, |x| x.0);
        if p > start {
            let mid = 0.5 * (start + p);
            let pushes = at(height, mid) < 0.0 && at(force, mid) > 0.0;
            if pushes != pushing {
                if let Some(x) = prev {
                    return Some(x);
                }
            }
        }
        if p < s_max || h {
            prev = Some((p, h));
        }
    }
    None
}

/// Whether q0 + q1·s + q2·s² keeps the strict sign of q0 on all of [0, h], with a
/// margin of 1e-9 of its terms' magnitudes: far above the few ulps by which
/// [`first_switch`]'s evaluations of the same coefficients can differ from the exact
/// polynomial, so wherever this holds, `first_switch` finds no switch either.
#[inline]
fn keeps_sign_robustly(q0: f64, q1: f64, q2: f64, h: f64) -> bool {
    let spread = h * q1.abs() + h * h * q2.abs();
    q0.abs() - spread > 1e-9 * (q0.abs() + spread)
}

/// Whether a full step of length `h` from (y, v) with acceleration `a` cannot switch the
/// push-only law's branch: in flight, the height stays positive or the force negative;
/// in contact, the height stays negative and the force positive. The coefficients are
/// those [`first_switch`] would be given.
#[inline]
fn stays_on_branch(y: f64, v: f64, a: f64, kk: f64, c: f64, pushing: bool, h: f64) -> bool {
    let height = |sign: f64| y * sign > 0.0 && keeps_sign_robustly(y, v, a, h);
    let force = |sign: f64| {
        let f0 = y * -kk - v * c;
        f0 * sign > 0.0 && keeps_sign_robustly(f0, v * -kk - a * c, a * -kk, h)
    };
    if pushing {
        height(-1.0) && force(1.0)
    } else {
        height(1.0) || force(-1.0)
    }
}

/// Full steps of length `dt` on the branch `pushing`, at most `budget` of them, for as
/// long as [`stays_on_branch`] proves the next one cannot switch and it is not the last
/// step before `t_final`; returns how many it took.
///
/// Bit for bit the general path's arithmetic: each line below is one `Dual` operation of
/// `acceleration` and `v + h·a`, `y + h·v`, `t + h` with `h = Dual::constant(dt)`, written
/// out on scalars, its zero products (`0·a`, `dt·0`) included, since they fix the sign of
/// zero derivatives (tests/corrected_fast_identity.rs keeps the loop as first written).
/// Written out so that the state stays in registers and no switch search is set up.
/// Steps per block of [`fast_steps`]' flight loop (64 steps' rounding is far below its margin).
const BLOCK: u64 = 64;

#[inline(never)]
fn fast_steps(
    law: &Penalty,
    g: f64,
    pushing: bool,
    dt: f64,
    t_final: f64,
    budget: u64,
    [y, v, t]: [&mut Dual; 3],
) -> u64 {
    let (kk, c, inv_m) = (law.stiffness, law.damping, 1.0 / law.mass);
    let (mut yv, [mut y0, mut y1]) = (y.v, y.d);
    let (mut vv, [mut v0, mut v1]) = (v.v, v.d);
    let (mut tv, [mut t0, mut t1]) = (t.v, t.d);
    let limit = dt * (1.0 + 1e-9);
    let mut taken = 0;
    while taken < budget {
        let remaining = t_final - tv;
        if remaining <= 0.0 || remaining <= limit {
            break;
        }
        // a = acceleration(law, g, pushing, y, v), value and derivatives.
        let (av, a0, a1) = if pushing {
            (
                (yv * -kk - vv * c) * inv_m - g,
                (y0 * -kk - v0 * c) * inv_m - 0.0,
                (y1 * -kk - v1 * c) * inv_m - 0.0,
            )
        } else {
            (-g, 0.0, 0.0)
        };
        if !stays_on_branch(yv, vv, av, kk, c, pushing, dt) {
            break;
        }
        // v = v + h·a
        vv += dt * av;
        v0 += 0.0 * av + dt * a0;
        v1 += 0.0 * av + dt * a1;
        // y = y + h·v
        yv += dt * vv;
        y0 += 0.0 * vv + dt * v0;
        y1 += 0.0 * vv + dt * v1;
        // t = t + h
        tv += dt;
        t0 += 0.0;
        t1 += 0.0;
        taken += 1;
        if pushing {
            continue;
        }
        // Flight, after one full step: `v.d + 0.0` and `t.d + 0.0` are now identities (a
        // sum is -0.0 only if both terms are), and `y.d + (0·v + dt·v.d)` adds exactly
        // dt·v.d, a constant, when that is nonzero, and leaves y.d alone when y.d is
        // nonzero. Where both hold the step is five additions and one product, and the
        // branch test a bound on the height alone: y > (dt·|v| + dt²·g)·(1 + 3e-9)
        // keeps a margin of 1e-9 of the terms' size, as `keeps_sign_robustly` does.
        let (p0, p1) = (dt * v0, dt * v1);
        if !((p0 != 0.0 || y0 != 0.0) && (p1 != 0.0 || y1 != 0.0)) {
            continue;
        }
        let (dv, dt2g) = (dt * -g, dt * dt * g);
        while taken < budget {
            let remaining = t_final - tv;
            if remaining <= 0.0 || remaining <= limit {
                break;
            }
            // Far from the ground, a block of m steps at once: over it |v| stays below
            // |v| + m·dt·g and y within m·dt of that of y, so a margin on those bounds
            // (2e-9 of the terms, far above m ulps of accumulated rounding) gives every
            // step of the block the per-step test's margin, and m + 3 steps of room
            // before t_final keep every step of it short of the last one.
            let m = BLOCK.min(budget - taken);
            if remaining / dt - 3.0 > m as f64 {
                let md = m as f64 * dt;
                let vmax = vv.abs() + md * g;
                let spread = dt * vmax + dt2g;
                if (yv - md * vmax) - spread > 2e-9 * (yv + md * vmax + spread) {
                    for _ in 0..m {
                        vv += dv;
                        yv += dt * vv;
                        y0 += p0;
                        y1 += p1;
                        tv += dt;
                    }
                    taken += m;
                    continue;
                }
            }
            if !(yv > (dt * vv.abs() + dt2g) * (1.0 + 3e-9)) {
                break;
            }
            vv += dv;
            yv += dt * vv;
            y0 += p0;
            y1 += p1;
            tv += dt;
            taken += 1;
        }
    }
    *y = Dual { v: yv, d: [y0, y1] };
    *v = Dual { v: vv, d: [v0, v1] };
    *t = Dual { v: tv, d: [t0, t1] };
    taken
}

/// One semi-implicit Euler sub-step of dual length `s` with the branch `pushing`.
#[inline]
fn sub_step(law: &Penalty, g: f64, pushing: bool, s: Dual, y: &mut Dual, v: &mut Dual) {
    let a = acceleration(law, g, pushing, *y, *v);
    *v = *v + s * a;
    *y = *y + s * *v;
}

#[inline]
fn acceleration(law: &Penalty, g: f64, pushing: bool, y: Dual, v: Dual) -> Dual {
    if pushing {
        (y.scale(-law.stiffness) - v.scale(law.damping)).scale(1.0 / law.mass) - Dual::constant(g)
    } else {
        Dual::constant(-g)
    }
}

/// The `locate: false` shortcut: n full steps, the continuous entry saltation applied at
/// the step that detects contact. (force evaluations, steps)
fn detected(law: &Penalty, g: f64, n: u64, dt: f64, y: &mut Dual, v: &mut Dual) -> (u64, u64) {
    let c = law.damping;
    let mut was_pushing = false;
    for _ in 0..n {
        let pushing = y.v < 0.0 && law.spring_damper(y.v, v.v) > 0.0;
        if pushing && !was_pushing && v.v < 0.0 {
            // The continuous entry saltation, applied where contact is detected.
            let dvdy = -c / law.mass;
            v.d = [v.d[0] + dvdy * y.d[0], v.d[1] + dvdy * y.d[1]];
        }
        was_pushing = pushing;
        sub_step(law, g, pushing, Dual::constant(dt), y, v);
    }
    (n, n)
}

/// The located march (see the module docs): steps of dt, each contact switch located inside
/// its step and the step split there. (force evaluations, steps)
fn located(
    law: &Penalty,
    drop: &Drop,
    n: u64,
    dt: f64,
    max_steps: u64,
    [y, v, t]: [&mut Dual; 3],
    (mut evals, mut steps): (u64, u64),
) -> Result<(u64, u64)> {
    let g = drop.gravity;
    let (kk, c) = (law.stiffness, law.damping);
    // March in steps of dt, restarting the grid at every located switch, so that
    // the discretisation of each phase does not depend on where the switch fell
    // between grid points (if it did, its error would vary with x(0) on the scale
    // of |v|·dt and the tangent would pick that variation up).
    let t_final = drop.t_final;
    let mut pushing = y.v < 0.0 && law.spring_damper(y.v, v.v) > 0.0;
    let cap = max_steps.max(n);
    loop {
        let remaining = t_final - t.v;
        if remaining <= 0.0 {
            break;
        }
        let last = remaining <= dt * (1.0 + 1e-9);
        // Fast path (all but a few steps): full steps that provably stay on their
        // branch, run in a tight loop until one might not (see `fast_steps`).
        if !last && steps < cap {
            let run = fast_steps(
                law,
                g,
                pushing,
                dt,
                t_final,
                cap - steps,
                [&mut *y, &mut *v, &mut *t],
            );
            evals += run;
            steps += run;
            if run > 0 {
                continue;
            }
        }
        let h = if last {
            Dual::constant(t_final) - *t
        } else {
            Dual::constant(dt)
        };
        let a = acceleration(law, g, pushing, *y, *v);
        evals += 1;
        steps += 1;
        if steps > cap {
            return Err(crate::error::FerroError::TooManySteps {
                route: "corrected",
                max_steps: cap,
                detail: format!("{steps} steps taken"),
            });
        }
        // y(s) = y + s·v + s²·a and F(s) = -k·y(s) - c·v(s) along the sub-step path.
        let height = [*y, *v, a];
        let force = [
            y.scale(-kk) - v.scale(c),
            v.scale(-kk) - a.scale(c),
            a.scale(-kk),
        ];
        let vals = |q: [Dual; 3]| [q[0].v, q[1].v, q[2].v];
        match first_switch(vals(height), vals(force), pushing, h.v) {
            Some((r, on_height)) => {
                let s = dual_root(if on_height { height } else { force }, r);
                *v = *v + s * a;
                *y = *y + s * *v;
                *t = *t + s;
                pushing = !pushing;
            }
            None => {
                *v = *v + h * a;
                *y = *y + h * *v;
                if last {
                    break;
                }
                *t = *t + h;
            }
        }
    }
    Ok((evals, steps))
}

/// Where every located `corrected` rollout of a drop at one step is the same, whatever k:
/// the state after the first fall's full steps that provably stay above ground (the
/// height test of [`fast_steps`], which needs no k). The bench computes it once per
/// (drop, dt) and every slider move resumes from it ([`corrected_from`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CorrectedStart {
    /// The drop and step it was computed for (a resume checks both).
    pub drop: Drop,
    /// The step, s.
    pub dt: f64,
    /// The options it was computed with (their step cap bounds its run).
    pub opts: CorrectedOptions,
    /// Full steps already taken (one force evaluation each).
    pub steps: u64,
    /// Height, velocity and time after them, with their derivatives along x(0).
    y: Dual,
    v: Dual,
    t: Dual,
}

impl CorrectedStart {
    /// The first [`fast_steps`] run of the route from t = 0, on a law of zero stiffness and
    /// damping: its force is ±0, so only the height test can keep a step (in flight a step
    /// is kept when the height test or the force test holds), and it stops where that test
    /// first fails, a point every k's own run passes through with the same numbers and
    /// decides there by its own force test ([`corrected_from`] resumes at that decision).
    pub fn new(drop: &Drop, dt: f64, opts: &CorrectedOptions) -> Result<CorrectedStart> {
        drop.validate()?;
        let n = corrected_steps(drop.t_final, dt, opts.max_steps)?;
        let free = Penalty::free(drop.mass);
        let mut y = Dual::variable(drop.height, 0);
        let mut v = Dual::variable(drop.velocity, 1);
        let mut t = Dual::constant(0.0);
        let cap = opts.max_steps.max(n);
        // As the route's loop begins: a last step (n = 1) is no full step.
        let last = drop.t_final <= dt * (1.0 + 1e-9);
        let steps = if opts.locate && !last {
            let pushing = false; // the drop starts above ground (`validate`)
            let (g, t_final) = (drop.gravity, drop.t_final);
            fast_steps(
                &free,
                g,
                pushing,
                dt,
                t_final,
                cap,
                [&mut y, &mut v, &mut t],
            )
        } else {
            0
        };
        Ok(CorrectedStart {
            drop: *drop,
            dt,
            opts: *opts,
            steps,
            y,
            v,
            t,
        })
    }
}

/// The `corrected` route (see the module docs).
pub fn corrected(drop: &Drop, k: f64, dt: f64, opts: &CorrectedOptions) -> Result<RouteResult> {
    resume(drop, k, dt, opts, None)
}

/// [`corrected`] resumed from `start` (computed for this drop, `dt` and `opts`, located
/// switches; any other start is ignored and the rollout runs from t = 0): the same answer, bit for
/// bit, without the full steps of the first fall that no k can change.
pub fn corrected_from(
    drop: &Drop,
    k: f64,
    dt: f64,
    opts: &CorrectedOptions,
    start: &CorrectedStart,
) -> Result<RouteResult> {
    let fits = start.drop == *drop && start.dt == dt && start.opts == *opts && opts.locate;
    resume(drop, k, dt, opts, fits.then_some(start))
}

/// The route from t = 0, or from `start` (one that fits this drop, step and options).
fn resume(
    drop: &Drop,
    k: f64,
    dt: f64,
    opts: &CorrectedOptions,
    start: Option<&CorrectedStart>,
) -> Result<RouteResult> {
    drop.validate()?;
    let law = drop.penalty(k)?;
    let n = corrected_steps(drop.t_final, dt, opts.max_steps)?;
    let mut y = Dual::variable(drop.height, 0);
    let mut v = Dual::variable(drop.velocity, 1);
    let mut t = Dual::constant(0.0);
    let mut counts = (0u64, 0u64);
    if let Some(s) = start {
        (y, v, t) = (s.y, s.v, s.t);
        counts = (s.steps, s.steps);
    }
    let (evals, steps) = if opts.locate {
        located(
            &law,
            drop,
            n,
            dt,
            opts.max_steps,
            [&mut y, &mut v, &mut t],
            counts,
        )?
    } else {
        detected(&law, drop.gravity, n, dt, &mut y, &mut v)
    };
    let x = State::new(y.v, v.v);
    let jac = Jacobian::new(y.d[0], y.d[1], v.d[0], v.d[1]);
    check_finite("corrected-route state", &x, &jac)?;
    let mut r = RouteResult::new(
        x,
        jac,
        Cost {
            steps,
            force_evals: evals,
            rollouts: 1,
            ..Cost::default()
        },
    );
    // Its steps in contact are the fixed route's semi-implicit Euler (sub-steps only shorter),
    // so the same stability flag: past it the numbers are blown up, not physics.
    r.step_stability = Some(step_stability(&law, dt));
    Ok(r)
}
