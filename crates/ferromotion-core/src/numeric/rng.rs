//! Seeded random numbers that are the same on every platform (native, wasm): SplitMix64, and
//! the isotropic unit directions the gradient checker probes along.

/// SplitMix64: a small, seedable, platform-independent generator.
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1).
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        libm::sqrt(-2.0 * libm::log(u)) * libm::cos(2.0 * std::f64::consts::PI * v)
    }
}

/// `count` seeded random unit vectors in n dimensions (isotropic).
pub fn random_directions(n: usize, count: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = SplitMix64(seed);
    (0..count)
        .map(|_| {
            let v: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
            let norm = libm::sqrt(v.iter().map(|a| a * a).sum::<f64>());
            v.into_iter().map(|a| a / norm).collect()
        })
        .collect()
}
