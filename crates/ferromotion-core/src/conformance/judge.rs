//! The verdict on an engine's x(T) and J against a fixture: sign and error, the nearest piece
//! or outcome where there is no one Jacobian.

use super::*;

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
pub(super) const V2_MEANINGS: [(&str, &str); 2] = [
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
pub(super) fn rel(a: &mut dyn Iterator<Item = f64>, b: &mut dyn Iterator<Item = f64>) -> f64 {
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
pub(super) fn judge(
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

pub(super) fn meaning(fixture: &Fixture, verdict: &str) -> String {
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
pub(super) fn judge_pieces(fixture: &Fixture, state: &[f64], jacobian: &[Vec<f64>]) -> Conformance {
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
pub(super) fn judge_set_valued(
    fixture: &Fixture,
    state: &[f64],
    jacobian: &[Vec<f64>],
) -> Conformance {
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
