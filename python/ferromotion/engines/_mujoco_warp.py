"""MuJoCo Warp 4.0 (CPU, one world or many): its step as ``step(x, dt)`` in MuJoCo's tangent chart
(:class:`MuJoCoWarpStep`, the state and guards of :class:`~ferromotion.engines.MuJoCoModelStep`),
and why the black-box driver cannot yet give it the gradient it lacks
(:func:`mujoco_warp_step_function` refuses, saying so).

MuJoCo Warp has no gradient of its own: every kernel is built with ``enable_backward=False``, so
``wp.Tape`` has nothing to differentiate. The step here sets MuJoCo Warp's ``qpos``, ``qvel``,
``act`` and ``ctrl`` from x (through ``mj_integratePos`` at the chart's centre, in float64 by
MuJoCo's C library), zeroes its warm start and clock, sets ``opt.timestep`` to the asked dt, and
calls ``mujoco_warp.step`` once; ``step_rows`` steps m states as m worlds of one call (one
:class:`mujoco_warp.Data` per batch size, rounded up to a power of two and padded with copies of
the first row; worlds are independent programs).

**Float32, and the driver's refusal.** MuJoCo Warp computes in float32 (every array, ``wp.vec3``
included; there is no float64 build): each step's output is rounded to ~6e-8 of its size. The
black-box driver differentiates the step map by central differences and checks, inside every
segment after a law change, that the step's Jacobian does not jump from one step to the next
(``SWITCH_FLOOR`` = 1e-6 of max(1, max|D|), and 1e3 times its neighbours' changes): its way of
catching an undeclared contact release. A float32 step's Jacobian by differences carries noise of
~6e-8/eps, quantised (consecutive flight steps often give identical bits, then one rounding
quantum): measured on the drop (k = 1e4 N/m, dt = 1e-3 s, batched worlds):

* eps = 1e-3, MuJoCo Warp's float32 state returned as is: refused ``UnguardedSwitch`` at
  t = 0.667 s (in flight after the release), a jump of 9.6e-6, after 102 s;
* eps = 1e-4, the state carried in float64 and MuJoCo Warp's increment added (a variant tried
  and dropped: the output's own rounding stays): refused at t = 0.463 s, a jump of 1.49e-4;
* eps = 1e-2 (the same variant; noise ~1e-6): refused at t = 0.453 s, a jump of 6.65 (the probes,
  1 cm apart, now straddle the contact switch itself), after 35 s;
* MuJoCo's C step on the same model answers (eps = 1e-6: J within 2.8e-2 of the rigid drop's,
  verdict ``right``, 2.2 s).

No probe is both above float32's noise and inside the contact's smooth pieces, so the driver
refuses every answer. Giving MuJoCo Warp a gradient needs the driver to take the step's noise
floor (a per-step-function precision the switch check and the probe check scale by): a change to
the core's black-box driver, not made here. Until then :func:`mujoco_warp_step_function` raises
``NotImplementedError`` with these numbers, and MuJoCo Warp's cube runs are its own map's central
differences (``engines/_cube.py``), reported as such.

**Compile.** The first ``mujoco_warp.step`` compiles Warp's CPU kernels (``~/.cache/warp``):
measured 36 s with most kernels already cached by an earlier session (load 1.5); an earlier session
saw the cold compile not finish in 15 min at load 26. :func:`warm` times it; then ~20 ms a step
(one world, load ~8: Warp launches ~60 CPU kernels per step).
"""

from __future__ import annotations

import time
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from ._mujoco_model import MuJoCoModelStep

#: Why the driver refuses MuJoCo Warp's step (see the module docs), as the refusal says it.
REFUSAL = ("the black-box driver cannot differentiate MuJoCo Warp's float32 step yet: its switch check "
           "(a jump of the step Jacobian above 1e-6 of its size) sees float32 noise of ~6e-8/eps at any "
           "probe below the contact's own switch (drop, k = 1e4 N/m, dt = 1e-3 s: eps = 1e-3 refused "
           "UnguardedSwitch on a 9.6e-6 noise jump in flight, eps = 1e-2 on the contact switch itself); it needs a "
           "noise floor per step function in the core's driver. MuJoCoWarpStep steps the model; central "
           "differences of its own map are engines._cube.warp_rows")


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


def warm(model: Any) -> Dict[str, float]:
    """Compile (or load from Warp's cache) the kernels ``mujoco_warp.step`` needs for ``model``:
    the seconds taken by the first step and by the next."""
    box = MuJoCoWarpStep(model)
    x = np.zeros(box.dim)
    start = time.perf_counter()
    box.step(x, float(box.model.opt.timestep))
    first = time.perf_counter() - start
    start = time.perf_counter()
    box.step(x, float(box.model.opt.timestep))
    return {"first_step_s": first, "next_step_s": time.perf_counter() - start}




def mujoco_warp_step_function(model: Any, qpos: Optional[Sequence[float]] = None, **_: Any) -> Any:
    """Refused (``NotImplementedError``, saying why): the black-box driver cannot yet differentiate
    MuJoCo Warp's float32 step (module docs: the measured refusals). :class:`MuJoCoWarpStep` is
    the step itself."""
    raise NotImplementedError(REFUSAL)
