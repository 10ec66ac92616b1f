//! The black-box driver's rows: batched step functions, Lie-group states, progress and
//! stopping (`hybrid/black_box.rs`, `black_box/rows.rs`, `black_box/manifold.rs`).
//!
//! Oracles: the one-state path on the same probes (bit for bit: the batched step here
//! computes each row with the one-state arithmetic, so any difference would be the
//! scheduler's); the closed-form Jacobian of a torque-free isotropic body in free fall in
//! MuJoCo's tangent coordinates (right-multiplied body-frame rotation vector).

use ferromotion_core::hybrid::{
    step_jacobian, step_jacobian_watched, Joint, StepOptions, StepOutcome, StepProgress,
    StepSystem, StepWatch,
};
use ferromotion_core::FerroError;
use nalgebra::{DMatrix, DVector, Matrix3, Vector3};
use std::cell::{Cell, RefCell};

const G: f64 = 9.81;

/// The push-only penalty drop, semi-implicit Euler, with its entry and release guards; the
/// batch calls counted, at most `rows` states per call.
struct Penalty {
    k: f64,
    c: f64,
    rows: usize,
    calls: Cell<u64>,
    largest: Cell<usize>,
}

impl Penalty {
    fn new(k: f64, rows: usize) -> Penalty {
        Penalty {
            k,
            c: 2.0 * 0.1606 * k.sqrt(),
            rows,
            calls: Cell::new(0),
            largest: Cell::new(0),
        }
    }
}

impl StepSystem for Penalty {
    fn name(&self) -> String {
        "penalty".into()
    }
    fn dim(&self) -> usize {
        2
    }
    fn step(&self, x: &DVector<f64>, dt: f64) -> DVector<f64> {
        let (y, v) = (x[0], x[1]);
        let force = if y < 0.0 {
            (-self.k * y - self.c * v).max(0.0)
        } else {
            0.0
        };
        let v = v + dt * (force - G);
        DVector::from_vec(vec![y + dt * v, v])
    }
    fn guard_count(&self) -> usize {
        2
    }
    fn guard(&self, i: usize, x: &DVector<f64>) -> f64 {
        match i {
            0 => x[0],
            _ if x[0] < 0.0 => -self.k * x[0] - self.c * x[1],
            _ => 1.0,
        }
    }
    fn step_batch(
        &self,
        xs: &[DVector<f64>],
        dt: f64,
    ) -> ferromotion_core::Result<Vec<DVector<f64>>> {
        assert!(
            xs.len() <= self.rows,
            "{} states in one call, cap {}",
            xs.len(),
            self.rows
        );
        self.calls.set(self.calls.get() + 1);
        self.largest.set(self.largest.get().max(xs.len()));
        Ok(xs.iter().map(|x| self.step(x, dt)).collect())
    }
    fn batch_rows(&self) -> usize {
        self.rows
    }
}

fn opts() -> StepOptions {
    StepOptions {
        dt: 1e-4,
        ..StepOptions::default()
    }
}

#[test]
fn batched_rows_give_the_one_state_answer_bit_for_bit() {
    let x0 = DVector::from_vec(vec![1.0, 0.0]);
    let one = step_jacobian(&Penalty::new(1e5, 1), &x0, 0.0, 0.8, &opts()).unwrap();
    for rows in [7, usize::MAX] {
        let sys = Penalty::new(1e5, rows);
        let b = step_jacobian(&sys, &x0, 0.0, 0.8, &opts()).unwrap();
        let bits = |m: &DMatrix<f64>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&b.solution.jacobian),
            bits(&one.solution.jacobian),
            "rows {rows}"
        );
        let (hb, ho) = (b.half_dt.as_ref().unwrap(), one.half_dt.as_ref().unwrap());
        assert_eq!(bits(&hb.jacobian), bits(&ho.jacobian));
        assert_eq!(b.solution.events, one.solution.events);
        assert_eq!(
            b.solution.probe_gap.to_bits(),
            one.solution.probe_gap.to_bits()
        );
        // The same states were stepped, in far fewer calls.
        assert_eq!(b.step_calls, one.step_calls);
        assert_eq!(b.batch_calls, sys.calls.get());
        assert_eq!(b.rows, 2 * (1 + 4 * 2));
        if rows == usize::MAX {
            assert!(
                b.batch_calls * 5 < one.batch_calls,
                "{} vs {}",
                b.batch_calls,
                one.batch_calls
            );
            assert!(sys.largest.get() >= b.rows - 1);
        }
    }
    assert_eq!(one.batch_calls, one.step_calls);
}

/// A probe that changes the events' sequence is refused the same way batched or not: t1 a
/// hair after the located landing (a probe from higher up lands after t1).
#[test]
fn a_refusal_is_the_same_batched_or_not() {
    let x0 = DVector::from_vec(vec![1.0, 0.0]);
    let o = StepOptions {
        dt: 1e-3,
        ..StepOptions::default()
    };
    let landing = step_jacobian(&Penalty::new(1e5, 1), &x0, 0.0, 0.8, &o)
        .unwrap()
        .solution
        .events[0]
        .t;
    let t1 = landing + 5e-8;
    let one = step_jacobian(&Penalty::new(1e5, 1), &x0, 0.0, t1, &o).unwrap_err();
    let all = step_jacobian(&Penalty::new(1e5, usize::MAX), &x0, 0.0, t1, &o).unwrap_err();
    assert!(matches!(one, FerroError::ProbeDependent { .. }), "{one}");
    assert_eq!(one, all);
}

#[test]
fn progress_is_reported_and_a_stop_keeps_the_finished_columns() {
    let x0 = DVector::from_vec(vec![1.0, 0.0]);
    let full = step_jacobian(&Penalty::new(1e5, 1), &x0, 0.0, 0.8, &opts()).unwrap();
    // One row at a time: the nominal run, then (+, -) per column at eps, ... Stop once the
    // first 1 + 2n rows (x(t1) and J at dt, unchecked) have finished.
    let seen = RefCell::new(Vec::<StepProgress>::new());
    let mut observe = |p: &StepProgress| {
        seen.borrow_mut().push(*p);
        if p.rows_done >= 5 {
            Err(FerroError::Scenario("stopped by the test".into()))
        } else {
            Ok(())
        }
    };
    let watch = StepWatch {
        clock: None,
        progress: Some(&mut observe),
    };
    let out = step_jacobian_watched(&Penalty::new(1e5, 1), &x0, 0.0, 0.8, &opts(), watch).unwrap();
    let StepOutcome::Stopped(p) = out else {
        panic!("not stopped")
    };
    let seen = seen.into_inner();
    assert!(seen
        .windows(2)
        .all(|w| w[0].rows_done <= w[1].rows_done && w[0].fraction <= w[1].fraction));
    assert_eq!((p.rows_done, p.rows_total), (5, 18));
    let at_dt = &p.passes[0];
    assert_eq!(at_dt.columns, vec![0, 1]);
    assert_eq!(at_dt.jacobian, full.solution.jacobian);
    assert_eq!(at_dt.x.as_ref(), Some(&full.solution.x));
    assert!(p.passes[1].x.is_none() && p.passes[1].columns.is_empty());
    assert!(p.summary.contains("rows not finished"), "{}", p.summary);
}

/// A rigid body with isotropic inertia in free fall: x = (p, q, v, ω) with ω in the body
/// frame (constant: no torque, isotropic), stepped exactly: p + v h - g h²/2 e_z,
/// q ⊗ exp(ω h), v - g h e_z, ω. States the driver hands it are recorded.
struct FreeBody {
    seen: RefCell<Vec<DVector<f64>>>,
}

fn quat_mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

fn quat_exp(w: Vector3<f64>) -> [f64; 4] {
    let a = w.norm();
    let s = if a > 0.0 { libm::sin(0.5 * a) / a } else { 0.5 };
    [libm::cos(0.5 * a), s * w[0], s * w[1], s * w[2]]
}

impl StepSystem for FreeBody {
    fn name(&self) -> String {
        "free body".into()
    }
    fn dim(&self) -> usize {
        13
    }
    fn step(&self, x: &DVector<f64>, h: f64) -> DVector<f64> {
        self.seen.borrow_mut().push(x.clone());
        let mut y = x.clone();
        let w = Vector3::new(x[10], x[11], x[12]);
        let q = quat_mul([x[3], x[4], x[5], x[6]], quat_exp(w * h));
        let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
        for k in 0..3 {
            y[k] = x[k] + x[7 + k] * h;
        }
        y[2] -= 0.5 * G * h * h;
        y[9] -= G * h;
        for k in 0..4 {
            y[3 + k] = q[k] / n;
        }
        y
    }
    fn manifold(&self) -> Vec<Joint> {
        vec![Joint::parse("free", 0).unwrap()]
    }
}

fn hat(w: Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -w[2], w[1], w[2], 0.0, -w[0], -w[1], w[0], 0.0)
}

/// Rodrigues: the rotation matrix of rotation vector φ.
fn rotation(phi: Vector3<f64>) -> Matrix3<f64> {
    let a = phi.norm();
    let k = hat(phi);
    Matrix3::identity() + libm::sin(a) / a * k + (1.0 - libm::cos(a)) / (a * a) * k * k
}

/// SO(3)'s right Jacobian: exp(φ + δ) = exp(φ) exp(J_r(φ) δ) to first order.
fn right_jacobian(phi: Vector3<f64>) -> Matrix3<f64> {
    let a = phi.norm();
    let k = hat(phi);
    Matrix3::identity() - (1.0 - libm::cos(a)) / (a * a) * k
        + (a - libm::sin(a)) / (a * a * a) * k * k
}

#[test]
fn a_free_body_is_differentiated_in_tangent_coordinates_on_the_unit_sphere() {
    let q0 = quat_exp(Vector3::new(0.4, -0.3, 0.8));
    let w = Vector3::new(2.0, 1.0, -1.5);
    let mut x0 = vec![0.1, -0.2, 1.0, q0[0], q0[1], q0[2], q0[3], 0.3, 0.0, 0.5];
    x0.extend(w.iter());
    let x0 = DVector::from_vec(x0);
    let t = 0.5;
    let sys = FreeBody {
        seen: RefCell::new(Vec::new()),
    };
    let o = StepOptions {
        dt: 0.01,
        ..StepOptions::default()
    };
    let s = step_jacobian(&sys, &x0, 0.0, t, &o).unwrap();
    // Tangent order: δp (3), δθ (3, body frame), δv (3), δω (3).
    let mut want = DMatrix::<f64>::identity(12, 12);
    for k in 0..3 {
        want[(k, 6 + k)] = t;
    }
    let rt = rotation(w * t).transpose();
    let jr = right_jacobian(w * t) * t;
    want.view_mut((3, 3), (3, 3)).copy_from(&rt);
    want.view_mut((3, 9), (3, 3)).copy_from(&jr);
    let err = (&s.solution.jacobian - &want).amax();
    assert!(
        err < 1e-7,
        "max error {err:e}\n{}\n{want}",
        s.solution.jacobian
    );
    // Every state the driver handed the step, probes included, had a unit quaternion.
    let seen = sys.seen.borrow();
    assert!(seen.len() > 24 * 50);
    let worst = seen
        .iter()
        .map(|x| ((x[3] * x[3] + x[4] * x[4] + x[5] * x[5] + x[6] * x[6]).sqrt() - 1.0).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-15, "{worst:e}");
}

#[test]
fn a_quaternion_off_the_sphere_or_a_block_past_the_end_is_refused() {
    let sys = FreeBody {
        seen: RefCell::new(Vec::new()),
    };
    let mut x0 = DVector::zeros(13);
    x0[3] = 1.01;
    let e = step_jacobian(&sys, &x0, 0.0, 0.1, &StepOptions::default()).unwrap_err();
    assert!(
        matches!(e, FerroError::InvalidParameter { name: "x0", .. }),
        "{e}"
    );
    struct Short;
    impl StepSystem for Short {
        fn name(&self) -> String {
            "short".into()
        }
        fn dim(&self) -> usize {
            5
        }
        fn step(&self, x: &DVector<f64>, _: f64) -> DVector<f64> {
            x.clone()
        }
        fn manifold(&self) -> Vec<Joint> {
            vec![Joint::parse("ball", 2).unwrap()]
        }
    }
    let e = step_jacobian(
        &Short,
        &DVector::zeros(5),
        0.0,
        0.1,
        &StepOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            FerroError::InvalidParameter {
                name: "manifold",
                ..
            }
        ),
        "{e}"
    );
}
