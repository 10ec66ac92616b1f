use ferromotion_core::*;
use std::hint::black_box;
use std::time::Instant;
fn best(f: &dyn Fn()) -> f64 {
    let t0 = Instant::now();
    f();
    let once = t0.elapsed().as_secs_f64();
    let reps = ((0.005 / once).ceil() as usize).max(1);
    let mut b = f64::INFINITY;
    for _ in 0..200 {
        let t0 = Instant::now();
        for _ in 0..reps {
            f();
        }
        b = b.min(t0.elapsed().as_secs_f64() / reps as f64);
    }
    b
}
fn main() {
    let drop = Drop::default();
    let k: f64 = std::env::args().nth(1).map_or(1e6, |s| s.parse().unwrap());
    let dt: f64 = std::env::args().nth(2).map_or(1e-4, |s| s.parse().unwrap());
    let bf = best(&|| {
        black_box(fixed(black_box(&drop), k, dt, &FixedOptions::default()).unwrap());
    });
    let bc = best(&|| {
        black_box(corrected(black_box(&drop), k, dt, &CorrectedOptions::default()).unwrap());
    });
    let br = best(&|| {
        black_box(rk4(black_box(&drop), k, dt, &Rk4Options::default()).unwrap());
    });
    println!(
        "fixed {:.1} us  corrected {:.1} us ({:.2}x)  rk4 {:.1} us ({:.2}x)",
        bf * 1e6,
        bc * 1e6,
        bc / bf,
        br * 1e6,
        br / bf
    );
}
