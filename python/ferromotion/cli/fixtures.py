"""``ferromotion fixtures export``: the conformance fixtures as JSON."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    """Register ``ferromotion fixtures``."""
    fixtures = sub.add_parser(
        "fixtures", help="the conformance fixtures as JSON (schema ferromotion.fixture/1)",
        description="Conformance fixtures: contact problems with the exact rigid x(T) and J = dx(T)/dx(0), "
                    "tolerances and verdict meanings, as JSON any engine's CI can read without this package.")
    fsub = fixtures.add_subparsers(dest="fixtures_command", metavar="ACTION", required=True)
    export = fsub.add_parser("export", help="write NAME.json for every fixture and fixture.schema.json into DIR")
    export.add_argument("dir", type=Path, metavar="DIR")
    export.set_defaults(func=_fixtures_export)


def _fixtures_export(args: argparse.Namespace) -> int:
    from ..engines.conformance import export_fixtures

    for p in export_fixtures(args.dir):
        print(p)
    return 0

