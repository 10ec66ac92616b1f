"""Batched step functions, Lie-group states, progress and Ctrl-C through ``fm.hybrid_jacobian``
(core: ``hybrid/black_box.rs`` and ``black_box/{rows,manifold}.rs``).

Oracles: the one-state twin of the same numpy step on the same probes (bit for bit); for a
free-floating body, central differences of its step map taken here with the exponential-map
retraction (numpy, independent of the core) and the closed form of torque-free isotropic
flight; a real SIGINT raised inside the step.
"""

from __future__ import annotations

import math
import signal
from typing import Any, Dict, List

import numpy as np
import pytest

import ferromotion as fm

K, M, G, ZETA = 1e5, 1.0, 9.81, 0.1606
C = 2 * ZETA * math.sqrt(K * M)


def penalty_rows(X: np.ndarray, dt: float) -> np.ndarray:
    """The push-only penalty law, semi-implicit Euler, on (m, 2) states."""
    y, v = X[:, 0], X[:, 1]
    force = np.where(y < 0.0, np.maximum(0.0, -K * y - C * v), 0.0)
    v = v + dt * (force / M - G)
    return np.stack([y + dt * v, v], axis=1)


def release_rows(X: np.ndarray) -> np.ndarray:
    return np.where(X[:, 0] < 0.0, -K * X[:, 0] - C * X[:, 1], 1.0)


BATCHED = fm.StepFunction(penalty_rows, guards=[lambda X: X[:, 0], release_rows], resets=[None, None], batch=True)
# The one-state twin: the same numpy arithmetic on one state at a time.
TWIN = fm.StepFunction(lambda x, dt: penalty_rows(x[None, :], dt)[0],
                       guards=[lambda x: x[0], lambda x: release_rows(x[None, :])[0]], resets=[None, None])


def test_a_batched_numpy_step_gives_its_twins_jacobian_in_a_quarter_of_the_time() -> None:
    one = fm.hybrid_jacobian(TWIN, [1.0, 0.0], 0.0, 0.8, dt=1e-4, progress=False)
    many = fm.hybrid_jacobian(BATCHED, [1.0, 0.0], 0.0, 0.8, dt=1e-4, progress=False)
    assert np.array_equal(many.jacobian, one.jacobian) and np.array_equal(many.x, one.x)
    assert many.half_dt is not None and one.half_dt is not None
    assert np.array_equal(many.half_dt.jacobian, one.half_dt.jacobian)
    assert many.events == one.events and many.step_calls == one.step_calls
    assert one.batch_calls == one.step_calls and many.batch_calls is not None
    assert many.batch_calls < one.step_calls / 8
    assert one.wall_time_s is not None and many.wall_time_s is not None
    print(f"\none state: {one.wall_time_s:.2f} s, batched: {many.wall_time_s:.2f} s "
          f"({many.wall_time_s / one.wall_time_s:.3f}x), {many.batch_calls} calls for {many.step_calls} states")
    assert many.wall_time_s < 0.25 * one.wall_time_s


def test_a_cap_on_rows_per_call_keeps_the_answer() -> None:
    sizes: List[int] = []

    def counted(X: np.ndarray, dt: float) -> np.ndarray:
        sizes.append(X.shape[0])
        return penalty_rows(X, dt)

    capped = fm.StepFunction(counted, guards=BATCHED.guards, resets=[None, None], batch=5)
    a = fm.hybrid_jacobian(capped, [1.0, 0.0], 0.0, 0.3, dt=1e-3, progress=False)
    b = fm.hybrid_jacobian(BATCHED, [1.0, 0.0], 0.0, 0.3, dt=1e-3, progress=False)
    assert np.array_equal(a.jacobian, b.jacobian) and max(sizes) == 5


def test_batched_callbacks_are_checked_for_shape_and_batch_is_checked() -> None:
    bad = fm.StepFunction(lambda X, dt: X[:1], batch=True)
    with pytest.raises(fm.InvalidParameter, match=r"step\(X, dt\).*shape"):
        fm.hybrid_jacobian(bad, [1.0, 0.0], 0.0, 0.1, progress=False)
    with pytest.raises(fm.InvalidParameter, match="batch"):
        fm.hybrid_jacobian(fm.StepFunction(penalty_rows, batch=0), [1.0, 0.0], 0.0, 0.1, progress=False)


def test_progress_reports_rows_and_time_left() -> None:
    seen: List[Dict[str, Any]] = []
    fm.hybrid_jacobian(BATCHED, [1.0, 0.0], 0.0, 0.3, dt=1e-3, progress=seen.append)
    assert seen and seen[-1]["rows_done"] == seen[-1]["rows_total"] == 18
    assert all(a["rows_done"] <= b["rows_done"] for a, b in zip(seen, seen[1:]))
    assert seen[-1]["fraction"] == 1.0 and seen[-1]["elapsed_s"] > 0
    with pytest.raises(fm.InvalidParameter, match="progress"):
        fm.hybrid_jacobian(fm.BouncingDrop(), [1.0, 0.0], 0.0, 0.8, progress=False)


def test_ctrl_c_keeps_what_finished_and_says_what_did_not() -> None:
    full = fm.hybrid_jacobian(TWIN, [1.0, 0.0], 0.0, 0.3, dt=1e-3, progress=False)
    calls = [0]
    # One state per call, rows in order: the nominal run, then (+, -) per column at eps. A real
    # SIGINT once the first five rows (x(t1) and J at dt) are about done.
    budget = full.step_calls * 5 // 18

    def interrupted(x: np.ndarray, dt: float) -> np.ndarray:
        calls[0] += 1
        if calls[0] == budget + 400:
            signal.raise_signal(signal.SIGINT)
        return penalty_rows(x[None, :], dt)[0]

    sys = fm.StepFunction(interrupted, guards=TWIN.guards, resets=[None, None])
    with pytest.raises(fm.Interrupted) as e:
        fm.hybrid_jacobian(sys, [1.0, 0.0], 0.0, 0.3, dt=1e-3, progress=False)
    stop = e.value
    assert isinstance(stop, KeyboardInterrupt) and 0 < stop.rows_done < stop.rows_total == 18
    at_dt, at_half = stop.passes
    assert at_dt.x is not None and np.array_equal(at_dt.x, full.x)
    for j in at_dt.columns:
        assert np.array_equal(at_dt.jacobian[:, j], full.jacobian[:, j])
    assert at_half.x is None and at_half.unfinished > 0 and np.isnan(at_half.jacobian).all()
    assert "not finished" in stop.summary and "dt = 5e-4 s" in stop.summary


# A rigid body with isotropic inertia in free fall: x = (p, q (w x y z), v, ω in the body frame).


def qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w1, x1, y1, z1 = np.moveaxis(a, -1, 0)
    w2, x2, y2, z2 = np.moveaxis(b, -1, 0)
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=-1)


def qexp(v: np.ndarray) -> np.ndarray:
    a = np.linalg.norm(v, axis=-1, keepdims=True)
    s = np.where(a > 0, np.sin(a / 2) / np.where(a > 0, a, 1.0), 0.5)
    return np.concatenate([np.cos(a / 2), s * v], axis=-1)


def qlog(q: np.ndarray) -> np.ndarray:
    q = q if q[0] >= 0 else -q
    n = np.linalg.norm(q[1:])
    return q[1:] * (2 * math.atan2(n, q[0]) / n if n > 0 else 2.0)


SEEN: List[np.ndarray] = []


def body_rows(X: np.ndarray, dt: float) -> np.ndarray:
    SEEN.append(X.copy())
    Y = X.copy()
    Y[:, 0:3] = X[:, 0:3] + dt * X[:, 7:10]
    Y[:, 2] -= 0.5 * G * dt * dt
    q = qmul(X[:, 3:7], qexp(dt * X[:, 10:13]))
    Y[:, 3:7] = q / np.linalg.norm(q, axis=1, keepdims=True)
    Y[:, 9] -= G * dt
    return Y


def retract(x: np.ndarray, d: np.ndarray) -> np.ndarray:
    y = x.copy()
    y[0:3] += d[0:3]
    q = qmul(x[3:7], qexp(d[3:6]))
    y[3:7] = q / np.linalg.norm(q)
    y[7:13] += d[6:12]
    return y


def chart(base: np.ndarray, x: np.ndarray) -> np.ndarray:
    conj = base[3:7] * np.array([1.0, -1, -1, -1])
    return np.concatenate([x[0:3] - base[0:3], qlog(qmul(conj, x[3:7])), x[7:13] - base[7:13]])


def test_a_free_floating_body_is_differentiated_in_tangent_coordinates() -> None:
    q0 = qexp(np.array([0.4, -0.3, 0.8]))
    w = np.array([2.0, 1.0, -1.5])
    x0 = np.concatenate([[0.1, -0.2, 1.0], q0, [0.3, 0.0, 0.5], w])
    T, dt = 0.5, 0.01
    SEEN.clear()
    s = fm.hybrid_jacobian(fm.StepFunction(body_rows, batch=True, manifold=[("free", 0)]), x0, 0.0, T, dt=dt,
                           progress=False)
    assert s.jacobian.shape == (12, 12)

    def flow(x: np.ndarray) -> np.ndarray:
        X = x[None, :]
        for _ in range(round(T / dt)):
            X = body_rows(X, dt)
        return X[0]

    # Central differences with the exponential-map retraction, taken here.
    end = flow(x0)
    h = 1e-6
    fd = np.column_stack([(chart(end, flow(retract(x0, h * e))) - chart(end, flow(retract(x0, -h * e)))) / (2 * h)
                          for e in np.eye(12)])
    assert np.max(np.abs(s.jacobian - fd)) < 1e-7
    # And the closed form: dθ(T)/dθ0 = R(ωT)ᵀ, dθ(T)/dω0 = J_r(ωT)·T, dp(T)/dv0 = T.
    phi = w * T
    a = np.linalg.norm(phi)
    k = np.array([[0, -phi[2], phi[1]], [phi[2], 0, -phi[0]], [-phi[1], phi[0], 0]])
    rot = np.eye(3) + math.sin(a) / a * k + (1 - math.cos(a)) / a**2 * k @ k
    jr = np.eye(3) - (1 - math.cos(a)) / a**2 * k + (a - math.sin(a)) / a**3 * k @ k
    want = np.eye(12)
    want[0:3, 6:9] = T * np.eye(3)
    want[3:6, 3:6] = rot.T
    want[3:6, 9:12] = jr * T
    assert np.max(np.abs(s.jacobian - want)) < 1e-7
    # Every state the driver handed the step had a unit quaternion.
    norms = np.concatenate([np.linalg.norm(X[:, 3:7], axis=1) for X in SEEN])
    assert np.max(np.abs(norms - 1.0)) < 1e-15


def test_manifold_blocks_and_quaternions_are_checked() -> None:
    x0 = np.zeros(13)
    x0[3] = 1.0
    with pytest.raises(fm.InvalidParameter, match="manifold"):
        fm.hybrid_jacobian(fm.StepFunction(body_rows, batch=True, manifold=[("hinge", 0)]), x0, 0.0, 0.1)
    with pytest.raises(fm.InvalidParameter, match="manifold"):
        fm.hybrid_jacobian(fm.StepFunction(body_rows, batch=True, manifold=[("free", 8)]), x0, 0.0, 0.1)
    x0[3] = 1.1
    with pytest.raises(fm.InvalidParameter, match="x0"):
        fm.hybrid_jacobian(fm.StepFunction(body_rows, batch=True, manifold=[("free", 0)]), x0, 0.0, 0.1)

    def drifting(X: np.ndarray, dt: float) -> np.ndarray:
        Y = X.copy()
        Y[:, 3] *= 1.001
        return Y

    x0[3] = 1.0
    with pytest.raises(fm.InvalidParameter, match="unit sphere"):
        fm.hybrid_jacobian(fm.StepFunction(drifting, batch=True, manifold=[("ball", 3)]), x0, 0.0, 0.1)
