"""The lab's static server: the one behind ``ferromotion lab``, ``make lab`` and the browser tests.

It serves one directory on 127.0.0.1 and nothing outside it (see :class:`LabHandler`). Which
directory, by default (:func:`default_root`): the ``web/`` folder of the checkout this package
lives in, when it lives in one; otherwise the lab shipped inside the installed package
(``ferromotion/lab/``, put there by ``make dist``).

This module uses the standard library only and never imports the compiled core, so that
``make lab`` can run it as a script before any Python environment exists::

    python3 -I python/ferromotion/labserver.py [--dir PATH] [--port N] [--verbose]

(``-I`` keeps this folder off ``sys.path``: its module names must not shadow the standard library's.)
"""

from __future__ import annotations

import argparse
import http.server
import os
import signal
import sys
import urllib.parse
from pathlib import Path
from typing import Any, Optional, Sequence

_HERE = Path(__file__).resolve().parent
#: The lab shipped inside the installed package (``make dist`` copies the built lab here).
PACKAGE_LAB = _HERE / "lab"
# The checkout this file may live in (python/ferromotion/labserver.py -> ../..).
_CHECKOUT = _HERE.parents[1]
#: What the WebAssembly build writes into ``pkg/``; the lab cannot run without it.
PKG_FILES = ("ferromotion_wasm.js", "ferromotion_wasm_bg.wasm")


class ServerError(Exception):
    """A server cannot start: the message says why and what to do."""


def checkout_web() -> Optional[Path]:
    """``web/`` of the checkout this package lives in, or None when it is installed elsewhere."""
    if (_CHECKOUT / "crates" / "ferromotion-wasm").is_dir() and (_CHECKOUT / "web").is_dir():
        return _CHECKOUT / "web"
    return None


def default_root() -> Path:
    """The lab ``ferromotion lab`` serves without ``--dir``: a checkout's ``web/``, else the packaged lab."""
    web = checkout_web()
    return web if web is not None else PACKAGE_LAB


class LabHandler(http.server.SimpleHTTPRequestHandler):
    """Static files from one directory and nothing outside it.

    The request path is percent-decoded once; a path with a ``..`` segment, a backslash
    or a NUL byte is refused, and what remains must resolve (symbolic links included)
    inside the root. No directory listings. Types are set here, not read from the host's
    mime.types: WebAssembly.instantiateStreaming needs application/wasm.
    """

    extensions_map = {
        "": "application/octet-stream",
        ".html": "text/html; charset=utf-8",
        ".js": "text/javascript; charset=utf-8",
        ".mjs": "text/javascript; charset=utf-8",
        ".css": "text/css; charset=utf-8",
        ".json": "application/json",
        ".wasm": "application/wasm",
        ".svg": "image/svg+xml",
        ".png": "image/png",
        ".ico": "image/x-icon",
        ".txt": "text/plain; charset=utf-8",
        ".ts": "text/plain; charset=utf-8",
        ".woff2": "font/woff2",
    }
    root: Path = PACKAGE_LAB
    verbose = False

    def _target(self) -> Optional[Path]:
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path, errors="strict")
        if "\\" in path or "\x00" in path:
            return None
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if ".." in parts:
            return None
        try:
            target = self.root.joinpath(*parts).resolve(strict=True)
        except (OSError, ValueError, RuntimeError):
            return None
        if target != self.root and self.root not in target.parents:
            return None
        if target.is_dir():
            index = target / "index.html"
            return index if index.is_file() else None
        return target if target.is_file() else None

    def send_head(self) -> Any:
        try:
            target = self._target()
        except UnicodeDecodeError:
            target = None
        if target is None:
            self.send_error(404, "not found")
            return None
        try:
            f = open(target, "rb")
        except OSError:
            self.send_error(404, "not found")
            return None
        try:
            size = os.fstat(f.fileno()).st_size
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(str(target)))
            self.send_header("Content-Length", str(size))
            self.send_header("Cache-Control", "no-cache")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            return f
        except BaseException:
            f.close()
            raise

    def list_directory(self, path: Any) -> Any:  # never list a directory
        self.send_error(404, "not found")
        return None

    def log_message(self, format: str, *args: Any) -> None:
        if self.verbose:
            super().log_message(format, *args)


def lab_server(root: Path, port: int = 0, verbose: bool = False) -> http.server.ThreadingHTTPServer:
    """A server for the lab in ``root`` on 127.0.0.1:``port`` (0: a free port), not yet
    serving. Checks that the WebAssembly build is there."""
    root = root.resolve()
    if not (root / "index.html").is_file():
        if root == PACKAGE_LAB.resolve():
            raise ServerError(
                f"this installation of ferromotion carries no browser lab ({root} is missing). Install a wheel "
                "built by `make dist`, run `ferromotion lab` from a checkout (`make lab` builds and serves), "
                "or pass --dir."
            )
        raise ServerError(
            f"no browser lab at {root} (index.html is missing). `ferromotion lab` serves the lab inside the "
            "package, or the web/ directory of a ferromotion checkout when run from one (`make lab` builds and "
            "serves); --dir names any other."
        )
    missing = [name for name in PKG_FILES if not (root / "pkg" / name).is_file()]
    if missing:
        raise ServerError(
            f"the lab's WebAssembly build is missing ({root / 'pkg'}: no {', '.join(missing)}): run `make wasm` "
            "in the checkout first (or `make lab`, which builds and serves)."
        )
    handler = type("Handler", (LabHandler,), {"root": root, "verbose": verbose})
    try:
        return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as e:
        raise ServerError(f"cannot listen on 127.0.0.1:{port}: {e.strerror or e}") from e


def stop_on_sigterm() -> None:
    """Make SIGTERM stop a server the way Ctrl-C does (exit status 0)."""

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)


def serve(root: Optional[Path] = None, port: int = 8000, verbose: bool = False) -> int:
    """Serve the lab in ``root`` (default: :func:`default_root`) until Ctrl-C or SIGTERM; prints
    the URL first. Raises :class:`ServerError` when it cannot start; returns 0."""
    server = lab_server(root if root is not None else default_root(), port, verbose)
    port = server.server_address[1]
    print(f"ferromotion lab: serving {server.RequestHandlerClass.root} at http://127.0.0.1:{port}/ "  # type: ignore[attr-defined]
          "(Ctrl-C to stop)", flush=True)
    stop_on_sigterm()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be in 0..65535, got {text!r}")
    return value


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``make lab``'s entry point (the same server and messages as ``ferromotion lab``)."""
    parser = argparse.ArgumentParser(prog="labserver.py", description="Serve the browser lab on 127.0.0.1.")
    parser.add_argument("--port", type=_port, default=8000, metavar="N",
                        help="port on 127.0.0.1; 0 picks a free one (default: %(default)d)")
    parser.add_argument("--dir", type=Path, default=None, metavar="PATH",
                        help="the lab's directory (default: this checkout's web/)")
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = parser.parse_args(argv)
    try:
        return serve(args.dir, args.port, args.verbose)
    except ServerError as e:
        print(f"ferromotion: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
