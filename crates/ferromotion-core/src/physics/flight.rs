//! Free flight under gravity: no contact law is involved.
//!
//! `y(t) = y0 + v0·t - g·t²/2`, `v(t) = v0 - g·t`, with the state-transition matrix
//! `[[1, t], [0, 1]]`. Both contact laws (rigid and penalty) and the drop itself build on
//! these, so they live below the contact module.

use crate::physics::state::{Jacobian, State};

/// Time until a body at height `y` (m) with velocity `v` (m/s) reaches y = 0 moving down
/// under gravity `g`, s. Returns 0 when it is already at or below the ground moving down.
pub fn time_to_ground(y: f64, v: f64, g: f64) -> f64 {
    if y <= 0.0 && v <= 0.0 {
        return 0.0;
    }
    // Larger root of y + v·t - g·t²/2 = 0, written to avoid cancellation when v > 0.
    let disc = (v * v + 2.0 * g * y).sqrt();
    if v >= 0.0 {
        (v + disc) / g
    } else {
        // v < 0: (v + disc)/g = 2y / (disc - v), no cancellation.
        2.0 * y / (disc - v)
    }
}

/// State-transition matrix of free flight over `t` seconds.
pub fn flight_jacobian(t: f64) -> Jacobian {
    Jacobian::new(1.0, t, 0.0, 1.0)
}

/// Free flight of (y, v) for `t` seconds under gravity `g`.
pub fn fly(x: &State, t: f64, g: f64) -> State {
    State::new(x[0] + x[1] * t - 0.5 * g * t * t, x[1] - g * t)
}
