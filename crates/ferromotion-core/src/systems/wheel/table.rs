//! The route table of `docs/systems.md`: for each route and step (or stiffness, for the
//! penalty wheel, [`super::penalty`] and [`super::penalty_fixed`]), the return map's N-step
//! derivative at N = 10, 20, …, the route's floor and the first horizon at which its sign is
//! wrong (printed by `cargo run --release -p ferromotion-core --example rimless_wheel_routes`).
//!
//! The first wrong sign is searched at every 10th horizon up to [`TableOptions::scan_to`],
//! then at every horizon of the first decade that holds one (the fixed route, read at every
//! horizon in one pass, at every horizon).

use nalgebra::DVector;

use super::multiplier::{chained, direct, Chain, Reading};
use super::penalty::{penalty_readings, PenaltyWheel};
use super::penalty_fixed::penalty_fixed;
use super::routes::{black_box, fixed, Scheme};
use super::RimlessWheel;
use crate::error::Result;
use crate::hybrid::HybridOptions;

/// What the table covers.
#[derive(Debug, Clone, PartialEq)]
pub struct TableOptions {
    /// The horizons shown (impacts).
    pub horizons: Vec<usize>,
    /// Search for a wrong sign up to this horizon.
    pub scan_to: usize,
    /// The steps of the fixed route, s.
    pub fixed_dts: Vec<f64>,
    /// The steps of the black-box route, s, per scheme.
    pub black_box_dts: Vec<(Scheme, f64)>,
    /// The stiffnesses k/m of the penalty wheel, s⁻² (damping ratio 1): its chained saltation
    /// route and its fixed route at dt = 0.05/√k.
    pub penalty_ks: Vec<f64>,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            horizons: vec![10, 20, 30, 40, 50],
            scan_to: 100,
            fixed_dts: vec![1e-2, 1e-3, 1e-4],
            black_box_dts: vec![
                (Scheme::SemiImplicitEuler, 1e-2),
                (Scheme::SemiImplicitEuler, 1e-3),
                (Scheme::SemiImplicitEuler, 1e-4),
                (Scheme::Rk4, 1e-2),
                (Scheme::Rk4, 1e-3),
            ],
            penalty_ks: vec![1e3, 1e4, 1e5, 1e6],
        }
    }
}

/// One row: a route at one setting.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Row {
    /// The route.
    pub route: String,
    /// Its setting (scheme and step).
    pub setting: String,
    /// The readings at the table's horizons.
    pub readings: Vec<Reading>,
    /// The first horizon whose N-step derivative is negative (c^(2N) > 0), if any up to
    /// `scanned_to`.
    pub first_wrong_sign: Option<usize>,
    /// The largest horizon searched.
    pub scanned_to: usize,
    /// |d_N - c^(2N)| at N = `scanned_to`, where c^(2N) is far below any route's error: the
    /// route's own error floor on the N-step derivative.
    pub floor: f64,
}

/// The first wrong sign of a route read one horizon at a time (see the module docs).
fn first_wrong_sign(
    scan_to: usize,
    read: &mut dyn FnMut(usize) -> Result<Reading>,
) -> Result<Option<usize>> {
    let mut right = 0;
    for n in (10..=scan_to).step_by(10) {
        if read(n)?.derivative < 0.0 {
            for m in right + 1..n {
                if read(m)?.derivative < 0.0 {
                    return Ok(Some(m));
                }
            }
            return Ok(Some(n));
        }
        right = n;
    }
    Ok(None)
}

fn row_of(
    route: &str,
    setting: String,
    opts: &TableOptions,
    read: &mut dyn FnMut(usize) -> Result<Reading>,
) -> Result<Row> {
    let readings = opts
        .horizons
        .iter()
        .map(|&n| read(n))
        .collect::<Result<Vec<_>>>()?;
    let end = read(opts.scan_to)?;
    Ok(Row {
        route: route.into(),
        setting,
        readings,
        first_wrong_sign: first_wrong_sign(opts.scan_to, read)?,
        scanned_to: opts.scan_to,
        floor: (end.derivative - end.closed_form).abs(),
    })
}

/// Every route's row, from the wheel's fixed point. Progress: `each(route finished, rows)`.
pub fn route_table(
    w: &RimlessWheel,
    opts: &TableOptions,
    each: &mut dyn FnMut(&Row),
) -> Result<Vec<Row>> {
    let hopts = HybridOptions::default();
    let top = opts
        .scan_to
        .max(opts.horizons.iter().copied().max().unwrap_or(1));
    let x0 = DVector::from_row_slice(&w.fixed_point());
    let chain: Chain = chained(w, &x0, top, &hopts, &mut |_| {})?;
    let mut rows = Vec::new();
    let mut push = |r: Row, rows: &mut Vec<Row>| {
        each(&r);
        rows.push(r);
    };
    let setting = "RK4, dt 1e-3 s, events located".to_string();
    let r = row_of("saltation, chained", setting.clone(), opts, &mut |n| {
        Ok(chain.readings[n - 1])
    })?;
    push(r, &mut rows);
    let r = row_of("saltation, direct", setting, opts, &mut |n| {
        direct(w, &chain.start, n, chain.times[n - 1], &hopts)
    })?;
    push(r, &mut rows);
    for &dt in &opts.fixed_dts {
        let all = fixed(w, Scheme::SemiImplicitEuler, &chain.start, dt, top)?;
        let mut r = row_of(
            "fixed",
            format!("semi-implicit Euler, dt {dt:e} s"),
            opts,
            &mut |n| Ok(all[n - 1]),
        )?;
        r.first_wrong_sign = all.iter().find(|r| r.derivative < 0.0).map(|r| r.horizon);
        push(r, &mut rows);
    }
    for &(scheme, dt) in &opts.black_box_dts {
        let setting = format!("{}, dt {dt:e} s", scheme.label());
        let r = row_of("black-box", setting, opts, &mut |n| {
            black_box(w, scheme, &chain.start, dt, n)
        })?;
        push(r, &mut rows);
    }
    for &k in &opts.penalty_ks {
        let pw = PenaltyWheel {
            wheel: *w,
            stiffness: k,
            damping_ratio: 1.0,
        };
        let all = penalty_readings(&pw, chain.start[1], PENALTY_WARMUP, top)?;
        let setting = format!("k {k:e} s⁻², ζ 1; RK4, dt 0.05/√k, events located");
        let mut r = row_of("penalty, chained", setting, opts, &mut |n| Ok(all[n - 1]))?;
        r.first_wrong_sign = all.iter().find(|r| r.derivative < 0.0).map(|r| r.horizon);
        push(r, &mut rows);
    }
    for &k in &opts.penalty_ks {
        let pw = PenaltyWheel {
            wheel: *w,
            stiffness: k,
            damping_ratio: 1.0,
        };
        let dt = 0.05 / libm::sqrt(k);
        let start = pw.rigid_start(chain.start[1]);
        let all = penalty_fixed(&pw, &start, dt, PENALTY_WARMUP, top)?;
        let setting = format!("k {k:e} s⁻², ζ 1; semi-implicit Euler, dt 0.05/√k");
        let mut r = row_of("penalty, fixed", setting, opts, &mut |n| Ok(all[n - 1]))?;
        r.first_wrong_sign = all.iter().find(|r| r.derivative < 0.0).map(|r| r.horizon);
        push(r, &mut rows);
    }
    Ok(rows)
}

/// Steps the penalty wheel takes from the rigid orbit before it is measured (onto its own
/// orbit: the offset shrinks by about c² per step).
pub const PENALTY_WARMUP: usize = 40;

/// The table as Markdown: per route, the per-step multiplier at each horizon (its error
/// against c² in brackets), the N-step derivative at the last horizon beside c^(2N), the
/// route's floor and the first wrong sign.
pub fn markdown(w: &RimlessWheel, rows: &[Row]) -> String {
    let Some(first) = rows.first() else {
        return String::new();
    };
    let hs: Vec<usize> = first.readings.iter().map(|r| r.horizon).collect();
    let last = *hs.last().unwrap_or(&1);
    let mut s = format!(
        "| route | setting | {} | d_{last} (c^{} = {:.3e}) | floor | first wrong sign |\n|---|---|{}---|---|---|\n",
        hs.iter().map(|n| format!("N = {n}")).collect::<Vec<_>>().join(" | "),
        2 * last,
        libm::pow(w.multiplier(), last as f64),
        "---|".repeat(hs.len()),
    );
    for r in rows {
        let cells: Vec<String> = r
            .readings
            .iter()
            .map(|m| format!("{:.6} ({:.0e})", m.per_step, m.error()))
            .collect();
        let wrong = r
            .first_wrong_sign
            .map_or(format!("none to {}", r.scanned_to), |n| format!("N = {n}"));
        let d = r.readings.last().map_or(f64::NAN, |m| m.derivative);
        s += &format!(
            "| {} | {} | {} | {d:.3e} | {:.0e} | {wrong} |\n",
            r.route,
            r.setting,
            cells.join(" | "),
            r.floor
        );
    }
    s
}
