"""MuJoCo's own ``mj_step`` as a black box: ``fm.engines.step_function("mujoco", ...)`` through
``fm.hybrid_jacobian`` gives the right gradient of MuJoCo's soft contact, where MuJoCo's own
gradient (``mjd_transitionFD`` chained) has the wrong sign.

The oracle is independent of the driver and of MuJoCo: the continuous law MuJoCo's soft
constraint maps onto (ours plus d*m*g while in contact, ``ferromotion.engines._mujoco``;
pinned against native rollouts by test_engines.py::test_native_mujoco_runs_the_mapped_law),
solved here in closed form per phase (parabola; damped oscillator about its equilibrium), the
switches found by bisection on those closed forms, J by central differences of that map.
Never a mock: the engine is the installed MuJoCo. Wall times are printed (``pytest -s``).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is installed only in .venv-engines (scripts/engines_env.sh)")

import ferromotion as fm  # noqa: E402
from ferromotion.engines._mujoco import IMPEDANCE, mjcf  # noqa: E402

DROP = fm.Drop()
K = 1e5
DT = 1e-4


def continuous_mapped_law(drop: fm.Drop, k: float, x0: np.ndarray) -> np.ndarray:
    """x(T) of the continuous law F = max(0, -k y - c v + d m g) for y < 0, closed form per phase."""
    m, g = drop.mass, drop.gravity
    c = 2.0 * drop.zeta * math.sqrt(k * m)
    extra = IMPEDANCE * m * g
    y, v, t, T = float(x0[0]), float(x0[1]), 0.0, drop.t_final

    def flight_to_ground(y: float, v: float) -> float:  # the later root of y + v s - g s^2 / 2 = 0
        return (v + math.sqrt(v * v + 2.0 * g * y)) / g

    s = flight_to_ground(y, v)
    while t + s < T:
        t, v, y = t + s, v - g * s, 0.0
        # Contact: m y'' = -k y - c y' + extra - m g, about y_eq, underdamped.
        w2, z = k / m, c / (2.0 * m)
        wd, y_eq = math.sqrt(w2 - z * z), (extra / m - g) / w2
        a, b = y - y_eq, (v + z * (y - y_eq)) / wd

        def at(s: float, a: float = a, b: float = b, wd: float = wd, z: float = z, y_eq: float = y_eq):
            e, cs, sn = math.exp(-z * s), math.cos(wd * s), math.sin(wd * s)
            return y_eq + e * (a * cs + b * sn), e * (-z * (a * cs + b * sn) + wd * (b * cs - a * sn))

        def pushing(s: float) -> float:  # > 0 while the contact pushes and the ball is below ground
            yy, vv = at(s)
            return min(-k * yy - c * vv + extra, -yy)

        lo, hi = 1e-12, 1e-6
        while pushing(hi) > 0:
            lo, hi = hi, hi + 1e-6
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if pushing(mid) > 0 else (lo, mid)
        if t + hi >= T:
            return np.array(at(T - t))
        t += hi
        y, v = at(hi)
        s = flight_to_ground(y, v)  # released below ground, rising: no force until it lands again
    s = T - t
    return np.array([y + v * s - 0.5 * g * s * s, v - g * s])


def continuous_jacobian(drop: fm.Drop, k: float, eps: float = 1e-6) -> np.ndarray:
    x0 = np.array([drop.height, drop.velocity])
    cols = [(continuous_mapped_law(drop, k, x0 + e) - continuous_mapped_law(drop, k, x0 - e)) / (2 * eps)
            for e in np.eye(2) * eps]
    return np.stack(cols, axis=1)


def test_mj_step_through_the_driver_has_the_continuous_mapped_laws_gradient() -> None:
    want = continuous_jacobian(DROP, K)
    assert want[1, 0] > 0
    b = fm.engines.black_box_beside_engine("mujoco", DROP, k=K, dt=DT)
    s = b.driver
    print("\n" + b.table())
    print(f"continuous mapped law (closed form): dv/dy0 = {want[1, 0]:.4f}; "
          f"driver's max|J - J_law| = {np.max(np.abs(s.jacobian - want)):.2e}")
    # Within 1e-2 of the continuous law's J at MuJoCo's own dt = 1e-4 s (the located map
    # converges to it at first order; at dt/2 it is closer still).
    assert np.max(np.abs(s.jacobian - want)) < 1e-2
    assert s.half_dt is not None
    assert np.max(np.abs(s.half_dt.jacobian - want)) < np.max(np.abs(s.jacobian - want))
    assert s.jacobian[1, 0] > 0
    # MuJoCo's own gradient of the same drop: the fixed-step map's wrong sign.
    assert b.engine_jacobian[1, 0] < 0
    assert b.engine_jacobian[1, 0] == pytest.approx(fm.fixed(DROP, K, DT).jacobian[1, 0], rel=1e-2)
    assert [e.guard for e in s.events] == [0, 1]
    assert s.wall_time_s is not None and s.step_calls is not None and "step calls" in b.table()


def test_mj_step_without_its_release_guard_has_the_release_located_by_the_driver() -> None:
    # MuJoCo's contact force is clamped at zero where its argument changes sign, so the field
    # is continuous there and the driver locates the release from mj_step's own Jacobian:
    # the answer is the one the declared release guard gives.
    x0 = [DROP.height, DROP.velocity]
    declared = fm.hybrid_jacobian(fm.engines.step_function("mujoco", DROP, k=K, dt=DT), x0, 0.0,
                                  DROP.t_final, dt=DT, halve_dt=False)
    sys = fm.engines.step_function("mujoco", DROP, k=K, dt=DT, release=False)
    located = fm.hybrid_jacobian(sys, x0, 0.0, DROP.t_final, dt=DT, halve_dt=False)
    gap = np.max(np.abs(located.jacobian - declared.jacobian))
    print(f"located release: max|J - J_declared| = {gap:.2e} ({located.step_calls} step calls, "
          f"{declared.step_calls} declared)")
    assert gap < 1e-6 * np.max(np.abs(declared.jacobian))
    assert len(located.switches) == 1
    assert [e.guard for e in located.events] == [0, 1]
    assert abs(located.events[1].t - declared.events[1].t) < 1e-9


def test_the_step_function_is_memoryless_mj_step() -> None:
    # Each call clears what an earlier one leaves behind: the same call repeats bit for bit, and
    # equals a fresh MjData's mj_step from the same state, after other calls in between.
    sys = fm.engines.step_function("mujoco", DROP, k=K, dt=DT)
    x = np.array([-1e-3, -2.0])
    first = sys.step(x, DT)
    sys.step(np.array([0.3, 1.0]), 3 * DT)
    assert sys.step(x, DT) == first
    m = mujoco.MjModel.from_xml_string(mjcf(DROP, K, DT))
    d = mujoco.MjData(m)
    d.qpos[0], d.qvel[0] = x
    mujoco.mj_step(m, d)
    assert first == [d.qpos[0], d.qvel[0]]


def test_the_step_function_docstring_example_runs() -> None:
    import doctest

    import ferromotion.engines._step_function as mod

    start = time.perf_counter()
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
    print(f"\nstep_function's docstring example: {time.perf_counter() - start:.1f} s")
