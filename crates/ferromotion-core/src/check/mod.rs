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
//!    [`taylor_window_slope`]). When a Hessian-vector product is claimed the second-order
//!    remainder must fall like h² (slope >= 1.75), or the direction is not verified.

pub mod curve;
use crate::numeric::fd;
pub mod fixtures;
pub mod noise;
pub mod verdict;

use crate::error::{positive, FerroError, Result};
use curve::{judge, Point, MARGIN};
use nalgebra::DMatrix;
pub use noise::Noise;
use serde::Serialize;
use std::collections::BTreeMap;
pub use verdict::{Classification, Verdict};

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
    /// The options used.
    pub options: CheckOptions,
}

/// SplitMix64: a small, seedable, platform-independent generator.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1).
    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        libm::sqrt(-2.0 * libm::log(u)) * libm::cos(2.0 * std::f64::consts::PI * v)
    }
}

/// `count` seeded random unit vectors in n dimensions (isotropic).
pub fn random_directions(n: usize, count: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = SplitMix64(seed);
    (0..count)
        .map(|_| {
            let v: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
            let norm = libm::sqrt(v.iter().map(|a| a * a).sum::<f64>());
            v.into_iter().map(|a| a / norm).collect()
        })
        .collect()
}

/// A Taylor remainder `R(h)` counts only when it stands this many times above the noise it
/// can carry, `2σ/h` (f(x + h·d) and f(x) each off by up to σ).
const NOISE_MARGIN: f64 = 10.0;
/// The Taylor slope is fitted on the remainders within this many decades above the
/// smallest h that clears the noise: the asymptotic end of the sweep.
const TAYLOR_WINDOW_DECADES: f64 = 1.5;
/// The probe size the walk starts at is this many times the balance point (σ/|g|)^(1/3)
/// of truncation and round-off for an f whose derivatives are of the size of its gradient.
const START_FACTOR: f64 = 3.0;
/// Ladders this short are probed whole.
const SHORT_LADDER: usize = 4;

/// Slope of log R(h) on log h in the asymptotic window (`None` when fewer than three
/// remainders clear the noise: nothing to fit, consistent with a right gradient).
///
/// A remainder *clears* when it stands above the noise and above `tol_floor` =
/// `tol·|g·d|`, the discrepancy the difference rung already accepts: a gradient that is
/// right to within `tol` (a finite-difference gradient such as MuJoCo's chained
/// `mjd_transitionFD`, off by ~1e-7) leaves a flat remainder below that floor.
///
/// The slope is read at the small end, just above the noise: remainders below
/// `NOISE_MARGIN·2σ/h` are round-off and are dropped, and the window is the
/// `TAYLOR_WINDOW_DECADES` above the smallest surviving h. The large-h end is not used: a
/// fixed-step contact rollout is piecewise smooth with kinks about `|v|·dt` apart, and
/// steps larger than that measure the map's average slope across the kinks, not its
/// derivative. Inside one smooth piece a linear contact law makes the map affine: the
/// remainder then drops straight into round-off, and no slope is fitted (`None`).
fn taylor_window_slope(hs: &[f64], rs: &[f64], noise: f64, tol_floor: f64) -> Option<f64> {
    // `hs` runs from the largest h to the smallest.
    let clear = |h: f64, r: f64| {
        r.is_finite() && r > 0.0 && r > NOISE_MARGIN * 2.0 * noise / h && r > tol_floor
    };
    let last = (0..hs.len()).rev().find(|&i| clear(hs[i], rs[i]))?;
    // Below the window the remainder is noise. If it got there by falling faster than any
    // Taylor order allows (more than (h/h')³ in one step), the remainder *vanished*: the
    // first-order term is right to within the noise, and the points above were the kinks'
    // plateau, not the asymptotic regime. Nothing to fit.
    if let Some(next) = hs.get(last + 1) {
        if rs[last + 1] < rs[last] * libm::pow(next / hs[last], 3.0) {
            return None;
        }
    }
    let top = hs[last] * libm::pow(10.0, TAYLOR_WINDOW_DECADES) * (1.0 + 1e-9);
    let (x, y): (Vec<f64>, Vec<f64>) = hs
        .iter()
        .zip(rs)
        .filter(|(&h, &r)| h <= top && clear(h, r))
        .map(|(&h, &r)| (h, r))
        .unzip();
    if x.len() < 3 {
        return None;
    }
    crate::numeric::fit::fit_loglog(&x, &y)
        .ok()
        .map(|f| f.slope)
}

type Objective<'a> = dyn FnMut(&[f64]) -> Result<f64> + 'a;
type Events<'a> = dyn FnMut(&[f64]) -> Result<EventSignature> + 'a;
type Hvp<'a> = dyn FnMut(&[f64]) -> Result<Vec<f64>> + 'a;

/// `x + s·p`.
fn displaced(x: &[f64], p: &[f64], s: f64) -> Vec<f64> {
    x.iter().zip(p).map(|(a, b)| a + s * b).collect()
}

/// Measure f's evaluation noise on stencils along the first two directions.
fn measure_noise(
    f: &mut Objective,
    x: &[f64],
    f0: f64,
    dirs: &[&[f64]],
    evaluations: &mut u64,
) -> Noise {
    let mut differences = Vec::new();
    let mut f_scale = f0.abs();
    let mut step = noise::FIRST_STEP;
    let spent = *evaluations;
    for (j, p) in dirs.iter().enumerate() {
        let mut h = noise::FIRST_STEP;
        // Off-centre, on either side of x: a kink or jump at x itself is in neither stencil.
        let centre = if j % 2 == 0 {
            noise::OFFSET
        } else {
            -noise::OFFSET
        };
        for attempt in 0..3 {
            let values: Vec<f64> = (-noise::HALF..=noise::HALF)
                .map(|i| {
                    *evaluations += 1;
                    f(&displaced(x, p, (centre + i as f64) * h)).unwrap_or(f64::NAN)
                })
                .collect();
            if values.iter().all(|v| v.is_finite()) {
                f_scale = values.iter().fold(f_scale, |m, v| m.max(v.abs()));
            }
            if noise::quantised(&values) && attempt < 2 {
                h *= 100.0;
                continue;
            }
            if let Some(d) = noise::stencil_differences(&values) {
                differences.extend(d);
                step = step.max(h);
            }
            break;
        }
    }
    let floor = noise::ROUND_OFF * f_scale;
    let sigma = noise::sigma(&differences).unwrap_or(0.0).max(floor);
    let relative = if f_scale > 0.0 {
        sigma / f_scale
    } else {
        f64::NAN
    };
    Noise {
        sigma,
        f_scale,
        relative,
        step,
        evaluations: *evaluations - spent,
        cause: noise::cause(relative),
    }
}

/// One probe: the central difference, f(x + ε·p) for the Taylor remainder, and what the
/// events say.
struct Raw {
    point: Point,
    f_plus: f64,
}

/// Everything [`check_gradient`] needs to walk one direction.
struct Walker<'w, 'f, 'e> {
    f: &'w mut Objective<'f>,
    events: Option<&'w mut Events<'e>>,
    x: &'w [f64],
    graze_speed: f64,
    evaluations: u64,
}

impl Walker<'_, '_, '_> {
    fn probe(&mut self, p: &[f64], eps: f64) -> Raw {
        let (xp, xm) = (displaced(self.x, p, eps), displaced(self.x, p, -eps));
        let (fp, fm) = ((self.f)(&xp), (self.f)(&xm));
        self.evaluations += 2;
        let mut class = Classification::Smooth;
        let graze = self.graze_speed;
        let grazing = |s: &EventSignature| s.min_event_speed.is_some_and(|v| v < graze);
        if let Some(ev) = self.events.as_mut() {
            match (ev(&xp), ev(&xm)) {
                (Ok(a), Ok(b)) => {
                    if grazing(&a) || grazing(&b) {
                        class = Classification::Grazing;
                    } else if a.sequence != b.sequence {
                        class = Classification::EventCrossing;
                    }
                }
                _ => class = Classification::EventCrossing,
            }
        }
        let f_plus = fp.as_ref().copied().unwrap_or(f64::NAN);
        let fd = match (fp, fm) {
            (Ok(a), Ok(b)) => fd::quotient(a, b, eps),
            _ => f64::NAN,
        };
        if !fd.is_finite() && class == Classification::Smooth {
            // One side could not be evaluated: the probe left the model's domain.
            class = Classification::EventCrossing;
        }
        Raw {
            point: Point {
                eps,
                fd,
                events: class,
            },
            f_plus,
        }
    }
}

/// The index of the ladder (largest first) nearest, in log, to `eps`.
fn nearest(ladder: &[f64], eps: f64) -> usize {
    let d = |e: f64| libm::fabs(libm::log(e / eps));
    (0..ladder.len())
        .min_by(|&a, &b| d(ladder[a]).total_cmp(&d(ladder[b])))
        .unwrap_or(0)
}

/// A walk's outcome along one direction.
struct Walked {
    probes: BTreeMap<usize, Raw>,
    top: usize,
    bottom: usize,
    curve: curve::Curve,
}

/// Walk one direction (see the module docs): start at ladder index `start`, go down until
/// the smallest probes see only noise, up while that resolves the derivative better.
#[allow(clippy::too_many_arguments)]
fn walk(
    walker: &mut Walker,
    ladder: &[f64],
    p: &[f64],
    claimed: f64,
    sigma: f64,
    tol: f64,
    start: usize,
    stop_early: bool,
) -> Walked {
    let m = ladder.len();
    let mut got: BTreeMap<usize, Raw> = BTreeMap::new();
    let (mut top, mut bottom) = if m <= SHORT_LADDER || !stop_early {
        (0, m - 1)
    } else {
        let s = start.min(m - 3);
        (s, s + 2)
    };
    for (i, &eps) in ladder.iter().enumerate().take(bottom + 1).skip(top) {
        got.insert(i, walker.probe(p, eps));
    }
    loop {
        let run: Vec<Point> = (top..=bottom).map(|i| got[&i].point).collect();
        let c = curve::analyse(&run, sigma);
        let grazing = got
            .values()
            .any(|r| r.point.events == Classification::Grazing);
        let verdict = c
            .best
            .and_then(|b| run[b].fd.is_finite().then_some(b))
            .and_then(|b| c.resolution[b].map(|e| judge(claimed, run[b].fd, e, tol)));
        if grazing || verdict == Some(Verdict::Verified) {
            return Walked {
                probes: got,
                top,
                bottom,
                curve: c,
            };
        }
        if bottom + 1 < m && !c.bottom_in_noise {
            // Every probe crossing an event: try the smallest probe first; if even it
            // crosses, no probe of the ladder can be smooth.
            if run[run.len() - 1].events == Classification::EventCrossing
                && !got.contains_key(&(m - 1))
            {
                let last = walker.probe(p, ladder[m - 1]);
                let crosses = last.point.events == Classification::EventCrossing;
                got.insert(m - 1, last);
                if crosses {
                    return Walked {
                        probes: got,
                        top,
                        bottom,
                        curve: c,
                    };
                }
            }
            bottom += 1;
            got.entry(bottom)
                .or_insert_with(|| walker.probe(p, ladder[bottom]));
            continue;
        }
        let resolve_up = matches!(
            verdict,
            Some(Verdict::VerifiedWithinNoise | Verdict::VerifiedAbsolute)
        );
        if let (Some(0), Some(0), true) = (c.best, c.smooth_top, resolve_up && top > 0) {
            let e = c.resolution[0].unwrap_or(f64::INFINITY);
            // Only while round-off dominates the top probe: a larger one then resolves better.
            if c.noise_part[0] >= 0.5 * e {
                top -= 1;
                got.insert(top, walker.probe(p, ladder[top]));
                continue;
            }
        }
        return Walked {
            probes: got,
            top,
            bottom,
            curve: c,
        };
    }
}

/// Check a claimed gradient `grad` of `f` at `x` (see the module docs). `events`, when
/// given, reports the event sequence at a point; `hvp`, when given, claims H·d.
pub fn check_gradient(
    f: &mut Objective,
    mut events: Option<&mut Events>,
    mut hvp: Option<&mut Hvp>,
    x: &[f64],
    grad: &[f64],
    opts: &CheckOptions,
) -> Result<CheckReport> {
    let scale = validated(x, grad, opts)?;
    let f0 = f(x)?;
    if !f0.is_finite() {
        return Err(FerroError::NonFinite {
            what: "objective at x",
            detail: format!("f(x) = {f0}: the point itself must be evaluable"),
        });
    }
    let mut evaluations = 1u64;
    let sig0 = match events.as_mut() {
        Some(ev) => Some(ev(x)?),
        None => None,
    };
    let dirs = directions(opts, &scale);
    let stencil_dirs: Vec<&[f64]> = dirs.iter().take(2).map(|(_, d)| d.as_slice()).collect();
    let noise = measure_noise(f, x, f0, &stencil_dirs, &mut evaluations);
    let sigma = noise.sigma;
    let grazing_at_x = sig0
        .as_ref()
        .is_some_and(|s| s.min_event_speed.is_some_and(|v| v < opts.graze_speed));
    let mut ladder = opts.eps.clone();
    ladder.sort_by(|a, b| b.total_cmp(a));
    let mut start = first_rung(grad, &scale, &noise, &ladder);
    let mut walker = Walker {
        f,
        events,
        x,
        graze_speed: opts.graze_speed,
        evaluations,
    };
    let mut reports = Vec::with_capacity(dirs.len());
    for (label, p) in dirs {
        let claimed: f64 = grad.iter().zip(&p).map(|(a, b)| a * b).sum();
        let w = walk(
            &mut walker,
            &ladder,
            &p,
            claimed,
            sigma,
            opts.tol,
            start,
            !opts.full_sweep,
        );
        let report = direction_report(
            &mut walker,
            &mut hvp,
            opts,
            sig0.as_ref(),
            grazing_at_x,
            f0,
            sigma,
            label,
            p,
            claimed,
            &w,
        )?;
        if let Some(b) = w.curve.best {
            start = w.top + b;
        }
        reports.push(report);
    }
    let evaluations = walker.evaluations;
    let (max_error, median_error, max_abs_error) = errors(&reports);
    let (verdict, why) = overall(&reports, &noise, opts, &ladder);
    Ok(CheckReport {
        directions: reports,
        max_error,
        median_error,
        max_abs_error,
        verdict,
        why,
        evaluations,
        noise,
        options: opts.clone(),
    })
}

/// The checker's arguments refused as the core refuses any bad input (a gradient of x's
/// length, finite numbers, positive tolerances and probes, one scale per coordinate); the
/// scale per coordinate (1 without one).
fn validated(x: &[f64], grad: &[f64], opts: &CheckOptions) -> Result<Vec<f64>> {
    let n = x.len();
    if n == 0 || grad.len() != n {
        return Err(FerroError::InvalidParameter {
            name: "grad",
            value: grad.len() as f64,
            limit: format!("expected a gradient of length {n} (the length of x), non-empty"),
        });
    }
    for (&xi, &gi) in x.iter().zip(grad) {
        crate::error::finite("x", xi)?;
        crate::error::finite("grad", gi)?;
    }
    positive("tol", opts.tol)?;
    for &e in opts.eps.iter().chain(&opts.taylor_h) {
        positive("eps", e)?;
    }
    if opts.eps.is_empty() {
        return Err(FerroError::InvalidParameter {
            name: "eps",
            value: 0.0,
            limit: "needs at least one probe size (three to measure smoothness)".into(),
        });
    }
    match &opts.scale {
        None => Ok(vec![1.0; n]),
        Some(s) => {
            if s.len() != n {
                return Err(FerroError::InvalidParameter {
                    name: "scale",
                    value: s.len() as f64,
                    limit: format!("expected one typical magnitude per coordinate of x ({n})"),
                });
            }
            for &v in s {
                positive("scale", v)?;
            }
            Ok(s.clone())
        }
    }
}

/// The directions probed, labelled: the seeded random ones, then the coordinates if asked,
/// each in x's units (p = scale ⊙ d).
fn directions(opts: &CheckOptions, scale: &[f64]) -> Vec<(String, Vec<f64>)> {
    let n = scale.len();
    let mut dirs: Vec<(String, Vec<f64>)> = random_directions(n, opts.random_directions, opts.seed)
        .into_iter()
        .enumerate()
        .map(|(i, d)| (format!("random {i}"), d))
        .collect();
    if opts.coordinates {
        for i in 0..n {
            let mut d = vec![0.0; n];
            d[i] = 1.0;
            dirs.push((format!("coordinate {i}"), d));
        }
    }
    for (_, d) in dirs.iter_mut() {
        for (di, si) in d.iter_mut().zip(scale) {
            *di *= si;
        }
    }
    dirs
}

/// The rung of the (descending) `ladder` the first direction's walk starts from: the probe
/// nearest START_FACTOR · cbrt(sigma / reference), the reference the scaled gradient's norm
/// (or, for a zero gradient, the objective's scale).
fn first_rung(grad: &[f64], scale: &[f64], noise: &Noise, ladder: &[f64]) -> usize {
    let g_scale = libm::sqrt(
        grad.iter()
            .zip(scale)
            .map(|(g, s)| (g * s) * (g * s))
            .sum::<f64>(),
    );
    let reference = if g_scale > 0.0 {
        g_scale
    } else {
        noise.f_scale
    };
    if reference > 0.0 {
        nearest(ladder, START_FACTOR * libm::cbrt(noise.sigma / reference))
    } else {
        0
    }
}

/// The directions' relative errors, largest and median (NaN without any), and their
/// largest absolute error.
fn errors(reports: &[DirectionReport]) -> (f64, f64, f64) {
    let mut errs: Vec<f64> = reports.iter().filter_map(|r| r.rel_error).collect();
    errs.sort_by(f64::total_cmp);
    let max_error = errs.last().copied().unwrap_or(f64::NAN);
    let median_error = if errs.is_empty() {
        f64::NAN
    } else if errs.len() % 2 == 1 {
        errs[errs.len() / 2]
    } else {
        0.5 * (errs[errs.len() / 2 - 1] + errs[errs.len() / 2])
    };
    let max_abs_error = reports
        .iter()
        .filter_map(|r| r.abs_error)
        .fold(f64::NAN, f64::max);
    (max_error, median_error, max_abs_error)
}

/// One direction's report from its walk: classification, best probe, Taylor slope, verdict.
#[allow(clippy::too_many_arguments)]
fn direction_report(
    walker: &mut Walker,
    hvp: &mut Option<&mut Hvp>,
    opts: &CheckOptions,
    sig0: Option<&EventSignature>,
    grazing_at_x: bool,
    f0: f64,
    sigma: f64,
    label: String,
    p: Vec<f64>,
    claimed: f64,
    w: &Walked,
) -> Result<DirectionReport> {
    let c = &w.curve;
    let probes = probe_rows(w, claimed);
    let best = c
        .best
        .map(|b| (w.top + b, c.resolution[b].unwrap_or(f64::NAN)));
    let classification = classify(&probes, best.is_some(), grazing_at_x);
    // The Taylor remainder: on an explicit ladder (or a default one when H·d is claimed,
    // whose remainder must stay above round-off), else on the probes measured smooth.
    let second = hvp.as_mut().map(|h| h(&p)).transpose()?;
    let curvature = second.map(|hd| hd.iter().zip(&p).map(|(a, b)| a * b).sum::<f64>());
    let remainder = |fh: f64, h: f64| {
        let mut r = fh - f0 - h * claimed;
        if let Some(cv) = curvature {
            r -= 0.5 * h * h * cv;
        }
        r.abs() / h
    };
    let (hs, rs) = taylor_points(walker, opts, sig0, &p, w, curvature.is_some(), remainder);
    let taylor_slope = taylor_window_slope(
        &hs,
        &rs,
        sigma,
        // The second-order remainder checks H·d, which `tol` says nothing about.
        if curvature.is_some() {
            0.0
        } else {
            opts.tol * claimed.abs()
        },
    );
    let (best_eps, best_fd, e) = match best {
        Some((i, e)) => (
            Some(w.probes[&i].point.eps),
            Some(w.probes[&i].point.fd),
            Some(e),
        ),
        None => (None, None, None),
    };
    let mut verdict = match (classification, best_fd, e) {
        (Classification::Smooth, Some(d), Some(e)) => judge(claimed, d, e, opts.tol),
        _ => Verdict::Refused,
    };
    if curvature.is_some() && verdict != Verdict::Refused && taylor_slope.is_some_and(|s| s < 1.75)
    {
        verdict = Verdict::NotVerified;
    }
    let abs_error = best_fd.map(|d| (claimed - d).abs());
    Ok(DirectionReport {
        label,
        direction: p,
        claimed,
        probes,
        best_eps,
        best_fd,
        abs_error,
        rel_error: best_fd.zip(abs_error).map(|(d, a)| a / d.abs()),
        resolution: e,
        floor: e.map(|e| MARGIN * e),
        smooth_below: c.smooth_top.map(|t| w.probes[&(w.top + t)].point.eps),
        taylor_slope,
        taylor_second_order: curvature.is_some(),
        classification,
        verdict,
        certified: matches!(
            verdict,
            Verdict::Verified | Verdict::VerifiedWithinNoise | Verdict::VerifiedAbsolute
        ),
    })
}

/// Every probe a direction's walk made, with its error against the claim `claimed` and,
/// inside the run the curve measured, its class and resolution.
fn probe_rows(w: &Walked, claimed: f64) -> Vec<Probe> {
    let c = &w.curve;
    let mut probes = Vec::with_capacity(w.probes.len());
    for (&i, raw) in &w.probes {
        let in_run = i >= w.top && i <= w.bottom;
        let (class, resolution) = if in_run {
            (c.class[i - w.top], c.resolution[i - w.top])
        } else if raw.point.events != Classification::Smooth {
            (raw.point.events, None)
        } else {
            (Classification::Unmeasured, None)
        };
        let abs_error = (claimed - raw.point.fd).abs();
        probes.push(Probe {
            eps: raw.point.eps,
            fd: raw.point.fd,
            abs_error,
            rel_error: abs_error / raw.point.fd.abs(),
            resolution,
            classification: class,
        });
    }
    probes
}

/// A direction's class from its probes: grazing (at a probe or at x) before smooth (a best
/// probe was found) before an event crossing; too few probes to tell, else not smooth.
fn classify(probes: &[Probe], has_best: bool, grazing_at_x: bool) -> Classification {
    let any = |k: Classification| probes.iter().any(|q| q.classification == k);
    if any(Classification::Grazing) || grazing_at_x {
        Classification::Grazing
    } else if has_best {
        Classification::Smooth
    } else if any(Classification::EventCrossing) {
        Classification::EventCrossing
    } else if probes.len() < 3 {
        Classification::Unmeasured
    } else {
        Classification::NonSmooth
    }
}

/// The Taylor test's points (h, remainder at h): on the explicit ladder `opts.taylor_h` (or,
/// when H·d is claimed, a default one from 1e-1 down to 1e-4), skipping any h whose event
/// sequence differs from x's or whose f fails; without one, on the walk's probes measured
/// smooth.
fn taylor_points(
    walker: &mut Walker,
    opts: &CheckOptions,
    sig0: Option<&EventSignature>,
    p: &[f64],
    w: &Walked,
    second_order: bool,
    remainder: impl Fn(f64, f64) -> f64,
) -> (Vec<f64>, Vec<f64>) {
    let (mut hs, mut rs) = (Vec::new(), Vec::new());
    let mut explicit = opts.taylor_h.clone();
    if explicit.is_empty() && second_order {
        explicit = (0..=6)
            .map(|i| libm::pow(10.0, -1.0 - 0.5 * i as f64))
            .collect();
    }
    if explicit.is_empty() {
        if let Some(t) = w.curve.smooth_top {
            for i in (w.top + t)..=w.bottom {
                let raw = &w.probes[&i];
                hs.push(raw.point.eps);
                rs.push(remainder(raw.f_plus, raw.point.eps));
            }
        }
    } else {
        explicit.sort_by(|a, b| b.total_cmp(a));
        for &h in &explicit {
            let xh = displaced(walker.x, p, h);
            if let (Some(ev), Some(s0)) = (walker.events.as_mut(), sig0) {
                if ev(&xh).map(|s| s.sequence != s0.sequence).unwrap_or(true) {
                    continue;
                }
            }
            walker.evaluations += 1;
            let Ok(fh) = (walker.f)(&xh) else { continue };
            hs.push(h);
            rs.push(remainder(fh, h));
        }
    }
    (hs, rs)
}

/// The check's verdict and why, from its directions.
fn overall(
    reports: &[DirectionReport],
    noise: &Noise,
    opts: &CheckOptions,
    ladder: &[f64],
) -> (Verdict, String) {
    let smallest = ladder.last().copied().unwrap_or(0.0);
    refused_at_event(reports, opts, smallest)
        .or_else(|| not_verified(reports, opts))
        .or_else(|| refused_not_smooth(reports, smallest))
        .unwrap_or_else(|| verified(reports, noise, opts))
}

/// A number the report may lack, NaN where it does (as printed).
fn or_nan(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::NAN)
}

/// First: a direction at a grazing event, or across an event down to the `smallest` probe.
fn refused_at_event(
    reports: &[DirectionReport],
    opts: &CheckOptions,
    smallest: f64,
) -> Option<(Verdict, String)> {
    let r = reports.iter().find(|r| {
        matches!(
            r.classification,
            Classification::Grazing | Classification::EventCrossing
        )
    })?;
    let why = if r.classification == Classification::Grazing {
        format!(
            "{}: an event is slower than {:e}; its time-of-impact term is too large for any difference to certify",
            r.label, opts.graze_speed
        )
    } else {
        format!(
            "{}: the event sequence differs between +eps and -eps down to the smallest probe ({smallest:e}); smooth differences cannot certify a gradient across an event",
            r.label
        )
    };
    Some((Verdict::Refused, why))
}

/// Then: a direction whose claim the differences contradict (or whose H·d fails Taylor).
fn not_verified(reports: &[DirectionReport], opts: &CheckOptions) -> Option<(Verdict, String)> {
    let g = or_nan;
    let r = reports.iter().find(|r| r.verdict == Verdict::NotVerified)?;
    let taylor = r
        .taylor_slope
        .map_or("not measurable".into(), |s| format!("{s:.2}"));
    let why = if r.taylor_second_order && r.abs_error.zip(r.floor).is_some_and(|(a, f)| a <= f) {
        format!(
            "{}: the claimed H·d fails the second-order Taylor test (slope {taylor}, expected 2)",
            r.label
        )
    } else {
        format!(
            "{}: g·p = {:.6e} but the differences give {:.6e} at eps {:.1e}: relative error {:.2e}, absolute {:.2e}, \
             beyond both the tolerance {:e} and the floor {:.2e} the differences' resolution allows (Taylor slope {taylor})",
            r.label,
            r.claimed,
            g(r.best_fd),
            g(r.best_eps),
            g(r.rel_error),
            g(r.abs_error),
            opts.tol,
            g(r.floor),
        )
    };
    Some((Verdict::NotVerified, why))
}

/// Then: a direction no probe measured smooth (too few probe sizes, or a kink or jump).
fn refused_not_smooth(reports: &[DirectionReport], smallest: f64) -> Option<(Verdict, String)> {
    let r = reports.iter().find(|r| r.verdict == Verdict::Refused)?;
    let why = if r.classification == Classification::Unmeasured {
        format!(
            "{}: at least three probe sizes are needed to measure whether f is smooth (got {})",
            r.label,
            r.probes.len()
        )
    } else if let Some(p) = r
        .probes
        .iter()
        .rev()
        .find(|p| p.classification == Classification::NonSmooth)
        .filter(|_| {
            r.probes
                .last()
                .is_some_and(|p| p.classification == Classification::Unmeasured)
        })
    {
        format!(
            "{}: the probes up to {:.1e} straddle a kink or jump, and the ladder has fewer than three probe sizes \
             below it, too few to measure smoothness there; pass a finer `eps` ladder (the default is half a \
             decade apart)",
            r.label, p.eps
        )
    } else {
        format!(
            "{}: no probe down to {smallest:e} was measured smooth: the difference quotients disagree beyond noise \
             and the eps² model at every size walked (a kink or jump of f at x)",
            r.label
        )
    };
    Some((Verdict::Refused, why))
}

/// Otherwise verified: within evaluation noise, in absolute terms only, or plainly.
fn verified(reports: &[DirectionReport], noise: &Noise, opts: &CheckOptions) -> (Verdict, String) {
    let g = or_nan;
    let smooth_below = reports
        .iter()
        .filter_map(|r| r.smooth_below)
        .fold(f64::INFINITY, f64::min);
    let noise_words = format!(
        "f's evaluations wander by σ = {:.1e} ({:.1e} of |f|, likely {})",
        noise.sigma, noise.relative, noise.cause
    );
    let worst = |v: Verdict| {
        reports
            .iter()
            .filter(|r| r.verdict == v)
            .max_by(|a, b| g(a.rel_error).total_cmp(&g(b.rel_error)))
    };
    let absolute: Vec<&str> = reports
        .iter()
        .filter(|r| r.verdict == Verdict::VerifiedAbsolute)
        .map(|r| r.label.as_str())
        .collect();
    if let Some(r) = worst(Verdict::VerifiedWithinNoise) {
        let floor_rel = g(r.floor) / g(r.best_fd).abs();
        return (
            Verdict::VerifiedWithinNoise,
            format!(
                "verified within evaluation noise: {noise_words}; central differences then resolve g·p no better than \
                 a floor of {floor_rel:.1e} (relative), coarser than the tolerance {:e}; the largest discrepancy, \
                 {:.2e} relative ({}), is within that floor (probes measured smooth up to {smooth_below:.1e})",
                opts.tol,
                g(r.rel_error),
                r.label
            ),
        );
    }
    if absolute.len() == reports.len() {
        let r = &reports[0];
        return (
            Verdict::VerifiedAbsolute,
            format!(
                "verified in absolute terms only: in every direction the derivative is below what differences resolve here \
                 (e.g. {}: |differences| = {:.1e} within the floor {:.1e}), and the claim agrees to that floor; its relative \
                 accuracy is not measured ({noise_words}). Check away from a stationary point, or with a more precise f",
                r.label,
                g(r.best_fd).abs(),
                g(r.floor)
            ),
        );
    }
    let resolution = reports
        .iter()
        .filter(|r| r.verdict == Verdict::Verified)
        .map(|r| g(r.resolution) / g(r.best_fd).abs())
        .fold(0.0, f64::max);
    let mut why = format!(
        "all {} directions agree: largest relative error {:.1e} (tolerance {:e}; the differences resolve each g·p \
         to {resolution:.1e} or better); probes measured smooth up to {smooth_below:.1e}",
        reports.len(),
        reports
            .iter()
            .filter(|r| r.verdict == Verdict::Verified)
            .filter_map(|r| r.rel_error)
            .fold(0.0, f64::max),
        opts.tol
    );
    if !absolute.is_empty() {
        why += &format!(
            "; along {} the derivative is below resolution and agrees in absolute terms only",
            absolute.join(", ")
        );
    }
    (Verdict::Verified, why)
}

/// Singular values of a sensitivity matrix and its weakly observed input combinations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conditioning {
    /// Singular values, descending.
    pub singular_values: Vec<f64>,
    /// Largest over smallest (infinite when rank-deficient).
    pub condition_number: f64,
    /// Unit input combinations whose singular value is below `rel`·largest.
    pub weak_directions: Vec<Vec<f64>>,
}

/// Conditioning of a sensitivity matrix `jac` (n_out x n_in); combinations observed at
/// less than `rel` of the strongest are reported as weak.
pub fn conditioning(jac: &DMatrix<f64>, rel: f64) -> Result<Conditioning> {
    positive("rel", rel)?;
    if jac.is_empty() || jac.iter().any(|v| !v.is_finite()) {
        return Err(FerroError::InvalidParameter {
            name: "jacobian",
            value: jac.len() as f64,
            limit: "must be a non-empty matrix of finite numbers".into(),
        });
    }
    // Pad with zero rows so that the decomposition has one singular value per input:
    // inputs beyond the rank of a wide matrix are unobserved (singular value 0).
    let n_in = jac.ncols();
    let rows = jac.nrows().max(n_in);
    let mut padded = DMatrix::zeros(rows, n_in);
    padded.view_mut((0, 0), (jac.nrows(), n_in)).copy_from(jac);
    let svd = padded.svd(false, true);
    let v_t = svd.v_t.ok_or(FerroError::NonFinite {
        what: "singular value decomposition",
        detail: "no right singular vectors".into(),
    })?;
    let mut pairs: Vec<(f64, Vec<f64>)> = svd
        .singular_values
        .iter()
        .enumerate()
        .map(|(i, &s)| (s, v_t.row(i).iter().copied().collect()))
        .collect();
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0));
    let largest = pairs.first().map_or(0.0, |p| p.0);
    let weak: Vec<Vec<f64>> = pairs
        .iter()
        .filter(|p| p.0 < rel * largest)
        .map(|p| p.1.clone())
        .collect();
    let smallest = pairs.last().map_or(0.0, |p| p.0);
    Ok(Conditioning {
        singular_values: pairs.iter().map(|p| p.0).collect(),
        condition_number: if smallest > 0.0 {
            largest / smallest
        } else {
            f64::INFINITY
        },
        weak_directions: weak,
    })
}

/// What a check certifies against: the objective and how its gradient was produced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ObjectiveInfo {
    /// The objective, in words (with its formula).
    pub name: String,
    /// Its units.
    pub units: String,
    /// The inputs and anything else a reader needs.
    pub description: String,
    /// How the checked gradient was computed.
    pub route: String,
    /// The integrator behind the objective.
    pub integrator: String,
    /// Its tolerances and parameters (name, value).
    pub tolerances: Vec<(String, f64)>,
}

/// Who produced a receipt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Environment {
    /// ferromotion-core's version.
    pub core_version: String,
    /// Target operating system and architecture of the core build.
    pub target: String,
    /// The Rust compiler that built the core (`rustc --version`, recorded by build.rs).
    pub rustc: String,
    /// Added by the binding that writes the receipt (Python version, git commit, platform).
    pub extra: Vec<(String, String)>,
}

/// A gradient check's receipt: everything needed to judge the verdict later.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Receipt {
    /// Schema identifier of this document.
    pub schema: String,
    /// What was checked.
    pub objective: ObjectiveInfo,
    /// The point x.
    pub x: Vec<f64>,
    /// The claimed gradient.
    pub gradient: Vec<f64>,
    /// The check itself (directions, sweeps, classification, verdict).
    pub report: CheckReport,
    /// Who produced it.
    pub environment: Environment,
}

/// Schema identifier written into every receipt.
pub const RECEIPT_SCHEMA: &str = "ferromotion.receipt/2";

impl Receipt {
    /// A receipt for `report` on `objective` at `x` with claimed `gradient`.
    pub fn new(
        objective: ObjectiveInfo,
        x: Vec<f64>,
        gradient: Vec<f64>,
        report: CheckReport,
    ) -> Receipt {
        Receipt {
            schema: RECEIPT_SCHEMA.into(),
            objective,
            x,
            gradient,
            report,
            environment: Environment {
                core_version: env!("CARGO_PKG_VERSION").into(),
                target: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
                rustc: env!("FERROMOTION_RUSTC").into(),
                extra: Vec::new(),
            },
        }
    }

    /// The receipt as JSON.
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string_pretty(self).map_err(FerroError::from)
    }

    /// One line: verdict, why, and the worst error.
    pub fn summary(&self) -> String {
        format!(
            "{}: {} — {} (max relative error {:.2e}, median {:.2e}, {} evaluations)",
            self.objective.name,
            self.report.verdict,
            self.report.why,
            self.report.max_error,
            self.report.median_error,
            self.report.evaluations
        )
    }
}
