"""Engine rows, batched against one at a time, side by side in one run (in .venv-engines).

For each engine: the audit's gradient column (every stiffness's engine gradient) and its
difference probes (+-fd_eps per coordinate per stiffness), run (a) one rollout at a time through
the adapter's one-state ``state``/``jacobian`` (the schedule the audit had) and (b) as the
adapter's batched ``states``/``jacobians`` (MuJoCo's rollout threads, JAX/MJX vmap, Newton
worlds). Prints wall and CPU seconds of each, their ratio, the load average beside them, and the
largest difference between the two answers (0 where rows are independent programs).

    .venv-engines/bin/python benches/engine_rows_bench.py --engine mujoco --engine jax
    .venv-engines/bin/python benches/engine_rows_bench.py --engine newton --short
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any, Callable, Tuple

import numpy as np

import ferromotion as fm
from ferromotion.engines import AdapterBase, engine_adapter
from ferromotion.engines._adapter import FD_EPS


def _timed(fn: Callable[[], Any]) -> Tuple[Any, float, float]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def bench(engine: str, drop: fm.Drop, ks: np.ndarray, dt: float) -> str:
    ad = engine_adapter(engine)
    x0 = np.array([drop.height, drop.velocity])
    eps = float(getattr(ad, "fd_eps", FD_EPS))
    probes = np.array([x0 + s * eps * e for _ in ks for e in np.eye(2) for s in (1.0, -1.0)])
    pk = np.repeat(ks, 4)
    X = np.tile(x0, (ks.size, 1))

    def one() -> Any:
        return (AdapterBase.jacobians(ad, drop, ks, dt, X), AdapterBase.states(ad, drop, pk, dt, probes))

    def batched() -> Any:
        return (ad.jacobians(drop, ks, dt, X), ad.states(drop, pk, dt, probes))

    batched()  # compile / warm once (JAX, MJX, Warp), then time both
    one()
    load0 = os.getloadavg()[0]
    (a, wa, ca), (b, wb, cb) = _timed(one), _timed(batched)
    diff = max(float(np.max(np.abs(a[0][1] - b[0][1]))), float(np.max(np.abs(a[1] - b[1]))))
    return (f"{engine:<8} {ks.size} gradients + {len(pk)} probes, {round(drop.t_final / dt)} steps: one at a time "
            f"{wa:7.2f} s wall ({ca:6.2f} s CPU), batched {wb:7.2f} s wall ({cb:6.2f} s CPU): x{wa / wb:.1f} wall, "
            f"x{ca / max(cb, 1e-9):.1f} CPU; max |difference| {diff:.1e}; load {load0:.1f} -> {os.getloadavg()[0]:.1f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engine", action="append", default=None, help="repeat; default mujoco and jax")
    p.add_argument("--short", action="store_true", help="the 5 cm drop over 0.15 s instead of the default drop")
    args = p.parse_args()
    drop = fm.Drop(height=0.05, t_final=0.15) if args.short else fm.Drop()
    for e in args.engine or ["mujoco", "jax"]:
        print(bench(e, drop, np.logspace(3, 7, 9), 1e-4), flush=True)


if __name__ == "__main__":
    main()
