//! The checker's words: how a probe relates to smoothness and events, and the verdict.
//! A leaf module, so the probe-curve reading (`curve`) and the checker (`mod`) both name them
//! without importing each other.

use serde::Serialize;

/// How a probe or a direction relates to the objective's events and to smoothness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Classification {
    /// Measured smooth (and the same event sequence on both sides, when events are given).
    Smooth,
    /// The event sequence differs between +eps and -eps (or an evaluation failed).
    EventCrossing,
    /// An event slower than the grazing speed.
    Grazing,
    /// The probe curve contradicts a smooth f within ±eps: a kink or jump.
    NonSmooth,
    /// Too few smaller probes to tell.
    Unmeasured,
}

/// A check's verdict (and each direction's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Right to relative accuracy `tol`, where the differences resolve the derivative.
    Verified,
    /// Agrees to within the floor f's evaluation noise allows, which is coarser than `tol`.
    VerifiedWithinNoise,
    /// Agrees only in absolute terms: the derivative is below what differences resolve.
    VerifiedAbsolute,
    /// Disagrees by more than the floor and than `tol`.
    NotVerified,
    /// Cannot be judged by smooth differences (event-crossing, grazing, a kink at x).
    Refused,
}

impl Verdict {
    /// The same words the JSON uses.
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Verified => "verified",
            Verdict::VerifiedWithinNoise => "verified-within-noise",
            Verdict::VerifiedAbsolute => "verified-absolute",
            Verdict::NotVerified => "not-verified",
            Verdict::Refused => "refused",
        }
    }
}

impl std::fmt::Display for Verdict {
    /// The same words the JSON uses: verified / verified-within-noise / verified-absolute /
    /// not-verified / refused.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
