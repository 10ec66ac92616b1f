//! The numerical floor every other group builds on: central differences ([`fd`]),
//! least-squares fits ([`fit`]), Student's t distribution ([`dist`]), seeded random numbers
//! ([`rng`]) and the SVD read as conditioning ([`svd`]). It names no physics, lab, check or
//! experiment module, so every group can use it without an import pointing back up
//! (tests/import_layers.rs).

pub mod dist;
pub mod fd;
pub mod fit;
pub mod rng;
pub mod svd;
