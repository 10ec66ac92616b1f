"""The ``ferromotion`` command line.

- ``ferromotion audit`` runs the sweep over stiffness and prints, per k, how far the fixed
  step's answer and gradient land from the rigid reference, whether dv(T)/dy0 has the right
  sign, what the tolerance route gets and costs (force evaluations and wall time per Jacobian,
  its Jacobian by ``--jacobian richardson`` or ``forward``), what the corrected route gets, and
  whose fault the fixed route's error is; then the fitted divergence exponent. ``--json`` and
  ``--csv`` give the same numbers for machines.
- ``ferromotion descent`` runs gradient descent through one impact with each gradient arm
  and prints the per-arm table (``--json`` for everything, paths and landscape included).
- ``ferromotion check FIXTURE`` runs the gradient check of one of the core's fixtures and prints
  its one-line summary (``--json`` the whole receipt, ``--out FILE`` writes it); ``--list`` says
  what each fixture checks and the verdict it reaches.
- ``ferromotion quadruped`` runs the quadruped's two-axis comparison (rigid against penalty contact
  over stiffness) and prints the table (``--json`` for the report without trajectories).
- ``ferromotion fit DATA.csv`` fits the drop's parameters to measured heights and/or velocities with
  the Jacobian of the route named by ``--route`` and prints estimates, 95% intervals, identifiability
  and the gradient checks' verdicts (``--json`` the whole report); ``--demo`` runs the experiment of
  notebook 07 (every route's fits beside CMA-ES and Nelder–Mead). Exit status 3 when the data cannot
  identify a parameter (the weak direction is named), 4 when it converged to a misfit (χ² beyond its
  99.9% limit), 5 when the fit did not converge.
- ``ferromotion lab`` serves the browser lab (shipped in the package; a checkout's ``web/``) on 127.0.0.1.
- ``ferromotion app`` serves the Panel app (the same bench, driven from Python) on 127.0.0.1.
- ``ferromotion class report EXPORTS...`` reads a class's lab exports and re-derives every reading they
  record with the core (``classreport.py``; ``--csv`` and ``--html`` for files).

Exit status: 0 on success (also when a server is stopped with Ctrl-C or SIGTERM; for ``check``:
the gradient is verified, or verified within evaluation noise), 1 when the core refuses the input
or a server cannot start (the message goes to stderr, prefixed ``ferromotion: error:``), 2 on bad
command-line arguments, and for ``check`` only: 3 when the gradient is not verified, 4 when the
check is refused (a direction crosses an event, grazes, or has no probe measured smooth), 5 when
it agrees in absolute terms only (``verified-absolute``; docs/checking.md).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

import ferromotion as fm

from . import labserver
from .labserver import ServerError as _ServerError
from .engines import ENGINES
from ._results import SIGN_TEXT
from ._results import fmt_us

# Every default shown comes from the core (`fm.defaults()`).
DEFAULTS = fm.defaults()


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
        epilog=(
            "exit status: 0 on success (a server stopped with Ctrl-C or SIGTERM included; for check: "
            "verified); 1 when the core refuses the input or a server cannot start (message on stderr); "
            f"2 on bad arguments; for check: {EXIT_NOT_VERIFIED} not verified, {EXIT_REFUSED} refused, "
            f"{EXIT_ABSOLUTE} verified in absolute terms only. "
            "`ferromotion COMMAND --help` describes each command."
        ),
    )
    parser.add_argument("--version", action="version", version=f"ferromotion {fm.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
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
    audit.set_defaults(func=_audit)

    fixtures = sub.add_parser(
        "fixtures", help="the conformance fixtures as JSON (schema ferromotion.fixture/1)",
        description="Conformance fixtures: contact problems with the exact rigid x(T) and J = dx(T)/dx(0), "
                    "tolerances and verdict meanings, as JSON any engine's CI can read without this package.")
    fsub = fixtures.add_subparsers(dest="fixtures_command", metavar="ACTION", required=True)
    export = fsub.add_parser("export", help="write NAME.json for every fixture and fixture.schema.json into DIR")
    export.add_argument("dir", type=Path, metavar="DIR")
    export.set_defaults(func=_fixtures_export)

    conf = sub.add_parser(
        "conformance", help="run an engine on the fixtures and print the core's verdicts",
        description="Run a real engine (ferromotion.engines; e.g. scripts/engines_env.sh) on the conformance "
                    "fixtures at their suggested dt and the given stiffnesses, and judge its x(T) and its own "
                    "gradient against the exact rigid answer.")
    conf.add_argument("--engine", choices=tuple(ENGINES), required=True)
    conf.add_argument("--fixture", action="append", default=None, metavar="NAME|FILE",
                      help="a shipped fixture (drop, slope) or a fixture file; repeat for more (default: every "
                           "shipped fixture)")
    conf.add_argument("--k", type=_positive_float, action="append", default=None, metavar="N/m",
                      help="stiffness mapped into the engine; repeat for more (default: 1e4 and 1e6)")
    conf.add_argument("--dt", type=_positive_float, default=None, metavar="S",
                      help="the engine's step (default: the fixture's suggested dt)")
    conf.add_argument("--json", action="store_true", help="print the rows as JSON")
    conf.add_argument("--receipt", type=Path, metavar="DIR", help="write one JSON receipt per row into DIR")
    conf.set_defaults(func=_conformance)

    desc = sub.add_parser(
        "descent",
        help="gradient descent through one impact: which gradients reach the optimum",
        description=(
            "Choose the initial height and velocity so that the drop's state at T hits a target, by "
            "Gauss-Newton steps with a line search on the true (rigid) objective. Only the gradient differs "
            "between arms: exact, fixed-step autodiff at k = 1e4, 1e6, 1e8 N/m, tolerance, corrected, and "
            "central differences of the true objective. The landscape is scanned first and four starts are "
            "picked in the one-bounce region. Prints one line per arm: starts converged, starts that could "
            "not take a single downhill step, accepted steps and force evaluations."
        ),
    )
    desc.add_argument("--json", action="store_true",
                      help="print everything as JSON: problem, target, landscape, every path")
    desc.add_argument("--grid", type=_grid_size, default=DEFAULTS["descent"]["grid"], metavar="N",
                      help="landscape grid points per axis (default: %(default)d)")
    desc.set_defaults(func=_descent)

    check = sub.add_parser(
        "check",
        help="check a fixture's gradient and print its receipt's verdict",
        description=(
            "Run the gradient check of one of the core's fixtures: f's evaluation noise measured, then centered "
            "differences walked over a ladder of probe sizes along seeded random and coordinate directions until "
            "the verdict is resolved, smoothness measured from the probe curve (and the objective's events), "
            "absolute and relative discrepancy against the differences' own resolution. Prints the receipt's "
            "one-line summary (verdict, why, errors). docs/checking.md states the rules."
        ),
        epilog=(
            f"exit status: 0 verified (or verified within evaluation noise); {EXIT_NOT_VERIFIED} not verified (a "
            f"direction disagrees beyond the floor and the tolerance); {EXIT_REFUSED} refused (a direction crosses "
            f"an event, grazes, or has no probe measured smooth); {EXIT_ABSOLUTE} verified in absolute terms only; "
            "1 when the core refuses the input; 2 on bad arguments (an unknown fixture included). "
            f"Fixtures: {', '.join(fm.FIXTURES)}."
        ),
    )
    check.add_argument("fixture", nargs="?", choices=fm.FIXTURES, metavar="FIXTURE",
                       help="the fixture to check (see --list)")
    check.add_argument("--list", action="store_true",
                       help="list the fixtures: what each checks, against which gradient, and its verdict; then exit")
    check.add_argument("--json", action="store_true", help="print the whole receipt as JSON instead of the summary")
    check.add_argument("--out", type=Path, metavar="FILE", help="also write the receipt's JSON to FILE")
    check.add_argument("--seed", type=_whole, default=DEFAULTS["check"]["seed"], metavar="N",
                       help="seed of the random directions (default: %(default)d)")
    check.add_argument("--directions", type=_whole, default=DEFAULTS["check"]["random_directions"], metavar="N",
                       help="random directions besides the coordinates (default: %(default)d)")
    check.add_argument("--tol", type=_positive_float, default=DEFAULTS["check"]["tol"], metavar="T",
                       help="relative accuracy a verified verdict certifies (default: %(default)g)")
    check.set_defaults(func=_check, subparser=check)

    _add_fit(sub)

    quad = sub.add_parser(
        "quadruped",
        help="the quadruped's two-axis table: rigid against penalty contact over stiffness",
        description=(
            "A planar quadruped (floating trunk, four hip-knee legs, point feet with Coulomb friction) trots "
            "for one gait period under two contact laws that share everything but the contact impulse: the "
            "velocity-level LCP (rigid, Lemke) and a one-sided spring-damper (penalty) at each stiffness. "
            "Prints, per law, forward fidelity (penetration, creep of sticking feet, contact work, energy "
            "change, distance to its own dt/100 run, distance to the rigid run for information) and gradient "
            "accuracy (the one-period tangent against probe-stable central differences), then the "
            "contact-mode changes."
        ),
    )
    quad.add_argument("--stiffness", type=_positive_float, nargs="+", default=DEFAULTS["quadruped"]["stiffness"], metavar="N/m",
                      help="penalty stiffnesses per foot (default: %(default)s)")
    quad.add_argument("--dt", type=_positive_float, default=DEFAULTS["quadruped"]["dt"], metavar="S",
                      help="fixed step in s (default: %(default)g)")
    quad.add_argument("--converged", action="store_true",
                      help="also measure the gradients against the dt/100 scheme (about a minute)")
    quad.add_argument("--json", action="store_true", help="print the report (without trajectories) as JSON")
    quad.set_defaults(func=_quadruped)

    lab = sub.add_parser(
        "lab",
        help="serve the browser lab on 127.0.0.1",
        description=(
            "Serve the browser lab on 127.0.0.1 and print its URL: the lab shipped inside this package, or, "
            "when the package runs from a ferromotion checkout, that checkout's web/ (build it with `make wasm`, "
            "or `make lab`, which builds and serves). Only files inside the lab's directory are served "
            "(.wasm as application/wasm). Stop with Ctrl-C."
        ),
    )
    lab.add_argument("--port", type=_port, default=8000, metavar="N",
                     help="port on 127.0.0.1; 0 picks a free one (default: %(default)d)")
    lab.add_argument("--dir", type=Path, default=None, metavar="PATH",
                     help="the lab's directory (default: a checkout's web/ when run from one, else the "
                          "lab inside the package)")
    lab.add_argument("--verbose", action="store_true", help="log every request to stderr")
    lab.set_defaults(func=_lab)

    app = sub.add_parser(
        "app",
        help="serve the Panel app (the bench driven from Python) on 127.0.0.1",
        description=(
            "Serve the Panel app on 127.0.0.1 and print its URL: the stiffness slider, the dt buttons, "
            "the tolerance switch, every readout, the blame split and the log-log plot, computed by the "
            "Python package. Works offline: Panel and Bokeh's JavaScript and CSS come from this server. "
            "Needs panel (pip install 'ferromotion[app]'). Stop with Ctrl-C."
        ),
    )
    app.add_argument("--port", type=_port, default=5006, metavar="N",
                     help="port on 127.0.0.1; 0 picks a free one (default: %(default)d)")
    app.add_argument("--show", action="store_true", help="open the app in the default browser")
    app.add_argument("--prefix", default="", metavar="PATH",
                     help="serve the app, its resources and its websocket under this URL path, e.g. "
                          "/course/ferromotion/ (behind a reverse proxy that forwards the path unchanged)")
    app.add_argument("--origin", action="append", default=[], metavar="HOST[:PORT]",
                     help="also accept the app's websocket from pages on this host (a reverse proxy's "
                          "public host); repeat for more")
    app.set_defaults(func=_app)
    from ferromotion.study import add_parser as add_study  # `ferromotion study` lives in study.py
    add_study(sub)
    from ferromotion.classreport import add_parser as add_class  # `ferromotion class report`
    add_class(sub)
    return parser


def _whole(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be in 0..65535, got {text!r}")
    return value


def _grid_size(text: str) -> int:
    value = _positive_int(text)
    if value < 3:
        raise argparse.ArgumentTypeError(f"must be >= 3, got {text!r}")
    return value


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


def _fixtures_export(args: argparse.Namespace) -> int:
    from .engines.conformance import export_fixtures

    for p in export_fixtures(args.dir):
        print(p)
    return 0


def _conformance(args: argparse.Namespace) -> int:
    from .engines.conformance import FixtureError, conformance_engine, fixtures, load_fixture

    names = args.fixture or list(fixtures())
    try:
        docs = [load_fixture(n) for n in names]
        run = conformance_engine(args.engine, names=docs, stiffness=args.k or (1e4, 1e6),
                                 dt=args.dt)
    except FixtureError as e:
        print(f"ferromotion conformance: error: {e}", file=sys.stderr)
        return 1
    except ImportError as e:  # the engine is not installed here: say which extra brings it
        print(f"ferromotion conformance: {e}", file=sys.stderr)
        return 1
    if args.receipt is not None:
        run.write_receipts(args.receipt)
    print(json.dumps(run.to_dict(), indent=2) if args.json else run.table())
    return 0


def _audit(args: argparse.Namespace) -> int:
    if args.engine is not None and args.budget is not None:  # it would be dropped without a word
        print("ferromotion audit: error: --budget tables this project's routes, not an engine's; "
              "run it without --engine", file=sys.stderr)
        return 2
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


# ---------------------------------------------------------------------------------------
# descent


def _descent(args: argparse.Namespace) -> int:
    d = fm.descent(grid=args.grid)
    if args.json:
        print(d.to_json(indent=2))
        return 0
    land = d.landscape
    starts = ", ".join(f"({h:.3g} m, {v:.3g} m/s)" for h, v in land.starts)
    print(
        f"ferromotion descent: choose (h0, v0) so that the rigid drop's x(T) hits ({d.target[0]:.4f} m, "
        f"{d.target[1]:.4f} m/s), reached from theta* = ({d.optimum[0]:g} m, {d.optimum[1]:g} m/s); T = "
        f"{d.drop.t_final:g} s.",
        f"landscape: {d.grid} x {d.grid} grid over h0 in [{d.height_range[0]:g}, {d.height_range[1]:g}] m, v0 in "
        f"[{d.velocity_range[0]:g}, {d.velocity_range[1]:g}] m/s; grid minimum ({land.grid_minimum[0]:.4g} m, "
        f"{land.grid_minimum[1]:.4g} m/s); {land.local_minima} local minima on the grid.",
        f"starts: {starts}",
        "Every arm steps on the true objective; only its gradient differs. converged = within "
        f"{DEFAULTS['descent']['converged']:g} of theta* in {DEFAULTS['descent']['max_iterations']} steps.",
        "",
        d.format_table(),
        sep="\n",
    )
    return 0


# ---------------------------------------------------------------------------------------
# check

#: Exit status of ``ferromotion check`` when the gradient is not verified.
EXIT_NOT_VERIFIED = 3
#: Exit status of ``ferromotion check`` when the check is refused.
EXIT_REFUSED = 4
#: Exit status of ``ferromotion check`` when the gradient agrees in absolute terms only (its
#: relative accuracy is not measured): never the status of a plain verification.
EXIT_ABSOLUTE = 5
_EXIT = {"verified": 0, "verified-within-noise": 0, "verified-absolute": EXIT_ABSOLUTE,
         "not-verified": EXIT_NOT_VERIFIED, "refused": EXIT_REFUSED}


def _fixture_list(args: argparse.Namespace) -> str:
    """Per fixture: the objective, the gradient under test and how it was produced, and the
    verdict it reaches with these options. Every word comes from the core's receipt (the check
    runs: about a second for all of them), so the list cannot drift from what `check` does."""
    blocks = []
    for name in fm.FIXTURES:
        r = fm.check_fixture(name, seed=args.seed, directions=args.directions, tol=args.tol)
        o = r.objective
        setting = ", ".join(f"{k} = {v:g}" for k, v in o["tolerances"])
        blocks.append(
            f"{name}\n"
            f"    checks: the gradient of {o['name']} ({o['units']}) with respect to the {o['description']}\n"
            f"    claimed gradient: {o['route']} (integrator: {o['integrator']}"
            + (f"; {setting}" if setting else "") + "), against central differences of the objective\n"
            f"    verdict: {r.verdict} ({r.why})"
        )
    return "\n".join(blocks)


def _check(args: argparse.Namespace) -> int:
    if args.list:
        print(_fixture_list(args))
        return 0
    if args.fixture is None:
        args.subparser.error("name a FIXTURE, or pass --list")  # exits with status 2
    receipt = fm.check_fixture(args.fixture, seed=args.seed, directions=args.directions, tol=args.tol)
    if args.out is not None:
        receipt.write(args.out)
    print(receipt.to_json() if args.json else receipt.summary())
    return _EXIT[receipt.verdict]


# ---------------------------------------------------------------------------------------
# quadruped


def _quadruped(args: argparse.Namespace) -> int:
    q = fm.quadruped(stiffness=args.stiffness, dt=args.dt, converged_gradient=args.converged)
    if args.json:
        print(q.to_json(indent=2))
        return 0
    c, robot = q.config, q.config["robot"]
    print(
        f"ferromotion quadruped: {robot['friction']:g} friction, trot period {robot['period']:g} s, one period at "
        f"dt = {c['dt']:g} s, converged runs at dt/{c['refinement']}; penalty damping ratio {c['damping_ratio']:g} "
        f"of {c['reference_mass']:g} kg; a landing from {c['clearance']:g} m at {c['speed']:g} m/s.",
        "forward fidelity: pen = largest penetration, creep = largest slip of a sticking foot, Wc = contact work, "
        "dE = energy change, conv = largest trunk distance to the same law at dt/refinement, d_rigid = distance to "
        "the rigid run (information only), modes = contact-mode changes.",
        "gradient accuracy (one-period Jacobian of the trunk's final state in z0, xdot0, kp): tan err = tangent "
        "against probe-stable central differences, 1e-4 err = differences at a 1e-4 probe against the same, conv "
        "err = against the law converged in dt (--converged: central differences at dt/refinement, of an "
        "event-located run for the penalty law, so they carry the force's jump at touchdown), spread = that "
        "reference against dt/(2 refinement), loc err = the event-located run's own tangent against it, ref err = "
        "the fixed-step tangent at dt/refinement against it, cert / ccert = probe-stable reference columns at dt / "
        "converged; a reference that is not certified says why below the table.",
        "",
        q.format_table(),
        "",
        "contact-mode changes per period (touchdown + lift-off + stick->slide + slide->stick + reversal):",
        sep="\n",
    )
    for law in q.laws:
        if law.modes is None:
            print(f"  {law.label:<16} failed: {law.failure}")
            continue
        m = law.modes
        print(f"  {law.label:<16} {m['total']:>5} = {m['touchdowns']} + {m['liftoffs']} + {m['stick_to_slide']} + "
              f"{m['slide_to_stick']} + {m['slide_reversals']}   per foot {m['per_foot']}")
    v = q.verdict
    if v["incomparable"] is not None:
        print(f"verdict: nothing to compare ({v['incomparable']})")
        return 0
    print(f"verdict (the core's): forward fidelity, the rigid law {'wins' if v['forward']['rigid_wins'] else 'does not win'};",
          "gradient accuracy, " + ", ".join(f"{m['key']} {m['outcome']}" for m in v["gradient"]) + ";",
          f"both axes at once: {'yes' if v['both'] else 'no'}.")
    return 0


# ---------------------------------------------------------------------------------------
# fit

#: `fit`: the data cannot identify some parameter combination (named on stderr).
EXIT_UNIDENTIFIABLE = 3
#: `fit`: the fit converged, but χ² is beyond its 99.9% limit (a misfit).
EXIT_MISFIT = 4
#: `fit`: the fit stalled or hit its iteration cap.
EXIT_NOT_CONVERGED = 5


def _add_fit(sub: Any) -> None:
    fit_defaults = DEFAULTS["fit"]
    drop = DEFAULTS["drop"]
    p = sub.add_parser(
        "fit",
        help="fit the drop's parameters to measured heights/velocities, with identifiability and gradient checks",
        description=(
            "Fit parameters of the drop (zeta or restitution, k, height, velocity, gravity, mass) to a CSV of "
            "measurements: a header row naming the columns t (s) and y (heights, m) and/or v (velocities, m/s); "
            "optional columns sigma_y and sigma_v (one value, repeated) give the standard deviations, or pass "
            "--sigma-y/--sigma-v. An empty cell is a missing sample (masked). Levenberg-Marquardt on the whitened "
            "residuals with the Jacobian of --route; prints the estimates with 95%% intervals, the singular values "
            "and condition number of the sensitivities, any weak direction, and the checker's verdict on the "
            "objective's gradient at the start and at the solution."
        ),
        epilog=(
            f"exit status: 0 fitted and identifiable; 1 when the data or options are refused (missing columns, "
            f"times not increasing, NaN, sigma <= 0, too few samples; the message names the field); 2 on bad "
            f"arguments; {EXIT_UNIDENTIFIABLE} when the data cannot identify some parameter combination (named); "
            f"{EXIT_MISFIT} when it converged to a misfit (chi2 beyond its 99.9%% limit); "
            f"{EXIT_NOT_CONVERGED} when the fit stalled or hit its iteration cap."
        ),
    )
    p.add_argument("data", nargs="?", type=Path, metavar="DATA.csv", help="the measurements (see above)")
    p.add_argument("--demo", action="store_true",
                   help="run the experiment instead: synthetic bounces fitted by every route's Jacobian and by "
                        "CMA-ES and Nelder-Mead (needs the cma and scipy packages), the table of notebook 07")
    p.add_argument("--params", default=",".join(fit_defaults["params"]), metavar="A,B",
                   help="parameters to fit, comma-separated (default: %(default)s)")
    p.add_argument("--route", choices=("fixed", "corrected", "tolerance", "flow", "exact"),
                   default=fit_defaults["route"], help="whose Jacobian steps (default: %(default)s)")
    p.add_argument("--k", type=_positive_float, default=fit_defaults["k"], metavar="N/m",
                   help="penalty stiffness; the start when k is fitted (default: %(default)g)")
    p.add_argument("--dt", type=_positive_float, default=fit_defaults["dt"], metavar="S",
                   help="step of the fixed and corrected routes; sample times must be multiples (default: %(default)g)")
    for name, unit in (("height", "m"), ("velocity", "m/s"), ("zeta", ""), ("gravity", "m/s^2"), ("mass", "kg")):
        p.add_argument(f"--{name}", type=float, default=drop[name], metavar=unit or "Z",
                       help=f"start (or held value) of the {name} (default: %(default)g)")
    p.add_argument("--sigma-y", type=float, default=None, metavar="M", help="standard deviation of a height, m")
    p.add_argument("--sigma-v", type=float, default=None, metavar="M/S", help="standard deviation of a velocity, m/s")
    p.add_argument("--sigma-scale", choices=("stated", "residual", "either"), default=fit_defaults["sigma_scale"],
                   help="what the 95%% intervals take sigma for: the noise's standard deviation (stated), weights whose "
                        "scale the residuals estimate (residual, Student's t), or the wider of the two (either; "
                        "default: %(default)s)")
    p.add_argument("--no-check", action="store_true", help="skip the gradient checks (faster)")
    p.add_argument("--json", action="store_true", help="print the whole report as JSON")
    p.add_argument("--starts", type=_positive_int, default=5, metavar="N", help="with --demo: starts per method")
    p.set_defaults(func=_fit, subparser=p)


def _read_fit_csv(path: Path) -> Dict[str, Any]:
    """Columns t, y, v, sigma_y, sigma_v from a CSV, and ``missing_<col>``: which cells were empty
    (masked; a written NaN is not missing: the core refuses it)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise fm.InvalidParameter(f"invalid parameter `data`: cannot read {path}: {e.strerror or e}") from None
    rows = list(csv.reader(line for line in text.splitlines() if line.strip()))
    if not rows:
        raise fm.InvalidParameter(f"invalid parameter `data`: {path} is empty (expected a header row: t,y and/or v)")
    header = [h.strip().lower() for h in rows[0]]
    if "t" not in header or not ({"y", "v"} & set(header)):
        raise fm.InvalidParameter(f"invalid parameter `data`: {path} needs a column `t` and a column `y` (heights) "
                                  f"and/or `v` (velocities); its header is {','.join(rows[0])}")
    cols: Dict[str, List[Any]] = {h: [] for h in header}
    cols.update({f"missing_{h}": [] for h in header})
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise fm.InvalidParameter(f"invalid parameter `data`: {path} line {line} has {len(row)} cells, "
                                      f"the header {len(header)}")
        for h, cell in zip(header, row):
            cell = cell.strip()
            cols[f"missing_{h}"].append(cell == "")
            if cell == "":
                if h == "t":
                    raise fm.InvalidParameter(f"invalid parameter `t`: {path} line {line} has no time")
                cols[h].append(math.nan)
                continue
            try:
                cols[h].append(float(cell))
            except ValueError:
                raise fm.InvalidParameter(f"invalid parameter `{h}`: {path} line {line}: expected a number, "
                                          f"got {cell!r}") from None
    return cols


def _fit(args: argparse.Namespace) -> int:
    if args.demo:
        return _fit_demo(args)
    if args.data is None:
        args.subparser.error("name a DATA.csv, or pass --demo")  # exits with status 2
    cols = _read_fit_csv(args.data)
    sigma: Dict[str, Optional[float]] = {"y": args.sigma_y, "v": args.sigma_v}
    for ch in ("y", "v"):
        column = cols.get(f"sigma_{ch}")
        if sigma[ch] is None and column is not None:
            values = {x for x in column if not math.isnan(x)}
            if len(values) != 1:
                raise fm.InvalidParameter(f"invalid parameter `sigma_{ch}`: the column must hold one value "
                                          f"(repeated), got {sorted(values)[:4]}")
            sigma[ch] = values.pop()
    for ch, unit in (("y", "m"), ("v", "m/s")):
        if ch in cols and sigma[ch] is None:
            raise fm.InvalidParameter(f"invalid parameter `--sigma-{ch}`: the `{ch}` column needs its standard "
                                      f"deviation: pass --sigma-{ch} ({unit}, > 0) or add a `sigma_{ch}` column")
    masks = {ch: [not m for m in cols[f"missing_{ch}"]] if ch in cols else None for ch in ("y", "v")}
    guess = fm.Drop(height=args.height, velocity=args.velocity, zeta=args.zeta, gravity=args.gravity,
                    mass=args.mass, t_final=max(cols["t"]) if cols["t"] else DEFAULTS["drop"]["t_final"])
    r = fm.fit(guess, cols["t"], cols.get("y"), v=cols.get("v"), sigma_y=sigma["y"], sigma_v=sigma["v"],
               mask_y=masks["y"], mask_v=masks["v"], params=args.params, route=args.route, k=args.k, dt=args.dt,
               check=not args.no_check, sigma_scale=args.sigma_scale)
    if args.json:
        print(r.to_json(indent=2))
    else:
        print(r.summary())
    if not r.identifiable:
        names = "; ".join(f"{w.label} ({w.kind})" for w in r.weak_directions)
        print(f"ferromotion: the data cannot identify: {names}; fix one of these parameters, or add samples "
              "that see it (e.g. during contact)", file=sys.stderr)
        return EXIT_UNIDENTIFIABLE
    if r.status != "converged":
        print(f"ferromotion: the fit did not converge ({r.status}) with the {args.route} route's Jacobian",
              file=sys.stderr)
        return EXIT_NOT_CONVERGED
    if not r.consistent:
        print(f"ferromotion: misfit: chi2 = {r.chi2:.4g} exceeds its 99.9% limit {r.chi2_limit:.4g} for "
              f"{r.document['dof']} degrees of freedom (wrong model, wrong sigma, or a Jacobian that stopped the "
              "optimiser short)", file=sys.stderr)
        return EXIT_MISFIT
    return 0


def _fit_demo(args: argparse.Namespace) -> int:
    from .fit import _import_cma, demo_table, fit_demo
    try:
        _import_cma()
        import scipy  # noqa: F401
        baselines = True
    except ImportError as e:
        print(f"ferromotion: {e.name} is not installed: the derivative-free baselines are left out "
              "(pip install cma scipy)", file=sys.stderr)
        baselines = False
    demo = fit_demo(starts=args.starts, baselines=baselines,
                    progress=None if args.json else (lambda s: print(s, file=sys.stderr, flush=True)))
    if args.json:
        doc = {"rows": demo["rows"], "robustness": demo["robustness"],
               "scenarios": [{"horizon": s["horizon"], "samples": s["samples"], "dv_dy0": s["dv_dy0"],
                              "target_cost": s["target_cost"], "truth": s["truth"], "best": s["best"].document}
                             for s in demo["scenarios"]]}
        print(json.dumps(fm._common.json_ready(doc), indent=2, ensure_ascii=False))
    else:
        print(demo_table(demo))
    return 0


# ---------------------------------------------------------------------------------------
# lab

def _lab(args: argparse.Namespace) -> int:
    return labserver.serve(args.dir, args.port, args.verbose)


# ---------------------------------------------------------------------------------------
# app


def _app(args: argparse.Namespace) -> int:
    try:
        from . import app
        app.require_panel()
    except ImportError as e:
        raise _ServerError(f"{e}") from e

    def ready(url: str) -> None:
        print(f"ferromotion app: serving the Panel workbench at {url} (Ctrl-C to stop)", flush=True)

    labserver.stop_on_sigterm()
    try:
        app.serve(args.port, show=args.show, on_ready=ready, prefix=args.prefix, origins=args.origin)
    except KeyboardInterrupt:
        pass
    except OSError as e:
        raise _ServerError(f"cannot listen on 127.0.0.1:{args.port}: {e.strerror or e}") from e
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except (fm.FerroError, _ServerError) as e:
        print(f"ferromotion: error: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader went away (`ferromotion audit | head`): stop quietly, and keep Python
        # from complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
