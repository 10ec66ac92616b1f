"""``ferromotion app``: serve the Panel app on 127.0.0.1."""

from __future__ import annotations

import argparse
from typing import Any

from .. import labserver
from ..labserver import ServerError as _ServerError
from ._args import _port


def add_parser(sub: Any) -> None:
    """Register ``ferromotion app``."""
    p = sub.add_parser(
        "app",
        help="serve the Panel app (the bench driven from Python) on 127.0.0.1",
        description=(
            "Serve the Panel app on 127.0.0.1 and print its URL: the stiffness slider, the dt buttons, "
            "the tolerance switch, every readout, the blame split and the log-log plot, computed by the "
            "Python package. Works offline: Panel and Bokeh's JavaScript and CSS come from this server. "
            "Needs panel (pip install 'ferromotion[app]'). Stop with Ctrl-C."
        ),
    )
    p.add_argument("--port", type=_port, default=5006, metavar="N",
                     help="port on 127.0.0.1; 0 picks a free one (default: %(default)d)")
    p.add_argument("--show", action="store_true", help="open the app in the default browser")
    p.add_argument("--prefix", default="", metavar="PATH",
                     help="serve the app, its resources and its websocket under this URL path, e.g. "
                          "/course/ferromotion/ (behind a reverse proxy that forwards the path unchanged)")
    p.add_argument("--origin", action="append", default=[], metavar="HOST[:PORT]",
                     help="also accept the app's websocket from pages on this host (a reverse proxy's "
                          "public host); repeat for more")
    p.set_defaults(func=_app)


def _app(args: argparse.Namespace) -> int:
    try:
        from .. import app
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

