"""``ferromotion audit``: the sweep table (or ``--engine``: an engine's own audit)."""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path
from typing import Any, Dict, List

import ferromotion as fm

from .._results import SIGN_TEXT, fmt_us
from ..engines import ENGINES
from ._args import DEFAULTS, _positive_float, _positive_int


def add_parser(sub: Any) -> None:
    """Register ``ferromotion audit``."""
    audit = sub.add_parser(
        "audit",
        help="the sweep table: every route's errors against the exact answer, k from 1e2 to 1e8",
        description=(
            "Sweep the penalty stiffness k and compare the fixed-step route (semi-implicit Euler with "
            "a forward-mode tangent, what autodiff frameworks return) and the tolerance route "
            "(Dormand-Prince; its Jacobian by central differences or forward sensitivities) and the corrected route (the fixed step with "
            "the contact switches located inside their steps) with the rigid exact answer; split the fixed "
            "route's error into integrator and contact-model shares; fit the divergence exponent of "
            "the gradient error on the stiffnesses in [1e4, 1e8] N/m. The drop is the default one: "
            "h = 1 m from rest, T = 0.8 s, zeta = 0.1606."
        ),
    )
    out = audit.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the sweep, its options and the fit as JSON")
    out.add_argument("--csv", action="store_true", help="print one CSV row per stiffness (no fit)")
    audit.add_argument("--k-min", type=_positive_float, default=None, metavar="N/m",
                       help="smallest stiffness (default: 1e2; 1e3 with --engine)")
    audit.add_argument("--k-max", type=_positive_float, default=None, metavar="N/m",
                       help="largest stiffness (default: 1e8; 1e7 with --engine)")
    audit.add_argument("--per-decade", type=_positive_int, default=2, metavar="N",
                       help="stiffnesses per decade (default: %(default)d)")
    audit.add_argument("--dt", type=float, default=DEFAULTS["dt"], metavar="S",
                       help="fixed step in s; must divide T = 0.8 s (default: %(default)g)")
    audit.add_argument("--rtol", type=float, default=DEFAULTS["tolerance"]["rtol"], metavar="R",
                       help="relative tolerance of the tolerance route (default: %(default)g)")
    audit.add_argument("--events", action="store_true",
                       help="the tolerance route stops its rollouts at the contact switches")
    audit.add_argument("--jacobian", choices=("richardson", "forward"), default=DEFAULTS["tolerance"]["jacobian"],
                       help="how the tolerance route gets its Jacobian: central differences of 8 rollouts "
                            "(richardson) or forward sensitivities along one rollout (forward; needs --events, "
                            "refused without it) (default: %(default)s)")
    audit.add_argument("--min-step", type=float, default=DEFAULTS["tolerance"]["min_step"], metavar="S",
                       help="smallest step the tolerance route's controller may take, s; a row that needs less "
                            "is refused (StepTooSmall) (default: %(default)g, no floor)")
    audit.add_argument("--quiet", action="store_true", help="never show a progress bar")
    audit.add_argument("--budget", type=_positive_int, default=None, metavar="EVALS",
                       help="also print every route at this force-evaluation budget (a multiple of 4, at "
                            "least 8) at k = 1e6 N/m with each one's wall time, and the probe-size trap; in "
                            "the text table or the JSON, not with --csv")
    audit.add_argument("--engine", choices=tuple(ENGINES), default=None,
                       help="audit the drop run in this engine instead (ferromotion.engines; needs the engine "
                            "installed, e.g. scripts/engines_env.sh): its own gradient against finite differences "
                            "of its own map, the sign table beside ours, the exponent, dt refinement and a receipt")
    audit.add_argument("--receipt", type=Path, metavar="FILE", help="with --engine: write the check's receipt to FILE")
    audit.add_argument("--fixture", default=None, metavar="NAME|FILE",
                       help="with --engine: run the engine on this conformance fixture instead of the drop (e.g. "
                            "v_groove_90, v_groove_100, v_groove_off_axis, cylinder; see ferromotion fixtures) at "
                            "k = 1e4 and 1e6 N/m (or --k-min/--k-max) and print the core's verdicts, with the "
                            "piece or outcome the engine's answer is nearest")
    audit.set_defaults(func=_audit)


def _run_sweep(args: argparse.Namespace) -> fm.Sweep:
    ks = fm.log_grid(math.log10(args.k_min or 1e2), math.log10(args.k_max or 1e8), args.per_decade)
    return fm.sweep(fm.Drop(), ks, args.dt, tolerance=args.rtol, events=args.events, jacobian=args.jacobian,
                    min_step=args.min_step,
                    corrected=True, blame=True, quiet=args.quiet)


def _cost_ratio(s: fm.Sweep) -> List[float]:
    """Force evaluations of the tolerance route's Jacobian over the fixed route's (the core's ratio)."""
    assert s.tolerance_cost_ratio is not None
    return [float(x) for x in s.tolerance_cost_ratio]


def _share(value: float, below_floor: bool, floor: float) -> str:
    return f"< floor ({floor:.1e})" if below_floor else f"{value:.3e}"


#: The same states as a suffix after another route's gradient error (nothing when right).
_SIGN_SUFFIX = {"right": "", "wrong": " WRONG SIGN", "right_far_off": " FAR OFF"}


def _table(s: fm.Sweep, rtol: float, events: bool, jacobian: str) -> str:
    assert s.tolerance is not None and s.corrected is not None and s.blame is not None
    t, c, b, d = s.tolerance, s.corrected, s.blame, s.drop
    ratio = _cost_ratio(s)
    header = ["k (N/m)", "|dy| at T (m)", "|dv| at T (m/s)", "grad. error", "dv(T)/dy0 sign", "fixed evals",
              "fixed wall (µs)", "tolerance grad. error", "tol. evals", "tol. wall (µs)", "tol./fixed evals",
              "corrected grad. error",
              "integrator share", "contact share"]
    left = {header.index("dv(T)/dy0 sign")}
    rows: List[List[str]] = []
    # The core's verdict per k: is the fixed step stable in contact at this dt?
    stability = [fm.step_stability(d, float(k), s.dt) for k in s.k]
    for i in range(len(s)):
        flag = " *" if t.probe_dependent[i] else "  "
        rows.append([
            f"{s.k[i]:.2e}" + ("" if stability[i]["stable"] else " !"),
            f"{s.fixed.dy[i]:.3e}",
            f"{s.fixed.dv[i]:.3e}",
            f"{s.gradient_error[i]:.3e}",
            SIGN_TEXT[str(s.fixed.sign[i])],
            f"{int(s.fixed.force_evals[i]):,}",
            fmt_us(float(s.fixed.wall_s[i])),
            f"{t.gradient_error[i]:.3e}{flag}" + _SIGN_SUFFIX[str(t.sign[i])],
            f"{int(t.force_evals[i]):,}",
            fmt_us(float(t.wall_s[i])),
            f"{ratio[i]:.2f}x",
            f"{c.gradient_error[i]:.3e}" + _SIGN_SUFFIX[str(c.sign[i])],
            _share(b.integrator_share[i], bool(b.integrator_below_floor[i]), b.noise_floor[i]),
            _share(b.contact_share[i], bool(b.contact_below_floor[i]), b.noise_floor[i]),
        ])
    widths = [max(len(r[c]) for r in [header] + rows) for c in range(len(header))]
    lines = [
        f"ferromotion audit: drop from h = {d.height:g} m at v0 = {d.velocity:g} m/s, T = {d.t_final:g} s, "
        f"zeta = {d.zeta:g}, g = {d.gravity:g} m/s^2, m = {d.mass:g} kg",
        f"fixed step dt = {s.dt:g} s; tolerance route rtol = {rtol:g}"
        f"{' with' if events else ' without'} event location, its Jacobian "
        + ("by forward sensitivities along 1 rollout" if jacobian == "forward"
           else "by Richardson central differences of 8 rollouts") + ". Errors are against the rigid exact answer;",
        "grad. error = max|J - J_exact| / max|J_exact|; integrator share = max|J_fixed - J_flow|, "
        "contact share = max|J_flow - J_exact| (absolute); FAR OFF: right sign, gradient error >= 1 (by accident).",
        "evals, wall (µs) = force evaluations and wall time per Jacobian (one run on this machine, rows in parallel: "
        "for reading, not for comparing runs).",
        "",
        "  ".join(h.ljust(w) if c in left else h.rjust(w) for c, (h, w) in enumerate(zip(header, widths))),
    ]
    for r in rows:
        lines.append("  ".join(x.ljust(w) if c in left else x.rjust(w) for c, (x, w) in enumerate(zip(r, widths))))
    if t.probe_dependent.any():
        lines.append("* PROBE-DEPENDENT: the two probe sizes disagree by more than 1e-3 max|J|; "
                     "shown, not to be trusted.")
    unstable = [(float(k), st) for k, st in zip(s.k, stability) if not st["stable"]]
    if unstable:
        k0, st = unstable[0]
        lines.append(f"! UNSTABLE STEP from k = {k0:.2e} N/m: omega*dt = {st['omega_dt']:.3g} is beyond semi-implicit "
                     "Euler's stability limit (the contact step's spectral radius "
                     f"{st['spectral_radius']:.3g} > 1); the fixed route's x(T) there is blown up.")
    lines.append("")
    try:
        try:
            fit = s.exponent()
        except fm.InvalidParameter:  # the grid lacks the lab's nine stiffnesses
            fit = s.exponent(points="all")
        lines.append(
            f"divergence exponent: {fit.slope:.3f} (R^2 = {fit.r2:.3f}, {fit.points} points with k in "
            f"[1e4, 1e8] N/m, dt = {s.dt:g} s): the fixed route's gradient error grows like k^{fit.slope:.2f}"
        )
    except fm.FerroError as e:
        lines.append(f"divergence exponent: not available ({e})")
    return "\n".join(lines)


_CSV_COLUMNS = [
    "k", "forward_error", "forward_unit", "dy", "dv", "gradient_error", "right_sign", "sign", "dv_dy0",
    "fixed_force_evals", "fixed_wall_s", "tolerance_gradient_error", "tolerance_right_sign",
    "tolerance_force_evals", "tolerance_wall_s", "tolerance_cost_ratio", "tolerance_probe_dependent",
    "corrected_gradient_error", "corrected_right_sign", "corrected_force_evals", "corrected_wall_s",
    "integrator_share", "contact_share", "noise_floor",
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
            bool(s.right_sign[i]), str(s.fixed.sign[i]), s.dv_dy0[i], int(s.fixed.force_evals[i]), float(s.fixed.wall_s[i]),
            t.gradient_error[i], bool(t.right_sign[i]), int(t.force_evals[i]), float(t.wall_s[i]), ratio[i],
            bool(t.probe_dependent[i]), c.gradient_error[i], bool(c.right_sign[i]), int(c.force_evals[i]),
            float(c.wall_s[i]), b.integrator_share[i], b.contact_share[i], b.noise_floor[i],
        ]
        w.writerow([repr(float(x)) if isinstance(x, float) else x for x in row])


def _audit_engine(args: argparse.Namespace) -> int:
    ks = fm.log_grid(math.log10(args.k_min or 1e3), math.log10(args.k_max or 1e7), args.per_decade)
    try:
        a = fm.audit_engine(args.engine, stiffness=ks, dt=args.dt,
                            progress=None if (args.quiet or args.json) else
                            (lambda line: print(line, file=sys.stderr, flush=True)))
    except ImportError as e:  # the engine is not installed here: say which extra brings it
        print(f"ferromotion audit: {e}", file=sys.stderr)
        return 1
    if args.receipt is not None and a.receipt is not None:
        a.receipt.write(args.receipt)
    print(json.dumps(a.to_dict(), indent=2) if args.json else a.table())
    return 0


def _audit_fixture(args: argparse.Namespace) -> int:
    """``--engine E --fixture NAME``: the engine on one conformance fixture, the core's verdicts."""
    from ..engines.conformance import FixtureError, conformance_engine

    ks = (1e4, 1e6) if args.k_min is None and args.k_max is None else \
        fm.log_grid(math.log10(args.k_min or 1e3), math.log10(args.k_max or 1e7), args.per_decade)
    try:
        run = conformance_engine(args.engine, names=[args.fixture], stiffness=[float(k) for k in ks])
    except FixtureError as e:
        print(f"ferromotion audit: error: {e}", file=sys.stderr)
        return 1
    except ImportError as e:
        print(f"ferromotion audit: {e}", file=sys.stderr)
        return 1
    print(json.dumps(run.to_dict(), indent=2) if args.json else run.table())
    return 0


def _audit(args: argparse.Namespace) -> int:
    if args.engine is not None and args.budget is not None:  # it would be dropped without a word
        print("ferromotion audit: error: --budget tables this project's routes, not an engine's; "
              "run it without --engine", file=sys.stderr)
        return 2
    if args.fixture is not None and args.engine is None:
        print("ferromotion audit: error: --fixture runs an engine on a fixture: give --engine too", file=sys.stderr)
        return 2
    if args.fixture is not None:
        return _audit_fixture(args)
    if args.engine is not None:
        return _audit_engine(args)
    if args.csv and args.budget is not None:  # a text table after the CSV rows would break the CSV
        print("ferromotion audit: error: --budget has no CSV form (use --json, or the text table)", file=sys.stderr)
        return 2
    # The budget first (it takes milliseconds): a budget the core refuses stops the command
    # before the sweep runs, not after.
    budget = None if args.budget is None else fm.equal_budget(k=1e6, budget=args.budget)
    s = _run_sweep(args)
    if args.json:
        d: Dict[str, Any] = s.to_dict()
        if budget is not None:
            d["equal_budget"] = budget
        print(json.dumps(d, indent=2))
    elif args.csv:
        _csv(s)
    else:
        print(_table(s, args.rtol, args.events, args.jacobian))
    if budget is not None and not args.json:
        print()
        print(budget.format_table())
    return 0

