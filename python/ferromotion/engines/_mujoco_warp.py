"""MuJoCo Warp 4.0 (CPU, one world or many) through the black-box driver: its step as
``step(x, dt)`` in MuJoCo's tangent chart (:class:`MuJoCoWarpStep`, the state and guards of
:class:`~ferromotion.engines.MuJoCoModelStep`), and :func:`mujoco_warp_step_function`, which gives
it the gradient it lacks.

MuJoCo Warp has no gradient of its own: every kernel is built with ``enable_backward=False``, so
``wp.Tape`` has nothing to differentiate. The step here sets MuJoCo Warp's ``qpos``, ``qvel``,
``act`` and ``ctrl`` from x (through ``mj_integratePos`` at the chart's centre, in float64 by
MuJoCo's C library), zeroes its warm start and clock, sets ``opt.timestep`` to the asked dt, and
calls ``mujoco_warp.step`` once; ``step_rows`` steps m states as m worlds of one call (one
:class:`mujoco_warp.Data` per batch size, rounded up to a power of two and padded with copies of
the first row; worlds are independent programs).

**Float32, declared.** MuJoCo Warp computes in float32 (every array, ``wp.vec3`` included; there
is no float64 build): each step's output is rounded to ~6e-8 of its size, and a difference
quotient at probe eps carries ~6e-8/eps of noise. At the driver's float64 probe (1e-6) and
thresholds every answer was refused (measured on the drop, k = 1e4 N/m, dt = 1e-3 s: eps = 1e-3
refused ``UnguardedSwitch`` on a 9.6e-6 noise jump in flight; eps = 1e-2 on the contact switch
itself). The step function declares ``precision="float32"`` and the driver scales its probe
(8.1e-4), its eps/eps-2 tolerance and its switch check's floor by it
(``hybrid/black_box/precision.rs``, docs/engines.md).

**Guards in the engine's own arithmetic.** The entry of pair i is MuJoCo Warp's own contact
distance when its float32 collision makes a contact for the pair (the least over the pair's
contacts, minus the margin: <= 0), and MuJoCo's float64 distance, kept positive, when it makes
none: so "strictly past the zero" is exactly the state from which MuJoCo Warp's next step
takes the contact. (MuJoCo's float64 distance alone disagrees with float32's about the sign
within ~1e-7 m of the zero, and a step that takes the contact one step late is a jump of the
contact's damping force times dt in the located map.) The release is MuJoCo's (the normal
force's argument before the clamp): the force is continuous there, so float32's decision one
step either side moves the state by the round-off alone.

**Where its solver's fast path does not resolve it.** The drop through the driver gets MuJoCo's
verdict (J within 5e-4 of MuJoCo's). The tumbling cube (``engines/_cube.py``) with MuJoCo's default
pyramidal cone is refused ``ProbeDependent`` (J(eps) and J(eps/2) 0.16 and 0.27 apart after one
and two strikes, against the 7.3e-3 float32 allows): MuJoCo Warp's Newton solver with a non-elliptic
cone updates its Hessian incrementally and exits early, and through a corner strike that answer is
~100 times noisier than the float32 state itself. With that path off (the elliptic cone, the same
law for a frictionless contact) its noise is the float32 state's and the driver answers the cube
with MuJoCo's verdict (``_cube.WARP_OPTION``; docs/engines.md, "MuJoCo Warp's noise through a
strike, located").

**Compile.** The first ``mujoco_warp.step`` compiles Warp's CPU kernels (``~/.cache/warp``);
:func:`warm` times it; then ~15-30 ms a step (one world or 64: Warp launches ~60 CPU kernels per
step, so a call costs about the same for any number of worlds).
"""


from __future__ import annotations

import functools
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ._mujoco_model import MuJoCoModelStep

#: A positive guard value standing for "MuJoCo Warp makes no contact here" when MuJoCo's float64
#: distance is already at or below zero (float32's sign differs within ~1e-7 m of the zero).
_TINY = 1e-300

def _warp() -> Tuple[Any, Any]:
    import warp as wp

    wp.config.quiet = True
    wp.init()
    import mujoco_warp as mjw  # type: ignore[import-not-found]

    return wp, mjw


class MuJoCoWarpStep(MuJoCoModelStep):
    """A MuJoCo model stepped by MuJoCo Warp (CPU, float32) as ``step(x, dt)`` in MuJoCo's tangent
    chart, with MuJoCo's contact guards. ``step_rows(X, dt)`` steps each row as one world."""

    def __init__(self, model: Any, qpos_ref: Optional[Sequence[float]] = None,
                 pairs: Optional[Sequence[Tuple[int, int, float]]] = None) -> None:
        super().__init__(model, qpos_ref=qpos_ref, pairs=pairs)
        wp, mjw = _warp()
        self._wp, self._mjw = wp, mjw
        self._device = wp.get_device("cpu")
        with wp.ScopedDevice(self._device):
            self._wmodel = mjw.put_model(self.model)
        self._worlds: Dict[int, Any] = {}
        self._seen: Optional[Tuple[bytes, List[List[Tuple[int, int, float, np.ndarray]]]]] = None
        self.version = (f"mujoco_warp {mjw.__version__} (warp {wp.__version__}, CPU, float32); "
                        f"charts and guards by mujoco {self.version}")

    def _data(self, m: int) -> Tuple[int, Any]:
        n = 1 << max(0, int(np.ceil(np.log2(m))))
        if n not in self._worlds:
            with self._wp.ScopedDevice(self._device):
                self._worlds[n] = self._mjw.make_data(self.model, nworld=n)
        return n, self._worlds[n]

    def step_rows(self, X: Any, dt: float) -> np.ndarray:
        """(m, n) -> (m, n): each row one world of one ``mujoco_warp.step``."""
        X = np.asarray(X, dtype=float).reshape(-1, self.dim)
        m, nv = X.shape[0], self.nv
        n, d = self._data(m)
        rows = np.concatenate([X, np.repeat(X[:1], n - m, axis=0)]) if n > m else X
        f32 = np.float32
        qpos = np.stack([self.qpos(x) for x in rows]).astype(f32)
        vel = rows[:, nv:].astype(f32)
        with self._wp.ScopedDevice(self._device):
            d.qpos.assign(qpos)
            d.qvel.assign(vel[:, :nv])
            if self.na:
                d.act.assign(vel[:, nv:])
            if self.model.nu:
                d.ctrl.assign(np.repeat(self.ctrl[None, :], n, axis=0).astype(f32))
            d.qacc_warmstart.zero_()
            d.time.zero_()
            self._wmodel.opt.timestep.fill_(float(dt))
            self._mjw.step(self._wmodel, d)
            q = d.qpos.numpy()[:m].astype(float)
            v = d.qvel.numpy()[:m].astype(float)
            a = d.act.numpy()[:m].astype(float) if self.na else np.zeros((m, 0))
        return np.concatenate([np.stack([self.dq(qi) for qi in q]), v, a], axis=1)

    def step(self, x: Any, dt: float) -> np.ndarray:
        """One ``mujoco_warp.step`` of ``dt`` seconds from x (one world)."""
        return self.step_rows(np.asarray(x, dtype=float)[None, :], dt)[0]

    # -- MuJoCo Warp's own contacts -------------------------------------------------------------------
    def contacts(self, X: Any) -> List[List[Tuple[int, int, float, np.ndarray]]]:
        """Per row of X, the contacts MuJoCo Warp's float32 collision makes at that state (what its
        next step starts from): (geom1, geom2, dist, pos) each. The last batch is remembered."""
        X = np.asarray(X, dtype=float).reshape(-1, self.dim)
        key = X.tobytes()
        if self._seen is not None and self._seen[0] == key:
            return self._seen[1]
        m = X.shape[0]
        n, d = self._data(m)
        rows = np.concatenate([X, np.repeat(X[:1], n - m, axis=0)]) if n > m else X
        with self._wp.ScopedDevice(self._device):
            d.qpos.assign(np.stack([self.qpos(x) for x in rows]).astype(np.float32))
            self._mjw.kinematics(self._wmodel, d)
            self._mjw.collision(self._wmodel, d)
            k = min(int(d.nacon.numpy()[0]), int(d.naconmax))
            world = d.contact.worldid.numpy()[:k]
            geom = d.contact.geom.numpy()[:k]
            dist = d.contact.dist.numpy()[:k].astype(float)
            pos = d.contact.pos.numpy()[:k].astype(float)
        out: List[List[Tuple[int, int, float, np.ndarray]]] = [[] for _ in range(m)]
        for c in range(k):
            if world[c] < m:
                out[world[c]].append((int(geom[c][0]), int(geom[c][1]), float(dist[c]), pos[c]))
        self._seen = (key, out)
        return out

    def entry_rows(self, i: int, X: Any) -> np.ndarray:
        """Pair i's entry at each row: MuJoCo Warp's own contact distance minus the margin where its
        collision makes a contact for the pair (<= 0), else MuJoCo's distance kept positive."""
        g1, g2, margin = self.pairs[i]
        X = np.asarray(X, dtype=float).reshape(-1, self.dim)
        out = np.empty(len(X))
        for r, (x, found) in enumerate(zip(X, self.contacts(X))):
            mine = [dist for a, b, dist, _ in found if {a, b} == {g1, g2}]
            out[r] = min(min(mine) - margin, 0.0) if mine else max(self.distance(i, x), _TINY)
        return out

    def release_rows(self, i: int, X: Any) -> np.ndarray:
        """Pair i's release at each row (MuJoCo's, :meth:`release`)."""
        return np.array([self.release(i, x) for x in np.asarray(X, dtype=float).reshape(-1, self.dim)])

    def guard_rows(self, release: bool = True) -> List[Callable[[np.ndarray], np.ndarray]]:
        """The batched guards (entry, release per pair), for ``StepFunction(batch=True)``."""
        out: List[Callable[[np.ndarray], np.ndarray]] = []
        for i in range(len(self.pairs)):
            out.append(functools.partial(self.entry_rows, i))
            if release:
                out.append(functools.partial(self.release_rows, i))
        return out


def warm(model: Any, progress: bool = False) -> Dict[str, float]:
    """Compile (or load from Warp's cache) the kernels ``mujoco_warp.step`` and its collision need
    for ``model``: the seconds taken by the first step and by the next. With ``progress``, every
    30 s of the first step prints the time so far and the kernel cache's entry count."""
    import threading

    box = MuJoCoWarpStep(model)
    x = np.zeros(box.dim)
    cache = str(box._wp.config.kernel_cache_dir or "")
    done = threading.Event()

    def beat() -> None:
        import os

        while not done.wait(30.0):
            count = len(os.listdir(cache)) if cache and os.path.isdir(cache) else 0
            print(f"  ... {time.perf_counter() - start:.0f} s, {count} entries in {cache}", flush=True)

    start = time.perf_counter()
    if progress:
        threading.Thread(target=beat, daemon=True).start()
    try:
        box.step(x, float(box.model.opt.timestep))
        box.contacts(x[None, :])
    finally:
        done.set()
    first = time.perf_counter() - start
    start = time.perf_counter()
    box.step(x, float(box.model.opt.timestep))
    return {"first_step_s": first, "next_step_s": time.perf_counter() - start}


def warm_tested_models() -> None:
    """``make warp``'s warm-up (scripts/warp.sh): :func:`warm` the models the MuJoCo Warp
    tests step (the drop's; the cube's, both cones), printing each as it starts and its times."""
    from .. import Drop, systems
    from ._cube import WARP_OPTION, cube_mjcf
    from ._mujoco import mjcf

    cube = systems.TumblingCube(half_side=0.1, mass=1.0, restitution=0.5)
    models = (("the drop (k = 1e4 N/m, dt = 1e-3 s)", mjcf(Drop(), 1e4, 1e-3)),
              ("the cube (pyramidal cone)", cube_mjcf(cube, 0.01, 2e-4)),
              ("the cube (elliptic cone)", cube_mjcf(cube, 0.01, 2e-4, option=WARP_OPTION)))
    for name, xml in models:
        print(f"warp: {name}: first step (compiles the kernels Warp's cache lacks: for all three, 48 s at "
              "load 3, 396 s at load 9-10)", flush=True)
        t = warm(xml, progress=True)
        print(f"warp: {name}: first step {t['first_step_s']:.1f} s, next {1e3 * t['next_step_s']:.0f} ms", flush=True)


def mujoco_warp_step_function(model: Any, qpos: Optional[Sequence[float]] = None, *,
                              pairs: Optional[Sequence[Tuple[int, int, float]]] = None,
                              release: bool = True) -> Tuple[Any, MuJoCoWarpStep]:
    """A MuJoCo model stepped by MuJoCo Warp as a :class:`ferromotion.StepFunction` (batched: the
    driver's rows are MuJoCo Warp's worlds; ``precision="float32"``), and the step object.

    The same state, chart and pairs as :func:`~ferromotion.engines.mujoco_step_function`; the
    entry guards are MuJoCo Warp's own contact distances (module docs). Through
    ``fm.hybrid_jacobian`` it gives MuJoCo Warp the gradient it lacks: the derivative of its
    event-located map at its dt, measured on its float32 step, with the probe and tolerances
    float32 allows (``HybridSolution.resolution``).
    """
    from .. import StepFunction

    box = MuJoCoWarpStep(model, qpos_ref=qpos, pairs=pairs)
    guards = box.guard_rows(release)
    return StepFunction(box.step_rows, guards=guards, resets=[None] * len(guards), batch=True, precision="float32",
                        name=f"mujoco_warp model ({box.nq} qpos, {box.nv} dof, {len(box.pairs)} pairs)"), box
