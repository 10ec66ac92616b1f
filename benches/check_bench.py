"""`make bench-check`: gradient checkers on benches/check_suite.py, side by side, in one run.

For each checker: false passes (a wrong gradient accepted), false alarms (a right one rejected),
refusals, and objective evaluations per verdict (median and largest). Each peer is used as its
documentation shows, with the acceptance rule printed beside it:

- ferromotion ``fm.check_gradient`` (defaults): accepts when the verdict is ``verified``,
  ``verified-within-noise`` or ``verified-absolute``; ``refused`` is counted apart;
- ``scipy.optimize.check_grad`` (forward differences, eps 1.49e-8): accepts when the returned
  norm is <= 1e-6 * max(1, |g|);
- ``jax.test_util.check_grads`` (order 1, forward mode, its default eps and tolerances, x64): the
  claimed gradient enters as the JVP of a ``jax.custom_jvp`` around f; accepts when it raises nothing;
- ``numdifftools.Gradient`` (Richardson extrapolation, ``full_output``): accepts when every
  component is within 1e-6 relative or 3 of its own error estimates;
- ``torch.autograd.gradcheck`` (float64, eps 1e-6, atol 1e-5, rtol 1e-3): the claimed gradient is
  the backward of a ``torch.autograd.Function`` around f; accepts when it returns True; also with
  ``fast_mode=True`` (one random direction pair).

Besides the suite, one table per family of benches/check_families.py (kinks exactly at x, a long
float32 rollout, 1e5 parameters) and the vector-output family (``fm.check_jacobian`` beside jax's
``check_grads`` in fwd and rev mode). A peer that needs about n evaluations per check (scipy,
numdifftools, torch's full gradcheck) is not run at n = 1e5: the table says so.

A peer that is not importable here is looked for in the checkout's other environments
(.venv-bench, .venv-engines) and run there in a subprocess; where none has it, the table says
"not installed". A benchmark: it asserts nothing (tests/test_check_suite.py pins our verdicts).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check_suite as cs  # noqa: E402
import check_families as cf  # noqa: E402

ROOT = HERE.parent
Outcome = Dict[str, Any]  # {"case", "accepted": bool | None (refused), "evaluations", "detail"}


def _ferromotion(case: cs.Case) -> Outcome:
    import ferromotion as fm

    f = cs.Counted(case.map.f)
    r = fm.check_gradient(f, case.grad, case.map.x)
    accepted = None if r.verdict == "refused" else r.agrees
    return {"accepted": accepted, "evaluations": f.calls, "detail": r.verdict}


def _scipy(case: cs.Case) -> Outcome:
    from scipy.optimize import check_grad

    f = cs.Counted(case.map.f)
    err = check_grad(f, lambda x: case.grad, case.map.x.copy())
    return {"accepted": bool(err <= 1e-6 * max(1.0, float(np.linalg.norm(case.grad)))), "evaluations": f.calls,
            "detail": f"{err:.2e}"}


def _jax(case: cs.Case) -> Outcome:
    import jax
    import jax.numpy as jnp
    from jax.test_util import check_grads

    jax.config.update("jax_enable_x64", True)
    f = cs.Counted(case.map.f)
    g = jnp.asarray(case.grad)

    @jax.custom_jvp
    def wrapped(x: Any) -> Any:
        return jax.pure_callback(lambda v: np.float64(f(np.asarray(v))), jax.ShapeDtypeStruct((), jnp.float64), x)

    @wrapped.defjvp
    def _jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return wrapped(x), jnp.dot(g, t)

    try:
        check_grads(wrapped, (jnp.asarray(case.map.x),), order=1, modes=("fwd",))
        accepted, detail = True, "passed"
    except AssertionError as e:
        accepted, detail = False, str(e).splitlines()[0][:60]
    return {"accepted": accepted, "evaluations": f.calls, "detail": detail}


def _numdifftools(case: cs.Case) -> Outcome:
    import numdifftools as nd

    f = cs.Counted(case.map.f)
    res = nd.Gradient(f, full_output=True)(case.map.x)
    est, err = np.ravel(res.estimate), np.ravel(res.error_estimate)
    ok = np.abs(case.grad - est) <= np.maximum(1e-6 * np.abs(est), 3.0 * err)
    return {"accepted": bool(ok.all()), "evaluations": f.calls, "detail": f"{np.max(np.abs(case.grad - est)):.2e}"}


def _torch(case: cs.Case, fast: bool = False) -> Outcome:
    import torch

    f = cs.Counted(case.map.f)
    g = torch.tensor(case.grad, dtype=torch.float64)

    class Claimed(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return torch.tensor(f(x.detach().numpy()), dtype=torch.float64)

        @staticmethod
        def backward(ctx: Any, out: Any) -> Any:
            return out * g

    x = torch.tensor(case.map.x, dtype=torch.float64, requires_grad=True)
    ok = torch.autograd.gradcheck(Claimed.apply, (x,), eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=False,
                                  fast_mode=fast)
    return {"accepted": bool(ok), "evaluations": f.calls, "detail": "passed" if ok else "failed"}


CHECKERS: Dict[str, Callable[[cs.Case], Outcome]] = {
    "ferromotion": _ferromotion,
    "scipy.check_grad": _scipy,
    "jax check_grads": _jax,
    "numdifftools": _numdifftools,
    "torch gradcheck": _torch,
    "torch gradcheck fast": lambda c: _torch(c, fast=True),
}
MODULES = {"ferromotion": "ferromotion", "scipy.check_grad": "scipy", "jax check_grads": "jax",
           "numdifftools": "numdifftools", "torch gradcheck": "torch", "torch gradcheck fast": "torch"}
#: Peers whose cost grows like n (one or two evaluations per coordinate): not run above this n.
PER_COORDINATE = {"scipy.check_grad", "numdifftools", "torch gradcheck"}
LARGE_N = 1000


def run_here(name: str, cases: List[cs.Case]) -> List[Outcome]:
    out = []
    for c in cases:
        if name in PER_COORDINATE and len(c.map.x) > LARGE_N:
            o: Outcome = {"accepted": None, "evaluations": 2 * len(c.map.x), "detail": "not run (n evaluations)",
                          "skipped": True}
        else:
            o = CHECKERS[name](c)
        o["case"] = c.name
        out.append(o)
    return out


def _importable(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def run(name: str, cases: List[cs.Case], family: str = "suite") -> Optional[List[Outcome]]:
    """Run a checker here if it imports, else in another environment of the checkout."""
    if _importable(MODULES[name]):
        return run_here(name, cases)
    for env in (".venv-bench", ".venv-engines", ".venv"):
        py = ROOT / env / "bin" / "python"
        if not py.exists() or Path(sys.executable).resolve() == py.resolve():
            continue
        has = subprocess.run([str(py), "-c", f"import {MODULES[name]}"], capture_output=True).returncode == 0
        if has:
            p = subprocess.run([str(py), __file__, "--peer", name, "--family", family], capture_output=True, text=True,
                               timeout=3600)
            if p.returncode == 0:
                return list(json.loads(p.stdout))
            print(f"{name}: failed in {env}: {p.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
    return None


def table(results: Dict[str, Optional[List[Outcome]]], cases: List[cs.Case]) -> str:
    right = {c.name: c.right for c in cases}
    f32 = {c.name: c.map.float32 for c in cases}
    n_right, n_wrong = sum(right.values()), sum(not r for r in right.values())
    maps = len({c.map.name for c in cases})
    lines = [f"{len(cases)} gradients: {n_right} right ({sum(1 for c in cases if c.right and c.map.float32)} float32), "
             f"{n_wrong} wrong, over {maps} maps", "",
             f"{'checker':<18} {'false passes':>13} {'false alarms':>13} {'refusals':>9} "
             f"{'evals/verdict':>14} {'max evals':>10}"]
    for name, res in results.items():
        if res is None:
            lines.append(f"{name:<18} {'not installed':>13}")
            continue
        if res and all(o.get("skipped") for o in res):
            lines.append(f"{name:<18} {'not run: about n evaluations per check at this n':>13}")
            continue
        fp = [o for o in res if not right[o["case"]] and o["accepted"]]
        fa = [o for o in res if right[o["case"]] and o["accepted"] is False]
        ref = [o for o in res if o["accepted"] is None]
        ev = [o["evaluations"] for o in res]
        lines.append(f"{name:<18} {len(fp):>6} of {n_wrong:<4} {len(fa):>6} of {n_right:<4} {len(ref):>9} "
                     f"{statistics.median(ev):>14.0f} {max(ev):>10}")
        for o in fp:
            lines.append(f"{'':<20}false pass: {o['case']} ({o['detail']})")
        for o in fa:
            lines.append(f"{'':<20}false alarm: {o['case']}{' (float32)' if f32[o['case']] else ''} ({o['detail']})")
    return "\n".join(lines)


def _vector_ferromotion(claim: np.ndarray) -> Outcome:
    import ferromotion as fm

    calls = [0]

    def f(x: np.ndarray) -> np.ndarray:
        calls[0] += 1
        return cf.vector_f(np.asarray(x))

    r = fm.check_jacobian(f, claim, cf.X_VECTOR)
    return {"accepted": None if r.verdict == "refused" else r.agrees, "evaluations": calls[0], "detail": r.verdict}


def _vector_jax(claim: np.ndarray, mode: str) -> Outcome:
    import jax
    import jax.numpy as jnp
    from jax.test_util import check_grads

    jax.config.update("jax_enable_x64", True)
    calls = [0]
    J = jnp.asarray(claim)

    def f(v: Any) -> Any:
        calls[0] += 1
        return cf.vector_f(np.asarray(v))

    @jax.custom_jvp
    def wrapped(x: Any) -> Any:
        return jax.pure_callback(f, jax.ShapeDtypeStruct((3,), jnp.float64), x)

    @wrapped.defjvp
    def _jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return wrapped(x), J @ t

    try:
        check_grads(wrapped, (jnp.asarray(cf.X_VECTOR),), order=1, modes=(mode,))
        accepted, detail = True, "passed"
    except (AssertionError, Exception) as e:  # noqa: BLE001 - rev mode through a callback may not be supported
        accepted, detail = (False, "failed") if isinstance(e, AssertionError) else (None, type(e).__name__)
    return {"accepted": accepted, "evaluations": calls[0], "detail": detail}


def vector_table() -> str:
    claims = cf.vector_claims()
    rows = [("fm.check_jacobian", _vector_ferromotion, "ferromotion")]
    if _importable("jax"):
        rows += [("jax check_grads fwd", lambda c: _vector_jax(c, "fwd"), "jax"),
                 ("jax check_grads rev", lambda c: _vector_jax(c, "rev"), "jax")]
    lines = [f"vector outputs: f: R^2 -> R^3, claims {', '.join(claims)}", "",
             f"{'checker':<22} " + " ".join(f"{k:>18}" for k in claims) + f" {'evals':>6}"]
    for name, run1, _ in rows:
        outs = [run1(c) for c in claims.values()]
        cells = ["refused" if o["accepted"] is None else ("accepted" if o["accepted"] else "rejected") for o in outs]
        lines.append(f"{name:<22} " + " ".join(f"{c:>18}" for c in cells)
                     + f" {statistics.median(o['evaluations'] for o in outs):>6.0f}")
    if not _importable("jax"):
        lines.append(f"{'jax check_grads':<22} not installed here")
    lines.append("(right: 'right' accepted, every other claim rejected)")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer", choices=list(CHECKERS), help="run one checker here and print its outcomes as JSON")
    ap.add_argument("--family", default="suite", choices=("suite",) + cf.FAMILIES)
    ap.add_argument("--families", default="suite," + ",".join(cf.FAMILIES) + ",vector-outputs",
                    help="comma-separated families to run (default: all)")
    args = ap.parse_args()
    if args.peer:
        print(json.dumps(run_here(args.peer, cf.family_cases(args.family))))
        return
    print("check bench: gradient checkers on benches/check_suite.py and benches/check_families.py "
          "(acceptance rules: benches/check_bench.py)")
    for family in args.families.split(","):
        if family == "vector-outputs":
            print("\n== vector-outputs ==")
            print(vector_table())
            continue
        cases = cf.family_cases(family)
        results: Dict[str, Optional[List[Outcome]]] = {}
        for name in CHECKERS:
            t0 = time.perf_counter()
            results[name] = run(name, cases, family)
            if results[name] is not None:
                print(f"  {family} / {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        print(f"\n== {family} ==")
        print(table(results, cases))
        ours = results["ferromotion"] or []
        verdicts = {v: sum(1 for o in ours if o["detail"] == v) for v in sorted({o["detail"] for o in ours})}
        print("ferromotion verdicts: " + ", ".join(f"{v} {n}" for v, n in verdicts.items()))


if __name__ == "__main__":
    main()
