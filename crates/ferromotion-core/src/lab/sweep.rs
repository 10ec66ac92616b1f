//! Sweeps over stiffness: every route's readouts at many k, in parallel when the
//! `parallel` feature is on (the WebAssembly build leaves it off). With a clock
//! ([`sweep_timed`]) each row also carries the wall time of each route's Jacobian, measured
//! on the thread that ran it (rows run in parallel, so under load: for reading only).

use crate::error::{positive, Result};
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

/// A sweep's rows and its reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    /// Fixed step of the sweep, s.
    pub dt: f64,
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

/// Run the routes at every stiffness in `ks` (no wall times: [`sweep_timed`] with a clock).
pub fn sweep(drop: &Drop, ks: &[f64], opts: &SweepOptions) -> Result<Sweep> {
    sweep_timed(drop, ks, opts, None)
}

/// [`sweep`], with every route's wall time per Jacobian (`RouteRow::wall_s`) read from
/// `clock` when one is given.
pub fn sweep_timed(
    drop: &Drop,
    ks: &[f64],
    opts: &SweepOptions,
    clock: Option<&Clock>,
) -> Result<Sweep> {
    drop.validate()?;
    positive("dt", opts.dt)?;
    for &k in ks {
        positive("k", k)?;
    }
    if let Some(t) = &opts.tolerance {
        t.integrator()?;
    }
    let reference = exact(drop, &ExactOptions::default())?;
    // Every k's rollouts at this step resume after the first fall's steps above ground,
    // which no k changes (computed once here, timed once: each row's `wall_s` adds that
    // time). A start that cannot be computed is left out: the route itself then says why.
    let (dt, fixed_opts, corrected_opts) = (
        opts.dt,
        FixedOptions::default(),
        CorrectedOptions::default(),
    );
    let some = !ks.is_empty();
    let (fixed_start, fixed_start_wall) = if some {
        timed(clock, || FixedStart::new(drop, dt, &fixed_opts).ok())
    } else {
        (None, None)
    };
    let (corrected_start, corrected_start_wall) = if some && opts.corrected {
        timed(clock, || {
            CorrectedStart::new(drop, dt, &corrected_opts).ok()
        })
    } else {
        (None, None)
    };
    let row = |&k: &f64| -> Result<SweepRow> {
        let (f, fixed_wall) = timed(clock, || match &fixed_start {
            Some(s) => fixed_from(drop, k, dt, &fixed_opts, s),
            None => fixed(drop, k, dt, &fixed_opts),
        });
        let f = f?;
        let fixed_wall = plus(fixed_start_wall, fixed_wall);
        let tol = match &opts.tolerance {
            Some(t) => {
                let (r, wall) = timed(clock, || tolerance(drop, k, t));
                Some(RouteRow::timed(&r?, &reference, wall))
            }
            None => None,
        };
        let cor = if opts.corrected {
            let (c, wall) = timed(clock, || match &corrected_start {
                Some(s) => corrected_from(drop, k, dt, &corrected_opts, s),
                None => corrected(drop, k, dt, &corrected_opts),
            });
            Some(RouteRow::timed(
                &c?,
                &reference,
                plus(corrected_start_wall, wall),
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
            fixed: RouteRow::timed(&f, &reference, fixed_wall),
            tolerance_cost_ratio: tol
                .as_ref()
                .map(|t| t.cost.force_evals as f64 / f.cost.force_evals as f64),
            tolerance: tol,
            corrected: cor,
            blame: bl,
        })
    };
    #[cfg(feature = "parallel")]
    let rows = {
        use rayon::prelude::*;
        ks.par_iter().map(row).collect::<Result<Vec<_>>>()?
    };
    #[cfg(not(feature = "parallel"))]
    let rows = ks.iter().map(row).collect::<Result<Vec<_>>>()?;
    Ok(Sweep {
        dt: opts.dt,
        exact: Flat::from(&reference),
        rows,
    })
}
