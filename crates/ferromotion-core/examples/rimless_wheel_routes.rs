//! The rimless wheel's return map, route by route: the table of `docs/systems.md`.
//!
//! `cargo run --release -p ferromotion-core --example rimless_wheel_routes` (about a minute;
//! each route's row is reported on stderr as it finishes).

use ferromotion_core::systems::wheel::table::{markdown, route_table, TableOptions};
use ferromotion_core::systems::RimlessWheel;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let w = RimlessWheel {
        half_angle: 0.3,
        slope: 0.08,
        length: 1.0,
        gravity: 9.81,
    };
    println!(
        "rimless wheel: half_angle {} rad, slope {} rad, L {} m, g {} m/s²; c² = cos²(2·half_angle) = {:.12}\n",
        w.half_angle, w.slope, w.length, w.gravity, w.multiplier()
    );
    let start = std::time::Instant::now();
    let rows = route_table(&w, &TableOptions::default(), &mut |r| {
        eprintln!(
            "[{:6.1} s] {}, {}",
            start.elapsed().as_secs_f64(),
            r.route,
            r.setting
        )
    })?;
    println!("{}", markdown(&w, &rows));
    Ok(())
}
