"""Wall time per Jacobian of ``fm.hybrid_jacobian`` on a step function: one state per call against
the driver's rows (``fm.StepFunction(..., batch=True)`` and capped batches), against the state's
dimension n, for a numpy step, a JAX step and MuJoCo, side by side in one run (``make bench``).

Each system is a ball dropped on the floor (a push-only penalty contact, its entry and release
guarded) carrying n - 2 further coordinates:

* **numpy**: the ball (y, v) and n - 2 first-order filters driven by the ball's height
  (``z_i' = -a_i z_i + y``), semi-implicit Euler; the step, the guards and the rows in numpy;
* **jax**: the same law written in JAX (``jax_enable_x64``): ``jax.jit`` of the one-state step,
  ``jax.jit(jax.vmap(...))`` of the rows; the guards read the returned state in numpy;
* **mujoco**: a sphere on a slide joint over a plane (``condim`` 1, the same k and c as a direct
  ``solref``, a constant impedance: the drop adapter's mapping) and
  n/2 - 1 hinged pendulums that collide with nothing (n = 2 nv), through
  ``fm.engines.mujoco_step_function``; the rows through ``quadruped3d.RowsStep`` (from 64 rows
  up one ``mujoco.rollout`` call, a thread per core; fewer rows one ``mj_step`` after another), the
  guards per row.

Printed per (system, n): the one-state wall time, then each batch setting's wall time and its ratio
to the one-state time, the rows (step evaluations) and the calls, and whether the Jacobians are the
same bits (else the largest difference). JAX runs every setting once untimed first (it compiles
each row count it meets). The load average is printed beside. A benchmark: it asserts
nothing. JAX and MuJoCo rows are skipped, with a sentence, where they are not installed (they are in
``.venv-engines``; ``scripts/bench.sh`` runs this there when it exists).

    .venv-engines/bin/python benches/batch_bench.py            # every system, n = 2, 4, 10, 20, 40
    .venv-engines/bin/python benches/batch_bench.py --system numpy --n 2 --n 40
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
import ferromotion as fm  # noqa: E402

K, M, G, ZETA = 1e4, 1.0, 9.81, 0.2
C = 2 * ZETA * np.sqrt(K * M)
Y0, T, DT = 0.3, 0.6, 1e-3
NS = (2, 4, 10, 20, 40)
#: Batch settings timed against one state per call: every row in one call, and capped calls.
BATCHES: Tuple[Any, ...] = (True, 32, 8)


def _rates(n: int) -> np.ndarray:
    return np.linspace(1.0, 20.0, max(n - 2, 0))


def numpy_rows(n: int) -> Callable[[np.ndarray, float], np.ndarray]:
    a = _rates(n)

    def step(X: np.ndarray, dt: float) -> np.ndarray:
        y, v, z = X[:, 0], X[:, 1], X[:, 2:]
        force = np.where(y < 0.0, np.maximum(0.0, -K * y - C * v), 0.0)
        v = v + dt * (force / M - G)
        y = y + dt * v
        z = z + dt * (y[:, None] - a * z)
        return np.concatenate([y[:, None], v[:, None], z], axis=1)

    return step


def _release_rows(X: np.ndarray) -> np.ndarray:
    return np.where(X[:, 0] < 0.0, -K * X[:, 0] - C * X[:, 1], 1.0)


def numpy_systems(n: int) -> Tuple[Any, Callable[[Any], Any], np.ndarray]:
    rows = numpy_rows(n)
    one = fm.StepFunction(lambda x, dt: rows(x[None, :], dt)[0],
                          guards=[lambda x: x[0], lambda x: _release_rows(x[None, :])[0]], resets=[None, None])
    return one, lambda b: fm.StepFunction(rows, guards=[lambda X: X[:, 0], _release_rows], resets=[None, None],
                                          batch=b), np.concatenate([[Y0, 0.0], np.zeros(n - 2)])


def jax_systems(n: int) -> Tuple[Any, Callable[[Any], Any], np.ndarray]:
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    a = jnp.asarray(_rates(n))

    def step(x: Any, dt: Any) -> Any:
        y, v, z = x[0], x[1], x[2:]
        force = jnp.where(y < 0.0, jnp.maximum(0.0, -K * y - C * v), 0.0)
        v = v + dt * (force / M - G)
        y = y + dt * v
        return jnp.concatenate([jnp.stack([y, v]), z + dt * (y - a * z)])

    one_step, rows_step = jax.jit(step), jax.jit(jax.vmap(step, in_axes=(0, None)))
    one = fm.StepFunction(lambda x, dt: np.asarray(one_step(x, dt)),
                          guards=[lambda x: x[0], lambda x: _release_rows(x[None, :])[0]], resets=[None, None])
    return one, lambda b: fm.StepFunction(lambda X, dt: np.asarray(rows_step(X, dt)),
                                          guards=[lambda X: X[:, 0], _release_rows], resets=[None, None],
                                          batch=b), np.concatenate([[Y0, 0.0], np.zeros(n - 2)])


def mujoco_xml(n: int) -> str:
    links = "".join(f'<body pos="{1 + i} 0 1"><joint type="hinge" axis="0 1 0" damping="0.1"/>'
                    f'<geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02" contype="0" conaffinity="0"/></body>'
                    for i in range(n // 2 - 1))
    return ('<mujoco><option timestep="0.001"/><default><geom condim="1" '
            f'solref="{-K / M:g} {-C / M:g}" solimp="0.9999 0.9999 0.001 0.5 2"/></default><worldbody><geom name="floor" type="plane" size="50 50 .1"/>'
            '<body pos="0 0 0.1"><joint type="slide" axis="0 0 1"/><geom name="ball" type="sphere" size="0.1" '
            f'mass="1"/></body>{links}</worldbody></mujoco>')


def mujoco_systems(n: int) -> Tuple[Any, Callable[[Any], Any], np.ndarray]:
    import mujoco

    from ferromotion.engines import mujoco_step_function
    from ferromotion.engines.quadruped3d import RowsStep

    if n % 2:
        raise ValueError("MuJoCo's state here is 2 nv: n must be even")
    m = mujoco.MjModel.from_xml_string(mujoco_xml(n))
    qpos = m.qpos0.copy()
    qpos[0] = Y0
    pairs = [(mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "ball"), mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM,
                                                                                        "floor"), 0.0)]
    one, box = mujoco_step_function(m, qpos, pairs=pairs)
    x0 = box.state_of(qpos, np.zeros(m.nv))
    rows = RowsStep(box)
    guards = [lambda X, g=g: np.array([g(x) for x in X]) for g in one.guards]
    return one, lambda b: fm.StepFunction(rows, guards=guards, resets=[None] * len(guards), batch=b), x0


SYSTEMS: Dict[str, Callable[[int], Tuple[Any, Callable[[Any], Any], np.ndarray]]] = {
    "numpy": numpy_systems, "jax": jax_systems, "mujoco": mujoco_systems}
NEEDS = {"jax": "jax", "mujoco": "mujoco"}


def _answer(sys_: Any, x0: np.ndarray) -> Tuple[Any, float]:
    start = time.perf_counter()
    s = fm.hybrid_jacobian(sys_, x0, 0.0, T, dt=DT, progress=False)
    return s, time.perf_counter() - start


def _same(a: Any, b: Any) -> str:
    gap = max(float(np.max(np.abs(a.jacobian - b.jacobian))), float(np.max(np.abs(a.half_dt.jacobian - b.half_dt.jacobian))))
    return "same bits" if gap == 0.0 else f"max |dJ| {gap:.1e}"


def bench(system: str, n: int, batches: Sequence[Any]) -> List[Dict[str, Any]]:
    one, batched, x0 = SYSTEMS[system](n)
    if system == "jax":  # compile each setting once, untimed (JAX compiles each row count it meets)
        for b in batches:
            _answer(batched(b), x0)
        _answer(one, x0)
    load = os.getloadavg()[0]
    ref, wall_one = _answer(one, x0)
    out = [{"system": system, "n": n, "batch": "one state", "wall_s": wall_one, "ratio": 1.0,
            "rows": ref.step_calls, "calls": ref.batch_calls, "same": "", "load": load}]
    for b in batches:
        s, wall = _answer(batched(b), x0)
        out.append({"system": system, "n": n, "batch": "all rows" if b is True else f"<= {b} rows", "wall_s": wall,
                    "ratio": wall / wall_one, "rows": s.step_calls, "calls": s.batch_calls, "same": _same(s, ref),
                    "load": load})
    return out


def _missing(system: str) -> Optional[str]:
    import importlib.util

    need = NEEDS.get(system)
    if need and importlib.util.find_spec(need) is None:
        return (f"{system}: skipped, {need} is not installed in this environment ({sys.prefix}); "
                "scripts/engines_env.sh builds .venv-engines, where `make bench` runs this table when it exists")
    return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--system", action="append", choices=sorted(SYSTEMS), help="repeat; default all three")
    p.add_argument("--n", action="append", type=int, help=f"state dimensions (even); default {', '.join(map(str, NS))}")
    p.add_argument("--json", default=None, help="also write the rows here")
    args = p.parse_args(argv)
    ns = args.n or list(NS)
    start = time.perf_counter()
    print(f"fm.hybrid_jacobian per Jacobian: a ball dropped from {Y0} m onto a penalty floor (k = {K:g} N/m; "
          f"MuJoCo: the same k, c through solref) with n - 2 passive coordinates, T = {T} s, dt = {DT} s and dt/2, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the start")
    print(f"{'system':<7} {'n':>3} {'batch':<10} {'wall s':>8} {'x one':>7} {'rows':>8} {'calls':>8}  answer vs one state  load")
    rows: List[Dict[str, Any]] = []
    for system in args.system or ["numpy", "jax", "mujoco"]:
        why = _missing(system)
        if why:
            print(why)
            continue
        for n in ns:
            for r in bench(system, n, BATCHES):
                rows.append(r)
                print(f"{r['system']:<7} {r['n']:>3} {r['batch']:<10} {r['wall_s']:>8.2f} {r['ratio']:>7.3f} "
                      f"{r['rows']:>8} {r['calls']:>8}  {r['same']:<19} {r['load']:.1f}", flush=True)
    print(f"whole table: {time.perf_counter() - start:.0f} s wall, load {os.getloadavg()[0]:.1f} at the end")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
