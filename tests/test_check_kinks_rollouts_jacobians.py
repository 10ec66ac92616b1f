"""The gradient check on what researchers hand it (docs/checking.md): kinks exactly at x, a long
float32 rollout, 100,000 parameters, vector outputs, and the sentences a newcomer's mistakes get.

Every right answer is computed independently: closed-form one-sided slopes, the float64 map's
gradient by central differences of the float64 rollout, closed-form Jacobians.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ferromotion as fm

DATA = Path(__file__).resolve().parent / "data"


@pytest.mark.parametrize("claim, equals", [(0.0, "backward"), (0.5, "average"), (1.0, "forward")])
def test_relu_at_zero_is_refused_with_both_one_sided_slopes_named(claim: float, equals: str) -> None:
    r = fm.check_gradient(lambda x: float(max(x[0], 0.0)), [claim], np.array([0.0]))
    assert r.verdict == "refused", r.why
    for d in r.directions:
        p = float(d.direction[0])
        # max(t, 0) along p: forward slope max(p, 0), backward min(p, 0).
        assert d.kink["forward"] == pytest.approx(max(p, 0.0), abs=1e-9)
        assert d.kink["backward"] == pytest.approx(min(p, 0.0), abs=1e-9)
    # Along +1 the claim is read as given (along -1 forward and backward trade places).
    plus = next(d for d in r.directions if d.direction[0] == 1.0)
    assert plus.kink["claim_equals"] == equals
    assert "kink at x" in r.why and "forward" in r.why and "backward" in r.why


def test_a_hinge_loss_at_its_margin_and_an_l1_norm_at_zero_are_refused() -> None:
    a = np.array([2.0, 1.0])
    hinge = fm.check_gradient(lambda w: float(max(0.0, 1.0 - a @ w)), -a, np.array([0.25, 0.5]))
    assert hinge.verdict == "refused", hinge.why
    l1 = fm.check_gradient(lambda x: float(np.abs(x).sum()), [1.0, 0.0, -1.0], np.array([0.3, 0.0, -1.2]))
    assert l1.verdict == "refused", l1.why


def test_c1_points_stay_verified() -> None:
    huber = lambda t: np.where(np.abs(t) <= 1.0, 0.5 * t * t, np.abs(t) - 0.5)  # noqa: E731
    r = fm.check_gradient(lambda x: float(huber(x).sum()), [1.0, -0.3], np.array([1.0, -0.3]))
    assert r.verdict == "verified", r.why
    sig = lambda t: 1.0 / (1.0 + np.exp(-t))  # noqa: E731
    x = np.array([0.0, 1.5])
    r = fm.check_gradient(lambda y: float(np.logaddexp(0.0, y).sum()), sig(x), x)
    assert r.verdict == "verified", r.why


@pytest.mark.parametrize("offset", [1e-10, 1e-8])
def test_an_error_in_f_at_x_alone_is_not_a_kink(offset: float) -> None:
    """f(x) itself read off by `offset` (every probe shares it, as a float32 rollout's rounding
    at x is): the one-sided sums f(x+ep) + f(x-ep) - 2 f(x) stay at -2 offset instead of falling
    with eps, which is no kink; the closed-form gradient stays verified, a 1% error is caught."""
    x = np.array([0.3, -1.1, 0.7])
    f = lambda y: float(np.sin(y).sum() + 0.5 * y @ y + (offset if np.array_equal(y, x) else 0.0))  # noqa: E731
    g = np.cos(x) + x
    r = fm.check_gradient(f, g, x)
    assert r.verdict == "verified", r.why
    assert all(d.kink is None for d in r.directions)
    assert fm.check_gradient(f, 1.01 * g, x).verdict == "not-verified"


def _ball(v0: np.ndarray, dtype: type) -> float:
    """A particle thrown at a soft floor (smooth contact force, damping faded in) for 288 steps, in
    `dtype` throughout; the loss is the squared distance of the final position to a target."""
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


def test_a_right_float32_rollout_gradient_reads_within_noise_and_scaled_ones_do_not() -> None:
    """A long float32 rollout's rounding error is correlated over the probe scale: the 1e-6 noise
    stencils see ~6e-7, the differences at the probes wander as if f's noise were ~2e-5."""
    x = np.array([0.0, 5.0, -5.0])
    f32 = lambda v: _ball(v, np.float32)  # noqa: E731
    # The float64 map's gradient (its own rounding ~1e-14, so 1e-6 differences are good to ~1e-8).
    g = np.array([(_ball(x + 1e-6 * e, np.float64) - _ball(x - 1e-6 * e, np.float64)) / 2e-6 for e in np.eye(3)])
    right = fm.check_gradient(f32, g, x)
    assert right.verdict == "verified-within-noise", right.why
    assert "float32" in right.why, right.why
    for factor in (1.05, 1.01):
        wrong = fm.check_gradient(f32, factor * g, x)
        assert wrong.verdict == "not-verified", (factor, wrong.why)


def test_a_hundred_thousand_parameters_verify_in_at_most_a_hundred_evaluations() -> None:
    n = 100_000
    c = 1.0 + np.arange(n) % 7
    x = ((np.arange(n) * 37) % 101) / 50.0 - 1.0
    f = lambda y: float(0.5 * y @ y + c @ np.sin(y))  # noqa: E731
    g = x + c * np.cos(x)
    r = fm.check_gradient(f, g, x)
    assert r.verdict == "verified", r.why
    assert r.evaluations <= 100
    assert r.guarantee is not None and r.guarantee["dimension"] == n and not r.guarantee["coordinates"]
    assert "Random directions only" in r.summary()
    e = np.random.default_rng(7).normal(size=n)
    wrong = g + 0.01 * np.linalg.norm(g) * e / np.linalg.norm(e)
    assert fm.check_gradient(f, wrong, x).verdict == "not-verified"


def test_too_many_directions_is_a_sentence_not_a_killed_process() -> None:
    x = np.zeros(100_000)
    with pytest.raises(fm.InvalidParameter, match="directions"):
        fm.check_gradient(lambda y: float(y @ y), x, x, directions=100_000)


def _vector(x: np.ndarray) -> np.ndarray:
    return np.array([x[0] ** 2 * x[1], np.sin(x[0]) + 3 * x[1], x[0] * x[1] ** 2])


def _jacobian(x: np.ndarray) -> np.ndarray:
    return np.array([[2 * x[0] * x[1], x[0] ** 2], [np.cos(x[0]), 3.0], [x[1] ** 2, 2 * x[0] * x[1]]])


def test_check_jacobian_verifies_a_right_jacobian_and_not_one_entry_one_percent_off() -> None:
    x = np.array([0.7, -1.3])
    J = _jacobian(x)
    r = fm.check_jacobian(_vector, J, x)
    assert r.verdict == "verified", r.why
    assert r.outputs == 3 and r.gradient.shape == (6,)
    off = J.copy()
    off[2, 0] *= 1.01
    bad = fm.check_jacobian(_vector, off, x)
    assert bad.verdict == "not-verified" and bad.why.startswith("output 2"), bad.why
    for mode, right, wrong in (("jvp", lambda p: J @ p, lambda p: off @ p), ("vjp", lambda w: J.T @ w, lambda w: off.T @ w)):
        assert fm.check_jacobian(_vector, right, x, mode=mode).verdict == "verified"
        assert fm.check_jacobian(_vector, wrong, x, mode=mode).verdict == "not-verified"
    assert fm.check_jacobian(_vector, None, x, jvp=lambda p: J @ p).verdict == "verified"


def test_newcomer_mistakes_get_sentences() -> None:
    x = np.array([0.3, 0.4])
    f = lambda y: float(y @ y)  # noqa: E731
    with pytest.raises(fm.InvalidParameter, match=r"pass grad\(x\)"):
        fm.check_gradient(f, lambda y: 2 * y, x)  # scipy.optimize.check_grad's order
    with pytest.raises(fm.InvalidParameter, match="check_jacobian"):
        fm.check_gradient(_vector, [1.0, 1.0], x)
    with pytest.raises(fm.InvalidParameter, match="mode"):
        fm.check_jacobian(_vector, lambda p: p, x)


def test_receipts_validate_against_their_schema_and_version_two_still_loads() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    x = np.array([0.7, -1.3])
    for r in (fm.check_jacobian(_vector, _jacobian(x), x),
              fm.check_gradient(lambda y: float(max(y[0], 0.0)), [0.5], np.array([0.0])),
              fm.check_example("drop-exact")):
        jsonschema.validate(json.loads(r.to_json()), fm.receipt_schema())
    old = (DATA / "receipt_v2_drop_exact.json").read_text(encoding="utf-8")
    jsonschema.validate(json.loads(old), fm.receipt_schema(2))
    back = fm.load_receipt(old)
    assert back.schema == fm.RECEIPT_SCHEMA_V2 and back.verdict == json.loads(old)["report"]["verdict"]
    assert back.guarantee is None and all(d.kink is None for d in back.directions)
