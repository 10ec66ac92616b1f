"""A suite of right and deliberately wrong gradients, for judging gradient checkers.

Pure numpy, no ferromotion: `benches/check_bench.py` (``make bench-check``) runs every checker
on it, ``tests/test_check_suite.py`` pins ferromotion's verdicts on a fast subset. Every right
gradient is computed by a second route, independent of any checker: a closed form, or a
forward-mode tangent carried through the same arithmetic (float32 where the map is float32).

Maps (``MAPS``), by kind:

- ``smooth``: a Rosenbrock valley and a trigonometric-exponential product;
- ``badly-scaled``: derivatives of 1e-3 at inputs of 1e6, and coordinates differing by 1e8
  in sensitivity;
- ``near-optimum``: a bowl 1e-5 from its minimum (|g| ~ 1e-5);
- ``float32``: a smooth function and the drop's rollout, both computed in float32;
- ``kinked``: |x0 - 3e-4| (a kink 3e-4 from x) and the drop's fixed-step rollout in float64
  (a kink every |v| dt in the initial height), checked without an events callback;
- ``engine``: the rigid bounce, v(T) of a ball with restitution 0.8 after one impact, whose
  gradient needs the time-of-impact term.

Bugs (``BUGS``): a sign flip, scale errors of 1% and 0.01%, a transposed gradient, a dropped
term, a stale point (the gradient at a point 0.1% away), a missing time-of-impact term
(engine), the average slope across kinks (kinked). A bug that changes nothing on a map, or
that is below what any difference can resolve there (0.01% on float32), is left out.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

Array = np.ndarray


@dataclasses.dataclass(frozen=True)
class Map:
    """A scalar map with its right gradient and the pieces some bugs need."""

    name: str
    kind: str
    f: Callable[[Array], float]
    grad: Callable[[Array], Array]
    x: Array
    #: The gradient of the map's last additive term (the "dropped term" bug), if it has terms.
    last_term: Optional[Callable[[Array], Array]] = None
    #: The gradient without the time-of-impact term (engine maps).
    no_toi: Optional[Callable[[Array], Array]] = None
    #: The map is piecewise smooth with kinks near x (the average-slope bug applies).
    kinked: bool = False
    #: float32 arithmetic: right gradients can only agree to within evaluation noise.
    float32: bool = False


@dataclasses.dataclass(frozen=True)
class Case:
    """One gradient to check: a map, a claim, and whether the claim is right."""

    map: Map
    bug: str  # "right" or the bug's name
    grad: Array

    @property
    def right(self) -> bool:
        return self.bug == "right"

    @property
    def name(self) -> str:
        return f"{self.map.name} / {self.bug}"


# --- maps -------------------------------------------------------------------------------------


def _rosenbrock() -> Map:
    def f(x: Array) -> float:
        return float(100.0 * (x[1] - x[0] ** 2) ** 2 + 100.0 * (x[2] - x[1] ** 2) ** 2 + (1.0 - x[0]) ** 2)

    def valley(x: Array) -> Array:
        return np.array([-400.0 * x[0] * (x[1] - x[0] ** 2),
                         200.0 * (x[1] - x[0] ** 2) - 400.0 * x[1] * (x[2] - x[1] ** 2),
                         200.0 * (x[2] - x[1] ** 2)])

    def last(x: Array) -> Array:
        return np.array([-2.0 * (1.0 - x[0]), 0.0, 0.0])

    return Map("rosenbrock", "smooth", f, lambda x: valley(x) + last(x), np.array([-0.7, 1.1, 0.4]), last_term=last)


def _trig() -> Map:
    def f(x: Array) -> float:
        return float(np.sin(x[0]) * x[1] ** 2 + np.exp(0.3 * x[2]) * x[0])

    def first(x: Array) -> Array:
        return np.array([np.cos(x[0]) * x[1] ** 2, 2.0 * np.sin(x[0]) * x[1], 0.0])

    def last(x: Array) -> Array:
        return np.array([np.exp(0.3 * x[2]), 0.0, 0.3 * np.exp(0.3 * x[2]) * x[0]])

    return Map("trig-exp", "smooth", f, lambda x: first(x) + last(x), np.array([0.3, 2.0, -0.5]), last_term=last)


def _million() -> Map:
    """Inputs of size 1e6, derivatives of size 1e-3."""
    def f(x: Array) -> float:
        return float(1e3 * ((x[0] / 1e6 - 1.0) ** 2 + (x[1] / 1e6 - 0.5) ** 2) + np.sin(x[0] / 1e6))

    def last(x: Array) -> Array:
        return np.array([np.cos(x[0] / 1e6) / 1e6, 0.0])

    def grad(x: Array) -> Array:
        return np.array([2e3 * (x[0] / 1e6 - 1.0) / 1e6, 2e3 * (x[1] / 1e6 - 0.5) / 1e6]) + last(x)

    return Map("inputs-1e6", "badly-scaled", f, grad, np.array([1.3e6, 0.7e6]), last_term=last)


def _stiff_mix() -> Map:
    """One coordinate 1e8 times more sensitive than the other."""
    def f(x: Array) -> float:
        return float(1e4 * x[0] ** 2 + 1e-4 * np.cos(x[1]) + 1e-4 * x[1] ** 2)

    def last(x: Array) -> Array:
        return np.array([0.0, 2e-4 * x[1]])

    return Map("stiff-mix", "badly-scaled", f,
               lambda x: np.array([2e4 * x[0], -1e-4 * np.sin(x[1])]) + last(x), np.array([3e-3, 0.8]),
               last_term=last)


def _bowl() -> Map:
    c, w = np.array([1.0, -2.0, 0.5]), np.array([1.0, 3.0, 0.5])

    def f(x: Array) -> float:
        return float(np.sum(w * (x - c) ** 2) + (x[0] - c[0]) ** 3)

    def last(x: Array) -> Array:
        return np.array([3.0 * (x[0] - c[0]) ** 2, 0.0, 0.0])

    return Map("bowl-near-optimum", "near-optimum", f, lambda x: 2.0 * w * (x - c) + last(x),
               c + np.array([1e-5, -3e-5, 2e-5]), last_term=last)


def _smooth32() -> Map:
    """A long float32 sum, and its gradient by the chain rule in float32."""
    def both(x: Array) -> tuple:
        a, b = np.float32(x[0]), np.float32(x[1])
        t = (np.arange(200, dtype=np.float32) * np.float32(0.01))
        s, cs = np.sin(a * t), np.cos(a * t)
        v = np.float32(0.0)
        da = np.float32(0.0)
        db = np.float32(0.0)
        for i in range(200):  # sequential float32 accumulation, as a rollout
            v = np.float32(v + s[i] * b + np.float32(0.5) * b * b * t[i])
            da = np.float32(da + cs[i] * t[i] * b)
            db = np.float32(db + s[i] + b * t[i])
        return float(v), np.array([float(da), float(db)])

    return Map("smooth-float32", "float32", lambda x: both(x)[0], lambda x: both(x)[1], np.array([0.7, 1.3]),
               float32=True)


def _drop(dtype: type, steps: int = 600, dt: float = 1e-3, k: float = 1e4) -> tuple:
    """v(T) of the drop (semi-implicit Euler, push-only penalty law) and its forward-mode
    tangent d v(T) / d (y0, v0), both in ``dtype``."""
    g, kk, h = dtype(9.81), dtype(k), dtype(dt)

    def both(x: Array) -> tuple:
        y, v = dtype(x[0]), dtype(x[1])
        dy = np.array([1.0, 0.0], dtype=dtype)
        dv = np.array([0.0, 1.0], dtype=dtype)
        for _ in range(steps):
            inside = y < 0
            v = dtype(v + h * (-g + (-kk * y if inside else dtype(0.0))))
            if inside:
                dv = (dv + h * (-kk * dy)).astype(dtype)
            y = dtype(y + h * v)
            dy = (dy + h * dv).astype(dtype)
        return float(v), dv.astype(np.float64)

    return both


def _drop32() -> Map:
    both = _drop(np.float32)
    return Map("drop-rollout-float32", "float32", lambda x: both(x)[0], lambda x: both(x)[1], np.array([1.0, 0.0]),
               kinked=True, float32=True)


def _drop64() -> Map:
    both = _drop(np.float64)
    return Map("drop-rollout-float64", "kinked", lambda x: both(x)[0], lambda x: both(x)[1], np.array([1.0, 0.0]),
               kinked=True)


def _abs_kink() -> Map:
    def f(x: Array) -> float:
        return float(2.0 * abs(x[0] - 3e-4) + x[1] ** 2 + 0.5 * x[0] * x[1])

    def last(x: Array) -> Array:
        return np.array([0.5 * x[1], 0.5 * x[0]])

    return Map("abs-kink", "kinked", f, lambda x: np.array([-2.0, 2.0 * x[1]]) + last(x), np.array([0.0, 0.5]),
               last_term=last, kinked=True)


def _bounce() -> Map:
    """v(T) of a ball dropped from y0 with upward velocity v0, one impact with restitution e,
    closed form; its gradient carries the impact time's sensitivity (the saltation term)."""
    g, e, T = 9.81, 0.8, 0.7

    def parts(x: Array) -> tuple:
        y0, v0 = x
        vh = np.sqrt(v0 * v0 + 2.0 * g * y0)          # speed at impact
        th = (v0 + vh) / g                            # impact time
        v = e * vh - g * (T - th)                     # velocity at T after the bounce
        dvh = np.array([g / vh, v0 / vh])
        dth = (np.array([0.0, 1.0]) + dvh) / g
        return v, e * dvh, g * dth

    return Map("rigid-bounce", "engine", lambda x: float(parts(x)[0]), lambda x: parts(x)[1] + parts(x)[2],
               np.array([1.0, 0.5]), no_toi=lambda x: parts(x)[1])


MAPS: List[Map] = [_rosenbrock(), _trig(), _million(), _stiff_mix(), _bowl(), _smooth32(), _drop32(), _drop64(),
                   _abs_kink(), _bounce()]


# --- bugs -------------------------------------------------------------------------------------


def _average_slope(m: Map, h: float = 1e-2) -> Array:
    """The slope a step of 1e-2 reads: across the kinks, not the derivative at x."""
    n = len(m.x)
    return np.array([(m.f(m.x + h * e) - m.f(m.x - h * e)) / (2 * h) for e in np.eye(n)])


def _bugs(m: Map) -> Dict[str, Array]:
    g = m.grad(m.x)
    out: Dict[str, Array] = {"sign": -g, "scale 1%": 1.01 * g}
    if not m.float32:
        out["scale 0.01%"] = 1.0001 * g
    t = g[::-1].copy()
    if not np.allclose(t, g, rtol=1e-2):
        out["transposed"] = t
    if m.last_term is not None:
        out["dropped term"] = g - m.last_term(m.x)
    stale = m.grad(m.x * (1.0 + 1e-3) + 1e-3)
    if not np.allclose(stale, g, rtol=1e-3, atol=0.0):
        out["stale point"] = stale
    if m.no_toi is not None:
        out["missing time-of-impact term"] = m.no_toi(m.x)
    if m.kinked:
        avg = _average_slope(m)
        if not np.allclose(avg, g, rtol=1e-2):
            out["average slope across kinks"] = avg
    return out


BUGS = ("sign", "scale 1%", "scale 0.01%", "transposed", "dropped term", "stale point",
        "missing time-of-impact term", "average slope across kinks")


def cases(maps: Sequence[Map] = MAPS) -> List[Case]:
    """Every right gradient and every bug that applies, map by map."""
    out: List[Case] = []
    for m in maps:
        out.append(Case(m, "right", m.grad(m.x)))
        out.extend(Case(m, name, grad) for name, grad in _bugs(m).items())
    return out


#: A fast subset for the pinned test: one map of each kind.
FAST = ("trig-exp", "inputs-1e6", "bowl-near-optimum", "smooth-float32", "abs-kink", "rigid-bounce",
        "drop-rollout-float32")


def fast_cases() -> List[Case]:
    return cases([m for m in MAPS if m.name in FAST])


class Counted:
    """f with a call counter (evaluations per verdict)."""

    def __init__(self, f: Callable[[Array], float]) -> None:
        self.f, self.calls = f, 0

    def __call__(self, x: Array) -> float:
        self.calls += 1
        return self.f(np.asarray(x, dtype=np.float64))
