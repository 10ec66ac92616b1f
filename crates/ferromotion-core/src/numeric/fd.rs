//! The one central-difference helper every caller in the core uses.
//!
//! `D_j = (f(x + eps·e_j) - f(x - eps·e_j)) / (2·eps)`: truncation ~eps²·f'''/6, round-off
//! ~ulp(f)/eps. Each caller states its probe policy explicitly ([`Probe`]): the checker
//! sweeps a list of sizes, the tolerance route takes eps and eps/2 for Richardson
//! extrapolation, the descent's finite-difference arm a fixed 1e-6, and the quadruped
//! halves a scaled probe until two agree; the black-box hybrid driver differentiates
//! segments of a user's step function with [`central_jacobian_dyn`].

use nalgebra::{DMatrix, DVector};

/// The drop's state `[y, v]` (the same type as `physics::state::State`; named here so this
/// layer imports nothing above it).
type State = nalgebra::Vector2<f64>;
/// A 2x2 Jacobian (the same type as `physics::state::Jacobian`).
type Jacobian = nalgebra::Matrix2<f64>;

/// How the probe size is chosen for an input coordinate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Probe {
    /// The same absolute step for every input (in the input's units).
    Absolute(f64),
    /// `factor · max(|x_j|, floor)`: relative to the input, with a floor near zero.
    Relative {
        /// Step per unit of the input.
        factor: f64,
        /// Smallest scale the factor multiplies.
        floor: f64,
    },
}

impl Probe {
    /// The probe size for an input whose value is `x`.
    pub fn size(&self, x: f64) -> f64 {
        match *self {
            Probe::Absolute(eps) => eps,
            Probe::Relative { factor, floor } => factor * x.abs().max(floor),
        }
    }
}

/// `(plus - minus) / (2·eps)`, the central quotient of one scalar output.
#[inline]
pub fn quotient(plus: f64, minus: f64, eps: f64) -> f64 {
    (plus - minus) / (2.0 * eps)
}

/// [`quotient`] for each of `M` outputs.
pub fn quotients<const M: usize>(plus: &[f64; M], minus: &[f64; M], eps: f64) -> [f64; M] {
    let mut d = [0.0; M];
    for o in 0..M {
        d[o] = quotient(plus[o], minus[o], eps);
    }
    d
}

/// Column `j` of the central-difference Jacobian of a drop map `f` at `x`, with the probe
/// size `probe` gives for x_j. `f` is evaluated at x + eps·e_j, then x - eps·e_j; its
/// first error is returned.
pub fn central_column<E>(
    mut f: impl FnMut(&State) -> std::result::Result<State, E>,
    x: &State,
    j: usize,
    probe: Probe,
) -> std::result::Result<State, E> {
    let eps = probe.size(x[j]);
    let (mut p, mut m) = (*x, *x);
    p[j] += eps;
    m[j] -= eps;
    let plus = f(&p)?;
    let minus = f(&m)?;
    Ok(State::new(
        quotient(plus[0], minus[0], eps),
        quotient(plus[1], minus[1], eps),
    ))
}

/// The central-difference Jacobian of a drop map `f` at `x` (columns in input order).
pub fn central_jacobian<E>(
    mut f: impl FnMut(&State) -> std::result::Result<State, E>,
    x: &State,
    probe: Probe,
) -> std::result::Result<Jacobian, E> {
    let mut d = Jacobian::zeros();
    for j in 0..2 {
        d.set_column(j, &central_column(&mut f, x, j, probe)?);
    }
    Ok(d)
}

/// The central-difference Jacobian of a map `f` on vectors of any length, at `x`, with the
/// probe size `probe` gives for each x_j (columns in input order; f's first error returned).
pub fn central_jacobian_dyn<E>(
    mut f: impl FnMut(&DVector<f64>) -> std::result::Result<DVector<f64>, E>,
    x: &DVector<f64>,
    probe: Probe,
) -> std::result::Result<DMatrix<f64>, E> {
    let mut d: Option<DMatrix<f64>> = None;
    for j in 0..x.len() {
        let eps = probe.size(x[j]);
        let (mut p, mut m) = (x.clone(), x.clone());
        p[j] += eps;
        m[j] -= eps;
        let plus = f(&p)?;
        let minus = f(&m)?;
        let column = plus.zip_map(&minus, |a, b| quotient(a, b, eps));
        d.get_or_insert_with(|| DMatrix::zeros(column.len(), x.len()))
            .set_column(j, &column);
    }
    Ok(d.unwrap_or_else(|| DMatrix::zeros(0, 0)))
}

/// The central-difference gradient of a scalar function `f` at `x` (probe as above).
pub fn central_gradient_dyn<E>(
    mut f: impl FnMut(&DVector<f64>) -> std::result::Result<f64, E>,
    x: &DVector<f64>,
    probe: Probe,
) -> std::result::Result<DVector<f64>, E> {
    let mut g = DVector::zeros(x.len());
    for j in 0..x.len() {
        let eps = probe.size(x[j]);
        let (mut p, mut m) = (x.clone(), x.clone());
        p[j] += eps;
        m[j] -= eps;
        g[j] = quotient(f(&p)?, f(&m)?, eps);
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quadratic_map_is_differentiated_exactly() {
        // Central differences are exact on quadratics (up to round-off).
        let f = |x: &State| -> Result<State, ()> {
            Ok(State::new(x[0] * x[0] + 3.0 * x[1], x[0] * x[1]))
        };
        let x = State::new(1.5, -2.0);
        let d = central_jacobian(f, &x, Probe::Absolute(1e-3)).unwrap();
        let want = Jacobian::new(3.0, 3.0, -2.0, 1.5);
        assert!((d - want).amax() < 1e-10, "{d}");
        let r = central_jacobian(
            f,
            &x,
            Probe::Relative {
                factor: 1e-4,
                floor: 1.0,
            },
        )
        .unwrap();
        assert!((r - want).amax() < 1e-9, "{r}");
        let rel = Probe::Relative {
            factor: 1e-4,
            floor: 1.0,
        };
        assert_eq!(rel.size(-3.0), 1e-4 * 3.0);
        assert_eq!(rel.size(0.5), 1e-4);
    }
}
