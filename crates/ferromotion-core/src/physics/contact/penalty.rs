//! The push-only penalty contact and the `flow` route, its exact continuous derivative.
//!
//! Force on the mass (N), positive up:
//!
//! ```text
//! F(y, v) = max(0, -k·y - c·v)  if y < 0,   0 otherwise,     c = 2·zeta·sqrt(k·m)
//! ```
//!
//! Push-only matters. At entry (y = 0, v < 0) the force jumps from 0 to c·|v|: the
//! right-hand side is discontinuous there and the saltation of that jump,
//! `[[1, 0], [-c/m, 1]]`, is what a fixed-step autodiff tangent never sees. It grows
//! as c ~ sqrt(k). The force returns to zero continuously (F crosses 0 while y < 0),
//! so that switch has an identity saltation; leaving y < 0 afterwards changes nothing
//! in the right-hand side at all.
//!
//! While F > 0 the motion is a damped oscillator under gravity with a closed form,
//! so the `flow` route needs no integrator: closed-form phases, a root-find for the
//! force-zero time, and the entry saltation.

use crate::error::{positive, FerroError, Result};
use crate::model::{Drop, Penalty};
use crate::physics::flight::{flight_jacobian, fly, time_to_ground};
use crate::state::{Cost, Jacobian, RouteResult, State};

impl Penalty {
    /// Contact force (N) at height `y` (m) and velocity `v` (m/s): push-only spring-damper.
    #[inline(always)]
    pub fn force(&self, y: f64, v: f64) -> f64 {
        if y < 0.0 {
            let f = -self.stiffness * y - self.damping * v;
            if f > 0.0 {
                f
            } else {
                0.0
            }
        } else {
            0.0
        }
    }

    /// The unclipped spring-damper expression -k·y - c·v (N); positive while pushing.
    #[inline(always)]
    pub fn spring_damper(&self, y: f64, v: f64) -> f64 {
        -self.stiffness * y - self.damping * v
    }
}

/// Restitution that the push-only law realises as k -> infinity, a function of zeta alone.
///
/// With gravity negligible during the (vanishingly short) contact, the contact is a
/// damped oscillator started at y = 0 with speed V. The force -k·y - c·v first returns to
/// zero at omega_d·t = pi - 2·asin(zeta); the mass then coasts out at
/// `V·exp(-zeta·(pi - 2·asin zeta)/sqrt(1 - zeta²))`. For zeta = 0.1606 that is 0.632
/// (the pulling law's `exp(-zeta·pi/sqrt(1-zeta²))` = 0.600 is a different number).
/// Refuses zeta outside [0, 1).
pub fn limit_restitution(zeta: f64) -> Result<f64> {
    if !(zeta.is_finite() && (0.0..1.0).contains(&zeta)) {
        return Err(FerroError::InvalidParameter {
            name: "zeta",
            value: zeta,
            limit: "must be in [0, 1) (underdamped contact)".into(),
        });
    }
    Ok(limit_restitution_unchecked(zeta))
}

/// [`limit_restitution`] for a zeta already validated (a validated [`Drop`]'s).
pub(crate) fn limit_restitution_unchecked(zeta: f64) -> f64 {
    let s = libm::sqrt(1.0 - zeta * zeta);
    libm::exp(-zeta * (std::f64::consts::PI - 2.0 * libm::asin(zeta)) / s)
}

/// Closed-form motion while the penalty force pushes: `y'' = -omega²·y - 2·zeta·omega·y' - g`.
#[derive(Debug, Clone, Copy)]
pub struct ContactPhase {
    law: Penalty,
    gravity: f64,
    omega: f64,
    alpha: f64,
    beta: f64,
}

impl ContactPhase {
    /// The phase for penalty law `law` under gravity `gravity` (m/s²).
    pub fn new(law: Penalty, gravity: f64) -> ContactPhase {
        let omega = law.omega();
        let zeta = law.damping / (2.0 * (law.stiffness * law.mass).sqrt());
        ContactPhase {
            law,
            gravity,
            omega,
            alpha: zeta * omega,
            beta: omega * libm::sqrt(1.0 - zeta * zeta),
        }
    }

    /// Static equilibrium under gravity: y = -m·g/k, v = 0.
    fn equilibrium(&self) -> State {
        State::new(-self.gravity / (self.omega * self.omega), 0.0)
    }

    /// State-transition matrix exp(A·s) of the contact phase.
    pub fn propagator(&self, s: f64) -> Jacobian {
        let decay = libm::exp(-self.alpha * s);
        let (sn, cs) = (libm::sin(self.beta * s), libm::cos(self.beta * s));
        let sb = sn / self.beta;
        decay
            * Jacobian::new(
                cs + self.alpha * sb,
                sb,
                -self.omega * self.omega * sb,
                cs - self.alpha * sb,
            )
    }

    /// State `s` seconds after `x` while the force keeps pushing.
    pub fn advance(&self, x: &State, s: f64) -> State {
        let eq = self.equilibrium();
        eq + self.propagator(s) * (x - eq)
    }

    /// Spring-damper force -k·y - c·v along the phase, and its time derivative.
    fn force_and_rate(&self, x: &State) -> (f64, f64) {
        let f = self.law.spring_damper(x[0], x[1]);
        let a = f / self.law.mass - self.gravity;
        (f, -self.law.stiffness * x[1] - self.law.damping * a)
    }

    /// First time s in (0, s_max] at which the force returns to zero, to `tol` seconds.
    /// `None` when it keeps pushing until `s_max`. The force is taken as pushing just
    /// after s = 0 (true at a downward entry and at a re-engagement).
    pub fn force_zero_time(&self, x: &State, s_max: f64, tol: f64) -> Option<f64> {
        // Sample at 1/16 of a damped half-period: the force (a constant plus a damped
        // sinusoid) changes sign at most once inside such a window.
        let window = std::f64::consts::PI / self.beta / 16.0;
        // Once the oscillation about equilibrium is too weak to pull the force down to
        // zero, it never will: the energy ½·m·u_v² + ½·k·u_y² of the deviation u from
        // equilibrium never grows, and |F - m·g| = |k·u_y + c·u_v| is at most
        // sqrt(2·energy)·(sqrt(k) + c/sqrt(m)). This ends the search for a mass that
        // settles in contact (and for T far beyond the bounce).
        let (k, c, m) = (self.law.stiffness, self.law.damping, self.law.mass);
        let eq = self.equilibrium();
        let settled = |x: &State| {
            let u = x - eq;
            let energy = 0.5 * m * u[1] * u[1] + 0.5 * k * u[0] * u[0];
            (2.0 * energy).sqrt() * (k.sqrt() + c / m.sqrt()) < m * self.gravity
        };
        let mut lo = 0.0;
        // A force that neither returns to zero nor settles within this many windows is
        // not a physical contact (a non-finite state from extreme parameters): give up.
        const MAX_WINDOWS: u32 = 1_000_000;
        let mut windows = 0;
        let hi = loop {
            let s = (lo + window).min(s_max);
            let xs = self.advance(x, s);
            let f = self.force_and_rate(&xs).0;
            if f <= 0.0 {
                break s;
            }
            windows += 1;
            if s >= s_max || settled(&xs) || !f.is_finite() || s == lo || windows > MAX_WINDOWS {
                return None;
            }
            lo = s;
        };
        // Safeguarded Newton on the bracket [lo, hi] with F(lo) > 0 >= F(hi).
        let (mut lo, mut hi) = (lo, hi);
        let mut s = 0.5 * (lo + hi);
        for _ in 0..200 {
            let (f, rate) = self.force_and_rate(&self.advance(x, s));
            if f > 0.0 {
                lo = s;
            } else {
                hi = s;
            }
            let newton = s - f / rate;
            let next = if rate != 0.0 && newton > lo && newton < hi {
                newton
            } else {
                0.5 * (lo + hi)
            };
            let step = (next - s).abs();
            s = next;
            if step <= tol || hi - lo <= tol {
                break;
            }
        }
        Some(s)
    }
}

/// Options of the `flow` route.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlowOptions {
    /// Root-finding tolerance on event times, relative to the event's absolute time.
    pub root_rtol: f64,
    /// Cap on contact switches before T (a guard against pathological inputs).
    pub max_events: u64,
}

impl Default for FlowOptions {
    fn default() -> Self {
        FlowOptions {
            root_rtol: 1e-12,
            max_events: 100_000,
        }
    }
}

/// One contact episode of the continuous penalty motion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Episode {
    /// Time the force starts pushing, s.
    pub t_start: f64,
    /// Time the force returns to zero, s (`None` if it pushes until T).
    pub t_end: Option<f64>,
    /// Whether it began with the force jump at y = 0 (true) or by continuous re-engagement.
    pub jump: bool,
}

/// Saltation matrix of the force jump at entry (y = 0, v < 0): `[[1, 0], [-c/m, 1]]`.
pub fn entry_saltation(law: &Penalty) -> Jacobian {
    Jacobian::new(1.0, 0.0, -law.damping / law.mass, 1.0)
}

/// The `flow` route: x(T) and the exact derivative of the continuous penalty ODE,
/// closed form per phase, no integrator.
pub fn flow(drop: &Drop, k: f64, opts: &FlowOptions) -> Result<RouteResult> {
    Ok(flow_with_episodes(drop, k, opts)?.0)
}

/// [`flow`], also returning the contact episodes it went through.
pub fn flow_with_episodes(
    drop: &Drop,
    k: f64,
    opts: &FlowOptions,
) -> Result<(RouteResult, Vec<Episode>)> {
    drop.validate()?;
    let law = drop.penalty(k)?;
    positive("root_rtol", opts.root_rtol)?;
    let phase = ContactPhase::new(law, drop.gravity);
    let g = drop.gravity;
    let t_final = drop.t_final;
    let mut x = drop.x0();
    let mut t = 0.0;
    let mut jac = Jacobian::identity();
    let mut episodes: Vec<Episode> = Vec::new();
    let mut in_contact = false;
    loop {
        if episodes.len() as u64 > opts.max_events {
            return Err(FerroError::TooManySteps {
                route: "flow",
                steps: episodes.len() as f64,
                max_steps: opts.max_events,
            });
        }
        if in_contact {
            let tol = opts.root_rtol * t_final;
            match phase.force_zero_time(&x, t_final - t, tol) {
                Some(s) if t + s < t_final => {
                    x = phase.advance(&x, s);
                    jac = phase.propagator(s) * jac;
                    t += s;
                    if let Some(ep) = episodes.last_mut() {
                        ep.t_end = Some(t);
                    }
                    in_contact = false;
                }
                _ => {
                    let s = t_final - t;
                    x = phase.advance(&x, s);
                    jac = phase.propagator(s) * jac;
                    break;
                }
            }
        } else {
            // Free flight. Above ground the next switch is the entry at y = 0. Below ground
            // (just after the force returned to zero) the mass either rises out and comes
            // back down to y = 0, or, when v² + 2·g·y < 0, the force re-engages first, at
            // s = 2·v/g - 2·c/k (the two conditions are the same inequality).
            let below = x[0] < 0.0;
            let reengage = below && x[1] * x[1] + 2.0 * g * x[0] < 0.0;
            let s = if reengage {
                2.0 * x[1] / g - 2.0 * law.damping / law.stiffness
            } else {
                time_to_ground(x[0], x[1], g)
            };
            if t + s >= t_final {
                let rest = t_final - t;
                x = fly(&x, rest, g);
                jac = flight_jacobian(rest) * jac;
                break;
            }
            x = fly(&x, s, g);
            jac = flight_jacobian(s) * jac;
            t += s;
            if !reengage {
                x[0] = 0.0;
                jac = entry_saltation(&law) * jac;
            }
            episodes.push(Episode {
                t_start: t,
                t_end: None,
                jump: !reengage,
            });
            in_contact = true;
        }
    }
    check_finite("flow state", &x, &jac)?;
    Ok((RouteResult::new(x, jac, Cost::default()), episodes))
}

/// Restitution the push-only law realises at finite stiffness `k` for an impact at
/// `speed` (m/s), closed form: the damped oscillation under gravity runs until the force
/// reaches zero, then free flight carries the mass back to y = 0. Returns `None` when the
/// mass never leaves (the force re-engages before y = 0, or it settles in contact).
pub fn realised_restitution(drop: &Drop, k: f64, speed: f64) -> Result<Option<f64>> {
    drop.validate()?;
    let law = drop.penalty(k)?;
    positive("speed", speed)?;
    let phase = ContactPhase::new(law, drop.gravity);
    let entry = State::new(0.0, -speed);
    // A settled mass never unloads; 1,000 periods is far beyond any decay we can report.
    let horizon = 1000.0 * 2.0 * std::f64::consts::PI / phase.omega;
    let Some(s) = phase.force_zero_time(&entry, horizon, 1e-15 * horizon) else {
        return Ok(None);
    };
    let x = phase.advance(&entry, s);
    let disc = x[1] * x[1] + 2.0 * drop.gravity * x[0];
    if disc < 0.0 {
        return Ok(None);
    }
    let e = disc.sqrt() / speed;
    if !e.is_finite() {
        return Err(FerroError::NonFinite {
            what: "realised restitution",
            detail: format!(
                "impact speed {speed:e} m/s at k = {k:e} N/m overflows the contact phase"
            ),
        });
    }
    Ok(Some(e))
}

pub(crate) fn check_finite(what: &'static str, x: &State, jac: &Jacobian) -> Result<()> {
    if x.iter().chain(jac.iter()).all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(FerroError::NonFinite {
            what,
            detail: format!("x = [{:e}, {:e}]", x[0], x[1]),
        })
    }
}
