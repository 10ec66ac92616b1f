//! Native half of the golden parity test (native vs WebAssembly, bit for bit).
//!
//! Runs `scenario::evaluate` on every drop of `tests/golden/drops.json` (or the file named
//! as the first argument) and prints a JSON array on stdout, one line per drop: the
//! `Evaluation`, or `{"error": kind, "message": ...}` when the core refuses the drop.
//! `tests/golden/parity.mjs` runs the same drops through the `--target nodejs` build under
//! Node and compares every number with this dump.
//!
//! ```text
//! cargo run --release -p ferromotion-core --example golden_dump > target/golden/native.json
//! ```

use ferromotion_core::lab::scenario::{evaluate, Scenario};
use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/golden/drops.json").to_string()
    });
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let drops = Scenario::list_from_json(&text)?;
    let start = std::time::Instant::now();
    let mut lines = Vec::with_capacity(drops.len());
    let mut refused = 0;
    for sc in &drops {
        lines.push(match evaluate(sc) {
            Ok(ev) => serde_json::to_string(&ev)?,
            Err(e) => {
                refused += 1;
                serde_json::json!({ "error": e.kind(), "message": e.to_string() }).to_string()
            }
        });
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "[\n{}\n]", lines.join(",\n"))?;
    eprintln!(
        "golden_dump: {} drops ({refused} refused) in {:.2} s",
        drops.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
