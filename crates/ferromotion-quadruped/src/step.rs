//! One time-stepping scheme, two contact laws.
//!
//! Every step, for both laws (semi-implicit, velocity level; Stewart & Trinkle 1996):
//!
//! ```text
//! v_free = v + dt·M(q)⁻¹ (τ(t, q, v) - h(q, v))
//! v⁺     = v_free + M(q)⁻¹ (J_nᵀ λ_n + J_tᵀ λ_t)        λ: impulses, N·s
//! q⁺     = q + dt·v⁺,   t⁺ = t + dt
//! ```
//!
//! with the same `M`, `h`, PD torques `τ`, contact Jacobians `J_n` (foot z-velocity) and
//! `J_t` (foot x-velocity) and the same activation rule (a foot is a candidate when its gap
//! φ = z_foot is below [`Quadruped::activation_distance`]). Only the impulse differs:
//!
//! - **rigid** ([`rigid_step`]): the velocity-level complementarity problem with Coulomb
//!   friction, per candidate foot
//!   `0 ≤ λ_n ⊥ φ/dt + J_n v⁺ ≥ 0` (no penetration at the end of the step, to first order),
//!   `0 ≤ λ_± ⊥ β ± J_t v⁺ ≥ 0`, `0 ≤ β ⊥ μ λ_n - λ_+ - λ_- ≥ 0`, `λ_t = λ_+ - λ_-`:
//!   the planar friction cone is exactly the two directions ±x, β is the sliding speed.
//!   Solved by Lemke's method ([`super::lcp`]) and checked: complementarity, signs, the
//!   cone, and friction opposing the slip, refused if off by more than the tolerances.
//!   Impacts are plastic (no restitution), as in the time-stepping literature.
//! - **penalty** ([`penalty_step`]): an explicit one-sided spring-damper in the gap,
//!   `F_n = max(0, -k φ - c φ̇)` for φ < 0 (zero otherwise), and regularised Coulomb
//!   friction `F_t = -clamp(b·ẋ_foot, -μ F_n, μ F_n)` (viscous, saturated at the cone; the
//!   model of Warp's semi-implicit integrator), read at the start of the step:
//!   `λ = dt·F`.
//!
//! Each step also classifies every foot (separated / sticking / sliding forward /
//! sliding backward) from its impulse, and keeps what the forward-mode tangent of the step
//! needs ([`propagate_tangent`]): for the penalty law the derivative of the branch taken;
//! for the rigid law the derivative of the LCP solution at its active set (the equality
//! constraints of the contacts that push, sticking or sliding; Werling et al., RSS 2021).

use super::lcp::{self, LcpResiduals};
use super::model::{
    arr, crba, dual_arr, foot_jacobian, rnea, QuadState, Quadruped, COORDINATE_NAMES, NDOF, NFEET,
};
use ferromotion_core::error::{FerroError, Result};
use nalgebra::{Cholesky, DMatrix, DVector, Dyn};
use serde::{Deserialize, Serialize};

/// A generalised speed above this (m/s or rad/s; a hundred times anything this robot does)
/// means the step has gone unstable; the rollout stops with an error instead of a NaN.
pub const MAX_SPEED: f64 = 1e3;
/// A normal impulse at or below this (N·s; the weight's impulse per 1 ms step is 0.17 N·s)
/// counts as no contact.
pub const IMPULSE_TOL: f64 = 1e-12;
/// Refusal thresholds of the LCP check: impulses and velocities off by more than 1e-9
/// (N·s, m/s), or complementarity products above 1e-10 (J). Lemke's exact pivoting leaves
/// residuals near 1e-16 here; anything larger is a failed solve, not rounding.
pub const LCP_TOL: f64 = 1e-9;

/// The contact law of a step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "law", rename_all = "snake_case")]
pub enum ContactLaw {
    /// Velocity-level complementarity with Coulomb friction (Lemke).
    Rigid,
    /// Explicit spring-damper with regularised Coulomb friction.
    Penalty(PenaltyContact),
}

/// Parameters of the penalty law, per foot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PenaltyContact {
    /// Normal stiffness k, N/m.
    pub stiffness: f64,
    /// Normal damping c, N·s/m.
    pub damping: f64,
    /// Tangential (friction regularisation) damping b, N·s/m.
    pub tangential_damping: f64,
}

impl PenaltyContact {
    /// A law with `c = b = 2·ζ·sqrt(k·m_ref)`: damping ratio ζ of a mass `m_ref` (kg) on
    /// the spring. The same damper acts along the ground (friction regularisation), so one
    /// knob, k, sets both how hard the ground is and how firmly a foot sticks.
    pub fn from_ratio(stiffness: f64, damping_ratio: f64, reference_mass: f64) -> Result<Self> {
        ferromotion_core::error::positive("stiffness", stiffness)?;
        ferromotion_core::error::positive("reference_mass", reference_mass)?;
        if !(damping_ratio.is_finite() && damping_ratio >= 0.0) {
            return Err(FerroError::InvalidParameter {
                name: "damping_ratio",
                value: damping_ratio,
                limit: "must be finite and >= 0".into(),
            });
        }
        let c = 2.0 * damping_ratio * libm::sqrt(stiffness * reference_mass);
        Ok(PenaltyContact {
            stiffness,
            damping: c,
            tangential_damping: c,
        })
    }

    /// Check k > 0 and c, b >= 0, all finite.
    pub fn validate(&self) -> Result<()> {
        ferromotion_core::error::positive("stiffness", self.stiffness)?;
        for (name, x) in [
            ("damping", self.damping),
            ("tangential_damping", self.tangential_damping),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(FerroError::InvalidParameter {
                    name,
                    value: x,
                    limit: "must be finite and >= 0".into(),
                });
            }
        }
        Ok(())
    }
}

/// What one foot does in one step, read from its impulse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContactMode {
    /// No normal impulse.
    Separated,
    /// Pushing, friction strictly inside the cone (rigid: no slip; penalty: creeping).
    Sticking,
    /// Pushing, friction on the cone, foot sliding towards +x (friction along -x).
    SlidingForward,
    /// Pushing, friction on the cone, foot sliding towards -x.
    SlidingBackward,
}

/// One foot in one step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FootContact {
    /// Gap φ = z_foot at the start of the step, m (negative: penetration).
    pub gap: f64,
    /// Normal impulse λ_n, N·s (≥ 0).
    pub normal_impulse: f64,
    /// Tangential impulse λ_t along +x, N·s.
    pub tangential_impulse: f64,
    /// Foot z-velocity after the step, J_n v⁺, m/s.
    pub normal_velocity: f64,
    /// Foot x-velocity after the step, J_t v⁺, m/s.
    pub slip_velocity: f64,
    /// The mode the impulse puts the foot in.
    pub mode: ContactMode,
}

/// The check of one rigid step's LCP solution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LcpCheck {
    /// Candidate feet (the LCP has 4 unknowns per foot).
    pub contacts: usize,
    /// Lemke pivots.
    pub pivots: usize,
    /// Sign and complementarity residuals in LCP units (impulses N·s, velocities m/s,
    /// products J).
    pub residuals: LcpResiduals,
    /// max over feet of |λ_t| - μ λ_n, clipped at 0, N·s.
    pub cone_violation: f64,
    /// max over sliding feet of λ_t·ẋ_foot⁺ (friction must oppose the slip), clipped at 0, J.
    pub dissipation_violation: f64,
    /// max |ẋ_foot⁺| over sticking feet, m/s.
    pub stick_slip: f64,
    /// max over pushing feet of |φ/dt + ż_foot⁺| (the normal constraint's residual), m/s.
    pub normal_residual: f64,
}

impl LcpCheck {
    /// The largest residual, each in its own unit (the refusal test uses it).
    pub fn worst(&self) -> f64 {
        [
            self.residuals.z_negativity,
            self.residuals.w_negativity,
            self.residuals.complementarity,
            self.cone_violation,
            self.dissipation_violation,
            self.stick_slip,
            self.normal_residual,
        ]
        .into_iter()
        .fold(0.0, f64::max)
    }
}

/// The branch a candidate foot's impulse took (what the tangent differentiates).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Branch {
    Off,
    Stick,
    /// Friction on the cone: λ_t = s·μ·λ_n.
    Slide(f64),
}

/// What the tangent of the step needs, kept from the forward step.
#[derive(Debug, Clone)]
pub(crate) struct Linearisation {
    chol: Cholesky<f64, Dyn>,
    /// M⁻¹(τ - h).
    acc: DVector<f64>,
    /// M⁻¹(J_nᵀλ_n + J_tᵀλ_t).
    u: DVector<f64>,
    v_plus: DVector<f64>,
    cand: Vec<usize>,
    jn: DMatrix<f64>,
    jt: DMatrix<f64>,
    lam_n: Vec<f64>,
    lam_t: Vec<f64>,
    branch: Vec<Branch>,
}

/// The outcome of one step.
#[derive(Debug, Clone)]
pub struct Step {
    /// State at t + dt.
    pub state: QuadState,
    /// Each foot's gap, impulse, post-step velocity and mode (FL, FR, HL, HR).
    pub feet: [FootContact; NFEET],
    /// Rigid law with at least one candidate foot: the LCP check.
    pub lcp: Option<LcpCheck>,
    /// Work of the contact impulses in this step, `(Jᵀλ)·(v_free + v⁺)/2`, J (exact for the
    /// velocity jump; negative = dissipated).
    pub contact_work: f64,
    pub(crate) lin: Linearisation,
}

impl Step {
    /// `M(q)⁻¹ b` with the mass matrix at the step's start (its own factorisation).
    pub(crate) fn mass_solve(&self, b: &DVector<f64>) -> DVector<f64> {
        self.lin.chol.solve(b)
    }
}

/// Quantities shared by both laws: free velocity, candidates and their Jacobian rows.
struct Prepared {
    chol: Cholesky<f64, Dyn>,
    acc: DVector<f64>,
    v_free: DVector<f64>,
    gaps: [f64; NFEET],
    cand: Vec<usize>,
    jn: DMatrix<f64>,
    jt: DMatrix<f64>,
}

fn prepare(robot: &Quadruped, x: &QuadState, dt: f64) -> Result<Prepared> {
    let q = arr(&x.q);
    let kin = robot.kin(&q);
    let m = crba(&kin);
    let m = DMatrix::from_fn(NDOF, NDOF, |i, j| m[i][j]);
    let chol = Cholesky::new(m).ok_or_else(|| FerroError::NonFinite {
        what: "mass matrix",
        detail: format!("M(q) is not positive definite at t = {} s", x.t),
    })?;
    let h = rnea(&kin, &arr(&x.v), &[0.0; NDOF], robot.gravity);
    let tau = robot.control(x.t, &x.q, &x.v);
    let acc = chol.solve(&(tau - DVector::from_row_slice(&h)));
    let v_free = &x.v + dt * &acc;
    let gaps = [
        kin.foot[0][1],
        kin.foot[1][1],
        kin.foot[2][1],
        kin.foot[3][1],
    ];
    let cand: Vec<usize> = (0..NFEET)
        .filter(|&i| gaps[i] < robot.activation_distance)
        .collect();
    let mut jn = DMatrix::zeros(cand.len(), NDOF);
    let mut jt = DMatrix::zeros(cand.len(), NDOF);
    for (r, &leg) in cand.iter().enumerate() {
        let (n, t) = foot_jacobian(&kin, leg);
        for j in 0..NDOF {
            jn[(r, j)] = n[j];
            jt[(r, j)] = t[j];
        }
    }
    Ok(Prepared {
        chol,
        acc,
        v_free,
        gaps,
        cand,
        jn,
        jt,
    })
}

fn mode_of(branch: Branch) -> ContactMode {
    match branch {
        Branch::Off => ContactMode::Separated,
        Branch::Stick => ContactMode::Sticking,
        // Friction along -x (s < 0) opposes a foot sliding forward.
        Branch::Slide(s) if s < 0.0 => ContactMode::SlidingForward,
        Branch::Slide(_) => ContactMode::SlidingBackward,
    }
}

/// Apply the impulses, advance the state and assemble the step record.
fn finish(
    x: &QuadState,
    dt: f64,
    p: Prepared,
    lam_n: Vec<f64>,
    lam_t: Vec<f64>,
    branch: Vec<Branch>,
    lcp: Option<LcpCheck>,
) -> Result<Step> {
    let gen = p.jn.tr_mul(&DVector::from_column_slice(&lam_n))
        + p.jt.tr_mul(&DVector::from_column_slice(&lam_t));
    let u = p.chol.solve(&gen);
    let v_plus = &p.v_free + &u;
    if let Some(i) = v_plus.iter().position(|c| !(c.abs() <= MAX_SPEED)) {
        return Err(FerroError::Unstable {
            t: x.t,
            detail: format!(
                "the velocity of {} (component {i}) reached {:e} (beyond {MAX_SPEED:e} m/s or rad/s) in the step from t = {} s: the step is unstable",
                COORDINATE_NAMES[i], v_plus[i], x.t
            ),
        });
    }
    let contact_work = gen.dot(&(&p.v_free + &v_plus)) * 0.5;
    let mut feet = [FootContact {
        gap: 0.0,
        normal_impulse: 0.0,
        tangential_impulse: 0.0,
        normal_velocity: 0.0,
        slip_velocity: 0.0,
        mode: ContactMode::Separated,
    }; NFEET];
    for (leg, f) in feet.iter_mut().enumerate() {
        f.gap = p.gaps[leg];
    }
    let vn = &p.jn * &v_plus;
    let vt = &p.jt * &v_plus;
    for (r, &leg) in p.cand.iter().enumerate() {
        feet[leg].normal_impulse = lam_n[r];
        feet[leg].tangential_impulse = lam_t[r];
        feet[leg].normal_velocity = vn[r];
        feet[leg].slip_velocity = vt[r];
        feet[leg].mode = mode_of(branch[r]);
    }
    let state = QuadState {
        t: x.t + dt,
        q: &x.q + dt * &v_plus,
        v: v_plus.clone(),
    };
    Ok(Step {
        state,
        feet,
        lcp,
        contact_work,
        lin: Linearisation {
            chol: p.chol,
            acc: p.acc,
            u,
            v_plus,
            cand: p.cand,
            jn: p.jn,
            jt: p.jt,
            lam_n,
            lam_t,
            branch,
        },
    })
}

fn check_inputs(robot: &Quadruped, x: &QuadState, dt: f64) -> Result<()> {
    robot.validate()?;
    x.validate()?;
    ferromotion_core::error::positive("dt", dt)?;
    Ok(())
}

/// One step with the rigid (complementarity) contact law. See the module docs.
///
/// Errors: invalid robot, state or dt; Lemke's method failing or its checked solution off
/// by more than [`LCP_TOL`] (reported as `ContactSolveFailed`); a
/// velocity beyond [`MAX_SPEED`].
pub fn rigid_step(robot: &Quadruped, x: &QuadState, dt: f64) -> Result<Step> {
    check_inputs(robot, x, dt)?;
    let p = prepare(robot, x, dt)?;
    let nc = p.cand.len();
    if nc == 0 {
        return finish(x, dt, p, vec![], vec![], vec![], None);
    }
    let mu = robot.friction;
    // Delassus blocks W = J M⁻¹ Jᵀ (1/kg), J = [J_n; J_t].
    let mut jall = DMatrix::zeros(2 * nc, NDOF);
    jall.rows_mut(0, nc).copy_from(&p.jn);
    jall.rows_mut(nc, nc).copy_from(&p.jt);
    let minv_jt = p.chol.solve(&jall.transpose());
    let w = matmul(&jall, &minv_jt);
    let n4 = 4 * nc;
    let mut a = DMatrix::zeros(n4, n4);
    let mut b = DVector::zeros(n4);
    let jv_n = &p.jn * &p.v_free;
    let jv_t = &p.jt * &p.v_free;
    for i in 0..nc {
        for j in 0..nc {
            let (wnn, wnt) = (w[(i, j)], w[(i, nc + j)]);
            let (wtn, wtt) = (w[(nc + i, j)], w[(nc + i, nc + j)]);
            // Rows: λ_n (normal velocity), λ_+ (β + ẋ), λ_- (β - ẋ); columns λ_n, λ_+, λ_-.
            a[(i, j)] = wnn;
            a[(i, nc + j)] = wnt;
            a[(i, 2 * nc + j)] = -wnt;
            a[(nc + i, j)] = wtn;
            a[(nc + i, nc + j)] = wtt;
            a[(nc + i, 2 * nc + j)] = -wtt;
            a[(2 * nc + i, j)] = -wtn;
            a[(2 * nc + i, nc + j)] = -wtt;
            a[(2 * nc + i, 2 * nc + j)] = wtt;
        }
        a[(nc + i, 3 * nc + i)] = 1.0;
        a[(2 * nc + i, 3 * nc + i)] = 1.0;
        a[(3 * nc + i, i)] = mu;
        a[(3 * nc + i, nc + i)] = -1.0;
        a[(3 * nc + i, 2 * nc + i)] = -1.0;
        b[i] = p.gaps[p.cand[i]] / dt + jv_n[i];
        b[nc + i] = jv_t[i];
        b[2 * nc + i] = -jv_t[i];
    }
    let sol = lcp::lemke(&a, &b, 50 * n4).ok_or_else(|| FerroError::ContactSolveFailed {
        t: x.t,
        detail: format!(
            "Lemke's method ended on a ray or hit its pivot cap with {nc} candidate feet at t = {} s",
            x.t
        ),
    })?;
    let residuals = lcp::residuals(&a, &b, &sol.z);
    let mut lam_n = vec![0.0; nc];
    let mut lam_t = vec![0.0; nc];
    let mut branch = vec![Branch::Off; nc];
    for i in 0..nc {
        lam_n[i] = sol.z[i];
        lam_t[i] = sol.z[nc + i] - sol.z[2 * nc + i];
        // Sliding is the cone constraint μλ_n - λ_+ - λ_- ≥ 0 being active (nonbasic in
        // Lemke's final basis, so exactly zero); a tolerance on |λ_t|/μλ_n would misread
        // feet whose normal impulse is 1e-7 of the others'.
        branch[i] = if lam_n[i] <= IMPULSE_TOL {
            Branch::Off
        } else if sol.w[3 * nc + i] == 0.0 && lam_t[i] != 0.0 {
            Branch::Slide(lam_t[i].signum())
        } else {
            Branch::Stick
        };
    }
    let pivots = sol.pivots;
    let mut step = finish(x, dt, p, lam_n, lam_t, branch, None)?;
    let mut check = LcpCheck {
        contacts: nc,
        pivots,
        residuals,
        cone_violation: 0.0,
        dissipation_violation: 0.0,
        stick_slip: 0.0,
        normal_residual: 0.0,
    };
    for (r, &leg) in step.lin.cand.iter().enumerate() {
        let f = &step.feet[leg];
        check.cone_violation = check
            .cone_violation
            .max(f.tangential_impulse.abs() - mu * f.normal_impulse);
        match step.lin.branch[r] {
            Branch::Off => {}
            Branch::Stick => {
                check.stick_slip = check.stick_slip.max(f.slip_velocity.abs());
            }
            Branch::Slide(_) => {
                check.dissipation_violation = check
                    .dissipation_violation
                    .max(f.tangential_impulse * f.slip_velocity);
            }
        }
        if step.lin.branch[r] != Branch::Off {
            check.normal_residual = check
                .normal_residual
                .max((f.gap / dt + f.normal_velocity).abs());
        }
    }
    if check.worst() > LCP_TOL || check.residuals.complementarity > 0.1 * LCP_TOL {
        return Err(FerroError::ContactSolveFailed {
            t: x.t,
            detail: format!(
                "the LCP solution at t = {} s fails its check: worst residual {:e} (tolerance {LCP_TOL:e}), complementarity {:e} J",
                x.t,
                check.worst(),
                check.residuals.complementarity
            ),
        });
    }
    step.lcp = Some(check);
    Ok(step)
}

/// One step with the penalty contact law. See the module docs.
///
/// Errors: invalid robot, law, state or dt; a velocity beyond [`MAX_SPEED`] (the explicit
/// spring-damper is unstable when k·dt²/m_foot or c·dt/m_foot is too large for the foot's
/// effective mass m_foot).
pub fn penalty_step(
    robot: &Quadruped,
    law: &PenaltyContact,
    x: &QuadState,
    dt: f64,
) -> Result<Step> {
    penalty_step_on(robot, law, x, dt, None)
}

/// The penalty step with every foot's branch either read from the state (`forced` None:
/// [`penalty_step`]) or imposed (`forced`: the event-located rollout, whose branch after a
/// located switch is the one on the far side of it, whatever the rounding of the state
/// says). An imposed pushing foot gets `F_n = -k φ - c φ̇` and the friction of its mode
/// even where rounding puts that force a few ulps below zero; an imposed separated foot
/// gets nothing. With `forced` equal to the branches the state gives, the arithmetic is
/// [`penalty_step`]'s, bit for bit.
pub(crate) fn penalty_step_on(
    robot: &Quadruped,
    law: &PenaltyContact,
    x: &QuadState,
    dt: f64,
    forced: Option<&[ContactMode; NFEET]>,
) -> Result<Step> {
    check_inputs(robot, x, dt)?;
    law.validate()?;
    let p = prepare(robot, x, dt)?;
    let nc = p.cand.len();
    let mu = robot.friction;
    let vn = &p.jn * &x.v;
    let vt = &p.jt * &x.v;
    let mut lam_n = vec![0.0; nc];
    let mut lam_t = vec![0.0; nc];
    let mut branch = vec![Branch::Off; nc];
    for i in 0..nc {
        let gap = p.gaps[p.cand[i]];
        let fn_ = match forced {
            None if gap < 0.0 => -law.stiffness * gap - law.damping * vn[i],
            None => 0.0,
            Some(m) if m[p.cand[i]] == ContactMode::Separated => 0.0,
            Some(_) => -law.stiffness * gap - law.damping * vn[i],
        };
        if (forced.is_none() && fn_ <= 0.0) || fn_ == 0.0 {
            continue;
        }
        lam_n[i] = dt * fn_;
        let ft = -law.tangential_damping * vt[i];
        let slide = match forced {
            None => (ft.abs() > mu * fn_).then(|| ft.signum()),
            Some(m) => match m[p.cand[i]] {
                ContactMode::SlidingForward => Some(-1.0),
                ContactMode::SlidingBackward => Some(1.0),
                _ => None,
            },
        };
        if let Some(s) = slide {
            branch[i] = Branch::Slide(s);
            lam_t[i] = s * mu * lam_n[i];
        } else {
            branch[i] = Branch::Stick;
            lam_t[i] = dt * ft;
        }
    }
    finish(x, dt, p, lam_n, lam_t, branch, None)
}

/// One step with either law (the rigid arm calls [`rigid_step`] itself).
pub fn step(robot: &Quadruped, law: &ContactLaw, x: &QuadState, dt: f64) -> Result<Step> {
    match law {
        ContactLaw::Rigid => rigid_step(robot, x, dt),
        ContactLaw::Penalty(p) => penalty_step(robot, p, x, dt),
    }
}

/// Forward-mode tangent columns: `dq`, `dv` (11 × p each) and the derivative of the PD
/// stiffness `kp` per column (a parameter, constant along the rollout).
#[derive(Debug, Clone, PartialEq)]
pub struct Tangent {
    /// d q / d(inputs), 11 × p.
    pub dq: DMatrix<f64>,
    /// d v / d(inputs), 11 × p.
    pub dv: DMatrix<f64>,
    /// d kp / d(inputs), p.
    pub dkp: Vec<f64>,
}

impl Tangent {
    /// The tangent at t = 0 with respect to the three inputs: the body height z0 (q[1]),
    /// the forward speed xdot0 (v[0]) and the gain kp.
    pub fn seed() -> Tangent {
        let mut dq = DMatrix::zeros(NDOF, 3);
        let mut dv = DMatrix::zeros(NDOF, 3);
        dq[(1, 0)] = 1.0;
        dv[(0, 1)] = 1.0;
        Tangent {
            dq,
            dv,
            dkp: vec![0.0, 0.0, 1.0],
        }
    }
}

/// Push the tangent through one step already taken (`x` before, `step` its outcome).
///
/// Penalty: the derivative of the branch each foot took (spring-damper on or off,
/// friction viscous or saturated) — what an autodiff framework computes. Rigid: the
/// derivative of the LCP solution with its active set frozen: for every pushing foot
/// `φ/dt + J_n v⁺ = 0`, for every sticking foot `J_t v⁺ = 0`, a sliding foot's impulse
/// direction `J_n + s μ J_t`; differentiating `G v⁺ + b = 0` gives the impulse change
/// `(G M⁻¹ Hᵀ) dΛ = -(dG v⁺ + db + G·(dv_free + M⁻¹(dJᵀλ - dM u)))`.
pub fn propagate_tangent(
    robot: &Quadruped,
    law: &ContactLaw,
    x: &QuadState,
    step: &Step,
    dt: f64,
    tan: &mut Tangent,
) -> Result<()> {
    let lin = &step.lin;
    let nc = lin.cand.len();
    let mu = robot.friction;
    let (qr, _) = robot.reference(x.t);
    // Rigid: the active constraints G (rows) and impulse directions H (rows), once per step.
    let mut g_rows: Vec<DVector<f64>> = vec![];
    let mut h_rows: Vec<DVector<f64>> = vec![];
    // (candidate index, is_normal_row)
    let mut rows: Vec<(usize, bool)> = vec![];
    if matches!(law, ContactLaw::Rigid) {
        for r in 0..nc {
            let jn = lin.jn.row(r).transpose();
            let jt = lin.jt.row(r).transpose();
            match lin.branch[r] {
                Branch::Off => {}
                Branch::Stick => {
                    g_rows.push(jn.clone());
                    h_rows.push(jn);
                    rows.push((r, true));
                    g_rows.push(jt.clone());
                    h_rows.push(jt);
                    rows.push((r, false));
                }
                Branch::Slide(s) => {
                    g_rows.push(jn.clone());
                    h_rows.push(jn + s * mu * jt);
                    rows.push((r, true));
                }
            }
        }
    }
    let na = rows.len();
    let (minv_h, act_lu) = if na > 0 {
        let h = DMatrix::from_columns(&h_rows);
        let g = DMatrix::from_columns(&g_rows).transpose();
        let minv_h = lin.chol.solve(&h);
        let a_act = matmul(&g, &minv_h);
        (Some((g, minv_h)), Some(a_act.lu()))
    } else {
        (None, None)
    };
    let p = tan.dq.ncols();
    for c in 0..p {
        let dq = tan.dq.column(c).clone_owned();
        let dv = tan.dv.column(c).clone_owned();
        let dkp = tan.dkp[c];
        let kd = robot.kin(&dual_arr(&x.q, dq.as_slice()));
        let md = crba(&kd);
        let dm = DMatrix::from_fn(NDOF, NDOF, |i, j| md[i][j].d);
        let hd = rnea(
            &kd,
            &dual_arr(&x.v, dv.as_slice()),
            &[super::model::Dual { v: 0.0, d: 0.0 }; NDOF],
            robot.gravity,
        );
        let mut rhs = DVector::from_fn(NDOF, |i, _| -hd[i].d);
        for j in 0..8 {
            rhs[3 + j] += dkp * (qr[j] - x.q[3 + j]) - robot.kp * dq[3 + j] - robot.kd * dv[3 + j];
        }
        rhs -= &dm * &lin.acc;
        let dv_free = &dv + dt * lin.chol.solve(&rhs);
        // dJ rows of the candidates, and the gap derivatives dφ = J_n dq.
        let mut djn = DMatrix::zeros(nc, NDOF);
        let mut djt = DMatrix::zeros(nc, NDOF);
        let mut dgap = vec![0.0; nc];
        for (r, &leg) in lin.cand.iter().enumerate() {
            let (n, t) = foot_jacobian(&kd, leg);
            for j in 0..NDOF {
                djn[(r, j)] = n[j].d;
                djt[(r, j)] = t[j].d;
            }
            dgap[r] = kd.foot[leg][1].d;
        }
        let lam_n = DVector::from_column_slice(&lin.lam_n);
        let lam_t = DVector::from_column_slice(&lin.lam_t);
        // dJᵀλ - dM u: the part of the impulse change that does not need dλ.
        let known = djn.tr_mul(&lam_n) + djt.tr_mul(&lam_t) - &dm * &lin.u;
        let y = &dv_free + lin.chol.solve(&known);
        let dv_plus = match law {
            ContactLaw::Penalty(pc) => {
                let mut dgen = DVector::zeros(NDOF);
                let jv_dn = &djn * &x.v + &lin.jn * &dv;
                let jv_dt = &djt * &x.v + &lin.jt * &dv;
                for r in 0..nc {
                    let (dln, dlt) = match lin.branch[r] {
                        Branch::Off => (0.0, 0.0),
                        br => {
                            let dln = dt * (-pc.stiffness * dgap[r] - pc.damping * jv_dn[r]);
                            let dlt = match br {
                                Branch::Slide(s) => s * mu * dln,
                                _ => -dt * pc.tangential_damping * jv_dt[r],
                            };
                            (dln, dlt)
                        }
                    };
                    dgen += lin.jn.row(r).transpose() * dln + lin.jt.row(r).transpose() * dlt;
                }
                y + lin.chol.solve(&dgen)
            }
            ContactLaw::Rigid => match (&minv_h, &act_lu) {
                (Some((g, minv_h)), Some(lu)) => {
                    let mut e = g * &y;
                    for (k, &(r, normal)) in rows.iter().enumerate() {
                        let dg = if normal { djn.row(r) } else { djt.row(r) };
                        e[k] += dg.dot(&lin.v_plus.transpose());
                        if normal {
                            e[k] += dgap[r] / dt;
                        }
                    }
                    let dlam = lu.solve(&(-e)).ok_or_else(|| FerroError::NonFinite {
                        what: "rigid step tangent",
                        detail: format!(
                            "the active-set matrix G M⁻¹ Hᵀ ({na} constraints) is singular at t = {} s",
                            x.t
                        ),
                    })?;
                    y + minv_h * dlam
                }
                _ => y,
            },
        };
        let dq_plus = &dq + dt * &dv_plus;
        tan.dq.set_column(c, &dq_plus);
        tan.dv.set_column(c, &dv_plus);
    }
    Ok(())
}

/// A · B with a plain loop in a fixed order. nalgebra sends larger dynamic products to a
/// GEMM kernel that fuses multiply-adds on native CPUs but not in WebAssembly; this keeps
/// the two builds bit-identical (docs/model.md §11: the same inputs give the same bits everywhere).
fn matmul(a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
    let (n, m, p) = (a.nrows(), a.ncols(), b.ncols());
    let mut c = DMatrix::zeros(n, p);
    for j in 0..p {
        for i in 0..n {
            let mut sum = 0.0;
            for k in 0..m {
                sum += a[(i, k)] * b[(k, j)];
            }
            c[(i, j)] = sum;
        }
    }
    c
}
