//! The cures side by side: `cargo run --release --example cures_table`.
//!
//! For each k and dt: the fixed route, the corrected route, and the tolerance route
//! without and with event location. Gradient error against `exact` (and `flow`), force
//! evaluations per Jacobian (tolerance: its 8 rollouts), and wall time per Jacobian.
use ferromotion_core::physics::state::max_abs;
use ferromotion_core::*;
use std::time::Instant;

fn timed<T>(f: impl Fn() -> Result<T>) -> Result<(T, f64)> {
    // Repeat until 50 ms have passed, so the fast routes get a stable figure.
    let start = Instant::now();
    let mut n = 0u32;
    let mut out = f()?;
    n += 1;
    while start.elapsed().as_secs_f64() < 0.05 {
        out = f()?;
        n += 1;
    }
    Ok((out, start.elapsed().as_secs_f64() / n as f64))
}

fn main() -> Result<()> {
    let drop = Drop::default();
    let reference = exact(&drop, &ExactOptions::default())?;
    println!(
        "{:>8} {:>7} | {:<28} {:>10} {:>10} {:>9} {:>10}",
        "k", "dt", "route", "err/exact", "err/flow", "evals", "time"
    );
    for k in [1e2, 1e4, 1e6, 1e8] {
        let fl = flow(&drop, k, &FlowOptions::default())?;
        let vs_flow =
            |r: &RouteResult| max_abs(&(r.jacobian - fl.jacobian)) / max_abs(&fl.jacobian);
        let row = |dt: String, name: &str, r: &RouteResult, t: f64| {
            println!(
                "{:>8.0e} {:>7} | {:<28} {:>10.2e} {:>10.2e} {:>9} {:>8.2} ms",
                k,
                dt,
                name,
                compare(r, &reference).gradient,
                vs_flow(r),
                r.cost.force_evals,
                t * 1e3
            );
        };
        for dt in [1e-4, 1e-5, 1e-6] {
            let (f, tf) = timed(|| fixed(&drop, k, dt, &FixedOptions::default()))?;
            row(format!("{dt:.0e}"), "fixed", &f, tf);
            let (c, tc) = timed(|| corrected(&drop, k, dt, &CorrectedOptions::default()))?;
            row(format!("{dt:.0e}"), "corrected", &c, tc);
        }
        for (rtol, events) in [(1e-11, false), (1e-6, true), (1e-11, true)] {
            let opts = ToleranceOptions {
                rtol,
                events,
                ..Default::default()
            };
            let (t, tt) = timed(|| tolerance(&drop, k, &opts))?;
            let name = format!(
                "tolerance rtol={rtol:.0e}{}",
                if events { " events" } else { "" }
            );
            row("-".into(), &name, &t, tt);
        }
    }
    Ok(())
}
