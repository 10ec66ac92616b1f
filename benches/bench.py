"""`make bench`: the core against what a user would otherwise write, measured side by side.

Run by scripts/bench.sh in .venv-bench (the only environment with JAX), after it has built
the C loop (gcc -O2), the native bench (crates/ferromotion-core/benches/core.rs), the
WebAssembly packages and the Python extension. Prints five tables (docs/model.md §10, issue 8):

1. the fixed route with its tangent at one k, ns per step, as a ratio to a plain C loop:
   the native core, the core in WebAssembly under Node and in headless Chromium, JAX
   jit(jacfwd), NumPy vectorised over k, plain Python; targets native <= 1.3x C, wasm <= 3x C;
2. a 61-k sweep at dt = 1e-4 s: the core on 1 thread and on all, against JAX
   jit(vmap(jacfwd)); target at least 2x faster than JAX (5x the stretch);
3. every route's cost at k = 1e4, 1e6, 1e8 (fixed, corrected, tolerance by Richardson and by
   forward sensitivities, with and without events, RK4 uniform, flow): force evaluations and
   wall time per Jacobian, each with its ratio to the fixed route's, and the gradient error;
   targets corrected <= 1.5x fixed and forward (events, rtol 1e-6) <= 1.0x fixed (0.3x stretch)
   with error vs flow <= 1e-6, both at k = 1e6;
4. a sweep's wall time against its size and the number of threads;
5. a Python route call against the core's own time, per route (benches/call_overhead.py): the
   overhead per call and a 2-step fm.fixed against an 8,000-step one; targets overhead <= 1 us,
   ratio <= 0.25x.

Each time is the best of several samples (the median beside it): on a busy machine the best
is the steadier number. The machine's load average is printed; numbers to quote come from a
quiet machine. Everything measured is also written to target/bench/results.json. A benchmark,
not a test: it asserts nothing (it does say whether each implementation returned the core's
bits, since a fast wrong loop would prove nothing).

    .venv-bench/bin/python benches/bench.py --c-loop target/bench/fixed_loop
    .venv/bin/python benches/bench.py --section costs      # one table (no C loop, no JAX needed)

Tables 1 and 2 run together (the sweep table reuses table 1's NumPy timing).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from alternatives import DropParams, jax_fixed, jax_module, jax_sweep, numpy_sweep, python_fixed  # noqa: E402
import call_overhead  # noqa: E402

import ferromotion as fm  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
K, DT = 1e6, 1e-6  # the per-step table: 8e5 steps per rollout, so per-call overheads vanish
PY_DT = 1e-5  # plain Python: 8e4 steps (its cost per step does not depend on N)
SWEEP_DT = 1e-4
SWEEP_KS = np.logspace(2, 8, 61)
ROUNDS = 3  # rounds of the compiled implementations, interleaved so they share the noise
TARGET_NATIVE, TARGET_WASM = 1.3, 3.0
TARGET_SWEEP, STRETCH_SWEEP = 2.0, 5.0
TARGET_CORRECTED = 1.5  # issue 13: corrected at most 1.5x the fixed route's wall time
# issue 13: one-rollout forward sensitivities at most 1.0x the fixed route's wall time (stretch
# 0.3x) with error vs flow at most 1e-6, at k = 1e6
TARGET_FORWARD, STRETCH_FORWARD, FORWARD_ERROR = 1.0, 0.3, 1e-6
FORWARD_ROW = "tolerance forward events 1e-6"
SECTIONS = ("fixed", "sweep", "costs", "scaling", "calls")


def measure(fn: Callable[[], Any], samples: int = 7, sample_s: float = 0.1) -> Tuple[float, float]:
    """Seconds per call of fn: (best, median) over samples of about sample_s each."""
    fn()
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-9)
    reps = max(1, int(np.ceil(sample_s / once)))
    per_call = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        per_call.append((time.perf_counter() - t0) / reps)
    return min(per_call), statistics.median(per_call)


def run_json(cmd: List[str], **kw: Any) -> Dict[str, Any]:
    """Run a command that prints one JSON document on its last stdout line."""
    out = subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True, **kw).stdout
    return json.loads(out.strip().splitlines()[-1])


def native(*sections: str) -> Dict[str, Any]:
    return run_json(["cargo", "bench", "--quiet", "-p", "ferromotion-core", "--features", "parallel",
                     "--bench", "core", "--", *sections], stderr=subprocess.DEVNULL)


def best_of(runs: List[Dict[str, Any]], key: str = "ns_per_step") -> Dict[str, Any]:
    """The run with the smallest `key`, its median replaced by the median of the runs' medians."""
    best = dict(min(runs, key=lambda r: r[key]))
    best[key + "_median"] = statistics.median(r[key + "_median"] for r in runs)
    return best


def rel(a: Any, b: Any) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.abs(a - b).max() / np.abs(b).max())


def bits_note(r: Dict[str, Any], core: fm.Route) -> str:
    j, x = np.asarray(r["jacobian"], dtype=float).ravel(), np.asarray(r["state"], dtype=float)
    if np.array_equal(j, core.jacobian.ravel()) and np.array_equal(x, core.state):
        return "same bits"
    return f"differs {max(rel(j, core.jacobian.ravel()), rel(x, core.state)):.1e} rel"


def verdict(ratio: float, target: float) -> str:
    return f"<= {target:g}x: {'met' if ratio <= target else 'MISSED'}"


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--c-loop", help="the C loop built from benches/c/fixed_loop.c (tables 1 and 2)")
    ap.add_argument("--no-chromium", action="store_true", help="skip headless Chromium")
    ap.add_argument("--section", action="append", choices=SECTIONS,
                    help="run only this table (repeatable; default: all five)")
    args = ap.parse_args()
    sections = set(args.section or SECTIONS)
    first_two = bool(sections & {"fixed", "sweep"})
    if first_two and not args.c_loop:
        ap.error("tables 1 and 2 need --c-loop")
    results: Dict[str, Any] = {}
    ncpu = os.cpu_count() or 1
    load_start = os.getloadavg()
    jax = jax_module() if first_two else None
    print(f"make bench: ferromotion {fm.__version__}, {ncpu} CPUs ({cpu_name()}), Python "
          f"{platform.python_version()}, numpy {np.__version__}"
          + (f", JAX {jax.__version__}" if jax else ""))
    print(f"load average at start: {load()}"
          + ("  -- a busy machine: quote numbers from a quiet one" if load_start[0] > 0.5 * ncpu else ""))
    if first_two:
        fixed_and_sweep(args, results, ncpu)
    if "costs" in sections:
        results["costs"] = costs_table()
    if "scaling" in sections:
        results["scaling"] = scaling_table()
    if "calls" in sections:
        results["calls"] = call_overhead.table()

    print()
    print(f"load average at end: {load()}")
    results["load_average"] = {"start": list(load_start), "end": list(os.getloadavg())}
    out = ROOT / "target/bench/results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print(f"(all numbers: {out.relative_to(ROOT)})")
    return 0


def fixed_and_sweep(args: argparse.Namespace, results: Dict[str, Any], ncpu: int) -> None:
    """Tables 1 and 2."""

    # ---------------------------------------------------------------- 1. ns per step
    drop, params = fm.Drop(), DropParams()
    core = fm.fixed(drop, k=K, dt=DT)
    steps = core.steps
    c_runs, c_literal, nat_runs, node_runs = [], None, [], []
    for i in range(ROUNDS):
        c_runs.append(run_json([args.c_loop, repr(K), repr(DT), "tight"]))
        nat_runs.append(native("fixed")["fixed"])
        node_runs.append(run_json(["node", "benches/wasm_bench.mjs", repr(K), repr(DT)]))
        if i == 0:
            c_literal = run_json([args.c_loop, repr(K), repr(DT), "literal"])
    c, nat, node = best_of(c_runs), best_of(nat_runs), best_of(node_runs)
    nat_loop = best_of(nat_runs, "loop_ns_per_step")
    chromium: Optional[Dict[str, Any]] = None
    if not args.no_chromium:
        try:
            chromium = run_json([str(ROOT / ".venv/bin/python"), "benches/chromium_bench.py", repr(K), repr(DT)])
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            print(f"(headless Chromium skipped: {e})")
    jf = jax_fixed(params, DT)
    jax_j, jax_x = (np.asarray(a) for a in jf(K))
    jbest, jmed = measure(lambda: jf(K)[0].block_until_ready(), samples=5)
    np_j, np_x = numpy_sweep(params, SWEEP_DT, SWEEP_KS)
    npbest, npmed = measure(lambda: numpy_sweep(params, SWEEP_DT, SWEEP_KS), samples=3, sample_s=0)
    np_steps = params.steps(SWEEP_DT) * len(SWEEP_KS)
    py_core = fm.fixed(drop, k=K, dt=PY_DT)
    py_j, py_x = python_fixed(params, PY_DT, K)
    pybest, pymed = measure(lambda: python_fixed(params, PY_DT, K), samples=3, sample_s=0)
    py_steps = params.steps(PY_DT)
    sweep_core = fm.sweep(drop, k=SWEEP_KS, dt=SWEEP_DT, quiet=True)

    base = c["ns_per_step"]
    rows: List[Tuple[str, float, float, str, str]] = [
        ("C loop, gcc -O2 (the yardstick)", c["ns_per_step"], c["ns_per_step_median"], "", bits_note(c, core)),
        ("C loop, general 2x2 update every step", c_literal["ns_per_step"], c_literal["ns_per_step_median"], "",
         bits_note(c_literal, core)),
        ("core native, fm fixed()", nat["ns_per_step"], nat["ns_per_step_median"],
         verdict(nat["ns_per_step"] / base, TARGET_NATIVE), bits_note(nat, core)),
        ("core native, bare loop", nat_loop["loop_ns_per_step"], nat_loop["loop_ns_per_step_median"], "", ""),
        (f"core wasm, Node {node['node']}", node["ns_per_step"], node["ns_per_step_median"],
         verdict(node["ns_per_step"] / base, TARGET_WASM), bits_note(node, core)),
    ]
    if chromium:
        rows.append((f"core wasm, Chromium {chromium['chromium'].split('.')[0]} headless", chromium["ns_per_step"],
                     chromium["ns_per_step_median"], verdict(chromium["ns_per_step"] / base, TARGET_WASM),
                     bits_note(chromium, core)))
    rows += [
        ("JAX jit(jacfwd), lax.fori_loop", jbest * 1e9 / steps, jmed * 1e9 / steps, "",
         f"differs {max(rel(jax_j, core.jacobian), rel(jax_x, core.state)):.1e} rel"),
        (f"NumPy over {len(SWEEP_KS)} k (dt 1e-4), per k-step", npbest * 1e9 / np_steps, npmed * 1e9 / np_steps, "",
         "same bits" if np.array_equal(np_j, sweep_core.jacobian) and np.array_equal(np_x, sweep_core.state)
         else f"differs {rel(np_j, sweep_core.jacobian):.1e} rel"),
        (f"plain Python (dt {PY_DT:g})", pybest * 1e9 / py_steps, pymed * 1e9 / py_steps, "",
         bits_note({"jacobian": py_j, "state": py_x}, py_core)),
    ]
    print()
    print(f"1. Fixed route with its tangent, one k: k = {K:g} N/m, dt = {DT:g} s ({steps:,} steps per rollout),"
          f" best of {ROUNDS} rounds x 9 samples")
    print(f"   {'implementation':<44} {'ns/step':>8} {'median':>8} {'x C':>7}  {'target (docs/model.md §10)':<18} result")
    for name, best, med, target, bits in rows:
        print(f"   {name:<44} {best:>8.2f} {med:>8.2f} {best / base:>7.2f}  {target:<18} {bits}")
    results["fixed"] = {"k": K, "dt": DT, "steps": steps,
                        "rows": [{"impl": r[0], "ns_per_step": r[1], "ns_per_step_median": r[2],
                                  "ratio_to_c": r[1] / base, "target": r[3], "result": r[4]} for r in rows]}

    # ---------------------------------------------------------------- 2. the 61-k sweep
    nat_sweep = native("sweep")["sweep"]
    js = jax_sweep(params, SWEEP_DT)
    js_j, _ = (np.asarray(a) for a in js(SWEEP_KS))
    jsbest, jsmed = measure(lambda: js(SWEEP_KS)[0].block_until_ready(), samples=9)
    fmbest, fmmed = measure(lambda: fm.sweep(drop, k=SWEEP_KS, dt=SWEEP_DT, quiet=True), samples=9)
    sweep_rows = [(f"core sweep(), {r['threads']} thread{'s' if r['threads'] > 1 else ''} (native)",
                   r["seconds"], r["seconds_median"]) for r in nat_sweep["runs"]]
    sweep_rows.append((f"core from Python, fm.sweep(), {ncpu} threads", fmbest, fmmed))
    sweep_rows.append(("JAX jit(vmap(jacfwd))", jsbest, jsmed))
    sweep_rows.append(("NumPy vectorised over k", npbest, npmed))
    print()
    print(f"2. Sweep of {len(SWEEP_KS)} k = np.logspace(2, 8, 61) at dt = {SWEEP_DT:g} s "
          f"({params.steps(SWEEP_DT):,} steps each); JAX's Jacobians differ from the core's by at most "
          f"{max(rel(a, b) for a, b in zip(js_j, sweep_core.jacobian)):.1e} relative")
    print(f"   {'implementation':<44} {'ms':>8} {'median':>8} {'JAX / it':>9}")
    for name, best, med in sweep_rows:
        print(f"   {name:<44} {best * 1e3:>8.3f} {med * 1e3:>8.3f} {jsbest / best:>9.2f}")
    fastest = min(r["seconds"] for r in nat_sweep["runs"])
    speedup = jsbest / fastest
    status = "met" if speedup >= TARGET_SWEEP else "MISSED"
    stretch = "met" if speedup >= STRETCH_SWEEP else "not met"
    print(f"   target: the core >= {TARGET_SWEEP:g}x faster than JAX: {speedup:.2f}x, {status} "
          f"(stretch {STRETCH_SWEEP:g}x: {stretch})")
    results["sweep"] = {"ks": len(SWEEP_KS), "dt": SWEEP_DT,
                        "rows": [{"impl": n, "seconds": b, "seconds_median": m} for n, b, m in sweep_rows],
                        "speedup_over_jax": speedup}


def costs_table() -> Dict[str, Any]:
    """Table 3: every route's cost per Jacobian at k = 1e4, 1e6, 1e8."""
    costs = native("costs")["costs"]
    print()
    print(f"3. Cost of every route (fixed, corrected, rk4 at dt = {costs['dt']:g} s; gradient error against exact,"
          " and against flow, the reference every converging route tends to)")
    print("   (wall time per Jacobian, best of 5 samples; 'x fixed' divides by the fixed route's at the same k;"
          " force evals of the whole call: the Jacobian's plus a separate nominal rollout's)")
    print(f"   {'k N/m':>6}  {'route':<34} {'force evals':>12} {'x fixed':>8} {'wall us':>9} {'x fixed':>8}"
          f" {'grad err':>9} {'sign':>5} {'vs flow':>9}")
    fixed_row = {r["k"]: r for r in costs["rows"] if r["route"] == "fixed"}
    for r in costs["rows"]:
        if "refused" in r:
            # The core's whole refusal, wrapped under the row (it says why, not only that).
            print(f"   {r['k']:>6.0e}  {r['route']:<34} {'n/a':>12} {'':>8} {'n/a':>9}   refused:")
            for line in textwrap.wrap(r["refused"], 90):
                print(f"{'':>17}{line}")
            continue
        f = fixed_row[r["k"]]
        r["wall_ratio_to_fixed"] = r["seconds"] / f["seconds"]
        evals = None if r["force_evals"] is None else r["force_evals"] + r["state_force_evals"]
        r["evals_ratio_to_fixed"] = None if evals is None else evals / f["force_evals"]
        ev = "-" if evals is None else f"{evals:,}"
        eratio = "-" if r["evals_ratio_to_fixed"] is None else f"{r['evals_ratio_to_fixed']:.2f}"
        flag = "  PROBE-DEPENDENT" if r["probe_dependent"] else ""
        sign = "right" if r["right_sign"] else "WRONG"
        print(f"   {r['k']:>6.0e}  {r['route']:<34} {ev:>12} {eratio:>8} {r['seconds'] * 1e6:>9.1f} "
              f"{r['wall_ratio_to_fixed']:>8.2f} {r['gradient_error']:>9.2e} {sign:>5} "
              f"{r['gradient_error_vs_flow']:>9.2e}{flag}")
    at_1e6 = {r["route"]: r for r in costs["rows"] if r["k"] == 1e6 and "refused" not in r}
    cor = at_1e6.get("corrected")
    if cor:
        status = "met" if cor["wall_ratio_to_fixed"] <= TARGET_CORRECTED else "MISSED"
        print(f"   target: corrected <= {TARGET_CORRECTED:g}x the fixed route's wall time at k = 1e6: "
              f"{cor['wall_ratio_to_fixed']:.2f}x, {status}")
    fw = at_1e6.get(FORWARD_ROW)
    if fw:
        ratio, err = fw["wall_ratio_to_fixed"], fw["gradient_error_vs_flow"]
        status = "met" if ratio <= TARGET_FORWARD and err <= FORWARD_ERROR else "MISSED"
        stretch = "met" if ratio <= STRETCH_FORWARD and err <= FORWARD_ERROR else "not met"
        print(f"   target: {FORWARD_ROW} <= {TARGET_FORWARD:g}x the fixed route's wall time with error vs flow"
              f" <= {FORWARD_ERROR:g} at k = 1e6: {ratio:.2f}x, {err:.1e}, {status} "
              f"(stretch {STRETCH_FORWARD:g}x: {stretch})")
    return costs


def scaling_table() -> Dict[str, Any]:
    """Table 4: sweep wall time against its size and the number of threads."""
    scaling = native("scaling")["scaling"]
    print()
    print(f"4. Sweep wall time against size and threads (native sweep(), dt = {scaling['dt']:g} s)")
    print(f"   {'k values':>8} {'1 thread ms':>12} {'2 threads ms':>13} {'speed-up':>9} {'us per k (1 thr)':>17}")
    by = {(r["ks"], r["threads"]): r["seconds"] for r in scaling["runs"]}
    for n in sorted({r["ks"] for r in scaling["runs"]}):
        one, two = by[(n, 1)], by[(n, 2)]
        print(f"   {n:>8} {one * 1e3:>12.3f} {two * 1e3:>13.3f} {one / two:>9.2f} {one * 1e6 / n:>17.2f}")
    return scaling


if __name__ == "__main__":
    sys.exit(main())
