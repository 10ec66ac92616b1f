//! Experiments built on the physics and the checker: gradient descent through the drop,
//! hybrid systems qualified with saltation matrices, and the
//! equal-budget comparison of the routes ([`budget`]).

pub mod budget;
pub mod descent;
pub mod hybrid;
