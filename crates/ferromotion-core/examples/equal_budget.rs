//! The equal-budget table and the probe-size trap at the drop's defaults:
//! `cargo run --release -p ferromotion-core --example equal_budget [k] [budget]`.

use ferromotion_core::lab::clock::{monotonic_seconds, Clock};
use ferromotion_core::{equal_budget_timed, BudgetOptions, Drop};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut opts = BudgetOptions::default();
    if let Some(k) = args.next() {
        opts.k = k.parse()?;
    }
    if let Some(b) = args.next() {
        opts.budget = b.parse()?;
    }
    let clock = Clock::new(monotonic_seconds);
    let table = equal_budget_timed(&Drop::default(), &opts, Some(&clock))?;
    print!("{}", table.table());
    Ok(())
}
