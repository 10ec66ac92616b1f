//! A cube tumbling onto the frictionless plane z = 0: the first fixture whose orientation
//! enters the contact. Its answer is exact (closed-form flight, event times located to
//! adjacent floats, the impact law in closed form), so an engine's x(T) and Jacobian through
//! an off-centre corner strike can be judged against it.
//!
//! **Model.** A cube of half side a and mass m with isotropic inertia I = (2/3)·m·a² (about
//! every axis through its centre). In flight the centre falls under gravity g along −z and,
//! the inertia being isotropic, the world-frame angular velocity ω is constant: R(t) =
//! Exp(t·ω)·R₀. A corner s (body frame, each coordinate ±a) is at p = c + R·s. A corner
//! whose height crosses from above to ≤ 0 strikes: with r = R·s, n = ẑ and the contact
//! point's normal velocity u = v_z + ω·(r × ẑ) < 0, the impulse λ·ẑ with
//! λ = −(1 + e)·u / (1/m + |r × ẑ|²/I) gives v⁺ = v + (λ/m)·ẑ and ω⁺ = ω + (λ/I)·(r × ẑ)
//! (Newton restitution on the contact point's normal velocity; no friction).
//!
//! **State (12).** x = (c, θ, v, ω): centre (m), orientation as a world-frame rotation vector
//! θ (R = Exp(θ)), linear velocity (m/s), world-frame angular velocity (rad/s). **The
//! Jacobian is in tangent coordinates**: an orientation perturbation is a world-frame rotation
//! vector δ left-multiplied, R' = Exp(δ)·R, at t = 0 and at T alike (rows and columns 3..6);
//! the other blocks are the plain derivatives. It is composed from flight Jacobians and one
//! saltation matrix per impact, Ξ = DR + (f⁺ − DR·f⁻)·∇gᵀ / (∇g·f⁻).

use crate::error::{finite, positive, FerroError, Result};
use crate::hybrid::{HybridEvent, HybridSolution, Pieces};
use crate::numeric::so3;
use nalgebra::{DMatrix, Matrix3, SMatrix, Vector3};
use serde::Serialize;

/// 12 × 12, the state's Jacobian in tangent coordinates.
type Mat12 = SMatrix<f64, 12, 12>;

/// The state's names, in order (x = (c, θ, v, ω)).
pub const CUBE_STATE_NAMES: [&str; 12] = [
    "c_x", "c_y", "c_z", "theta_x", "theta_y", "theta_z", "v_x", "v_y", "v_z", "omega_x",
    "omega_y", "omega_z",
];
/// Their units.
pub const CUBE_UNITS: [&str; 12] = [
    "m", "m", "m", "rad", "rad", "rad", "m/s", "m/s", "m/s", "rad/s", "rad/s", "rad/s",
];

/// Impacts slower than this (m/s, the contact point's normal speed) are refused as grazing.
pub const CUBE_GRAZE_SPEED: f64 = 1e-6;
/// Two corners striking within this time (s) of each other are refused: the route handles one
/// corner at a time.
pub const CUBE_SIMULTANEOUS_WITHIN: f64 = 1e-9;

/// The tumbling cube's parameters (SI units).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TumblingCube {
    /// Half the side, m (> 0).
    pub half_side: f64,
    /// Mass, kg (> 0).
    pub mass: f64,
    /// Newton restitution of a corner strike, in [0, 1].
    pub restitution: f64,
    /// Gravity along −z, m/s² (≥ 0).
    pub gravity: f64,
}

impl Default for TumblingCube {
    fn default() -> Self {
        TumblingCube {
            half_side: 0.1,
            mass: 1.0,
            restitution: 0.5,
            gravity: 9.81,
        }
    }
}

/// One corner strike.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CubeImpact {
    /// Time, s.
    pub t: f64,
    /// The corner, 0..8: bit 0, 1, 2 set means +a along body x, y, z.
    pub corner: usize,
    /// The contact point's normal velocity before the strike, m/s (negative).
    pub normal_speed: f64,
    /// The normal impulse λ, N·s.
    pub impulse: f64,
    /// Largest |entry| of the strike's saltation matrix (tangent coordinates).
    pub saltation_max: f64,
}

/// x(T), its Jacobian in tangent coordinates and the strikes met.
#[derive(Debug, Clone, PartialEq)]
pub struct CubeSolution {
    /// x(T) = (c, θ, v, ω).
    pub state: [f64; 12],
    /// dx(T)/dx(0), 12 × 12, orientation rows and columns in tangent coordinates.
    pub jacobian: DMatrix<f64>,
    /// The strikes in order.
    pub impacts: Vec<CubeImpact>,
}

/// The state on the way: centre, rotation, velocity, angular velocity.
#[derive(Debug, Clone, Copy)]
struct Body {
    c: Vector3<f64>,
    r: Matrix3<f64>,
    v: Vector3<f64>,
    w: Vector3<f64>,
}

impl TumblingCube {
    /// Refuse a parameter outside its range, by name.
    pub fn validate(&self) -> Result<()> {
        positive("half_side", self.half_side)?;
        positive("mass", self.mass)?;
        finite("restitution", self.restitution)?;
        if !(0.0..=1.0).contains(&self.restitution) {
            return Err(FerroError::InvalidParameter {
                name: "restitution",
                value: self.restitution,
                limit: "must be in [0, 1]".into(),
            });
        }
        finite("gravity", self.gravity)?;
        if self.gravity < 0.0 {
            return Err(FerroError::InvalidParameter {
                name: "gravity",
                value: self.gravity,
                limit: "must be >= 0 (it acts along -z)".into(),
            });
        }
        Ok(())
    }

    /// Moment of inertia about any axis through the centre, kg·m².
    pub fn inertia(&self) -> f64 {
        2.0 / 3.0 * self.mass * self.half_side * self.half_side
    }

    /// Body-frame corner `k` (bits of k pick +a or −a per axis).
    fn corner(&self, k: usize) -> Vector3<f64> {
        let s = |bit: usize| {
            if k >> bit & 1 == 1 {
                self.half_side
            } else {
                -self.half_side
            }
        };
        Vector3::new(s(0), s(1), s(2))
    }

    /// The body after flying `t` seconds.
    fn fly(&self, b: &Body, t: f64) -> Body {
        let z = Vector3::z();
        Body {
            c: b.c + b.v * t - z * (0.5 * self.gravity * t * t),
            r: so3::exp(&(b.w * t)) * b.r,
            v: b.v - z * (self.gravity * t),
            w: b.w,
        }
    }

    /// Height of corner `k` and its rate after flying `t` seconds from `b`.
    fn height(&self, b: &Body, k: usize, t: f64) -> (f64, f64) {
        let f = self.fly(b, t);
        let r = f.r * self.corner(k);
        (f.c.z + r.z, f.v.z + f.w.cross(&r).z)
    }
}

/// The earliest time in (0, horizon] at which corner `k`'s height crosses to ≤ 0 from above
/// (None if it stays above). Scanned on a grid fine against the rotation, a dip between two
/// grid points found from the rate's sign change, the crossing bisected to adjacent floats.
fn first_crossing(cube: &TumblingCube, b: &Body, k: usize, horizon: f64) -> Option<f64> {
    let turn = b.w.norm().max(1.0);
    let n = ((horizon * turn / 0.02).ceil() as usize).clamp(64, 1_000_000);
    let dt = horizon / n as f64;
    let h = |t: f64| cube.height(b, k, t);
    let mut a = 0.0;
    let (mut ha, mut da) = h(a);
    for i in 1..=n {
        let t = if i == n { horizon } else { dt * i as f64 };
        let (ht, dtt) = h(t);
        if ha > 0.0 && ht <= 0.0 {
            return Some(bisect(|s| h(s).0 <= 0.0, a, t));
        }
        if ha > 0.0 && ht > 0.0 && da < 0.0 && dtt > 0.0 {
            // A minimum inside: is it below the plane?
            let m = bisect(|s| h(s).1 >= 0.0, a, t);
            if h(m).0 <= 0.0 {
                return Some(bisect(|s| h(s).0 <= 0.0, a, m));
            }
        }
        (a, ha, da) = (t, ht, dtt);
    }
    None
}

/// The smallest t in (lo, hi] with `past(t)`, given !past(lo) and past(hi): bisection to
/// adjacent floats.
fn bisect(past: impl Fn(f64) -> bool, mut lo: f64, mut hi: f64) -> f64 {
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if past(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The flight Jacobian over `t` from `b`, tangent coordinates.
fn flight_jacobian(b: &Body, t: f64) -> Mat12 {
    let mut j = Mat12::identity();
    let wt = b.w * t;
    let i3 = Matrix3::identity();
    j.fixed_view_mut::<3, 3>(0, 6).copy_from(&(i3 * t));
    j.fixed_view_mut::<3, 3>(3, 3).copy_from(&so3::exp(&wt));
    j.fixed_view_mut::<3, 3>(3, 9)
        .copy_from(&(so3::left_jacobian(&wt) * t));
    j
}

/// The strike of corner `k` on body `b`: the body after it, the impulse, and the saltation
/// matrix (tangent coordinates).
fn strike(cube: &TumblingCube, b: &Body, k: usize) -> (Body, f64, f64, Mat12) {
    let z = Vector3::z();
    let inertia = cube.inertia();
    let r = b.r * cube.corner(k);
    let rho = r.cross(&z); // (r_y, −r_x, 0)
    let u = b.v.z + b.w.dot(&rho);
    let minv = 1.0 / cube.mass + rho.dot(&rho) / inertia;
    let lam = -(1.0 + cube.restitution) * u / minv;
    let after = Body {
        v: b.v + z * (lam / cube.mass),
        w: b.w + rho * (lam / inertia),
        ..*b
    };
    // d rho / d r, and d r / d δ = −hat(r) (δ × r).
    let p = Matrix3::new(0.0, 1.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    let dr_ddelta = -so3::hat(&r);
    let du_dr = (b.w.transpose() * p).transpose();
    let dm_dr = (rho.transpose() * p).transpose() * (2.0 / inertia);
    let dlam_dr = (du_dr * minv - dm_dr * u) * (-(1.0 + cube.restitution) / (minv * minv));
    let dlam_ddelta = dr_ddelta.transpose() * dlam_dr; // column: ∂λ/∂δ
    let dlam_dv = z * (-(1.0 + cube.restitution) / minv);
    let dlam_dw = rho * (-(1.0 + cube.restitution) / minv);
    let mut dreset = Mat12::identity();
    // v⁺ = v + (λ/m)·ẑ
    let vz = z / cube.mass;
    dreset
        .fixed_view_mut::<3, 3>(6, 3)
        .copy_from(&(vz * dlam_ddelta.transpose()));
    dreset
        .fixed_view_mut::<3, 3>(6, 6)
        .copy_from(&(Matrix3::identity() + vz * dlam_dv.transpose()));
    dreset
        .fixed_view_mut::<3, 3>(6, 9)
        .copy_from(&(vz * dlam_dw.transpose()));
    // ω⁺ = ω + (λ/I)·ρ(r)
    let wr = rho / inertia;
    let dw_ddelta = wr * dlam_ddelta.transpose() + p * dr_ddelta * (lam / inertia);
    dreset.fixed_view_mut::<3, 3>(9, 3).copy_from(&dw_ddelta);
    dreset
        .fixed_view_mut::<3, 3>(9, 6)
        .copy_from(&(wr * dlam_dv.transpose()));
    dreset
        .fixed_view_mut::<3, 3>(9, 9)
        .copy_from(&(Matrix3::identity() + wr * dlam_dw.transpose()));
    // The guard g = c_z + ẑ·r: ∇g = (ẑ, r × ẑ, 0, 0); the flow f = (v, ω, −g·ẑ, 0).
    let mut grad = SMatrix::<f64, 12, 1>::zeros();
    grad[2] = 1.0;
    grad.fixed_view_mut::<3, 1>(3, 0).copy_from(&rho);
    let flow = |s: &Body| {
        let mut f = SMatrix::<f64, 12, 1>::zeros();
        f.fixed_view_mut::<3, 1>(0, 0).copy_from(&s.v);
        f.fixed_view_mut::<3, 1>(3, 0).copy_from(&s.w);
        f[8] = -cube.gravity;
        f
    };
    let (f_minus, f_plus) = (flow(b), flow(&after));
    let speed = (grad.transpose() * f_minus)[0]; // = u
    let salt = dreset + (f_plus - dreset * f_minus) * grad.transpose() / speed;
    (after, u, lam, salt)
}

/// The next strike within `horizon` of `b`: (time after b, corner), refusing two corners at
/// once.
fn next_strike(
    cube: &TumblingCube,
    b: &Body,
    t0: f64,
    horizon: f64,
) -> Result<Option<(f64, usize)>> {
    let mut hits: Vec<(f64, usize)> = (0..8)
        .filter_map(|k| first_crossing(cube, b, k, horizon).map(|t| (t, k)))
        .collect();
    hits.sort_by(|a, b| a.0.total_cmp(&b.0));
    if let [first, second, ..] = hits[..] {
        if second.0 - first.0 <= CUBE_SIMULTANEOUS_WITHIN {
            return Err(FerroError::Scenario(format!(
                "corners {} and {} strike together at t = {:.6} s: this route takes one corner at a time",
                first.1,
                second.1,
                t0 + first.0
            )));
        }
    }
    Ok(hits.first().copied())
}

/// The tumbling cube from `x0` = (c, θ, v, ω) to `t_final`: x(T), the Jacobian in tangent
/// coordinates, the strikes. Refused: a bad parameter (by name), a corner at or below the
/// plane at t = 0, two corners striking together, a grazing strike, more than 1000 strikes.
pub fn tumbling_cube(cube: &TumblingCube, x0: &[f64; 12], t_final: f64) -> Result<CubeSolution> {
    cube.validate()?;
    positive("t_final", t_final)?;
    for (i, &x) in x0.iter().enumerate() {
        if !x.is_finite() {
            return Err(FerroError::InvalidParameter {
                name: [
                    "c", "c", "c", "theta", "theta", "theta", "v", "v", "v", "omega", "omega",
                    "omega",
                ][i],
                value: x,
                limit: "must be finite".into(),
            });
        }
    }
    let v3 = |i: usize| Vector3::new(x0[i], x0[i + 1], x0[i + 2]);
    let mut b = Body {
        c: v3(0),
        r: so3::exp(&v3(3)),
        v: v3(6),
        w: v3(9),
    };
    let lowest = (0..8)
        .map(|k| cube.height(&b, k, 0.0).0)
        .fold(f64::INFINITY, f64::min);
    if !(lowest > 0.0) {
        return Err(FerroError::InvalidParameter {
            name: "c",
            value: lowest,
            limit: "every corner must start above the plane z = 0 (the lowest corner's height is the value)".into(),
        });
    }
    let (mut t, mut jac, mut impacts) = (0.0, Mat12::identity(), Vec::new());
    while let Some((dt, k)) = next_strike(cube, &b, t, t_final - t)? {
        if impacts.len() >= 1000 {
            return Err(FerroError::TooManySteps {
                route: "tumbling_cube",
                max_steps: 1000,
                detail: format!("1000 corner strikes by t = {t} s (the cube is coming to rest)"),
            });
        }
        jac = flight_jacobian(&b, dt) * jac;
        b = cube.fly(&b, dt);
        t += dt;
        let (after, u, lam, salt) = strike(cube, &b, k);
        if -u < CUBE_GRAZE_SPEED {
            return Err(FerroError::Grazing {
                t,
                speed: -u,
                threshold: CUBE_GRAZE_SPEED,
                term: cube.gravity / (-u).max(f64::MIN_POSITIVE),
            });
        }
        jac = salt * jac;
        b = after;
        impacts.push(CubeImpact {
            t,
            corner: k,
            normal_speed: u,
            impulse: lam,
            saltation_max: salt.amax(),
        });
    }
    jac = flight_jacobian(&b, t_final - t) * jac;
    b = cube.fly(&b, t_final - t);
    let theta = so3::log(&b.r);
    let mut state = [0.0; 12];
    for i in 0..3 {
        state[i] = b.c[i];
        state[3 + i] = theta[i];
        state[6 + i] = b.v[i];
        state[9 + i] = b.w[i];
    }
    Ok(CubeSolution {
        state,
        jacobian: DMatrix::from_iterator(12, 12, jac.iter().copied()),
        impacts,
    })
}

/// The tumbling cube from x(t0) = `x0` to `t1` as [`crate::hybrid::hybrid_jacobian`] answers
/// a declared system: x(t1), one piece (no two corners strike together: that is refused), the
/// strikes as events (guard = the corner, 0..8; guard speed = the contact point's normal
/// velocity), the spectral radius and worst gain of J. The route is [`tumbling_cube`]'s, exact
/// (the flight is autonomous: t0 only shifts the event times); J in tangent coordinates.
pub fn cube_hybrid(
    cube: &TumblingCube,
    x0: &[f64; 12],
    t0: f64,
    t1: f64,
) -> Result<HybridSolution> {
    finite("t0", t0)?;
    finite("t1", t1)?;
    if !(t1 > t0) {
        return Err(FerroError::InvalidParameter {
            name: "t1",
            value: t1,
            limit: format!("must be > t0 = {t0}"),
        });
    }
    let sol = tumbling_cube(cube, x0, t1 - t0)?;
    let events = sol
        .impacts
        .iter()
        .map(|i| HybridEvent {
            t: t0 + i.t,
            mode_before: 0,
            guard: i.corner,
            mode_after: 0,
            guard_speed: i.normal_speed,
            saltation_max: i.saltation_max,
        })
        .collect();
    let j = sol.jacobian;
    Ok(HybridSolution {
        x: nalgebra::DVector::from_column_slice(&sol.state),
        mode: 0,
        pieces: Pieces::one(&j),
        events,
        probe_gap: 0.0,
        spectral_radius: crate::numeric::svd::spectral_radius(&j),
        worst_gain: j.singular_values().max(),
        jacobian: j,
    })
}
