//! Which law wins each axis: the report's conclusion, decided once here and read by the
//! lab, the Python package, the CLI and the notebooks (they word it; they do not decide it).
//!
//! Every comparison is between numbers of the same report, with one threshold of its own,
//! the reference's agreement tolerance `probe_tol`, and one named factor ([`FAR_FACTOR`]).
//! Laws are named by their index in `QuadrupedReport::penalty`; only laws whose runs
//! finished with both axes take part ("compared").
//!
//! - **Forward fidelity**: the rigid law wins unless some penalty stiffness matches or
//!   beats it on all four at once: penetration, sticking-foot creep, distance to its own
//!   dt/refinement run, and contact work (no more than max(0, rigid's): a ground that does
//!   positive work pumps energy in).
//! - **Gradient accuracy**, per measure (`tangent_error`, `typical_probe_error`,
//!   `converged_error`): `not computed` (the converged measure was not asked for),
//!   `undecided` (no certified number on one side), `tie` (every certified error at or
//!   below `probe_tol`, the reference's own agreement), `win` (every penalty error above
//!   the rigid one), otherwise `loss` (some stiffness at or below it).
//! - **Both axes**: the forward win and no gradient measure lost, undecided or pending.

use super::config::QuadrupedExperiment;
use super::report::{Forward, Gradient, LawReport};
use serde::Serialize;

/// A penalty run whose trunk strays more than this many times the rigid law's distance
/// from its own converged run is "far from converged" at this step.
pub const FAR_FACTOR: f64 = 10.0;

/// The outcome of one gradient measure, for the rigid law.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Every certified error is within the reference's own agreement tolerance.
    Tie,
    /// Every penalty stiffness has a larger error than the rigid law.
    Win,
    /// Some penalty stiffness has an error no larger than the rigid law's.
    Loss,
    /// No certified number on one side.
    Undecided,
    /// The measure was not asked for (the converged-in-dt reference is expensive).
    #[serde(rename = "not computed")]
    NotComputed,
}

/// The forward-fidelity axis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForwardVerdict {
    /// No penalty stiffness matches the rigid law on all four measures at once.
    pub rigid_wins: bool,
    /// The stiffnesses that do (indices into `penalty`).
    pub matches: Vec<usize>,
    /// The stiffness with the least penetration (the first, on ties).
    pub least_penetration: usize,
    /// The stiffness with the least sticking-foot creep (the first, on ties).
    pub least_creep: usize,
    /// Stiffnesses closer to their own converged run than the rigid law is to its own.
    pub closer: Vec<usize>,
    /// Stiffnesses more than [`FAR_FACTOR`] times farther from it.
    pub far: Vec<usize>,
    /// Stiffnesses whose ground does positive work on the robot.
    pub pumps: Vec<usize>,
}

/// One gradient measure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasureVerdict {
    /// The report's field (`tangent_error`, `typical_probe_error`, `converged_error`).
    pub key: &'static str,
    /// What it measures, in words.
    pub name: &'static str,
    /// The rigid law's outcome.
    pub outcome: Outcome,
    /// The rigid law has a certified number for it.
    pub rigid_certified: bool,
    /// Stiffnesses with a certified number.
    pub certified: Vec<usize>,
    /// On a loss, the stiffnesses whose error is below the rigid law's.
    pub better: Vec<usize>,
    /// Stiffnesses without a number although some of their columns are certified.
    pub unexplained: Vec<usize>,
}

/// The report's conclusion on both axes (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Why nothing can be compared (the rigid run failed, or no penalty run finished);
    /// `None` when the axes below are decided.
    pub incomparable: Option<String>,
    /// Stiffnesses whose runs finished with both axes (indices into `penalty`).
    pub compared: Vec<usize>,
    /// Forward fidelity (absent when incomparable).
    pub forward: Option<ForwardVerdict>,
    /// Gradient accuracy, one entry per measure (empty when incomparable).
    pub gradient: Vec<MeasureVerdict>,
    /// Stiffnesses where not one column has a probe-stable reference.
    pub uncertified: Vec<usize>,
    /// Of those, the stiffnesses whose law converged in dt has a certified reference
    /// (the event-located one): their tangent at dt is measured against it alone.
    pub converged_only: Vec<usize>,
    /// The rigid law wins both axes at once.
    pub both: bool,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuadrupedReport {
    /// What was run.
    pub config: QuadrupedExperiment,
    /// Column names of the Jacobians.
    pub inputs: [&'static str; 3],
    /// Row names of the Jacobians.
    pub outputs: [&'static str; 6],
    /// The rigid law.
    pub rigid: LawReport,
    /// The penalty law, one report per stiffness.
    pub penalty: Vec<LawReport>,
    /// Which law wins each axis, decided from the numbers above ([`verdict`]).
    pub verdict: Verdict,
}

/// The measures, in the order they are reported.
pub const MEASURES: [(&str, &str); 3] = [
    ("tangent_error", "the tangent against its own map"),
    (
        "typical_probe_error",
        "finite differences at a simulator-typical probe",
    ),
    ("converged_error", "the gradient converged in dt"),
];

fn measure(g: &Gradient, key: &str) -> Option<f64> {
    match key {
        "tangent_error" => g.tangent_error,
        "typical_probe_error" => g.typical_probe_error,
        _ => g.converged_error,
    }
}

fn both_axes(l: &LawReport) -> Option<(Forward, &Gradient)> {
    l.forward.zip(l.gradient.as_ref())
}

/// The index of the first smallest `f` among `laws`.
fn first_min(laws: &[(usize, &Forward)], f: impl Fn(&Forward) -> f64) -> usize {
    let mut best = laws[0];
    for &l in &laws[1..] {
        if f(l.1) < f(best.1) {
            best = l;
        }
    }
    best.0
}

/// Decide both axes from the laws' reports (see the module docs).
pub fn verdict(cfg: &QuadrupedExperiment, rigid: &LawReport, penalty: &[LawReport]) -> Verdict {
    let pen: Vec<(usize, Forward, &Gradient)> = penalty
        .iter()
        .enumerate()
        .filter_map(|(i, l)| both_axes(l).map(|(f, g)| (i, f, g)))
        .collect();
    let compared: Vec<usize> = pen.iter().map(|p| p.0).collect();
    let (Some((rf, rg)), false) = (both_axes(rigid), pen.is_empty()) else {
        return Verdict {
            incomparable: Some(match &rigid.failure {
                Some(why) => format!("the rigid run failed ({why})"),
                None => "no penalty run finished".into(),
            }),
            compared,
            forward: None,
            gradient: vec![],
            uncertified: vec![],
            converged_only: vec![],
            both: false,
        };
    };
    let forward = forward_verdict(&rf, &pen);
    let uncertified: Vec<usize> = pen
        .iter()
        .filter(|p| p.2.certified_columns == 0)
        .map(|p| p.0)
        .collect();
    let converged_only: Vec<usize> = pen
        .iter()
        .filter(|p| {
            p.2.certified_columns == 0
                && p.2.converged_certified_columns.is_some_and(|c| c > 0)
                && p.2.converged_error.is_some()
        })
        .map(|p| p.0)
        .collect();
    let gradient = gradient_verdicts(cfg, rg, &pen, &compared, &uncertified);
    let both = forward.rigid_wins
        && gradient
            .iter()
            .all(|m| m.outcome == Outcome::Win || m.outcome == Outcome::Tie);
    Verdict {
        incomparable: None,
        compared,
        forward: Some(forward),
        gradient,
        uncertified,
        converged_only,
        both,
    }
}

/// A penalty law with both axes: its index among the penalty runs, its forward axis and its
/// gradient axis.
type Penalty<'a> = (usize, Forward, &'a Gradient);

/// The forward axis: which penalty laws match the rigid one on every forward measure (the
/// rigid law wins if none does), which penetrate and creep least, which converge closer or
/// far worse, which pump energy.
fn forward_verdict(rf: &Forward, pen: &[Penalty]) -> ForwardVerdict {
    let select = |keep: &dyn Fn(&Forward) -> bool| -> Vec<usize> {
        pen.iter().filter(|p| keep(&p.1)).map(|p| p.0).collect()
    };
    let matches = select(&|f| {
        f.max_penetration <= rf.max_penetration
            && f.max_creep <= rf.max_creep
            && f.converged_distance <= rf.converged_distance
            && f.contact_work <= rf.contact_work.max(0.0)
    });
    let fw: Vec<(usize, &Forward)> = pen.iter().map(|p| (p.0, &p.1)).collect();
    ForwardVerdict {
        rigid_wins: matches.is_empty(),
        least_penetration: first_min(&fw, |f| f.max_penetration),
        least_creep: first_min(&fw, |f| f.max_creep),
        closer: select(&|f| f.converged_distance < rf.converged_distance),
        far: select(&|f| f.converged_distance > FAR_FACTOR * rf.converged_distance),
        pumps: select(&|f| f.contact_work > 0.0),
        matches,
    }
}

/// The gradient axis, one verdict per measure: the rigid law's value against every penalty
/// law certified on that measure (`compared`: every penalty law with both axes;
/// `uncertified`: those with no certified column).
fn gradient_verdicts(
    cfg: &QuadrupedExperiment,
    rg: &Gradient,
    pen: &[Penalty],
    compared: &[usize],
    uncertified: &[usize],
) -> Vec<MeasureVerdict> {
    let tol = cfg.probe_tol;
    MEASURES
        .iter()
        .map(|&(key, name)| {
            let r = measure(rg, key);
            let vals: Vec<(usize, f64)> = pen
                .iter()
                .filter_map(|p| measure(p.2, key).map(|v| (p.0, v)))
                .collect();
            let certified: Vec<usize> = vals.iter().map(|v| v.0).collect();
            let unexplained = compared
                .iter()
                .copied()
                .filter(|i| !certified.contains(i) && !uncertified.contains(i))
                .collect();
            let mut better = vec![];
            let outcome = match r {
                _ if key == "converged_error" && !cfg.converged_gradient => Outcome::NotComputed,
                None => Outcome::Undecided,
                _ if vals.is_empty() => Outcome::Undecided,
                Some(r) if r <= tol && vals.iter().all(|v| v.1 <= tol) => Outcome::Tie,
                Some(r) if vals.iter().all(|v| v.1 > r) => Outcome::Win,
                Some(r) => {
                    better = vals.iter().filter(|v| v.1 < r).map(|v| v.0).collect();
                    Outcome::Loss
                }
            };
            MeasureVerdict {
                key,
                name,
                outcome,
                rigid_certified: r.is_some(),
                certified,
                better,
                unexplained,
            }
        })
        .collect()
}
