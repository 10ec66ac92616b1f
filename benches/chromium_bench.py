"""The core in WebAssembly in headless Chromium, for `make bench`: ns per step of the fixed route.

Serves web/ (the lab's `--target web` build in web/pkg/, `make wasm`) on 127.0.0.1 with an
ephemeral port, plus two files of this folder under /__bench/: a blank page and
wasm_timing.mjs, the timing loop the Node runner uses too. Then, in Debian's Chromium driven by
Playwright, imports web/pkg/ferromotion_wasm.js and runs the loop with page.evaluate. The lab
page itself is not loaded (its background worker would share the CPU). Prints one JSON object.
A benchmark: it asserts nothing. Never run `playwright install`: this uses /usr/bin/chromium.

    .venv/bin/python benches/chromium_bench.py [K] [DT]     (default k = 1e6 N/m, dt = 1e-6 s)
"""

from __future__ import annotations

import functools
import http.server
import json
import sys
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support import launch_chromium  # noqa: E402  (Chromium's path and flags, once for tests and benches)

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "web"
BENCHES = ROOT / "benches"
BLANK = b"<!doctype html><meta charset=utf-8><title>ferromotion bench</title>"


class _Handler(http.server.SimpleHTTPRequestHandler):
    """web/ as it is, plus /__bench/index.html (blank) and /__bench/wasm_timing.mjs."""

    extensions_map = {".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript"}

    def do_GET(self) -> None:  # noqa: N802 (http.server's spelling)
        extra = {"/__bench/index.html": ("text/html", BLANK),
                 "/__bench/wasm_timing.mjs": ("text/javascript", (BENCHES / "wasm_timing.mjs").read_bytes())}
        if self.path in extra:
            kind, body = extra[self.path]
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> int:
    k = float(sys.argv[1]) if len(sys.argv) > 1 else 1e6
    dt = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-6
    if not (WEB / "pkg" / "ferromotion_wasm_bg.wasm").is_file():
        print("chromium_bench: web/pkg/ is missing; run `make wasm`", file=sys.stderr)
        return 2
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(WEB)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page()
            page.set_default_timeout(300_000)
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/__bench/index.html")
            result = page.evaluate(
                """async ([k, dt]) => {
                    const timing = await import("/__bench/wasm_timing.mjs");
                    const wasm = await import("/pkg/ferromotion_wasm.js");
                    await wasm.default();
                    return timing.measureFixed(wasm, k, dt);
                }""",
                [k, dt],
            )
            version = browser.version
            browser.close()
    finally:
        server.shutdown()
    print(json.dumps({"impl": "wasm-chromium", "chromium": version, **result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
