"""`make bench-lab`: how long the lab takes from a slider move to every readout and plot updated.

Serves web/ on 127.0.0.1, drives Debian's Chromium (headless, through Playwright) and moves
the stiffness slider with the keyboard, one step of 0.1 in log10 k at a time, sweeping
k = 1e4 .. 1e8 N/m and back. The page itself records each update's time, from the input
event's timestamp to the moment every readout, the plots' markers, the phone strip and the
controls are written, the key step's "change" work (grading the committed value) done and
the page's style and layout recomputed (``window.ferromotionLab.timings`` with
``forceLayout`` set, see web/js/ui.js); this script only collects them. The learner's
checklist, guided steps and hints are painted right after the move's frame: that part is
printed on its own line ("after the frame"), never hidden.

Per setting (dt, dt/10 and dt/100, the tolerance route off and on at the core's default
rtol, the one the lab opens on, no event location): the first ``--warmup`` moves after
loading are left out (the page's first formatting and layout caches), then ``--moves``
moves are measured; printed are p50, p95 and max, the median time in the core's readout
("core") and total / core (how many times the core's own time the whole move takes). The
phone lines add where its time goes (medians per part, ms). The machine's load average is
printed before and after: other processes on a small machine move these numbers, so compare
parts and ratios across runs, and absolute times only on a quiet machine. Desktop targets
(docs/model.md §10): p95 < 16 ms at dt with the tolerance route off, < 100 ms at dt/100.

``--phone`` times a cheap phone beside the desktop, in the same run: a 375 x 740 touch
screen with Chromium's CPU throttled 4x (CDP ``Emulation.setCPUThrottlingRate``), target
p95 < 16 ms (one frame) at every setting (``make bench-lab PHONE=1``).

A benchmark, not a test: it asserts nothing. Never run `playwright install`; this uses
/usr/bin/chromium.

    .venv/bin/python benches/lab_bench.py [--moves N] [--warmup N] [--phone] [--json]
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

import ferromotion as fm  # the core's default rtol, the one the lab opens on
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support import launch_chromium  # noqa: E402  (Chromium's path and flags, once for tests and benches)

WEB = Path(__file__).resolve().parent.parent / "web"
RTOL = f"{fm.defaults()['tolerance']['rtol']:g}"
SETTINGS = [
    ("dt", "1e-4", "off"),
    ("dt/10", "1e-5", "off"),
    ("dt/100", "1e-6", "off"),
    ("dt", "1e-4", RTOL),
    ("dt/10", "1e-5", RTOL),
    ("dt/100", "1e-6", RTOL),
]
TARGETS = {("dt", "off"): 16.0, ("dt/100", "off"): 100.0}
#: A cheap phone: a 375 x 740 touch screen and a CPU four times slower (Chromium's own throttle).
PHONE = {"viewport": {"width": 375, "height": 740}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
PHONE_THROTTLE = 4
PHONE_TARGET_MS = 16.0


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {".wasm": "application/wasm", ".js": "text/javascript"}

    def log_message(self, format: str, *args: object) -> None:
        pass


def percentile(xs: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q / 100 * len(s) + 0.5) - 1))]


def measure(page, base: str, label: str, dt: str, tol: str, moves: int, warmup: int = 10) -> dict:
    """p50/p95/max of slider move -> every readout and plot, at one setting (keyboard steps);
    the first `warmup` moves are left out."""
    page.goto(f"{base}?k=1e4&dt={dt}&tol={tol}&ev=0&cor=0")
    page.wait_for_function("window.ferromotionLab && window.ferromotionLab.ready")
    page.evaluate("window.ferromotionLab.forceLayout = true")
    if page.locator("#predict-form").is_visible():
        page.locator("#predict-form input[value=flat]").check()
        page.locator("#predict-commit").click()
    # Let the background worker finish the curves so it does not share the CPU.
    page.wait_for_function("document.body.dataset.background === 'idle'", timeout=600_000)
    slider = page.locator("#stiffness")
    slider.focus()
    direction = "ArrowRight"
    timings: list[float] = []
    core: list[float] = []
    after: list[float] = []
    parts: list[dict] = []
    for i in range(moves + warmup):
        value = float(slider.input_value())
        if value >= 8.0 - 1e-9:
            direction = "ArrowLeft"
        elif value <= 4.0 + 1e-9:
            direction = "ArrowRight"
        n = page.evaluate("window.ferromotionLab.updates")
        page.keyboard.press(direction)
        # `updates` counts a move once its progress is painted after the frame too.
        page.wait_for_function(f"window.ferromotionLab.updates > {n}", polling=1)
        if i >= warmup:
            t, c, a, part = page.evaluate(
                "[window.ferromotionLab.timings.at(-1), window.ferromotionLab.core.at(-1), "
                "(window.ferromotionLab.after || [0]).at(-1), window.ferromotionLab.parts.at(-1)]")
            timings.append(t)
            core.append(c)
            after.append(a)
            parts.append(part)
    names = list(dict.fromkeys(name for p in parts for name in p))
    core_p50 = statistics.median(core)
    return {"step": label, "dt": float(dt), "tolerance": tol, "moves": len(timings), "warmup": warmup,
            "p50_ms": statistics.median(timings), "p95_ms": percentile(timings, 95), "max_ms": max(timings),
            "core_p50_ms": core_p50, "ratio_to_core": statistics.median(timings) / core_p50,
            "after_p50_ms": statistics.median(after), "after_p95_ms": percentile(after, 95),
            "parts_p50_ms": {name: statistics.median(p.get(name, 0.0) for p in parts) for name in names}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", type=int, default=120, help="measured slider moves per setting (default 120)")
    ap.add_argument("--warmup", type=int, default=10,
                    help="moves after loading left out of each setting's numbers (default 10)")
    ap.add_argument("--phone", action="store_true",
                    help="also time a cheap phone (375 x 740, touch, CPU throttled 4x), beside the desktop")
    ap.add_argument("--parts", action="store_true", help="print the desktop's per-part split too")
    ap.add_argument("--web", type=Path, default=WEB,
                    help="the lab's folder to serve (default web/; another checkout's web/ compares a change)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = ap.parse_args()
    if not (args.web / "pkg" / "ferromotion_wasm_bg.wasm").is_file():
        print("bench-lab: web/pkg/ is missing; run `make wasm` first", file=sys.stderr)
        return 2

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(args.web)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/index.html"
    results = []
    errors: list[str] = []
    statuses: list[str] = []
    with sync_playwright() as p:
        browser = launch_chromium(p)
        pages = {"desktop": browser.new_context(viewport={"width": 1280, "height": 900}).new_page()}
        if args.phone:
            phone = browser.new_context(**PHONE).new_page()
            # CPU throttling is per page, through the DevTools protocol.
            phone.context.new_cdp_session(phone).send("Emulation.setCPUThrottlingRate", {"rate": PHONE_THROTTLE})
            pages["phone"] = phone
        for page in pages.values():
            page.set_default_timeout(600_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"bench-lab: {args.moves} slider moves per setting after {args.warmup} left out (warm-up), "
              f"Chromium {browser.version}, {os.cpu_count()} CPUs, load average {load} "
              f"(other processes on this machine move these numbers)")
        if args.phone:
            print(f"phone: 375 x 740, touch, CPU throttled {PHONE_THROTTLE}x (Emulation.setCPUThrottlingRate); "
                  f"target p95 < {PHONE_TARGET_MS:g} ms at every setting")
        cols = "".join(f" {name + ' p50':>12} {name + ' p95':>12} {name + ' max':>12} {name + ' core':>12} {'/core':>6}"
                       for name in pages)
        print(f"{'step':<8} {'tolerance':<11}{cols}  target")
        for label, dt, tol in SETTINGS:
            row = {name: measure(page, base, label, dt, tol, args.moves, args.warmup) for name, page in pages.items()}
            verdicts = []
            target = TARGETS.get((label, "off" if tol == "off" else "on"))
            if target is not None:
                verdicts.append(f"desktop < {target:g} ms: {'met' if row['desktop']['p95_ms'] < target else 'MISSED'}")
            if "phone" in row:
                met = row["phone"]["p95_ms"] < PHONE_TARGET_MS
                verdicts.append(f"phone < {PHONE_TARGET_MS:g} ms: {'met' if met else 'MISSED'}")
            tol_text = "off" if tol == "off" else f"on {tol}"
            cells = "".join(f" {r['p50_ms']:>12.1f} {r['p95_ms']:>12.1f} {r['max_ms']:>12.1f} {r['core_p50_ms']:>12.1f}"
                            f" {r['ratio_to_core']:>6.1f}" for r in row.values())
            print(f"{label:<8} {tol_text:<11}{cells}  {'; '.join(verdicts)}", flush=True)
            for name, r in row.items():  # where the time goes (medians, ms), and what follows the frame
                if name == "phone" or args.parts:
                    print(f"         {name} parts: " + ", ".join(f"{k} {v:.1f}" for k, v in r["parts_p50_ms"].items())
                          + f"; after the frame (checklist, steps, hints): p50 {r['after_p50_ms']:.1f},"
                            f" p95 {r['after_p95_ms']:.1f}")
            results.extend({"device": name, **r} for name, r in row.items())
        statuses = [page.locator("#status").inner_text() for page in pages.values()]
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"load average at the end: {load}")
        browser.close()
    server.shutdown()
    if errors:
        print("bench-lab: page errors: " + "; ".join(errors), file=sys.stderr)
        return 1
    bad = [s for s in statuses if not s.startswith("Ready")]
    if bad:
        print(f"bench-lab: the status line reads {bad[0]!r}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
