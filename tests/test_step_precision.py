"""A step function's declared precision (``fm.StepFunction(..., precision=...)``; the core's
``hybrid/black_box/precision.rs``): the penalty drop written in float32 arithmetic (numpy
float32 throughout, as a float32 engine computes it; both guards computed as the step
computes them) is refused when taken for float64 and answered when it says float32, within
the tolerance the answer states of ``fm.corrected`` (the derivative of the same event-located
Euler map in float64, forward-mode duals: an independent route). A float64 step's answer and
probe do not change.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ferromotion as fm

DROP = fm.Drop()
K, DT = 1e4, 1e-3


def penalty(precision: str) -> fm.StepFunction:
    f = np.float32 if precision == "float32" else np.float64
    m, g, k = f(DROP.mass), f(DROP.gravity), f(K)
    c = f(2.0 * DROP.zeta * math.sqrt(K * DROP.mass))

    def step(x: np.ndarray, dt: float) -> list:
        y, v = f(x[0]), f(x[1])
        force = max(f(0.0), -k * y - c * v) if y < 0 else f(0.0)
        v = v + f(dt) * (force / m - g)
        return [float(y + f(dt) * v), float(v)]

    def release(x: np.ndarray) -> float:
        y, v = f(x[0]), f(x[1])
        return float(-k * y - c * v) if y < 0 else 1.0

    return fm.StepFunction(step, guards=[lambda x: float(f(x[0])), release], resets=[None, None],
                           precision=precision)


def solve(sys: fm.StepFunction) -> fm.HybridSolution:
    return fm.hybrid_jacobian(sys, [1.0, 0.0], 0.0, 0.8, dt=DT, halve_dt=False, progress=False)


def test_a_float32_step_declared_float32_is_answered_within_its_stated_tolerance() -> None:
    s = solve(penalty("float32"))
    r = s.resolution
    assert r["precision"] == 2.0 ** -24
    assert r["eps"] == pytest.approx(1e-6 * 2.0 ** (29 / 3), rel=1e-12)  # the float64 probe x (u32/u64)^(1/3)
    assert len(s.events) == 2
    want = fm.corrected(DROP, K, DT).jacobian
    err = np.max(np.abs(s.jacobian - want)) / max(1.0, np.max(np.abs(want)))
    assert err <= r["probe_rtol"] and err < 1e-2, (err, r)


def test_a_float32_step_taken_for_float64_is_refused() -> None:
    sys = penalty("float32")
    with pytest.raises((fm.UnguardedSwitch, fm.ProbeDependent)):
        solve(fm.StepFunction(sys.step, guards=sys.guards, resets=sys.resets))


def test_a_float64_step_keeps_the_float64_probe_and_tolerances() -> None:
    s = solve(penalty("float64"))
    assert s.resolution == {"precision": 2.0 ** -53, "eps": 1e-6, "probe_rtol": 1e-6, "switch_eps": 1e-6,
                            "switch_floor": 1e-6}
    assert np.max(np.abs(s.jacobian - fm.corrected(DROP, K, DT).jacobian)) < 1e-6


@pytest.mark.parametrize("bad", ["float16", 0.5, 1e-20])
def test_a_precision_out_of_range_is_refused_naming_it(bad) -> None:
    with pytest.raises(fm.InvalidParameter, match="precision"):
        solve(fm.StepFunction(lambda x, dt: x, precision=bad))
