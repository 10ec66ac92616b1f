//! The core's integration-test support (`mod common;` in a test file): independent oracles and
//! measures, not physics of the core. `dd` is double-double arithmetic for the tightest oracles.
#![allow(clippy::disallowed_methods)] // native-only oracles: std floats are fine here
#![allow(dead_code)]

pub mod dd;

use ferromotion_core::physics::integrate::fixed::fixed_state;
use ferromotion_core::{Drop, FixedOptions, Jacobian, State};
use nalgebra::DMatrix;

/// Central difference of `f` at `x` along coordinate `j` with probe `eps`.
pub fn central_column(f: &dyn Fn(&State) -> State, x: &State, j: usize, eps: f64) -> State {
    let mut e = State::zeros();
    e[j] = eps;
    (f(&(x + e)) - f(&(x - e))) / (2.0 * eps)
}

/// Central-difference Jacobian of `f` at `x` with probe `eps`.
pub fn central_jacobian(f: &dyn Fn(&State) -> State, x: &State, eps: f64) -> Jacobian {
    let mut j = Jacobian::zeros();
    for c in 0..2 {
        j.set_column(c, &central_column(f, x, c, eps));
    }
    j
}

/// max_ij |j_ij|.
pub fn max_abs(j: &Jacobian) -> f64 {
    j.iter().fold(0.0_f64, |m, v| m.max(v.abs()))
}

/// max_ij |a - b| / max_ij |b|.
pub fn rel_err(a: &Jacobian, b: &Jacobian) -> f64 {
    max_abs(&(a - b)) / max_abs(b)
}

/// max_ij |a - b| / max_ij |b| of a system's Jacobians of any dimension.
pub fn rel_err_dyn(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).amax() / b.amax()
}

/// The bits of a state and its Jacobian, for identities that must hold bit for bit.
pub fn bits(x: &State, j: &Jacobian) -> Vec<u64> {
    x.iter().chain(j.iter()).map(|a| a.to_bits()).collect()
}

/// Best relative agreement of a central-difference Jacobian over a logarithmic epsilon sweep.
pub fn best_over_eps(f: &dyn Fn(&State) -> State, x: &State, jac: &Jacobian) -> (f64, f64) {
    let mut best = (f64::INFINITY, 0.0);
    for i in 0..=24 {
        let eps = 10f64.powf(-2.0 - 0.5 * i as f64);
        let e = rel_err(&central_jacobian(f, x, eps), jac);
        if e < best.0 {
            best = (e, eps);
        }
    }
    best
}

/// v(T) of the fixed-step drop (default options) started from x = (y0, v0): the map a
/// gradient checker probes, as a user of an engine hands it over.
pub fn fixed_final_velocity(
    drop: &Drop,
    k: f64,
    dt: f64,
    x: &[f64],
) -> ferromotion_core::Result<f64> {
    Ok(fixed_state(
        &drop.with_x0(&State::new(x[0], x[1])),
        k,
        dt,
        &FixedOptions::default(),
    )?[1])
}

/// The drop started from `x` (for probes).
pub fn at(drop: &Drop, x: &State) -> Drop {
    drop.with_x0(x)
}

/// log10-spaced values from 10^a to 10^b with `n` points.
pub fn logspace(a: f64, b: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 10f64.powf(a + (b - a) * i as f64 / (n - 1) as f64))
        .collect()
}
