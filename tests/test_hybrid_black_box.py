"""Black-box hybrid qualification through the binding (issue 14): ``fm.hybrid_jacobian`` on a
``fm.StepFunction``. Oracles: the closed-form rigid drop (``fm.exact``), the closed-form
Jacobian and split residual of an explicit Euler map; the driver's physics is tested in cargo
(crates/ferromotion-core/tests/black_box_step_jacobian.rs)."""

from __future__ import annotations

from typing import Any, List

import numpy as np
import pytest

import ferromotion as fm

G = 9.81
E = fm.limit_restitution(fm.Drop())


def flight(x: np.ndarray, dt: float) -> List[float]:
    """Free flight, exact over any dt (the parabola)."""
    return [x[0] + x[1] * dt - 0.5 * G * dt * dt, x[1] - G * dt]


def rk4(x: np.ndarray, dt: float) -> np.ndarray:
    """Classical RK4 of x' = v, v' = -g."""
    def f(x: np.ndarray) -> np.ndarray:
        return np.array([x[1], -G])
    k1 = f(x)
    k2 = f(x + dt / 2 * k1)
    k3 = f(x + dt / 2 * k2)
    k4 = f(x + dt * k3)
    return x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def ground(x: np.ndarray) -> float:
    return float(x[0])


def bounce(x: np.ndarray) -> List[float]:
    return [x[0], -E * x[1]]


@pytest.mark.parametrize("step", [flight, rk4], ids=["free flight", "rk4"])
@pytest.mark.parametrize("t_final", [0.8, 1.9])
def test_a_black_box_step_reproduces_the_closed_form_drop(step: Any, t_final: float) -> None:
    truth = fm.exact(fm.Drop(t_final=t_final))
    s = fm.hybrid_jacobian(fm.StepFunction(step, guards=[ground], resets=[bounce]), [1.0, 0.0], 0.0, t_final)
    assert np.max(np.abs(s.jacobian - truth.jacobian)) / np.max(np.abs(truth.jacobian)) < 1e-6
    np.testing.assert_allclose(s.x, truth.state, atol=1e-9)
    assert s.jacobian.shape == (2, 2) and s.jacobian.dtype == np.float64 and not s.jacobian.flags.writeable
    assert len(s.events) == (1 if t_final < 1 else 6)
    assert s.split_residual is not None and s.split_residual < 1e-14
    # The spectral radius and worst gain are those of the returned J.
    assert s.spectral_radius == pytest.approx(np.max(np.abs(np.linalg.eigvals(s.jacobian))), rel=1e-12)
    assert s.worst_gain == pytest.approx(np.linalg.svd(s.jacobian, compute_uv=False)[0], rel=1e-12)
    assert s.to_dict()["split_residual"] == s.split_residual


def test_an_honest_euler_step_passes_the_hidden_state_measurement() -> None:
    def euler(x: np.ndarray, dt: float) -> List[float]:
        return [x[0] + dt * x[1], x[1] - G * dt]

    s = fm.hybrid_jacobian(fm.StepFunction(euler), [1.0, 0.0], 0.0, 0.5, dt=1e-3)
    # Its split residual is its local error, g h^2 (falls 4x when h halves): not memory.
    assert s.split_residual == pytest.approx(G * 1e-6, rel=1e-9)
    # The Euler map's Jacobian: the product of [[1, dt], [0, 1]], i.e. [[1, T], [0, 1]].
    np.testing.assert_allclose(s.jacobian, [[1.0, 0.5], [0.0, 1.0]], atol=1e-8)


class Leaky:
    """Free flight whose velocity carries a bias from its previous call: undeclared memory."""

    def __init__(self) -> None:
        self.last = 0.0

    def __call__(self, x: np.ndarray, dt: float) -> List[float]:
        y = flight(x, dt)
        y[1] += 1e-6 * self.last
        self.last = y[0]
        return y


def test_undeclared_memory_is_refused_with_hidden_state() -> None:
    with pytest.raises(fm.HiddenState, match="bit for bit") as e:
        fm.hybrid_jacobian(fm.StepFunction(Leaky(), guards=[ground], resets=[bounce], name="leaky drop"),
                           [1.0, 0.0], 0.0, 0.8)
    assert "hidden state in `leaky drop`" in str(e.value)
    # The same step without its memory is accepted.
    assert len(fm.hybrid_jacobian(fm.StepFunction(flight, [ground], [bounce]), [1.0, 0.0], 0.0, 0.8).events) == 1


def test_an_exception_inside_the_step_is_re_raised_unchanged() -> None:
    class Boom(Exception):
        pass

    boom = Boom("the simulator failed")
    calls = []

    def step(x: np.ndarray, dt: float) -> List[float]:
        calls.append(dt)
        if len(calls) > 20:
            raise boom
        return flight(x, dt)

    with pytest.raises(Boom) as e:
        fm.hybrid_jacobian(fm.StepFunction(step, [ground], [bounce]), [1.0, 0.0], 0.0, 0.8)
    assert e.value is boom

    def bad_guard(x: np.ndarray) -> float:
        raise KeyError("guard")

    with pytest.raises(KeyError, match="guard"):
        fm.hybrid_jacobian(fm.StepFunction(flight, [bad_guard]), [1.0, 0.0], 0.0, 0.8)


def test_nan_from_the_step_is_non_finite() -> None:
    def step(x: np.ndarray, dt: float) -> List[float]:
        y = flight(x, dt)
        return [float("nan") if y[0] < 0.5 else y[0], y[1]]

    with pytest.raises(fm.NonFinite, match="step"):
        fm.hybrid_jacobian(fm.StepFunction(step), [1.0, 0.0], 0.0, 0.8)


def height_at(t: float) -> float:
    return 1.0 - 0.5 * G * t * t


def weak_bounce(e: float) -> fm.StepFunction:
    """Free flight over the ground with the bounce (y, -e v): a small e brings the ball back
    within one or two 10 ms steps."""
    return fm.StepFunction(flight, [ground], [lambda x: [x[0], -e * x[1]]])


def test_one_guard_twice_in_adjacent_steps_is_refused() -> None:
    # From 1 m the ball lands at 0.4515 s at 4.43 m/s; with e = 0.01 it is back 9.0 ms later,
    # at 0.4605 s: the steps [0.45, 0.46] and [0.46, 0.47] at dt = 10 ms (a chattering contact).
    with pytest.raises(fm.EventsInAdjacentSteps, match="adjacent steps at t = 0.45"):
        fm.hybrid_jacobian(weak_bounce(0.01), [1.0, 0.0], 0.0, 0.5, dt=1e-2)


def test_one_guard_twice_in_one_step_is_refused() -> None:
    # With e = 0.001 it is back 0.9 ms later, inside the same 10 ms step.
    with pytest.raises(fm.TwoEventsInOneStep, match="guard 0 crossed twice"):
        fm.hybrid_jacobian(weak_bounce(0.001), [1.0, 0.0], 0.0, 0.5, dt=1e-2)


def test_two_guards_in_one_step_are_located_in_order() -> None:
    # Guards at the heights passed at 0.3192 s and 0.3197 s, both inside the 1 ms step
    # [0.319, 0.320], and at 0.3195 s and 0.3205 s (adjacent steps): each is located on its
    # own. Without resets the step's law is unchanged, so J is free flight's exactly.
    for ta, tb in [(0.3192, 0.3197), (0.3195, 0.3205)]:
        a, b = height_at(ta), height_at(tb)
        s = fm.hybrid_jacobian(fm.StepFunction(flight, [lambda x: x[0] - a, lambda x: x[0] - b]),
                               [1.0, 0.0], 0.0, 0.4)
        assert [e.guard for e in s.events] == [0, 1]
        assert [e.t for e in s.events] == pytest.approx([ta, tb], abs=1e-12)
        np.testing.assert_allclose(s.jacobian, [[1.0, 0.4], [0.0, 1.0]], atol=1e-6)


def test_grazing_and_too_many_steps() -> None:
    with pytest.raises(fm.Grazing, match="grazing impact"):
        fm.hybrid_jacobian(fm.StepFunction(flight, [ground], [bounce]), [4e-8, 0.0], 0.0, 1.5e-4, dt=1e-5)
    with pytest.raises(fm.TooManySteps):
        fm.hybrid_jacobian(fm.StepFunction(flight, [ground], [bounce]), [1.0, 0.0], 0.0, 0.8, max_steps=10)


def test_bad_step_functions_are_named() -> None:
    with pytest.raises(TypeError, match="step must be callable"):
        fm.hybrid_jacobian(fm.StepFunction(3.0), [1.0, 0.0], 0.0, 0.8)  # type: ignore[arg-type]
    with pytest.raises(fm.InvalidParameter, match="one per guard"):
        fm.hybrid_jacobian(fm.StepFunction(flight, [ground], [bounce, bounce]), [1.0, 0.0], 0.0, 0.8)
    with pytest.raises(fm.InvalidParameter, match=r"shape \(2,\)"):
        fm.hybrid_jacobian(fm.StepFunction(lambda x, dt: [1.0, 2.0, 3.0]), [1.0, 0.0], 0.0, 0.8)
    with pytest.raises(fm.InvalidParameter, match="eps"):
        fm.hybrid_jacobian(fm.BouncingDrop(), [1.0, 0.0], 0.0, 0.8, eps=1e-6)
    with pytest.raises(fm.InvalidParameter, match="mode"):
        fm.hybrid_jacobian(fm.StepFunction(flight), [1.0, 0.0], 0.0, 0.8, mode=1)
    with pytest.raises(fm.ScenarioError):
        fm.hybrid_jacobian(fm.StepFunction(flight), [1.0, 0.0], 0.0, 0.8, eps="big")  # type: ignore[arg-type]


def test_a_reset_of_none_leaves_the_state_continuous() -> None:
    # A guard with no reset at the ground, and the bounce applied nowhere: free flight through.
    s = fm.hybrid_jacobian(fm.StepFunction(flight, [ground], [None]), [1.0, 0.0], 0.0, 0.8)
    assert len(s.events) == 1
    np.testing.assert_allclose(s.jacobian, [[1.0, 0.8], [0.0, 1.0]], atol=1e-8)


def test_the_docstring_examples_run() -> None:
    import doctest

    import ferromotion.hybrid

    result = doctest.testmod(ferromotion.hybrid, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
