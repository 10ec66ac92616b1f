//! Predicted observations at the sample times and their sensitivities, route by route.
//!
//! A route gives x(T) and J = dx(T)/dx(0) for one horizon T. The fit needs the state at
//! every sample time t_i and its derivative with respect to the fitted parameters, so
//! each route is asked once per sample time (T = t_i) and the columns are assembled:
//!
//! | route | x(t_i) | columns height, velocity | columns zeta, restitution, k, gravity, mass |
//! |---|---|---|---|
//! | `fixed` | one semi-implicit Euler rollout, recorded at the steps t_i/dt | forward-mode tangent through every step (the autodiff answer, branch not differentiated) | the same tangent, extended to the parameters |
//! | `corrected` | the `corrected` route at T = t_i | its dual-number tangent (switch times included) | central differences of its map |
//! | `tolerance` | Dormand–Prince with event location at T = t_i | forward sensitivities | central differences of its map |
//! | `flow` | closed form per phase at T = t_i | the exact flow Jacobian | central differences of its map |
//! | `exact` | rigid flight and impacts at T = t_i | saltation matrices | central differences of its map |
//!
//! Before the first impact of the continuous motion every route is free flight
//! (`y0 + v0·t - g·t²/2`, exact for the flow, the rigid model and Dormand–Prince, which
//! integrates a quadratic exactly); the two grid routes take their Euler steps there.
//!
//! The central differences are taken in the fit's coordinates (log of a positive
//! parameter) at probes h and h/2, combined by Richardson extrapolation
//! `(4·D(h/2) − D(h))/3` (the h² truncation term cancels: at the solution of a three-bounce
//! fit a plain difference at h = 1e-6 left the objective's gradient 2e-6 off, above the
//! checker's tolerance), with probe control: the probe is halved while the event counts (impacts,
//! contact episodes, switches) before some sample time differ between its two sides and
//! the nominal point, and a one-sided difference on the side that keeps the nominal
//! event sequence is taken when halving does not help. A difference never straddles an
//! event: straddling one compares two event sequences and measures neither derivative.

use super::params::{Param, Route};
use crate::error::{FerroError, Result};
use crate::physics::contact::penalty::{
    flow_with_episodes, limit_restitution_unchecked, FlowOptions,
};
use crate::physics::contact::rigid::{exact_with_impacts, ExactOptions};
use crate::physics::flight::{flight_jacobian, fly};
use crate::physics::integrate::adaptive::{JacobianMethod, ToleranceOptions};
use crate::physics::integrate::corrected::{corrected, CorrectedOptions};
use crate::physics::integrate::fixed::{euler_with_tangent, step_count};
use crate::physics::model::Drop;
use crate::physics::state::{Jacobian, State};
use nalgebra::DMatrix;

/// The model a parameter vector describes: the drop (its `t_final` is the horizon), the
/// penalty stiffness and, for the rigid route, a restitution set directly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    /// The drop (height, velocity, gravity, mass, zeta; `t_final` = the last sample time).
    pub drop: Drop,
    /// Penalty stiffness k, N/m.
    pub k: f64,
    /// Restitution of the rigid model when fitted or given; `None`: the penalty law's
    /// stiff limit for `drop.zeta`.
    pub restitution: Option<f64>,
}

/// How a route is evaluated (the options of the route the fit uses).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RouteSetup {
    /// The route.
    pub route: Route,
    /// Step of the grid routes, s.
    pub dt: f64,
    /// Options of the tolerance route (forced to event location and forward sensitivities).
    pub tolerance: ToleranceOptions,
    /// Probe of the central-difference columns, in the fit's coordinates.
    pub probe: f64,
}

/// Predicted states at the sample times.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Prediction {
    /// Heights, m.
    pub y: Vec<f64>,
    /// Velocities, m/s.
    pub v: Vec<f64>,
    /// Events before each sample time (impacts, contact episodes, switches or contact steps).
    pub events: Vec<i64>,
}

/// A prediction with its sensitivities in the fit's coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct Sensitivity {
    /// The prediction.
    pub prediction: Prediction,
    /// d y(t_i) / d z_j, (samples × parameters).
    pub dy: DMatrix<f64>,
    /// d v(t_i) / d z_j.
    pub dv: DMatrix<f64>,
    /// Model evaluations spent (one: every sample time once).
    pub evaluations: u64,
    /// Central-difference columns whose probe had to be halved.
    pub probes_halved: u64,
    /// Central-difference columns taken one-sided (an event on one side of every probe).
    pub one_sided: u64,
}

/// State and dx/dx0 of one route at horizon `t`, and the events before `t`.
fn at_time(setup: &RouteSetup, model: &Model, t: f64) -> Result<(State, Jacobian, i64)> {
    let drop = Drop {
        t_final: t,
        ..model.drop
    };
    if t == 0.0 {
        return Ok((drop.x0(), Jacobian::identity(), 0));
    }
    let before_impact = t <= drop.first_impact_time();
    match setup.route {
        Route::Fixed => unreachable_fixed(),
        Route::Corrected => {
            if before_impact {
                let law = drop.penalty(model.k)?;
                let n = step_count(t, setup.dt, u64::MAX)?;
                let (x, j) = euler_with_tangent(
                    &law,
                    drop.gravity,
                    setup.dt,
                    n,
                    drop.x0(),
                    Jacobian::identity(),
                );
                return Ok((x, j, 0));
            }
            let r = corrected(&drop, model.k, setup.dt, &CorrectedOptions::default())?;
            // One force evaluation per step plus one per located switch.
            let switches = r.cost.force_evals.saturating_sub(r.cost.steps) as i64;
            Ok((r.state, r.jacobian, switches))
        }
        Route::Flow => {
            if before_impact {
                return Ok((fly(&drop.x0(), t, drop.gravity), flight_jacobian(t), 0));
            }
            let (r, episodes) = flow_with_episodes(&drop, model.k, &FlowOptions::default())?;
            Ok((r.state, r.jacobian, episodes.len() as i64))
        }
        Route::Exact => {
            if before_impact {
                return Ok((fly(&drop.x0(), t, drop.gravity), flight_jacobian(t), 0));
            }
            let opts = ExactOptions {
                restitution: model.restitution,
                ..ExactOptions::default()
            };
            let (r, impacts) = exact_with_impacts(&drop, &opts)?;
            Ok((r.state, r.jacobian, impacts.len() as i64))
        }
        Route::Tolerance => {
            if before_impact {
                return Ok((fly(&drop.x0(), t, drop.gravity), flight_jacobian(t), 0));
            }
            drop.validate()?;
            let law = drop.penalty(model.k)?;
            let opts = ToleranceOptions {
                events: true,
                jacobian: JacobianMethod::Forward,
                ..setup.tolerance
            };
            let (x, j, stats) =
                opts.integrator()?
                    .rollout_with_tangent(&law, drop.gravity, drop.x0(), t)?;
            crate::physics::contact::penalty::check_finite("tolerance-route state", &x, &j)?;
            Ok((x, j, stats.events as i64))
        }
    }
}

fn unreachable_fixed() -> Result<(State, Jacobian, i64)> {
    // The fixed route records every sample time along one rollout (`fixed_rollout`).
    Err(FerroError::InvalidParameter {
        name: "route",
        value: f64::NAN,
        limit: "internal: the fixed route is evaluated along one rollout".into(),
    })
}

/// Predicted states at `times` (no sensitivities).
pub fn predict(setup: &RouteSetup, model: &Model, times: &[f64]) -> Result<Prediction> {
    if setup.route == Route::Fixed {
        return Ok(fixed_rollout(setup, model, times, &[])?.prediction);
    }
    let mut p = Prediction {
        y: Vec::with_capacity(times.len()),
        v: Vec::with_capacity(times.len()),
        events: Vec::with_capacity(times.len()),
    };
    for &t in times {
        let (x, _, ev) = at_time(setup, model, t)?;
        p.y.push(x[0]);
        p.v.push(x[1]);
        p.events.push(ev);
    }
    Ok(p)
}

/// Everything a parameter vector needs to become a model.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// The fitted parameters, in order.
    pub params: Vec<Param>,
    /// The model the fixed (unfitted) parameters come from.
    pub base: Model,
}

impl Layout {
    /// The model at coordinates `z` (log of positive parameters, velocity as it is).
    pub fn model(&self, z: &[f64]) -> Result<Model> {
        let mut m = self.base;
        for (p, &zi) in self.params.iter().zip(z) {
            p.set(&mut m, p.from_coordinate(zi))?;
        }
        m.drop.validate()?;
        m.drop.penalty(m.k)?;
        Ok(m)
    }

    /// Coordinates of a model's fitted parameters.
    pub fn coordinates(&self, m: &Model) -> Vec<f64> {
        self.params
            .iter()
            .map(|p| p.to_coordinate(p.get(m)))
            .collect()
    }
}

/// Predictions at `z` with their sensitivities d/dz.
pub fn sensitivity(
    setup: &RouteSetup,
    layout: &Layout,
    z: &[f64],
    times: &[f64],
) -> Result<Sensitivity> {
    let model = layout.model(z)?;
    if setup.route == Route::Fixed {
        return fixed_rollout(setup, &model, times, &layout.params);
    }
    let n = times.len();
    let np = layout.params.len();
    let mut dy = DMatrix::zeros(n, np);
    let mut dv = DMatrix::zeros(n, np);
    let mut pred = Prediction {
        y: Vec::with_capacity(n),
        v: Vec::with_capacity(n),
        events: Vec::with_capacity(n),
    };
    let mut jacs = Vec::with_capacity(n);
    for &t in times {
        let (x, j, ev) = at_time(setup, &model, t)?;
        pred.y.push(x[0]);
        pred.v.push(x[1]);
        pred.events.push(ev);
        jacs.push(j);
    }
    let mut out = Sensitivity {
        prediction: pred,
        dy: DMatrix::zeros(0, 0),
        dv: DMatrix::zeros(0, 0),
        evaluations: 1,
        probes_halved: 0,
        one_sided: 0,
    };
    for (c, p) in layout.params.iter().enumerate() {
        // The initial state's columns come from the route's own Jacobian dx(t)/dx(0).
        let state_col = match p {
            Param::Height => Some(0),
            Param::Velocity => Some(1),
            _ => None,
        };
        if let Some(col) = state_col {
            let chain = p.chain(p.get(&model));
            for i in 0..n {
                dy[(i, c)] = jacs[i][(0, col)] * chain;
                dv[(i, c)] = jacs[i][(1, col)] * chain;
            }
            continue;
        }
        let (col_y, col_v) = central_column(setup, layout, z, times, c, &mut out)?;
        for i in 0..n {
            dy[(i, c)] = col_y[i];
            dv[(i, c)] = col_v[i];
        }
    }
    out.dy = dy;
    out.dv = dv;
    Ok(out)
}

/// Most halvings of a central-difference probe before a one-sided difference is taken.
const MAX_HALVINGS: u32 = 20;

/// Column `c` by central differences of the route's map with probe control.
fn central_column(
    setup: &RouteSetup,
    layout: &Layout,
    z: &[f64],
    times: &[f64],
    c: usize,
    out: &mut Sensitivity,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let nominal = out.prediction.clone();
    let eval = |h: f64, out: &mut Sensitivity| -> Option<Prediction> {
        let mut zz = z.to_vec();
        zz[c] += h;
        out.evaluations += 1;
        layout
            .model(&zz)
            .and_then(|m| predict(setup, &m, times))
            .ok()
    };
    let same = |p: &Option<Prediction>| p.as_ref().is_some_and(|p| p.events == nominal.events);
    let quot = |a: &Prediction, b: &Prediction, h: f64| -> (Vec<f64>, Vec<f64>) {
        (
            a.y.iter().zip(&b.y).map(|(p, m)| (p - m) / h).collect(),
            a.v.iter().zip(&b.v).map(|(p, m)| (p - m) / h).collect(),
        )
    };
    let mut h = setup.probe;
    for halving in 0..=MAX_HALVINGS {
        let (plus, minus) = (eval(h, out), eval(-h, out));
        if same(&plus) && same(&minus) {
            let (half_plus, half_minus) = (eval(0.5 * h, out), eval(-0.5 * h, out));
            if let (Some(a), Some(b), Some(ha), Some(hb)) = (
                plus.as_ref(),
                minus.as_ref(),
                half_plus.filter(|p| p.events == nominal.events),
                half_minus.filter(|p| p.events == nominal.events),
            ) {
                if halving > 0 {
                    out.probes_halved += 1;
                }
                // Richardson: (4·D(h/2) − D(h))/3 cancels the h² truncation term.
                let (wy, wv) = quot(a, b, 2.0 * h);
                let (ny, nv) = quot(&ha, &hb, h);
                let rich = |n: &[f64], w: &[f64]| -> Vec<f64> {
                    n.iter().zip(w).map(|(n, w)| (4.0 * n - w) / 3.0).collect()
                };
                return Ok((rich(&ny, &wy), rich(&nv, &wv)));
            }
        }
        if halving == MAX_HALVINGS {
            out.one_sided += 1;
            if let Some(a) = plus.filter(|p| p.events == nominal.events) {
                return Ok(quot(&a, &nominal, h));
            }
            if let Some(b) = minus.filter(|p| p.events == nominal.events) {
                return Ok(quot(&nominal, &b, h));
            }
        }
        h *= 0.5;
    }
    Err(FerroError::InvalidParameter {
        name: "probe",
        value: setup.probe,
        limit: format!(
            "every probe of parameter `{}` down to {h:e} changes the event sequence on both sides: the fit sits on an event (a sample time at an impact?)",
            layout.params[c].name()
        ),
    })
}

/// Indices of the tangent directions of the fixed route's rollout.
const TH: usize = 0;
const TV: usize = 1;
const TZETA: usize = 2;
const TK: usize = 3;
const TG: usize = 4;
const TM: usize = 5;

/// The fixed route along one rollout: semi-implicit Euler recorded at the steps
/// round(t_i/dt), with the forward-mode tangent of every step in the six physical
/// directions (height, velocity, zeta, k, gravity, mass), the branch of the push-only law
/// taken as given. The step is written as [`euler_with_tangent`] writes it, so the states
/// are the fixed route's bit for bit.
fn fixed_rollout(
    setup: &RouteSetup,
    model: &Model,
    times: &[f64],
    params: &[Param],
) -> Result<Sensitivity> {
    let drop = &model.drop;
    let law = drop.penalty(model.k)?;
    let steps = sample_steps(times, setup.dt)?;
    let (k, c, m, g, dt) = (law.stiffness, law.damping, law.mass, drop.gravity, setup.dt);
    let inv_m = 1.0 / m;
    let sq = libm::sqrt(k * m);
    // dc/d(zeta, k, m) for c = 2·zeta·sqrt(k·m).
    let dc = [
        0.0,
        0.0,
        2.0 * sq,
        drop.zeta * libm::sqrt(m / k),
        0.0,
        drop.zeta * libm::sqrt(k / m),
    ];
    let (mut y, mut v) = (drop.height, drop.velocity);
    let mut ty = [0.0; 6];
    let mut tv = [0.0; 6];
    ty[TH] = 1.0;
    tv[TV] = 1.0;
    let n = times.len();
    let mut pred = Prediction {
        y: vec![0.0; n],
        v: vec![0.0; n],
        events: vec![0; n],
    };
    let mut tangents = vec![([0.0; 6], [0.0; 6]); n];
    let mut contact_steps = 0i64;
    let mut next = 0usize;
    let last = steps.last().copied().unwrap_or(0);
    let mut record =
        |i: u64, y: f64, v: f64, ty: &[f64; 6], tv: &[f64; 6], ev: i64, next: &mut usize| {
            while *next < n && steps[*next] == i {
                pred.y[*next] = y;
                pred.v[*next] = v;
                pred.events[*next] = ev;
                tangents[*next] = (*ty, *tv);
                *next += 1;
            }
        };
    record(0, y, v, &ty, &tv, 0, &mut next);
    for i in 0..last {
        let f = -k * y - c * v;
        if y < 0.0 && f > 0.0 {
            contact_steps += 1;
            let mut da = [0.0; 6];
            for d in 0..6 {
                let dk = if d == TK { 1.0 } else { 0.0 };
                let dm = if d == TM { 1.0 } else { 0.0 };
                let dg = if d == TG { 1.0 } else { 0.0 };
                let df = -k * ty[d] - c * tv[d] - y * dk - v * dc[d];
                da[d] = df * inv_m - f * inv_m * inv_m * dm - dg;
            }
            v += dt * (f * inv_m - g);
            y += dt * v;
            for d in 0..6 {
                tv[d] += dt * da[d];
                ty[d] += dt * tv[d];
            }
        } else {
            v += dt * -g;
            y += dt * v;
            tv[TG] -= dt;
            for d in 0..6 {
                ty[d] += dt * tv[d];
            }
        }
        record(i + 1, y, v, &ty, &tv, contact_steps, &mut next);
    }
    if pred.y.iter().chain(&pred.v).any(|x| !x.is_finite()) {
        return Err(FerroError::NonFinite {
            what: "fixed-step state",
            detail: format!(
                "k·dt²/m = {:e}: the explicit contact step is unstable above about 4",
                k * dt * dt / m
            ),
        });
    }
    let (dy, dv) = fixed_columns(model, params, &tangents);
    Ok(Sensitivity {
        prediction: pred,
        dy,
        dv,
        evaluations: 1,
        probes_halved: 0,
        one_sided: 0,
    })
}

/// The step index of each sample time on the grid of `dt` (0 at t = 0).
fn sample_steps(times: &[f64], dt: f64) -> Result<Vec<u64>> {
    times
        .iter()
        .map(|&t| {
            if t == 0.0 {
                Ok(0)
            } else {
                step_count(t, dt, crate::physics::integrate::DEFAULT_MAX_STEPS)
            }
        })
        .collect()
}

/// The fixed rollout's sensitivity columns: each fitted parameter's tangent at every sample
/// time (heights, velocities), through the parameter's coordinate chain.
fn fixed_columns(
    model: &Model,
    params: &[Param],
    tangents: &[([f64; 6], [f64; 6])],
) -> (DMatrix<f64>, DMatrix<f64>) {
    let (n, np) = (tangents.len(), params.len());
    let drop = &model.drop;
    let mut dy = DMatrix::zeros(n, np);
    let mut dv = DMatrix::zeros(n, np);
    for (col, p) in params.iter().enumerate() {
        let chain = p.chain(p.get(model));
        // Physical direction and the factor d(physical)/d(parameter).
        let (dir, factor) = match p {
            Param::Height => (TH, 1.0),
            Param::Velocity => (TV, 1.0),
            Param::Zeta => (TZETA, 1.0),
            Param::Restitution => (TZETA, 1.0 / d_limit_restitution(drop.zeta)),
            Param::K => (TK, 1.0),
            Param::Gravity => (TG, 1.0),
            Param::Mass => (TM, 1.0),
        };
        for i in 0..n {
            dy[(i, col)] = tangents[i].0[dir] * factor * chain;
            dv[(i, col)] = tangents[i].1[dir] * factor * chain;
        }
    }
    (dy, dv)
}

/// de/dzeta of the penalty law's stiff-limit restitution
/// `e = exp(-u)`, `u = zeta·(pi - 2·asin zeta)/sqrt(1 - zeta²)`.
pub fn d_limit_restitution(zeta: f64) -> f64 {
    let s = libm::sqrt(1.0 - zeta * zeta);
    let a = std::f64::consts::PI - 2.0 * libm::asin(zeta);
    let du = (a - 2.0 * zeta / s) / s + zeta * a * zeta / (s * s * s);
    -limit_restitution_unchecked(zeta) * du
}

/// The zeta whose stiff-limit restitution is `e` (in (0, 1]), by bisection to adjacent floats.
pub fn zeta_for_restitution(e: f64) -> Result<f64> {
    if !(e.is_finite() && e > 0.0 && e <= 1.0) {
        return Err(FerroError::InvalidParameter {
            name: "restitution",
            value: e,
            limit: "must be in (0, 1]".into(),
        });
    }
    // limit_restitution falls from 1 at zeta = 0 towards 0 as zeta -> 1.
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    loop {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            return Ok(lo);
        }
        if limit_restitution_unchecked(mid) > e {
            lo = mid;
        } else {
            hi = mid;
        }
    }
}

/// A parameter's value in a model: here, beside the model, so `params` stays a leaf.
impl Param {
    /// Its value in a model.
    pub fn get(&self, m: &Model) -> f64 {
        match self {
            Param::Zeta => m.drop.zeta,
            Param::Restitution => m.restitution.unwrap_or_else(|| {
                crate::physics::contact::penalty::limit_restitution_unchecked(m.drop.zeta)
            }),
            Param::K => m.k,
            Param::Height => m.drop.height,
            Param::Velocity => m.drop.velocity,
            Param::Gravity => m.drop.gravity,
            Param::Mass => m.drop.mass,
        }
    }

    /// Set its value in a model (restitution also sets the zeta it implies).
    pub fn set(&self, m: &mut Model, value: f64) -> Result<()> {
        match self {
            Param::Zeta => m.drop.zeta = value,
            Param::Restitution => {
                m.drop.zeta = zeta_for_restitution(value)?;
                m.restitution = Some(value);
            }
            Param::K => m.k = value,
            Param::Height => m.drop.height = value,
            Param::Velocity => m.drop.velocity = value,
            Param::Gravity => m.drop.gravity = value,
            Param::Mass => m.drop.mass = value,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restitution_derivative_matches_central_differences() {
        for &z in &[0.05, 0.1606, 0.4, 0.8] {
            let h = 1e-6;
            let fd = (limit_restitution_unchecked(z + h) - limit_restitution_unchecked(z - h))
                / (2.0 * h);
            assert!(
                (d_limit_restitution(z) - fd).abs() < 1e-7 * fd.abs().max(1.0),
                "{z}"
            );
        }
    }

    #[test]
    fn restitution_inverse_round_trips() {
        for &z in &[0.01, 0.1606, 0.5, 0.9] {
            let e = limit_restitution_unchecked(z);
            assert!((zeta_for_restitution(e).unwrap() - z).abs() < 1e-12);
        }
    }
}
