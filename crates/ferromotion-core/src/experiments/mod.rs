//! Experiments built on the physics and the checker: gradient descent through the drop,
//! hybrid systems qualified with saltation matrices, the equal-budget comparison of the routes
//! ([`budget`]), and forward matching: fitting the drop to measured kinematics ([`fit`]).

pub mod budget;
pub mod conformance;
pub mod descent;
pub mod fit;
pub mod hybrid;
