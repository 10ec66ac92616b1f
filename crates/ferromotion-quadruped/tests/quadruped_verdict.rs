//! The quadruped report's verdict (which law wins each axis, `crates/ferromotion-quadruped/src/verdict.rs`)
//! against its rules applied by hand to the report's own numbers, on a real run and on
//! copies of it whose numbers are moved to reach every outcome.

use ferromotion_quadruped::{
    quadruped_experiment, verdict, LawReport, Outcome, QuadrupedExperiment, QuadrupedReport,
    FAR_FACTOR,
};
use std::sync::OnceLock;

fn report() -> &'static QuadrupedReport {
    static R: OnceLock<QuadrupedReport> = OnceLock::new();
    R.get_or_init(|| {
        quadruped_experiment(&QuadrupedExperiment {
            stiffness: vec![1e3, 1e4, 1e5],
            refinement: 20,
            ..QuadrupedExperiment::default()
        })
        .unwrap()
    })
}

fn tangent_errors(r: &QuadrupedReport) -> (Option<f64>, Vec<Option<f64>>) {
    (
        r.rigid.gradient.as_ref().unwrap().tangent_error,
        r.penalty
            .iter()
            .map(|l| l.gradient.as_ref().and_then(|g| g.tangent_error))
            .collect(),
    )
}

fn decide(r: &QuadrupedReport) -> ferromotion_quadruped::Verdict {
    verdict(&r.config, &r.rigid, &r.penalty)
}

#[test]
fn the_real_report_follows_the_rules() {
    let r = report();
    let v = &r.verdict;
    assert_eq!(v, &decide(r));
    let ok: Vec<(usize, &LawReport)> = r
        .penalty
        .iter()
        .enumerate()
        .filter(|(_, l)| l.forward.is_some() && l.gradient.is_some())
        .collect();
    assert!(!ok.is_empty() && v.incomparable.is_none());
    assert_eq!(v.compared, ok.iter().map(|p| p.0).collect::<Vec<_>>());
    let rf = r.rigid.forward.unwrap();
    let fwd = v.forward.as_ref().unwrap();
    for &(i, l) in &ok {
        let f = l.forward.unwrap();
        let all_four = f.max_penetration <= rf.max_penetration
            && f.max_creep <= rf.max_creep
            && f.converged_distance <= rf.converged_distance
            && f.contact_work <= f64::max(0.0, rf.contact_work);
        assert_eq!(fwd.matches.contains(&i), all_four, "k index {i}");
        assert_eq!(
            fwd.closer.contains(&i),
            f.converged_distance < rf.converged_distance
        );
        assert_eq!(
            fwd.far.contains(&i),
            f.converged_distance > FAR_FACTOR * rf.converged_distance
        );
        assert_eq!(fwd.pumps.contains(&i), f.contact_work > 0.0);
        let least = r.penalty[fwd.least_penetration].forward.unwrap();
        assert!(least.max_penetration <= f.max_penetration);
    }
    assert_eq!(fwd.rigid_wins, fwd.matches.is_empty());
    // The converged measure was not asked for.
    assert_eq!(v.gradient[2].outcome, Outcome::NotComputed);
    let tol = r.config.probe_tol;
    for m in &v.gradient[..2] {
        let pick = |l: &LawReport| {
            let g = l.gradient.as_ref().unwrap();
            if m.key == "tangent_error" {
                g.tangent_error
            } else {
                g.typical_probe_error
            }
        };
        let rg = pick(&r.rigid);
        let vals: Vec<f64> = ok.iter().filter_map(|p| pick(p.1)).collect();
        let expected = match rg {
            None => Outcome::Undecided,
            Some(_) if vals.is_empty() => Outcome::Undecided,
            Some(x) if x <= tol && vals.iter().all(|v| *v <= tol) => Outcome::Tie,
            Some(x) if vals.iter().all(|v| *v > x) => Outcome::Win,
            Some(_) => Outcome::Loss,
        };
        assert_eq!(m.outcome, expected, "{}", m.key);
    }
    let all_good = v
        .gradient
        .iter()
        .all(|m| matches!(m.outcome, Outcome::Tie | Outcome::Win));
    assert_eq!(v.both, fwd.rigid_wins && all_good);
}

#[test]
fn each_gradient_outcome_from_moved_numbers() {
    let base = report().clone();
    let (rg, pen) = tangent_errors(&base);
    let rg = rg.expect("the rigid tangent's reference is certified at these settings");
    assert!(pen.iter().any(|p| p.is_some()));
    let set = |r: &mut QuadrupedReport, rigid: Option<f64>, each: &dyn Fn(usize) -> Option<f64>| {
        r.rigid.gradient.as_mut().unwrap().tangent_error = rigid;
        for (i, l) in r.penalty.iter_mut().enumerate() {
            if let Some(g) = l.gradient.as_mut() {
                g.tangent_error = each(i);
            }
        }
    };
    let tol = base.config.probe_tol;
    let mut r = base.clone();
    // Every penalty error above the rigid one: a win.
    set(&mut r, Some(rg), &|_| Some(2.0 * rg + 1.0));
    assert_eq!(decide(&r).gradient[0].outcome, Outcome::Win);
    // One penalty error below it: a loss, to that stiffness.
    set(&mut r, Some(rg), &|i| {
        Some(if i == 1 { 0.5 * rg } else { 2.0 * rg + 1.0 })
    });
    let v = decide(&r);
    assert_eq!(v.gradient[0].outcome, Outcome::Loss);
    assert_eq!(v.gradient[0].better, vec![1]);
    // Everything within the reference's own agreement: a tie, whatever the order.
    set(&mut r, Some(0.5 * tol), &|_| Some(0.25 * tol));
    assert_eq!(decide(&r).gradient[0].outcome, Outcome::Tie);
    // No certified rigid number: undecided.
    set(&mut r, None, &|_| Some(1.0));
    let v = decide(&r);
    assert_eq!(v.gradient[0].outcome, Outcome::Undecided);
    assert!(!v.gradient[0].rigid_certified);
    // No certified penalty number: undecided too.
    set(&mut r, Some(rg), &|_| None);
    assert_eq!(decide(&r).gradient[0].outcome, Outcome::Undecided);
    // Asked for, the converged measure is decided like the others.
    let mut r = base.clone();
    r.config.converged_gradient = true;
    r.rigid.gradient.as_mut().unwrap().converged_error = Some(1e-3);
    for l in r.penalty.iter_mut() {
        l.gradient.as_mut().unwrap().converged_error = Some(1e-1);
    }
    let v = decide(&r);
    assert_eq!(v.gradient[2].outcome, Outcome::Win);
    assert!(v.converged_only.is_empty());
    // A stiffness with no reference at dt but a certified converged one (as 1e6 and 1e7
    // N/m at 1 ms): listed as measured against the converged reference alone.
    let g = r.penalty[2].gradient.as_mut().unwrap();
    g.certified_columns = 0;
    g.converged_certified_columns = Some(3);
    let v = decide(&r);
    assert_eq!(v.uncertified, vec![2]);
    assert_eq!(v.converged_only, vec![2]);
    r.penalty[2]
        .gradient
        .as_mut()
        .unwrap()
        .converged_certified_columns = Some(0);
    assert!(decide(&r).converged_only.is_empty());
}

#[test]
fn forward_axis_and_both_from_moved_numbers() {
    let base = report().clone();
    let rf = base.rigid.forward.unwrap();
    let mut r = base.clone();
    // A penalty run as good as the rigid one on all four: the rigid law does not win.
    let f = r.penalty[0].forward.as_mut().unwrap();
    *f = rf;
    f.contact_work = rf.contact_work.min(0.0);
    let v = decide(&r);
    let fwd = v.forward.as_ref().unwrap();
    assert!(!fwd.rigid_wins && fwd.matches == vec![0]);
    assert!(!v.both);
    // Worse on one of the four: no longer a match.
    r.penalty[0].forward.as_mut().unwrap().max_creep = rf.max_creep * 2.0 + 1e-9;
    assert!(!decide(&r).forward.unwrap().matches.contains(&0));
    // Both axes: the forward win and every measure won or tied.
    let mut r = base.clone();
    for l in r.penalty.iter_mut() {
        let f = l.forward.as_mut().unwrap();
        f.max_penetration = rf.max_penetration + 1.0;
        let g = l.gradient.as_mut().unwrap();
        g.tangent_error = Some(10.0);
        g.typical_probe_error = Some(10.0);
    }
    let g = r.rigid.gradient.as_mut().unwrap();
    g.tangent_error = Some(1e-3);
    g.typical_probe_error = Some(1e-3);
    assert!(!decide(&r).both, "the converged measure is still pending");
    r.config.converged_gradient = true;
    r.rigid.gradient.as_mut().unwrap().converged_error = Some(1e-3);
    for l in r.penalty.iter_mut() {
        l.gradient.as_mut().unwrap().converged_error = Some(1.0);
    }
    assert!(decide(&r).both);
}

#[test]
fn nothing_to_compare_when_the_rigid_run_failed() {
    let mut r = report().clone();
    r.rigid.failure = Some("a refused LCP".into());
    r.rigid.forward = None;
    r.rigid.gradient = None;
    let v = decide(&r);
    assert!(v.incomparable.unwrap().contains("a refused LCP"));
    assert!(v.forward.is_none() && v.gradient.is_empty() && !v.both);
}
