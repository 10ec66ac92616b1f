"""``ferromotion check EXAMPLE``: a worked example's gradient check and its receipt's verdict.

The positional name is spelled as before (``ferromotion check drop-fixed``); the examples were
called fixtures until a fixture came to mean a conformance fixture (``ferromotion fixtures``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import ferromotion as fm

from ._args import DEFAULTS, _positive_float, _whole


#: Exit status of ``ferromotion check`` when the gradient is not verified.
EXIT_NOT_VERIFIED = 3
#: Exit status of ``ferromotion check`` when the check is refused.
EXIT_REFUSED = 4
#: Exit status of ``ferromotion check`` when the gradient agrees in absolute terms only (its
#: relative accuracy is not measured): never the status of a plain verification.
EXIT_ABSOLUTE = 5
_EXIT = {"verified": 0, "verified-within-noise": 0, "verified-absolute": EXIT_ABSOLUTE,
         "not-verified": EXIT_NOT_VERIFIED, "refused": EXIT_REFUSED}



def add_parser(sub: Any) -> None:
    """Register ``ferromotion check``."""
    check = sub.add_parser(
        "check",
        help="check a worked example's gradient and print its receipt's verdict",
        description=(
            "Run the gradient check of one of the core's worked examples: f's evaluation noise measured, then centered "
            "differences walked over a ladder of probe sizes along seeded random and coordinate directions until "
            "the verdict is resolved, smoothness measured from the probe curve (and the objective's events), "
            "absolute and relative discrepancy against the differences' own resolution. Prints the receipt's "
            "one-line summary (verdict, why, errors). docs/checking.md states the rules."
        ),
        epilog=(
            f"exit status: 0 verified (or verified within evaluation noise); {EXIT_NOT_VERIFIED} not verified (a "
            f"direction disagrees beyond the floor and the tolerance); {EXIT_REFUSED} refused (a direction crosses "
            f"an event, grazes, or has no probe measured smooth); {EXIT_ABSOLUTE} verified in absolute terms only; "
            "1 when the core refuses the input; 2 on bad arguments (an unknown example included). "
            f"Examples: {', '.join(fm.EXAMPLES)}."
        ),
    )
    check.add_argument("example", nargs="?", choices=fm.EXAMPLES, metavar="EXAMPLE",
                       help="the worked example to check (see --list)")
    check.add_argument("--list", action="store_true",
                       help="list the examples: what each checks, against which gradient, and its verdict; then exit")
    check.add_argument("--json", action="store_true", help="print the whole receipt as JSON instead of the summary")
    check.add_argument("--out", type=Path, metavar="FILE", help="also write the receipt's JSON to FILE")
    check.add_argument("--seed", type=_whole, default=DEFAULTS["check"]["seed"], metavar="N",
                       help="seed of the random directions (default: %(default)d)")
    check.add_argument("--directions", type=_whole, default=DEFAULTS["check"]["random_directions"], metavar="N",
                       help="random directions besides the coordinates (default: %(default)d)")
    check.add_argument("--tol", type=_positive_float, default=DEFAULTS["check"]["tol"], metavar="T",
                       help="relative accuracy a verified verdict certifies (default: %(default)g)")
    check.set_defaults(func=_check, subparser=check)


def _example_list(args: argparse.Namespace) -> str:
    """Per example: the objective, the gradient under test and how it was produced, and the
    verdict it reaches with these options. Every word comes from the core's receipt (the check
    runs: about a second for all of them), so the list cannot drift from what `check` does."""
    blocks = []
    for name in fm.EXAMPLES:
        r = fm.check_example(name, seed=args.seed, directions=args.directions, tol=args.tol)
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
        print(_example_list(args))
        return 0
    if args.example is None:
        args.subparser.error("name an EXAMPLE, or pass --list")  # exits with status 2
    receipt = fm.check_example(args.example, seed=args.seed, directions=args.directions, tol=args.tol)
    if args.out is not None:
        receipt.write(args.out)
    print(receipt.to_json() if args.json else receipt.summary())
    return _EXIT[receipt.verdict]

