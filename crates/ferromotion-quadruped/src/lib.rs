//! The same question on a legged robot: a planar quadruped trotting on four frictional
//! feet, with a rigid (complementarity) and a penalty contact law, controlled to one
//! variable (issue #7, docs/model.md §8).
//!
//! # Model
//!
//! A floating trunk (x, z, pitch) and four hip–knee legs, 11 degrees of freedom, SI units
//! throughout (see [`model`] for the coordinates and the default masses: a 12 kg,
//! 0.6 m trunk and 0.2 m links, 17.2 kg in all):
//!
//! ```text
//! M(q) v̇ + h(q, v) = S τ + J_n(q)ᵀ f_n + J_t(q)ᵀ f_t
//! τ = kp (q_ref(t) - q_joints) + kd (q̇_ref(t) - v_joints)     (clocked trot, diagonal pairs)
//! 0 ≤ f_n ⊥ φ(q) ≥ 0,   |f_t| ≤ μ f_n, f_t opposing slip       (point feet, flat ground, μ = 0.8)
//! ```
//!
//! `M` comes from the composite-rigid-body algorithm and `h` from recursive Newton–Euler
//! (Featherstone 2008) in planar spatial vectors; `J_n`, `J_t` from the tree's kinematics.
//!
//! # One scheme, two laws
//!
//! [`step()`]: `v⁺ = v + dt M⁻¹(τ - h) + M⁻¹ Jᵀ λ`, `q⁺ = q + dt v⁺`, with the impulse λ from
//! either the velocity-level LCP with Coulomb friction solved by Lemke's method
//! ([`rigid_step`], Stewart & Trinkle 1996; Anitescu & Potra 1997) or an explicit one-sided
//! spring-damper with friction saturated at the cone ([`penalty_step`]). Everything else —
//! mass matrix, free velocity, Jacobians, activation rule, integrator — is the same code.
//!
//! # The comparison
//!
//! [`quadruped_experiment`] runs both laws over one gait period and reports, per law and
//! per penalty stiffness, forward fidelity (penetration, tangential violation, energy,
//! distance to the law's own dt/100 run) and gradient accuracy (the forward-mode tangent
//! against probe-stable central differences that keep the contact-mode sequence), with
//! the contact-mode changes counted per foot per step, and decides which law wins each
//! axis ([`verdict`]). The files: [`config`] (what is run), [`run`] (rollouts and the
//! central differences of whole rollouts), [`located`] (the penalty rollout with every
//! contact switch located inside its step, which the converged-in-dt reference
//! differences), [`law`] (one law's report, the measures' definitions), [`report`] (the report's structs), [`verdict`], and the text table.
//!
//! Its own crate over `ferromotion-core`'s public API (errors, the step cap, the central
//! quotient): the drop's core does not know it exists; both bindings compile it in.
//!
//! References: R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008;
//! D. E. Stewart, J. C. Trinkle, IJNME 39 (1996) 2673–2691; M. Anitescu, F. A. Potra,
//! Nonlinear Dynamics 14 (1997) 231–247; C. E. Lemke, Management Science 11 (1965) 681–689;
//! K. Werling et al., "Fast and feature-complete differentiable physics for articulated
//! rigid bodies with contact", RSS 2021 (differentiating the LCP at its active set).

#![warn(missing_docs)]
// `!(x >= limit)` is how this crate refuses NaN together with out-of-range values.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod config;
pub mod law;
pub mod lcp;
pub mod located;
pub mod model;
pub mod report;
pub mod run;
pub mod step;
mod table;
pub mod verdict;

pub use config::{QuadrupedExperiment, INPUTS, OUTPUTS};
pub use law::quadruped_experiment;
pub use located::{located_run, LocatedRun};
pub use model::{QuadState, Quadruped, FOOT_NAMES, NDOF, NFEET};
pub use report::{
    count_modes, event_sequence, Forward, Gradient, LawReport, LcpSummary, ModeCounts, ProbeColumn,
    Trajectory,
};
pub use run::rollout;
pub use step::{
    penalty_step, propagate_tangent, rigid_step, step, ContactLaw, ContactMode, FootContact,
    LcpCheck, PenaltyContact, Step, Tangent,
};
pub use verdict::{
    verdict, ForwardVerdict, MeasureVerdict, Outcome, QuadrupedReport, Verdict, FAR_FACTOR,
};
