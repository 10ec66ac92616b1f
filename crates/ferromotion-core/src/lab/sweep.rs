//! Sweeps over stiffness: every route's readouts at many k, in parallel when the
//! `parallel` feature is on (the WebAssembly build leaves it off).
//!
//! One call, [`sweep_curve`], is what every binding runs: it validates the drop, the options
//! and every k once, before any row; computes the rigid reference once; runs the rows (in
//! chunks, telling a [`Watch`]'s observer how far it has got, when one watches); and returns
//! a [`Curve`]: the [`Sweep`] (which carries the [`SweepOptions`] it ran with), its exponent
//! fit (or the core's refusal to fit it) and its wrong-sign bands. With a clock each row also
//! carries the wall time of each route's Jacobian, measured on the thread that ran it (rows run
//! in parallel, so under load: for reading only).

use crate::error::{positive, Refusal, Result};
use crate::lab::clock::{plus, timed, Clock};
use crate::lab::readout::{blame_of, compare, fit_loglog, Blame, Errors, Fit, Flat};
use crate::physics::contact::rigid::{exact, ExactOptions};
use crate::physics::integrate::adaptive::{tolerance, ToleranceOptions};
use crate::physics::integrate::corrected::{
    corrected, corrected_from, CorrectedOptions, CorrectedStart,
};
use crate::physics::integrate::fixed::{fixed, fixed_from, FixedOptions, FixedStart};
use crate::physics::model::Drop;
use crate::physics::state::{Cost, RouteResult};
use serde::Serialize;

/// What a sweep computes at each stiffness.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SweepOptions {
    /// Fixed step, s.
    pub dt: f64,
    /// Also run the `tolerance` route with these options.
    pub tolerance: Option<ToleranceOptions>,
    /// Also compute the blame split (runs `flow` twice per k).
    pub blame: bool,
    /// Also run the `corrected` route at the same dt.
    pub corrected: bool,
}

impl SweepOptions {
    /// Check every option before any row runs: `dt` > 0 and the tolerance route's options
    /// (each refusal a typed error naming the field).
    pub fn validate(&self) -> Result<()> {
        positive("dt", self.dt)?;
        if let Some(t) = &self.tolerance {
            t.integrator()?;
        }
        Ok(())
    }
}

impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions {
            dt: 1e-4,
            tolerance: None,
            blame: false,
            corrected: false,
        }
    }
}

/// One route's answer at one stiffness, with its errors against `exact`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RouteRow {
    /// State and Jacobian.
    #[serde(flatten)]
    pub flat: Flat,
    /// Errors against the rigid reference.
    pub errors: Errors,
    /// Work spent.
    pub cost: Cost,
    /// Wall time of the route call that produced this row (its state and Jacobian), s;
    /// `None` where nothing was timed (no clock: the golden parity's evaluation, a sweep
    /// without a clock). See [`crate::lab::clock`].
    pub wall_s: Option<f64>,
    /// `tolerance` only: the two probe sizes disagree.
    pub probe_dependent: bool,
}

impl RouteRow {
    /// A row from a route's answer and the reference (not timed).
    pub fn from_route(r: &RouteResult, reference: &RouteResult) -> RouteRow {
        RouteRow::timed(r, reference, None)
    }

    /// A row from a route's answer, the reference and the wall time the route took, s.
    pub fn timed(r: &RouteResult, reference: &RouteResult, wall_s: Option<f64>) -> RouteRow {
        RouteRow {
            flat: Flat::from(r),
            errors: compare(r, reference),
            cost: r.cost,
            wall_s,
            probe_dependent: r.probe_dependent,
        }
    }
}

/// Everything a sweep computed at one stiffness.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepRow {
    /// Stiffness, N/m.
    pub k: f64,
    /// The fixed route.
    pub fixed: RouteRow,
    /// The tolerance route, when asked for.
    pub tolerance: Option<RouteRow>,
    /// The corrected route, when asked for.
    pub corrected: Option<RouteRow>,
    /// The blame split, when asked for.
    pub blame: Option<Blame>,
    /// Force evaluations of the tolerance route's Jacobian over the fixed route's.
    pub tolerance_cost_ratio: Option<f64>,
}

/// A sweep's rows, its reference and the options it ran with. Serialised with the options
/// inline (`dt`, `tolerance`, `blame`, `corrected`), then `exact` and `rows`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    /// What the sweep computed at each stiffness (its fixed step, s, is `options.dt`).
    #[serde(flatten)]
    pub options: SweepOptions,
    /// The rigid reference every row is compared with.
    pub exact: Flat,
    /// One row per stiffness, in the order given.
    pub rows: Vec<SweepRow>,
}

/// Range of k over which a sweep fits its divergence exponent, N/m.
pub const EXPONENT_RANGE: (f64, f64) = (1e4, 1e8);

/// A range of stiffness, N/m (from <= to).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KBand {
    /// Lower end, N/m.
    pub from: f64,
    /// Upper end, N/m.
    pub to: f64,
}

/// The stiffness ranges where the fixed route's sign is wrong, from rows in any order.
///
/// Rows are taken in increasing k. A run of neighbouring wrong-signed rows makes one band;
/// its ends lie halfway (geometrically, sqrt(k_i·k_{i+1})) between the last right-signed
/// and the first wrong-signed sample, or at the sampled k at either end of the grid. One
/// definition for the lab's plot and the Python package's (see `Sweep::wrong_sign_bands`).
pub fn wrong_sign_bands(rows: &[SweepRow]) -> Vec<KBand> {
    let k: Vec<f64> = rows.iter().map(|r| r.k).collect();
    let right: Vec<bool> = rows.iter().map(|r| r.fixed.errors.right_sign).collect();
    bands_of(&k, &right)
}

/// [`wrong_sign_bands`] from bare samples: stiffness `k` (N/m, any order) and whether the
/// sign at each is right; refuses slices of different lengths.
pub fn wrong_sign_bands_of(k: &[f64], right_sign: &[bool]) -> Result<Vec<KBand>> {
    if k.len() != right_sign.len() {
        return Err(crate::error::FerroError::InvalidParameter {
            name: "right_sign",
            value: right_sign.len() as f64,
            limit: format!("must have one entry per stiffness ({})", k.len()),
        });
    }
    Ok(bands_of(k, right_sign))
}

fn bands_of(k: &[f64], right_sign: &[bool]) -> Vec<KBand> {
    let mut sorted: Vec<(f64, bool)> = k.iter().copied().zip(right_sign.iter().copied()).collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut bands: Vec<KBand> = Vec::new();
    for (i, &(k, right)) in sorted.iter().enumerate() {
        if right {
            continue;
        }
        let from = if i == 0 {
            k
        } else {
            (sorted[i - 1].0 * k).sqrt()
        };
        let to = match sorted.get(i + 1) {
            Some(&(next, _)) => (k * next).sqrt(),
            None => k,
        };
        match bands.last_mut() {
            Some(band) if i > 0 && !sorted[i - 1].1 => band.to = to,
            _ => bands.push(KBand { from, to }),
        }
    }
    bands
}

impl Sweep {
    /// The stiffness ranges where the fixed route's sign is wrong ([`wrong_sign_bands`]).
    pub fn wrong_sign_bands(&self) -> Vec<KBand> {
        wrong_sign_bands(&self.rows)
    }

    /// Divergence exponent fitted on the sweep's own points with k in [1e4, 1e8]
    /// (`Fit::points` says how many were used).
    pub fn exponent(&self) -> Result<Fit> {
        let (ks, errs): (Vec<f64>, Vec<f64>) = self
            .rows
            .iter()
            .filter(|r| {
                r.k >= EXPONENT_RANGE.0 * (1.0 - 1e-12) && r.k <= EXPONENT_RANGE.1 * (1.0 + 1e-12)
            })
            .map(|r| (r.k, r.fixed.errors.gradient))
            .unzip();
        fit_loglog(&ks, &errs)
    }
}

/// A sweep and what is read off it, each computed once: the one result every binding
/// returns (the native package's `fm.sweep`, the in-browser package's, the lab's curves).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curve {
    /// The rows, the reference and the options.
    pub sweep: Sweep,
    /// The divergence exponent on the sweep's own points in [1e4, 1e8] N/m
    /// ([`Sweep::exponent`]); `None` when it cannot be fitted.
    pub exponent: Option<Fit>,
    /// Why the exponent could not be fitted (the core's refusal as data), else `None`.
    pub exponent_error: Option<Refusal>,
    /// Where the fixed route's sign is wrong, N/m ([`wrong_sign_bands`]).
    pub wrong_sign: Vec<KBand>,
}

/// How far a sweep has got: `done` rows of `total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Progress {
    /// Rows computed so far.
    pub done: usize,
    /// Rows the sweep will compute.
    pub total: usize,
}

/// Who watches a sweep: a clock for every route's wall time (`RouteRow::wall_s`), and an
/// observer told the [`Progress`] on the calling thread after every chunk of rows. An
/// observer that returns an error stops the sweep there (a binding's cancel: Ctrl-C in
/// Python); the sweep returns that error and no rows.
#[derive(Default)]
pub struct Watch<'a> {
    /// The clock the rows are timed with (none: `wall_s` is `None`).
    pub clock: Option<&'a Clock>,
    /// Called with the progress after each chunk; none: the rows run in one chunk.
    pub progress: Option<&'a mut dyn FnMut(Progress) -> Result<()>>,
}

/// Rows per chunk when an observer watches: at most 50 chunks per sweep, and with the
/// `parallel` feature at least 16 rows per chunk, so that the rows still run in parallel
/// (without it, as in the browser, a chunk can be one row).
fn chunk_size(total: usize) -> usize {
    let least = if cfg!(feature = "parallel") { 16 } else { 1 };
    total.div_ceil(50).max(least)
}

/// Run the routes at every stiffness in `ks` (no clock, no observer; see [`sweep_curve`]).
pub fn sweep(drop: &Drop, ks: &[f64], opts: &SweepOptions) -> Result<Sweep> {
    Ok(sweep_curve(drop, ks, opts, Watch::default())?.sweep)
}

/// The sweep: validate the drop, `opts` and every k once, compute the rigid reference once,
/// run the routes at every stiffness in `ks` (rows in the order given; watched by `watch`), and
/// read the exponent and the wrong-sign bands off the rows.
pub fn sweep_curve(
    drop: &Drop,
    ks: &[f64],
    opts: &SweepOptions,
    mut watch: Watch<'_>,
) -> Result<Curve> {
    drop.validate()?;
    opts.validate()?;
    for &k in ks {
        positive("k", k)?;
    }
    let reference = exact(drop, &ExactOptions::default())?;
    let clock = watch.clock;
    let starts = Starts::new(drop, ks, opts, clock);
    let row = |&k: &f64| sweep_row(drop, k, opts, &reference, &starts, clock);
    let total = ks.len();
    let size = match watch.progress {
        Some(_) => chunk_size(total),
        None => total.max(1),
    };
    let mut rows = Vec::with_capacity(total);
    for chunk in ks.chunks(size) {
        #[cfg(feature = "parallel")]
        let part = {
            use rayon::prelude::*;
            chunk.par_iter().map(row).collect::<Result<Vec<_>>>()?
        };
        #[cfg(not(feature = "parallel"))]
        let part = chunk.iter().map(row).collect::<Result<Vec<_>>>()?;
        rows.extend(part);
        if let Some(observe) = watch.progress.as_mut() {
            observe(Progress {
                done: rows.len(),
                total,
            })?;
        }
    }
    let sweep = Sweep {
        options: *opts,
        exact: Flat::from(&reference),
        rows,
    };
    let (exponent, exponent_error) = match sweep.exponent() {
        Ok(fit) => (Some(fit), None),
        Err(e) => (None, Some(Refusal::from(&e))),
    };
    Ok(Curve {
        exponent,
        exponent_error,
        wrong_sign: sweep.wrong_sign_bands(),
        sweep,
    })
}

/// Where every k's fixed and corrected rollouts at the sweep's step resume: after the
/// first fall's steps above ground, which no k changes (computed and timed once per sweep;
/// each row's `wall_s` adds that time). A start that cannot be computed is left out: the
/// route itself then says why.
struct Starts {
    fixed: Option<FixedStart>,
    fixed_wall: Option<f64>,
    corrected: Option<CorrectedStart>,
    corrected_wall: Option<f64>,
}

impl Starts {
    fn new(drop: &Drop, ks: &[f64], opts: &SweepOptions, clock: Option<&Clock>) -> Starts {
        let some = !ks.is_empty();
        let (fixed, fixed_wall) = if some {
            timed(clock, || {
                FixedStart::new(drop, opts.dt, &FixedOptions::default()).ok()
            })
        } else {
            (None, None)
        };
        let (corrected, corrected_wall) = if some && opts.corrected {
            timed(clock, || {
                CorrectedStart::new(drop, opts.dt, &CorrectedOptions::default()).ok()
            })
        } else {
            (None, None)
        };
        Starts {
            fixed,
            fixed_wall,
            corrected,
            corrected_wall,
        }
    }
}

/// Every asked-for route at one stiffness, compared with the reference.
fn sweep_row(
    drop: &Drop,
    k: f64,
    opts: &SweepOptions,
    reference: &RouteResult,
    starts: &Starts,
    clock: Option<&Clock>,
) -> Result<SweepRow> {
    let (f, fixed_wall) = timed(clock, || match &starts.fixed {
        Some(s) => fixed_from(drop, k, opts.dt, &FixedOptions::default(), s),
        None => fixed(drop, k, opts.dt, &FixedOptions::default()),
    });
    let f = f?;
    let fixed_wall = plus(starts.fixed_wall, fixed_wall);
    let tol = match &opts.tolerance {
        Some(t) => {
            let (r, wall) = timed(clock, || tolerance(drop, k, t));
            Some(RouteRow::timed(&r?, reference, wall))
        }
        None => None,
    };
    let cor = if opts.corrected {
        let (c, wall) = timed(clock, || match &starts.corrected {
            Some(s) => corrected_from(drop, k, opts.dt, &CorrectedOptions::default(), s),
            None => corrected(drop, k, opts.dt, &CorrectedOptions::default()),
        });
        Some(RouteRow::timed(
            &c?,
            reference,
            plus(starts.corrected_wall, wall),
        ))
    } else {
        None
    };
    let bl = if opts.blame {
        // The split of the fixed rollout just run (`blame` would run it again).
        Some(blame_of(drop, k, &f)?)
    } else {
        None
    };
    Ok(SweepRow {
        k,
        fixed: RouteRow::timed(&f, reference, fixed_wall),
        tolerance_cost_ratio: tol
            .as_ref()
            .map(|t| t.cost.force_evals as f64 / f.cost.force_evals as f64),
        tolerance: tol,
        corrected: cor,
        blame: bl,
    })
}
