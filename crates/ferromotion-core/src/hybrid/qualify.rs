//! The entry points, [`hybrid_jacobian`] and [`hybrid_jvp`], with what they refuse before
//! a pass (bad input, hidden state measured) and after it (an answer that moves with dt/2).

use super::locate::rk4;
use super::solve::solve;
use super::*;

/// The start and span of a pass, as any entry point refuses them: t0 finite, t1 after it,
/// x0 of the system's dimension and finite.
pub(super) fn check_start(
    sys: &dyn HybridSystem,
    x0: &DVector<f64>,
    t0: f64,
    t1: f64,
) -> Result<()> {
    crate::error::finite("t0", t0)?;
    positive("t1 - t0", t1 - t0)?;
    if x0.len() != sys.dim() || x0.iter().any(|v| !v.is_finite()) {
        return Err(FerroError::InvalidParameter {
            name: "x0",
            value: x0.len() as f64,
            limit: format!("must hold {} finite numbers", sys.dim()),
        });
    }
    Ok(())
}

/// Whole-vs-split residual above which a system is refused with `HiddenState`, relative
/// to max(1, max|x0|).
pub const HIDDEN_STATE_RTOL: f64 = 1e-9;

/// Hidden state, *measured* (whether the system declares it or not), two ways:
///
/// - a repeated call must repeat: RK4 over 2h from x0, twice, must agree to
///   `HIDDEN_STATE_RTOL` (a memoryless flow gives the same bits);
/// - the flow over 2h taken whole must equal the flow taken as two halves. For a memoryless
///   flow the residual is RK4's local error, O(h⁵): it falls at least 16× (order ≥ 4) when h
///   is halved. A flow that remembers its previous call (a warm-started solver, a cache)
///   leaves a residual that does not fall like that. Refused when the residual exceeds
///   `HIDDEN_STATE_RTOL` and falls by less than 16× from h to h/2.
///
/// Residuals are relative to max(1, max|x0|); stepped in `mode0` without events.
fn measured_hidden_state(
    sys: &dyn HybridSystem,
    x0: &DVector<f64>,
    mode0: usize,
    h: f64,
) -> Option<String> {
    let phi = DMatrix::identity(x0.len(), x0.len());
    let scale = x0.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
    let split_gap = |h: f64| {
        let (whole, _) = rk4(sys, mode0, x0, &phi, 2.0 * h);
        let (half, _) = rk4(sys, mode0, x0, &phi, h);
        let (split, _) = rk4(sys, mode0, &half, &phi, h);
        ((&whole - &split).amax() / scale, whole)
    };
    let (gap, whole) = split_gap(h);
    let (again, _) = rk4(sys, mode0, x0, &phi, 2.0 * h);
    let repeat_gap = (&whole - &again).amax() / scale;
    if repeat_gap > HIDDEN_STATE_RTOL {
        return Some(format!(
            "measured: the same flow call (2h = {:e} s from x0) repeated differs by {repeat_gap:.3e} \
             (relative to max(1, |x0|); a memoryless flow repeats to {HIDDEN_STATE_RTOL:e})",
            2.0 * h
        ));
    }
    if gap > HIDDEN_STATE_RTOL {
        let (gap_half, _) = split_gap(0.5 * h);
        // NaN (a flow that failed) is left to the solve, which reports it.
        if gap_half * MEMORYLESS_FALL > gap {
            return Some(format!(
                "measured: the flow over 2h whole and as two halves differs by {gap:.3e} at h = {h:e} s and \
                 {gap_half:.3e} at h/2 (relative to max(1, |x0|)): above {HIDDEN_STATE_RTOL:e} and not falling \
                 {MEMORYLESS_FALL}x like RK4's local error"
            ));
        }
    }
    None
}

/// How much RK4's local error (O(h⁵)) falls at least when h halves, with margin for the
/// pre-asymptotic regime (2⁴ = 16, not 32).
const MEMORYLESS_FALL: f64 = 16.0;

/// The checks every answer starts with: declared and measured hidden state, the system's
/// parameters, the options, t0 < t1 and x0's length.
fn admit(
    sys: &dyn HybridSystem,
    (x0, mode0): (&DVector<f64>, usize),
    t0: f64,
    t1: f64,
    opts: &HybridOptions,
) -> Result<()> {
    if let Some(what) = sys.hidden_state() {
        return Err(FerroError::HiddenState {
            system: sys.name(),
            what,
        });
    }
    sys.validate()?;
    positive("dt", opts.dt)?;
    positive("graze_speed", opts.graze_speed)?;
    if !(opts.simultaneous >= 0.0 && opts.simultaneous.is_finite()) {
        return Err(FerroError::InvalidParameter {
            name: "simultaneous",
            value: opts.simultaneous,
            limit: "must be finite and >= 0 (s)".into(),
        });
    }
    check_start(sys, x0, t0, t1)?;
    if let Some(what) = measured_hidden_state(sys, x0, mode0, opts.dt) {
        return Err(FerroError::HiddenState {
            system: sys.name(),
            what,
        });
    }
    Ok(())
}

/// The run at dt, checked against the run at dt/2 (`probe_rtol`): every piece's matrix must
/// move by at most `probe_rtol·max(1, max|M|)`, and the events must repeat.
fn probed(
    sys: &dyn HybridSystem,
    start: (&DVector<f64>, usize),
    t0: f64,
    t1: f64,
    opts: &HybridOptions,
    along: Option<&DVector<f64>>,
) -> Result<HybridSolution> {
    let mut sol = solve(sys, start, t0, t1, opts, along)?;
    if opts.probe_rtol > 0.0 {
        let halved = HybridOptions {
            dt: 0.5 * opts.dt,
            ..*opts
        };
        let half = solve(sys, start, t0, t1, &halved, along)?;
        let (a, b) = (&sol.pieces.list, &half.pieces.list);
        let gap = a
            .iter()
            .zip(b)
            .map(|(p, q)| (&p.matrix - &q.matrix).amax())
            .fold(0.0_f64, f64::max);
        let scale = a.iter().fold(1.0_f64, |m, p| m.max(p.matrix.amax()));
        let tolerance = opts.probe_rtol * scale;
        sol.probe_gap = gap;
        if !(gap <= tolerance) || a.len() != b.len() || half.events.len() != sol.events.len() {
            return Err(FerroError::ProbeDependent {
                probe: "dt/2".into(),
                gap,
                tolerance,
            });
        }
    }
    if sol.pieces.agree() {
        sol.spectral_radius = crate::numeric::svd::spectral_radius(&sol.jacobian);
        sol.worst_gain = sol.jacobian.singular_values().max();
    }
    Ok(sol)
}

/// The derivative dx(t1)/dx(t0) of a hybrid system through its events (see the module
/// docs): `jacobian` where the pieces agree, the pieces always.
pub fn hybrid_jacobian(
    sys: &dyn HybridSystem,
    x0: &DVector<f64>,
    mode0: usize,
    t0: f64,
    t1: f64,
    opts: &HybridOptions,
) -> Result<HybridSolution> {
    admit(sys, (x0, mode0), t0, t1, opts)?;
    probed(sys, (x0, mode0), t0, t1, opts, None)
}

/// The directional derivative of x(t1) along a perturbation `d` of x(t0), with every
/// simultaneous group taken in the order d gives it (the polynomial-time action: no orders
/// enumerated, any number of simultaneous events). The same checks as [`hybrid_jacobian`].
pub fn hybrid_jvp(
    sys: &dyn HybridSystem,
    x0: &DVector<f64>,
    mode0: usize,
    t0: f64,
    t1: f64,
    d: &DVector<f64>,
    opts: &HybridOptions,
) -> Result<DVector<f64>> {
    admit(sys, (x0, mode0), t0, t1, opts)?;
    if d.len() != x0.len() || d.iter().any(|v| !v.is_finite()) {
        return Err(FerroError::InvalidParameter {
            name: "d",
            value: d.len() as f64,
            limit: format!(
                "must hold {} finite numbers (a perturbation of x0)",
                x0.len()
            ),
        });
    }
    let sol = probed(sys, (x0, mode0), t0, t1, opts, Some(d))?;
    Ok(&sol.pieces.list[0].matrix * d)
}
