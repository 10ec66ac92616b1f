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
use crate::physics::flight::{flight_jacobian, fly, time_to_ground};
use crate::physics::model::{Drop, Penalty};
use crate::physics::state::{max_abs, Cost, Jacobian, RouteResult, State};

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

    /// First time s in (0, s_max] at which the force returns to zero. `None` when it keeps
    /// pushing until `s_max`. The force is taken as pushing just after s = 0 (true at a
    /// downward entry and at a re-engagement).
    ///
    /// With `tol = 0` the root is bracketed between adjacent floats: safeguarded Newton
    /// first, then a gallop to a sign change and bisection until the bracket cannot
    /// shrink. The Jacobian of the motion feels an error δ in this time through the jump
    /// of the right-hand side's Jacobian, ~k/m·δ, so a relative tolerance is not enough
    /// (a 1e-12 tolerance left 1e-5 relative errors, issue 13). With `tol > 0` the search
    /// stops once the bracket or the Newton step is below `tol` seconds.
    pub fn force_zero_time(&self, x: &State, s_max: f64, tol: f64) -> Option<ExitTime> {
        let s1 = self.first_force_minimum(x)?;
        let lo = 0.0;
        let hi = s1.min(s_max);
        if self.force_and_rate(&self.advance(x, hi)).0 > 0.0 {
            return None;
        }
        // Invariant from here on: F(lo) > 0 >= F(hi) as computed.
        let (mut lo, mut hi) = (lo, hi);
        let pushes = |s: f64| self.force_and_rate(&self.advance(x, s)).0 > 0.0;
        // Safeguarded Newton until its step is at the level of one ulp.
        let mut s = 0.5 * (lo + hi);
        for _ in 0..100 {
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
            if tol > 0.0 && (step <= tol || hi - lo <= tol) {
                return Some(self.exit_time(x, s, hi - lo));
            }
            if step <= 2.0 * ulp(s) || next <= lo || next >= hi {
                break;
            }
        }
        // Gallop from s to the nearest sign change, then bisect to adjacent floats.
        if s > lo && s < hi {
            let mut d = ulp(s);
            if pushes(s) {
                lo = s;
                loop {
                    let t = s + d;
                    if t >= hi {
                        break;
                    }
                    if pushes(t) {
                        lo = t;
                        d *= 2.0;
                    } else {
                        hi = t;
                        break;
                    }
                }
            } else {
                hi = s;
                loop {
                    let t = s - d;
                    if t <= lo {
                        break;
                    }
                    if pushes(t) {
                        lo = t;
                        break;
                    }
                    hi = t;
                    d *= 2.0;
                }
            }
        }
        loop {
            let mid = lo + 0.5 * (hi - lo);
            if mid <= lo || mid >= hi {
                break;
            }
            if pushes(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(self.exit_time(x, hi, hi - lo))
    }

    /// The time of the force's first minimum after 0 from `x` (None if not finite): F starts
    /// pushing, so it returns to zero inside (0, s1] or never, an exact bracket.
    fn first_force_minimum(&self, x: &State) -> Option<f64> {
        // F(s) = m·g - G(s), G = k·u_y + c·u_v for the deviation u from equilibrium, and
        // G(s) = exp(-alpha·s)·(A·cos(beta·s) + B·sin(beta·s)) = exp(-alpha·s)·R·cos(beta·s - phi).
        // G' = -exp(-alpha·s)·R·omega·sin(beta·s - phi + psi) with psi = atan2(alpha, beta),
        // so F's minima sit at beta·s = phi - psi + 2·pi·n and rise from one to the next
        // (the envelope decays). F starts pushing, so it returns to zero inside
        // (0, s1] for s1 its first minimum after 0, or never: an exact bracket, which
        // sampling is not (a dip shorter than the sampling window goes unseen).
        let (k, c) = (self.law.stiffness, self.law.damping);
        let u = x - self.equilibrium();
        let g0 = k * u[0] + c * u[1];
        let du = self.rhs_jacobian() * u;
        let b = (k * du[0] + c * du[1] + self.alpha * g0) / self.beta;
        let phi = libm::atan2(b, g0);
        let psi = libm::atan2(self.alpha, self.beta);
        let period = 2.0 * std::f64::consts::PI / self.beta;
        let mut s1 = (phi - psi) / self.beta;
        while s1 <= 0.0 && s1.is_finite() {
            s1 += period;
        }
        s1.is_finite().then_some(s1)
    }

    /// The located force-zero time `s` with its uncertainty: the bracket plus the time
    /// the round-off of the computed force (relative 8·eps of each term) is worth at the
    /// force's rate of change there.
    fn exit_time(&self, x: &State, s: f64, bracket: f64) -> ExitTime {
        let eq = self.equilibrium();
        let u = x - eq;
        let p = self.propagator(s).abs();
        let scale = p * u.abs();
        let xs = self.advance(x, s);
        let (_, rate) = self.force_and_rate(&xs);
        let noise = 8.0
            * f64::EPSILON
            * (self.law.stiffness * (eq[0].abs() + scale[0])
                + self.law.damping * scale[1]
                + self.law.mass * self.gravity);
        let uncertainty = bracket
            + if rate != 0.0 {
                noise / rate.abs()
            } else {
                f64::INFINITY
            };
        ExitTime { s, uncertainty }
    }

    /// Jump of the right-hand side's Jacobian from contact to flight, A_contact - A_flight
    /// (the flight matrix is [[0, 1], [0, 0]]).
    fn jacobian_jump(&self) -> Jacobian {
        let (k, c, m) = (self.law.stiffness, self.law.damping, self.law.mass);
        Jacobian::new(0.0, 0.0, -k / m, -c / m)
    }

    /// Jacobian of the contact phase's right-hand side.
    fn rhs_jacobian(&self) -> Jacobian {
        Jacobian::new(0.0, 1.0, 0.0, 0.0) + self.jacobian_jump()
    }
}

/// Spacing of floats at `s` (> 0): next_up(s) - s.
fn ulp(s: f64) -> f64 {
    // next_up by the bit pattern (MSRV 1.85 predates f64::next_up); finite s only.
    let a = s.abs();
    f64::from_bits(a.to_bits() + 1) - a
}

/// A located force-zero time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExitTime {
    /// Time after the phase's start, s.
    pub s: f64,
    /// Bound on |s - the true root of the phase's closed form|, s.
    pub uncertainty: f64,
}

/// Options of the `flow` route.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlowOptions {
    /// Root-finding tolerance on the force-zero times, relative to T. The default 0
    /// brackets each of them between adjacent floats (see
    /// [`ContactPhase::force_zero_time`]); a positive value stops earlier.
    pub root_rtol: f64,
    /// Cap on contact switches before T (a guard against pathological inputs).
    pub max_events: u64,
}

impl Default for FlowOptions {
    fn default() -> Self {
        FlowOptions {
            root_rtol: 0.0,
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

/// Everything the `flow` route computes.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowDetail {
    /// x(T), J and the (zero) cost.
    pub result: RouteResult,
    /// The contact episodes before T.
    pub episodes: Vec<Episode>,
    /// Bound on max_ij |J - J_true| (J_true: the exact derivative of the closed form with
    /// these parameters): the round-off of the matrix product, |Φ_n|···|Φ_1| times
    /// 16·eps per factor, plus each switch time's uncertainty times the jump of the
    /// right-hand side's Jacobian there, carried to T by the later |Φ|, plus the
    /// accumulated error of the clock times the last phase's rate.
    pub error_bound: f64,
}

/// The largest error bound, relative to max_ij |J|, at which the `flow` route still answers.
pub const FLOW_TRUST: f64 = 1e-3;

/// The `flow` route: x(T) and the exact derivative of the continuous penalty ODE,
/// closed form per phase, no integrator.
///
/// Refused (`InvalidParameter` naming `k`) when its own error bound
/// ([`FlowDetail::error_bound`]) exceeds [`FLOW_TRUST`] of its largest Jacobian entry: the
/// switch times' round-off is amplified by k/m, so far beyond the lab's range (about
/// k = 1e24 N/m on the default drop) f64 no longer holds the reference, and by k = 1e40
/// its dv(T)/dv0 reads thousands instead of 1. (The blame readout, which reports the bound
/// as its noise floor, takes [`flow_detail`] and is not refused.)
pub fn flow(drop: &Drop, k: f64, opts: &FlowOptions) -> Result<RouteResult> {
    let detail = flow_detail(drop, k, opts)?;
    let scale = max_abs(&detail.result.jacobian);
    if !(detail.error_bound <= FLOW_TRUST * scale) {
        return Err(FerroError::InvalidParameter {
            name: "k",
            value: k,
            limit: format!(
                "too stiff for the flow in f64: its own error bound {:e} exceeds {FLOW_TRUST:e} of its largest Jacobian entry {scale:e}",
                detail.error_bound
            ),
        });
    }
    Ok(detail.result)
}

/// [`flow`], also returning the contact episodes it went through.
pub fn flow_with_episodes(
    drop: &Drop,
    k: f64,
    opts: &FlowOptions,
) -> Result<(RouteResult, Vec<Episode>)> {
    let d = flow_detail(drop, k, opts)?;
    Ok((d.result, d.episodes))
}

/// Running bound of the flow's Jacobian error (see [`FlowDetail::error_bound`]).
struct Bound {
    /// |Φ_n|···|Φ_1|: what the round-off of the product is measured against.
    abs_product: Jacobian,
    /// Factors multiplied so far.
    factors: u32,
    /// Propagated effect of the switch-time uncertainties.
    timing: Jacobian,
    /// Bound on the error of the accumulated time t, s.
    clock: f64,
}

impl Bound {
    fn push(&mut self, phi: &Jacobian) {
        let a = phi.abs();
        self.abs_product = a * self.abs_product;
        self.timing = a * self.timing;
        self.factors += 1;
    }

    /// `jac` carried through the phase map `phi`, and `phi` counted.
    fn apply(&mut self, phi: Jacobian, jac: &mut Jacobian) {
        *jac = phi * *jac;
        self.push(&phi);
    }

    /// The bound on the Jacobian's error: relative round-off per factor, and the absolute
    /// round-off of gradual underflow (a mass settled in contact for hundreds of decay times
    /// has J below 1e-300), plus the switch times' propagated uncertainty.
    fn error_bound(&self) -> f64 {
        let eps = f64::EPSILON;
        let factors = f64::from(self.factors.max(1));
        let rounding = 16.0 * factors * (eps * max_abs(&self.abs_product) + f64::MIN_POSITIVE);
        rounding + max_abs(&self.timing)
    }
}

/// At most `max_events` contact episodes by t.
fn events_within(episodes: usize, max_events: u64, t: f64) -> Result<()> {
    if episodes as u64 > max_events {
        return Err(FerroError::TooManySteps {
            route: "flow",
            max_steps: max_events,
            detail: format!("{episodes} contact episodes by t = {t} s"),
        });
    }
    Ok(())
}

/// `root_rtol` must be finite and >= 0.
fn root_rtol_valid(root_rtol: f64) -> Result<()> {
    if !(root_rtol.is_finite() && root_rtol >= 0.0) {
        return Err(FerroError::InvalidParameter {
            name: "root_rtol",
            value: root_rtol,
            limit: "must be finite and >= 0 (0: to adjacent floats)".into(),
        });
    }
    Ok(())
}

/// Free flight from `x`: the time to the next switch and whether it is a re-engagement.
/// Above ground the next switch is the entry at y = 0. Below ground (just after the force
/// returned to zero) the mass either rises out and comes back down to y = 0, or, when
/// v² + 2·g·y < 0, the force re-engages first, at s = 2·v/g - 2·c/k (the two conditions are
/// the same inequality).
fn next_flight_switch(x: &State, g: f64, law: &Penalty) -> (f64, bool) {
    let below = x[0] < 0.0;
    let reengage = below && x[1] * x[1] + 2.0 * g * x[0] < 0.0;
    let s = if reengage {
        2.0 * x[1] / g - 2.0 * law.damping / law.stiffness
    } else {
        time_to_ground(x[0], x[1], g)
    };
    (s, reengage)
}

/// [`flow`] with its episodes and an error bound of its Jacobian.
pub fn flow_detail(drop: &Drop, k: f64, opts: &FlowOptions) -> Result<FlowDetail> {
    drop.validate()?;
    let law = drop.penalty(k)?;
    root_rtol_valid(opts.root_rtol)?;
    let phase = ContactPhase::new(law, drop.gravity);
    let g = drop.gravity;
    let t_final = drop.t_final;
    let eps = f64::EPSILON;
    let mut x = drop.x0();
    let mut t = 0.0;
    let mut jac = Jacobian::identity();
    let mut bound = Bound {
        abs_product: Jacobian::identity(),
        factors: 0,
        timing: Jacobian::zeros(),
        clock: 0.0,
    };
    let mut episodes: Vec<Episode> = Vec::new();
    let mut in_contact = false;
    // The last phase runs for T - t: an error in t moves J by that much of its rate.
    let last_phase = |jac: &Jacobian, rate: &Jacobian, bound: &mut Bound| {
        bound.timing += (bound.clock + eps * t_final) * (rate * jac).abs();
    };
    loop {
        events_within(episodes.len(), opts.max_events, t)?;
        if in_contact {
            let tol = opts.root_rtol * t_final;
            match phase.force_zero_time(&x, t_final - t, tol) {
                Some(exit) if t + exit.s < t_final => {
                    let s = exit.s;
                    x = phase.advance(&x, s);
                    let phi = phase.propagator(s);
                    bound.apply(phi, &mut jac);
                    // Moving the exit by δ moves J by δ·(A_contact - A_flight)·J.
                    bound.timing += exit.uncertainty * (phase.jacobian_jump() * jac).abs();
                    t += s;
                    bound.clock += eps * t;
                    if let Some(ep) = episodes.last_mut() {
                        ep.t_end = Some(t);
                    }
                    in_contact = false;
                }
                _ => {
                    let s = t_final - t;
                    x = phase.advance(&x, s);
                    let phi = phase.propagator(s);
                    bound.apply(phi, &mut jac);
                    last_phase(&jac, &phase.rhs_jacobian(), &mut bound);
                    break;
                }
            }
        } else {
            let (s, reengage) = next_flight_switch(&x, g, &law);
            if t + s >= t_final {
                let rest = t_final - t;
                x = fly(&x, rest, g);
                let phi = flight_jacobian(rest);
                bound.apply(phi, &mut jac);
                last_phase(&jac, &Jacobian::new(0.0, 1.0, 0.0, 0.0), &mut bound);
                break;
            }
            x = fly(&x, s, g);
            let phi = flight_jacobian(s);
            bound.apply(phi, &mut jac);
            t += s;
            // The time of flight carries a few ulps of round-off. Shifting an entry
            // in time shifts everything after it (only the last phase's length feels
            // that); a re-engagement's time is a switch like the exit's.
            bound.clock += eps * t + 4.0 * eps * s;
            if reengage {
                let delta = 4.0
                    * eps
                    * ((2.0 * x[1] / g).abs() + (2.0 * law.damping / law.stiffness).abs());
                bound.timing += delta * (phase.jacobian_jump() * jac).abs();
            } else {
                x[0] = 0.0;
                let salt = entry_saltation(&law);
                jac = salt * jac;
                bound.push(&salt);
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
    Ok(FlowDetail {
        result: RouteResult::new(x, jac, Cost::default()),
        episodes,
        error_bound: bound.error_bound(),
    })
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
    let Some(exit) = phase.force_zero_time(&entry, horizon, 0.0) else {
        return Ok(None);
    };
    let s = exit.s;
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
