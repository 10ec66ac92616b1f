"""Four families that break symmetric-difference gradient checkers, beside the suite of
benches/check_suite.py (``make bench-check`` prints a table per family). Pure numpy, no
ferromotion; every right answer by a second route (closed form, or the float64 map's gradient
by float64 differences for the float32 rollout).

- ``kink-at-x``: x sits exactly on a kink (ReLU at 0, |x| at 0, slopes 1 and 3, max at a tie, an
  L1 norm with a zero coordinate, a hinge at its margin, a median at a tie, a ReLU in badly
  scaled units). f has no derivative there, so *every* claim is counted wrong: the average of the
  one-sided slopes, either one-sided slope (PyTorch's relu'(0) = 0 is the backward one). The
  right answer is a refusal; the C¹ controls (x|x| at 0, Huber at its threshold, softplus) are
  right gradients with the suite's bugs beside them.
- ``float32-rollout``: a particle thrown at a soft floor for 288 float32 steps (rounding error
  correlated over the probe scale), its right gradient the float64 map's; bugs ×1.05, ×1.01, sign.
- ``1e5-parameters``: Σ xᵢ²/2 + cᵢ sin xᵢ at n = 100,000; bugs: 1% of |g| in a random direction,
  1% in one coordinate, a flipped sign.
- ``vector-outputs``: f: R² → R³ with its closed-form Jacobian; bugs: one entry 1% off, a
  column swapped, a sign. Checked by ``fm.check_jacobian`` (and jax's ``check_grads``).
"""

from __future__ import annotations

from typing import Dict, List

import numpy as np

import check_suite as cs

Array = np.ndarray


def _kink_case(name: str, f, x, claims: Dict[str, Array]) -> List[cs.Case]:
    m = cs.Map(name, "kink-at-x", f, lambda _x: np.asarray(next(iter(claims.values())), float), np.asarray(x, float))
    return [cs.Case(m, f"kink at x, claim = {k}", np.asarray(v, float)) for k, v in claims.items()]


def kink_cases() -> List[cs.Case]:
    out: List[cs.Case] = []
    out += _kink_case("relu at 0", lambda x: float(max(x[0], 0.0)), [0.0],
                      {"average 0.5": [0.5], "backward 0 (PyTorch)": [0.0], "forward 1": [1.0]})
    out += _kink_case("|x| at 0", lambda x: float(abs(x[0])), [0.0], {"average 0": [0.0], "forward 1": [1.0]})
    out += _kink_case("slopes 1 and 3", lambda x: float(x[0] if x[0] < 0 else 3 * x[0]), [0.0],
                      {"average 2": [2.0], "backward 1": [1.0]})
    out += _kink_case("max at a tie", lambda x: float(max(x[0], x[1])), [0.7, 0.7],
                      {"average (0.5, 0.5)": [0.5, 0.5], "first (1, 0)": [1.0, 0.0]})
    out += _kink_case("L1 with a zero coordinate", lambda x: float(np.abs(x).sum()), [0.3, 0.0, -1.2],
                      {"sign(0) = 0": [1.0, 0.0, -1.0]})
    a = np.array([2.0, 1.0])
    out += _kink_case("hinge at its margin", lambda w: float(max(0.0, 1.0 - a @ w)), [0.25, 0.5],
                      {"active side": -a, "average": -a / 2})
    out += _kink_case("median at a tie", lambda x: float(np.median(x)), [0.4, 0.4, 2.0],
                      {"average (0.5, 0.5, 0)": [0.5, 0.5, 0.0], "first (1, 0, 0)": [1.0, 0.0, 0.0]})
    out += _kink_case("relu in badly scaled units", lambda x: float(max(1e6 * (x[0] - 2e-3), 0.0)), [2e-3],
                      {"average 5e5": [5e5], "forward 1e6": [1e6]})
    return out


def _c1_maps() -> List[cs.Map]:
    huber = lambda t: np.where(np.abs(t) <= 1.0, 0.5 * t * t, np.abs(t) - 0.5)  # noqa: E731
    dhuber = lambda t: np.where(np.abs(t) <= 1.0, t, np.sign(t))  # noqa: E731
    sig = lambda t: 1.0 / (1.0 + np.exp(-t))  # noqa: E731
    return [
        cs.Map("x|x| at 0 (C1)", "kink-at-x", lambda x: float(x[0] * abs(x[0]) + x[1] ** 2),
               lambda x: np.array([2 * abs(x[0]), 2 * x[1]]), np.array([0.0, 0.6])),
        cs.Map("huber at its threshold (C1)", "kink-at-x", lambda x: float(huber(x).sum()),
               lambda x: dhuber(x), np.array([1.0, -0.3])),
        cs.Map("softplus (C1)", "kink-at-x", lambda x: float(np.logaddexp(0.0, x).sum()), lambda x: sig(x),
               np.array([0.0, 1.5])),
    ]


def ball(v0: Array, dtype: type) -> float:
    """A particle thrown at a soft floor (smooth contact force, damping faded in), 288 steps in
    `dtype` throughout; the squared distance of its final position to a target."""
    T = dtype
    q = np.array([0.0, -0.5, 1.0], T)
    v = np.asarray(v0, dtype=T).copy()
    dt, g, ke, kd, s = T(1 / 480), T(9.81), T(1e4), T(10.0), T(200.0)
    with np.errstate(over="ignore"):
        for _ in range(288):
            pen = np.log1p(np.exp(-q[2] * s)) / s
            w = T(1) / (T(1) + np.exp(q[2] * s))
            a = np.array([0.0, -T(0.3) * v[1] * w, -g + ke * pen - kd * w * v[2]], T)
            v = (v + dt * a).astype(T)
            q = (q + dt * v).astype(T)
    d = q - np.array([0.0, -2.0, 1.5], T)
    return float(d @ d)


def rollout_cases() -> List[cs.Case]:
    x = np.array([0.0, 5.0, -5.0])
    g = np.array([(ball(x + 1e-6 * e, np.float64) - ball(x - 1e-6 * e, np.float64)) / 2e-6 for e in np.eye(3)])
    m = cs.Map("ball rollout float32", "float32-rollout", lambda v: ball(v, np.float32), lambda _x: g, x,
               float32=True)
    return [cs.Case(m, "right", g), cs.Case(m, "scale 5%", 1.05 * g), cs.Case(m, "scale 1%", 1.01 * g),
            cs.Case(m, "sign", -g)]


N_LARGE = 100_000


def large_cases(n: int = N_LARGE) -> List[cs.Case]:
    c = 1.0 + np.arange(n) % 7
    x = ((np.arange(n) * 37) % 101) / 50.0 - 1.0
    grad = lambda y: y + c * np.cos(y)  # noqa: E731
    m = cs.Map(f"quadratic + sines, n = {n:,}", "1e5-parameters", lambda y: float(0.5 * y @ y + c @ np.sin(y)),
               grad, x)
    g = grad(x)
    e = np.random.default_rng(2026).normal(size=n)
    one = g.copy()
    one[n // 3] += 0.01 * abs(g[n // 3]) + 0.01
    return [cs.Case(m, "right", g), cs.Case(m, "1% of |g| in a random direction", g + 0.01 * np.linalg.norm(g) * e / np.linalg.norm(e)),
            cs.Case(m, "1% in one coordinate", one), cs.Case(m, "sign", -g)]


def vector_f(x: Array) -> Array:
    return np.array([x[0] ** 2 * x[1], np.sin(x[0]) + 3 * x[1], x[0] * x[1] ** 2])


def vector_j(x: Array) -> Array:
    return np.array([[2 * x[0] * x[1], x[0] ** 2], [np.cos(x[0]), 3.0], [x[1] ** 2, 2 * x[0] * x[1]]])


def vector_claims() -> Dict[str, Array]:
    """Claimed Jacobians at X_VECTOR: right first, then the bugs."""
    J = vector_j(X_VECTOR)
    off = J.copy()
    off[2, 0] *= 1.01
    return {"right": J, "one entry 1% off": off, "columns swapped": J[:, ::-1].copy(), "sign": -J}


X_VECTOR = np.array([0.7, -1.3])

FAMILIES = ("kink-at-x", "float32-rollout", "1e5-parameters")


def family_cases(family: str) -> List[cs.Case]:
    """The scalar families' cases (the vector family is run apart: it needs check_jacobian)."""
    if family == "suite":
        return cs.cases()
    if family == "kink-at-x":
        return kink_cases() + cs.cases(_c1_maps())
    if family == "float32-rollout":
        return rollout_cases()
    if family == "1e5-parameters":
        return large_cases()
    raise ValueError(family)
