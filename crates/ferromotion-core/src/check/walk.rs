//! The probe walk: f's noise measured on its stencils, the directions, and the walk along one
//! direction over the ladder of probe sizes (see the module docs of `check`).

use super::curve::{self, judge, Point};
use super::noise::{self, Noise};
use super::report::{CheckOptions, EventSignature};
use super::verdict::{Classification, Verdict};
use crate::error::Result;
use crate::numeric::fd;
use crate::numeric::rng::random_directions;
use std::collections::BTreeMap;

/// The probe size the walk starts at is this many times the balance point (σ/|g|)^(1/3)
/// of truncation and round-off for an f whose derivatives are of the size of its gradient.
pub(super) const START_FACTOR: f64 = 3.0;
/// Ladders this short are probed whole.
pub(super) const SHORT_LADDER: usize = 4;

pub(super) type Objective<'a> = dyn FnMut(&[f64]) -> Result<f64> + 'a;
pub(super) type Events<'a> = dyn FnMut(&[f64]) -> Result<EventSignature> + 'a;
pub(super) type Hvp<'a> = dyn FnMut(&[f64]) -> Result<Vec<f64>> + 'a;

/// `x + s·p`.
pub(super) fn displaced(x: &[f64], p: &[f64], s: f64) -> Vec<f64> {
    x.iter().zip(p).map(|(a, b)| a + s * b).collect()
}

/// Measure f's evaluation noise on stencils along the first two directions.
pub(super) fn measure_noise(
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
pub(super) struct Raw {
    pub(super) point: Point,
    pub(super) f_plus: f64,
    /// f(x - ε·p), for the one-sided quotients that find a kink at x.
    pub(super) f_minus: f64,
}

/// Everything [`check_gradient`] needs to walk one direction.
pub(super) struct Walker<'w, 'f, 'e> {
    pub(super) f: &'w mut Objective<'f>,
    pub(super) events: Option<&'w mut Events<'e>>,
    pub(super) x: &'w [f64],
    pub(super) graze_speed: f64,
    pub(super) evaluations: u64,
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
        let f_minus = fm.as_ref().copied().unwrap_or(f64::NAN);
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
            f_minus,
        }
    }

    /// The central differences at the [`JITTER`] probe sizes within ±30% of `eps`, each
    /// `(ε, D(ε))` (NaN where an evaluation failed): the scatter of D at the probe scale.
    /// Probe sizes stay at or below `ceiling` (the largest probe measured smooth): the
    /// factors are then taken below 1 only.
    pub(super) fn jittered(&mut self, p: &[f64], eps: f64, ceiling: f64) -> Vec<(f64, f64)> {
        let factors = if eps * JITTER[JITTER.len() - 1] <= ceiling {
            JITTER
        } else {
            JITTER_BELOW
        };
        factors
            .iter()
            .map(|j| {
                let e = eps * j;
                let (fp, fm) = (
                    (self.f)(&displaced(self.x, p, e)),
                    (self.f)(&displaced(self.x, p, -e)),
                );
                self.evaluations += 2;
                match (fp, fm) {
                    (Ok(a), Ok(b)) => (e, fd::quotient(a, b, e)),
                    _ => (e, f64::NAN),
                }
            })
            .collect()
    }
}

/// Relative probe sizes at which the scatter of D is read around a probe: close enough that
/// truncation hardly changes (it is fitted out as a·ε² anyway), far enough apart that a
/// rollout's rounding error, correlated over a fraction of the probe, decorrelates.
pub(super) const JITTER: [f64; 6] = [0.7, 0.8, 0.9, 1.1, 1.2, 1.3];
/// The same below the probe, where a larger one would leave the run measured smooth.
pub(super) const JITTER_BELOW: [f64; 6] = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95];

/// The index of the ladder (largest first) nearest, in log, to `eps`.
pub(super) fn nearest(ladder: &[f64], eps: f64) -> usize {
    let d = |e: f64| libm::fabs(libm::log(e / eps));
    (0..ladder.len())
        .min_by(|&a, &b| d(ladder[a]).total_cmp(&d(ladder[b])))
        .unwrap_or(0)
}

/// A walk's outcome along one direction.
pub(super) struct Walked {
    pub(super) probes: BTreeMap<usize, Raw>,
    pub(super) top: usize,
    pub(super) bottom: usize,
    pub(super) curve: curve::Curve,
}

/// Walk one direction (see the module docs): start at ladder index `start` (or from the probes
/// in `prior`, walked before with another σ), go down until the smallest probes see only
/// noise, up while that resolves the derivative better.
#[allow(clippy::too_many_arguments)]
pub(super) fn walk(
    walker: &mut Walker,
    ladder: &[f64],
    p: &[f64],
    claimed: f64,
    sigma: f64,
    tol: f64,
    start: usize,
    stop_early: bool,
    prior: BTreeMap<usize, Raw>,
) -> Walked {
    let m = ladder.len();
    let mut got = prior;
    let (mut top, mut bottom) = match (got.keys().next(), got.keys().next_back()) {
        // Walked before (with another σ): re-read those probes, walking on from them.
        (Some(&a), Some(&b)) => (a, b.max(a + 2).min(m - 1)),
        _ if m <= SHORT_LADDER || !stop_early => (0, m - 1),
        _ => {
            let s = start.min(m - 3);
            (s, s + 2)
        }
    };
    for (i, &eps) in ladder.iter().enumerate().take(bottom + 1).skip(top) {
        got.entry(i).or_insert_with(|| walker.probe(p, eps));
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

/// Above this many coordinates the axes are not probed one by one: random directions only,
/// with the guarantee they carry (see `rules::guarantee`).
pub const COORDINATE_LIMIT: usize = 100;
/// Random directions probed at least, when the axes are skipped because n exceeds
/// [`COORDINATE_LIMIT`].
pub const RANDOM_MODE_DIRECTIONS: usize = 8;
/// Numbers the directions may hold together (directions × n): about 400 MB of float64.
pub const MAX_DIRECTION_NUMBERS: f64 = 5e7;

/// Whether the coordinate axes are probed (asked for, and n at most [`COORDINATE_LIMIT`]),
/// and how many random directions.
pub(super) fn direction_counts(opts: &CheckOptions, n: usize) -> (bool, usize) {
    if !opts.coordinates {
        (false, opts.random_directions)
    } else if n > COORDINATE_LIMIT {
        (false, opts.random_directions.max(RANDOM_MODE_DIRECTIONS))
    } else {
        (true, opts.random_directions)
    }
}

/// The directions probed, labelled: the seeded random ones, then the coordinates if asked
/// (and n is at most [`COORDINATE_LIMIT`]), each in x's units (p = scale ⊙ d).
pub(super) fn directions(opts: &CheckOptions, scale: &[f64]) -> Vec<(String, Vec<f64>)> {
    let n = scale.len();
    let (coordinates, random) = direction_counts(opts, n);
    let mut dirs: Vec<(String, Vec<f64>)> = random_directions(n, random, opts.seed)
        .into_iter()
        .enumerate()
        .map(|(i, d)| (format!("random {i}"), d))
        .collect();
    if coordinates {
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
/// `g_norm` (or, for a zero or unknown gradient, the objective's scale).
pub(super) fn first_rung(g_norm: f64, noise: &Noise, ladder: &[f64]) -> usize {
    let reference = if g_norm > 0.0 { g_norm } else { noise.f_scale };
    if reference > 0.0 {
        nearest(ladder, START_FACTOR * libm::cbrt(noise.sigma / reference))
    } else {
        0
    }
}

/// The Taylor test's points (h, remainder at h): on the explicit ladder `opts.taylor_h` (or,
/// when H·d is claimed, a default one from 1e-1 down to 1e-4), skipping any h whose event
/// sequence differs from x's or whose f fails; without one, on the walk's probes measured
/// smooth.
pub(super) fn taylor_points(
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

/// |scale ⊙ g|: the gradient's norm in the metric the directions are drawn in.
pub(super) fn scaled_norm(grad: &[f64], scale: &[f64]) -> f64 {
    libm::sqrt(
        grad.iter()
            .zip(scale)
            .map(|(g, s)| (g * s) * (g * s))
            .sum::<f64>(),
    )
}
