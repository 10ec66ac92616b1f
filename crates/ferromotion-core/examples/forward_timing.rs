//! Wall time of the tolerance route's one-rollout forward sensitivities against the fixed
//! route: `cargo run --release --example forward_timing`.
//!
//! For each k, in one process: the fixed route at dt = 1e-4 (the drop's default step),
//! the tolerance route with events and `jacobian = forward` at several rtol, and the
//! Richardson option for comparison. Prints the error against `flow` (the exact
//! derivative of the same penalty ODE) and against `exact` (rigid), the sign of
//! dv/dy0, force evaluations, and wall time per Jacobian as a ratio to the fixed route.
use ferromotion_core::physics::state::max_abs;
use ferromotion_core::*;
use std::time::Instant;

fn timed<T>(f: impl Fn() -> Result<T>) -> Result<(T, f64)> {
    // Repeat for at least 200 ms and take the best of five batches: a shared machine.
    let mut best = f64::INFINITY;
    let mut out = f()?;
    for _ in 0..5 {
        let start = Instant::now();
        let mut n = 0u32;
        while start.elapsed().as_secs_f64() < 0.04 {
            out = f()?;
            n += 1;
        }
        best = best.min(start.elapsed().as_secs_f64() / f64::from(n));
    }
    Ok((out, best))
}

fn main() -> Result<()> {
    let drop = Drop::default();
    let dt = 1e-4;
    let reference = exact(&drop, &ExactOptions::default())?;
    println!(
        "{:>6} | {:<26} {:>10} {:>10} {:>5} {:>7} {:>11} {:>8}",
        "k", "route", "err/flow", "err/exact", "sign", "evals", "time", "vs fixed"
    );
    for k in [1e5, 1e6, 1e7, 1e8] {
        let fl = flow(&drop, k, &FlowOptions::default())?;
        let (fx, t_fixed) = timed(|| fixed(&drop, k, dt, &FixedOptions::default()))?;
        let row = |name: &str, r: &RouteResult, t: f64| {
            let rel = |a: &Jacobian, b: &Jacobian| max_abs(&(a - b)) / max_abs(b);
            let right = r.jacobian[(1, 0)].signum() == reference.jacobian[(1, 0)].signum();
            println!(
                "{:>6.0e} | {:<26} {:>10.2e} {:>10.2e} {:>5} {:>7} {:>9.1}us {:>7.2}x",
                k,
                name,
                rel(&r.jacobian, &fl.jacobian),
                rel(&r.jacobian, &reference.jacobian),
                if right { "right" } else { "WRONG" },
                r.cost.force_evals + r.cost.state_force_evals,
                t * 1e6,
                t / t_fixed
            );
        };
        row("fixed dt=1e-4", &fx, t_fixed);
        for rtol in [1e-6, 1e-8, 1e-10] {
            let opts = ToleranceOptions {
                rtol,
                events: true,
                jacobian: JacobianMethod::Forward,
                ..Default::default()
            };
            let (r, t) = timed(|| tolerance(&drop, k, &opts))?;
            row(&format!("forward, events, rtol {rtol:.0e}"), &r, t);
        }
        let opts = ToleranceOptions {
            rtol: 1e-6,
            events: true,
            ..Default::default()
        };
        let (r, t) = timed(|| tolerance(&drop, k, &opts))?;
        row("richardson, events, 1e-6", &r, t);
    }
    Ok(())
}
