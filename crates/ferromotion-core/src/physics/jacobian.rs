//! Forward-mode dual numbers with two tangent directions, for derivatives of maps whose
//! control flow depends on the values (event-located steps): the derivative of the
//! implemented map, event times included, without deriving it by hand.

use std::ops::{Add, Div, Mul, Neg, Sub};

/// A value with its derivatives along two input directions (here d/dy0 and d/dv0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dual {
    /// The value.
    pub v: f64,
    /// Its derivatives with respect to the two inputs.
    pub d: [f64; 2],
}

impl Dual {
    /// A constant (zero derivatives).
    pub fn constant(v: f64) -> Dual {
        Dual { v, d: [0.0, 0.0] }
    }

    /// The `i`-th input variable, with value `v`.
    pub fn variable(v: f64, i: usize) -> Dual {
        let mut d = [0.0, 0.0];
        d[i] = 1.0;
        Dual { v, d }
    }

    /// Square root (the derivative is infinite at 0; callers only take it of positives).
    pub fn sqrt(self) -> Dual {
        let r = self.v.sqrt();
        let f = 0.5 / r;
        Dual {
            v: r,
            d: [self.d[0] * f, self.d[1] * f],
        }
    }

    /// Multiply by a plain number.
    pub fn scale(self, s: f64) -> Dual {
        Dual {
            v: self.v * s,
            d: [self.d[0] * s, self.d[1] * s],
        }
    }
}

impl Add for Dual {
    type Output = Dual;
    fn add(self, o: Dual) -> Dual {
        Dual {
            v: self.v + o.v,
            d: [self.d[0] + o.d[0], self.d[1] + o.d[1]],
        }
    }
}

impl Sub for Dual {
    type Output = Dual;
    fn sub(self, o: Dual) -> Dual {
        Dual {
            v: self.v - o.v,
            d: [self.d[0] - o.d[0], self.d[1] - o.d[1]],
        }
    }
}

impl Mul for Dual {
    type Output = Dual;
    fn mul(self, o: Dual) -> Dual {
        Dual {
            v: self.v * o.v,
            d: [
                self.d[0] * o.v + self.v * o.d[0],
                self.d[1] * o.v + self.v * o.d[1],
            ],
        }
    }
}

impl Div for Dual {
    type Output = Dual;
    fn div(self, o: Dual) -> Dual {
        let q = self.v / o.v;
        Dual {
            v: q,
            d: [
                (self.d[0] - q * o.d[0]) / o.v,
                (self.d[1] - q * o.d[1]) / o.v,
            ],
        }
    }
}

impl Neg for Dual {
    type Output = Dual;
    fn neg(self) -> Dual {
        Dual {
            v: -self.v,
            d: [-self.d[0], -self.d[1]],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_quotient_and_sqrt_rules() {
        let x = Dual::variable(2.0, 0);
        let y = Dual::variable(3.0, 1);
        let f = (x * y + x / y).sqrt();
        // f = sqrt(x·y + x/y); df/dx = (y + 1/y)/(2f), df/dy = (x - x/y²)/(2f).
        let fv = (6.0_f64 + 2.0 / 3.0).sqrt();
        assert!((f.v - fv).abs() < 1e-15);
        assert!((f.d[0] - (3.0 + 1.0 / 3.0) / (2.0 * fv)).abs() < 1e-15);
        assert!((f.d[1] - (2.0 - 2.0 / 9.0) / (2.0 * fv)).abs() < 1e-15);
    }
}
