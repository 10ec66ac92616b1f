//! A step function's declared precision (`hybrid/black_box/precision.rs`): a float32 step
//! (the push-only penalty drop written in f32 arithmetic, as a float32 engine computes it)
//! is refused when it is taken for float64, and answered when it declares float32, within
//! the reported tolerance of the `corrected` route (the derivative of the same event-located
//! Euler map by forward-mode duals, in float64: an independent route). A float64 step's
//! answer does not change.
#![allow(clippy::disallowed_methods)] // native-only test: std floats are fine here

use ferromotion_core::hybrid::black_box::{FLOAT32, FLOAT64, SWITCH_FLOOR};
use ferromotion_core::hybrid::*;
use ferromotion_core::*;
use nalgebra::{DMatrix, DVector};

/// Semi-implicit Euler on the push-only penalty law, in `f32` (state, parameters and every
/// operation) when `single`, else in f64; the branch read at the step's start, both guards
/// computed as the step computes them (its own "in contact" and its own force argument).
struct Penalty {
    k: f64,
    c: f64,
    single: bool,
}

impl Penalty {
    fn new(k: f64, single: bool) -> Self {
        let d = Drop::default();
        Penalty {
            k,
            c: 2.0 * d.zeta * (k * d.mass).sqrt(),
            single,
        }
    }
}

fn step32(k: f32, c: f32, m: f32, g: f32, x: &DVector<f64>, dt: f32) -> DVector<f64> {
    let (y, v) = (x[0] as f32, x[1] as f32);
    let force = if y < 0.0 {
        (-k * y - c * v).max(0.0)
    } else {
        0.0
    };
    let v = v + dt * (force / m - g);
    DVector::from_vec(vec![(y + dt * v) as f64, v as f64])
}

impl StepSystem for Penalty {
    fn name(&self) -> String {
        "penalty Euler step".into()
    }
    fn dim(&self) -> usize {
        2
    }
    fn step(&self, x: &DVector<f64>, dt: f64) -> DVector<f64> {
        let d = Drop::default();
        if self.single {
            let f = |v: f64| v as f32;
            return step32(f(self.k), f(self.c), f(d.mass), f(d.gravity), x, f(dt));
        }
        let (y, v) = (x[0], x[1]);
        let force = if y < 0.0 {
            (-self.k * y - self.c * x[1]).max(0.0)
        } else {
            0.0
        };
        let v = v + dt * (force / d.mass - d.gravity);
        DVector::from_vec(vec![y + dt * v, v])
    }
    fn guard_count(&self) -> usize {
        2
    }
    fn guard(&self, i: usize, x: &DVector<f64>) -> f64 {
        let (y, v) = if self.single {
            (x[0] as f32 as f64, x[1] as f32 as f64)
        } else {
            (x[0], x[1])
        };
        match i {
            0 => y,
            _ if y < 0.0 => -self.k * y - self.c * v,
            _ => 1.0,
        }
    }
}

fn x0() -> DVector<f64> {
    let d = Drop::default();
    DVector::from_vec(vec![d.height, d.velocity])
}

const K: f64 = 1e4;
const DT: f64 = 1e-3;

fn opts(precision: f64) -> StepOptions {
    StepOptions {
        dt: DT,
        halve_dt: false,
        precision,
        ..StepOptions::default()
    }
}

fn corrected_j() -> DMatrix<f64> {
    let r = corrected(&Drop::default(), K, DT, &CorrectedOptions::default()).unwrap();
    DMatrix::from_fn(2, 2, |i, j| r.jacobian[(i, j)])
}

#[test]
fn a_float32_step_taken_for_float64_is_refused() {
    let err = step_jacobian(&Penalty::new(K, true), &x0(), 0.0, 0.8, &opts(FLOAT64)).unwrap_err();
    assert!(
        matches!(
            err,
            FerroError::UnguardedSwitch { .. } | FerroError::ProbeDependent { .. }
        ),
        "{err}"
    );
}

#[test]
fn a_float32_step_declared_float32_is_answered_within_its_stated_tolerance() {
    let s = step_jacobian(&Penalty::new(K, true), &x0(), 0.0, 0.8, &opts(FLOAT32)).unwrap();
    let r = s.resolution;
    // The probe where truncation (eps²) and round-off (u/eps) balance: 1e-6 scaled by
    // (2^29)^(1/3), the float64 probe moved by the cube root of the precisions' ratio.
    assert!((r.eps - 1e-6 * 2f64.powf(29.0 / 3.0)).abs() < 1e-12 * r.eps);
    assert_eq!(r.precision, FLOAT32);
    assert!(r.probe_rtol > 1e-6 && r.switch_floor > SWITCH_FLOOR);
    assert_eq!(s.solution.events.len(), 2, "entry and release");
    let j = &s.solution.jacobian;
    let exact = corrected_j();
    let scale = exact.amax().max(1.0);
    let err = (j - &exact).amax() / scale;
    assert!(
        err <= r.probe_rtol,
        "error {err:.3e} against the float64 route, stated tolerance {:.3e}",
        r.probe_rtol
    );
    // Not a loose tolerance hiding a wrong answer: within 1% of the float64 derivative.
    assert!(err < 1e-2, "{err:.3e}");
}

#[test]
fn a_float64_step_keeps_its_probe_and_tolerances() {
    let sys = Penalty::new(K, false);
    let s = step_jacobian(&sys, &x0(), 0.0, 0.8, &opts(FLOAT64)).unwrap();
    let d = StepOptions::default();
    assert_eq!(s.resolution.eps, d.eps);
    assert_eq!(s.resolution.probe_rtol, d.probe_rtol);
    assert_eq!(s.resolution.switch_floor, SWITCH_FLOOR);
    let err = (&s.solution.jacobian - corrected_j()).amax();
    assert!(err < 1e-6, "{err:.3e}");
}

#[test]
fn a_precision_out_of_range_is_refused_naming_it() {
    for u in [0.0, 1e-20, 0.5, f64::NAN, -FLOAT32] {
        let err = step_jacobian(&Penalty::new(K, false), &x0(), 0.0, 0.8, &opts(u)).unwrap_err();
        assert!(
            matches!(
                err,
                FerroError::InvalidParameter {
                    name: "precision",
                    ..
                }
            ),
            "{u}: {err}"
        );
    }
}
