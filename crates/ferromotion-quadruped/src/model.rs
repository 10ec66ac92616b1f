//! The planar quadruped as a rigid-body tree: kinematics, mass matrix, bias forces,
//! contact Jacobians, energy, and the clocked trot its PD controller tracks.
//!
//! # Coordinates (SI units)
//!
//! The sagittal plane has x forward and z up; angles are counter-clockwise seen with x to
//! the right and z up, so a positive pitch raises the nose. The 11 generalised coordinates
//! are
//!
//! ```text
//! q = [x, z, pitch, hip_FL, knee_FL, hip_FR, knee_FR, hip_HL, knee_HL, hip_HR, knee_HR]
//! ```
//!
//! in m, m, rad, then rad for the joints; v = dq/dt (the plane has no quaternion, so
//! `q += dt·v` is exact). A hip angle is the thigh's angle from the trunk's downward axis
//! (positive swings the foot forward), a knee angle the shank's angle from the thigh.
//! The left and right legs of a pair share a hip position in the plane: they are distinct
//! bodies that overlap in the drawing. Feet: FL, FR (front, hips at +a along the trunk),
//! HL, HR (hind, at -a). The trot pairs FL+HR and FR+HL.
//!
//! # Dynamics
//!
//! `M(q)·dv/dt + h(q, v) = S·τ + Σ J_c(q)ᵀ·f_c`, with `M` from the composite-rigid-body
//! algorithm and `h` (Coriolis, centrifugal and gravity) from recursive Newton–Euler, both
//! in planar spatial vectors (Featherstone, *Rigid Body Dynamics Algorithms*, 2008, §2.16,
//! ch. 5–6) written in world coordinates: a motion vector is `(ω, v_x, v_z)` of the body
//! point at the world origin, a force vector `(n, f_x, f_z)` with the moment about that
//! origin. The floating base is the chain prismatic-x → prismatic-z → revolute pitch, the
//! first two links massless; each leg is revolute hip → revolute knee on the trunk.
//!
//! The code is generic over a scalar (`f64` or a forward-mode dual number), so the same
//! lines give `M`, `h`, `J` and their directional derivatives for the step tangents.

use ferromotion_core::error::{FerroError, Result};
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;
use std::ops::{Add, Mul, Neg, Sub};

/// Number of generalised coordinates (and velocities).
pub const NDOF: usize = 11;
/// Number of feet.
pub const NFEET: usize = 4;
/// Foot names, in the order of the joint pairs in `q`.
pub const FOOT_NAMES: [&str; NFEET] = ["FL", "FR", "HL", "HR"];
/// The generalised coordinates' names, in the order of `q` (and of `v`): what a refusal
/// names instead of a bare index.
pub const COORDINATE_NAMES: [&str; NDOF] = [
    "x", "z", "pitch", "hip_FL", "knee_FL", "hip_FR", "knee_FR", "hip_HL", "knee_HL", "hip_HR",
    "knee_HR",
];

const NONE: usize = usize::MAX;
/// Parent of each joint's body in the tree: x-slider, z-slider, trunk, then thigh/shank
/// per leg, each thigh hanging from the trunk (body 2).
const PARENT: [usize; NDOF] = [NONE, 0, 1, 2, 3, 2, 5, 2, 7, 2, 9];
/// +1 for the front hips, -1 for the hind ones.
const HIP_SIDE: [f64; NFEET] = [1.0, 1.0, -1.0, -1.0];
/// Clock offset of each leg, in periods: the diagonal pairs FL+HR and FR+HL alternate.
const PHASE: [f64; NFEET] = [0.0, 0.5, 0.5, 0.0];

/// A small research quadruped in the sagittal plane and the PD trot it tracks.
///
/// Defaults: a 12 kg trunk 0.60 m long (pitch inertia 0.3825 kg·m² of a uniform
/// 0.60 × 0.15 m box), hips ±0.25 m from its centre; thighs 0.20 m, 1.0 kg
/// (3.33e-3 kg·m² about their centre, a uniform rod); shanks 0.20 m, 0.3 kg (1.0e-3 kg·m²);
/// point feet; total 17.2 kg, in the 12–20 kg class of small research quadrupeds.
/// Coulomb friction 0.8 (rubber foot on concrete). PD gains
/// 150 N·m/rad and 2 N·m·s/rad on all eight joints: with the knee's 4e-3 kg·m² that is a
/// 194 rad/s loop, 0.19 rad per 1 ms step, well inside explicit stability. Trot period
/// 0.5 s, stride ±0.04 m (0.32 m/s average), swing lift 0.05 m, foot 0.30 m below the hip.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Quadruped {
    /// Trunk mass, kg.
    pub trunk_mass: f64,
    /// Trunk pitch inertia about its centre of mass, kg·m².
    pub trunk_inertia: f64,
    /// Trunk length, m (drawing only; the hips are at ±`hip_offset`).
    pub trunk_length: f64,
    /// Distance of each hip from the trunk's centre of mass along its axis, m.
    pub hip_offset: f64,
    /// Thigh mass, kg (centre of mass at mid-length).
    pub thigh_mass: f64,
    /// Thigh length, hip to knee, m.
    pub thigh_length: f64,
    /// Thigh inertia about its centre of mass, kg·m².
    pub thigh_inertia: f64,
    /// Shank mass, kg (centre of mass at mid-length).
    pub shank_mass: f64,
    /// Shank length, knee to foot, m.
    pub shank_length: f64,
    /// Shank inertia about its centre of mass, kg·m².
    pub shank_inertia: f64,
    /// Gravitational acceleration, m/s² (>= 0; 0 for free-flight checks).
    pub gravity: f64,
    /// Coulomb friction coefficient of every foot on the ground.
    pub friction: f64,
    /// A foot closer to the ground than this (m) is a contact candidate in the step.
    pub activation_distance: f64,
    /// Joint PD stiffness, N·m/rad (>= 0; 0 switches control off with `kd = 0`).
    pub kp: f64,
    /// Joint PD damping, N·m·s/rad (>= 0).
    pub kd: f64,
    /// Trot period, s.
    pub period: f64,
    /// Half the fore-aft foot travel relative to the hip, m.
    pub stride: f64,
    /// Peak swing-foot lift, m.
    pub lift: f64,
    /// Stance foot depth below the hip, m.
    pub stance_depth: f64,
}

impl Default for Quadruped {
    fn default() -> Self {
        Quadruped {
            trunk_mass: 12.0,
            trunk_inertia: 12.0 * (0.6 * 0.6 + 0.15 * 0.15) / 12.0,
            trunk_length: 0.6,
            hip_offset: 0.25,
            thigh_mass: 1.0,
            thigh_length: 0.2,
            thigh_inertia: 1.0 * 0.2 * 0.2 / 12.0,
            shank_mass: 0.3,
            shank_length: 0.2,
            shank_inertia: 0.3 * 0.2 * 0.2 / 12.0,
            gravity: 9.81,
            friction: 0.8,
            activation_distance: 0.01,
            kp: 150.0,
            kd: 2.0,
            period: 0.5,
            stride: 0.04,
            lift: 0.05,
            stance_depth: 0.30,
        }
    }
}

/// Time and state of the quadruped: `t` in s, `q` (11) and `v` (11) as in the module docs.
#[derive(Debug, Clone, PartialEq)]
pub struct QuadState {
    /// Time, s (drives the gait clock).
    pub t: f64,
    /// Generalised coordinates, m and rad.
    pub q: DVector<f64>,
    /// Generalised velocities, m/s and rad/s.
    pub v: DVector<f64>,
}

impl QuadState {
    /// `[q, v]` as one flat vector of 22 numbers (the layout the bindings pass).
    pub fn to_vec(&self) -> Vec<f64> {
        self.q.iter().chain(self.v.iter()).copied().collect()
    }

    /// Check sizes (11 and 11) and that every number is finite.
    pub fn validate(&self) -> Result<()> {
        for (name, x) in [("q", &self.q), ("v", &self.v)] {
            if x.len() != NDOF {
                return Err(FerroError::InvalidParameter {
                    name,
                    value: x.len() as f64,
                    limit: format!("must have {NDOF} entries"),
                });
            }
            if let Some(i) = x.iter().position(|c| !c.is_finite()) {
                return Err(FerroError::InvalidParameter {
                    name,
                    value: x[i],
                    limit: format!("entry {i} must be finite"),
                });
            }
        }
        if !self.t.is_finite() {
            return Err(FerroError::InvalidParameter {
                name: "t",
                value: self.t,
                limit: "must be finite".into(),
            });
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Scalars: f64 and a one-direction dual number share the kinematics and dynamics code.

/// The arithmetic the tree algorithms need.
pub(crate) trait Real:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Neg<Output = Self>
{
    fn cst(x: f64) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
}

impl Real for f64 {
    #[inline]
    fn cst(x: f64) -> Self {
        x
    }
    #[inline]
    fn sin(self) -> Self {
        libm::sin(self)
    }
    #[inline]
    fn cos(self) -> Self {
        libm::cos(self)
    }
}

/// `a + b·ε` with ε² = 0: value and directional derivative.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Dual {
    pub v: f64,
    pub d: f64,
}

impl Add for Dual {
    type Output = Dual;
    #[inline]
    fn add(self, o: Dual) -> Dual {
        Dual {
            v: self.v + o.v,
            d: self.d + o.d,
        }
    }
}
impl Sub for Dual {
    type Output = Dual;
    #[inline]
    fn sub(self, o: Dual) -> Dual {
        Dual {
            v: self.v - o.v,
            d: self.d - o.d,
        }
    }
}
impl Mul for Dual {
    type Output = Dual;
    #[inline]
    fn mul(self, o: Dual) -> Dual {
        Dual {
            v: self.v * o.v,
            d: self.d * o.v + self.v * o.d,
        }
    }
}
impl Neg for Dual {
    type Output = Dual;
    #[inline]
    fn neg(self) -> Dual {
        Dual {
            v: -self.v,
            d: -self.d,
        }
    }
}
impl Real for Dual {
    #[inline]
    fn cst(x: f64) -> Self {
        Dual { v: x, d: 0.0 }
    }
    #[inline]
    fn sin(self) -> Self {
        Dual {
            v: libm::sin(self.v),
            d: libm::cos(self.v) * self.d,
        }
    }
    #[inline]
    fn cos(self) -> Self {
        Dual {
            v: libm::cos(self.v),
            d: -libm::sin(self.v) * self.d,
        }
    }
}

type V2<S> = [S; 2];
type V3<S> = [S; 3];
type M3<S> = [[S; 3]; 3];

#[inline]
fn dot3<S: Real>(a: &V3<S>, b: &V3<S>) -> S {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline]
fn mat3_vec<S: Real>(m: &M3<S>, x: &V3<S>) -> V3<S> {
    [dot3(&m[0], x), dot3(&m[1], x), dot3(&m[2], x)]
}

#[inline]
fn add3<S: Real>(a: &V3<S>, b: &V3<S>) -> V3<S> {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

#[inline]
fn scale3<S: Real>(a: &V3<S>, s: S) -> V3<S> {
    [a[0] * s, a[1] * s, a[2] * s]
}

/// Planar motion cross product `m × s` (motion on motion).
#[inline]
fn crm<S: Real>(m: &V3<S>, s: &V3<S>) -> V3<S> {
    [
        S::cst(0.0),
        s[0] * m[2] - m[0] * s[2],
        m[0] * s[1] - s[0] * m[1],
    ]
}

/// Planar force cross product `m ×* f` (motion on force).
#[inline]
fn crf<S: Real>(m: &V3<S>, f: &V3<S>) -> V3<S> {
    [m[1] * f[2] - m[2] * f[1], -(m[0] * f[2]), m[0] * f[1]]
}

/// Spatial inertia at the world origin of a body with mass `m`, inertia `ic` about its
/// centre of mass at `c`: `[[ic + m|c|², -m c_z, m c_x], [-m c_z, m, 0], [m c_x, 0, m]]`.
#[inline]
fn body_inertia<S: Real>(m: f64, ic: f64, c: &V2<S>) -> M3<S> {
    let ms = S::cst(m);
    let z = S::cst(0.0);
    [
        [
            S::cst(ic) + ms * (c[0] * c[0] + c[1] * c[1]),
            -(ms * c[1]),
            ms * c[0],
        ],
        [-(ms * c[1]), ms, z],
        [ms * c[0], z, ms],
    ]
}

/// Unit vector of a link at absolute angle `phi`: straight down at 0.
#[inline]
fn down<S: Real>(phi: S) -> V2<S> {
    [phi.sin(), -phi.cos()]
}

/// Everything position-dependent the algorithms need, in world coordinates.
#[derive(Clone, Copy)]
pub(crate) struct Kin<S> {
    /// Motion subspace of each joint (a planar motion vector at the origin).
    pub s: [V3<S>; NDOF],
    /// Spatial inertia of each joint's body at the origin (zero for the sliders).
    pub inertia: [M3<S>; NDOF],
    /// Hip, knee and foot positions (x, z), m.
    pub hip: [V2<S>; NFEET],
    pub knee: [V2<S>; NFEET],
    pub foot: [V2<S>; NFEET],
    /// Centre of mass and absolute angle of trunk and links (trunk, then thigh/shank per
    /// leg), m and rad.
    pub pose: [V3<S>; 9],
}

impl Quadruped {
    /// Check every parameter (finite, masses and lengths > 0, and a gait the legs reach).
    pub fn validate(&self) -> Result<()> {
        use ferromotion_core::error::positive;
        positive("trunk_mass", self.trunk_mass)?;
        positive("trunk_inertia", self.trunk_inertia)?;
        positive("trunk_length", self.trunk_length)?;
        positive("hip_offset", self.hip_offset)?;
        positive("thigh_mass", self.thigh_mass)?;
        positive("thigh_length", self.thigh_length)?;
        positive("thigh_inertia", self.thigh_inertia)?;
        positive("shank_mass", self.shank_mass)?;
        positive("shank_length", self.shank_length)?;
        positive("shank_inertia", self.shank_inertia)?;
        positive("period", self.period)?;
        positive("stance_depth", self.stance_depth)?;
        positive("activation_distance", self.activation_distance)?;
        // Frictionless feet would need their own contact-mode bookkeeping (a foot with
        // mu = 0 slides freely, yet lambda_t = 0 reads as sticking): refuse them plainly.
        positive("friction", self.friction)?;
        for (name, x) in [
            ("gravity", self.gravity),
            ("kp", self.kp),
            ("kd", self.kd),
            ("stride", self.stride),
            ("lift", self.lift),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(FerroError::InvalidParameter {
                    name,
                    value: x,
                    limit: "must be finite and >= 0".into(),
                });
            }
        }
        // The foot target must stay inside the leg's annulus with margin, or the IK has no
        // (or a near-singular) answer: reach between |l1 - l2| + 1 cm and 0.98 (l1 + l2).
        let (l1, l2) = (self.thigh_length, self.shank_length);
        let far = (self.stance_depth * self.stance_depth + self.stride * self.stride).sqrt();
        let near = self.stance_depth - self.lift;
        if far > 0.98 * (l1 + l2) {
            return Err(FerroError::InvalidParameter {
                name: "stance_depth",
                value: self.stance_depth,
                limit: format!(
                    "the foot target reaches {far} m, beyond 0.98·(thigh + shank) = {} m",
                    0.98 * (l1 + l2)
                ),
            });
        }
        if near < (l1 - l2).abs() + 0.01 {
            return Err(FerroError::InvalidParameter {
                name: "lift",
                value: self.lift,
                limit: format!(
                    "the swing foot comes within {near} m of the hip, inside |thigh - shank| + 0.01 m"
                ),
            });
        }
        Ok(())
    }

    /// Total mass, kg.
    pub fn total_mass(&self) -> f64 {
        self.trunk_mass + 4.0 * (self.thigh_mass + self.shank_mass)
    }

    /// Mass and inertia about the centre of mass (kg, kg·m²) of trunk, then thigh and
    /// shank of FL, FR, HL, HR: the order of [`Quadruped::body_poses`].
    pub fn body_mass_properties(&self) -> [(f64, f64); 9] {
        let mut out = [(self.trunk_mass, self.trunk_inertia); 9];
        for leg in 0..NFEET {
            out[1 + 2 * leg] = (self.thigh_mass, self.thigh_inertia);
            out[2 + 2 * leg] = (self.shank_mass, self.shank_inertia);
        }
        out
    }

    pub(crate) fn kin<S: Real>(&self, q: &[S; NDOF]) -> Kin<S> {
        let z0 = S::cst(0.0);
        let one = S::cst(1.0);
        let mut s = [[z0; 3]; NDOF];
        let mut inertia = [[[z0; 3]; 3]; NDOF];
        let mut foot = [[z0; 2]; NFEET];
        let mut hips = [[z0; 2]; NFEET];
        let mut knees = [[z0; 2]; NFEET];
        let mut pose = [[z0; 3]; 9];
        let (x, z, th) = (q[0], q[1], q[2]);
        let (c, sn) = (th.cos(), th.sin());
        s[0] = [z0, one, z0];
        s[1] = [z0, z0, one];
        // A revolute joint at point p moves the origin point at ω × (0 - p) = (p_z, -p_x).
        s[2] = [one, z, -x];
        inertia[2] = body_inertia(self.trunk_mass, self.trunk_inertia, &[x, z]);
        pose[0] = [x, z, th];
        let (l1, l2) = (S::cst(self.thigh_length), S::cst(self.shank_length));
        let (h1, h2) = (
            S::cst(0.5 * self.thigh_length),
            S::cst(0.5 * self.shank_length),
        );
        for leg in 0..NFEET {
            let a = S::cst(HIP_SIDE[leg] * self.hip_offset);
            let hip = [x + a * c, z + a * sn];
            let (jh, jk) = (3 + 2 * leg, 4 + 2 * leg);
            let phi_t = th + q[jh];
            let phi_s = phi_t + q[jk];
            let dt = down(phi_t);
            let ds = down(phi_s);
            let knee = [hip[0] + l1 * dt[0], hip[1] + l1 * dt[1]];
            let f = [knee[0] + l2 * ds[0], knee[1] + l2 * ds[1]];
            let ct = [hip[0] + h1 * dt[0], hip[1] + h1 * dt[1]];
            let cs = [knee[0] + h2 * ds[0], knee[1] + h2 * ds[1]];
            s[jh] = [one, hip[1], -hip[0]];
            s[jk] = [one, knee[1], -knee[0]];
            inertia[jh] = body_inertia(self.thigh_mass, self.thigh_inertia, &ct);
            inertia[jk] = body_inertia(self.shank_mass, self.shank_inertia, &cs);
            foot[leg] = f;
            hips[leg] = hip;
            knees[leg] = knee;
            pose[1 + 2 * leg] = [ct[0], ct[1], phi_t];
            pose[2 + 2 * leg] = [cs[0], cs[1], phi_s];
        }
        Kin {
            s,
            inertia,
            hip: hips,
            knee: knees,
            foot,
            pose,
        }
    }
}

/// Composite-rigid-body algorithm: the joint-space mass matrix.
///
/// Composite inertias accumulate from the leaves; `M_ij = S_iᵀ·Ic_j·S_j` for i an ancestor
/// of j (or j itself). All vectors share the world frame, so no coordinate transforms.
pub(crate) fn crba<S: Real>(k: &Kin<S>) -> [[S; NDOF]; NDOF] {
    let mut ic = k.inertia;
    for j in (1..NDOF).rev() {
        let p = PARENT[j];
        for (r, row) in ic[j].into_iter().enumerate() {
            for (col, x) in row.into_iter().enumerate() {
                ic[p][r][col] = ic[p][r][col] + x;
            }
        }
    }
    let mut m = [[S::cst(0.0); NDOF]; NDOF];
    for j in 0..NDOF {
        let f = mat3_vec(&ic[j], &k.s[j]);
        m[j][j] = dot3(&f, &k.s[j]);
        let mut i = j;
        while PARENT[i] != NONE {
            i = PARENT[i];
            let x = dot3(&f, &k.s[i]);
            m[i][j] = x;
            m[j][i] = x;
        }
    }
    m
}

/// Recursive Newton–Euler: `τ = M(q)·a + h(q, v)` with gravity `g` (m/s², along -z).
///
/// Gravity enters as an upward acceleration of the base, `a_0 = (0, 0, g)`. Velocities and
/// accelerations go out from the root, `a_j = a_p + S_j·qdd_j + (v_j × S_j)·qd_j` (the
/// world-frame `S_j` moves with the body), forces come back, `τ_j = S_jᵀ f_j`.
pub(crate) fn rnea<S: Real>(k: &Kin<S>, v: &[S; NDOF], a: &[S; NDOF], g: f64) -> [S; NDOF] {
    let z0 = S::cst(0.0);
    let mut vel = [[z0; 3]; NDOF];
    let mut acc = [[z0; 3]; NDOF];
    let mut f = [[z0; 3]; NDOF];
    let base_acc = [z0, z0, S::cst(g)];
    for j in 0..NDOF {
        let (vp, ap) = if PARENT[j] == NONE {
            ([z0; 3], base_acc)
        } else {
            (vel[PARENT[j]], acc[PARENT[j]])
        };
        vel[j] = add3(&vp, &scale3(&k.s[j], v[j]));
        let cor = crm(&vel[j], &k.s[j]);
        acc[j] = add3(&add3(&ap, &scale3(&k.s[j], a[j])), &scale3(&cor, v[j]));
        let iv = mat3_vec(&k.inertia[j], &vel[j]);
        f[j] = add3(&mat3_vec(&k.inertia[j], &acc[j]), &crf(&vel[j], &iv));
    }
    let mut tau = [z0; NDOF];
    for j in (0..NDOF).rev() {
        tau[j] = dot3(&k.s[j], &f[j]);
        if PARENT[j] != NONE {
            f[PARENT[j]] = add3(&f[PARENT[j]], &f[j]);
        }
    }
    tau
}

/// Rows of the foot's normal (z) and tangential (x) velocity: `[ż_foot, ẋ_foot] = J·v`.
///
/// A joint with motion subspace `(ω, v_x, v_z)` moves the foot at `p` with
/// `(v_x - ω p_z, v_z + ω p_x)`; only the joints on the foot's path contribute.
pub(crate) fn foot_jacobian<S: Real>(k: &Kin<S>, leg: usize) -> ([S; NDOF], [S; NDOF]) {
    let z0 = S::cst(0.0);
    let mut jn = [z0; NDOF];
    let mut jt = [z0; NDOF];
    let p = k.foot[leg];
    for j in [0, 1, 2, 3 + 2 * leg, 4 + 2 * leg] {
        let s = k.s[j];
        jt[j] = s[1] - s[0] * p[1];
        jn[j] = s[2] + s[0] * p[0];
    }
    (jn, jt)
}

pub(crate) fn arr(x: &DVector<f64>) -> [f64; NDOF] {
    let mut a = [0.0; NDOF];
    a.copy_from_slice(x.as_slice());
    a
}

pub(crate) fn dual_arr(x: &DVector<f64>, d: &[f64]) -> [Dual; NDOF] {
    let mut a = [Dual { v: 0.0, d: 0.0 }; NDOF];
    for i in 0..NDOF {
        a[i] = Dual { v: x[i], d: d[i] };
    }
    a
}

fn check_len(name: &'static str, x: &DVector<f64>) -> Result<()> {
    if x.len() != NDOF {
        return Err(FerroError::InvalidParameter {
            name,
            value: x.len() as f64,
            limit: format!("must have {NDOF} entries"),
        });
    }
    Ok(())
}

impl Quadruped {
    /// The joint-space mass matrix `M(q)` (11 × 11; kg, kg·m, kg·m² by block), symmetric
    /// positive definite.
    pub fn mass_matrix(&self, q: &DVector<f64>) -> Result<DMatrix<f64>> {
        check_len("q", q)?;
        Ok(self.mass_matrix_unchecked(&arr(q)))
    }

    pub(crate) fn mass_matrix_unchecked(&self, q: &[f64; NDOF]) -> DMatrix<f64> {
        let m = crba(&self.kin(q));
        DMatrix::from_fn(NDOF, NDOF, |i, j| m[i][j])
    }

    /// Bias forces `h(q, v)` = Coriolis, centrifugal and gravity terms (N and N·m), so that
    /// free motion is `M·dv/dt = τ - h`.
    pub fn bias_forces(&self, q: &DVector<f64>, v: &DVector<f64>) -> Result<DVector<f64>> {
        check_len("q", q)?;
        check_len("v", v)?;
        let h = rnea(&self.kin(&arr(q)), &arr(v), &[0.0; NDOF], self.gravity);
        Ok(DVector::from_row_slice(&h))
    }

    /// Inverse dynamics `M(q)·a + h(q, v)` by recursive Newton–Euler (N and N·m).
    pub fn inverse_dynamics(
        &self,
        q: &DVector<f64>,
        v: &DVector<f64>,
        a: &DVector<f64>,
    ) -> Result<DVector<f64>> {
        check_len("q", q)?;
        check_len("v", v)?;
        check_len("a", a)?;
        let t = rnea(&self.kin(&arr(q)), &arr(v), &arr(a), self.gravity);
        Ok(DVector::from_row_slice(&t))
    }

    /// Foot positions `[x, z]` in m, in the order FL, FR, HL, HR. The gap to the ground is z.
    pub fn foot_positions(&self, q: &DVector<f64>) -> Result<[[f64; 2]; NFEET]> {
        check_len("q", q)?;
        Ok(self.kin(&arr(q)).foot)
    }

    /// Contact Jacobians: rows `normal` (4 × 11, foot z-velocity) and `tangential`
    /// (4 × 11, foot x-velocity), one row per foot, so that `ż_foot = J_n·v`, `ẋ_foot = J_t·v`.
    pub fn contact_jacobians(&self, q: &DVector<f64>) -> Result<(DMatrix<f64>, DMatrix<f64>)> {
        check_len("q", q)?;
        let k = self.kin(&arr(q));
        let mut jn = DMatrix::zeros(NFEET, NDOF);
        let mut jt = DMatrix::zeros(NFEET, NDOF);
        for leg in 0..NFEET {
            let (n, t) = foot_jacobian(&k, leg);
            for j in 0..NDOF {
                jn[(leg, j)] = n[j];
                jt[(leg, j)] = t[j];
            }
        }
        Ok((jn, jt))
    }

    /// Effective mass of each foot along the ground normal, `1 / (J_n M⁻¹ J_nᵀ)`, kg: the
    /// mass a contact spring under that foot carries on an impact's time scale (the PD
    /// torques are explicit, so inside a step the joints are free). At the start of the
    /// default trot it is 0.16–0.24 kg: the shank and part of the thigh, not the trunk.
    pub fn foot_effective_masses(&self, q: &DVector<f64>) -> Result<[f64; NFEET]> {
        let m = self.mass_matrix(q)?;
        let chol = nalgebra::Cholesky::new(m).ok_or_else(|| FerroError::NonFinite {
            what: "mass matrix",
            detail: "M(q) is not positive definite".into(),
        })?;
        let (jn, _) = self.contact_jacobians(q)?;
        let mut out = [0.0; NFEET];
        for (leg, o) in out.iter_mut().enumerate() {
            let row = jn.row(leg).transpose();
            *o = 1.0 / row.dot(&chol.solve(&row));
        }
        Ok(out)
    }

    /// Centre of mass `(x, z)` in m and absolute angle in rad of the trunk, then the thigh
    /// and shank of FL, FR, HL, HR (the order of [`Quadruped::body_mass_properties`]).
    pub fn body_poses(&self, q: &DVector<f64>) -> Result<[[f64; 3]; 9]> {
        check_len("q", q)?;
        Ok(self.kin(&arr(q)).pose)
    }

    /// Kinetic energy `½ vᵀ M(q) v`, J.
    pub fn kinetic_energy(&self, q: &DVector<f64>, v: &DVector<f64>) -> Result<f64> {
        let m = self.mass_matrix(q)?;
        check_len("v", v)?;
        Ok(0.5 * v.dot(&(m * v)))
    }

    /// Gravitational potential energy `Σ m_b g z_b` (zero at z = 0), J.
    pub fn potential_energy(&self, q: &DVector<f64>) -> Result<f64> {
        let poses = self.body_poses(q)?;
        Ok(self
            .body_mass_properties()
            .iter()
            .zip(poses.iter())
            .map(|((m, _), p)| m * self.gravity * p[1])
            .sum())
    }

    /// Total mechanical energy (kinetic + gravitational), J.
    pub fn energy(&self, q: &DVector<f64>, v: &DVector<f64>) -> Result<f64> {
        Ok(self.kinetic_energy(q, v)? + self.potential_energy(q)?)
    }

    /// Foot target relative to the hip in the trunk frame at time `t` (m and m/s):
    /// `x = A cos 2πs`, `z = -d + lift(s)`, `s` the leg's phase. Stance (s < ½) sweeps
    /// the foot backwards from +A to -A; swing (s ≥ ½) brings it forward with a
    /// `H(1 - cos 4π(s - ½))/2` lift that starts and ends with zero velocity.
    pub fn foot_target(&self, leg: usize, t: f64) -> ([f64; 2], [f64; 2]) {
        let tp = t / self.period + PHASE[leg % NFEET];
        let s = tp - libm::floor(tp);
        let w = 2.0 * PI / self.period;
        let x = self.stride * libm::cos(2.0 * PI * s);
        let xd = -self.stride * w * libm::sin(2.0 * PI * s);
        let (z, zd) = if s >= 0.5 {
            let a = 4.0 * PI * (s - 0.5);
            (
                -self.stance_depth + 0.5 * self.lift * (1.0 - libm::cos(a)),
                0.5 * self.lift * 2.0 * w * libm::sin(a),
            )
        } else {
            (-self.stance_depth, 0.0)
        };
        ([x, z], [xd, zd])
    }

    /// Joint targets of one leg from its foot target (two-link inverse kinematics, knee
    /// bent forward: knee angle < 0), angles in rad and rates in rad/s.
    pub fn leg_ik(&self, p: [f64; 2], pd: [f64; 2]) -> ([f64; 2], [f64; 2]) {
        let (l1, l2) = (self.thigh_length, self.shank_length);
        let r2 = p[0] * p[0] + p[1] * p[1];
        let ck = ((r2 - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)).clamp(-1.0, 1.0);
        let qk = -libm::acos(ck);
        let qh =
            libm::atan2(p[0], -p[1]) - libm::atan2(l2 * libm::sin(qk), l1 + l2 * libm::cos(qk));
        // Rates from the leg Jacobian ∂p/∂(q_h, q_k), determinant l1·l2·sin(q_k).
        let phi = qh + qk;
        let (cp, sp) = (libm::cos(phi), libm::sin(phi));
        let j00 = l1 * libm::cos(qh) + l2 * cp;
        let j10 = l1 * libm::sin(qh) + l2 * sp;
        let (j01, j11) = (l2 * cp, l2 * sp);
        let det = j00 * j11 - j01 * j10;
        let qhd = (j11 * pd[0] - j01 * pd[1]) / det;
        let qkd = (-j10 * pd[0] + j00 * pd[1]) / det;
        ([qh, qk], [qhd, qkd])
    }

    /// Joint targets and their rates for all eight joints at time `t` (rad, rad/s), in
    /// the order of `q[3..11]`.
    pub fn reference(&self, t: f64) -> ([f64; 8], [f64; 8]) {
        let mut qr = [0.0; 8];
        let mut qdr = [0.0; 8];
        for leg in 0..NFEET {
            let (p, pd) = self.foot_target(leg, t);
            let (a, ad) = self.leg_ik(p, pd);
            qr[2 * leg] = a[0];
            qr[2 * leg + 1] = a[1];
            qdr[2 * leg] = ad[0];
            qdr[2 * leg + 1] = ad[1];
        }
        (qr, qdr)
    }

    /// Generalised PD torques `τ` (11; zero on the unactuated base, N·m on the joints):
    /// `τ_j = kp (q_ref - q_j) + kd (qd_ref - v_j)`.
    pub fn control(&self, t: f64, q: &DVector<f64>, v: &DVector<f64>) -> DVector<f64> {
        let (qr, qdr) = self.reference(t);
        let mut tau = DVector::zeros(NDOF);
        for j in 0..8 {
            tau[3 + j] = self.kp * (qr[j] - q[3 + j]) + self.kd * (qdr[j] - v[3 + j]);
        }
        tau
    }

    /// The start of a trot at t = 0: legs on their targets, trunk level with its feet
    /// `clearance` m above the ground (so the run begins with a landing, not a grazing
    /// contact), moving forward at `speed` m/s, joints at their target rates.
    pub fn initial_state(&self, clearance: f64, speed: f64) -> Result<QuadState> {
        self.validate()?;
        ferromotion_core::error::finite("speed", speed)?;
        if !(clearance.is_finite() && clearance >= 0.0) {
            return Err(FerroError::InvalidParameter {
                name: "clearance",
                value: clearance,
                limit: "must be finite and >= 0".into(),
            });
        }
        let (qr, qdr) = self.reference(0.0);
        let mut q = DVector::zeros(NDOF);
        let mut v = DVector::zeros(NDOF);
        for j in 0..8 {
            q[3 + j] = qr[j];
            v[3 + j] = qdr[j];
        }
        let feet = self.kin(&arr(&q)).foot;
        let lowest = feet.iter().map(|f| f[1]).fold(f64::INFINITY, f64::min);
        q[1] = clearance - lowest;
        v[0] = speed;
        Ok(QuadState { t: 0.0, q, v })
    }
}
