//! Hybrid systems defined once: each file here is one system — its state's names and units,
//! its flow, guards and resets (the [`HybridSystem`] trait), its parameters with their
//! ranges (checked by [`Spec::check`], refusals naming the parameter), and its exact answer
//! where it has one (a closed-form flight between events, [`ClosedForm`], composed through
//! the events by [`crate::hybrid::exact_events`]). `hybrid_jacobian`, the conformance fixtures
//! and the Python package (`fm.systems.*`, built from [`catalogue`]) read these definitions;
//! nothing else restates them.
//!
//! Adding a system: its file here (the struct, its [`Spec`], [`HybridSystem`] and
//! [`Declared`]), one line in [`REGISTRY`] (and its `mod`), its tests, and its paragraph in
//! `docs/systems.md`. A ball bouncing off fixed surfaces implements [`Ball`] instead of
//! [`HybridSystem`] and [`ClosedForm`]: its flight and reflection are [`ballistic`]'s.

pub mod cylinder;
pub mod drop;
pub mod rod;
pub mod slope;
pub mod switched;
pub mod tumbling_cube;
pub mod vgroove;
pub mod vgroove_soft;
pub mod warm;
pub mod wheel;

pub use cylinder::Cylinder;
pub use drop::{drop_at_impact_speed, BouncingDrop, DropAtSpeed};
pub use rod::{PenaltyRod, RigidRod};
pub use slope::{slope_exact, SlopeBall};
pub use switched::SwitchedField;
pub use vgroove::VGroove;
pub use warm::WarmStartedDrop;
pub use wheel::RimlessWheel;

pub mod ballistic;
pub mod registry;
pub mod spec;

pub use crate::hybrid::exact::ClosedForm;
pub use ballistic::{
    bounce, bounce_jacobian, falling_root, fly, fly_jacobian, gravity_rhs, Ball, BALL_STATE,
    BALL_UNITS,
};
pub use registry::{build, catalogue, REGISTRY};
pub(crate) use spec::exact_from_closed_form;
pub use spec::{
    closed_form_exact, Declared, Entry, Fallback, Param, Spec, ANY, GRAVITY, LIMIT_RESTITUTION,
    POSITIVE, RESTITUTION,
};
