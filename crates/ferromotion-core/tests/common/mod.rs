//! Shared helpers of the integration tests: independent oracles, not physics of the core.
#![allow(clippy::disallowed_methods)] // native-only oracles: std floats are fine here
#![allow(dead_code)]

use ferromotion_core::{Drop, Jacobian, State};

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

/// max_ij |a - b| / max_ij |b|.
pub fn rel_err(a: &Jacobian, b: &Jacobian) -> f64 {
    let scale = b.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    (a - b).iter().fold(0.0_f64, |m, v| m.max(v.abs())) / scale
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
