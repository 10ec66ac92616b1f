"""What a Python route call costs beyond the core's own time, for every route.

Each route is called in batches; every call's answer carries ``wall_s``, the core's own
measurement of that call (taken inside the core, around the route alone). Per batch:

    overhead per call = (batch wall time - sum of the calls' wall_s) / calls

so the Python side and the core are measured on the very same calls, side by side. The
overhead is everything a user pays on top of the physics: the Python function, argument
and option conversion, releasing and retaking the GIL, building the result object. The
median batch is reported (and the best). Then the ratio a user in an optimisation loop
feels: a 2-step ``fm.fixed`` (dt = T/2) against an 8,000-step one (dt = 1e-4 s), both per
call from Python.

A benchmark: it times, it asserts nothing. Targets (issue 26): overhead <= 1 us for every
route; the 2-step call <= 0.25x the 8,000-step one.

    .venv/bin/python benches/call_overhead.py
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any, Callable, Dict, List, Tuple

import ferromotion as fm

TARGET_OVERHEAD_US = 1.0
TARGET_RATIO = 0.25
DROP = fm.Drop()
K = 1e6
TWO_STEPS = DROP.t_final / 2  # dt giving a 2-step fixed rollout
DT = 1e-4  # 8,000 steps over T = 0.8 s

#: (row name, the call). Small problems, so the overhead is not lost in the core's time.
ROUTES: List[Tuple[str, Callable[[], Any]]] = [
    ("fm.exact", lambda: fm.exact(DROP)),
    ("fm.fixed (2 steps)", lambda: fm.fixed(DROP, K, TWO_STEPS)),
    ("fm.fixed (8,000 steps)", lambda: fm.fixed(DROP, K, DT)),
    ("fm.rk4 (2 steps)", lambda: fm.rk4(DROP, K, TWO_STEPS)),
    ("fm.corrected (2 steps)", lambda: fm.corrected(DROP, K, TWO_STEPS)),
    ("fm.flow", lambda: fm.flow(DROP, K)),
    ("fm.tolerance (rtol 1e-3)", lambda: fm.tolerance(DROP, K, rtol=1e-3)),
]


def batches(call: Callable[[], Any], seconds: float = 0.3, batch: int = 0) -> Dict[str, float]:
    """Per-call Python time, core time and their difference (s), median and best of batches."""
    call()
    if batch == 0:  # about 10 ms per batch
        t = time.perf_counter()
        call()
        batch = max(10, int(0.01 / max(time.perf_counter() - t, 1e-7)))
    python, core, over = [], [], []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(over) < 5:
        walls = 0.0
        t0 = time.perf_counter()
        for _ in range(batch):
            walls += call().wall_s
        total = time.perf_counter() - t0
        python.append(total / batch)
        core.append(walls / batch)
        over.append((total - walls) / batch)
    return {
        "python_s": statistics.median(python),
        "core_s": statistics.median(core),
        "overhead_s": statistics.median(over),
        "overhead_best_s": min(over),
        "batches": len(over),
        "calls_per_batch": batch,
    }


def table() -> Dict[str, Any]:
    """Prints the table; returns its numbers."""
    print()
    print("5. A Python route call against the core's own time (the same calls: each answer's wall_s is the"
          " core's measurement of itself)")
    print(f"   {'route':<26} {'python us':>10} {'core us':>9} {'overhead us':>12} {'(best)':>8}")
    rows = []
    for name, call in ROUTES:
        r = batches(call)
        rows.append({"route": name, **r})
        print(f"   {name:<26} {r['python_s'] * 1e6:>10.2f} {r['core_s'] * 1e6:>9.2f} "
              f"{r['overhead_s'] * 1e6:>12.2f} {r['overhead_best_s'] * 1e6:>8.2f}")
    worst = max(rows, key=lambda r: r["overhead_s"])
    status = "met" if worst["overhead_s"] * 1e6 <= TARGET_OVERHEAD_US else "MISSED"
    print(f"   target: overhead <= {TARGET_OVERHEAD_US:g} us for every route: worst {worst['route']} "
          f"{worst['overhead_s'] * 1e6:.2f} us, {status}")
    by = {r["route"]: r for r in rows}
    ratio = by["fm.fixed (2 steps)"]["python_s"] / by["fm.fixed (8,000 steps)"]["python_s"]
    core_ratio = by["fm.fixed (2 steps)"]["core_s"] / by["fm.fixed (8,000 steps)"]["core_s"]
    status = "met" if ratio <= TARGET_RATIO else "MISSED"
    print(f"   target: a 2-step fm.fixed <= {TARGET_RATIO:g}x an 8,000-step one from Python: {ratio:.2f}x, "
          f"{status} (in the core: {core_ratio:.3f}x)")
    return {"rows": rows, "fixed_2_over_8000": ratio, "fixed_2_over_8000_core": core_ratio}


if __name__ == "__main__":
    print(f"ferromotion {fm.__version__}, load average {os.getloadavg()[0]:.2f}")
    table()
