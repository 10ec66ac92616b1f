//! Double-double arithmetic (about 106 bits, relative round-off ~1e-32) for oracles that
//! must be far more exact than the f64 code they check. Error-free transformations
//! (Knuth's two-sum, the FMA two-product) as in Hida, Li & Bailey's QD library; exp,
//! sin and cos by argument reduction and Taylor series run to below 1e-34.
#![allow(clippy::disallowed_methods)] // native-only oracles: std floats are fine here
#![allow(dead_code)]

use std::ops::{Add, Div, Mul, Neg, Sub};

/// A value hi + lo with |lo| <= ulp(hi)/2.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Dd {
    pub hi: f64,
    pub lo: f64,
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

fn quick_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// ln 2 and pi/2 to double-double precision.
const LN2: Dd = Dd {
    hi: std::f64::consts::LN_2,
    lo: 2.3190468138462996e-17,
};
pub const PI_2: Dd = Dd {
    hi: std::f64::consts::FRAC_PI_2,
    lo: 6.123233995736766e-17,
};

impl Dd {
    pub const ZERO: Dd = Dd { hi: 0.0, lo: 0.0 };
    pub const ONE: Dd = Dd { hi: 1.0, lo: 0.0 };

    pub fn from(x: f64) -> Dd {
        Dd { hi: x, lo: 0.0 }
    }

    pub fn f64(self) -> f64 {
        self.hi + self.lo
    }

    pub fn abs(self) -> Dd {
        if self.hi < 0.0 {
            -self
        } else {
            self
        }
    }

    fn scale(self, s: f64) -> Dd {
        // Exact for a power of two.
        Dd {
            hi: self.hi * s,
            lo: self.lo * s,
        }
    }

    pub fn sqrt(self) -> Dd {
        if self.hi <= 0.0 {
            return Dd::ZERO;
        }
        let s = self.hi.sqrt();
        let (p, e) = two_prod(s, s);
        let r = (self - Dd { hi: p, lo: e }).hi / (2.0 * s);
        let (hi, lo) = quick_two_sum(s, r);
        Dd { hi, lo }
    }

    pub fn exp(self) -> Dd {
        let n = (self.hi / LN2.hi).round();
        let r = (self - LN2 * Dd::from(n)).scale(1.0 / 256.0);
        // Taylor series of exp(r) - 1 for |r| <= ln2/512.
        let mut term = r;
        let mut sum = r;
        for i in 2..30 {
            term = term * r / Dd::from(i as f64);
            sum = sum + term;
            if term.hi.abs() < 1e-36 {
                break;
            }
        }
        // (1 + s)^2 - 1 = s·(2 + s), eight times: undoes the 1/256 without losing digits.
        for _ in 0..8 {
            sum = sum * (sum + Dd::from(2.0));
        }
        (sum + Dd::ONE).scale(2f64.powi(n as i32))
    }

    /// (sin, cos) of self, for |self| up to a few hundred.
    pub fn sin_cos(self) -> (Dd, Dd) {
        let j = (self.hi / PI_2.hi).round();
        let r = self - PI_2 * Dd::from(j);
        let r2 = r * r;
        let (mut s, mut c) = (r, Dd::ONE);
        let (mut ts, mut tc) = (r, Dd::ONE);
        let mut n = 1.0;
        loop {
            ts = -(ts * r2) / Dd::from((n + 1.0) * (n + 2.0));
            tc = -(tc * r2) / Dd::from(n * (n + 1.0));
            s = s + ts;
            c = c + tc;
            n += 2.0;
            if ts.hi.abs() < 1e-36 && tc.hi.abs() < 1e-36 {
                break;
            }
        }
        match (j as i64).rem_euclid(4) {
            0 => (s, c),
            1 => (c, -s),
            2 => (-s, -c),
            _ => (-c, s),
        }
    }
}

impl Neg for Dd {
    type Output = Dd;
    fn neg(self) -> Dd {
        Dd {
            hi: -self.hi,
            lo: -self.lo,
        }
    }
}

impl Add for Dd {
    type Output = Dd;
    fn add(self, b: Dd) -> Dd {
        let (s, e) = two_sum(self.hi, b.hi);
        let (t, f) = two_sum(self.lo, b.lo);
        let (s, e) = quick_two_sum(s, e + t);
        let (hi, lo) = quick_two_sum(s, e + f);
        Dd { hi, lo }
    }
}

impl Sub for Dd {
    type Output = Dd;
    fn sub(self, b: Dd) -> Dd {
        self + (-b)
    }
}

impl Mul for Dd {
    type Output = Dd;
    fn mul(self, b: Dd) -> Dd {
        let (p, e) = two_prod(self.hi, b.hi);
        let (hi, lo) = quick_two_sum(p, e + (self.hi * b.lo + self.lo * b.hi));
        Dd { hi, lo }
    }
}

impl Div for Dd {
    type Output = Dd;
    fn div(self, b: Dd) -> Dd {
        let q1 = self.hi / b.hi;
        let r = self - b * Dd::from(q1);
        let q2 = r.hi / b.hi;
        let r = r - b * Dd::from(q2);
        let q3 = r.hi / b.hi;
        let (hi, lo) = quick_two_sum(q1, q2);
        Dd { hi, lo } + Dd::from(q3)
    }
}
