//! What a gradient check takes and returns: its options, the events an objective reports,
//! and the report per probe, per direction and overall (the receipt's `report`).

use super::noise::Noise;
use super::verdict::{Classification, Verdict};
use serde::Serialize;

/// What an objective reports about the events its evaluation went through.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventSignature {
    /// The event sequence (e.g. impact count, or the steps spent in contact), compared
    /// between the two sides of each probe.
    pub sequence: Vec<i64>,
    /// Slowest event's guard speed (m/s or the system's unit), if any event happened.
    pub min_event_speed: Option<f64>,
}

/// Options of [`check_gradient`].
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckOptions {
    /// The ladder of probe sizes the walk moves on (sorted largest first before use).
    pub eps: Vec<f64>,
    /// Step sizes of an explicit Taylor remainder test; empty: read the remainder on the
    /// probes themselves (no extra evaluations).
    pub taylor_h: Vec<f64>,
    /// Number of seeded random unit directions.
    pub random_directions: usize,
    /// Also check along every coordinate axis.
    pub coordinates: bool,
    /// Seed of the random directions.
    pub seed: u64,
    /// Relative accuracy that a `verified` verdict certifies.
    pub tol: f64,
    /// Events slower than this make a direction grazing.
    pub graze_speed: f64,
    /// Typical magnitude of each coordinate of x (probes move coordinate i by ε·scale_i·d_i);
    /// None: 1 for every coordinate.
    pub scale: Option<Vec<f64>>,
    /// Walk the whole ladder in every direction (the full V, for plots) instead of stopping
    /// once the verdict is resolved.
    pub full_sweep: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            eps: (0..=18)
                .map(|i| libm::pow(10.0, -1.0 - 0.5 * i as f64))
                .collect(),
            taylor_h: Vec::new(),
            random_directions: 4,
            coordinates: true,
            seed: 0,
            tol: 1e-6,
            graze_speed: crate::physics::contact::rigid::DEFAULT_GRAZE_SPEED,
            scale: None,
            full_sweep: false,
        }
    }
}

/// One probe of the walk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Probe {
    /// Probe size.
    pub eps: f64,
    /// Central difference (NaN when an evaluation failed).
    pub fd: f64,
    /// |g·p - fd|.
    pub abs_error: f64,
    /// |g·p - fd| / |fd| (infinite when fd is 0).
    pub rel_error: f64,
    /// The differences' own error estimate at this probe (round-off plus truncation);
    /// None where it cannot be read (the smallest probe, unusable neighbours).
    pub resolution: Option<f64>,
    /// How this probe relates to the events and to smoothness.
    pub classification: Classification,
}

/// The check along one direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirectionReport {
    /// "random 0", "coordinate 1", ...
    pub label: String,
    /// The displacement per unit probe size, p = scale ⊙ d (d a unit vector).
    pub direction: Vec<f64>,
    /// The claimed directional derivative g·p.
    pub claimed: f64,
    /// The walk, largest probe first.
    pub probes: Vec<Probe>,
    /// The probe size the verdict is read at (smallest resolution among probes measured smooth).
    pub best_eps: Option<f64>,
    /// The central difference there.
    pub best_fd: Option<f64>,
    /// |g·p - fd| there.
    pub abs_error: Option<f64>,
    /// |g·p - fd| / |fd| there.
    pub rel_error: Option<f64>,
    /// The differences' resolution E there.
    pub resolution: Option<f64>,
    /// The floor `MARGIN`·E: discrepancies below it cannot be told from noise and truncation.
    pub floor: Option<f64>,
    /// Largest probe measured smooth (every probe of the walk below it is too).
    pub smooth_below: Option<f64>,
    /// Fitted slope of log R(h) on log h (~1 right, ~0 wrong; ~2 for the second-order
    /// remainder when a Hessian-vector product is claimed).
    pub taylor_slope: Option<f64>,
    /// Whether the slope refers to the second-order remainder.
    pub taylor_second_order: bool,
    /// The direction's classification.
    pub classification: Classification,
    /// The verdict along this direction.
    pub verdict: Verdict,
    /// Whether this direction agrees (verified, within noise, or in absolute terms).
    pub certified: bool,
    /// The one-sided slopes at x when they disagree beyond noise (a kink at x): the
    /// direction is then refused.
    pub kink: Option<Kink>,
    /// The scatter of the central difference at the probe scale (standard deviation of D
    /// over probe sizes within ±30% of the kink's probe or the best probe, inside the run
    /// measured smooth, its ε² trend fitted out), when it was measured: before a discrepancy or a kink is reported, so that rounding error correlated
    /// over the probe (a long float32 rollout) is not read as a wrong gradient.
    pub scatter: Option<f64>,
    /// f's noise at the probe scale, `√2·ε·scatter` with ε the probe the scatter was read
    /// at, when measured. When it exceeds the stencils' σ by
    /// [`PROBE_NOISE_FACTOR`] the direction is read again with it (its walk, its smoothness and
    /// its resolution).
    pub probe_noise: Option<f64>,
}

/// A direction is read again with the noise its scatter shows at the probe scale when that
/// noise exceeds the stencils' σ by this factor.
pub const PROBE_NOISE_FACTOR: f64 = 4.0;

/// A kink of f exactly at x along one direction: the forward and backward quotients
/// `(f(x + ε·p) - f(x)) / ε` and `(f(x) - f(x - ε·p)) / ε` tend to different slopes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Kink {
    /// The probe size the one-sided slopes are read at.
    pub eps: f64,
    /// The slope on the + side (the forward quotient, its linear trend in ε removed).
    pub forward: f64,
    /// The slope on the - side.
    pub backward: f64,
    /// The noise of `forward - backward` at that probe.
    pub noise: f64,
    /// Which of them the claim g·p equals: "forward", "backward", "average" or "neither".
    pub claim_equals: String,
}

/// What a check along random directions guarantees: a gradient whose error e has
/// |scale ⊙ e| ≥ `delta`·|scale ⊙ g| would have read `not-verified` with probability at
/// least 1 - `beta`, over the draw of the `directions` isotropic unit directions (for an
/// error not chosen knowing the seed), given the thresholds the check measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Guarantee {
    /// Random directions the guarantee rests on.
    pub directions: usize,
    /// The dimension n.
    pub dimension: usize,
    /// Relative size (in norm) of an error caught with probability 1 - `beta`.
    pub delta: f64,
    /// The miss probability `delta` is stated at.
    pub beta: f64,
    /// The miss probability of an error of 1% of |g| in norm.
    pub beta_at_one_percent: f64,
    /// Whether the coordinate axes were probed too (then they add to the guarantee).
    pub coordinates: bool,
}

/// Everything a gradient check found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckReport {
    /// Per direction.
    pub directions: Vec<DirectionReport>,
    /// Largest relative error at the best probe over directions.
    pub max_error: f64,
    /// Median relative error at the best probe over directions.
    pub median_error: f64,
    /// Largest absolute error at the best probe over directions.
    pub max_abs_error: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in words.
    pub why: String,
    /// Objective evaluations spent.
    pub evaluations: u64,
    /// f's measured evaluation noise.
    pub noise: Noise,
    /// What the random directions guarantee (None without random directions or a gradient
    /// to measure against).
    pub guarantee: Option<Guarantee>,
    /// The options used.
    pub options: CheckOptions,
}
