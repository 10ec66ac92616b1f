//! Reading a fixture document: size, depth and schema checked before parsing, every
//! refusal naming the field at fault, then the values validated against the system.

use super::*;

/// Where a fixture given as text (not a file) is said to come from.
pub const DOCUMENT: &str = "fixture document";
/// The largest fixture document read, bytes (the shipped ones hold about 3 kB): a larger file
/// is refused before it is read or parsed.
pub const MAX_BYTES: usize = 1 << 20;
/// The deepest nesting of arrays and objects read (the format needs 3): a deeper document is
/// refused before it is parsed.
pub const MAX_DEPTH: usize = 8;

/// The field at fault in a fixture document.
pub(super) fn bad(field: &str, reason: impl Into<String>) -> FerroError {
    FerroError::Fixture {
        path: DOCUMENT.into(),
        field: Some(field.into()),
        reason: reason.into(),
    }
}

/// The document as a whole at fault (not JSON, too large, too deep, unreadable).
pub(super) fn whole(path: &str, reason: impl Into<String>) -> FerroError {
    FerroError::Fixture {
        path: path.into(),
        field: None,
        reason: reason.into(),
    }
}

/// The same error, said of `path`.
pub(super) fn at(e: FerroError, path: &str) -> FerroError {
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
pub(super) fn nesting(text: &str, limit: usize) -> usize {
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
pub(super) fn non_finite_at(text: &str, line: usize, column: usize) -> bool {
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
pub(super) fn check_schema(schema: &serde_json::Value) -> Result<()> {
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
pub(super) fn parse(text: &str) -> Result<Fixture> {
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
pub(super) fn validate_parameters(p: &Parameters) -> Result<()> {
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
pub(super) fn validate_system(sys: &SystemDoc, n: usize) -> Result<()> {
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
