//! Gradient checks with honest verdicts, for any scalar objective. `docs/checking.md` states
//! the rules for a reader; this is where they live (every binding calls this module).
//!
//! A claimed gradient g of f at x is checked along seeded random unit directions plus the
//! coordinate axes (each scaled by the optional per-coordinate `scale`). Along each
//! direction p the claim is `g·p` and the measurement is a central difference
//! `D(ε) = (f(x + ε·p) - f(x - ε·p)) / (2ε)`, taken on a walk over a ladder of probe sizes:
//!
//! 1. **Noise first.** f's evaluation noise σ is measured once, on two tiny stencils
//!    ([`noise`]): round-off, float32 arithmetic or a solver's tolerance, in f's units.
//! 2. **A walk, not a sweep.** Each direction starts near the probe size where truncation
//!    and round-off balance for that σ and walks down the ladder until the smallest probes
//!    see only noise; up, while a larger probe would resolve the derivative better. It
//!    stops as soon as the verdict is resolved (`full_sweep` walks the whole ladder).
//! 3. **Smoothness is measured** ([`curve`]): three neighbouring probes must fit the ε²
//!    model within noise; a kink or jump inside ±ε breaks it. Only the contiguous run of
//!    probes measured smooth from the bottom of the walk is used; its top is reported as
//!    `smooth_below`, and nothing larger is claimed smooth. When the objective reports its
//!    events, a probe whose two sides see different event sequences is event-crossing.
//! 4. **Scale-honest verdicts.** At the best probe the discrepancy `|g·p - D|` is reported
//!    absolute and relative to |D|, beside the differences' own resolution E (round-off
//!    2σ/ε plus the truncation read from the next probe):
//!    - `verified`: |D| is resolvable (> 3E) and both the discrepancy and E are within
//!      `tol`·|D|: the claim is right to relative accuracy `tol`;
//!    - `verified-within-noise`: the discrepancy is within the floor 3E but E exceeds
//!      `tol`·|D|: as right as f's evaluation noise lets anyone tell (the noise, the floor
//!      and the likely cause are named);
//!    - `verified-absolute`: |D| itself is below the floor (a stationary point, or a
//!      derivative under the noise): the claim agrees in absolute terms only, its relative
//!      accuracy is not measured;
//!    - `not-verified`: the discrepancy exceeds both the floor and `tol`·|D|;
//!    - `refused`: no probe could be measured smooth (event-crossing, grazing, a kink or
//!      jump at x, or fewer than three probe sizes).
//!
//!    The check's verdict is the worst over directions (refused by events, then
//!    not-verified, then refused for a kink, then within-noise); it is `verified-absolute`
//!    only when every direction is, and `verified` when every direction is verified or
//!    verified-absolute.
//! 5. **The Taylor remainder** `R(h) = |f(x + h·p) - f(x) - h·g·p| / h` is reported as
//!    corroboration (slope ~1 right, ~0 wrong), read on the probes measured smooth (see
//!    [`rules::taylor_window_slope`]). When a Hessian-vector product is claimed the second-order
//!    remainder must fall like h² (slope >= 1.75), or the direction is not verified.

pub mod curve;
pub mod examples;
pub mod gradient;
pub mod jacobian;
pub mod noise;
pub mod receipt;
pub mod report;
pub mod rules;
pub mod sides;
pub mod verdict;
pub mod walk;

pub use crate::numeric::rng::random_directions;
pub use crate::numeric::svd::{conditioning, Conditioning};
pub use gradient::{check_directions, check_gradient};
pub use jacobian::{check_jacobian, JacobianClaim};
pub use noise::Noise;
pub use receipt::{Environment, ObjectiveInfo, Receipt, RECEIPT_SCHEMA};
pub use report::{
    CheckOptions, CheckReport, DirectionReport, EventSignature, Guarantee, Kink, Probe,
};
pub use verdict::{Classification, Verdict};
