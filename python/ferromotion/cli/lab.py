"""``ferromotion lab``: serve the browser lab on 127.0.0.1."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import labserver
from ._args import _port


def add_parser(sub: Any) -> None:
    """Register ``ferromotion lab``."""
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


def _lab(args: argparse.Namespace) -> int:
    return labserver.serve(args.dir, args.port, args.verbose)
