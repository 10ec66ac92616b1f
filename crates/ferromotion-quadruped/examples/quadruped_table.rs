//! The quadruped's two-axis table (issue #7): rigid vs penalty contact over stiffness.
//!
//! ```text
//! cargo run --release -p ferromotion-quadruped --example quadruped_table            # full, ~1–2 min
//! cargo run --release -p ferromotion-quadruped --example quadruped_table -- --fast  # no dt/100 gradient
//! cargo run --release -p ferromotion-quadruped --example quadruped_table -- --json  # the report as JSON
//! ```
//!
//! Columns, per law (one gait period, 0.5 s at dt = 1 ms, from a 1 cm landing at 0.3 m/s):
//! forward fidelity — largest penetration (m), largest slip of a "sticking" foot (m/s),
//! net contact work (J), energy change (J), largest trunk distance to the same law at
//! dt/100 (m), distance to the rigid run (m, information only), contact-mode changes;
//! gradient accuracy — the tangent against probe-stable central differences of the same
//! law at dt ("tan err"), central differences at a 1e-4 probe against the same reference
//! ("1e-4 err"), the tangent against probe-stable differences of the law at dt/100 ("conv
//! err"; for the penalty law, of its event-located rollout), that reference against the
//! same probe at dt/200 ("spread"), the fixed-step dt/100 tangent against it ("ref err"),
//! and how many of the three reference columns are probe-stable at dt ("cert") and at
//! dt/100 ("ccert"). Below the table, every reference column that is not certified says
//! why, with the number that failed.

use ferromotion_quadruped::{quadruped_experiment, ContactLaw, QuadrupedExperiment};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let cfg = QuadrupedExperiment {
        converged_gradient: !args.iter().any(|a| a == "--fast"),
        ..QuadrupedExperiment::default()
    };
    let start = Instant::now();
    let rep = quadruped_experiment(&cfg)?;
    if args.iter().any(|a| a == "--json") {
        let mut slim = rep.clone();
        for r in std::iter::once(&mut slim.rigid).chain(slim.penalty.iter_mut()) {
            r.trajectory = None;
        }
        println!("{}", serde_json::to_string_pretty(&slim)?);
        return Ok(());
    }
    println!(
        "quadruped: {:.1} kg, mu = {}, trot period {} s, dt = {} s, converged runs at dt/{}; penalty damping ratio {} of {} kg",
        cfg.robot.total_mass(),
        cfg.robot.friction,
        cfg.robot.period,
        cfg.dt,
        cfg.refinement,
        cfg.damping_ratio,
        cfg.reference_mass
    );
    println!("{}", rep.table());
    println!("contact-mode changes per period (touchdown, lift-off, stick->slide, slide->stick, reversal):");
    for r in std::iter::once(&rep.rigid).chain(rep.penalty.iter()) {
        let label = match r.contact {
            ContactLaw::Rigid => "rigid".to_string(),
            ContactLaw::Penalty(p) => format!("penalty k={:.0e}", p.stiffness),
        };
        if let (Some(m), Some(f), Some(g)) = (&r.modes, &r.forward, &r.gradient) {
            println!(
                "  {label:<16} {:>5} = {} + {} + {} + {} + {}   per foot {:?}; travel {:.3} m; refined-tangent spread (dt/50 vs dt/100) {}",
                m.total,
                m.touchdowns,
                m.liftoffs,
                m.stick_to_slide,
                m.slide_to_stick,
                m.slide_reversals,
                m.per_foot,
                f.travel,
                g.refined_tangent_spread
                    .map_or_else(|| "-".to_string(), |s| format!("{s:.2e}"))
            );
        }
    }
    if let Some(l) = &rep.rigid.lcp {
        println!(
            "rigid LCP over {} contact steps: max pivots {}, complementarity {:.1e} J, cone {:.1e} N·s, sticking slip {:.1e} m/s, normal residual {:.1e} m/s",
            l.steps,
            l.max_pivots,
            l.max_complementarity,
            l.max_cone_violation,
            l.max_stick_slip,
            l.max_normal_residual
        );
    }
    println!("total {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}
