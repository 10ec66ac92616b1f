"""Fuzz the Python boundary: arbitrary floats into every route, the sweep and the blame split.

Property (docs/model.md §9, issue 8): each call returns a result whose numbers are all finite, or
raises a ``fm.FerroError`` subclass naming what was wrong. Never another exception (a
``TypeError``, an ``OverflowError``, pyo3's ``PanicException`` from a Rust panic), never a
crash of the interpreter.

Numbers are drawn half from plausible ranges (so that calls get past validation and run
the physics) and half from every float Hypothesis knows (NaN, infinities, subnormals, 0.0,
-0.0, huge and tiny). Routes with a step cap get a small one, as the core's fuzz does, so
that the worst case stays fast: "never a hang beyond the cap".

``make test`` runs a short pass (FERRO_FUZZ_CASES examples per test, default 60);
``make fuzz`` a long one.
"""

from __future__ import annotations

import math
import os
from typing import Any, Callable, Iterable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ferromotion as fm

CASES = int(os.environ.get("FERRO_FUZZ_CASES", "60"))
FUZZ = settings(
    max_examples=CASES,
    deadline=None,
    derandomize=CASES <= 1000,  # the short pass in `make test` is the same every run
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
CAP = 200_000

anything = st.floats(allow_nan=True, allow_infinity=True)


def number(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Half a plausible value in [lo, hi] (log-uniform when lo > 0), half any float at all."""
    if lo > 0:
        plausible = st.floats(math.log10(lo), math.log10(hi)).map(lambda e: 10.0**e)
    else:
        plausible = st.floats(lo, hi)
    return st.one_of(plausible, anything)


stiffness = number(1e1, 1e9)
step = st.one_of(st.sampled_from([1e-3, 2e-4, 1e-4, 5e-5, 1e-5]), anything)
drop_params = st.fixed_dictionaries(
    {},
    optional={
        "height": number(0.05, 5.0),
        "velocity": number(-3.0, 3.0),
        "t_final": number(0.3, 3.0),
        "zeta": number(0.0, 0.99),
        "gravity": number(1.0, 30.0),
        "mass": number(0.1, 10.0),
    },
)


def finite(values: Iterable[Any]) -> bool:
    return all(np.all(np.isfinite(np.asarray(v, dtype=float))) for v in values)


def outcome(call: Callable[[], Any]) -> Any:
    """The call's result, or None when it raised a FerroError (with a message)."""
    try:
        return call()
    except fm.FerroError as e:
        assert str(e), f"{type(e).__name__} without a message"
        return None


def make_drop(params: dict) -> Any:
    return outcome(lambda: fm.Drop(**params))


def check_route(r: Any) -> None:
    if r is not None:
        assert isinstance(r, fm.Route)
        assert finite([r.state, r.jacobian]), r
        assert r.state.shape == (2,) and r.jacobian.shape == (2, 2)


@FUZZ
@given(drop_params)
def test_drop_is_built_or_refused(params: dict) -> None:
    d = make_drop(params)
    if d is not None:
        assert finite([d.height, d.velocity, d.t_final, d.zeta, d.gravity, d.mass, d.impact_speed()])


@FUZZ
@given(drop_params, stiffness, step)
def test_fixed(params: dict, k: float, dt: float) -> None:
    d = make_drop(params)
    if d is not None:
        check_route(outcome(lambda: fm.fixed(d, k, dt, max_steps=CAP)))


@FUZZ
@given(drop_params, stiffness, step, st.booleans())
def test_corrected(params: dict, k: float, dt: float, locate: bool) -> None:
    d = make_drop(params)
    if d is not None:
        check_route(outcome(lambda: fm.corrected(d, k, dt, locate=locate, max_steps=CAP)))


@FUZZ
@given(drop_params, stiffness, st.one_of(st.just(1e-12), number(1e-15, 1e-3)))
def test_flow(params: dict, k: float, root_rtol: float) -> None:
    d = make_drop(params)
    if d is not None:
        check_route(outcome(lambda: fm.flow(d, k, root_rtol=root_rtol)))


@FUZZ
@given(drop_params, stiffness, number(1e-12, 1e-3), st.one_of(st.none(), number(1e-14, 1e-3)),
       st.booleans(), number(1e-9, 1e-3))
def test_tolerance(params: dict, k: float, rtol: float, atol: Any, events: bool, eps: float) -> None:
    d = make_drop(params)
    if d is not None:
        r = outcome(lambda: fm.tolerance(d, k, rtol=rtol, atol=atol, events=events, eps=eps, max_steps=CAP // 10))
        check_route(r)
        if r is not None:
            assert r.probe_gap is not None and math.isfinite(r.probe_gap)


@FUZZ
@given(drop_params, stiffness, step)
def test_blame(params: dict, k: float, dt: float) -> None:
    d = make_drop(params)
    if d is not None:
        b = outcome(lambda: fm.blame(d, k, dt))
        if b is not None:
            assert isinstance(b, fm.Blame)
            assert finite([b.integrator_share, b.contact_share, b.noise_floor]), b


@FUZZ
@given(drop_params, st.lists(stiffness, min_size=0, max_size=4), step,
       st.one_of(st.none(), st.booleans(), number(1e-10, 1e-4)), st.booleans(), st.booleans(), st.booleans())
def test_sweep(params: dict, ks: list, dt: float, tolerance: Any, events: bool, corrected: bool,
               blame: bool) -> None:
    d = make_drop(params)
    if d is None:
        return
    s = outcome(lambda: fm.sweep(d, k=np.array(ks, dtype=float), dt=dt, tolerance=tolerance, events=events,
                                 corrected=corrected, blame=blame, quiet=True))
    if s is not None:
        assert isinstance(s, fm.Sweep) and len(s) == len(ks)
        assert finite([s.state, s.jacobian, s.gradient_error, s.forward_error]), s
        fit = outcome(s.exponent)
        if fit is not None:
            assert finite([fit.slope, fit.intercept, fit.r2])


@pytest.mark.parametrize("k", [float("nan"), float("inf"), float("-inf"), -1.0, 0.0, -0.0])
def test_a_bad_stiffness_is_refused_by_name(k: float) -> None:
    for call in (lambda: fm.fixed(fm.Drop(), k), lambda: fm.flow(fm.Drop(), k), lambda: fm.blame(fm.Drop(), k),
                 lambda: fm.sweep(fm.Drop(), k=[1e6, k])):
        with pytest.raises(fm.InvalidParameter, match="`k`"):
            call()
