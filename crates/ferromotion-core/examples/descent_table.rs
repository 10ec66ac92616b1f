//! Print the descent experiment's table: `cargo run --release --example descent_table`.
use ferromotion_core::experiments::descent::{descent, Arm, Problem};

fn main() -> Result<(), ferromotion_core::FerroError> {
    let p = Problem::default();
    let d = descent(&p, &Arm::standard())?;
    let l = &d.landscape;
    println!(
        "target x(T) = ({:.4} m, {:.4} m/s) from θ* = {:?}; grid minimum {:?}; starts {:?}",
        d.target[0], d.target[1], p.optimum, l.grid_minimum, l.starts
    );
    println!(
        "{:<34} {:>9} {:>12} {:>10} {:>14}",
        "arm", "converged", "cannot step", "steps", "force evals"
    );
    for a in &d.arms {
        println!(
            "{:<34} {:>7}/4 {:>12} {:>10} {:>14}",
            a.label, a.converged, a.cannot_step, a.iterations, a.force_evals
        );
    }
    Ok(())
}
