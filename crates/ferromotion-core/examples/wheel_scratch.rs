use ferromotion_core::hybrid::HybridOptions;
use ferromotion_core::systems::wheel::multiplier::chained;
use ferromotion_core::systems::wheel::penalty::*;
use ferromotion_core::systems::wheel::penalty_fixed::*;
use ferromotion_core::systems::RimlessWheel;
use nalgebra::DVector;
fn main() {
    let w = RimlessWheel {
        half_angle: 0.3,
        slope: 0.08,
        length: 1.0,
        gravity: 9.81,
    };
    let x0 = DVector::from_row_slice(&w.fixed_point());
    let ch = chained(&w, &x0, 1, &HybridOptions::default(), &mut |_| {}).unwrap();
    for k in [1e3, 1e4, 1e5, 1e6] {
        for f in [0.05, 0.005] {
            let t = std::time::Instant::now();
            let pw = PenaltyWheel {
                wheel: w,
                stiffness: k,
                damping_ratio: 1.0,
            };
            let dt = f / k.sqrt();
            match penalty_fixed(&pw, &pw.rigid_start(ch.start[1]), dt, 40, 50) {
                Ok(r) => println!(
                    "k {k:e} dt {dt:e}: N1 {:.6} N10 {:.6} N50 {:.6} d50 {:.3e} neg {:?} {:?}",
                    r[0].per_step,
                    r[9].per_step,
                    r[49].per_step,
                    r[49].derivative,
                    r.iter().find(|m| m.derivative < 0.0).map(|m| m.horizon),
                    t.elapsed()
                ),
                Err(e) => println!("k {k:e}: {e}"),
            }
        }
    }
}
