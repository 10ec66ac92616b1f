//! The numerical floor every other group builds on: central differences ([`fd`]),
//! least-squares fits ([`fit`]), Student's t distribution ([`dist`]), seeded random numbers
//! ([`rng`]), the SVD read as conditioning ([`svd`]) and rotations ([`so3`]). It names no
//! physics, lab, check or experiment module, so every group can use it without an import
//! pointing back up (tests/import_layers.rs).

pub mod dist;
pub mod fd;
pub mod fit;
pub mod rng;
pub mod so3;
pub mod svd;
