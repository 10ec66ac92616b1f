//! # ferromotion-core
//!
//! Is the gradient a differentiable simulator returns through a contact real? This crate
//! answers it on a contact with an exact answer: a point mass dropped from height h onto
//! the ground, bouncing before the final time T. It computes x(T) = (y, v) and its
//! Jacobian d x(T) / d x(0) by several routes and says how far each is from the truth:
//!
//! | route | how |
//! |---|---|
//! | [`exact`] | rigid impacts; flight maps composed with saltation matrices |
//! | [`fixed`] | push-only penalty contact on semi-implicit Euler; forward-mode tangent |
//! | [`tolerance`] | the same contact on Dormand–Prince 5(4); central differences of rollouts |
//! | [`flow`] | the exact derivative of the continuous penalty ODE, closed form per phase |
//!
//! Every number the browser lab and the Python package show is computed here; the
//! bindings only convert. Transcendental functions on result paths come from `libm`,
//! so native and WebAssembly builds agree bit for bit.
//!
//! ```
//! use ferromotion_core::{exact, fixed, Drop, ExactOptions, FixedOptions};
//! let drop = Drop::default();
//! let truth = exact(&drop, &ExactOptions::default()).unwrap();
//! let autodiff = fixed(&drop, 1e6, 1e-4, &FixedOptions::default()).unwrap();
//! // The rigid answer's dv(T)/dy0 is +3.61; the fixed-step tangent's has the wrong sign.
//! assert!(truth.jacobian[(1, 0)] > 0.0 && autodiff.jacobian[(1, 0)] < 0.0);
//! ```
#![warn(missing_docs)]
// `!(x >= limit)` is how this crate refuses NaN together with out-of-range values.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod check;
pub mod conformance;
pub mod defaults;
pub mod error;
pub mod experiments;
pub mod fit;
pub mod hybrid;
pub mod lab;
pub mod numeric;
pub mod physics;
pub mod systems;

// The flat API: every route, option and result by its name at the root. Modules are reached by
// their group only (`physics::contact`, `lab::sweep`, `check::examples`, `hybrid`).
pub use error::{FerroError, Result};
pub use experiments::budget::{equal_budget, equal_budget_timed, BudgetOptions, EqualBudget};
pub use lab::clock::Clock;
pub use lab::readout::{
    blame, compare, divergence_exponent, dt_refinement, Blame, Errors, Fit, Refinement,
};
pub use lab::sweep::{sweep, sweep_curve, Curve, Progress, Sweep, SweepOptions, SweepRow, Watch};
pub use lab::workbench::{Workbench, WorkbenchConfig, WorkbenchReadout};
pub use physics::contact::penalty::{flow, limit_restitution, realised_restitution, FlowOptions};
pub use physics::contact::rigid::{exact, time_of_impact_term, ExactOptions, DEFAULT_GRAZE_SPEED};
pub use physics::integrate::adaptive::{tolerance, JacobianMethod, ToleranceOptions};
pub use physics::integrate::corrected::{corrected, CorrectedOptions};
pub use physics::integrate::fixed::{fixed, FixedOptions};
pub use physics::integrate::rk4::{rk4, Rk4Options};
pub use physics::integrate::DEFAULT_MAX_STEPS;
pub use physics::model::{Drop, Penalty};
pub use physics::state::{Cost, Jacobian, RouteResult, State};
