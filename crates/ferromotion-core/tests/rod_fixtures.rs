//! The rod fixtures (`rigid_rod`, `dumbbell_rod`, `penalty_rod`) against simulations of the
//! rod written here, apart from the code under test: the sequential impulses at a flat landing
//! composed in exact rational arithmetic (the velocities after the landing are rational
//! multiples of the impact speed), the flight in closed form, later impact times bisected on
//! the end heights; the penalty rod by an RK4 of its own with bisected switches. Each J
//! against Richardson-extrapolated one-sided differences of those simulations along +e_c and
//! -e_c (one order of the simultaneous events per sign).

use ferromotion_core::conformance::*;

const G: f64 = 9.81;
const HALF: f64 = 0.5;
const E: (i128, i128) = (1, 2);

/// A fraction p/q in lowest terms, q > 0.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Q(i128, i128);

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

impl Q {
    fn new(p: i128, q: i128) -> Q {
        let g = gcd(p, q).max(1) * q.signum();
        Q(p / g, q / g)
    }
    fn add(self, o: Q) -> Q {
        Q::new(self.0 * o.1 + o.0 * self.1, self.1 * o.1)
    }
    fn mul(self, o: Q) -> Q {
        Q::new(self.0 * o.0, self.1 * o.1)
    }
    fn div(self, o: Q) -> Q {
        Q::new(self.0 * o.1, self.1 * o.0)
    }
    fn f(self) -> f64 {
        self.0 as f64 / self.1 as f64
    }
}

/// The flat landing of a rod of mass 1, length 1 and inertia `inertia` (a fraction) at
/// v_y = -1, omega = 0: the impulses of `order` applied in turn (the first always, then each
/// while its end approaches), swept until no end approaches. (v_y, omega) per unit impact speed.
fn flat_landing(inertia: Q, order: [usize; 2]) -> (Q, Q) {
    let (mut vy, mut om) = (Q(-1, 1), Q(0, 1));
    let mut first = true;
    for _ in 0..100 {
        let mut fired = false;
        for i in order {
            let r = Q(if i == 0 { -1 } else { 1 }, 2);
            let u = vy.add(r.mul(om));
            if !first && u.0 >= 0 {
                continue;
            }
            first = false;
            let w = Q(1, 1).add(r.mul(r).div(inertia));
            let p = Q(-(E.0 + E.1), E.1).mul(u).div(w);
            vy = vy.add(p);
            om = om.add(r.mul(p).div(inertia));
            fired = true;
        }
        if !fired {
            return (vy, om);
        }
    }
    panic!("the sequential impulses did not settle");
}

/// The rod's state flown `t` s.
fn fly(x: &[f64; 6], t: f64) -> [f64; 6] {
    [
        x[0] + x[3] * t,
        x[1] + x[4] * t - 0.5 * G * t * t,
        x[2] + x[5] * t,
        x[3],
        x[4] - G * t,
        x[5],
    ]
}

fn height(x: &[f64; 6], s: f64) -> f64 {
    x[1] + s * HALF * libm::sin(x[2])
}

fn rate(x: &[f64; 6], s: f64) -> f64 {
    x[4] + s * HALF * libm::cos(x[2]) * x[5]
}

/// The first time in (0, horizon] at which end `s` falls through the ground, bisected.
fn strike(x: &[f64; 6], s: f64, horizon: f64) -> Option<f64> {
    let h = |t: f64| height(&fly(x, t), s);
    let start_above = height(x, s) > 0.0 || rate(x, s) > 0.0;
    let (mut lo, n) = (0.0, 20_000);
    for k in 1..=n {
        let t = horizon * k as f64 / n as f64;
        if h(t) <= 0.0 && (lo > 0.0 || start_above) {
            let mut hi = t;
            for _ in 0..200 {
                let mid = 0.5 * (lo + hi);
                if h(mid) > 0.0 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            return Some(hi);
        }
        lo = t;
    }
    None
}

/// One end's Newton impulse on a rod of mass 1, length 1, inertia `inertia`.
fn impulse(x: &mut [f64; 6], s: f64, inertia: f64) {
    let r = s * HALF * libm::cos(x[2]);
    let u = x[4] + r * x[5];
    let p = -(1.0 + E.0 as f64 / E.1 as f64) * u / (1.0 + r * r / inertia);
    x[4] += p;
    x[5] += r * p / inertia;
}

/// The dumbbell (inertia 1/4) from x0 to t1, impacts one end at a time (two at one instant:
/// in turn, each while approaching; the ends decouple there, so the order does not matter).
fn dumbbell(x0: [f64; 6], t1: f64) -> [f64; 6] {
    let (mut x, mut t) = (x0, 0.0);
    loop {
        let next = [-1.0, 1.0]
            .map(|s| strike(&x, s, t1 - t).map(|dt| (dt, s)))
            .into_iter()
            .flatten()
            .min_by(|a, b| a.0.total_cmp(&b.0));
        let Some((dt, _)) = next else {
            return fly(&x, t1 - t);
        };
        x = fly(&x, dt);
        t += dt;
        for s in [-1.0, 1.0] {
            if height(&x, s).abs() < 1e-12 && rate(&x, s) < 0.0 {
                impulse(&mut x, s, 0.25);
            }
        }
    }
}

fn by_name(name: &str) -> Fixture {
    fixtures()
        .unwrap()
        .into_iter()
        .find(|f| f.name == name)
        .unwrap()
}

#[test]
fn a_uniform_rod_landing_flat_is_set_valued_with_each_orders_exact_state() {
    let f = by_name("rigid_rod");
    assert_eq!(f.schema, SCHEMA_V2);
    assert_eq!(f.system.as_ref().unwrap().kind, "rigid_rod");
    assert_eq!(f.exact.outcome, Some(Outcome::SetValued));
    assert!(f.exact.state.is_empty() && f.exact.jacobian.is_empty());
    let (y0, t1) = (f.initial_state[1], f.t_final);
    let ti = (2.0 * y0 / G).sqrt();
    let speed = G * ti;
    assert_eq!(f.exact.impacts.len(), 1);
    assert!(
        (f.exact.impacts[0] - ti).abs() < 1e-14,
        "{:?}",
        f.exact.impacts
    );
    assert_eq!(f.exact.outcomes.len(), 2);
    for order in [[0, 1], [1, 0]] {
        let (vy, om) = flat_landing(Q(1, 12), order);
        let after = [0.0, 0.0, 0.0, 0.0, vy.f() * speed, om.f() * speed];
        // No end strikes again before T: the state at T is the landing's, flown.
        for s in [-1.0, 1.0] {
            assert_eq!(strike(&after, s, t1 - ti), None, "end {s} strikes again");
        }
        let want = fly(&after, t1 - ti);
        let got = &f
            .exact
            .outcomes
            .iter()
            .find(|o| o.order == order)
            .unwrap()
            .state;
        let err = want
            .iter()
            .zip(got)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-12, "{order:?}: {got:?} vs {want:?}");
    }
    // The orders leave mirror images: the same height and speed, the spin reversed.
    let (a, b) = (&f.exact.outcomes[0].state, &f.exact.outcomes[1].state);
    assert_eq!((a[1], a[4]), (b[1], b[4]));
    assert!(a[5] != 0.0 && a[5] == -b[5] && a[2] == -b[2]);
    // Judged, each outcome is named as the one an engine's x(T) is nearest.
    for (i, o) in f.exact.outcomes.iter().enumerate() {
        let c = conformance(&f, &o.state, &vec![vec![0.0; 6]; 6]).unwrap();
        assert_eq!((c.verdict.as_str(), c.sign), ("set_valued", None));
        assert_eq!(c.outcomes.unwrap().nearest, Some(i));
    }
}

#[test]
fn a_dumbbell_landing_flat_has_one_jacobian_equal_to_one_sided_differences_both_ways() {
    let f = by_name("dumbbell_rod");
    assert_eq!(f.exact.outcome, Some(Outcome::Differentiable));
    assert_eq!(f.exact.pieces.len(), 2, "the two orders, agreeing");
    let x0: [f64; 6] = f.initial_state.clone().try_into().unwrap();
    let t1 = f.t_final;
    // The landing's impulses decouple: each order leaves (v_y, omega) = (e, 0) per unit speed.
    for order in [[0, 1], [1, 0]] {
        assert_eq!(flat_landing(Q(1, 4), order), (Q(1, 2), Q(0, 1)));
    }
    let x = dumbbell(x0, t1);
    let err = x
        .iter()
        .zip(&f.exact.state)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(err < 1e-12, "{:?} vs {x:?}", f.exact.state);
    // Along +e_c and -e_c (perturbing theta or omega separates the ends' impacts, one order
    // per sign), Richardson on forward differences at h and h/2 (measured 9e-10 off at
    // h = 2e-5, 2e-8 at 1e-4: the O(h^2) of the extrapolation).
    let h = 2e-5;
    let mut worst = 0.0_f64;
    for c in 0..6 {
        for sign in [1.0, -1.0] {
            let at = |step: f64| {
                let mut p = x0;
                p[c] += sign * step;
                dumbbell(p, t1)
            };
            let (full, half) = (at(h), at(0.5 * h));
            for r in 0..6 {
                let d1 = (full[r] - x[r]) / h;
                let d2 = (half[r] - x[r]) / (0.5 * h);
                let one_sided = sign * (2.0 * d2 - d1);
                worst = worst.max((one_sided - f.exact.jacobian[r][c]).abs());
            }
        }
    }
    assert!(worst < 1e-8, "largest difference {worst:e}");
    let c = conformance(&f, &f.exact.state, &f.exact.jacobian).unwrap();
    assert_eq!(c.verdict, "conforms");
    // The key entry dv_y(T)/dy0 is (1+e) g / V > 0 (V the impact speed).
    let want = 1.5 * G / (2.0 * G * x0[1]).sqrt();
    assert!((f.exact.jacobian[4][1] - want).abs() < 1e-12);
}

/// The penalty rod (mass 1, length 1, inertia 1/12, k = 1e4, c = 20): each end pushed by
/// F = -k g - c g' while touching. An end touches down when its height falls through 0 and
/// lets go when F falls through 0; both located by bisecting the RK4 substep on the switching
/// function, the rest of the step taken after. (Contact resuming below the ground, F rising
/// back through 0, is not modelled: the run panics if it would happen.)
struct Penalty {
    touching: [bool; 2],
}

const K: f64 = 1e4;
const C: f64 = 20.0;
const I_UNIFORM: f64 = 1.0 / 12.0;

fn push(x: &[f64; 6], s: f64) -> f64 {
    -K * height(x, s) - C * rate(x, s)
}

impl Penalty {
    fn rhs(&self, x: &[f64; 6]) -> [f64; 6] {
        let mut f = [x[3], x[4], x[5], 0.0, -G, 0.0];
        for (k, s) in [-1.0, 1.0].into_iter().enumerate() {
            if self.touching[k] {
                let force = push(x, s);
                f[4] += force;
                f[5] += s * HALF * libm::cos(x[2]) * force / I_UNIFORM;
            }
        }
        f
    }
    fn rk4(&self, x: &[f64; 6], h: f64) -> [f64; 6] {
        let add = |a: &[f64; 6], b: &[f64; 6], w: f64| std::array::from_fn(|i| a[i] + w * b[i]);
        let k1 = self.rhs(x);
        let k2 = self.rhs(&add(x, &k1, 0.5 * h));
        let k3 = self.rhs(&add(x, &k2, 0.5 * h));
        let k4 = self.rhs(&add(x, &k3, h));
        std::array::from_fn(|i| x[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]))
    }
    /// End k's switching function: its height while free, its force while touching.
    fn switch(&self, x: &[f64; 6], k: usize) -> f64 {
        let s = [-1.0, 1.0][k];
        if self.touching[k] {
            push(x, s)
        } else {
            height(x, s)
        }
    }
    /// Advance `h` s, switching each end where its function falls through 0.
    fn advance(&mut self, x: &mut [f64; 6], mut h: f64) {
        while h > 0.0 {
            let y = self.rk4(x, h);
            let crossed =
                |p: &Self, z: &[f64; 6], k: usize| p.switch(x, k) > 0.0 && p.switch(z, k) <= 0.0;
            if !(0..2).any(|k| crossed(self, &y, k)) {
                *x = y;
                break;
            }
            // The earliest crossing in the step: bisect the substep on every crossing end.
            let (mut lo, mut hi) = (0.0, h);
            for _ in 0..200 {
                let mid = 0.5 * (lo + hi);
                let z = self.rk4(x, mid);
                if (0..2).any(|j| crossed(self, &z, j)) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            let z = self.rk4(x, hi);
            let flips: Vec<usize> = (0..2).filter(|&j| crossed(self, &z, j)).collect();
            *x = z;
            for j in flips {
                self.touching[j] = !self.touching[j];
            }
            h -= hi;
        }
        for (k, s) in [-1.0, 1.0].into_iter().enumerate() {
            assert!(
                self.touching[k] || height(x, s) >= 0.0 || push(x, s) <= 0.0,
                "end {k} would resume contact below the ground"
            );
        }
    }
}

/// The penalty rod's x(t1) from x0, at RK4 step `dt`.
fn penalty_rod(x0: [f64; 6], t1: f64, dt: f64) -> [f64; 6] {
    let mut p = Penalty {
        touching: [false; 2],
    };
    let mut x = x0;
    let n = (t1 / dt).round() as usize;
    for _ in 0..n {
        p.advance(&mut x, t1 / n as f64);
    }
    x
}

#[test]
fn the_penalty_rods_converged_jacobian_equals_one_sided_differences_of_an_independent_integrator() {
    let f = by_name("penalty_rod");
    assert_eq!(f.exact.outcome, Some(Outcome::Differentiable));
    assert!(f
        .description
        .contains("converged numeric answer, not a closed form"));
    assert_eq!(f.suggested["stiffness"], vec![K]);
    let params = &f.system.as_ref().unwrap().parameters;
    assert_eq!((params["stiffness"][0], params["damping"][0]), (K, C));
    assert_eq!(params["inertia"][0], I_UNIFORM);
    let x0: [f64; 6] = f.initial_state.clone().try_into().unwrap();
    let t1 = f.t_final;
    let dt = 1e-5;
    let x = penalty_rod(x0, t1, dt);
    let err = x
        .iter()
        .zip(&f.exact.state)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        err < 1e-10,
        "x(T) {err:e} off: {:?} vs {x:?}",
        f.exact.state
    );
    // One-sided along +e_c and -e_c: forward differences at h, h/2, h/4, h/8, extrapolated
    // (Richardson: error O(h^4)).
    let h = 2e-4;
    let mut worst = 0.0_f64;
    for c in 0..6 {
        for sign in [1.0, -1.0] {
            let d = |step: f64| {
                let mut p = x0;
                p[c] += sign * step;
                let y = penalty_rod(p, t1, dt);
                std::array::from_fn::<f64, 6, _>(|r| sign * (y[r] - x[r]) / step)
            };
            let mut table: Vec<[f64; 6]> = (0..4).map(|k| d(h / f64::from(1 << k))).collect();
            for level in 1..4 {
                let w = f64::from(1 << level);
                for k in (level..4).rev() {
                    table[k] =
                        std::array::from_fn(|r| (w * table[k][r] - table[k - 1][r]) / (w - 1.0));
                }
            }
            for (got, row) in table[3].iter().zip(&f.exact.jacobian) {
                worst = worst.max((got - row[c]).abs());
            }
        }
    }
    // Measured: 1.6e-9 at most (in dv_y(T)/dtheta0, exactly 0 by symmetry: the differences'
    // own floor, round-off over 45,000 steps against O(h^4)), against max|J| = 54.
    let scale = f
        .exact
        .jacobian
        .iter()
        .flatten()
        .fold(1.0_f64, |m, v| m.max(v.abs()));
    assert!(
        worst < 1e-10 * scale,
        "largest difference {worst:e}, max|J| {scale}"
    );
    assert!(f.exact.pieces.len() >= 2, "the orders, agreeing");
}
