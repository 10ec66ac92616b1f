//! Conformance fixtures: contact problems with an exact rigid answer, as data any engine's
//! CI can run, and the verdict on an engine's x(T) and J = dx(T)/dx(0) against them.
//!
//! Two fixtures, both frictionless point contact whose stiff limit has restitution
//! `e = limit_restitution(zeta)` (the push-only penalty law's, independent of k):
//!
//! - `drop`: the default [`Drop`] (1 m from rest, T = 0.8 s); x = (y, v); the answer is
//!   [`crate::exact`]'s.
//! - `slope`: a ball above a plane inclined by `angle` through the origin, x = (p_x, p_z,
//!   v_x, v_z) (p the contact point, the ball's centre minus r·n), guard n·p, reset
//!   v+ = v- - (1+e)(n·v-)·n. Its answer [`slope_exact`] is closed form: parabolic flight,
//!   each impact time the root of a quadratic, the Jacobian composed from flight matrices
//!   and saltation matrices `Xi = DR + (f+ - DR·f-)·∇gᵀ/(∇gᵀ·f-)` (the reset and its
//!   Jacobian are [`SlopeBall`]'s). Tangential position at T depends on the impact time,
//!   so the off-diagonal blocks of J are where an engine's contact normal and tangent show.
//!
//! The JSON document ([`Fixture`], schema [`SCHEMA`]) carries everything needed to judge an
//! engine without this crate: initial state, parameters, horizon, exact x(T) and J, the
//! tolerances and what each verdict means. [`conformance`] is the verdict this crate gives.

mod nearest;

use std::collections::BTreeMap;

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

use crate::error::{FerroError, Result};
use crate::lab::readout::{Sign, FAR_OFF};
use crate::physics::contact::penalty::limit_restitution;
use crate::physics::contact::rigid::{exact_with_impacts, ExactOptions};
use crate::physics::model::Drop;
use crate::systems::tumbling_cube::{tumbling_cube, TumblingCube, CUBE_STATE_NAMES, CUBE_UNITS};
use crate::systems::{slope_exact, SlopeBall};

pub use nearest::{Nearest, AVERAGE_MARGIN};

/// The fixture format's first version: the drop and the slope are written in it.
pub const SCHEMA: &str = "ferromotion.fixture/1";
/// The second version: a fixture of a system defined in [`crate::systems`] (its kind and
/// parameters in `system`), whose exact answer may be pieces (no Jacobian) or several
/// outcomes (set-valued). A reader takes both and refuses any other.
pub const SCHEMA_V2: &str = "ferromotion.fixture/2";
/// Relative tolerance on x(T) (max|x - x*| / max|x*|) for `conforms`.
pub const STATE_RTOL: f64 = 1e-2;
/// Relative tolerance on J (max|J - J*| / max|J*|) for `conforms`.
pub const JACOBIAN_RTOL: f64 = 5e-2;

/// The slope fixture's default: the plane's inclination, rad.
pub const SLOPE_ANGLE: f64 = 0.3;
/// The slope fixture's default initial state (p_x, p_z, v_x, v_z): 1 m above the origin,
/// moving 0.5 m/s along x; one impact (t = 0.436 s) before T = 0.8 s.
pub const SLOPE_X0: [f64; 4] = [0.0, 1.0, 0.5, 0.0];

/// The exact answer of a fixture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// x(T).
    pub state: Vec<f64>,
    /// J = dx(T)/dx(0), rows of x(T), columns of x(0).
    pub jacobian: Vec<Vec<f64>>,
    /// Impact times, s.
    pub impacts: Vec<f64>,
    /// v2: whether one Jacobian exists (`differentiable`), only pieces (`not_differentiable`:
    /// `jacobian` empty), or no derivative at all (`set_valued`: `state` and `jacobian`
    /// empty, `outcomes` given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// v2: the derivative's linear pieces where simultaneous events were met.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pieces: Vec<PieceDoc>,
    /// v2, set-valued: the x(T) each order of the simultaneous events gives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<OutcomeDoc>,
}

/// What kind of derivative a v2 fixture's exact answer has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// One Jacobian (the pieces, if any, agree: the simultaneous events commuted).
    Differentiable,
    /// A continuous flow whose derivative has pieces that differ: no Jacobian.
    NotDifferentiable,
    /// The orders of simultaneous events give different states: no derivative.
    SetValued,
}

/// One linear piece of an exact derivative.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PieceDoc {
    /// Per simultaneous group, the order its guards were crossed in.
    pub orders: Vec<Vec<usize>>,
    /// The piece holds for the perturbations d of x(0) with row·d <= 0 for every row.
    pub cone: Vec<Vec<f64>>,
    /// dx(T)/dx(0) on that cone.
    pub jacobian: Vec<Vec<f64>>,
}

/// The x(T) one order of simultaneous events gives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutcomeDoc {
    /// The order (guard indices, first crossed first).
    pub order: Vec<usize>,
    /// x(T).
    pub state: Vec<f64>,
}

/// The system a v2 fixture is about: its kind in [`crate::systems`] and its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemDoc {
    /// The system's kind (`v_groove`).
    pub kind: String,
    /// Its parameters by name (each a list of numbers; one for a scalar).
    pub parameters: BTreeMap<String, Vec<f64>>,
}

/// Physical parameters of a fixture (SI).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parameters {
    /// Gravity, m/s² (along -z).
    pub gravity: f64,
    /// Mass, kg.
    pub mass: f64,
    /// Damping ratio of the penalty law the engine should map (c = 2·zeta·sqrt(k·m)).
    pub zeta: f64,
    /// Stiff-limit restitution of that law on the normal velocity (the rigid answer's).
    pub restitution: f64,
    /// Inclination of the contact plane, rad (0: the ground).
    pub angle: f64,
}

/// Tolerances of the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tolerances {
    /// max|x - x*| / max|x*| at most this for `conforms`.
    pub state_rtol: f64,
    /// max|J - J*| / max|J*| at most this for `conforms`.
    pub jacobian_rtol: f64,
    /// A gradient error at or above this makes a right key sign `right_far_off` (the sign
    /// line's [`FAR_OFF`], written out for readers without this crate).
    pub far_off: f64,
}

/// A conformance fixture: one document of schema [`SCHEMA`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// `drop`, `slope`, or a v2 fixture's name (`v_groove_90`).
    pub name: String,
    /// What the problem is, in words.
    pub description: String,
    /// The contact law an engine should map, in words.
    pub contact_law: String,
    /// Names of the state's components, in order.
    pub state_names: Vec<String>,
    /// Their units.
    pub units: Vec<String>,
    /// Parameters (v1; a v2 fixture gives its `system` instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Parameters>,
    /// v2: the system, as [`crate::systems`] defines it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemDoc>,
    /// x(0).
    pub initial_state: Vec<f64>,
    /// Horizon T, s.
    pub t_final: f64,
    /// The exact rigid x(T), J and impact times.
    pub exact: Answer,
    /// [row, column] of the Jacobian entry whose sign the verdict reads.
    pub key_entry: [usize; 2],
    /// Tolerances.
    pub tolerances: Tolerances,
    /// What each verdict means.
    pub verdicts: BTreeMap<String, String>,
    /// Stiffness (N/m) and step (s) the audit uses when mapping the law into an engine.
    pub suggested: BTreeMap<String, Vec<f64>>,
}

/// Where a fixture given as text (not a file) is said to come from.
pub const DOCUMENT: &str = "fixture document";
/// The largest fixture document read, bytes (the shipped ones hold about 3 kB): a larger file
/// is refused before it is read or parsed.
pub const MAX_BYTES: usize = 1 << 20;
/// The deepest nesting of arrays and objects read (the format needs 3): a deeper document is
/// refused before it is parsed.
pub const MAX_DEPTH: usize = 8;

/// The field at fault in a fixture document.
fn bad(field: &str, reason: impl Into<String>) -> FerroError {
    FerroError::Fixture {
        path: DOCUMENT.into(),
        field: Some(field.into()),
        reason: reason.into(),
    }
}

/// The document as a whole at fault (not JSON, too large, too deep, unreadable).
fn whole(path: &str, reason: impl Into<String>) -> FerroError {
    FerroError::Fixture {
        path: path.into(),
        field: None,
        reason: reason.into(),
    }
}

/// The same error, said of `path`.
fn at(e: FerroError, path: &str) -> FerroError {
    match e {
        FerroError::Fixture { field, reason, .. } => FerroError::Fixture {
            path: path.into(),
            field,
            reason,
        },
        other => other,
    }
}

/// The deepest nesting of `[` and `{` outside strings, stopping once past `limit`.
fn nesting(text: &str, limit: usize) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for b in text.bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > limit {
                    break;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Whether the text at (`line`, `column`), 1-based as serde_json counts, spells a number JSON
/// does not have (NaN, Infinity, as Python's `json.dumps` writes them).
fn non_finite_at(text: &str, line: usize, column: usize) -> bool {
    let rest = text
        .lines()
        .nth(line.saturating_sub(1))
        .and_then(|l| l.get(column.saturating_sub(1)..))
        .unwrap_or("");
    ["NaN", "Infinity", "-Infinity"]
        .iter()
        .any(|w| rest.starts_with(w))
}

/// `schema` must be [`SCHEMA`]; a later version of the format is named as such.
fn check_schema(schema: &serde_json::Value) -> Result<()> {
    let Some(s) = schema.as_str() else {
        return Err(bad(
            "schema",
            format!("expected the string {SCHEMA:?}, got {schema}"),
        ));
    };
    if s == SCHEMA || s == SCHEMA_V2 {
        return Ok(());
    }
    let (name, version) = SCHEMA_V2.split_once('/').unwrap_or((SCHEMA_V2, "2"));
    let ours: u64 = version.parse().unwrap_or(2);
    match s
        .strip_prefix(name)
        .and_then(|v| v.strip_prefix('/'))
        .and_then(|v| v.parse::<u64>().ok())
    {
        Some(v) if v > ours => Err(bad(
            "schema",
            format!("{s:?} is a later version of the format than this ferromotion reads ({SCHEMA}, {SCHEMA_V2}); upgrade ferromotion"),
        )),
        _ => Err(bad(
            "schema",
            format!("expected {SCHEMA:?} or {SCHEMA_V2:?}, got {s:?}"),
        )),
    }
}

/// A document's structure read into a [`Fixture`], refusals naming the field.
fn parse(text: &str) -> Result<Fixture> {
    if text.len() > MAX_BYTES {
        return Err(whole(
            DOCUMENT,
            format!(
                "{} bytes, more than the {MAX_BYTES} a fixture may hold",
                text.len()
            ),
        ));
    }
    if nesting(text, MAX_DEPTH) > MAX_DEPTH {
        return Err(whole(
            DOCUMENT,
            format!(
                "nested deeper than {MAX_DEPTH} levels of arrays and objects (a fixture needs 3)"
            ),
        ));
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        // A number JSON cannot hold in f64 (1e999) is a syntax error to a Value; read into the
        // struct, serde says in which field it sits.
        let mut de = serde_json::Deserializer::from_str(text);
        let at = serde_path_to_error::deserialize::<_, Fixture>(&mut de).err();
        let said = |inner: serde_json::Error| {
            if non_finite_at(text, inner.line(), inner.column()) {
                "not a finite number (JSON has no NaN or Infinity)".to_string()
            } else {
                inner.to_string()
            }
        };
        match at.map(|a| (a.path().to_string(), said(a.into_inner()))) {
            // "." is the whole document; "?" a place serde could not name.
            Some((field, reason)) if field != "." && !field.contains('?') => bad(&field, reason),
            _ => whole(DOCUMENT, format!("not JSON: {e}")),
        }
    })?;
    if !value.is_object() {
        return Err(whole(DOCUMENT, "not a JSON object"));
    }
    // The version first: a later format is told so, not by its first unknown field.
    match value.get("schema") {
        Some(s) => check_schema(s)?,
        None => return Err(bad("schema", "missing")),
    }
    serde_path_to_error::deserialize(&value).map_err(|e| {
        let path = e.path().to_string();
        let reason = e.into_inner().to_string();
        let join = |name: &str| {
            if path == "." {
                name.to_string()
            } else {
                format!("{path}.{name}")
            }
        };
        // serde names a missing field from its parent: name the field itself.
        let missing = reason
            .strip_prefix("missing field `")
            .and_then(|r| r.strip_suffix('`'));
        match missing {
            Some(name) => bad(&join(name), "missing"),
            None => bad(&path, reason),
        }
    })
}

fn verdict_meanings() -> BTreeMap<String, String> {
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

fn tolerances() -> Tolerances {
    Tolerances {
        state_rtol: STATE_RTOL,
        jacobian_rtol: JACOBIAN_RTOL,
        far_off: FAR_OFF,
    }
}

fn suggested() -> BTreeMap<String, Vec<f64>> {
    let k: Vec<f64> = (0..9)
        .map(|i| libm::pow(10.0, 3.0 + 0.5 * i as f64))
        .collect();
    [("stiffness".to_string(), k), ("dt".to_string(), vec![1e-4])]
        .into_iter()
        .collect()
}

fn rows(j: &DMatrix<f64>) -> Vec<Vec<f64>> {
    (0..j.nrows())
        .map(|r| j.row(r).iter().copied().collect())
        .collect()
}

const LAW: &str = "frictionless point contact along the plane's normal n: push-only spring-damper F = max(0, -k*d - c*d') for penetration depth -d > 0 (d the signed gap), c = 2*zeta*sqrt(k*m); the rigid answer is its stiff limit, normal restitution e = exp(-zeta*(pi - 2*asin(zeta))/sqrt(1 - zeta^2)), tangential velocity unchanged";

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
pub fn fixtures() -> Result<Vec<Fixture>> {
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
fn cube_of(p: &BTreeMap<String, Vec<f64>>) -> Result<TumblingCube> {
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
}

/// The rigid law of the v2 fixtures, in words.
const RIGID_LAW: &str = "frictionless rigid impact: at each guard's zero the reset v+ = v- - (1+e)(n.v-) n (n the contact's unit normal), restitution e on the normal velocity; simultaneous impacts applied in turn, each while its contact is approaching (sequential Newton restitution)";

/// The v2 fixtures: the V-groove (commuting, set-valued, off the axis), the cylinder, the
/// switched field.
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
        },
        Case {
            name: "v_groove_100",
            kind: "v_groove",
            parameters: groove(100.0 * deg),
            x0: vec![0.0, 1.0, 0.0, 0.0],
            t_final: 0.8,
            key_entry: [2, 0],
            description: "the same drop in a 100 degree groove: the two orders give mirror-image states, so no derivative exists (set-valued); an engine's gradient here is an artefact of its tie-breaking",
        },
        Case {
            name: "v_groove_off_axis",
            kind: "v_groove",
            parameters: groove(100.0 * deg),
            x0: vec![0.05, 1.0, 0.0, 0.0],
            t_final: 0.8,
            key_entry: [2, 0],
            description: "the 100 degree groove dropped 5 cm off its axis: one wall at a time, an ordinary Jacobian",
        },
        Case {
            name: "cylinder",
            kind: "cylinder",
            parameters: vec![("radius", vec![0.5]), ("restitution", vec![0.6])],
            x0: vec![0.2, 1.2, 0.0, 0.0],
            t_final: 0.8,
            key_entry: [2, 0],
            description: "a ball dropped off-centre onto a cylinder of radius 0.5 m: the contact normal turns with the impact point, and the reset's Jacobian carries that curvature",
        },
        Case {
            name: "switched_field",
            kind: "switched_field",
            parameters: Vec::new(),
            x0: vec![1.0, 1.0],
            t_final: 2.0,
            key_entry: [0, 0],
            description: "a piecewise-constant field switched by x1 = 0 and x2 = 0, both crossed at t = 1: the flow is continuous, its derivative has two pieces (one per order of the switches) that differ, so no Jacobian exists; the directional derivative does",
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
    let Some(answer) = sys.exact(&x0, 0, 0.0, case.t_final) else {
        return Err(FerroError::Scenario(format!(
            "{} has no exact answer",
            spec.class
        )));
    };
    let exact = match answer {
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
    };
    Ok(Fixture {
        schema: SCHEMA_V2.into(),
        name: case.name.into(),
        description: format!(
            "{}; {} from x0 = {:?}, run to T = {} s",
            case.description, spec.summary, case.x0, case.t_final
        ),
        contact_law: RIGID_LAW.into(),
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
        suggested: suggested(),
    })
}

/// A v2 fixture's verdicts: the four of v1, `not_differentiable` and `set_valued`.
fn v2_verdicts() -> BTreeMap<String, String> {
    let extra = V2_MEANINGS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()));
    verdict_meanings().into_iter().chain(extra).collect()
}

/// Event times with the simultaneous ones (equal to round-off) said once.
fn dedup_times(times: impl Iterator<Item = f64>) -> Vec<f64> {
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

impl Fixture {
    /// Read a fixture document given as text, refusing it with [`FerroError::Fixture`]
    /// naming the field at fault (said of [`DOCUMENT`]).
    pub fn from_json(text: &str) -> Result<Fixture> {
        Self::from_json_at(text, DOCUMENT)
    }

    /// [`Fixture::from_json`] for a document read from `path` (named in every refusal).
    pub fn from_json_at(text: &str, path: &str) -> Result<Fixture> {
        parse(text)
            .and_then(|f| f.validate().map(|()| f))
            .map_err(|e| at(e, path))
    }

    /// Read and check the fixture file at `path`; one larger than [`MAX_BYTES`] is refused
    /// before it is read.
    pub fn read(path: &std::path::Path) -> Result<Fixture> {
        let shown = path.display().to_string();
        let cannot = |e: std::io::Error| {
            if e.kind() != std::io::ErrorKind::NotFound {
                return whole(&shown, format!("cannot read the file: {e}"));
            }
            // Most often a shipped fixture's name mistyped: say which names there are.
            let names: Vec<String> = fixtures()
                .map(|f| f.into_iter().map(|f| f.name).collect())
                .unwrap_or_default();
            whole(
                &shown,
                format!(
                    "no such file, and no shipped fixture has this name: the shipped fixtures are {} \
                     (or give the path of a fixture file)",
                    names.join(", ")
                ),
            )
        };
        let size = std::fs::metadata(path).map_err(cannot)?.len();
        if size > MAX_BYTES as u64 {
            return Err(whole(
                &shown,
                format!("{size} bytes, more than the {MAX_BYTES} a fixture may hold"),
            ));
        }
        let bytes = std::fs::read(path).map_err(cannot)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            whole(
                &shown,
                format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
            )
        })?;
        Self::from_json_at(&text, &shown)
    }

    /// Check the document's values: schema, shapes of x(T) and J against x(0), finite
    /// numbers in range; refusals name the field.
    pub fn validate(&self) -> Result<()> {
        let n = self.validate_shapes()?;
        self.validate_numbers(n)?;
        self.validate_tables()
    }

    /// The schema, x(0)'s length (the fixture's own where it is known), the parameters'
    /// ranges (v1) or the system (v2), and the lengths of the names, units, x(T) and J against
    /// x(0)'s: that length.
    fn validate_shapes(&self) -> Result<usize> {
        let v2 = self.schema == SCHEMA_V2;
        if self.schema != SCHEMA && !v2 {
            return Err(bad(
                "schema",
                format!(
                    "expected {SCHEMA:?} or {SCHEMA_V2:?}, got {:?}",
                    self.schema
                ),
            ));
        }
        let n = self.initial_state.len();
        if n == 0 {
            return Err(bad("initial_state", "empty"));
        }
        for (name, len) in [("drop", 2), ("slope", 4)] {
            if self.name == name && n != len {
                return Err(bad(
                    "initial_state",
                    format!("{n} entries; the {name} fixture's x has {len}"),
                ));
            }
        }
        match (&self.parameters, &self.system, v2) {
            (None, _, false) => return Err(bad("parameters", "missing")),
            (_, Some(_), false) => {
                return Err(bad("system", format!("needs schema {SCHEMA_V2:?}")))
            }
            (_, None, true) => return Err(bad("system", "missing")),
            _ => {}
        }
        if !v2 {
            let e = &self.exact;
            for (field, used) in [
                ("exact.outcome", e.outcome.is_some()),
                ("exact.pieces", !e.pieces.is_empty()),
                ("exact.outcomes", !e.outcomes.is_empty()),
            ] {
                if used {
                    return Err(bad(field, format!("needs schema {SCHEMA_V2:?}")));
                }
            }
        }
        if let Some(p) = &self.parameters {
            validate_parameters(p)?;
        }
        if let Some(sys) = &self.system {
            validate_system(sys, n)?;
        }
        for (field, len) in [
            ("state_names", self.state_names.len()),
            ("units", self.units.len()),
        ] {
            if len != n {
                return Err(bad(field, format!("{len} entries, initial_state has {n}")));
            }
        }
        self.validate_answer_shapes(n)?;
        Ok(n)
    }

    /// x(T), J, the pieces and the outcomes shaped as the outcome says.
    fn validate_answer_shapes(&self, n: usize) -> Result<()> {
        let e = &self.exact;
        let outcome = e.outcome.unwrap_or(Outcome::Differentiable);
        let square = |field: &str, j: &[Vec<f64>]| -> Result<()> {
            if j.len() != n {
                return Err(bad(
                    field,
                    format!("{} entries, initial_state has {n}", j.len()),
                ));
            }
            match j.iter().enumerate().find(|(_, r)| r.len() != n) {
                Some((i, r)) => Err(bad(
                    &format!("{field}[{i}]"),
                    format!("{} entries, expected {n}", r.len()),
                )),
                None => Ok(()),
            }
        };
        let empty = |field: &str, len: usize| -> Result<()> {
            match len {
                0 => Ok(()),
                _ => Err(bad(
                    field,
                    format!("must be empty when exact.outcome is {outcome:?}"),
                )),
            }
        };
        match outcome {
            Outcome::SetValued => {
                empty("exact.state", e.state.len())?;
                empty("exact.jacobian", e.jacobian.len())?;
                if e.outcomes.len() < 2 {
                    return Err(bad(
                        "exact.outcomes",
                        "a set-valued answer needs two or more",
                    ));
                }
            }
            Outcome::NotDifferentiable => {
                empty("exact.jacobian", e.jacobian.len())?;
                if e.pieces.len() < 2 {
                    return Err(bad(
                        "exact.pieces",
                        "an answer without a Jacobian needs two or more pieces",
                    ));
                }
            }
            Outcome::Differentiable => square("exact.jacobian", &e.jacobian)?,
        }
        if outcome != Outcome::SetValued && e.state.len() != n {
            return Err(bad(
                "exact.state",
                format!("{} entries, initial_state has {n}", e.state.len()),
            ));
        }
        for (k, p) in e.pieces.iter().enumerate() {
            square(&format!("exact.pieces[{k}].jacobian"), &p.jacobian)?;
            if let Some(i) = p.cone.iter().position(|r| r.len() != n) {
                return Err(bad(
                    &format!("exact.pieces[{k}].cone[{i}]"),
                    format!("{} entries, expected {n}", p.cone[i].len()),
                ));
            }
        }
        for (k, o) in e.outcomes.iter().enumerate() {
            if o.state.len() != n {
                return Err(bad(
                    &format!("exact.outcomes[{k}].state"),
                    format!("{} entries, expected {n}", o.state.len()),
                ));
            }
        }
        Ok(())
    }

    /// Finite x(0), x(T) and J; t_final, the key entry, the tolerances and the impact times
    /// in range.
    fn validate_numbers(&self, n: usize) -> Result<()> {
        let finite = |field: &str, v: &[f64]| -> Result<()> {
            match v.iter().position(|x| !x.is_finite()) {
                Some(i) => Err(bad(&format!("{field}[{i}]"), "not a finite number")),
                None => Ok(()),
            }
        };
        finite("initial_state", &self.initial_state)?;
        finite("exact.state", &self.exact.state)?;
        for (i, r) in self.exact.jacobian.iter().enumerate() {
            finite(&format!("exact.jacobian[{i}]"), r)?;
        }
        for (k, p) in self.exact.pieces.iter().enumerate() {
            for (i, r) in p.jacobian.iter().enumerate() {
                finite(&format!("exact.pieces[{k}].jacobian[{i}]"), r)?;
            }
            for (i, r) in p.cone.iter().enumerate() {
                finite(&format!("exact.pieces[{k}].cone[{i}]"), r)?;
            }
        }
        for (k, o) in self.exact.outcomes.iter().enumerate() {
            finite(&format!("exact.outcomes[{k}].state"), &o.state)?;
        }
        if !(self.t_final.is_finite() && self.t_final > 0.0) {
            return Err(bad(
                "t_final",
                format!("must be finite and > 0, got {}", self.t_final),
            ));
        }
        if self.key_entry.iter().any(|&i| i >= n) {
            return Err(bad(
                "key_entry",
                format!("{:?} is outside a {n}x{n} Jacobian", self.key_entry),
            ));
        }
        let t = &self.tolerances;
        for (field, v) in [
            ("tolerances.state_rtol", t.state_rtol),
            ("tolerances.jacobian_rtol", t.jacobian_rtol),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(field, format!("must be finite and > 0, got {v}")));
            }
        }
        for (i, &ti) in self.exact.impacts.iter().enumerate() {
            if !(ti.is_finite() && ti > 0.0 && ti <= self.t_final) {
                return Err(bad(
                    &format!("exact.impacts[{i}]"),
                    format!("must be in (0, t_final = {}] s, got {ti}", self.t_final),
                ));
            }
        }
        Ok(())
    }

    /// Every verdict named, a `dt` among the suggestions, every suggestion positive, and the
    /// sign line's far-off threshold.
    fn validate_tables(&self) -> Result<()> {
        let t = &self.tolerances;
        for v in ["conforms", "right", "right_far_off", "wrong"] {
            if !self.verdicts.contains_key(v) {
                return Err(bad(&format!("verdicts.{v}"), "missing"));
            }
        }
        if !self.suggested.contains_key("dt") {
            return Err(bad("suggested.dt", "missing"));
        }
        for (key, values) in &self.suggested {
            if values.is_empty() {
                return Err(bad(&format!("suggested.{key}"), "empty"));
            }
            if let Some(i) = values.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
                return Err(bad(
                    &format!("suggested.{key}[{i}]"),
                    format!("must be finite and > 0, got {}", values[i]),
                ));
            }
        }
        if t.far_off != FAR_OFF {
            return Err(bad(
                "tolerances.far_off",
                format!(
                    "must be {FAR_OFF} (the sign line's far-off threshold), got {}",
                    t.far_off
                ),
            ));
        }
        Ok(())
    }
}

/// A v1 fixture's parameters in range, refusals naming the field.
fn validate_parameters(p: &Parameters) -> Result<()> {
    for (field, v, ok, limit) in [
        ("parameters.gravity", p.gravity, p.gravity > 0.0, "> 0"),
        ("parameters.mass", p.mass, p.mass > 0.0, "> 0"),
        (
            "parameters.zeta",
            p.zeta,
            (0.0..1.0).contains(&p.zeta),
            "in [0, 1)",
        ),
        (
            "parameters.restitution",
            p.restitution,
            (0.0..=1.0).contains(&p.restitution),
            "in [0, 1]",
        ),
        (
            "parameters.angle",
            p.angle,
            p.angle.abs() < core::f64::consts::FRAC_PI_2,
            "in (-pi/2, pi/2) rad",
        ),
    ] {
        if !(v.is_finite() && ok) {
            return Err(bad(field, format!("must be finite and {limit}, got {v}")));
        }
    }
    Ok(())
}

/// A v2 fixture's system: a kind [`crate::systems`] defines, its parameters accepted by the
/// system's own checks (refusals naming `system.parameters.NAME`), its x of length `n`.
fn validate_system(sys: &SystemDoc, n: usize) -> Result<()> {
    if sys.kind == CUBE_KIND {
        cube_of(&sys.parameters)?;
        if n != 12 {
            return Err(bad(
                "initial_state",
                format!("{n} entries; a TumblingCube has 12"),
            ));
        }
        return Ok(());
    }
    let built = crate::systems::build(&sys.kind, &sys.parameters).map_err(|e| match e {
        FerroError::InvalidParameter { name, .. } => {
            bad(&format!("system.parameters.{name}"), e.to_string())
        }
        FerroError::Scenario(m) if m.starts_with("unknown system") => bad("system.kind", m),
        other => bad("system.parameters", other.to_string()),
    })?;
    let want = built.spec().state_names.len();
    if want != n {
        return Err(bad(
            "initial_state",
            format!("{n} entries; a {} has {want}", built.spec().class),
        ));
    }
    Ok(())
}

/// An engine's x(T) and J judged against a fixture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conformance {
    /// The fixture's name.
    pub fixture: String,
    /// max|x - x*| / max|x*|.
    pub state_error: f64,
    /// max|J - J*| / max|J*|.
    pub gradient_error: f64,
    /// The engine's key entry of J and the exact one.
    pub key: f64,
    /// The exact key entry.
    pub key_exact: f64,
    /// The key entry's sign line (`right`, `wrong`, `right_far_off`); None for a set-valued
    /// fixture (no derivative, so no sign to have).
    pub sign: Option<Sign>,
    /// `conforms`, `right`, `right_far_off` or `wrong`; for a fixture without a Jacobian
    /// `not_differentiable` (judged against the nearest piece) or `set_valued`.
    pub verdict: String,
    /// The fixture's meaning of that verdict.
    pub meaning: String,
    /// v2: what kind of derivative the exact answer has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// Not differentiable: which piece the engine's J is nearest, or whether it averages them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pieces: Option<Nearest>,
    /// Set-valued: which order's outcome the engine's x(T) is nearest (the one its
    /// tie-breaking picked), or whether it lands between them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcomes: Option<Nearest>,
}

/// What `not_differentiable` and `set_valued` mean (a v2 fixture's document says it too).
const V2_MEANINGS: [(&str, &str); 2] = [
    ("not_differentiable", "the exact flow has no Jacobian here, only pieces (one per order of the simultaneous events): the gradient error and the key's sign are taken against the piece the engine's J is nearest, or the pieces' average when it is nearer; no single gradient is right for every direction"),
    ("set_valued", "the exact outcome depends on the order of the simultaneous events: no derivative exists; the state error is taken against the outcome the engine's x(T) is nearest (the one its tie-breaking picked), or their average when it lands between them, and any gradient the engine returns is an artefact"),
];

/// Judge an engine's `state` = x(T) and `jacobian` = J against `fixture`.
pub fn conformance(fixture: &Fixture, state: &[f64], jacobian: &[Vec<f64>]) -> Result<Conformance> {
    fixture.validate()?;
    let n = fixture.initial_state.len();
    if state.len() != n {
        return Err(FerroError::InvalidParameter {
            name: "state",
            value: state.len() as f64,
            limit: format!("x(T) must have {n} entries, as the fixture's x"),
        });
    }
    if let Some(r) = jacobian.iter().find(|r| r.len() != n) {
        return Err(FerroError::InvalidParameter {
            name: "gradient",
            value: r.len() as f64,
            limit: format!("every row of J must have {n} entries (a {n}x{n} Jacobian)"),
        });
    }
    if jacobian.len() != n {
        return Err(FerroError::InvalidParameter {
            name: "gradient",
            value: jacobian.len() as f64,
            limit: format!("J must have {n} rows (a {n}x{n} Jacobian)"),
        });
    }
    match fixture.exact.outcome {
        Some(Outcome::SetValued) => Ok(judge_set_valued(fixture, state, jacobian)),
        Some(Outcome::NotDifferentiable) => Ok(judge_pieces(fixture, state, jacobian)),
        _ => Ok(judge(fixture, state, jacobian, &fixture.exact.jacobian)),
    }
}

/// max|a - b| / max|b| over the entries (NaN in a or b gives NaN).
fn rel(a: &mut dyn Iterator<Item = f64>, b: &mut dyn Iterator<Item = f64>) -> f64 {
    let (mut diff, mut scale) = (0.0_f64, 0.0_f64);
    for (x, y) in a.zip(b) {
        let d = (x - y).abs();
        if d.is_nan() {
            return f64::NAN;
        }
        diff = diff.max(d);
        scale = scale.max(y.abs());
    }
    diff / scale
}

/// The verdict against one exact J (`exact`): the fixture's own, or a piece's.
fn judge(
    fixture: &Fixture,
    state: &[f64],
    jacobian: &[Vec<f64>],
    exact: &[Vec<f64>],
) -> Conformance {
    let ex = &fixture.exact;
    let state_error = rel(&mut state.iter().copied(), &mut ex.state.iter().copied());
    let gradient_error = rel(
        &mut jacobian.iter().flatten().copied(),
        &mut exact.iter().flatten().copied(),
    );
    let [r, c] = fixture.key_entry;
    let (key, key_exact) = (jacobian[r][c], exact[r][c]);
    let t = &fixture.tolerances;
    let sign = Sign::of(key, key_exact, gradient_error);
    let verdict = if sign == Sign::Right
        && gradient_error <= t.jacobian_rtol
        && state_error <= t.state_rtol
    {
        "conforms"
    } else {
        sign.as_str()
    };
    Conformance {
        fixture: fixture.name.clone(),
        state_error,
        gradient_error,
        key,
        key_exact,
        sign: Some(sign),
        verdict: verdict.into(),
        meaning: meaning(fixture, verdict),
        outcome: ex.outcome,
        pieces: None,
        outcomes: None,
    }
}

fn meaning(fixture: &Fixture, verdict: &str) -> String {
    fixture
        .verdicts
        .get(verdict)
        .cloned()
        .or_else(|| {
            V2_MEANINGS
                .iter()
                .find(|(k, _)| *k == verdict)
                .map(|(_, m)| m.to_string())
        })
        .unwrap_or_default()
}

/// No Jacobian, only pieces: judged against the nearest piece (or the pieces' average).
fn judge_pieces(fixture: &Fixture, state: &[f64], jacobian: &[Vec<f64>]) -> Conformance {
    let pieces = &fixture.exact.pieces;
    let flat: Vec<Vec<f64>> = pieces
        .iter()
        .map(|p| p.jacobian.iter().flatten().copied().collect())
        .collect();
    let labels: Vec<String> = pieces
        .iter()
        .map(|p| format!("orders {:?}", p.orders))
        .collect();
    let got: Vec<f64> = jacobian.iter().flatten().copied().collect();
    let near = nearest::nearest("pieces", &got, &flat, &labels);
    // Judged against the named piece; equidistant, against the first of the nearest.
    let closest = (0..flat.len()).min_by(|&a, &b| near.distances[a].total_cmp(&near.distances[b]));
    let named = match (near.decision, closest) {
        ("average", _) | (_, None) => nearest::mean(&flat),
        (_, Some(i)) => flat[i].clone(),
    };
    let n = fixture.initial_state.len();
    let as_rows: Vec<Vec<f64>> = named.chunks(n).map(<[f64]>::to_vec).collect();
    let mut out = judge(fixture, state, jacobian, &as_rows);
    out.verdict = "not_differentiable".into();
    out.meaning = meaning(fixture, "not_differentiable");
    out.pieces = Some(near);
    out
}

/// No derivative: x(T) placed among the orders' outcomes; no gradient error, no sign.
fn judge_set_valued(fixture: &Fixture, state: &[f64], jacobian: &[Vec<f64>]) -> Conformance {
    let outcomes = &fixture.exact.outcomes;
    let states: Vec<Vec<f64>> = outcomes.iter().map(|o| o.state.clone()).collect();
    let labels: Vec<String> = outcomes
        .iter()
        .map(|o| format!("order {:?}", o.order))
        .collect();
    let near = nearest::nearest("outcomes", state, &states, &labels);
    let state_error = match near.nearest {
        Some(i) => near.distances[i],
        None => near.to_mean,
    };
    let [r, c] = fixture.key_entry;
    Conformance {
        fixture: fixture.name.clone(),
        state_error,
        gradient_error: f64::NAN,
        key: jacobian[r][c],
        key_exact: f64::NAN,
        sign: None,
        verdict: "set_valued".into(),
        meaning: meaning(fixture, "set_valued"),
        outcome: Some(Outcome::SetValued),
        pieces: None,
        outcomes: Some(near),
    }
}

/// An engine's x(T) and J of `drop` judged against the exact rigid answer: [`conformance`]
/// against [`drop_fixture`] at `drop`, whose key entry is dv(T)/dy0. The engine audit's
/// gradient error and sign line (the same three states as the lab's and the sweep's).
pub fn judge_drop(drop: &Drop, state: &[f64], jacobian: &[Vec<f64>]) -> Result<Conformance> {
    conformance(&drop_fixture(drop)?, state, jacobian)
}
