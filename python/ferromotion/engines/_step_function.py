"""An engine's own step as a black box: :func:`step_function` wraps an engine model of the drop
into a :class:`ferromotion.StepFunction` with its contact guards, so that
``fm.hybrid_jacobian`` returns the right gradient of *that engine's* soft contact, and
:func:`black_box_beside_engine` prints it beside the engine's own gradient, with the cost of each.

The engine decides its contact at each step's start, as every engine does; the two guards are
the engine's own switches, both with reset None (its law changes there, x is continuous):

* **entry**: the contact distance as the engine computes it (MuJoCo's ``mj_collision`` on the
  state; a positive gap when it finds no contact), so that the driver's "strictly past the
  zero" is the engine's own "in contact";
* **release**: positive while the contact pushes: the argument of the engine's clamped normal
  force (for MuJoCo's soft constraint, mapped as ``ferromotion.engines._mujoco`` documents:
  ``-k*y - c*v + d*m*g``) or ``-k*y``, whichever reaches zero first (a slow bounce leaves the
  ground with the force still positive: the ``d*m*g`` it carries), ``-k*y`` (negative) above
  ground. Without it the driver locates the release from the step's own Jacobian (the clamped
  force is continuous there), at the cost of one more pass.

The answer is the derivative of the engine's event-located map at its dt; it approaches the
derivative of the engine's continuous law as dt shrinks, so it is also given at dt/2 with the
spread (``HybridSolution.half_dt``).
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, List, Optional, Tuple

import numpy as np

from .. import Drop, HybridSolution, StepFunction, hybrid_jacobian

#: Engines :func:`step_function` wraps.
STEP_ENGINES = ("mujoco",)


class _MuJoCoDrop:
    """The adapter's MJCF drop (``_mujoco.mjcf``) as step(x, dt) and its two guards.

    Every call clears what an earlier call leaves behind (the warm start, the clock: no state
    carried between calls, which the driver measures) and sets ``opt.timestep`` to the asked dt.
    """

    def __init__(self, drop: Drop, k: float, dt: float) -> None:
        import mujoco

        from ._mujoco import IMPEDANCE, mjcf

        self._mj = mujoco
        self.model = mujoco.MjModel.from_xml_string(mjcf(drop, k, dt))
        self.data = mujoco.MjData(self.model)
        self.k = float(k)
        self.c = 2.0 * drop.zeta * float(np.sqrt(k * drop.mass))
        self.weight = IMPEDANCE * drop.mass * drop.gravity
        self.version = mujoco.__version__
        self._memo: Optional[Tuple[Tuple[float, float], Optional[float]]] = None
        self._threads: Optional[List[Any]] = None

    def _set(self, x: np.ndarray) -> Any:
        d = self.data
        # What mj_step reads and an earlier call leaves behind in this model (no actuators, controls,
        # mocap or plugins): the solver's warm start and the clock. Zeroing them is mj_resetData's
        # effect here at a quarter of its cost (it clears every array); tests/engines pins the step
        # against a fresh MjData's, bit for bit.
        d.qacc_warmstart[:] = 0.0
        d.time = 0.0
        d.qpos[0], d.qvel[0] = float(x[0]), float(x[1])
        return d

    def step(self, x: np.ndarray, dt: float) -> List[float]:
        d = self._set(x)
        self.model.opt.timestep = float(dt)
        self._mj.mj_step(self.model, d)
        return [float(d.qpos[0]), float(d.qvel[0])]

    def step_rows(self, X: np.ndarray, dt: float) -> np.ndarray:
        """(m, 2) -> (m, 2): every row one :meth:`step`, as one ``mujoco.rollout`` of one step (its
        threads over MjData; each row starts from time 0 and a zero warm start, as :meth:`step`)."""
        from mujoco import rollout

        X = np.asarray(X, dtype=float)
        mj, m = self._mj, self.model
        spec = mj.mjtState.mjSTATE_FULLPHYSICS
        d = self._set(X[0])
        s0 = np.empty(mj.mj_stateSize(m, spec))
        mj.mj_getState(m, d, s0, spec)
        states = np.tile(s0, (X.shape[0], 1))
        states[:, 1], states[:, 1 + m.nq] = X[:, 0], X[:, 1]  # [time, qpos, qvel, ...]
        m.opt.timestep = float(dt)
        if self._threads is None:
            self._threads = [mj.MjData(m) for _ in range(os.cpu_count() or 1)]
        out, _ = rollout.rollout(m, self._threads[:X.shape[0]], states, nstep=1,
                                 initial_warmstart=np.zeros((X.shape[0], m.nv)))
        return np.stack([out[:, -1, 1], out[:, -1, 1 + m.nq]], axis=1)

    def entry_rows(self, X: np.ndarray) -> np.ndarray:
        """(m, 2) -> (m,): :meth:`entry` of each row."""
        return np.array([self.entry(x) for x in np.asarray(X, dtype=float)])

    def release_rows(self, X: np.ndarray) -> np.ndarray:
        """(m, 2) -> (m,): :meth:`release` of each row."""
        return np.array([self.release(x) for x in np.asarray(X, dtype=float)])

    def _distance(self, x: np.ndarray) -> Optional[float]:
        """MuJoCo's contact distance at x, None when its collision finds no contact (both guards
        ask at the same x: the last answer is kept, a pure function's memo)."""
        key = (float(x[0]), float(x[1]))
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        d = self._set(x)
        self._mj.mj_kinematics(self.model, d)
        self._mj.mj_collision(self.model, d)
        dist = float(d.contact.dist[0]) if d.ncon > 0 else None
        self._memo = (key, dist)
        return dist

    def entry(self, x: np.ndarray) -> float:
        dist = self._distance(x)
        # No contact: the gap itself (y is the gap in this model), positive.
        return float(x[0]) if dist is None else dist

    def release(self, x: np.ndarray) -> float:
        """Positive while the contact pushes: its force's argument and k times the depth, whichever
        reaches zero first (a slow bounce leaves the ground with the force still positive, the
        d*m*g it carries); -k times the gap above ground."""
        dist = self._distance(x)
        if dist is None:
            return -self.k * float(x[0])
        return min(-self.k * dist - self.c * float(x[1]) + self.weight, -self.k * dist)


def step_function(engine: str, drop: Optional[Drop] = None, k: float = 1e5, dt: float = 1e-4, *,
                  release: bool = True, batch: bool = False) -> StepFunction:
    """The engine's step of the drop as a :class:`ferromotion.StepFunction` with its guards.

    Parameters
    ----------
    engine : str
        ``"mujoco"`` (native ``mj_step``).
    drop : Drop, optional
        Default ``fm.Drop()``.
    k : float
        Stiffness, N/m, mapped into the engine as its adapter documents.
    dt : float
        The engine's step, s (the model's ``timestep``; the driver also calls it with the
        sub-steps it locates events by).
    release : bool
        Declare the release guard (default). False leaves only the entry: the driver then
        locates the release from mj_step's own Jacobian (``HybridSolution.switches``).
    batch : bool
        The batched form: ``step(X, dt)`` on (m, 2) rows (one ``mujoco.rollout`` of one step, its
        threads over MjData: bit for bit the one-state step's rows), guards (m, 2) -> (m,).
        Needs ``fm.StepFunction(..., batch=True)`` in the driver; refused where it is absent.

    Returns
    -------
    StepFunction
        ``guards = [entry, release]``, ``resets = [None, None]``.

    Examples
    --------
    Needs MuJoCo (``.venv-engines``); tests/engines runs this example there.

    >>> import ferromotion as fm
    >>> sys = fm.engines.step_function("mujoco", fm.Drop(), k=1e5, dt=1e-4)
    >>> s = fm.hybrid_jacobian(sys, [1.0, 0.0], 0.0, 0.8, dt=1e-4, halve_dt=False)
    >>> bool(s.jacobian[1, 0] > 0), len(s.events)       # MuJoCo's own gradient: -58.5
    (True, 2)
    """
    drop = Drop() if drop is None else drop
    if engine != "mujoco":
        raise ValueError(f"unknown engine {engine!r} for step_function; expected one of {', '.join(STEP_ENGINES)}")
    try:
        box = _MuJoCoDrop(drop, k, dt)
    except ImportError as e:
        raise ImportError(f"engine {engine!r} is not installed ({e}); pip install 'ferromotion[mujoco]' "
                          "or run scripts/engines_env.sh") from e
    name = f"{engine} {box.version} drop (k = {k:g} N/m, dt = {dt:g} s)"
    if batch:
        if "batch" not in {f.name for f in dataclasses.fields(StepFunction)}:
            raise NotImplementedError("batch=True needs fm.StepFunction(..., batch=True), which this ferromotion's "
                                      "driver does not have yet; use batch=False (the rows run one at a time)")
        rows = [box.entry_rows, box.release_rows] if release else [box.entry_rows]
        return StepFunction(box.step_rows, guards=rows, resets=[None] * len(rows), name=name,  # type: ignore[call-arg, arg-type]
                            batch=True)
    guards = [box.entry, box.release] if release else [box.entry]
    return StepFunction(box.step, guards=guards, resets=[None] * len(guards), name=name)


@dataclasses.dataclass(frozen=True, repr=False)
class BesideEngine:
    """The black-box driver's gradient of an engine's drop beside the engine's own.

    Attributes
    ----------
    engine, version : str
    k, dt : float
        N/m, s.
    driver : HybridSolution
        ``fm.hybrid_jacobian`` of :func:`step_function` (J at dt, ``half_dt``, ``step_calls``,
        ``wall_time_s``).
    engine_jacobian : numpy.ndarray
        The engine's own gradient (the adapter's ``jacobian``: MuJoCo's ``mjd_transitionFD``
        chained over the rollout).
    engine_wall_time_s : float
        Wall time of the engine's own gradient, s.
    engine_steps : int
        Steps of the engine's rollout (each with one ``mjd_transitionFD``: 2·(2·nv + na) + 1 = 5
        step evaluations for this model by its definition).
    """

    engine: str
    version: str
    k: float
    dt: float
    driver: HybridSolution
    engine_jacobian: np.ndarray
    engine_wall_time_s: float
    engine_steps: int

    def table(self) -> str:
        """Both gradients, dv(T)/dy0 first, with their cost."""
        d = self.driver
        half = d.half_dt
        lines = [
            f"{self.engine} {self.version}, drop at k = {self.k:g} N/m, dt = {self.dt:g} s: J = d[y, v](T)/d[y0, v0]",
            f"{'gradient':<44} {'dv/dy0':>9} {'dv/dv0':>9} {'dy/dy0':>9} {'dy/dv0':>9} {'wall (s)':>9}  cost",
            f"{'black-box driver, event-located, at dt':<44} {d.jacobian[1, 0]:9.4f} {d.jacobian[1, 1]:9.4f} "
            f"{d.jacobian[0, 0]:9.4f} {d.jacobian[0, 1]:9.4f} {d.wall_time_s or 0.0:9.2f}  "
            f"{d.step_calls} step calls (dt and dt/2 together)",
        ]
        if half is not None:
            j = half.jacobian
            lines.append(f"{'  the same at dt/2':<44} {j[1, 0]:9.4f} {j[1, 1]:9.4f} {j[0, 0]:9.4f} {j[0, 1]:9.4f} "
                         f"{'':>9}  spread max|J(dt) - J(dt/2)| / max(1, max|J|) = {half.spread:.2e}")
        e = self.engine_jacobian
        label = f"the engine's own ({self.engine})"
        lines.append(f"{label:<44} {e[1, 0]:9.4f} {e[1, 1]:9.4f} {e[0, 0]:9.4f} "
                     f"{e[0, 1]:9.4f} {self.engine_wall_time_s:9.2f}  {self.engine_steps} steps, each with "
                     "mjd_transitionFD")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"BesideEngine({self.engine}, k = {self.k:g}, dt = {self.dt:g}: driver dv/dy0 = "
                f"{self.driver.jacobian[1, 0]:.4f} in {self.driver.wall_time_s or 0.0:.2f} s, engine's own "
                f"{self.engine_jacobian[1, 0]:.4f} in {self.engine_wall_time_s:.2f} s)")


def black_box_beside_engine(engine: str, drop: Optional[Drop] = None, k: float = 1e5,
                            dt: float = 1e-4) -> BesideEngine:
    """:func:`step_function` through ``fm.hybrid_jacobian`` beside the engine's own gradient.

    Examples
    --------
    Needs MuJoCo (``.venv-engines``).

    >>> import ferromotion as fm
    >>> b = fm.engines.black_box_beside_engine("mujoco", k=1e5)   # doctest: +SKIP
    >>> print(b.table())                                  # doctest: +SKIP
    """
    from . import engine_adapter
    from ._mujoco import steps

    drop = Drop() if drop is None else drop
    sys = step_function(engine, drop, k, dt)
    x0 = np.array([drop.height, drop.velocity])
    driver = hybrid_jacobian(sys, x0, 0.0, drop.t_final, dt=dt)
    adapter = engine_adapter(engine)
    start = time.perf_counter()
    _, jac = adapter.jacobian(drop, k, dt, x0)
    wall = time.perf_counter() - start
    return BesideEngine(engine=engine, version=adapter.version, k=float(k), dt=float(dt), driver=driver,
                        engine_jacobian=np.asarray(jac), engine_wall_time_s=wall, engine_steps=steps(drop, dt))
