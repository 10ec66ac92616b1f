"""Soft contact through the black-box driver: a step function whose law changes at a guard
with no reset, its branch decided at each step's start (as every engine decides it).

The step is written here as a user would: semi-implicit Euler on the push-only penalty law,
force ``max(0, -k*y - c*v)`` below ground, c = 2*zeta*sqrt(k*m). The oracle is ``fm.corrected``
at the same dt (the derivative of the event-located Euler map by forward-mode duals through the
located switches, in the core, a second route to the same object); the answer at dt/2 is
checked against ``fm.corrected`` at dt/2. Wall time per answer is printed (``pytest -s``).
"""

from __future__ import annotations

import math
from typing import List

import numpy as np
import pytest

import ferromotion as fm

DROP = fm.Drop()
DT = 1e-4


def penalty(k: float) -> fm.StepFunction:
    """Our law as a plain Python step, with its entry (y) and release (the force's argument) guards."""
    m, g = DROP.mass, DROP.gravity
    c = 2.0 * DROP.zeta * math.sqrt(k * m)

    def step(x: np.ndarray, dt: float) -> List[float]:
        y, v = float(x[0]), float(x[1])
        force = max(0.0, -k * y - c * v) if y < 0.0 else 0.0
        v = v + dt * (force / m - g)
        return [y + dt * v, v]

    def release(x: np.ndarray) -> float:
        return -k * x[0] - c * x[1] if x[0] < 0.0 else 1.0

    return fm.StepFunction(step, guards=[lambda x: float(x[0]), release], resets=[None, None],
                           name=f"penalty Euler step, k = {k:g}")


@pytest.mark.parametrize("k", [1e4, 1e5, 1e6])
def test_our_penalty_step_through_the_driver_is_the_corrected_route_at_the_same_dt(k: float) -> None:
    s = fm.hybrid_jacobian(penalty(k), [DROP.height, DROP.velocity], 0.0, DROP.t_final, dt=DT)
    want = fm.corrected(DROP, k, DT).jacobian
    assert np.max(np.abs(s.jacobian - want)) < 1e-3, (s.jacobian, want)
    assert s.jacobian[1, 0] > 0  # the fixed step's is negative (-58.5 at k = 1e5)
    assert fm.fixed(DROP, k, DT).jacobian[1, 0] < 0
    assert [e.guard for e in s.events] == [0, 1]
    # The answer at dt/2, and the spread the two give.
    assert s.half_dt is not None
    half = s.half_dt.jacobian
    assert np.max(np.abs(half - fm.corrected(DROP, k, DT / 2).jacobian)) < 1e-3
    spread = np.max(np.abs(s.jacobian - half)) / max(1.0, np.max(np.abs(s.jacobian)))
    assert s.half_dt.spread == pytest.approx(spread, rel=1e-12)
    assert s.step_calls is not None and s.step_calls > 2 * round(DROP.t_final / DT)
    assert s.wall_time_s is not None and s.wall_time_s > 0
    assert "dt/2 spread" in repr(s) and "step calls" in repr(s)
    print(f"\nk = {k:g}: dv/dy0 = {s.jacobian[1, 0]:.5f} (corrected {want[1, 0]:.5f}), at dt/2 {half[1, 0]:.5f}, "
          f"spread {s.half_dt.spread:.2e}; {s.step_calls} step calls in {s.wall_time_s:.2f} s")


def test_without_the_release_guard_the_driver_locates_the_release_itself() -> None:
    k = 1e5
    sys = penalty(k)
    entry_only = fm.StepFunction(sys.step, guards=sys.guards[:1], resets=[None])
    declared = fm.hybrid_jacobian(sys, [1.0, 0.0], 0.0, 0.8, dt=DT)
    located = fm.hybrid_jacobian(entry_only, [1.0, 0.0], 0.0, 0.8, dt=DT)
    # The same located map as with the release declared (a second route to it), at dt and dt/2.
    scale = np.max(np.abs(declared.jacobian))
    assert np.max(np.abs(located.jacobian - declared.jacobian)) < 1e-6 * scale
    assert declared.half_dt is not None and located.half_dt is not None
    assert np.max(np.abs(located.half_dt.jacobian - declared.half_dt.jacobian)) < 1e-6 * scale
    # One switch, met where the declared release fires, numbered after the declared guard.
    assert len(located.switches) == 1 and declared.switches == ()
    release = [e.t for e in declared.events if e.guard == 1]
    assert [e.guard for e in located.events] == [0, 1]
    assert abs(located.events[1].t - release[0]) < 1e-9
    # Its surface is the force's argument -k*y - c*v = 0: the unit normal, towards the side
    # before the release (the argument positive), is -(k, c)/|(k, c)|.
    c = 2.0 * DROP.zeta * math.sqrt(k * DROP.mass)
    want = -np.array([k, c]) / math.hypot(k, c)
    assert np.max(np.abs(located.switches[0].normal - want)) < 1e-6
    assert "1 undeclared switches located" in repr(located)
    assert located.to_dict()["switches"][0]["t"] == located.switches[0].t


def test_a_release_where_the_force_jumps_is_refused_and_says_why() -> None:
    # Without the push-only clamp the force pulls until y = 0 and then stops: the field jumps
    # at that undeclared switch, so the driver cannot stand a plane in for its guard.
    k, m, g = 1e5, DROP.mass, DROP.gravity
    c = 2.0 * DROP.zeta * math.sqrt(k * m)

    def step(x: np.ndarray, dt: float) -> List[float]:
        y, v = float(x[0]), float(x[1])
        force = -k * y - c * v if y < 0.0 else 0.0
        v = v + dt * (force / m - g)
        return [y + dt * v, v]

    sys = fm.StepFunction(step, guards=[lambda x: float(x[0])], resets=[None])
    with pytest.raises(fm.UnguardedSwitch, match="field jumps there") as e:
        fm.hybrid_jacobian(sys, [1.0, 0.0], 0.0, 0.8, dt=DT)
    assert "declare that switch as a guard with reset None" in str(e.value)
    assert e.value.fields["reason"].startswith("it was located at t = ")


def test_a_soft_entry_too_slow_to_locate_is_grazing() -> None:
    with pytest.raises(fm.Grazing):
        fm.hybrid_jacobian(penalty(1e5), [4e-8, 0.0], 0.0, 1.5e-4, dt=1e-5)


def test_a_soft_step_with_memory_is_hidden_state() -> None:
    inner = penalty(1e5).step
    last: List[float] = [0.0]

    def leaky(x: np.ndarray, dt: float) -> List[float]:
        y = inner(x, dt)
        y[1] += 1e-9 * last[0]
        last[0] = y[0]
        return y

    with pytest.raises(fm.HiddenState):
        fm.hybrid_jacobian(fm.StepFunction(leaky, penalty(1e5).guards, [None, None]), [1.0, 0.0], 0.0, 0.8, dt=DT)


def test_halve_dt_is_a_step_function_option() -> None:
    s = fm.hybrid_jacobian(penalty(1e5), [1.0, 0.0], 0.0, 0.8, dt=DT, halve_dt=False)
    assert s.half_dt is None and s.to_dict()["half_dt"] is None
    with pytest.raises(fm.InvalidParameter, match="halve_dt"):
        fm.hybrid_jacobian(fm.BouncingDrop(), [1.0, 0.0], 0.0, 0.8, halve_dt=False)


