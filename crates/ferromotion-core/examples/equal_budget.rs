//! The equal-budget table and the probe-size trap at the drop's defaults:
//! `cargo run --release -p ferromotion-core --example equal_budget [k] [budget]`.

use ferromotion_core::{equal_budget, BudgetOptions, Drop};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut opts = BudgetOptions::default();
    if let Some(k) = args.next() {
        opts.k = k.parse()?;
    }
    if let Some(b) = args.next() {
        opts.budget = b.parse()?;
    }
    print!("{}", equal_budget(&Drop::default(), &opts)?.table());
    Ok(())
}
