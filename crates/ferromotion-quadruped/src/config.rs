//! The comparison's configuration and its checks (see [`super::law`] for what it measures).

use super::model::Quadruped;
use super::step::PenaltyContact;
use ferromotion_core::error::{positive, FerroError, Result};
use serde::{Deserialize, Serialize};

/// The Jacobian's inputs (columns): initial trunk height (m), initial forward speed (m/s),
/// PD stiffness (N·m/rad).
pub const INPUTS: [&str; 3] = ["z0", "xdot0", "kp"];
/// The Jacobian's outputs (rows): the trunk's final x (m), z (m), pitch (rad), ẋ (m/s),
/// ż (m/s), pitch rate (rad/s).
pub const OUTPUTS: [&str; 6] = ["x", "z", "pitch", "xdot", "zdot", "pitch_rate"];

/// Configuration of the comparison. Defaults: the default [`Quadruped`], one 0.5 s
/// period at dt = 1 ms (500 steps; the converged runs 50,000), stiffness 1e3..1e7 N/m per
/// foot, damping ratio 0.5 of a 0.2 kg reference mass, a landing from 1 cm at 0.3 m/s.
///
/// Why 0.2 kg: the mass that rides a foot's contact spring during an impact is the foot's
/// effective mass `1/(J_n M⁻¹ J_nᵀ)`, 0.16–0.24 kg here
/// ([`Quadruped::foot_effective_masses`]), not the trunk. Damping sized on half the robot
/// (8.6 kg) would make the foot 3.7× overdamped and the explicit damper unstable
/// (c·dt/m_foot > 2) from k = 1e4 N/m up at dt = 1 ms; with 0.2 kg the foot-level ratio
/// is the stated 0.5 and the law is stable up to about k = 1e5 N/m at that step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QuadrupedExperiment {
    /// The robot, its controller and its ground.
    pub robot: Quadruped,
    /// Fixed step, s.
    pub dt: f64,
    /// Horizon, s (a whole number of steps; default one gait period).
    pub t_final: f64,
    /// The converged runs use dt / refinement.
    pub refinement: u32,
    /// Penalty stiffness values, N/m per foot.
    pub stiffness: Vec<f64>,
    /// Damping ratio ζ of the penalty law (c = b = 2 ζ sqrt(k m_ref)).
    pub damping_ratio: f64,
    /// m_ref of the penalty damping, kg.
    pub reference_mass: f64,
    /// Initial foot clearance, m.
    pub clearance: f64,
    /// Initial forward trunk speed, m/s.
    pub speed: f64,
    /// The simulator-typical relative probe of `typical_probe_error`.
    pub typical_probe: f64,
    /// Agreement `|D(ε) - D(ε/2)|/|D(ε/2)|` a probe-stable column must reach.
    pub probe_tol: f64,
    /// Smallest relative probe tried before a column is declared not probe-stable.
    pub min_probe: f64,
    /// Also compute `converged_error` (about 20–60 rollouts at dt/refinement per law).
    pub converged_gradient: bool,
    /// Cap on the steps of one rollout.
    pub max_steps: u64,
}

impl Default for QuadrupedExperiment {
    fn default() -> Self {
        let robot = Quadruped::default();
        QuadrupedExperiment {
            robot,
            dt: 1e-3,
            t_final: robot.period,
            refinement: 100,
            stiffness: vec![1e3, 1e4, 1e5, 1e6, 1e7],
            damping_ratio: 0.5,
            reference_mass: 0.2,
            clearance: 0.01,
            speed: 0.3,
            typical_probe: 1e-4,
            probe_tol: 1e-6,
            min_probe: 1e-11,
            converged_gradient: false,
            max_steps: 10_000_000,
        }
    }
}

pub(super) fn steps_for(t_final: f64, dt: f64, max_steps: u64) -> Result<usize> {
    positive("dt", dt)?;
    positive("t_final", t_final)?;
    let ratio = t_final / dt;
    if ratio > max_steps as f64 {
        return Err(FerroError::TooManySteps {
            route: "quadruped",
            max_steps,
            detail: format!("T/dt = {ratio:e} steps would be needed"),
        });
    }
    let n = ratio.round();
    if n < 1.0 || ((n * dt - t_final) / t_final).abs() > 1e-9 {
        return Err(FerroError::StepDoesNotDivide { dt, t_final, ratio });
    }
    Ok(n as usize)
}

impl QuadrupedExperiment {
    /// Check the configuration.
    pub fn validate(&self) -> Result<()> {
        self.robot.validate()?;
        positive("dt", self.dt)?;
        positive("t_final", self.t_final)?;
        positive("refinement", self.refinement as f64)?;
        positive("reference_mass", self.reference_mass)?;
        positive("typical_probe", self.typical_probe)?;
        positive("probe_tol", self.probe_tol)?;
        positive("min_probe", self.min_probe)?;
        for &k in &self.stiffness {
            positive("stiffness", k)?;
        }
        let n = steps_for(self.t_final, self.dt, self.max_steps)?;
        let fine = n as f64 * self.refinement as f64;
        if fine > self.max_steps as f64 {
            return Err(FerroError::TooManySteps {
                route: "quadruped (converged run)",
                max_steps: self.max_steps,
                detail: format!("{fine:e} steps would be needed"),
            });
        }
        PenaltyContact::from_ratio(1.0, self.damping_ratio, self.reference_mass)?;
        self.robot.initial_state(self.clearance, self.speed)?;
        Ok(())
    }
}
