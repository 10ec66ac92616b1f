//! Systems with exact answers, one file each.

pub mod tumbling_cube;
