//! The two-axis table as fixed-width text.

use super::step::ContactLaw;
use super::verdict::QuadrupedReport;

impl QuadrupedReport {
    /// The two-axis table as fixed-width text, one row per law.
    pub fn table(&self) -> String {
        let opt = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |e| format!("{e:.2e}"));
        let mut s = String::new();
        s.push_str(&format!(
            "{:<16}|{:>9} {:>9} {:>8} {:>8} {:>9} {:>9} {:>6}|{:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>4} {:>5}\n",
            "law",
            "pen m",
            "creep m/s",
            "Wc J",
            "dE J",
            "conv m",
            "d_rigid m",
            "modes",
            "tan err",
            "1e-4 err",
            "conv err",
            "spread",
            "loc err",
            "ref err",
            "cert",
            "ccert",
        ));
        for rep in std::iter::once(&self.rigid).chain(self.penalty.iter()) {
            let label = match rep.contact {
                ContactLaw::Rigid => "rigid (LCP)".to_string(),
                ContactLaw::Penalty(p) => format!("penalty k={:.0e}", p.stiffness),
            };
            match (&rep.forward, &rep.gradient, &rep.modes) {
                (Some(f), Some(g), Some(m)) => s.push_str(&format!(
                    "{:<16}|{:>9.2e} {:>9.2e} {:>8.2} {:>8.2} {:>9.2e} {:>9.2e} {:>6}|{:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>4} {:>5}\n",
                    label,
                    f.max_penetration,
                    f.max_creep,
                    f.contact_work,
                    f.energy_end - f.energy_start,
                    f.converged_distance,
                    f.distance_to_rigid,
                    m.total,
                    opt(g.tangent_error),
                    opt(g.typical_probe_error),
                    opt(g.converged_error),
                    opt(g.converged_spread),
                    opt(g.converged_tangent_error),
                    opt(g.refined_tangent_error),
                    format!("{}/3", g.certified_columns),
                    g.converged_certified_columns
                        .map_or_else(|| "-".to_string(), |c| format!("{c}/3")),
                )),
                _ => s.push_str(&format!(
                    "{:<16}| FAILED: {}\n",
                    label,
                    rep.failure.as_deref().unwrap_or("?")
                )),
            }
        }
        // Why each missing reference is missing, with the number that failed.
        for rep in std::iter::once(&self.rigid).chain(self.penalty.iter()) {
            let Some(g) = &rep.gradient else { continue };
            let label = match rep.contact {
                ContactLaw::Rigid => "rigid (LCP)".to_string(),
                ContactLaw::Penalty(p) => format!("penalty k={:.0e}", p.stiffness),
            };
            let conv = g.converged_reference.as_deref().unwrap_or(&[]);
            for (which, cols) in [("at dt", &g.reference[..]), ("converged", conv)] {
                for (j, c) in cols.iter().enumerate() {
                    if let Some(why) = c.failure.as_deref().filter(|_| !c.certified) {
                        s.push_str(&format!(
                            "{label}: {which} reference for {} not certified: {why}\n",
                            self.inputs[j]
                        ));
                    }
                }
            }
            if let Some(why) = &g.converged_failure {
                s.push_str(&format!("{label}: converged reference: {why}\n"));
            }
        }
        s
    }
}
