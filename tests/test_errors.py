"""The exception tree through the binding: one class per core error variant, each raised
by real input, with the core's message."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ferromotion as fm
from ferromotion import _core

def _unclamped_step(x: np.ndarray, dt: float) -> list:
    """Semi-implicit Euler on a penalty law without the push-only clamp (k = 1e5 N/m, zeta =
    0.1606, m = 1 kg): below ground the force -k y - c v, pulling near the ground on the way up."""
    k, c = 1e5, 2 * 0.1606 * math.sqrt(1e5)
    force = -k * x[0] - c * x[1] if x[0] < 0 else 0.0
    v = x[1] + dt * (force - 9.81)
    return [x[0] + dt * v, v]


VARIANTS = [
    "InvalidParameter",
    "StepDoesNotDivide",
    "TooManySteps",
    "NoImpact",
    "Grazing",
    "StepSizeUnderflow",
    "StepTooSmall",
    "NonFinite",
    "HiddenState",
    "TwoEventsInOneStep",
    "EventsInAdjacentSteps",
    "ProbeDependent",
    "UnguardedSwitch",
    "ContactSolveFailed",
    "Unstable",
    "ScenarioError",
]


def test_hierarchy_is_pinned() -> None:
    assert issubclass(fm.FerroError, Exception)
    assert fm.FerroError.__module__ == "ferromotion"
    for name in VARIANTS:
        cls = getattr(fm, name)
        assert cls is getattr(_core, name)
        assert issubclass(cls, fm.FerroError), name
        assert cls.__module__ == "ferromotion", name
        assert cls.__doc__, name
    # Only bad input values also read as ValueError.
    assert issubclass(fm.InvalidParameter, ValueError)
    assert [n for n in VARIANTS if issubclass(getattr(fm, n), ValueError)] == ["InvalidParameter"]
    # The classes are distinct (no variant shares another's class).
    assert len({getattr(fm, n) for n in VARIANTS}) == len(VARIANTS)


D = fm.Drop()


class SpringWall:
    """A mass on a spring (omega = 10 rad/s) bouncing off a wall at x = -0.05 m, written in
    Python: RK4 does not integrate this flow exactly, so at omega dt = 0.5 the Jacobian moves
    when the step is halved."""

    dim = 2

    def rhs(self, mode, x):
        return [x[1], -100.0 * x[0]]

    def rhs_jacobian(self, mode, x):
        return [[0.0, 1.0], [-100.0, 0.0]]

    def guard_count(self, mode):
        return 1

    def guard(self, mode, i, x):
        return x[0] + 0.05

    def guard_gradient(self, mode, i, x):
        return [1.0, 0.0]

    def reset(self, mode, i, x):
        return mode, [x[0], -0.8 * x[1]]

    def reset_jacobian(self, mode, i, x):
        return [[1.0, 0.0], [0.0, -0.8]]


# Legs of a milligram: Lemke's method on their contact problem ends on a ray.
WEIGHTLESS = {"trunk_mass": 1e-6, "thigh_mass": 1e-6, "shank_mass": 1e-6}

# (what, call, exception, text the core's message carries)
CASES = [
    ("height non-finite", lambda: fm.Drop(height=math.nan), fm.InvalidParameter, "`height`"),
    ("velocity non-finite", lambda: fm.Drop(velocity=math.inf), fm.InvalidParameter, "`velocity`"),
    ("k non-finite", lambda: fm.fixed(D, k=math.inf, dt=1e-4), fm.InvalidParameter, "`k`"),
    ("k = 0", lambda: fm.fixed(D, k=0.0, dt=1e-4), fm.InvalidParameter, "`k`"),
    ("k < 0 flow", lambda: fm.flow(D, k=-1.0), fm.InvalidParameter, "`k`"),
    ("k < 0 tolerance", lambda: fm.tolerance(D, k=-1.0), fm.InvalidParameter, "`k`"),
    ("k < 0 in a sweep", lambda: fm.sweep(D, k=[1e4, -1.0]), fm.InvalidParameter, "`k`"),
    ("dt = 0", lambda: fm.fixed(D, k=1e6, dt=0.0), fm.InvalidParameter, "`dt`"),
    ("dt < 0 in a sweep", lambda: fm.sweep(D, k=[1e4], dt=-1e-4), fm.InvalidParameter, "`dt`"),
    ("rtol = 0", lambda: fm.tolerance(D, k=1e6, rtol=0.0), fm.InvalidParameter, "`rtol`"),
    ("t_final <= 0", lambda: fm.Drop(t_final=0.0), fm.InvalidParameter, "`t_final`"),
    ("zeta = 1", lambda: fm.Drop(zeta=1.0), fm.InvalidParameter, "`zeta`"),
    ("zeta < 0", lambda: fm.Drop(zeta=-0.1), fm.InvalidParameter, "`zeta`"),
    ("dt does not divide T", lambda: fm.fixed(D, k=1e6, dt=3e-4), fm.StepDoesNotDivide, "does not divide"),
    ("corrected: dt", lambda: fm.corrected(D, k=1e6, dt=3e-4), fm.StepDoesNotDivide, "does not divide"),
    # T = 0.8 s over the cap of 1e7 steps: dt must be at least 0.8 / 1e7 = 8e-8 s.
    ("too many steps", lambda: fm.fixed(D, k=1e6, dt=1e-8), fm.TooManySteps, "the smallest dt within the cap is 8e-8 s"),
    ("no impact before T", lambda: fm.Drop(height=100.0), fm.NoImpact, "no impact before"),
    ("grazing impact", lambda: fm.exact(fm.Drop(height=1e-8)), fm.Grazing, "grazing"),
    # rtol is refused below 1e-14 (InvalidParameter); an atol far below what a double resolves at y = 0 still underflows.
    ("step size underflow", lambda: fm.tolerance(D, k=1e6, rtol=1e-14, atol=1e-100), fm.StepSizeUnderflow,
     "below what a double can resolve"),
    ("rtol below 1e-14", lambda: fm.tolerance(D, k=1e6, rtol=1e-100), fm.InvalidParameter, "at least 1e-14"),
    (
        "step below min_step",
        # At k = 1e8 the contact lasts pi/1e4 s: rtol 1e-10 asks for steps far below 1e-5 s.
        lambda: fm.tolerance(D, k=1e8, rtol=1e-10, events=True, min_step=1e-5),
        fm.StepTooSmall,
        "min_step",
    ),
    (
        "non-finite result",
        lambda: fm.tolerance(fm.Drop(mass=1e-300), k=1e6, rtol=1e-6),
        fm.NonFinite,
        "not finite",
    ),
    (
        "hybrid: grazing event",
        lambda: fm.hybrid_jacobian(fm.BouncingDrop(), [4e-8, 0.0], 0.0, 1.5e-4, dt=1e-5),
        fm.Grazing,
        "time-of-impact term would be",
    ),
    (
        "hybrid: hidden state",
        lambda: fm.hybrid_jacobian(fm.WarmStartedDrop(), [1.0, 0.0], 0.0, 0.8),
        fm.HiddenState,
        "hidden state in `drop with a warm-started contact solver`",
    ),
    (
        "hybrid: a bounce that decays to grazing",
        # A bounce with e = 0.01 returns 0.9 ms after the impact: both fit in a 10 ms step, and
        # events in one step are now located in order, so the bounces shrink until one grazes.
        lambda: fm.hybrid_jacobian(fm.BouncingDrop(restitution=0.01), [1.0, 0.0], 0.0, 0.6, dt=1e-2,
                                   probe_rtol=0.0, graze_speed=1e-6),
        fm.Grazing,
        "grazing impact",
    ),
    (
        "hybrid: one guard twice in one step (a step function)",
        # From 1 m the ball lands at 0.4515 s; bounced with e = 0.001 it is back 0.9 ms later,
        # inside the same 10 ms step: a chattering contact the step does not resolve.
        lambda: fm.hybrid_jacobian(
            fm.StepFunction(lambda x, dt: [x[0] + x[1] * dt - 4.905 * dt * dt, x[1] - 9.81 * dt],
                            guards=[lambda x: x[0]], resets=[lambda x: [x[0], -0.001 * x[1]]]),
            [1.0, 0.0], 0.0, 0.5, dt=1e-2),
        fm.TwoEventsInOneStep,
        "two events in one step",
    ),
    (
        "hybrid: one guard in adjacent steps (a step function)",
        # With e = 0.01 it is back 9.0 ms later, in the next 10 ms step.
        lambda: fm.hybrid_jacobian(
            fm.StepFunction(lambda x, dt: [x[0] + x[1] * dt - 4.905 * dt * dt, x[1] - 9.81 * dt],
                            guards=[lambda x: x[0]], resets=[lambda x: [x[0], -0.01 * x[1]]]),
            [1.0, 0.0], 0.0, 0.5, dt=1e-2),
        fm.EventsInAdjacentSteps,
        "events in adjacent steps at t = 0.45",
    ),
    (
        "hybrid: a step function's law changes with no guard, where its field jumps",
        # Semi-implicit Euler on F = -k y - c v below ground (no push-only clamp), k = 1e5: the
        # entry is guarded; the force stops at y = 0 on the way up, pulling until then, and no
        # guard says so. A switch with a continuous field (the clamped law's release) is located
        # by the driver; this one it cannot stand in for.
        lambda: fm.hybrid_jacobian(fm.StepFunction(_unclamped_step, guards=[lambda x: x[0]], resets=[None]),
                                   [1.0, 0.0], 0.0, 0.5, dt=1e-4, halve_dt=False),
        fm.UnguardedSwitch,
        "declare that switch as a guard with reset None",
    ),
    (
        "hybrid: probe-dependent (a Python system)",
        lambda: fm.hybrid_jacobian(SpringWall(), [0.1, 0.0], 0.0, 1.0, dt=0.05),
        fm.ProbeDependent,
        "probe-dependent answer: recomputing with dt/2",
    ),
    (
        "hybrid: probe-dependent (tolerance below round-off)",
        lambda: fm.hybrid_jacobian(fm.SlopeBall(angle=0.3), [0.0, 1.0, 0.5, 0.0], 0.0, 1.2, probe_rtol=1e-18),
        fm.ProbeDependent,
        "above the tolerance",
    ),
    ("quadruped: unstable penalty step", lambda: fm.quadruped_rollout(1e8), fm.Unstable, "unstable step at t ="),
    (
        "quadruped: contact solve failed",
        lambda: fm.quadruped_rollout(robot=WEIGHTLESS, dt=1e-2, steps=5),
        fm.ContactSolveFailed,
        "contact solve failed at t =",
    ),
    ("scenario: bad JSON", lambda: fm.evaluate("{not json"), fm.ScenarioError, "invalid scenario"),
    ("scenario: unknown field", lambda: fm.evaluate({"k": 1e6, "bogus": 1}), fm.ScenarioError, "bogus"),
]


@pytest.mark.parametrize("what, call, exc, text", CASES, ids=[c[0] for c in CASES])
def test_each_failure_raises_its_class_with_the_cores_message(what, call, exc, text) -> None:
    with pytest.raises(exc) as info:
        call()
    assert type(info.value) is exc
    assert text in str(info.value)


def test_every_variant_is_reached() -> None:
    assert {c[2].__name__ for c in CASES} == set(VARIANTS)


def test_invalid_parameter_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        fm.fixed(D, k=-1.0, dt=1e-4)


def test_message_is_the_cores_display() -> None:
    with pytest.raises(fm.InvalidParameter) as info:
        fm.fixed(D, k=-2.0, dt=1e-4)
    assert str(info.value) == "invalid parameter `k` = -2: must be finite and > 0"


def test_bad_shape_names_the_shapes() -> None:
    with pytest.raises(fm.InvalidParameter, match=r"expected array of shape \(n,\), got \(3, 2\)"):
        fm.sweep(D, k=np.ones((3, 2)))
    with pytest.raises(fm.InvalidParameter, match=r"got \(\)"):
        fm.sweep(D, k=1e6)


def test_bad_dtype_is_an_invalid_parameter() -> None:
    with pytest.raises(fm.InvalidParameter, match="`k`"):
        fm.sweep(D, k=["soft", "stiff"])
    with pytest.raises(fm.InvalidParameter, match="float64"):
        _core.sweep(D, np.array([1, 2, 3]))


def test_a_sweep_stops_at_the_first_error_without_partial_rows() -> None:
    heard = []  # dt must divide T only when a route runs: the first chunk's rows fail
    with pytest.raises(fm.StepDoesNotDivide):
        fm.sweep(D, np.logspace(2, 8, 40), dt=3e-4, progress=lambda done, total: heard.append(done))
    assert heard == []
