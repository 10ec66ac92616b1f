//! Wall time for the cost readouts, read from a clock the binding hands in.
//!
//! The cost readouts show the wall time each route took for its Jacobian beside its force
//! evaluations (issue 13). The core measures it where the route runs, but it never picks a
//! clock itself: `std::time::Instant::now` panics on `wasm32-unknown-unknown`, so the
//! binding injects one ([`Clock::new`] with a `fn() -> f64` in seconds): the PyO3 crate
//! passes [`monotonic_seconds`] (an `Instant`), the WebAssembly crate `performance.now()`.
//! Code that gets no clock (the golden parity's `scenario::evaluate`, plain `sweep`) reports
//! no wall time (`None`), so the bit-for-bit comparison of native and wasm results never
//! sees a number that differs from run to run (docs/model.md §11).
//!
//! A wall time is one measurement on a possibly busy machine, at the clock's resolution
//! (browsers coarsen `performance.now()` to 100 µs on a page that is not cross-origin
//! isolated): for reading, never for asserting. Benchmarks (`make bench`) time properly.

/// A monotonic clock: `now()` in seconds from an arbitrary origin, and the smallest step it
/// was seen to take.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    now: fn() -> f64,
    resolution: f64,
}

/// Reads of `now` the resolution estimate may spend before giving up (a clock that never
/// moves has an infinite resolution: every time it reports is below it).
const RESOLUTION_READS: usize = 200_000;

impl Clock {
    /// A clock reading `now` (seconds, monotonic). Estimates its resolution by reading it
    /// until it has moved three times and keeping the smallest whole step (the first move
    /// only lands on a tick boundary): about two ticks of time, 0.2 ms for a browser's
    /// coarsened `performance.now()`.
    pub fn new(now: fn() -> f64) -> Clock {
        let mut resolution = f64::INFINITY;
        let mut last = now();
        let mut moves = 0;
        for _ in 0..RESOLUTION_READS {
            let t = now();
            if t != last {
                if moves > 0 {
                    resolution = resolution.min((t - last).abs());
                }
                moves += 1;
                last = t;
                if moves == 3 {
                    break;
                }
            }
        }
        Clock { now, resolution }
    }

    /// The current reading, s.
    pub fn now(&self) -> f64 {
        (self.now)()
    }

    /// The smallest step the clock was seen to take, s (∞ if it never moved).
    pub fn resolution(&self) -> f64 {
        self.resolution
    }

    /// Run `f` and return its answer with the wall time it took, s (never negative).
    pub fn time<T>(&self, f: impl FnOnce() -> T) -> (T, f64) {
        let start = self.now();
        let value = f();
        (value, (self.now() - start).max(0.0))
    }
}

/// Run `f`, timed by `clock` when there is one: its answer and `Some(seconds)`, or `None`.
pub fn timed<T>(clock: Option<&Clock>, f: impl FnOnce() -> T) -> (T, Option<f64>) {
    match clock {
        Some(c) => {
            let (value, wall) = c.time(f);
            (value, Some(wall))
        }
        None => (f(), None),
    }
}

/// The sum of two wall times, when both were read (a rollout resumed from a shared start:
/// the start's time plus the rest's).
pub(crate) fn plus(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? + b?)
}

/// Run one route timed by `clock`: its answer with `wall_s` (the whole call) and
/// `wall_resolution_s` (the clock's resolution) filled in. The single-route doors (`fm.fixed`,
/// `fm.tolerance`, ... in Python; `route*` in WebAssembly) call the core's routes through
/// this, so every cost readout shows a wall time beside its force evaluations (issue 13).
pub fn timed_route(
    clock: &Clock,
    f: impl FnOnce() -> crate::Result<crate::physics::state::RouteResult>,
) -> crate::Result<crate::physics::state::RouteResult> {
    let (answer, wall) = clock.time(f);
    answer.map(|mut r| {
        r.wall_s = Some(wall);
        r.wall_resolution_s = Some(clock.resolution());
        r
    })
}

/// Seconds since the first call in this process, from `std::time::Instant` (monotonic):
/// the native bindings' clock. Not available on `wasm32-unknown-unknown`, where `Instant`
/// panics; the WebAssembly binding passes `performance.now()` instead.
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub fn monotonic_seconds() -> f64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_secs_f64()
}

#[cfg(all(test, not(all(target_arch = "wasm32", target_os = "unknown"))))]
mod tests {
    use super::*;

    #[test]
    fn the_native_clock_moves_forward_and_resolves_below_a_millisecond() {
        let c = Clock::new(monotonic_seconds);
        assert!(
            c.resolution() > 0.0 && c.resolution() < 1e-3,
            "{}",
            c.resolution()
        );
        let (sum, wall) = c.time(|| (0..1000u64).sum::<u64>());
        assert_eq!(sum, 499_500);
        assert!(wall >= 0.0 && wall.is_finite());
    }

    #[test]
    fn a_clock_that_never_moves_has_no_resolution() {
        let c = Clock::new(|| 1.0);
        assert_eq!(c.resolution(), f64::INFINITY);
        assert_eq!(c.time(|| 3).1, 0.0);
    }

    #[test]
    fn a_timed_route_carries_its_wall_time_and_is_otherwise_the_plain_call() {
        use crate::physics::integrate::fixed::{fixed, FixedOptions};
        use crate::physics::model::Drop;
        let plain = fixed(&Drop::default(), 1e6, 1e-4, &FixedOptions::default()).unwrap();
        assert_eq!((plain.wall_s, plain.wall_resolution_s), (None, None));
        let c = Clock::new(monotonic_seconds);
        let timed = timed_route(&c, || {
            fixed(&Drop::default(), 1e6, 1e-4, &FixedOptions::default())
        })
        .unwrap();
        let wall = timed.wall_s.expect("a timed route has a wall time");
        assert!(wall.is_finite() && wall >= 0.0);
        assert_eq!(timed.wall_resolution_s, Some(c.resolution()));
        let mut untimed = timed;
        (untimed.wall_s, untimed.wall_resolution_s) = (None, None);
        assert_eq!(untimed, plain);
        // An error passes through unchanged (nothing to time).
        let bad = timed_route(&c, || {
            fixed(&Drop::default(), -1.0, 1e-4, &FixedOptions::default())
        });
        assert!(bad.is_err());
    }

    #[test]
    fn without_a_clock_nothing_is_timed() {
        assert_eq!(timed(None, || 7), (7, None));
    }
}
