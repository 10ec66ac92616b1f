"""``ferromotion descent``: gradient descent through one impact, one line per gradient arm."""

from __future__ import annotations

import argparse
from typing import Any

import ferromotion as fm

from ._args import DEFAULTS, _grid_size


def add_parser(sub: Any) -> None:
    """Register ``ferromotion descent``."""
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

