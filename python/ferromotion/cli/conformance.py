"""``ferromotion conformance``: run an engine on the fixtures and print the core's verdicts."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..engines import ENGINES
from ._args import _positive_float


def add_parser(sub: Any) -> None:
    """Register ``ferromotion conformance``."""
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


def _conformance(args: argparse.Namespace) -> int:
    from ..engines.conformance import FixtureError, conformance_engine, fixtures, load_fixture

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

