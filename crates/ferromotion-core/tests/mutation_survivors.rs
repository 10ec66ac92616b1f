//! Tests written for mutants that `make mutants` (scripts/mutants.sh) found alive: each one
//! pins a behaviour no other test looked at. Every expected value is computed here, by hand,
//! independently of the code under test.
#![allow(clippy::disallowed_methods)] // native-only oracles: std floats are fine here

use ferromotion_core::lab::readout::fit_loglog;

/// The coefficient of determination of a straight-line fit of (a, b), written out from its
/// textbook definition 1 - SS_res / SS_tot (not the product-moment form the core uses).
fn r2_by_residuals(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(p, q)| (p - ma) * (q - mb)).sum();
    let var: f64 = a.iter().map(|p| (p - ma) * (p - ma)).sum();
    let slope = cov / var;
    let ss_res: f64 = a
        .iter()
        .zip(b)
        .map(|(p, q)| {
            let r = q - (mb + slope * (p - ma));
            r * r
        })
        .sum();
    let ss_tot: f64 = b.iter().map(|q| (q - mb) * (q - mb)).sum();
    1.0 - ss_res / ss_tot
}

/// The fitted exponent's R² reads how straight the log-log points are: below 1 for scattered
/// points (survivor: `syy == 0.0` flipped made every R² 1), exactly 1 for a flat line, where
/// SS_tot = 0 and the ratio would be 0/0.
#[test]
fn loglog_fit_r2_measures_scatter_and_a_flat_line_is_a_perfect_fit() {
    let x = [1e4, 1e5, 1e6, 1e7, 1e8];
    let y = [3.0, 20.0, 35.0, 400.0, 900.0];
    let fit = fit_loglog(&x, &y).unwrap();
    let (lx, ly): (Vec<f64>, Vec<f64>) = x
        .iter()
        .zip(&y)
        .map(|(a, b)| (a.log10(), b.log10()))
        .unzip();
    let want = r2_by_residuals(&lx, &ly);
    assert!(want < 0.99, "the test's points must scatter (R² {want})");
    assert!(
        (fit.r2 - want).abs() < 1e-12,
        "R² {} vs {want} by residuals",
        fit.r2
    );

    let flat = fit_loglog(&x, &[2.5; 5]).unwrap();
    assert_eq!(flat.slope, 0.0);
    assert_eq!(flat.r2, 1.0, "a flat line is fitted exactly");
}
