//! Experiments built on the physics and the checker: gradient descent through the drop,
//! hybrid systems qualified with saltation matrices, and the planar quadruped.

pub mod descent;
pub mod hybrid;
pub mod quadruped;
