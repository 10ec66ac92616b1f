//! The native half of `make bench` (scripts/bench.sh): times the core and prints one JSON
//! document on stdout, which benches/bench.py sets beside the C loop, WebAssembly, JAX,
//! NumPy and plain Python. A benchmark, not a test: it asserts nothing.
//!
//! ```text
//! cargo bench -p ferromotion-core --features parallel --bench core -- [fixed|sweep|costs|scaling]...
//! ```
//! With no section named, all four run:
//! - `fixed`: the fixed route with its tangent at k = 1e6 N/m, dt = 1e-6 s (8e5 steps, so
//!   the per-call work outside the loop is far below 1%), ns per step;
//! - `sweep`: `sweep()` over np.logspace(2, 8, 61) at dt = 1e-4 s on 1 thread and on all;
//! - `costs`: every route at k = 1e4, 1e6, 1e8 (tolerance with Richardson and with forward
//!   sensitivities, with and without events): force evaluations, wall time per Jacobian
//!   and its ratio to the fixed route's, gradient error against exact and against flow;
//! - `scaling`: sweep wall time against its size (61, 244, 976 k) and threads (1, 2).
//!
//! Each time is the best and the median of several samples, each sample long enough
//! (tens of ms) for the clock; on a busy machine the best is the steadier of the two.
#![allow(clippy::disallowed_methods)] // a native benchmark: std floats are fine here

use ferromotion_core::physics::integrate::fixed::{euler_with_tangent, step_count};
use ferromotion_core::*;
use serde_json::{json, Value};
use std::hint::black_box;
use std::time::Instant;

/// Seconds per call of `f`: (best, median) over `samples` samples of about `sample_s` each.
fn time<R>(samples: usize, sample_s: f64, mut f: impl FnMut() -> R) -> (f64, f64) {
    let t0 = Instant::now();
    black_box(f());
    let once = t0.elapsed().as_secs_f64().max(1e-9);
    let reps = ((sample_s / once).ceil() as usize).max(1);
    let mut per_call: Vec<f64> = (0..samples)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..reps {
                black_box(f());
            }
            t0.elapsed().as_secs_f64() / reps as f64
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    (per_call[0], per_call[samples / 2])
}

/// np.logspace(lo, hi, n): n stiffnesses evenly spaced in log10 k, N/m.
fn logspace(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 10f64.powf(lo + (hi - lo) * i as f64 / (n - 1) as f64))
        .collect()
}

/// A rayon pool of `threads` threads.
fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon thread pool")
}

fn threads_available() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The fixed route at one k: the public route (`fixed`) and its bare loop.
fn bench_fixed(k: f64, dt: f64) -> Value {
    let drop = Drop::default();
    let opts = FixedOptions::default();
    let n = step_count(drop.t_final, dt, opts.max_steps).expect("a valid step") as f64;
    let r = fixed(&drop, k, dt, &opts).expect("the fixed route");
    let (best, median) = time(9, 0.05, || {
        fixed(black_box(&drop), black_box(k), black_box(dt), &opts)
    });
    let law = drop.penalty(k).expect("a valid k");
    let (loop_best, loop_median) = time(9, 0.05, || {
        euler_with_tangent(
            black_box(&law),
            drop.gravity,
            black_box(dt),
            n as u64,
            drop.x0(),
            Jacobian::identity(),
        )
    });
    json!({
        "impl": "native", "k": k, "dt": dt, "steps": n,
        "ns_per_step": best * 1e9 / n, "ns_per_step_median": median * 1e9 / n,
        "loop_ns_per_step": loop_best * 1e9 / n, "loop_ns_per_step_median": loop_median * 1e9 / n,
        "state": [r.state[0], r.state[1]],
        "jacobian": ferromotion_core::physics::state::to_row_major(&r.jacobian),
    })
}

/// A fixed-route sweep of `ks` at `dt` on a pool of `threads`: (best, median) seconds.
fn time_sweep(ks: &[f64], dt: f64, threads: usize, samples: usize) -> (f64, f64) {
    let drop = Drop::default();
    let opts = SweepOptions {
        dt,
        ..SweepOptions::default()
    };
    let p = pool(threads);
    p.install(|| {
        time(samples, 0.05, || {
            sweep(&drop, black_box(ks), &opts).expect("a sweep")
        })
    })
}

fn bench_sweep() -> Value {
    let ks = logspace(2.0, 8.0, 61);
    let all = threads_available();
    let mut rows = Vec::new();
    for threads in if all > 1 { vec![1, all] } else { vec![1] } {
        let (best, median) = time_sweep(&ks, 1e-4, threads, 9);
        rows.push(json!({"threads": threads, "seconds": best, "seconds_median": median}));
    }
    json!({"ks": ks.len(), "dt": 1e-4, "steps_per_k": 8000, "runs": rows})
}

fn bench_scaling() -> Value {
    let mut rows = Vec::new();
    for n in [61, 244, 976] {
        let ks = logspace(2.0, 8.0, n);
        for threads in [1, 2] {
            let (best, median) = time_sweep(&ks, 1e-4, threads, 5);
            rows.push(
                json!({"ks": n, "threads": threads, "seconds": best, "seconds_median": median}),
            );
        }
    }
    json!({"dt": 1e-4, "runs": rows})
}

/// The tolerance rows of the costs table: (name, rtol, events, jacobian). Forward
/// sensitivities need events, so forward without events is a row that says so ('n/a').
const TOLERANCE_ROWS: [(&str, f64, bool, JacobianMethod); 7] = [
    (
        "tolerance richardson rtol 1e-6",
        1e-6,
        false,
        JacobianMethod::Richardson,
    ),
    (
        "tolerance richardson rtol 1e-11",
        1e-11,
        false,
        JacobianMethod::Richardson,
    ),
    (
        "tolerance richardson events 1e-6",
        1e-6,
        true,
        JacobianMethod::Richardson,
    ),
    (
        "tolerance forward rtol 1e-6",
        1e-6,
        false,
        JacobianMethod::Forward,
    ),
    (
        "tolerance forward events 1e-6",
        1e-6,
        true,
        JacobianMethod::Forward,
    ),
    (
        "tolerance forward events 1e-8",
        1e-8,
        true,
        JacobianMethod::Forward,
    ),
    (
        "tolerance forward events 1e-11",
        1e-11,
        true,
        JacobianMethod::Forward,
    ),
];

fn bench_costs() -> Value {
    let drop = Drop::default();
    let reference = exact(&drop, &ExactOptions::default()).expect("the rigid reference");
    let dt = 1e-4;
    let mut rows = Vec::new();
    for k in [1e4, 1e6, 1e8] {
        let flow_ref = flow(&drop, k, &FlowOptions::default()).expect("the flow route");
        type Route<'a> = Box<dyn Fn() -> Result<RouteResult> + 'a>;
        let mut routes: Vec<(String, bool, Route)> = vec![
            (
                "exact".into(),
                false,
                Box::new(|| exact(&drop, &ExactOptions::default())),
            ),
            (
                "fixed".into(),
                true,
                Box::new(move || fixed(&drop, k, dt, &FixedOptions::default())),
            ),
            (
                "corrected".into(),
                true,
                Box::new(move || corrected(&drop, k, dt, &CorrectedOptions::default())),
            ),
        ];
        for (name, rtol, events, jacobian) in TOLERANCE_ROWS {
            let opts = ToleranceOptions {
                rtol,
                events,
                jacobian,
                ..ToleranceOptions::default()
            };
            routes.push((
                name.into(),
                true,
                Box::new(move || tolerance(&drop, k, &opts)),
            ));
        }
        routes.push((
            "rk4".into(),
            true,
            Box::new(move || rk4(&drop, k, dt, &Rk4Options::default())),
        ));
        routes.push((
            "flow".into(),
            false,
            Box::new(move || flow(&drop, k, &FlowOptions::default())),
        ));
        for (name, counts, f) in routes {
            let r = match f() {
                Ok(r) => r,
                // A refusal is a row too (forward without events): it says why, untimed.
                Err(e) => {
                    rows.push(json!({"k": k, "route": name, "refused": e.to_string()}));
                    continue;
                }
            };
            let (best, median) = time(5, 0.02, &f);
            let vs_flow = physics::state::max_abs(&(r.jacobian - flow_ref.jacobian))
                / physics::state::max_abs(&flow_ref.jacobian);
            rows.push(json!({
                "k": k, "route": name,
                "force_evals": if counts { Value::from(r.cost.force_evals) } else { Value::Null },
                "state_force_evals": if counts { Value::from(r.cost.state_force_evals) } else { Value::Null },
                "steps": r.cost.steps, "rollouts": r.cost.rollouts,
                "seconds": best, "seconds_median": median,
                "gradient_error": compare(&r, &reference).gradient,
                "gradient_error_vs_flow": vs_flow,
                "right_sign": r.jacobian[(1, 0)].signum() == reference.jacobian[(1, 0)].signum(),
                "probe_dependent": r.probe_dependent,
            }));
        }
    }
    json!({"dt": dt, "rows": rows})
}

fn main() {
    // `cargo bench` passes `--bench`; every other argument names a section.
    let mut sections: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if sections.is_empty() {
        sections = ["fixed", "sweep", "costs", "scaling"]
            .map(String::from)
            .to_vec();
    }
    let mut out = serde_json::Map::new();
    out.insert("threads_available".into(), threads_available().into());
    for s in &sections {
        eprintln!("bench core: {s}");
        let v = match s.as_str() {
            "fixed" => bench_fixed(1e6, 1e-6),
            "sweep" => bench_sweep(),
            "costs" => bench_costs(),
            "scaling" => bench_scaling(),
            other => {
                eprintln!("bench core: unknown section {other:?} (fixed, sweep, costs, scaling)");
                std::process::exit(2);
            }
        };
        out.insert(s.clone(), v);
    }
    println!("{}", Value::Object(out));
}
