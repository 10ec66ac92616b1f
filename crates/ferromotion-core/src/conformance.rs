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

use std::collections::BTreeMap;

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use crate::error::{FerroError, Result};
use crate::hybrid::{HybridSystem, SlopeBall};
use crate::lab::readout::{Sign, FAR_OFF};
use crate::physics::contact::penalty::limit_restitution;
use crate::physics::contact::rigid::{exact_with_impacts, ExactOptions, DEFAULT_GRAZE_SPEED};
use crate::physics::model::Drop;

/// The fixture format's name and version; a reader refuses any other.
pub const SCHEMA: &str = "ferromotion.fixture/1";
/// Relative tolerance on x(T) (max|x - x*| / max|x*|) for `conforms`.
pub const STATE_RTOL: f64 = 1e-2;
/// Relative tolerance on J (max|J - J*| / max|J*|) for `conforms`.
pub const JACOBIAN_RTOL: f64 = 5e-2;
/// Impacts [`slope_exact`] goes through before it gives up.
const MAX_IMPACTS: usize = 64;

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
    /// `drop` or `slope`.
    pub name: String,
    /// What the problem is, in words.
    pub description: String,
    /// The contact law an engine should map, in words.
    pub contact_law: String,
    /// Names of the state's components, in order.
    pub state_names: Vec<String>,
    /// Their units.
    pub units: Vec<String>,
    /// Parameters.
    pub parameters: Parameters,
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
    if s == SCHEMA {
        return Ok(());
    }
    let (name, version) = SCHEMA.split_once('/').unwrap_or((SCHEMA, "1"));
    let ours: u64 = version.parse().unwrap_or(1);
    match s
        .strip_prefix(name)
        .and_then(|v| v.strip_prefix('/'))
        .and_then(|v| v.parse::<u64>().ok())
    {
        Some(v) if v > ours => Err(bad(
            "schema",
            format!("{s:?} is a later version of the format than this ferromotion reads ({SCHEMA}); upgrade ferromotion"),
        )),
        _ => Err(bad("schema", format!("expected {SCHEMA:?}, got {s:?}"))),
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
        parameters: Parameters {
            gravity: drop.gravity,
            mass: drop.mass,
            zeta: drop.zeta,
            restitution: limit_restitution(drop.zeta)?,
            angle: 0.0,
        },
        initial_state: vec![drop.height, drop.velocity],
        t_final: drop.t_final,
        exact: Answer {
            state: vec![r.state[0], r.state[1]],
            jacobian: rows(&j),
            impacts: impacts.iter().map(|i| i.t).collect(),
        },
        key_entry: [1, 0],
        tolerances: tolerances(),
        verdicts: verdict_meanings(),
        suggested: suggested(),
    })
}

/// The slope's exact rigid answer: (x(T), J, impact times), closed form.
pub fn slope_exact(
    ball: &SlopeBall,
    x0: &[f64; 4],
    t_final: f64,
) -> Result<(DVector<f64>, DMatrix<f64>, Vec<f64>)> {
    ball.validate()?;
    crate::error::positive("t_final", t_final)?;
    let g = ball.gravity;
    let guard_grad = ball.guard_gradient(0, 0, &DVector::zeros(4));
    let (nx, nz) = (guard_grad[0], guard_grad[1]);
    let an = -g * nz; // normal acceleration (< 0)
    let fly = |x: &DVector<f64>, t: f64| {
        DVector::from_vec(vec![
            x[0] + x[2] * t,
            x[1] + x[3] * t - 0.5 * g * t * t,
            x[2],
            x[3] - g * t,
        ])
    };
    let flight_jac = |t: f64| {
        let mut a = DMatrix::identity(4, 4);
        a[(0, 2)] = t;
        a[(1, 3)] = t;
        a
    };
    let mut x = DVector::from_row_slice(x0);
    let mut jac = DMatrix::identity(4, 4);
    let mut t = 0.0;
    let mut impacts = Vec::new();
    let h0 = nx * x[0] + nz * x[1];
    if !(h0 > 0.0) {
        return Err(FerroError::InvalidParameter {
            name: "initial_state",
            value: h0,
            limit: "the ball must start above the plane (n·p > 0)".into(),
        });
    }
    loop {
        // After an impact h is 0 up to round-off and v_n > 0: the larger root is the next impact.
        let h = (nx * x[0] + nz * x[1]).max(0.0);
        let vn = nx * x[2] + nz * x[3];
        // Larger root of h + vn*s + an*s^2/2 = 0 (an < 0), written without cancellation.
        let disc = libm::sqrt(vn * vn - 2.0 * an * h);
        let s = if vn >= 0.0 {
            (vn + disc) / (-an)
        } else {
            2.0 * h / (disc - vn)
        };
        if t + s >= t_final {
            let rest = t_final - t;
            x = fly(&x, rest);
            jac = flight_jac(rest) * jac;
            break;
        }
        if impacts.len() >= MAX_IMPACTS {
            return Err(FerroError::TooManySteps {
                route: "slope_exact",
                max_steps: MAX_IMPACTS as u64,
                detail: format!("{} impacts by t = {t} s", impacts.len()),
            });
        }
        t += s;
        let mut xm = fly(&x, s);
        // Land exactly on the plane: move p along n by the round-off left in the guard.
        let miss = nx * xm[0] + nz * xm[1];
        xm[0] -= miss * nx;
        xm[1] -= miss * nz;
        jac = flight_jac(s) * jac;
        let speed = -(nx * xm[2] + nz * xm[3]);
        if speed < DEFAULT_GRAZE_SPEED {
            return Err(FerroError::Grazing {
                t,
                speed,
                threshold: DEFAULT_GRAZE_SPEED,
                term: (1.0 + ball.restitution) * g * nz / speed,
            });
        }
        impacts.push(t);
        let f_minus = ball.rhs(0, &xm);
        let (_, xp) = ball.reset(0, 0, &xm);
        let f_plus = ball.rhs(0, &xp);
        let dr = ball.reset_jacobian(0, 0, &xm);
        let speed_g = guard_grad.dot(&f_minus);
        let salt = &dr + (&f_plus - &dr * &f_minus) * guard_grad.transpose() / speed_g;
        jac = salt * jac;
        x = xp;
    }
    Ok((x, jac, impacts))
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
        parameters: Parameters {
            gravity: drop.gravity,
            mass: drop.mass,
            zeta: drop.zeta,
            restitution: e,
            angle,
        },
        initial_state: x0.to_vec(),
        t_final,
        exact: Answer {
            state: x.iter().copied().collect(),
            jacobian: rows(&j),
            impacts,
        },
        key_entry: [3, 1],
        tolerances: tolerances(),
        verdicts: verdict_meanings(),
        suggested: suggested(),
    })
}

/// Every shipped fixture at the defaults (`drop`, `slope`).
pub fn fixtures() -> Result<Vec<Fixture>> {
    let d = Drop::default();
    Ok(vec![
        drop_fixture(&d)?,
        slope_fixture(&d, SLOPE_ANGLE, &SLOPE_X0, d.t_final)?,
    ])
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
    /// ranges, and the lengths of the names, units, x(T) and J against x(0)'s: that length.
    fn validate_shapes(&self) -> Result<usize> {
        if self.schema != SCHEMA {
            return Err(bad(
                "schema",
                format!("expected {SCHEMA:?}, got {:?}", self.schema),
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
        let p = &self.parameters;
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
        for (field, len) in [
            ("state_names", self.state_names.len()),
            ("units", self.units.len()),
            ("exact.state", self.exact.state.len()),
            ("exact.jacobian", self.exact.jacobian.len()),
        ] {
            if len != n {
                return Err(bad(field, format!("{len} entries, initial_state has {n}")));
            }
        }
        if let Some((i, r)) = self
            .exact
            .jacobian
            .iter()
            .enumerate()
            .find(|(_, r)| r.len() != n)
        {
            return Err(bad(
                &format!("exact.jacobian[{i}]"),
                format!("{} entries, expected {n}", r.len()),
            ));
        }
        Ok(n)
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
    /// The key entry's sign line (`right`, `wrong`, `right_far_off`).
    pub sign: Sign,
    /// `conforms`, `right`, `right_far_off` or `wrong`.
    pub verdict: String,
    /// The fixture's meaning of that verdict.
    pub meaning: String,
}

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
    let max_abs = |v: &mut dyn Iterator<Item = f64>| {
        v.fold(
            0.0_f64,
            |m, x| if x.is_nan() { f64::NAN } else { m.max(x.abs()) },
        )
    };
    let ex = &fixture.exact;
    let state_error = max_abs(&mut state.iter().zip(&ex.state).map(|(a, b)| a - b))
        / max_abs(&mut ex.state.iter().copied());
    let gradient_error = max_abs(
        &mut jacobian
            .iter()
            .flatten()
            .zip(ex.jacobian.iter().flatten())
            .map(|(a, b)| a - b),
    ) / max_abs(&mut ex.jacobian.iter().flatten().copied());
    let [r, c] = fixture.key_entry;
    let (key, key_exact) = (jacobian[r][c], ex.jacobian[r][c]);
    let t = &fixture.tolerances;
    let sign = Sign::of(key, key_exact, gradient_error);
    let verdict = if sign == Sign::Right
        && gradient_error <= t.jacobian_rtol
        && state_error <= t.state_rtol
    {
        "conforms"
    } else {
        match sign {
            Sign::Right => "right",
            Sign::Wrong => "wrong",
            Sign::RightFarOff => "right_far_off",
        }
    };
    Ok(Conformance {
        fixture: fixture.name.clone(),
        state_error,
        gradient_error,
        key,
        key_exact,
        sign,
        verdict: verdict.into(),
        meaning: fixture.verdicts.get(verdict).cloned().unwrap_or_default(),
    })
}

/// An engine's x(T) and J of `drop` judged against the exact rigid answer: [`conformance`]
/// against [`drop_fixture`] at `drop`, whose key entry is dv(T)/dy0. The engine audit's
/// gradient error and sign line (the same three states as the lab's and the sweep's).
pub fn judge_drop(drop: &Drop, state: &[f64], jacobian: &[Vec<f64>]) -> Result<Conformance> {
    conformance(&drop_fixture(drop)?, state, jacobian)
}
