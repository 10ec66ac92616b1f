//! Event location: the step's dense output (Hairer's `contd5`), bounds on it that rule a
//! switch out, and the switch located by safeguarded secant steps (`refine_root`).

use super::modes::{Mode, System};
use super::step::Step;
use super::*;

/// The step's 5th-order continuous extension (Hairer's `contd5`), its coefficients
/// computed once: `x(theta) = x + theta·(r2 + s·(r3 + theta·(r4 + s·r5)))`, `s = 1 - theta`.
struct DenseOutput {
    x: State,
    r2: State,
    r3: State,
    r4: State,
    r5: State,
}

impl DenseOutput {
    fn new(x: &State, k1: &State, step: &Step, h: f64) -> Self {
        let r2 = step.x_new - x;
        let r3 = h * k1 - r2;
        let r4 = r2 - h * step.k7 - r3;
        DenseOutput {
            x: *x,
            r2,
            r3,
            r4,
            r5: step.r5,
        }
    }

    /// The state at fraction `theta` of the step.
    #[inline]
    fn at(&self, theta: f64) -> State {
        let s = 1.0 - theta;
        self.x + theta * (self.r2 + s * (self.r3 + theta * (self.r4 + s * self.r5)))
    }

    /// Bounds `(lo, hi)` of `l·x(theta)` over theta in `[from, 1]` (`0 <= from <= 1`), for
    /// a linear functional l, widened by 1e-12 of the terms' magnitudes so that rounding in
    /// `at` cannot cross them. Expanded, `l·x(theta) = g0 + theta·g2 + theta·s·g3 +
    /// theta²·s·g4 + theta²·s²·g5`, whose weights range over `[from, 1]` and (at most)
    /// `[0, 1/4]`, `[0, 4/27]` and `[0, 1/16]`.
    #[inline]
    fn bounds(&self, l: &State, from: f64) -> (f64, f64) {
        let g = [
            l.dot(&self.x),
            l.dot(&self.r2),
            l.dot(&self.r3),
            l.dot(&self.r4),
            l.dot(&self.r5),
        ];
        let size = |v: &State| l[0].abs() * v[0].abs() + l[1].abs() * v[1].abs();
        let magnitude =
            size(&self.x) + size(&self.r2) + size(&self.r3) + size(&self.r4) + size(&self.r5);
        span(g, magnitude, from)
    }

    /// `bounds` of the height y alone (`l = (1, 0)`), without the products by 1 and 0.
    #[inline]
    fn bounds_y(&self, from: f64) -> (f64, f64) {
        let g = [self.x[0], self.r2[0], self.r3[0], self.r4[0], self.r5[0]];
        let magnitude = g.iter().map(|gi| gi.abs()).sum();
        span(g, magnitude, from)
    }
}

/// The bounds of `DenseOutput::bounds` from the terms `g` and their magnitude.
#[inline]
fn span(g: [f64; 5], magnitude: f64, from: f64) -> (f64, f64) {
    let slack = 1e-12 * magnitude;
    let (g_from, g_one) = (from * g[1], g[1]);
    let (mut lo, mut hi) = (g[0] + g_from.min(g_one), g[0] + g_from.max(g_one));
    for (gi, wi) in g[2..].iter().zip([0.25, 4.0 / 27.0, 1.0 / 16.0]) {
        lo += wi * gi.min(0.0);
        hi += wi * gi.max(0.0);
    }
    (lo - slack, hi + slack)
}

/// The root of a smooth `c` bracketed by `c(a) < 0 <= c(b)`, down to adjacent
/// floating-point numbers (or an exact zero, returned as `b`). Secant steps through the
/// last two points (each point becomes an end of the bracket), as in Brent's method: a
/// step is at least a few ulps long, so once the secant has converged from one side the
/// next point lands just across the root and closes the bracket; a bisection whenever two
/// steps have not halved the bracket, or the secant leaves it. Returns the final `(a, b)`.
fn refine_root(
    c: impl Fn(f64) -> f64,
    (mut a, mut ca): (f64, f64),
    (mut b, mut cb): (f64, f64),
) -> (f64, f64) {
    let (mut x0, mut f0, mut x1, mut f1) = (a, ca, b, cb);
    let mut widths = [f64::INFINITY; 2];
    for _ in 0..100 {
        let mid = 0.5 * (a + b);
        if mid <= a || mid >= b {
            break;
        }
        let tol = 4.0 * f64::EPSILON * a.abs().max(b.abs());
        let mut t = if f1 != f0 {
            x1 - f1 * (x1 - x0) / (f1 - f0)
        } else {
            mid
        };
        if (t - x1).abs() < tol {
            // x1 is an end of the bracket: step across the root, toward the other end.
            t = if x1 == b { b - tol } else { a + tol };
        }
        if !(t > a && t < b) || b - a > 0.5 * widths[0] {
            t = mid;
        }
        widths = [widths[1], b - a];
        let ct = c(t);
        if ct == 0.0 {
            return (a, t);
        }
        if ct > 0.0 {
            (b, cb) = (t, ct);
        } else {
            (a, ca) = (t, ct);
        }
        (x0, f0, x1, f1) = (x1, f1, t, ct);
    }
    let _ = (ca, cb);
    (a, b)
}

/// Fraction of the accepted step at which the law switches (psi changes sign against
/// the current mode), located on the dense output; `None` if it does not switch.
pub(super) fn locate_switch(
    sys: &System,
    mode: Mode,
    x: &State,
    k1: &State,
    step: &Step,
    h: f64,
) -> Option<f64> {
    let dense = DenseOutput::new(x, k1, step, h);
    // The step is sampled at theta = 1/8, 2/8, .., 1 (below), so that a dip through the
    // ground and back inside one step is seen; a switch is found exactly when a sample
    // lies outside the mode's side. Rule that out first, from bounds on y and on the
    // spring-damper force over [1/8, 1]: free flight cannot switch while y > 0 or the
    // force stays negative; pushing cannot while y < 0 and the force stays positive.
    // (Over [1/8, 1], not [0, 1]: the step after a switch starts on the switching
    // surface, where no bound over [0, 1] can rule it out.)
    const SAMPLES: usize = 8;
    let from = 1.0 / SAMPLES as f64;
    let (y_lo, y_hi) = dense.bounds_y(from);
    let force = State::new(-sys.law.stiffness, -sys.law.damping);
    let inside = match mode {
        Mode::Free => y_lo > 0.0 || dense.bounds(&force, from).1 < 0.0,
        _ => y_hi < 0.0 && dense.bounds(&force, from).0 > 0.0,
    };
    if inside {
        return None;
    }
    // Outside the mode's own side: psi <= 0 while pushing, psi > 0 while free.
    let outside = |theta: f64| {
        let p = sys.psi(&dense.at(theta));
        if mode == Mode::Pushing {
            -p
        } else {
            p
        }
    };
    let mut lo = 0.0;
    let mut bracket = None;
    for i in 1..=SAMPLES {
        let theta = i as f64 / SAMPLES as f64;
        let o = outside(theta);
        if o >= 0.0 {
            bracket = Some((theta, o));
            break;
        }
        lo = theta;
    }
    let (mut hi, _) = bracket?;
    // psi is a min of two smooth functions of very different scales (m against N/m·m),
    // so a root finder fed psi itself stalls at the kink. Outside is min(-y, F) while
    // free and max(y, -F) while pushing: refine the component that changes sign across
    // the bracket (a smooth polynomial in theta) by `refine_root`; if the other
    // component decides the switch at that point, the switch is on the other side of
    // it, and the other component is refined there. Two passes at most.
    let component_at = |i: usize, x: &State| {
        let c = if i == 0 {
            -x[0]
        } else {
            sys.law.spring_damper(x[0], x[1])
        };
        if mode == Mode::Pushing {
            -c
        } else {
            c
        }
    };
    for _ in 0..4 {
        let (x_lo, x_hi) = (dense.at(lo), dense.at(hi));
        let Some((i, c_lo, c_hi)) = (0..2).find_map(|i| {
            let (c_lo, c_hi) = (component_at(i, &x_lo), component_at(i, &x_hi));
            (c_lo < 0.0 && c_hi >= 0.0).then_some((i, c_lo, c_hi))
        }) else {
            break;
        };
        let component = |theta: f64| component_at(i, &dense.at(theta));
        let (a, b) = refine_root(component, (lo, c_lo), (hi, c_hi));
        if outside(a) >= 0.0 {
            hi = a;
        } else if outside(b) < 0.0 {
            lo = b;
        } else {
            return Some(b);
        }
    }
    // Not reached for the drop's two modes; bisection on psi itself, to be safe.
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if outside(mid) >= 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}
