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

Each subcommand lives in its own module of this package and owns its parser there
(``add_parser(sub)`` registers it, its handler runs it): ``audit``, ``fixtures``, ``conformance``,
``descent``, ``check``, ``fit``, ``quadruped``, ``lab``, ``app``; ``study`` and ``class report`` live in
``study.py`` and ``classreport.py``. This module builds the top parser and runs ``main``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any, Callable, Dict, Optional, Sequence

import ferromotion as fm

from ..labserver import ServerError as _ServerError
from . import app, audit, check, conformance, descent, fit, fixtures, lab, quadruped
from .check import EXIT_ABSOLUTE, EXIT_NOT_VERIFIED, EXIT_REFUSED
from .fit import EXIT_MISFIT, EXIT_NOT_CONVERGED, EXIT_UNIDENTIFIABLE

__all__ = ["main", "EXIT_ABSOLUTE", "EXIT_NOT_VERIFIED", "EXIT_REFUSED", "EXIT_MISFIT", "EXIT_NOT_CONVERGED",
           "EXIT_UNIDENTIFIABLE"]


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
    for module in (audit, fixtures, conformance, descent, check, fit, quadruped, lab, app):
        module.add_parser(sub)
    from ferromotion.study import add_parser as add_study  # `ferromotion study` lives in study.py
    add_study(sub)
    from ferromotion.classreport import add_parser as add_class  # `ferromotion class report`
    add_class(sub)
    _learn_flags(parser)
    return parser


def _learn_flags(parser: argparse.ArgumentParser) -> None:
    """Every parser learns its flags by keyword (``sigma_y`` -> ``--sigma-y``), so that a core
    refusal naming the keyword is told with the flag the user typed (:func:`_in_flags`)."""
    flags = {a.dest: max(a.option_strings, key=len) for a in parser._actions
             if a.option_strings and a.dest not in ("help", "version")}
    parser.set_defaults(cli_flags=flags)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _learn_flags(child)


#: The core's words for a refused parameter (``FerroError::InvalidParameter``'s message).
_REFUSED = re.compile(r"invalid parameter `(?P<name>[^`]+)` = (?P<value>[^:]*): (?P<limit>.*)", re.S)


def _typed(x: float) -> str:
    """A flag's number as a person types it: 1e-9, not Python's 1e-09."""
    return re.sub(r"e([+-])0*(\d)", lambda m: f"e{'-' if m[1] == '-' else ''}{m[2]}", f"{x:g}")


def _in_flags(e: BaseException, args: argparse.Namespace) -> str:
    """A core refusal of a keyword this command has as a flag, told with the flag and the value
    as typed: "--rtol 1e-20: must be at least 1e-14 ..." (other messages as they are)."""
    m = _REFUSED.fullmatch(str(e))
    flags: Dict[str, str] = getattr(args, "cli_flags", {})
    if isinstance(e, fm.TooManySteps) and "smallest dt" in str(e) and "dt" in flags:
        # A fixed step too fine for the step cap: the flag at fault is --dt (no flag sets the cap).
        return f"{flags['dt']} {_typed(args.dt)}: {str(e).replace(' (`max_steps`)', '')}"
    if m is None or m["name"] not in flags:
        return str(e)
    typed: Any = getattr(args, m["name"], None)
    shown = "" if typed is None or isinstance(typed, bool) else f" {_typed(typed)}" if isinstance(typed, float) else f" {typed}"
    # Another keyword the limit names (`k_min` in "must be >= k_min = 1e6") as its flag too.
    limit = re.sub(r"\b[a-z]+(?:_[a-z0-9]+)+\b", lambda w: flags.get(w.group(), w.group()), m["limit"])
    return f"{flags[m['name']]}{shown}: {limit}"


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
        print(f"ferromotion: error: {_in_flags(e, args)}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader went away (`ferromotion audit | head`): stop quietly, and keep Python
        # from complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
