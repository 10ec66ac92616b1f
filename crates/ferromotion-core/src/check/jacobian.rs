//! Jacobians, JVPs and VJPs, checked by the gradient check's own walk and rules.
//!
//! For f: Rⁿ → Rᵐ and a claimed Jacobian J, every output weight w (each output when m is at
//! most [`OUTPUT_COORDINATES`], else seeded random unit weights) makes a scalar objective
//! w·f whose gradient is claimed to be Jᵀw: a matrix gives it directly, a VJP gives it as
//! `vjp(w)`, a JVP gives its directional derivatives `w·jvp(p)`. Each is checked along the
//! same directions by [`check_directions`]; f is evaluated once per point (its values are
//! shared between the weights). The directions are labelled "output k, random j", and the
//! verdict is the gradient check's rule over all of them.

use super::gradient::{check_directions, finished, validated};
use super::report::{CheckOptions, CheckReport};
use super::walk::scaled_norm;
use crate::error::{FerroError, Result};
use crate::numeric::rng::random_directions;
use std::collections::HashMap;

/// A vector map Rᵃ → Rᵇ (f, a JVP or a VJP).
pub type VectorMap<'a> = dyn FnMut(&[f64]) -> Result<Vec<f64>> + 'a;

/// Up to this many outputs each output is checked on its own; above, random output weights.
pub const OUTPUT_COORDINATES: usize = 8;
/// Random output weights at least, above [`OUTPUT_COORDINATES`] outputs.
pub const OUTPUT_WEIGHTS: usize = 4;

/// What is claimed about f's Jacobian at x.
pub enum JacobianClaim<'r, 'f> {
    /// The (m, n) matrix, row-major (`J[i·n + j]` = ∂fᵢ/∂xⱼ).
    Matrix(&'r [f64]),
    /// p (n) ↦ J·p (m).
    Jvp(&'r mut VectorMap<'f>),
    /// w (m) ↦ Jᵀ·w (n).
    Vjp(&'r mut VectorMap<'f>),
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(u, v)| u * v).sum()
}

fn key(y: &[f64]) -> Vec<u64> {
    y.iter().map(|v| v.to_bits()).collect()
}

/// A vector a callback returned, refused unless it has `len` entries.
fn sized(v: Vec<f64>, len: usize, name: &'static str, of: &str) -> Result<Vec<f64>> {
    if v.len() == len {
        Ok(v)
    } else {
        Err(FerroError::InvalidParameter {
            name,
            value: v.len() as f64,
            limit: format!("expected {of} of length {len}"),
        })
    }
}

/// The output weights, labelled.
fn weights(m: usize, opts: &CheckOptions) -> Vec<(String, Vec<f64>)> {
    if m <= OUTPUT_COORDINATES {
        (0..m)
            .map(|k| {
                let mut w = vec![0.0; m];
                w[k] = 1.0;
                (format!("output {k}"), w)
            })
            .collect()
    } else {
        let count = opts.random_directions.max(OUTPUT_WEIGHTS);
        random_directions(m, count, opts.seed.wrapping_add(1))
            .into_iter()
            .enumerate()
            .map(|(i, w)| (format!("output weight {i}"), w))
            .collect()
    }
}

/// Check a claimed Jacobian of `f` at `x` (see the module docs): the report, and f's number
/// of outputs m (for the receipt, [`super::Receipt::for_jacobian`]).
pub fn check_jacobian(
    f: &mut VectorMap,
    mut claim: JacobianClaim,
    x: &[f64],
    opts: &CheckOptions,
) -> Result<(CheckReport, usize)> {
    let scale = validated(x, opts)?;
    let n = x.len();
    let y0 = f(x)?;
    let m = y0.len();
    if m == 0 || y0.iter().any(|v| !v.is_finite()) {
        return Err(FerroError::NonFinite {
            what: "objective at x",
            detail: format!("f(x) must be a non-empty vector of finite numbers (got {m} values)"),
        });
    }
    if let JacobianClaim::Matrix(j) = &claim {
        sized(
            j.to_vec(),
            m * n,
            "jacobian",
            &format!("an ({m}, {n}) matrix, row-major,"),
        )?;
        for &v in j.iter() {
            crate::error::finite("jacobian", v)?;
        }
    }
    let mut values: HashMap<Vec<u64>, Vec<f64>> = HashMap::from([(key(x), y0)]);
    let mut jvps: HashMap<Vec<u64>, Vec<f64>> = HashMap::new();
    let mut parts = Vec::new();
    for (label, w) in weights(m, opts) {
        let mut phi = |y: &[f64]| -> Result<f64> {
            let k = key(y);
            if let Some(v) = values.get(&k) {
                return Ok(dot(&w, v));
            }
            let v = sized(f(y)?, m, "f", "an output of f (as at x)")?;
            let d = dot(&w, &v);
            values.insert(k, v);
            Ok(d)
        };
        let mut report = match &mut claim {
            JacobianClaim::Jvp(jvp) => {
                let mut along = |p: &[f64]| -> Result<f64> {
                    let k = key(p);
                    if !jvps.contains_key(&k) {
                        let v = sized(jvp(p)?, m, "jvp", "J·p, one entry per output")?;
                        jvps.insert(k.clone(), v);
                    }
                    Ok(dot(&w, &jvps[&k]))
                };
                check_directions(&mut phi, None, None, x, &mut along, 0.0, opts)?
            }
            other => {
                let g = match other {
                    JacobianClaim::Matrix(j) => (0..n)
                        .map(|c| (0..m).map(|r| j[r * n + c] * w[r]).sum())
                        .collect(),
                    JacobianClaim::Vjp(vjp) => {
                        sized(vjp(&w)?, n, "vjp", "Jᵀ·w, one entry per input")?
                    }
                    JacobianClaim::Jvp(_) => unreachable!("matched above"),
                };
                for &v in &g {
                    crate::error::finite("vjp", v)?;
                }
                let mut along = |p: &[f64]| Ok(dot(&g, p));
                check_directions(
                    &mut phi,
                    None,
                    None,
                    x,
                    &mut along,
                    scaled_norm(&g, &scale),
                    opts,
                )?
            }
        };
        for d in &mut report.directions {
            d.label = format!("{label}, {}", d.label);
        }
        parts.push(report);
    }
    Ok((merged(parts, values.len() as u64, n, opts), m))
}

/// One report from the output weights' reports: every direction, the noisiest noise, the
/// weakest guarantee, the verdict by the gradient check's rule, the distinct evaluations of f.
fn merged(parts: Vec<CheckReport>, evaluations: u64, n: usize, opts: &CheckOptions) -> CheckReport {
    let noise = parts
        .iter()
        .map(|r| r.noise.clone())
        .max_by(|a, b| a.sigma.total_cmp(&b.sigma))
        .expect("at least one output");
    let guarantee = parts
        .iter()
        .filter_map(|r| r.guarantee.clone())
        .max_by(|a, b| a.delta.total_cmp(&b.delta));
    let directions: Vec<_> = parts.into_iter().flat_map(|r| r.directions).collect();
    finished(directions, noise, guarantee, opts, n, evaluations)
}
