//! The fixture document: its types (the exact answer, pieces, outcomes, the system, the
//! parameters, the tolerances), as the JSON Schema ships them.

use super::*;

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
