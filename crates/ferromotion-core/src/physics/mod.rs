//! The physics: the drop and its contact laws, the integrators, the state and its Jacobian.
//!
//! Layered bottom-up: [`state`] and [`jacobian`] know nothing of contact; [`flight`] is free flight;
//! [`model`] holds the drop; [`contact`] the two laws (rigid impact, push-only penalty);
//! [`integrate`] the steppers that carry the penalty law through time.

pub mod contact;
pub mod flight;
pub mod integrate;
pub mod jacobian;
pub mod model;
pub mod state;
