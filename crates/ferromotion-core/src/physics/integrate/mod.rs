//! Integrators of the penalty drop: a fixed step with a forward-mode tangent
//! ([`fixed`]), the same grid with the switches located ([`corrected`]), classical RK4 at a
//! fixed step ([`rk4`]) and Dormand–Prince 5(4) with error control ([`adaptive`]).

pub mod adaptive;
pub mod corrected;
pub mod fixed;
pub mod rk4;

/// Default cap on steps per rollout: dt = 1e-6 over 0.8 s (8e5 steps) must pass.
pub const DEFAULT_MAX_STEPS: u64 = 10_000_000;
