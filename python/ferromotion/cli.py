"""The ``ferromotion`` command line.

``ferromotion audit`` runs the sweep over stiffness and prints, per k, how far the fixed
step's answer and gradient land from the rigid reference, whether dv(T)/dy0 has the right
sign, what the tolerance route gets and costs, what the corrected route gets, and whose
fault the fixed route's error is; then the fitted divergence exponent. ``--json`` and
``--csv`` give the same numbers for machines.

Exit status: 0 on success, 1 when the core refuses the input (the message goes to
stderr), 2 on bad command-line arguments.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from typing import Any, Dict, List, Optional, Sequence

import ferromotion as fm


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ferromotion",
        description="Certify gradients through contact: a point mass dropped onto the ground.",
    )
    parser.add_argument("--version", action="version", version=f"ferromotion {fm.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    audit = sub.add_parser(
        "audit",
        help="the sweep table: every route's errors against the exact answer, k from 1e2 to 1e8",
        description=(
            "Sweep the penalty stiffness k and compare the fixed-step route (semi-implicit Euler with "
            "a forward-mode tangent, what autodiff frameworks return) and the tolerance route "
            "(Dormand-Prince with central differences) and the corrected route (the fixed step with "
            "the contact switches located inside their steps) with the rigid exact answer; split the fixed "
            "route's error into integrator and contact-model shares; fit the divergence exponent of "
            "the gradient error on the stiffnesses in [1e4, 1e8] N/m. The drop is the default one: "
            "h = 1 m from rest, T = 0.8 s, zeta = 0.1606."
        ),
    )
    out = audit.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the sweep, its options and the fit as JSON")
    out.add_argument("--csv", action="store_true", help="print one CSV row per stiffness (no fit)")
    audit.add_argument("--k-min", type=_positive_float, default=1e2, metavar="N/m",
                       help="smallest stiffness (default: %(default)g)")
    audit.add_argument("--k-max", type=_positive_float, default=1e8, metavar="N/m",
                       help="largest stiffness (default: %(default)g)")
    audit.add_argument("--per-decade", type=_positive_int, default=2, metavar="N",
                       help="stiffnesses per decade (default: %(default)d)")
    audit.add_argument("--dt", type=float, default=fm._DT, metavar="S",
                       help="fixed step in s; must divide T = 0.8 s (default: %(default)g)")
    audit.add_argument("--rtol", type=float, default=fm._TOL["rtol"], metavar="R",
                       help="relative tolerance of the tolerance route (default: %(default)g)")
    audit.add_argument("--events", action="store_true",
                       help="the tolerance route stops its rollouts at the contact switches")
    audit.add_argument("--quiet", action="store_true", help="never show a progress bar")
    audit.set_defaults(func=_audit)
    return parser


def _run_sweep(args: argparse.Namespace) -> fm.Sweep:
    ks = fm.log_grid(math.log10(args.k_min), math.log10(args.k_max), args.per_decade)
    return fm.sweep(fm.Drop(), ks, args.dt, tolerance=args.rtol, events=args.events, corrected=True,
                    blame=True, quiet=args.quiet)


def _cost_ratio(s: fm.Sweep) -> List[float]:
    """Force evaluations of the tolerance route's Jacobian over the fixed route's."""
    assert s.tolerance is not None
    return [float(t) / float(f) for t, f in zip(s.tolerance.force_evals, s.fixed.force_evals)]


def _share(value: float, below_floor: bool, floor: float) -> str:
    return f"< floor ({floor:.1e})" if below_floor else f"{value:.3e}"


def _sign(right: bool) -> str:
    return "" if right else " WRONG SIGN"


def _table(s: fm.Sweep, rtol: float, events: bool) -> str:
    assert s.tolerance is not None and s.corrected is not None and s.blame is not None
    t, c, b, d = s.tolerance, s.corrected, s.blame, s.drop
    ratio = _cost_ratio(s)
    header = ["k (N/m)", "forward error", "grad. error", "dv(T)/dy0 sign", "tolerance grad. error",
              "tol./fixed evals", "corrected grad. error", "integrator share", "contact share"]
    rows: List[List[str]] = []
    for i in range(len(s)):
        flag = " *" if t.probe_dependent[i] else "  "
        rows.append([
            f"{s.k[i]:.2e}",
            f"{s.forward_error[i]:.3e} {s.forward_unit[i]}",
            f"{s.gradient_error[i]:.3e}",
            "RIGHT SIGN" if s.right_sign[i] else "WRONG SIGN",
            f"{t.gradient_error[i]:.3e}{flag}" + _sign(bool(t.right_sign[i])),
            f"{ratio[i]:.2f}x",
            f"{c.gradient_error[i]:.3e}" + _sign(bool(c.right_sign[i])),
            _share(b.integrator_share[i], bool(b.integrator_below_floor[i]), b.noise_floor[i]),
            _share(b.contact_share[i], bool(b.contact_below_floor[i]), b.noise_floor[i]),
        ])
    widths = [max(len(r[c]) for r in [header] + rows) for c in range(len(header))]
    lines = [
        f"ferromotion audit: drop from h = {d.height:g} m at v0 = {d.velocity:g} m/s, T = {d.t_final:g} s, "
        f"zeta = {d.zeta:g}, g = {d.gravity:g} m/s^2, m = {d.mass:g} kg",
        f"fixed step dt = {s.dt:g} s; tolerance route rtol = {rtol:g}"
        f"{' with' if events else ' without'} event location. Errors are against the rigid exact answer;",
        "grad. error = max|J - J_exact| / max|J_exact|; integrator share = max|J_fixed - J_flow|, "
        "contact share = max|J_flow - J_exact| (absolute).",
        "",
        "  ".join(h.ljust(w) if c == 3 else h.rjust(w) for c, (h, w) in enumerate(zip(header, widths))),
    ]
    for r in rows:
        lines.append("  ".join(x.ljust(w) if c == 3 else x.rjust(w) for c, (x, w) in enumerate(zip(r, widths))))
    if t.probe_dependent.any():
        lines.append("* PROBE-DEPENDENT: the two probe sizes disagree by more than 1e-3 max|J|; "
                     "shown, not to be trusted.")
    lines.append("")
    try:
        fit = s.exponent()
        lines.append(
            f"divergence exponent: {fit.slope:.3f} (R^2 = {fit.r2:.3f}, {fit.points} points with k in "
            f"[1e4, 1e8] N/m, dt = {s.dt:g} s): the fixed route's gradient error grows like k^{fit.slope:.2f}"
        )
    except fm.FerroError as e:
        lines.append(f"divergence exponent: not available ({e})")
    return "\n".join(lines)


_CSV_COLUMNS = [
    "k", "forward_error", "forward_unit", "dy", "dv", "gradient_error", "right_sign", "dv_dy0",
    "fixed_force_evals", "tolerance_gradient_error", "tolerance_right_sign", "tolerance_force_evals",
    "tolerance_cost_ratio", "tolerance_probe_dependent", "corrected_gradient_error", "corrected_right_sign",
    "corrected_force_evals", "integrator_share", "contact_share", "noise_floor",
]


def _csv(s: fm.Sweep) -> None:
    assert s.tolerance is not None and s.corrected is not None and s.blame is not None
    t, c, b = s.tolerance, s.corrected, s.blame
    ratio = _cost_ratio(s)
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(_CSV_COLUMNS)
    for i in range(len(s)):
        row: List[Any] = [
            s.k[i], s.forward_error[i], s.forward_unit[i], s.dy[i], s.dv[i], s.gradient_error[i],
            bool(s.right_sign[i]), s.dv_dy0[i], int(s.fixed.force_evals[i]), t.gradient_error[i],
            bool(t.right_sign[i]), int(t.force_evals[i]), ratio[i], bool(t.probe_dependent[i]),
            c.gradient_error[i], bool(c.right_sign[i]), int(c.force_evals[i]),
            b.integrator_share[i], b.contact_share[i], b.noise_floor[i],
        ]
        w.writerow([repr(float(x)) if isinstance(x, float) else x for x in row])


def _audit(args: argparse.Namespace) -> int:
    s = _run_sweep(args)
    if args.json:
        d: Dict[str, Any] = s.to_dict()
        print(json.dumps(d, indent=2))
    elif args.csv:
        _csv(s)
    else:
        print(_table(s, args.rtol, args.events))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        status: int = args.func(args)
        return status
    except fm.FerroError as e:
        print(f"ferromotion: error: {e}", file=sys.stderr)
        return 1
