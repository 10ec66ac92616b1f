"""Simultaneous events through the black-box driver: a plain Python step function whose
guards are crossed at one instant on the nominal run. Each probe crosses them in the order
its own perturbation selects, and the derivative's pieces are measured from the probes.
Oracles: the declared systems' drivers (the switched field's pieces are exact: a constant
field per mode; the penalty rod's variational equations integrated through its events), a
different route from the black box's differences of whole runs."""

from __future__ import annotations

import numpy as np
import pytest

import ferromotion as fm

# The switched field of fm.systems.SwitchedField's defaults: the velocity before either
# switch, after x1's alone, after x2's alone and after both.
BEFORE, AFTER_1, AFTER_2, BOTH = (-1.0, -1.0), (-1.0, -2.0), (-2.0, -1.0), (-3.0, -3.0)


def switched_step(X: np.ndarray, dt: float) -> np.ndarray:
    """Euler on the piecewise-constant field, the mode read at the step's start (exact within
    a mode); batched: X is (m, 2)."""
    a, b = X[:, 0] <= 0, X[:, 1] <= 0
    v = np.where((a & b)[:, None], BOTH,
                 np.where(a[:, None], AFTER_1, np.where(b[:, None], AFTER_2, BEFORE)))
    return X + dt * v


def test_switched_field_black_box_measures_both_pieces_of_the_declared_system() -> None:
    sys = fm.StepFunction(switched_step, guards=[lambda X: X[:, 0], lambda X: X[:, 1]],
                          resets=[None, None], batch=True)
    bb = fm.hybrid_jacobian(sys, [1.0, 1.0], 0.0, 1.5, dt=1e-4, progress=False)
    exact = fm.hybrid_jacobian(fm.systems.SwitchedField(), [1.0, 1.0], 0.0, 1.5)
    assert not bb.differentiable
    with pytest.raises(fm.NotDifferentiable, match="2 linear pieces"):
        bb.jacobian
    assert sorted(p.orders for p in bb.pieces) == sorted(p.orders for p in exact.pieces)
    for p in bb.pieces:
        q = next(q for q in exact.pieces if q.orders == p.orders)
        np.testing.assert_allclose(p.matrix, q.matrix, atol=1e-3)
        # Same cone: the rows point the same way.
        for r, s in zip(p.cone, q.cone):
            assert np.dot(r, s) / (np.linalg.norm(r) * np.linalg.norm(s)) > 1 - 1e-6
    rng = np.random.default_rng(3)
    for d in rng.normal(size=(8, 2)):
        np.testing.assert_allclose(bb.jvp(d), exact.jvp(d), atol=1e-3 * np.abs(d).max())


M, L, I, K, C, G = 1.0, 1.0, 1.0 / 12.0, 1e4, 10.0, 9.81
SIDE = np.array([-1.0, 1.0])


def rod_ends(X: np.ndarray):
    g = X[:, 1:2] + SIDE * 0.5 * L * np.sin(X[:, 2:3])
    rate = X[:, 4:5] + SIDE * 0.5 * L * np.cos(X[:, 2:3]) * X[:, 5:6]
    return g, rate


def rod_rhs(X: np.ndarray, on: np.ndarray) -> np.ndarray:
    g, rate = rod_ends(X)
    force = np.where(on, np.maximum(0.0, -K * g - C * rate), 0.0)
    arm = SIDE * 0.5 * L * np.cos(X[:, 2:3])
    d = np.zeros_like(X)
    d[:, 0:3] = X[:, 3:6]
    d[:, 4] = force.sum(1) / M - G
    d[:, 5] = (arm * force).sum(1) / I
    return d


def rod_step(X: np.ndarray, dt: float) -> np.ndarray:
    """RK4 on the rod with a push-only spring-damper per end, which ends push decided at the
    step's start (as engines decide their contacts)."""
    g, rate = rod_ends(X)
    on = (g < 0) & (-K * g - C * rate > 0)
    k1 = rod_rhs(X, on)
    k2 = rod_rhs(X + 0.5 * dt * k1, on)
    k3 = rod_rhs(X + 0.5 * dt * k2, on)
    k4 = rod_rhs(X + dt * k3, on)
    return X + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def entry(i: int):
    return lambda X: rod_ends(X)[0][:, i]


def release(i: int):
    def guard(X: np.ndarray) -> np.ndarray:
        g, rate = rod_ends(X)
        return np.where(g[:, i] < 0, -K * g[:, i] - C * rate[:, i], 1.0)
    return guard


def test_penalty_rod_black_box_commutes_and_matches_the_declared_jacobian() -> None:
    # Dropped flat from 0.3 m: both ends touch at 0.247 s and leave at once 22 ms later.
    x0 = [0.0, 0.3, 0.0, 0.0, 0.0, 0.0]
    sys = fm.StepFunction(rod_step, guards=[entry(0), entry(1), release(0), release(1)],
                          resets=[None] * 4, batch=True)
    bb = fm.hybrid_jacobian(sys, x0, 0.0, 0.3, dt=1e-4, progress=False)
    rod = fm.systems.PenaltyRod(mass=M, length=L, inertia=I, stiffness=K, damping=C)
    declared = fm.hybrid_jacobian(rod, x0, 0.0, 0.3, dt=1e-4)
    assert declared.commuted and bb.commuted
    assert len(bb.pieces) == 4  # entry order x release order, each measured
    scale = max(1.0, np.abs(declared.jacobian).max())
    assert np.abs(bb.jacobian - declared.jacobian).max() < 1e-3 * scale
    np.testing.assert_allclose(bb.x, declared.x, atol=1e-6)
