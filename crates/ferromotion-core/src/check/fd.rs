//! Moved to [`crate::numeric::fd`] (the bottom layer, so physics can use it without importing
//! the checker); this path re-exports it while callers move over.

pub use crate::numeric::fd::*;
