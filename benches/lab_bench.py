"""`make bench-lab`: how long the lab takes from a slider move to every readout and plot updated.

Serves web/ on 127.0.0.1, drives Debian's Chromium (headless, through Playwright) and moves
the stiffness slider with the keyboard, one step of 0.1 in log10 k at a time, sweeping
k = 1e4 .. 1e8 N/m and back. The page itself records each update's time, from the input
event's timestamp to the moment every readout and plot marker on screen, the phone strip and the
controls are written, the key step's "change" work (grading the committed value) done and
the page's style and layout recomputed (``window.ferromotionLab.timings`` with
``forceLayout`` set, see web/js/ui.js); this script only collects them. The readout cards and
plots off screen, the learner's checklist, guided steps and hints are painted right after the
move's frame: that part is printed on its own line ("after the frame"), never hidden.

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

With ``--phone`` the phone is also traced: ``--trace-moves`` more moves per setting (default
40) run under the DevTools protocol's Tracing domain (a CDP session on the page), and the
renderer main thread's self time per move is split into script, gc (V8 and Blink garbage
collection), style (recalculation), layout, paint (pre-paint and paint), compositing
(layerize, commit) and what is left, "unaccounted" (the rest of its tasks); "busy" is the
tasks' total and "frame" the time from the key event to the end of the first frame committed
after it. Tracing slows the page a little, so these moves are not the timed ones.

``--baseline DIR`` times a second copy of the lab (another checkout's web/, with a built
pkg/) beside this one, setting by setting in the same run, its columns marked "before": on a
shared machine, a change is judged by that side-by-side run, never across runs. Every page
(desktop, phone, and their "before" copies) takes its turn, ten moves at a time, so a load
that comes and goes falls on all of them alike.

The phone's prediction is committed by taps, as its learner would: a mouse click leaves a
mouse pointer on the page, and Chromium then hit-tests what lies under it (hover) after every
layout, a cost no phone pays. The trace prints what its "unaccounted" part is made of: the
event names with the largest self time per move (``ThreadControllerImpl::RunTask`` is a
task's own time outside every traced event). ``--settings`` picks some of the six settings.

A benchmark, not a test: it asserts nothing. Never run `playwright install`; this uses
/usr/bin/chromium.

    .venv/bin/python benches/lab_bench.py [--moves N] [--warmup N] [--phone] [--trace-moves N]
        [--baseline OTHER/web] [--settings dt/off,dt/100/on] [--json]
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


WAIT_FOR_UPDATE = """(n) => new Promise((done) => {
  const look = () => (window.ferromotionLab.updates > n ? done() : setTimeout(look, 20));
  look();
})"""


def open_setting(page, base: str, dt: str, tol: str) -> None:
    """Open the lab at one setting, commit a prediction, wait for the background curves, focus the slider."""
    page.goto(f"{base}?k=1e4&dt={dt}&tol={tol}&ev=0&cor=0")
    page.wait_for_function("window.ferromotionLab && window.ferromotionLab.ready")
    page.evaluate("window.ferromotionLab.forceLayout = true")
    if page.locator("#predict-form").is_visible():
        # A phone is tapped, as its learner would: a mouse click would leave a mouse pointer on
        # the page, and Chromium then re-tests what lies under it (hover) after every layout.
        touch = page.evaluate("navigator.maxTouchPoints > 0")
        for target in ("#predict-form input[value=flat]", "#predict-commit"):
            page.locator(target).tap() if touch else page.locator(target).click()
    # Let the background worker finish the curves so it does not share the CPU.
    page.wait_for_function("document.body.dataset.background === 'idle'", timeout=600_000)
    page.locator("#stiffness").focus()


def move(page, record: bool) -> tuple | None:
    """One keyboard step of the slider (back and forth over 1e4 .. 1e8), waited for until its
    progress is painted after the frame; with `record`, the page's own numbers for it."""
    value = float(page.locator("#stiffness").input_value())
    direction = page.evaluate("window.__benchDirection || 'ArrowRight'")
    if value >= 8.0 - 1e-9:
        direction = "ArrowLeft"
    elif value <= 4.0 + 1e-9:
        direction = "ArrowRight"
    n = page.evaluate(f"(window.__benchDirection = '{direction}', window.ferromotionLab.updates)")
    page.keyboard.press(direction)
    # `updates` counts a move once its progress is painted after the frame too. Checked every
    # 20 ms by one timer in the page: a tighter poll (Playwright's polling=1) runs a task per
    # millisecond on the page's main thread, which then competes with the move it waits for.
    page.evaluate(WAIT_FOR_UPDATE, n)
    if not record:
        return None
    return page.evaluate(
        "[window.ferromotionLab.timings.at(-1), window.ferromotionLab.core.at(-1), "
        "(window.ferromotionLab.after || [0]).at(-1), window.ferromotionLab.parts.at(-1)]")


#: Moves each page makes before the next page takes its turn (see measure()).
CHUNK = 10


def measure(targets: dict, label: str, dt: str, tol: str, moves: int, warmup: int = 10) -> dict:
    """p50/p95/max of slider move -> every readout and plot, at one setting (keyboard steps), for
    every page in ``targets`` (name -> (page, base URL)); the first `warmup` moves are left out.
    The pages take turns, CHUNK moves each, so that a load that comes and goes on a shared
    machine falls on all of them alike (a side-by-side run compares like with like)."""
    for page, base in targets.values():
        open_setting(page, base, dt, tol)
        for _ in range(warmup):
            move(page, False)
    got: dict[str, list] = {name: [] for name in targets}
    done = 0
    while done < moves:
        turn = min(CHUNK, moves - done)
        for name, (page, _) in targets.items():
            got[name].extend(move(page, True) for _ in range(turn))
        done += turn
    return {name: summary(rows, label, dt, tol, warmup) for name, rows in got.items()}


def summary(rows: list, label: str, dt: str, tol: str, warmup: int) -> dict:
    """One page's numbers at one setting, from its moves' (time, core, after, parts)."""
    timings = [r[0] for r in rows]
    core = [r[1] for r in rows]
    after = [r[2] for r in rows]
    parts = [r[3] for r in rows]
    names = list(dict.fromkeys(name for p in parts for name in p))
    core_p50 = statistics.median(core)
    return {"step": label, "dt": float(dt), "tolerance": tol, "moves": len(timings), "warmup": warmup,
            "p50_ms": statistics.median(timings), "p95_ms": percentile(timings, 95), "max_ms": max(timings),
            "core_p50_ms": core_p50, "ratio_to_core": statistics.median(timings) / core_p50,
            "after_p50_ms": statistics.median(after), "after_p95_ms": percentile(after, 95),
            "parts_p50_ms": {name: statistics.median(p.get(name, 0.0) for p in parts) for name in names}}


# ---- where a move's time goes, from a Chromium trace ----------------------------------------

#: Trace categories: the DevTools performance panel's own (script, style, layout, paint,
#: compositing, GC events) and the top-level task events (busy time).
TRACE_CATEGORIES = ["toplevel", "devtools.timeline", "disabled-by-default-devtools.timeline", "v8", "blink.user_timing"]
#: Trace event names -> the part of a move they are charged to (self time: a layout forced
#: inside a script is layout, a GC inside it is GC). Other events' self time, and the top-level
#: tasks' own, stay "unaccounted".
TRACE_PARTS = {
    "script": ("FunctionCall", "EventDispatch", "TimerFire", "FireAnimationFrame", "EvaluateScript", "RunMicrotasks",
               "v8.callFunction", "v8.compile", "v8.compileModule", "V8.Execute", "v8.run", "v8.evaluateModule",
               "FireIdleCallback", "v8.parseOnBackground", "V8.CompileCode", "V8.OptimizeCode"),
    "gc": ("MinorGC", "MajorGC", "BlinkGC.AtomicPhase", "CppGC.AtomicMark", "V8.GC_SCAVENGER", "V8.GCScavenger",
           "V8.GCFinalizeMC", "V8.GCIncrementalMarking", "V8.GCCompactor", "MinorMS", "ThreadState::performIdleLazySweep"),
    "style": ("UpdateLayoutTree", "RecalculateStyles", "ScheduleStyleRecalculation", "ParseAuthorStyleSheet"),
    "layout": ("Layout", "UpdateLayout", "IntersectionObserverController::computeIntersections"),
    "paint": ("PrePaint", "Paint", "PaintImage", "Decode Image", "PaintSetup"),
    "compositing": ("Layerize", "UpdateLayer", "UpdateLayerTree", "CompositeLayers", "Commit", "UpdateLayers"),
}
PART_OF = {name: part for part, names in TRACE_PARTS.items() for name in names}
GC_PREFIXES = ("V8.GC", "BlinkGC.", "CppGC.")
#: How many event names the unaccounted part is printed by (the largest mean self time first).
UNACCOUNTED_NAMES = 5
#: The renderer main thread's top-level task events (their sum is the thread's busy time).
TOP_LEVEL = ("RunTask", "ThreadControllerImpl::RunTask", "ThreadPool_RunTask")


def read_trace(cdp, page) -> list[dict]:
    """Stop tracing on the CDP session and return the trace's events."""
    chunks: list = []
    done: dict = {}
    cdp.on("Tracing.dataCollected", lambda e: chunks.extend(e["value"]))
    cdp.on("Tracing.tracingComplete", lambda e: done.setdefault("ok", True))
    cdp.send("Tracing.end")
    while "ok" not in done:
        page.wait_for_timeout(50)  # lets Playwright deliver the session's events
    return chunks


def main_thread(events: list[dict]) -> tuple[int, int] | None:
    """The renderer main thread (pid, tid) that dispatched the moves' key events."""
    mains = {(e["pid"], e["tid"]) for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    keys = {}
    for e in events:
        if e.get("name") == "EventDispatch" and (e.get("args", {}).get("data", {}).get("type") == "keydown"):
            keys[(e["pid"], e["tid"])] = keys.get((e["pid"], e["tid"]), 0) + 1
    found = [t for t in sorted(keys, key=keys.get, reverse=True) if t in mains]
    return found[0] if found else None


def trace_parts(events: list[dict]) -> list[dict]:
    """Per move on the renderer main thread, over its frame (from its key event to the end of
    the first frame committed after it): ms of self time charged to script, gc, style, layout,
    paint, compositing and "unaccounted" (the rest of the thread's tasks), "busy" (the tasks'
    total) and "frame" (the frame's length; frame - busy is the thread waiting)."""
    thread = main_thread(events)
    if thread is None:
        return []
    spans = []  # (start, end, name) in µs, complete events only (Chromium writes these as "X")
    for e in events:
        if (e.get("pid"), e.get("tid")) == thread and e.get("ph") == "X" and "dur" in e:
            spans.append((e["ts"], e["ts"] + e["dur"], e["name"]))
    spans.sort(key=lambda x: (x[0], -x[1]))
    self_time = [s[1] - s[0] for s in spans]
    stack: list[int] = []
    for i, (a, b, _) in enumerate(spans):
        while stack and spans[stack[-1]][1] <= a:
            stack.pop()
        if stack:
            self_time[stack[-1]] -= min(b, spans[stack[-1]][1]) - a
        stack.append(i)
    keys = sorted(e["ts"] for e in events if (e.get("pid"), e.get("tid")) == thread
                  and e.get("name") == "EventDispatch" and e.get("args", {}).get("data", {}).get("type") == "keydown")
    commits = sorted(b for a, b, n in spans if n == "Commit")
    moves = []
    for j, start in enumerate(keys):
        # The move's frame: from its key event to the end of the first frame committed after it.
        nxt = keys[j + 1] if j + 1 < len(keys) else float("inf")
        after = [c for c in commits if start < c < nxt]
        if not after:
            continue
        end = after[0]
        out = dict.fromkeys([*TRACE_PARTS, "unaccounted", "busy"], 0.0)
        loose: dict[str, float] = {}  # the unaccounted part, by event name
        for (a, b, name), own in zip(spans, self_time):
            if not start <= a < end:
                continue
            part = PART_OF.get(name) or ("gc" if name.startswith(GC_PREFIXES) else None)
            out[part or "unaccounted"] += max(own, 0) / 1e3
            if part is None:
                loose[name] = loose.get(name, 0.0) + max(own, 0) / 1e3
            if name in TOP_LEVEL:
                out["busy"] += (min(b, end) - a) / 1e3
        out["frame"] = (end - start) / 1e3
        out["loose"] = loose
        moves.append(out)
    return moves


def trace(page, base: str, dt: str, tol: str, moves: int, warmup: int) -> dict:
    """The same slider moves as measure(), traced through the DevTools protocol (Tracing domain
    on the page's CDP session): per part, p50 and p95 ms per move."""
    open_setting(page, base, dt, tol)
    for _ in range(warmup):
        move(page, False)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Tracing.start", {"traceConfig": {"includedCategories": TRACE_CATEGORIES,
                                               "excludedCategories": ["*"]}, "transferMode": "ReportEvents"})
    for _ in range(moves):
        move(page, False)
    per_move = trace_parts(read_trace(cdp, page))
    cdp.detach()
    names = [*TRACE_PARTS, "unaccounted", "busy", "frame"]
    ok = lambda name: [m[name] for m in per_move if m[name] == m[name]]  # noqa: E731  (drops NaN)
    # What the unaccounted part is made of: the event names with the largest mean self time per move.
    loose: dict[str, float] = {}
    for m in per_move:
        for name, ms in m["loose"].items():
            loose[name] = loose.get(name, 0.0) + ms / max(len(per_move), 1)
    top = dict(sorted(loose.items(), key=lambda kv: -kv[1])[:UNACCOUNTED_NAMES])
    return {"moves": len(per_move),
            "p50_ms": {n: statistics.median(ok(n)) if ok(n) else float("nan") for n in names},
            "p95_ms": {n: percentile(ok(n), 95) if ok(n) else float("nan") for n in names},
            "unaccounted_mean_ms": top}


def serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/index.html"


def load_text() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def print_row(label: str, tol: str, row: dict, args) -> None:
    verdicts = []
    target = TARGETS.get((label, "off" if tol == "off" else "on"))
    for name, r in row.items():
        if name.startswith("desktop") and target is not None:
            verdicts.append(f"{name} < {target:g} ms: {'met' if r['p95_ms'] < target else 'MISSED'}")
        if name.startswith("phone"):
            verdicts.append(f"{name} < {PHONE_TARGET_MS:g} ms: {'met' if r['p95_ms'] < PHONE_TARGET_MS else 'MISSED'}")
    tol_text = "off" if tol == "off" else f"on {tol}"
    cells = "".join(f" {r['p50_ms']:>12.1f} {r['p95_ms']:>12.1f} {r['max_ms']:>12.1f} {r['core_p50_ms']:>12.1f}"
                    f" {r['ratio_to_core']:>6.1f}" for r in row.values())
    print(f"{label:<8} {tol_text:<11}{cells}  {'; '.join(verdicts)}  [load {load_text()}]", flush=True)
    for name, r in row.items():  # where the time goes (medians, ms), and what follows the frame
        if name.startswith("phone") or args.parts:
            print(f"         {name} parts: " + ", ".join(f"{k} {v:.1f}" for k, v in r["parts_p50_ms"].items())
                  + f"; after the frame (off-screen cards and plots, checklist, steps, hints): p50 {r['after_p50_ms']:.1f},"
                    f" p95 {r['after_p95_ms']:.1f}")
        if "trace" in r:
            t = r["trace"]
            fmt = lambda d: ", ".join(f"{k} {v:.1f}" for k, v in d.items())  # noqa: E731
            print(f"         {name} trace ({t['moves']} moves, main thread, ms per move): p50 {fmt(t['p50_ms'])}")
            print(f"         {' ' * len(name)}                                       p95 {fmt(t['p95_ms'])}")
            print(f"         {' ' * len(name)}       unaccounted, by event (mean ms per move): "
                  f"{fmt(t['unaccounted_mean_ms']) or 'none'}")


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
    ap.add_argument("--baseline", type=Path, default=None,
                    help="a second lab folder (another checkout's web/, with its pkg/) timed side by side, as \"before\"")
    ap.add_argument("--trace-moves", type=int, default=40,
                    help="with --phone: moves per setting traced for the phone's parts (default 40; 0: none)")
    ap.add_argument("--settings", default=None,
                    help="only these settings, comma-separated as printed (e.g. dt/off,dt/100/on); default all six")
    ap.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = ap.parse_args()
    if not (args.web / "pkg" / "ferromotion_wasm_bg.wasm").is_file():
        print("bench-lab: web/pkg/ is missing; run `make wasm` first", file=sys.stderr)
        return 2

    servers, bases = [], {}
    for tag, folder in [("", args.web)] + ([(" before", args.baseline)] if args.baseline else []):
        server, base = serve(folder)
        servers.append(server)
        bases[tag] = base
    results = []
    errors: list[str] = []
    statuses: list[str] = []
    with sync_playwright() as p:
        browser = launch_chromium(p)
        targets = {}  # name -> (page, base URL)
        for tag, base in bases.items():
            targets[f"desktop{tag}"] = (browser.new_context(viewport={"width": 1280, "height": 900}).new_page(), base)
            if args.phone:
                phone = browser.new_context(**PHONE).new_page()
                # CPU throttling is per page, through the DevTools protocol.
                phone.context.new_cdp_session(phone).send("Emulation.setCPUThrottlingRate", {"rate": PHONE_THROTTLE})
                targets[f"phone{tag}"] = (phone, base)
        for page, _ in targets.values():
            page.set_default_timeout(600_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
        print(f"bench-lab: {args.moves} slider moves per setting after {args.warmup} left out (warm-up), "
              f"Chromium {browser.version}, {os.cpu_count()} CPUs, load average {load_text()} "
              f"(other processes on this machine move these numbers)")
        if args.baseline:
            print(f"side by side: this web/ ({args.web}) and, as \"before\", {args.baseline}; each setting runs on "
                  "both, one after the other, in this one run")
        if args.phone:
            print(f"phone: 375 x 740, touch, CPU throttled {PHONE_THROTTLE}x (Emulation.setCPUThrottlingRate); "
                  f"target p95 < {PHONE_TARGET_MS:g} ms at every setting")
            if args.trace_moves:
                print(f"phone trace: {args.trace_moves} more moves per setting under the DevTools protocol's Tracing "
                      "domain, self time on the renderer main thread per move: script, gc (V8 and Blink garbage "
                      "collection), style (recalculation), layout, paint (pre-paint and paint), compositing "
                      "(layerize, commit), unaccounted (the rest of its tasks); busy is the tasks' total, frame "
                      "the time from the key event to the end of the first frame committed after it")
        cols = "".join(f" {name + ' p50':>12} {name + ' p95':>12} {name + ' max':>12} {name + ' core':>12} {'/core':>6}"
                       for name in targets)
        print(f"{'step':<8} {'tolerance':<11}{cols}  target")
        for label, dt, tol in SETTINGS:
            if args.settings and f"{label}/{'off' if tol == 'off' else 'on'}" not in args.settings.split(","):
                continue
            row = measure(targets, label, dt, tol, args.moves, args.warmup)
            for name, (page, base) in targets.items():
                if name.startswith("phone") and args.trace_moves:
                    row[name]["trace"] = trace(page, base, dt, tol, args.trace_moves, args.warmup)
            print_row(label, tol, row, args)
            results.extend({"device": name, **r} for name, r in row.items())
        pages = {name: page for name, (page, _) in targets.items()}
        statuses = [page.locator("#status").inner_text() for page in pages.values()]
        print(f"load average at the end: {load_text()}")
        browser.close()
    for server in servers:
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
