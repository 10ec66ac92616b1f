"""`make bench-lab`: how long the lab takes from a slider move to every readout and plot updated.

Serves web/ on 127.0.0.1, drives Debian's Chromium (headless, through Playwright) and moves
the stiffness slider with the keyboard, one step of 0.1 in log10 k at a time, sweeping
k = 1e4 .. 1e8 N/m and back. The page itself records each update's time, from the input
event's timestamp to the moment every readout, the error plot's marker, the hints, the
checklist and the panels are written and the page's style and layout recomputed
(``window.ferromotionLab.timings`` with ``forceLayout`` set, see web/js/ui.js); this script
only collects them. Printed: p50, p95 and max per setting, at dt, dt/10 and
dt/100 with the tolerance route off and on (rtol 1e-11, no event location: the library's
default, kept so runs compare across versions; the lab itself opens at 1e-12, see
lab/workbench.rs `LAB_RTOL`), and the median of the part spent in the core's readout ("core p50"). The machine's
load average is printed too: other processes on a small machine move these numbers. Targets (docs/model.md §10, issue 3): p95 < 16 ms at dt with the tolerance route off,
< 100 ms at dt/100.

A benchmark, not a test: it asserts nothing. Never run `playwright install`; this uses
/usr/bin/chromium.

    .venv/bin/python benches/lab_bench.py [--moves N] [--json]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import statistics
import sys
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

WEB = Path(__file__).resolve().parent.parent / "web"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SETTINGS = [
    ("dt", "1e-4", "off"),
    ("dt/10", "1e-5", "off"),
    ("dt/100", "1e-6", "off"),
    ("dt", "1e-4", "1e-11"),
    ("dt/10", "1e-5", "1e-11"),
    ("dt/100", "1e-6", "1e-11"),
]
TARGETS = {("dt", "off"): 16.0, ("dt/100", "off"): 100.0}


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {".wasm": "application/wasm", ".js": "text/javascript"}

    def log_message(self, format: str, *args: object) -> None:
        pass


def percentile(xs: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q / 100 * len(s) + 0.5) - 1))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", type=int, default=60, help="measured slider moves per setting (default 60)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = ap.parse_args()
    if not (WEB / "pkg" / "ferromotion_wasm_bg.wasm").is_file():
        print("bench-lab: web/pkg/ is missing; run `make wasm` first", file=sys.stderr)
        return 2

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(WEB)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/index.html"
    results = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.set_default_timeout(120_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"bench-lab: {args.moves} slider moves per setting, Chromium {browser.version}, "
              f"{os.cpu_count()} CPUs, load average {load}")
        print(f"{'step':<8} {'tolerance':<10} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'core p50':>9}  target")
        for label, dt, tol in SETTINGS:
            page.goto(f"{base}?k=1e4&dt={dt}&tol={tol}&ev=0&cor=0")
            page.wait_for_function("window.ferromotionLab && window.ferromotionLab.ready")
            page.evaluate("window.ferromotionLab.forceLayout = true")
            if page.locator("#predict-form").is_visible():
                page.locator("#predict-form input[value=flat]").check()
                page.locator("#predict-commit").click()
            # Let the background worker finish the curves so it does not share the CPU.
            page.wait_for_function("document.body.dataset.background === 'idle'")
            slider = page.locator("#stiffness")
            slider.focus()
            direction = "ArrowRight"
            timings: list[float] = []
            core: list[float] = []
            warmup = 3
            for i in range(args.moves + warmup):
                value = float(slider.input_value())
                if value >= 8.0 - 1e-9:
                    direction = "ArrowLeft"
                elif value <= 4.0 + 1e-9:
                    direction = "ArrowRight"
                n = page.evaluate("window.ferromotionLab.updates")
                page.keyboard.press(direction)
                page.wait_for_function(f"window.ferromotionLab.updates > {n}", polling=1)
                if i >= warmup:
                    t, c = page.evaluate("[window.ferromotionLab.timings.at(-1), window.ferromotionLab.core.at(-1)]")
                    timings.append(t)
                    core.append(c)
            p50, p95 = statistics.median(timings), percentile(timings, 95)
            target = TARGETS.get((label, tol if tol == "off" else "on"))
            verdict = "" if target is None else f"< {target:g} ms: {'met' if p95 < target else 'MISSED'}"
            tol_text = "off" if tol == "off" else f"on {tol}"
            core50 = statistics.median(core)
            print(f"{label:<8} {tol_text:<10} {p50:>8.1f} {p95:>8.1f} {max(timings):>8.1f} {core50:>9.1f}  {verdict}")
            results.append({"step": label, "dt": float(dt), "tolerance": tol, "moves": len(timings),
                            "p50_ms": p50, "p95_ms": p95, "max_ms": max(timings), "core_p50_ms": core50})
        status = page.locator("#status").inner_text()
        browser.close()
    server.shutdown()
    if errors:
        print("bench-lab: page errors: " + "; ".join(errors), file=sys.stderr)
        return 1
    if not status.startswith("Ready"):
        print(f"bench-lab: the status line reads {status!r}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
