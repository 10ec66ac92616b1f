//! The shipped fixtures: the drop, the slope, the tumbling cube and the systems cases, each
//! built from its exact answer.

use super::*;
use crate::hybrid::{hybrid_jacobian, HybridOptions};

pub(super) fn verdict_meanings() -> BTreeMap<String, String> {
    let m = [
        ("conforms", "x(T) and J are within the tolerances of the exact rigid answer: this gradient can be used as the rigid system's"),
        ("right", "the key entry of J has the exact sign and the gradient error is below far_off, but outside jacobian_rtol (or x(T) is outside state_rtol): usable for the sign, not for the value"),
        ("right_far_off", "the key entry's sign agrees but the gradient error is at least far_off: the sign is right by accident"),
        ("wrong", "the key entry of J has the wrong sign (or is not a number): a descent step on it goes the wrong way"),
    ];
    m.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub(super) fn tolerances() -> Tolerances {
    Tolerances {
        state_rtol: STATE_RTOL,
        jacobian_rtol: JACOBIAN_RTOL,
        far_off: FAR_OFF,
    }
}

pub(super) fn suggested() -> BTreeMap<String, Vec<f64>> {
    let k: Vec<f64> = (0..9)
        .map(|i| libm::pow(10.0, 3.0 + 0.5 * i as f64))
        .collect();
    [("stiffness".to_string(), k), ("dt".to_string(), vec![1e-4])]
        .into_iter()
        .collect()
}

pub(super) fn rows(j: &DMatrix<f64>) -> Vec<Vec<f64>> {
    (0..j.nrows())
        .map(|r| j.row(r).iter().copied().collect())
        .collect()
}

pub(super) const LAW: &str = "frictionless point contact along the plane's normal n: push-only spring-damper F = max(0, -k*d - c*d') for penetration depth -d > 0 (d the signed gap), c = 2*zeta*sqrt(k*m); the rigid answer is its stiff limit, normal restitution e = exp(-zeta*(pi - 2*asin(zeta))/sqrt(1 - zeta^2)), tangential velocity unchanged";

/// The drop fixture at `drop`'s parameters (its answer is [`exact`]'s).
pub fn drop_fixture(drop: &Drop) -> Result<Fixture> {
    let (r, impacts) = exact_with_impacts(drop, &ExactOptions::default())?;
    let j = DMatrix::from_fn(2, 2, |i, c| r.jacobian[(i, c)]);
    Ok(Fixture {
        schema: SCHEMA.into(),
        name: "drop".into(),
        description: format!(
            "a point mass dropped from y0 = {} m with v0 = {} m/s onto the ground y = 0, run to T = {} s",
            drop.height, drop.velocity, drop.t_final
        ),
        contact_law: LAW.into(),
        state_names: vec!["y".into(), "v".into()],
        units: vec!["m".into(), "m/s".into()],
        parameters: Some(Parameters {
            gravity: drop.gravity,
            mass: drop.mass,
            zeta: drop.zeta,
            restitution: limit_restitution(drop.zeta)?,
            angle: 0.0,
        }),
        system: None,
        initial_state: vec![drop.height, drop.velocity],
        t_final: drop.t_final,
        exact: Answer {
            state: vec![r.state[0], r.state[1]],
            jacobian: rows(&j),
            impacts: impacts.iter().map(|i| i.t).collect(),
            outcome: None,
            pieces: Vec::new(),
            outcomes: Vec::new(),
        },
        key_entry: [1, 0],
        tolerances: tolerances(),
        verdicts: verdict_meanings(),
        suggested: suggested(),
    })
}

/// The slope fixture: [`SlopeBall`] at `angle` with the drop's gravity, mass and zeta,
/// from `x0`, to `t_final`.
pub fn slope_fixture(drop: &Drop, angle: f64, x0: &[f64; 4], t_final: f64) -> Result<Fixture> {
    drop.validate()?;
    let e = limit_restitution(drop.zeta)?;
    let ball = SlopeBall {
        gravity: drop.gravity,
        restitution: e,
        angle,
    };
    let (x, j, impacts) = slope_exact(&ball, x0, t_final)?;
    Ok(Fixture {
        schema: SCHEMA.into(),
        name: "slope".into(),
        description: format!(
            "a ball above a frictionless plane inclined by {angle} rad through the origin (unit normal n = (-sin, cos)); \
             x = contact point p (the ball's centre minus r*n) and its velocity, from x0 = {x0:?}, run to T = {t_final} s"
        ),
        contact_law: LAW.into(),
        state_names: vec!["p_x".into(), "p_z".into(), "v_x".into(), "v_z".into()],
        units: vec!["m".into(), "m".into(), "m/s".into(), "m/s".into()],
        parameters: Some(Parameters {
            gravity: drop.gravity,
            mass: drop.mass,
            zeta: drop.zeta,
            restitution: e,
            angle,
        }),
        system: None,
        initial_state: x0.to_vec(),
        t_final,
        exact: Answer {
            state: x.iter().copied().collect(),
            jacobian: rows(&j),
            impacts,
            outcome: None,
            pieces: Vec::new(),
            outcomes: Vec::new(),
        },
        key_entry: [3, 1],
        tolerances: tolerances(),
        verdicts: verdict_meanings(),
        suggested: suggested(),
    })
}

/// Every shipped fixture at the defaults: `drop` and `slope` (v1), then each of [`cases`] (v2).
/// Built once per process (the penalty rod's converged answer takes ~0.2 s), then copied.
pub fn fixtures() -> Result<Vec<Fixture>> {
    static SHIPPED: std::sync::OnceLock<Vec<Fixture>> = std::sync::OnceLock::new();
    if let Some(all) = SHIPPED.get() {
        return Ok(all.clone());
    }
    let all = build_fixtures()?;
    Ok(SHIPPED.get_or_init(|| all).clone())
}

fn build_fixtures() -> Result<Vec<Fixture>> {
    let d = Drop::default();
    let mut all = vec![
        drop_fixture(&d)?,
        slope_fixture(&d, SLOPE_ANGLE, &SLOPE_X0, d.t_final)?,
    ];
    for case in &cases() {
        all.push(case_fixture(case)?);
    }
    all.push(cube_fixture(
        &TumblingCube::default(),
        &CUBE_X0,
        CUBE_T_FINAL,
    )?);
    Ok(all)
}

/// The tumbling cube fixture's system kind (a v2 `system.kind`; the cube is not in
/// [`crate::systems::REGISTRY`]: its orientation lives on SO(3), its route is its own).
pub const CUBE_KIND: &str = "tumbling_cube";
/// The tumbling cube fixture's x(0) = (c, θ, v, ω): two corner strikes (corners 1 and 4)
/// before [`CUBE_T_FINAL`].
pub const CUBE_X0: [f64; 12] = [0.0, 0.0, 0.5, 0.5, 0.3, 0.2, 0.2, 0.0, 0.0, 2.0, 1.0, -1.0];
/// Its horizon, s.
pub const CUBE_T_FINAL: f64 = 0.45;

/// The tumbling cube as a v2 fixture: [`TumblingCube`] from `x0` to `t_final`, its exact
/// x(T), J in tangent coordinates (an orientation perturbation is a world-frame rotation
/// vector left-multiplied, R' = Exp(δ)·R, at t = 0 and at T) and its strike times. The key
/// entry is dv_z(T)/dc_z(0), the drop's dv(T)/dy0 seen through two off-centre strikes.
pub fn cube_fixture(cube: &TumblingCube, x0: &[f64; 12], t_final: f64) -> Result<Fixture> {
    let sol = tumbling_cube(cube, x0, t_final)?;
    let parameters = [
        ("half_side", cube.half_side),
        ("mass", cube.mass),
        ("restitution", cube.restitution),
        ("gravity", cube.gravity),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), vec![v]))
    .collect();
    Ok(Fixture {
        schema: SCHEMA_V2.into(),
        name: CUBE_KIND.into(),
        description: format!(
            "a cube of half side {} m and mass {} kg (isotropic inertia 2/3 m a^2) tumbling onto the frictionless plane z = 0, gravity {} m/s^2 along -z, from x0 = {:?}, run to T = {} s: {} corner strikes, each off-centre, so the lever arm r x n couples linear and angular motion. x = (c, theta, v, omega): centre, orientation as a world-frame rotation vector (R = Exp(theta)), velocity, world-frame angular velocity. J is in tangent coordinates: rows and columns 3..5 are a world-frame rotation vector delta left-multiplied (R' = Exp(delta) R), at t = 0 and at T; the other blocks are plain derivatives",
            cube.half_side, cube.mass, cube.gravity, x0, t_final, sol.impacts.len()
        ),
        contact_law: "frictionless rigid impact of one corner at a time: at a corner's zero height, Newton restitution e on the contact point's normal velocity u = v_z + omega.(r x z), impulse lambda = -(1+e) u / (1/m + |r x z|^2 / I) along +z (r the corner's offset from the centre, I = 2/3 m a^2)".into(),
        state_names: CUBE_STATE_NAMES.iter().map(|s| s.to_string()).collect(),
        units: CUBE_UNITS.iter().map(|s| s.to_string()).collect(),
        parameters: None,
        system: Some(SystemDoc {
            kind: CUBE_KIND.into(),
            parameters,
        }),
        initial_state: x0.to_vec(),
        t_final,
        exact: Answer {
            state: sol.state.to_vec(),
            jacobian: rows(&sol.jacobian),
            impacts: sol.impacts.iter().map(|i| i.t).collect(),
            outcome: Some(Outcome::Differentiable),
            pieces: Vec::new(),
            outcomes: Vec::new(),
        },
        key_entry: [8, 2],
        tolerances: tolerances(),
        verdicts: verdict_meanings(),
        suggested: suggested(),
    })
}

/// The cube's `system.parameters` read into a [`TumblingCube`] (unknown names refused).
pub(super) fn cube_of(p: &BTreeMap<String, Vec<f64>>) -> Result<TumblingCube> {
    let mut cube = TumblingCube::default();
    for (k, v) in p {
        let slot = match k.as_str() {
            "half_side" => &mut cube.half_side,
            "mass" => &mut cube.mass,
            "restitution" => &mut cube.restitution,
            "gravity" => &mut cube.gravity,
            _ => {
                return Err(bad(
                    &format!("system.parameters.{k}"),
                    "unknown parameter of the tumbling cube: it has half_side, mass, restitution, gravity",
                ))
            }
        };
        match v[..] {
            [x] => *slot = x,
            _ => {
                return Err(bad(
                    &format!("system.parameters.{k}"),
                    format!("{} numbers; a scalar is one", v.len()),
                ))
            }
        }
    }
    cube.validate().map_err(|e| match e {
        FerroError::InvalidParameter { name, .. } => {
            bad(&format!("system.parameters.{name}"), e.to_string())
        }
        other => bad("system.parameters", other.to_string()),
    })?;
    Ok(cube)
}

/// A v2 fixture as data: a system of [`crate::systems`] at these parameters, from x0 to T;
/// its answer is the system's exact one.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The fixture's name.
    pub name: &'static str,
    /// The system's kind.
    pub kind: &'static str,
    /// Its parameters by name (defaults fill the rest).
    pub parameters: Vec<(&'static str, Vec<f64>)>,
    /// x(0).
    pub x0: Vec<f64>,
    /// T, s.
    pub t_final: f64,
    /// [row, column] of the Jacobian entry whose sign the verdict reads.
    pub key_entry: [usize; 2],
    /// What it shows, in words.
    pub description: &'static str,
    /// The contact law an engine should map, in words.
    pub contact_law: &'static str,
    /// `None`: the answer is the system's exact one. `Some(dt)`: the system has no closed
    /// form; the answer is [`hybrid_jacobian`]'s at this step, converged (its dt/2 probe
    /// must agree within [`CONVERGED_RTOL`]) and said so in the description.
    pub converged_dt: Option<f64>,
}

/// How close a converged numeric answer's J must stay when dt is halved, relative to
/// max(1, max|J|).
pub const CONVERGED_RTOL: f64 = 1e-10;

/// The rod fixtures' x(0) = (x, y, theta, v_x, v_y, omega): level, its centre 0.5 m above the
/// ground, at rest; both ends strike at t = sqrt(2*0.5/g) = 0.319 s.
pub const ROD_X0: [f64; 6] = [0.0, 0.5, 0.0, 0.0, 0.0, 0.0];

/// The rigid law of the v2 fixtures, in words.
pub(super) const RIGID_LAW: &str = "frictionless rigid impact: at each guard's zero the reset v+ = v- - (1+e)(n.v-) n (n the contact's unit normal), restitution e on the normal velocity; simultaneous impacts applied in turn, each while its contact is approaching (sequential Newton restitution)";

/// The rigid rod's law, in words (the reset of [`crate::systems::RigidRod`]).
pub(super) const ROD_LAW: &str = "frictionless rigid impact at a rod's end: at end i's zero height (y + s*(L/2)*sin(theta), s = -1 left, +1 right), Newton restitution e on its normal velocity u = v_y + r*omega (r = s*(L/2)*cos(theta) its lever arm), impulse P = -(1+e)*u/(1/m + r^2/I) along +y: v_y += P/m, omega += r*P/I; simultaneous impacts applied in turn, the order swept again while any end still approaches (sequential Newton restitution)";

/// The penalty rod's law, in words (the forces of [`crate::systems::PenaltyRod`]).
pub(super) const PENALTY_ROD_LAW: &str = "frictionless push-only spring-damper at each end of a rod: while end i is below the ground (height g_i = y + s*(L/2)*sin(theta) < 0, s = -1 left, +1 right), a force F_i = max(0, -k*g_i - c*g_i') along +y at that end, lever arm r = s*(L/2)*cos(theta); forces summed: dv_y/dt += F_i/m, domega/dt += r*F_i/I. The answer is this law's own at this k and c (no rigid limit is meant)";

/// The v2 fixtures: the V-groove (commuting, set-valued, off the axis), the cylinder, the
/// switched field, the rigid rod landing flat (uniform: set-valued; dumbbell: commuting).
pub fn cases() -> Vec<Case> {
    let deg = std::f64::consts::PI / 180.0;
    let groove = |angle: f64| vec![("angle", vec![angle]), ("restitution", vec![0.5])];
    vec![
        Case {
            name: "v_groove_90",
            kind: "v_groove",
            parameters: groove(90.0 * deg),
            x0: vec![0.0, 1.0, 0.0, 0.0],
            t_final: 0.8,
            key_entry: [2, 0],
            description: "a ball dropped on the axis of a 90 degree V-groove meets both walls at the vertex at once; the walls' normals are orthogonal, the two orders give one state and one matrix: a Jacobian exists",
            contact_law: RIGID_LAW,
            converged_dt: None,
        },
        Case {
            name: "v_groove_100",
            kind: "v_groove",
            parameters: groove(100.0 * deg),
            x0: vec![0.0, 1.0, 0.0, 0.0],
            t_final: 0.8,
            key_entry: [2, 0],
            description: "the same drop in a 100 degree groove: the two orders give mirror-image states, so no derivative exists (set-valued); an engine's gradient here is an artefact of its tie-breaking",
            contact_law: RIGID_LAW,
            converged_dt: None,
        },
        Case {
            name: "v_groove_off_axis",
            kind: "v_groove",
            parameters: groove(100.0 * deg),
            x0: vec![0.05, 1.0, 0.0, 0.0],
            t_final: 0.8,
            key_entry: [2, 0],
            description: "the 100 degree groove dropped 5 cm off its axis: one wall at a time, an ordinary Jacobian",
            contact_law: RIGID_LAW,
            converged_dt: None,
        },
        Case {
            name: "cylinder",
            kind: "cylinder",
            parameters: vec![("radius", vec![0.5]), ("restitution", vec![0.6])],
            x0: vec![0.2, 1.2, 0.0, 0.0],
            t_final: 0.8,
            key_entry: [2, 0],
            description: "a ball dropped off-centre onto a cylinder of radius 0.5 m: the contact normal turns with the impact point, and the reset's Jacobian carries that curvature",
            contact_law: RIGID_LAW,
            converged_dt: None,
        },
        Case {
            name: "switched_field",
            kind: "switched_field",
            parameters: Vec::new(),
            x0: vec![1.0, 1.0],
            t_final: 2.0,
            key_entry: [0, 0],
            description: "a piecewise-constant field switched by x1 = 0 and x2 = 0, both crossed at t = 1: the flow is continuous, its derivative has two pieces (one per order of the switches) that differ, so no Jacobian exists; the directional derivative does",
            contact_law: "no contact: a piecewise-constant field switched when x1 or x2 reaches 0 from above",
            converged_dt: None,
        },
    ]
    .into_iter()
    .chain(rod_cases())
    .collect()
}

/// The rod landing flat: uniform and rigid (set-valued), a dumbbell (commuting), uniform on
/// spring-dampers (commuting; a converged numeric answer).
fn rod_cases() -> Vec<Case> {
    let rod = |inertia: f64| {
        vec![
            ("mass", vec![1.0]),
            ("length", vec![1.0]),
            ("inertia", vec![inertia]),
            ("restitution", vec![0.5]),
        ]
    };
    vec![
        Case {
            name: "rigid_rod",
            kind: "rigid_rod",
            parameters: rod(1.0 / 12.0),
            x0: ROD_X0.to_vec(),
            t_final: 0.45,
            key_entry: [4, 1],
            description: "a uniform rod (I = m L^2/12) dropped flat lands on both ends at once; an impulse at one end moves the other (the ends are coupled in the mass metric), so the two orders of the sequential impacts leave mirror-image states (the rod spinning one way or the other): no derivative exists (set-valued)",
            contact_law: ROD_LAW,
            converged_dt: None,
        },
        Case {
            name: "dumbbell_rod",
            kind: "rigid_rod",
            parameters: rod(0.25),
            x0: ROD_X0.to_vec(),
            t_final: 0.5,
            key_entry: [4, 1],
            description: "a dumbbell (I = m (L/2)^2, the mass at the ends) dropped flat lands on both ends at once; an impulse at one end leaves the other's velocity unchanged (the ends decouple), so the two orders give one state and one matrix: a Jacobian exists",
            contact_law: ROD_LAW,
            converged_dt: None,
        },
        Case {
            name: "penalty_rod",
            kind: "penalty_rod",
            parameters: vec![
                ("mass", vec![1.0]),
                ("length", vec![1.0]),
                ("inertia", vec![1.0 / 12.0]),
                ("stiffness", vec![1e4]),
                ("damping", vec![20.0]),
            ],
            x0: ROD_X0.to_vec(),
            t_final: 0.45,
            key_entry: [4, 1],
            description: "a uniform rod dropped flat onto a push-only spring-damper at each end: both ends touch down at once and let go at once; the forces add, each guard depends on positions only and each switch changes accelerations only, so the orders give one state and one matrix (the switches commute): a Jacobian exists. A converged numeric answer, not a closed form: x(T) and J are hybrid_jacobian's (RK4 with located switches and saltation matrices) at dt = 1e-5 s, J moving by less than 1e-10 max(1, max|J|) when dt is halved",
            contact_law: PENALTY_ROD_LAW,
            converged_dt: Some(1e-5),
        },
    ]
}

/// The v2 fixture of `case`: the system built (its parameters checked), its exact answer.
pub fn case_fixture(case: &Case) -> Result<Fixture> {
    let given: BTreeMap<String, Vec<f64>> = case
        .parameters
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let sys = crate::systems::build(case.kind, &given)?;
    let spec = sys.spec();
    let mut parameters = BTreeMap::new();
    let values = sys.values();
    let mut at = 0;
    for p in spec.params {
        parameters.insert(p.name.to_string(), values[at..at + p.len].to_vec());
        at += p.len;
    }
    let x0 = nalgebra::DVector::from_vec(case.x0.clone());
    let exact = case_answer(sys.as_ref(), case, &x0)?;
    let suggested = case_suggested(case, &parameters);
    Ok(Fixture {
        schema: SCHEMA_V2.into(),
        name: case.name.into(),
        description: format!(
            "{}; {} from x0 = {:?}, run to T = {} s",
            case.description, spec.summary, case.x0, case.t_final
        ),
        contact_law: case.contact_law.into(),
        state_names: spec.state_names.iter().map(|s| s.to_string()).collect(),
        units: spec.units.iter().map(|s| s.to_string()).collect(),
        parameters: None,
        system: Some(SystemDoc {
            kind: case.kind.into(),
            parameters,
        }),
        initial_state: case.x0.clone(),
        t_final: case.t_final,
        exact,
        key_entry: case.key_entry,
        tolerances: tolerances(),
        verdicts: v2_verdicts(),
        suggested,
    })
}

/// The suggestions; a penalty law's fixture (a converged answer) suggests its own stiffness.
fn case_suggested(
    case: &Case,
    parameters: &BTreeMap<String, Vec<f64>>,
) -> BTreeMap<String, Vec<f64>> {
    let mut out = suggested();
    if let (Some(_), Some(k)) = (case.converged_dt, parameters.get("stiffness")) {
        out.insert("stiffness".into(), k.clone());
    }
    out
}

/// `case`'s answer: the system's exact one, or (a system without one, `converged_dt` given)
/// [`hybrid_jacobian`]'s at that step, its dt/2 probe held to [`CONVERGED_RTOL`].
fn case_answer(
    sys: &dyn crate::systems::Declared,
    case: &Case,
    x0: &nalgebra::DVector<f64>,
) -> Result<Answer> {
    let spec = sys.spec();
    let answer = match (sys.exact(x0, 0, 0.0, case.t_final), case.converged_dt) {
        (Some(answer), _) => answer,
        (None, Some(dt)) => {
            let opts = HybridOptions {
                dt,
                probe_rtol: CONVERGED_RTOL,
                ..Default::default()
            };
            hybrid_jacobian(sys, x0, 0, 0.0, case.t_final, &opts)
        }
        (None, None) => {
            return Err(FerroError::Scenario(format!(
                "{} has no exact answer",
                spec.class
            )))
        }
    };
    Ok(match answer {
        Ok(sol) => {
            let pieces: Vec<PieceDoc> = if sol.pieces.largest_group > 1 {
                sol.pieces
                    .list
                    .iter()
                    .map(|p| PieceDoc {
                        orders: p.orders.clone(),
                        cone: p.cone.iter().map(|r| r.iter().copied().collect()).collect(),
                        jacobian: rows(&p.matrix),
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let agree = sol.pieces.agree();
            Answer {
                state: sol.x.iter().copied().collect(),
                jacobian: if agree {
                    rows(&sol.jacobian)
                } else {
                    Vec::new()
                },
                impacts: dedup_times(sol.events.iter().map(|e| e.t)),
                outcome: Some(if agree {
                    Outcome::Differentiable
                } else {
                    Outcome::NotDifferentiable
                }),
                pieces,
                outcomes: Vec::new(),
            }
        }
        Err(FerroError::SetValued {
            t,
            orders,
            outcomes,
            ..
        }) => Answer {
            state: Vec::new(),
            jacobian: Vec::new(),
            impacts: vec![t],
            outcome: Some(Outcome::SetValued),
            pieces: Vec::new(),
            outcomes: orders
                .into_iter()
                .zip(outcomes)
                .map(|(order, state)| OutcomeDoc { order, state })
                .collect(),
        },
        Err(e) => return Err(e),
    })
}

/// A v2 fixture's verdicts: the four of v1, `not_differentiable` and `set_valued`.
pub(super) fn v2_verdicts() -> BTreeMap<String, String> {
    let extra = V2_MEANINGS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()));
    verdict_meanings().into_iter().chain(extra).collect()
}

/// Event times with the simultaneous ones (equal to round-off) said once.
pub(super) fn dedup_times(times: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for t in times {
        if out
            .last()
            .is_none_or(|&l| (t - l).abs() > 1e-12 * t.abs().max(1.0))
        {
            out.push(t);
        }
    }
    out
}
