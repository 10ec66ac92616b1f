//! Contact laws: the rigid impact (the reference) and the push-only penalty spring-damper.

pub mod penalty;
pub mod rigid;
