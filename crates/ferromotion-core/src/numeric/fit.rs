//! Least-squares fits: the log-log line every exponent readout is read from.

use crate::error::{positive, FerroError, Result};
use serde::Serialize;

/// A least-squares line through (log10 x, log10 y).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    /// Slope: the exponent p in y ~ x^p.
    pub slope: f64,
    /// Intercept of log10 y at log10 x = 0.
    pub intercept: f64,
    /// Coefficient of determination of the line in log-log space.
    pub r2: f64,
    /// Points used.
    pub points: usize,
}

/// Fit log10 y = slope·log10 x + intercept by least squares (x, y > 0, at least 2 points).
pub fn fit_loglog(x: &[f64], y: &[f64]) -> Result<Fit> {
    if x.len() != y.len() || x.len() < 2 {
        return Err(FerroError::InvalidParameter {
            name: "points",
            value: x.len().min(y.len()) as f64,
            limit: "a fit needs at least 2 (x, y) pairs of equal length".into(),
        });
    }
    let mut lx = Vec::with_capacity(x.len());
    let mut ly = Vec::with_capacity(y.len());
    for (&a, &b) in x.iter().zip(y) {
        lx.push(libm::log10(positive("x", a)?));
        ly.push(libm::log10(positive("y", b)?));
    }
    let n = lx.len() as f64;
    let mx = lx.iter().sum::<f64>() / n;
    let my = ly.iter().sum::<f64>() / n;
    let sxx: f64 = lx.iter().map(|a| (a - mx) * (a - mx)).sum();
    let sxy: f64 = lx.iter().zip(&ly).map(|(a, b)| (a - mx) * (b - my)).sum();
    let syy: f64 = ly.iter().map(|b| (b - my) * (b - my)).sum();
    if sxx == 0.0 {
        return Err(FerroError::InvalidParameter {
            name: "x",
            value: x[0],
            limit: "a fit needs at least two distinct x values".into(),
        });
    }
    let slope = sxy / sxx;
    let r2 = if syy == 0.0 {
        1.0
    } else {
        sxy * sxy / (sxx * syy)
    };
    Ok(Fit {
        slope,
        intercept: my - slope * mx,
        r2,
        points: lx.len(),
    })
}
