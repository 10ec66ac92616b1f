//! Step-size control: the factor `0.9·err^(-1/5)` clamped, its fifth root by Newton steps
//! from a bit-pattern guess (the same bits natively and in WebAssembly).

/// `x^(-1/5)` for a positive, finite, normal `x`, to 2.2e-9 relative: a bit-pattern guess
/// and three division-free Newton steps on `r⁻⁵ = x`, `r ← r·(6 - x·r⁵)/5`.
///
/// The guess reads the float's bits as a scaled logarithm: `bits(x^p) ≈ p·bits(x) + C`
/// for p = -1/5. With `C = (6/5)·bits(1)` (exact at powers of 32) it is 0 to 7.3% high;
/// lowered by 3.8·2⁴⁶ it is within ±3.2%, and Newton (error e → 3e²) then goes
/// 3.2e-2 → 3e-3 → 3e-5 → 2.1e-9 (the worst case over 1e-13..1e300, sampled;
/// `tests::inv_fifth_root_is_the_power_where_the_stepper_takes_it`). Each step is written
/// `r·(1.2 - (0.2·x·r)·(r²)²)`, five operations deep, not seven: the root is on the
/// stepper's critical path (the next step size waits for it). `+ - * /` round the same way
/// natively and in WebAssembly; `libm::pow` cost a quarter of a forward rollout.
#[inline]
pub(super) fn inv_fifth_root(x: f64) -> f64 {
    const C: u64 = 0x3FF0_0000_0000_0000 / 5 * 6 - 38 * (1 << 46) / 10;
    let mut r = f64::from_bits(C - x.to_bits() / 5);
    let x5 = 0.2 * x;
    for _ in 0..3 {
        let r2 = r * r;
        r *= 1.2 - (x5 * r) * (r2 * r2);
    }
    r
}

/// The step-size factor `0.9·err^(-1/5)` clamped to `[0.2, max_grow]` (`max_grow <= 10`).
///
/// The clamp decides outside `0.09⁵ < err < 4.5⁵`, so no root is taken there; inside, the
/// fifth root is `inv_fifth_root`'s. One Newton step fewer would make a safe factor, but
/// the Richardson route differentiates whole rollouts by finite differences, and a factor
/// that is off by a kinked 1e-3 moves its probe gap (the workbench's default rtol then
/// flags k = 3e5 probe-dependent, `workbench_verdicts.rs`); at 2e-9 its kinks move a
/// rollout by about 1e-9 of one step's local error, far below the probes' own effect.
#[inline]
pub(super) fn step_factor(err: f64, max_grow: f64) -> f64 {
    // 0.9·err^(-1/5) >= 10 exactly when err <= 0.09^5, <= 0.2 when err >= 4.5^5.
    if err <= 5.9049e-6 {
        return max_grow;
    }
    if err >= 1845.28125 {
        return 0.2;
    }
    (0.9 * inv_fifth_root(err)).clamp(0.2, max_grow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::disallowed_methods)] // std's powf is the native-only oracle here
    fn inv_fifth_root_is_the_power_where_the_stepper_takes_it() {
        // 100·d of the initial step guess (1e-13..1e300) and every err the factor takes,
        // coarsely across that range and finely across one period of the guess's error
        // (the mantissa, and the exponent mod 5).
        let coarse = (0..=6000).map(|i| 10f64.powf(-13.0 + 313.0 * f64::from(i) / 6000.0));
        let fine = (0..5 * 4000).map(|i| {
            let (e, m) = (f64::from(i / 4000), f64::from(i % 4000) / 4000.0);
            2f64.powf(e / 5.0) * (1.0 + m)
        });
        for x in coarse.chain(fine) {
            let want = x.powf(-0.2);
            let got = inv_fifth_root(x);
            assert!(
                (got - want).abs() <= 2.5e-9 * want,
                "x = {x:e}: {got} vs {want}"
            );
        }
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // std's powf is the native-only oracle here
    fn step_factor_is_the_clamped_power() {
        for i in 0..=4000 {
            let err = 10f64.powf(-9.0 + 13.0 * f64::from(i) / 4000.0);
            for grow in [1.0, 10.0] {
                let want = (0.9 * err.powf(-0.2)).clamp(0.2, grow);
                let got = step_factor(err, grow);
                assert!(
                    (got - want).abs() <= 2.5e-9 * want,
                    "err = {err:e}: {got} vs {want}"
                );
            }
        }
    }
}
