//! The one error type of the core. Every fallible entry point returns [`Result`].
//!
//! Each variant names the parameter or quantity at fault and carries the numbers that
//! broke the limit, so a binding can show the message as it is (a Python exception, a
//! JS `Error` in the lab's status line) without rewording it.

/// Everything that can go wrong in the core, one variant per failure a user can cause.
///
/// Serialised, an error is its variant's fields as a map (`{name, value, limit}` for
/// `InvalidParameter`, `{reason}` for `Scenario`): what the bindings hand on beside the
/// message as Python's `err.fields` and JS's `error.fields`.
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize)]
#[serde(untagged)]
pub enum FerroError {
    /// A parameter is non-finite or outside its allowed range.
    /// A value that is not a number at all (an unknown name, a missing entry) is NaN here and
    /// left out of the message: "invalid parameter `params`: unknown parameter ...".
    #[error("invalid parameter `{name}`{}: {limit}", shown(*.value))]
    InvalidParameter {
        /// Parameter name as the user spells it (`k`, `dt`, `zeta`, ...).
        name: &'static str,
        /// The value received.
        value: f64,
        /// The limit it broke, in words (`must be > 0`).
        limit: String,
    },
    /// A fixed step that does not divide the final time into a whole number of steps.
    #[error(
        "dt = {dt:e} s does not divide t_final = {t_final} s: t_final/dt = {ratio} is not a whole number (to 1e-9 relative)"
    )]
    StepDoesNotDivide {
        /// The step received, s.
        dt: f64,
        /// The final time, s.
        t_final: f64,
        /// t_final / dt.
        ratio: f64,
    },
    /// A rollout needs (or took) more steps than the cap allows.
    #[error("{}: {}", past_cap(.route, *.max_steps), six_figures(.detail))]
    TooManySteps {
        /// Which route asked.
        route: &'static str,
        /// The cap.
        max_steps: u64,
        /// What was known when it stopped: the steps a fixed step would need, or the
        /// steps taken and the time reached by an adaptive one.
        detail: String,
    },
    /// The adaptive controller asked for a step below the `min_step` floor.
    #[error("step size {h:e} s at t = {t} s is below min_step = {min_step:e} s")]
    StepTooSmall {
        /// Time reached, s.
        t: f64,
        /// The step the controller asked for, s.
        h: f64,
        /// The floor, s.
        min_step: f64,
    },
    /// The drop does not reach the ground before the final time.
    #[error("no impact before t_final = {} s: the first impact is at t = {} s", micro(*.t_final), micro(*.t_impact))]
    NoImpact {
        /// The final time, s.
        t_final: f64,
        /// When the ground would first be reached, s (infinite if never).
        t_impact: f64,
    },
    /// An impact so slow that the time-of-impact term explodes; refused by default.
    #[error(
        "grazing impact at t = {t} s: speed {speed:e} m/s is below the threshold {threshold:e} m/s (the time-of-impact term would be {term:e} 1/s)"
    )]
    Grazing {
        /// Time of the impact, s.
        t: f64,
        /// Impact speed |v-|, m/s.
        speed: f64,
        /// The refusal threshold, m/s.
        threshold: f64,
        /// (1+e)·g/|v-|, 1/s: what the saltation entry would have been.
        term: f64,
    },
    /// The adaptive integrator's step fell below what f64 can resolve.
    #[error("the adaptive step fell below what a double can resolve at t = {} s (h = {} s): loosen rtol or atol", Num(*.t), Num(*.h))]
    StepSizeUnderflow {
        /// Time reached, s.
        t: f64,
        /// The step that was too small, s.
        h: f64,
    },
    /// A result came out NaN or infinite (an unstable step, an overflow).
    #[error("{what} is not finite ({detail})")]
    NonFinite {
        /// Which quantity.
        what: &'static str,
        /// Why it probably happened.
        detail: String,
    },
    /// A system declares state outside x that its flow depends on: its Jacobian with
    /// respect to x alone is not the derivative of what it computes.
    #[error(
        "hidden state in `{system}`: {what}; the Jacobian with respect to x alone would be wrong"
    )]
    HiddenState {
        /// The system's name.
        system: String,
        /// What it keeps outside x.
        what: String,
    },
    /// Two events inside one step: the step cannot be split at one switch.
    #[error("two events in one step at t = {} s (step {} s): {}; take a smaller step", Num(*.t), Num(*.dt), if .first == .second { format!("guard {first} crossed twice") } else { format!("guards {first} and {second}") })]
    TwoEventsInOneStep {
        /// Start of the step, s.
        t: f64,
        /// The step, s.
        dt: f64,
        /// The first guard that fired.
        first: usize,
        /// The second.
        second: usize,
    },
    /// Events in two adjacent steps: the step does not resolve them apart.
    #[error("events in adjacent steps at t = {} s and t = {} s (step {} s): the step does not resolve them apart (a chattering contact; a pair of crossings between two step ends could hide there); take a smaller step", Num(*.first), Num(*.second), Num(*.dt))]
    EventsInAdjacentSteps {
        /// Time of the earlier event, s.
        first: f64,
        /// Time of the later one, s.
        second: f64,
        /// The step, s.
        dt: f64,
    },
    /// The flow is continuous but its derivative is piecewise linear in the perturbation (the
    /// orders of simultaneous events give different matrices): no single Jacobian exists.
    #[error("no Jacobian: the derivative has {pieces} linear pieces (orders {orders}) that differ by up to {}, above the tolerance {}; the directional derivative jvp(d) and the pieces (each with its cone of perturbations) remain", Num(*.largest_difference), Num(*.tolerance))]
    NotDifferentiable {
        /// How many pieces.
        pieces: usize,
        /// Their event orders, in words.
        orders: String,
        /// max |M_a - M_b| over pairs of pieces (NaN when not enumerated).
        largest_difference: f64,
        /// The tolerance it broke.
        tolerance: f64,
        /// False when the orders were not enumerated (too many simultaneous events).
        enumerated: bool,
    },
    /// The orders of simultaneous events give different states: the outcome itself depends on
    /// the perturbation's direction, and no derivative exists.
    #[error("set-valued outcome at t = {} s: the orders of the simultaneous events give different states {at} (spread {}): {}; no derivative exists", Num(*.t), Num(*.spread), said_outcomes(.orders, .outcomes))]
    SetValued {
        /// Time of the simultaneous events, s.
        t: f64,
        /// The orders (guard indices, first crossed first).
        orders: Vec<Vec<usize>>,
        /// The state each order gives, in the same order.
        outcomes: Vec<Vec<f64>>,
        /// max |x_order - x_first| over the orders.
        spread: f64,
        /// Where the outcomes are (`at t1 = 0.8 s`, `just after the simultaneous events`).
        at: String,
    },
    /// Recomputing with another probe size moved the answer beyond tolerance.
    #[error("probe-dependent answer: recomputing with {probe} moved the Jacobian by {}, above the tolerance {}", Num(*.gap), Num(*.tolerance))]
    ProbeDependent {
        /// What was changed (e.g. "dt/2").
        probe: String,
        /// max |J1 - J2|.
        gap: f64,
        /// The tolerance it broke.
        tolerance: f64,
    },
    /// A step function's law changed inside a step where no guard was declared (found from
    /// its step Jacobian jumping between successive steps) and the driver could not locate
    /// that switch itself (`reason` says why).
    #[error("the step's law changes with no guard inside the step from t = {} s (step {} s): its step Jacobian jumps by {} from one step to the next, in the segment begun at guard {after}'s event, and {reason}; declare that switch as a guard with reset None (for a push-only penalty contact, its release: the force's argument, e.g. -k*y - c*v while y < 0)", Num(*.t), Num(*.dt), Num(*.jump))]
    UnguardedSwitch {
        /// Start of the step, s.
        t: f64,
        /// The step, s.
        dt: f64,
        /// max |D_(k+1) - D_k| of the step Jacobians.
        jump: f64,
        /// The guard whose event began the segment.
        after: usize,
        /// Why the driver could not locate it.
        reason: String,
    },
    /// The rigid contact's complementarity problem had no verified solution.
    #[error("contact solve failed at t = {t} s: {detail}")]
    ContactSolveFailed {
        /// Time of the step, s.
        t: f64,
        /// What failed, with the residuals.
        detail: String,
    },
    /// An explicit step blew up (a velocity beyond any physical scale).
    #[error("unstable step at t = {t} s: {detail}")]
    Unstable {
        /// Time of the step, s.
        t: f64,
        /// Which component, how large, and what to change.
        detail: String,
    },
    /// A scenario document could not be read.
    #[error("invalid scenario: {0}")]
    Scenario(#[serde(serialize_with = "reason_field")] String),
    /// A conformance fixture (file or document) that cannot be used: where it came from,
    /// the field at fault (dotted, with indices: `exact.jacobian[2]`) and why.
    #[error("{path}: {}{reason}", field_prefix(.field))]
    Fixture {
        /// The file's path, or `fixture document` when it came as text.
        path: String,
        /// The field at fault; None when the document as a whole is (not JSON, too large,
        /// too deep, unreadable).
        field: Option<String>,
        /// What is wrong, in words.
        reason: String,
    },
}

/// `Scenario`'s text as the map `{reason}`, so that every variant's fields are a map.
fn reason_field<S: serde::Serializer>(reason: &str, s: S) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(1))?;
    map.serialize_entry("reason", reason)?;
    map.end()
}

/// " = value" in at most six figures ([`Num`]), or nothing for NaN (the mark of a value that
/// is not a number at all: an unknown name, a missing entry), so a message never shows
/// "= NaN" nor a 16-digit float.
fn shown(value: f64) -> String {
    if value.is_nan() {
        return String::new();
    }
    format!(" = {}", Num(value))
}

/// `TooManySteps`'s head in the user's words: which route, and its cap as a count of what it
/// counts ("the fixed route goes past its cap of 10,000,000 steps (`max_steps`)"). The option's
/// name is given only where a user can set it; the exact routes' impacts and the flow's contact
/// episodes are capped by the core.
fn past_cap(route: &str, cap: u64) -> String {
    let who = match route {
        "fixed" | "rk4" | "corrected" | "tolerance" | "flow" | "exact" => {
            format!("the {route} route")
        }
        other => other.replace('_', " "),
    };
    let what = match route {
        "flow" => "contact episodes (`max_events`)",
        "exact" | "slope_exact" => "impacts",
        "exact_events" | "hybrid_jacobian" => "events",
        "projectile" => "steps",
        _ => "steps (`max_steps`)",
    };
    format!("{who} goes past its cap of {} {what}", Count(cap))
}

/// A detail's long floats (`t = 0.4515236406561575 s`) in six figures ([`Num`]), so the routes'
/// own words never show a 16-digit float; every other word as it is.
fn six_figures(detail: &str) -> String {
    detail
        .split(' ')
        .map(|word| {
            let digits = word.chars().filter(char::is_ascii_digit).count();
            match word.parse::<f64>() {
                Ok(x) if digits > 6 && word.contains('.') => Num(x).to_string(),
                _ => word.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A whole number with thousands separators, as the lab prints a count (`10,000,000`).
struct Count(u64);

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let digits = self.0.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        f.write_str(&out)
    }
}

/// A time to the microsecond, as a person reads it (`1.009638`, not 1.0096375546923044).
fn micro(t: f64) -> f64 {
    if t.is_finite() {
        libm::round(t * 1e6) / 1e6
    } else {
        t
    }
}

fn said_outcomes(orders: &[Vec<usize>], outcomes: &[Vec<f64>]) -> String {
    orders
        .iter()
        .zip(outcomes)
        .map(|(o, x)| {
            let xs: Vec<String> = x.iter().map(|v| format!("{v:.6}")).collect();
            format!("order {o:?} gives [{}]", xs.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn field_prefix(field: &Option<String>) -> String {
    field
        .as_ref()
        .map(|f| format!("field '{f}': "))
        .unwrap_or_default()
}

/// Result alias used throughout the core.
pub type Result<T> = std::result::Result<T, FerroError>;

impl From<serde_json::Error> for FerroError {
    fn from(e: serde_json::Error) -> Self {
        FerroError::Scenario(e.to_string())
    }
}

impl FerroError {
    /// A stable, machine-readable name for the variant (used by the bindings to pick
    /// the exception class or the JS error's `name`).
    pub fn kind(&self) -> &'static str {
        match self {
            FerroError::InvalidParameter { .. } => "InvalidParameter",
            FerroError::StepDoesNotDivide { .. } => "StepDoesNotDivide",
            FerroError::TooManySteps { .. } => "TooManySteps",
            FerroError::StepTooSmall { .. } => "StepTooSmall",
            FerroError::NoImpact { .. } => "NoImpact",
            FerroError::Grazing { .. } => "Grazing",
            FerroError::StepSizeUnderflow { .. } => "StepSizeUnderflow",
            FerroError::NonFinite { .. } => "NonFinite",
            FerroError::HiddenState { .. } => "HiddenState",
            FerroError::TwoEventsInOneStep { .. } => "TwoEventsInOneStep",
            FerroError::EventsInAdjacentSteps { .. } => "EventsInAdjacentSteps",
            FerroError::NotDifferentiable { .. } => "NotDifferentiable",
            FerroError::SetValued { .. } => "SetValued",
            FerroError::ProbeDependent { .. } => "ProbeDependent",
            FerroError::UnguardedSwitch { .. } => "UnguardedSwitch",
            FerroError::ContactSolveFailed { .. } => "ContactSolveFailed",
            FerroError::Unstable { .. } => "Unstable",
            FerroError::Scenario(_) => "Scenario",
            FerroError::Fixture { .. } => "Fixture",
        }
    }
}

/// Check that `value` is finite and strictly positive (public so that crates over the core,
/// the quadruped's, refuse a parameter in the same words).
pub fn positive(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(FerroError::InvalidParameter {
            name,
            value,
            limit: "must be finite and > 0".into(),
        })
    }
}

/// Check that `value` is finite (public for the same reason as [`positive`]).
pub fn finite(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(FerroError::InvalidParameter {
            name,
            value,
            limit: "must be finite".into(),
        })
    }
}

/// A core error as data, `{kind, message}`: for results that carry a refusal beside what
/// did compute (a sweep whose exponent cannot be fitted).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Refusal {
    /// The variant's name ([`FerroError::kind`]).
    pub kind: &'static str,
    /// The error's message.
    pub message: String,
}

impl From<&FerroError> for Refusal {
    fn from(e: &FerroError) -> Self {
        Refusal {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

/// A number as a message shows it: whole numbers below 1e6 as they are (`7`, `-1`), anything
/// else to 6 significant figures, in exponent form outside [1e-4, 1e6) (`0.05003`, `1e-20`,
/// `3.84617e-16`, `1e9`); `NaN`, `inf`, `-inf` as such. Never the 17 digits of a float's
/// shortest round trip, which a reader cannot use.
#[derive(Debug, Clone, Copy)]
pub struct Num(pub f64);

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let x = self.0;
        if !x.is_finite() {
            return write!(f, "{x}");
        }
        if x == x.trunc() && x.abs() < 1e6 {
            return write!(f, "{x}");
        }
        let sci = format!("{x:.5e}");
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let trim = |t: &str| -> String {
            if t.contains('.') {
                t.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                t.to_string()
            }
        };
        if (-4..6).contains(&exp) {
            let decimals = (5 - exp).max(0) as usize;
            write!(f, "{}", trim(&format!("{x:.decimals$}")))
        } else {
            write!(f, "{}e{exp}", trim(mantissa))
        }
    }
}

/// serde's message for an option it could not read, in the user's words: an unknown variant
/// (`unknown variant `flo`, expected one of `fixed`, `flow``) becomes "`route` = "flo" is not
/// one of its choices: fixed, flow"; an unknown field "unknown option `x`: the options are
/// ..."; anything else is prefixed with the option's name. `key` is the option as the caller
/// spelled it, when the binding could tell which one it was.
pub fn option_message(key: Option<&str>, message: &str) -> String {
    let ticked = |text: &str| -> Vec<String> {
        text.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    let choices = |names: &[String]| names.join(", ");
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        let names = ticked(rest);
        if let Some((given, valid)) = names.split_first() {
            let what = key.map_or("the value".to_string(), |k| format!("`{k}`"));
            return format!(
                "{what} = \"{given}\" is not one of its choices: {}",
                choices(valid)
            );
        }
    }
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let names = ticked(rest);
        if let Some((given, valid)) = names.split_first() {
            return format!(
                "unknown option `{given}`: the options are {}",
                choices(valid)
            );
        }
    }
    if let Some(words) = wrong_type(key, message) {
        return words;
    }
    match key {
        Some(k) => format!("`{k}`: {message}"),
        None => message.to_string(),
    }
}

/// serde's "invalid type: string \"x\", expected f64" as "`rtol` must be a number, not the
/// string \"x\"": what the option takes in words (not Rust's type names), then what it got.
fn wrong_type(key: Option<&str>, message: &str) -> Option<String> {
    let (got, expected) = message
        .strip_prefix("invalid type: ")?
        .split_once(", expected ")?;
    let takes = match expected {
        "f64" | "f32" => "a number",
        "u64" | "u32" | "u16" | "u8" | "usize" => "a whole number, 0 or more",
        "i64" | "i32" | "i16" | "i8" | "isize" => "a whole number",
        "a boolean" => "true or false",
        other => other,
    };
    let ticked = |kind: &str| {
        got.strip_prefix(kind)
            .and_then(|v| v.strip_prefix(" `"))
            .and_then(|v| v.strip_suffix('`'))
            .map(str::to_string)
    };
    let got = ticked("floating point")
        .or_else(|| ticked("integer"))
        .or_else(|| ticked("boolean"))
        .unwrap_or_else(|| match got {
            "unit value" => "nothing (None, null)".to_string(),
            other => format!("the {other}"),
        });
    let what = key.map_or("the value".to_string(), |k| format!("`{k}`"));
    Some(format!("{what} must be {takes}, not {got}"))
}

#[cfg(test)]
mod words {
    use super::{option_message, FerroError, Num};

    #[test]
    fn numbers_read_in_six_figures_at_most() {
        let shown: Vec<String> = [
            7.0,
            -1.0,
            1e9,
            0.050030000000000005,
            1e-20,
            3.846173227558817e-16,
            0.4515236409857294,
            f64::NAN,
            f64::NEG_INFINITY,
            123456.7,
        ]
        .iter()
        .map(|&x| Num(x).to_string())
        .collect();
        assert_eq!(
            shown,
            [
                "7",
                "-1",
                "1e9",
                "0.05003",
                "1e-20",
                "3.84617e-16",
                "0.451524",
                "NaN",
                "-inf",
                "123457"
            ]
        );
    }

    #[test]
    fn a_step_cap_reads_as_the_route_and_its_cap_counted() {
        let e = FerroError::TooManySteps {
            route: "fixed",
            max_steps: 10_000_000,
            detail: "T/dt = 1e9 steps would be needed".into(),
        };
        assert_eq!(
            e.to_string(),
            "the fixed route goes past its cap of 10,000,000 steps (`max_steps`): T/dt = 1e9 steps would be needed"
        );
        let adaptive = FerroError::TooManySteps {
            route: "tolerance",
            max_steps: 50,
            detail: "50 steps (25 accepted) reached t = 0.4515236406561575 s of T = 0.8 s".into(),
        };
        assert!(adaptive
            .to_string()
            .ends_with("50 steps (25 accepted) reached t = 0.451524 s of T = 0.8 s"));
        let flow = FerroError::TooManySteps {
            route: "flow",
            max_steps: 100_000,
            detail: String::new(),
        };
        assert!(flow.to_string().starts_with(
            "the flow route goes past its cap of 100,000 contact episodes (`max_events`):"
        ));
        let cube = FerroError::TooManySteps {
            route: "tumbling_cube",
            max_steps: 999,
            detail: String::new(),
        };
        assert!(cube
            .to_string()
            .starts_with("tumbling cube goes past its cap of 999 steps (`max_steps`)"));
    }

    #[test]
    fn serde_words_become_the_users() {
        assert_eq!(
            option_message(
                Some("route"),
                "unknown variant `flo`, expected one of `fixed`, `flow`, `exact`"
            ),
            "`route` = \"flo\" is not one of its choices: fixed, flow, exact"
        );
        assert_eq!(
            option_message(
                Some("jacobian"),
                "unknown variant `bogus`, expected `richardson` or `forward`"
            ),
            "`jacobian` = \"bogus\" is not one of its choices: richardson, forward"
        );
        assert_eq!(
            option_message(None, "unknown field `rtl`, expected `rtol` or `events`"),
            "unknown option `rtl`: the options are rtol, events"
        );
        assert_eq!(
            option_message(Some("rtol"), "invalid type: string \"x\", expected f64"),
            "`rtol` must be a number, not the string \"x\""
        );
        assert_eq!(
            option_message(
                Some("max_steps"),
                "invalid type: floating point `10000000.0`, expected u64"
            ),
            "`max_steps` must be a whole number, 0 or more, not 10000000.0"
        );
        assert_eq!(
            option_message(
                Some("events"),
                "invalid type: string \"no\", expected a boolean"
            ),
            "`events` must be true or false, not the string \"no\""
        );
        assert_eq!(
            option_message(None, "invalid type: map, expected a sequence"),
            "the value must be a sequence, not the map"
        );
    }
}
