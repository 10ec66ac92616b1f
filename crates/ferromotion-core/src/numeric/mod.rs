//! The numerical floor every other group builds on: central differences ([`fd`]) and
//! least-squares fits ([`fit`]). It names no physics, lab, check or experiment module, so
//! every group can use it without an import pointing back up (tests/import_layers.rs).

pub mod fd;
pub mod fit;
