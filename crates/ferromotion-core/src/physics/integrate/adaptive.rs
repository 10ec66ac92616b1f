//! Dormand–Prince 5(4) with error control and optional event location, and the
//! `tolerance` route built on it.
//!
//! Each step takes the 5th-order solution and estimates its error from the embedded
//! 4th-order one (Hairer, Nørsett & Wanner, *Solving ODEs I*, §II.5; `dopri5`). A step
//! is accepted when `sqrt(mean((err_i / (atol + rtol·max|x_i|))²)) <= 1`; the next step
//! is `h·clamp(0.9·err^(-1/5), 0.2, 10)` (no growth right after a rejection), the fifth
//! root taken by Newton steps from a bit-pattern guess (`inv_fifth_root`: cheaper than
//! `pow`, and `+ - * /` give the same bits natively and in WebAssembly). The last stage
//! of an accepted step is the first of the next (FSAL), so an accepted or rejected step
//! costs six right-hand-side evaluations; the initial step-size guess costs two.
//!
//! Without events the right-hand side is the push-only law with its kink and jump, and
//! error control alone has to cope with them. With events the rollout runs one smooth
//! mode at a time (free flight, or the linear spring-damper), watches the switching
//! function `psi = min(-y, -k·y - c·v)` (positive exactly where the push-only law pushes)
//! on the step's dense output, locates the switch, lands on it with a shortened step
//! and restarts in the other mode. Leaving y < 0 after the force has returned to zero
//! changes nothing in the law, so it is not an event. Most steps are far from a switch: a
//! bound on the dense output over the step rules them out with a few operations
//! (`locate_switch`); near one, the step is sampled and the switch located by secant
//! steps safeguarded by bisection (`refine_root`) to adjacent floating-point numbers.
//!
//! Each events-mode law is linear, `x' = A·x + b` with a constant `A` (free flight:
//! `[[0, 1], [0, 0]]`; the spring-damper: `[[0, 1], [-k/m, -c/m]]`), so one
//! Dormand–Prince step is a set of polynomials in `Z = h·A` applied to `k1 = f(x)`, and
//! Cayley–Hamilton reduces each to `alpha·I + beta·Z` (`step_polys`, `linear_step`): the
//! new state, the error estimate and the dense output cost a few dozen scalar operations
//! and one real evaluation (`k7`, FSAL) instead of six evaluations stage by stage (still
//! counted as six: `Stats::num_eval` counts the evaluations a step stands for). The
//! step's derivative is the method's stability polynomial,
//! `R(z) = 1 + z + z²/2 + z³/6 + z⁴/24 + z⁵/120 + z⁶/600`, so the forward sensitivities
//! cost two 2×2 products per step and no force evaluations.
//!
//! One file per concern: the laws and their switching function (`modes.rs`), one step
//! (`step.rs`), step-size control (`control.rs`), event location (`switch.rs`), the rollout
//! (`rollout.rs`) and the `tolerance` route with its options (`route.rs`).

mod control;
mod modes;
mod rollout;
mod route;
mod step;
mod switch;

use crate::error::{positive, FerroError, Result};
use crate::numeric::fd;
use crate::physics::contact::penalty::check_finite;
use crate::physics::model::{Drop, Penalty};
use crate::physics::state::{max_abs, Cost, Jacobian, RouteResult, State};

use super::{DEFAULT_MAX_STEPS, DEFAULT_RTOL};
pub use rollout::Dopri5;
pub use route::*;
pub use step::Stats;
