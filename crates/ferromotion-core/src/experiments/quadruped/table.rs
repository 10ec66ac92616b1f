//! The two-axis table as fixed-width text.

use super::report::QuadrupedReport;
use super::step::ContactLaw;

impl QuadrupedReport {
    /// The two-axis table as fixed-width text, one row per law.
    pub fn table(&self) -> String {
        let opt = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |e| format!("{e:.2e}"));
        let mut s = String::new();
        s.push_str(&format!(
            "{:<16}|{:>9} {:>9} {:>8} {:>8} {:>9} {:>9} {:>6}|{:>9} {:>9} {:>9} {:>9} {:>4}\n",
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
            "ref err",
            "cert",
        ));
        for rep in std::iter::once(&self.rigid).chain(self.penalty.iter()) {
            let label = match rep.contact {
                ContactLaw::Rigid => "rigid (LCP)".to_string(),
                ContactLaw::Penalty(p) => format!("penalty k={:.0e}", p.stiffness),
            };
            match (&rep.forward, &rep.gradient, &rep.modes) {
                (Some(f), Some(g), Some(m)) => s.push_str(&format!(
                    "{:<16}|{:>9.2e} {:>9.2e} {:>8.2} {:>8.2} {:>9.2e} {:>9.2e} {:>6}|{:>9} {:>9} {:>9} {:>9} {:>4}\n",
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
                    opt(g.refined_tangent_error),
                    format!("{}/3", g.certified_columns),
                )),
                _ => s.push_str(&format!(
                    "{:<16}| FAILED: {}\n",
                    label,
                    rep.failure.as_deref().unwrap_or("?")
                )),
            }
        }
        s
    }
}
