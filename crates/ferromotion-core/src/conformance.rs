//! Conformance fixtures: contact problems with an exact rigid answer, as data any engine's
//! CI can run, and the verdict on an engine's x(T) and J = dx(T)/dx(0) against them.
//!
//! Two fixtures, both frictionless point contact whose stiff limit has restitution
//! `e = limit_restitution(zeta)` (the push-only penalty law's, independent of k):
//!
//! - `drop`: the default [`Drop`] (1 m from rest, T = 0.8 s); x = (y, v); the answer is
//!   [`crate::exact`]'s.
//! - `slope`: a ball above a plane inclined by `angle` through the origin, x = (p_x, p_z,
//!   v_x, v_z) (p the contact point, the ball's centre minus r·n), guard n·p, reset
//!   v+ = v- - (1+e)(n·v-)·n. Its answer [`slope_exact`] is closed form: parabolic flight,
//!   each impact time the root of a quadratic, the Jacobian composed from flight matrices
//!   and saltation matrices `Xi = DR + (f+ - DR·f-)·∇gᵀ/(∇gᵀ·f-)` (the reset and its
//!   Jacobian are [`SlopeBall`]'s). Tangential position at T depends on the impact time,
//!   so the off-diagonal blocks of J are where an engine's contact normal and tangent show.
//!
//! The JSON document ([`Fixture`], schema [`SCHEMA`]) carries everything needed to judge an
//! engine without this crate: initial state, parameters, horizon, exact x(T) and J, the
//! tolerances and what each verdict means. [`conformance`] is the verdict this crate gives.
//!
//! One file per concern: the document's types (`document.rs`), reading and validating it
//! (`read.rs`), the shipped fixtures (`build.rs`), the verdict (`judge.rs`, `nearest.rs`).

mod build;
mod document;
mod judge;
mod nearest;
mod read;

use std::collections::BTreeMap;

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

use crate::error::{FerroError, Result};
use crate::lab::readout::{Sign, FAR_OFF};
use crate::physics::contact::penalty::limit_restitution;
use crate::physics::contact::rigid::{exact_with_impacts, ExactOptions};
use crate::physics::model::Drop;
use crate::systems::tumbling_cube::{tumbling_cube, TumblingCube, CUBE_STATE_NAMES, CUBE_UNITS};
use crate::systems::{slope_exact, SlopeBall};

pub use build::*;
pub use document::*;
pub use judge::*;
pub use nearest::{Nearest, AVERAGE_MARGIN};
pub use read::*;

/// The fixture format's first version: the drop and the slope are written in it.
pub const SCHEMA: &str = "ferromotion.fixture/1";
/// The second version: a fixture of a system defined in [`crate::systems`] (its kind and
/// parameters in `system`), whose exact answer may be pieces (no Jacobian) or several
/// outcomes (set-valued). A reader takes both and refuses any other.
pub const SCHEMA_V2: &str = "ferromotion.fixture/2";
/// Relative tolerance on x(T) (max|x - x*| / max|x*|) for `conforms`.
pub const STATE_RTOL: f64 = 1e-2;
/// Relative tolerance on J (max|J - J*| / max|J*|) for `conforms`.
pub const JACOBIAN_RTOL: f64 = 5e-2;

/// The slope fixture's default: the plane's inclination, rad.
pub const SLOPE_ANGLE: f64 = 0.3;
/// The slope fixture's default initial state (p_x, p_z, v_x, v_z): 1 m above the origin,
/// moving 0.5 m/s along x; one impact (t = 0.436 s) before T = 0.8 s.
pub const SLOPE_X0: [f64; 4] = [0.0, 1.0, 0.5, 0.0];
