//! Experiments built on the physics and the checker: gradient descent through the drop
//! ([`descent`]) and the equal-budget comparison of the routes ([`budget`]). Library features
//! live in their own top-level groups: `hybrid` (hybrid_jacobian), `fit` (forward matching),
//! `conformance` (the fixtures as data).

pub mod budget;
pub mod descent;
pub mod two_contacts;
