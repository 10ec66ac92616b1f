//! One RK4 step of a hybrid system with its flow Jacobian, and the guards crossed inside
//! it: which, located by root-finding on the sub-step length, and each event's reset and
//! saltation matrix (refused as grazing below `graze_speed`).

use super::*;

pub(super) fn rk4(
    sys: &dyn HybridSystem,
    mode: usize,
    x: &DVector<f64>,
    phi: &DMatrix<f64>,
    h: f64,
) -> (DVector<f64>, DMatrix<f64>) {
    let f = |x: &DVector<f64>| sys.rhs(mode, x);
    let a = |x: &DVector<f64>| sys.rhs_jacobian(mode, x);
    let k1 = f(x);
    let p1 = a(x) * phi;
    let x2 = x + 0.5 * h * &k1;
    let phi2 = phi + 0.5 * h * &p1;
    let k2 = f(&x2);
    let p2 = a(&x2) * &phi2;
    let x3 = x + 0.5 * h * &k2;
    let phi3 = phi + 0.5 * h * &p2;
    let k3 = f(&x3);
    let p3 = a(&x3) * &phi3;
    let x4 = x + h * &k3;
    let phi4 = phi + h * &p3;
    let k4 = f(&x4);
    let p4 = a(&x4) * &phi4;
    (
        x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4),
        phi + h / 6.0 * (p1 + 2.0 * p2 + 2.0 * p3 + p4),
    )
}

/// A guard within this much of zero (relative to max(1, max|x|)) sits at its zero: where
/// an event just left it, up to the round-off of locating it.
const AT_ZERO: f64 = 1e-9;

/// Guards that cross from > 0 to <= 0 between x and y in `mode`. A guard that starts at
/// or just below zero while moving up (right after its own reset) counts as positive.
fn crossings(
    sys: &dyn HybridSystem,
    mode: usize,
    x: &DVector<f64>,
    y: &DVector<f64>,
) -> Vec<usize> {
    (0..sys.guard_count(mode))
        .filter(|&i| {
            let g0 = sys.guard(mode, i, x);
            // A guard left at its zero by the event just fired (within round-off of it) and
            // leaving it counts as above zero; one well below zero (a penalty contact's end
            // still below ground after its release, rising) has not crossed anything.
            let at_zero = g0.abs() <= AT_ZERO * x.amax().max(1.0);
            let leaving = || sys.guard_gradient(mode, i, x).dot(&sys.rhs(mode, x)) > 0.0;
            (g0 > 0.0 || (at_zero && leaving())) && sys.guard(mode, i, y) <= 0.0
        })
        .collect()
}

/// Refuse step `steps` of a run from t to t1 when it is past the cap (`TooManySteps`, saying
/// how far the run got): the analytic and the black-box drivers share it.
pub(crate) fn step_cap(
    route: &'static str,
    steps: u64,
    max_steps: u64,
    t: f64,
    t1: f64,
) -> Result<()> {
    if steps > max_steps {
        return Err(FerroError::TooManySteps {
            route,
            max_steps,
            detail: format!("reached t = {t} s of t1 = {t1} s"),
        });
    }
    Ok(())
}

/// Where guard `i` crosses zero inside the step from (x, phi) of length h that ends at `y`:
/// the sub-step length, on (0, h], by secant and bisection in turn.
fn locate(
    sys: &dyn HybridSystem,
    mode: usize,
    i: usize,
    (x, phi, y): (&DVector<f64>, &DMatrix<f64>, &DVector<f64>),
    t: f64,
    h: f64,
) -> f64 {
    let g_at = |s: f64| sys.guard(mode, i, &rk4(sys, mode, x, phi, s).0);
    // The bracket's ends with their guard values: [(lo, g_lo), (hi, g_hi)], g_lo > 0 >= g_hi.
    let mut b = [(0.0, sys.guard(mode, i, x)), (h, sys.guard(mode, i, y))];
    let narrow = |b: &mut [(f64, f64); 2], s: f64, g: f64| b[usize::from(g <= 0.0)] = (s, g);
    for _ in 0..200 {
        let [(lo, g_lo), (hi, g_hi)] = b;
        let secant = lo - g_lo * (hi - lo) / (g_hi - g_lo);
        let s = if secant > lo && secant < hi {
            secant
        } else {
            0.5 * (lo + hi)
        };
        let g = g_at(s);
        narrow(&mut b, s, g);
        if b[1].0 - b[0].0 <= 1e-15 * h.max(t.abs()) || g == 0.0 {
            break;
        }
        // A bisection after every secant step keeps the bracket shrinking even when
        // the secant sticks to one end.
        let mid = 0.5 * (b[0].0 + b[1].0);
        narrow(&mut b, mid, g_at(mid));
    }
    b[1].0
}

/// The event of guard `i` at the state `xm` reached at `t_event`: its report entry, the
/// state after the reset and the saltation matrix; a grazing event (guard speed below
/// `graze_speed`) refused.
pub(super) fn event_at(
    sys: &dyn HybridSystem,
    mode: usize,
    i: usize,
    xm: &DVector<f64>,
    t_event: f64,
    graze_speed: f64,
) -> Result<(HybridEvent, DVector<f64>, DMatrix<f64>)> {
    let f_minus = sys.rhs(mode, xm);
    let grad = sys.guard_gradient(mode, i, xm);
    let speed = grad.dot(&f_minus);
    let (new_mode, xp) = sys.reset(mode, i, xm);
    let dr = sys.reset_jacobian(mode, i, xm);
    let f_plus = sys.rhs(new_mode, &xp);
    let salt = &dr + (&f_plus - &dr * &f_minus) * grad.transpose() / speed;
    let salt_max = salt.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    if !(speed.abs() >= graze_speed) {
        return Err(FerroError::Grazing {
            t: t_event,
            speed: speed.abs(),
            threshold: graze_speed,
            term: salt_max,
        });
    }
    let event = HybridEvent {
        t: t_event,
        mode_before: mode,
        guard: i,
        mode_after: new_mode,
        guard_speed: speed,
        saltation_max: salt_max,
    };
    Ok((event, xp, salt))
}

/// Events one step may hold before it is refused as [`FerroError::TwoEventsInOneStep`] (a
/// chattering guard the step cannot take apart).
pub const MAX_EVENTS_PER_STEP: usize = 64;

/// The guards crossed between x and y (a sub-step of length h from t), each located: the
/// earliest's time inside the sub-step and every guard within `simultaneous` s of it.
pub(super) fn earliest_group(
    sys: &dyn HybridSystem,
    mode: usize,
    (x, y): (&DVector<f64>, &DVector<f64>),
    t: f64,
    h: f64,
    simultaneous: f64,
) -> Option<(f64, Vec<usize>)> {
    let crossed = crossings(sys, mode, x, y);
    if crossed.is_empty() {
        return None;
    }
    let none = DMatrix::zeros(x.len(), 0);
    let located: Vec<(usize, f64)> = crossed
        .iter()
        .map(|&i| (i, locate(sys, mode, i, (x, &none, y), t, h)))
        .collect();
    let first = located.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let group = located
        .iter()
        .filter(|p| p.1 <= first + simultaneous)
        .map(|p| p.0)
        .collect();
    Some((first, group))
}
