"""Errors carry their fields: every exception from the core has ``err.fields``, the variant's
fields as a dict (``{"name", "value", "limit"}`` for InvalidParameter), as pydantic-core's
``errors()`` carries ``ctx``. Each test checks the fields against what the caller passed or a
closed form, never against the message's text."""

from __future__ import annotations

import math

import pytest

import ferromotion as fm
from ferromotion import _core


def test_invalid_parameter_names_the_parameter_and_the_value_passed():
    with pytest.raises(fm.InvalidParameter) as info:
        fm.fixed(fm.Drop(), k=-2.5, dt=1e-4)
    fields = info.value.fields
    assert set(fields) == {"name", "value", "limit"}
    assert fields["name"] == "k" and fields["value"] == -2.5
    assert isinstance(fields["limit"], str) and fields["limit"] in str(info.value)


def test_a_nan_parameter_stays_nan_in_the_fields():
    with pytest.raises(fm.InvalidParameter) as info:
        fm.flow(fm.Drop(), k=float("nan"))
    assert info.value.fields["name"] == "k"
    assert math.isnan(info.value.fields["value"])


def test_no_impact_carries_the_free_fall_time():
    # Released from rest at h, the ball reaches the ground at sqrt(2 h / g).
    with pytest.raises(fm.NoImpact) as info:
        fm.Drop(height=100.0)
    fields = info.value.fields
    assert fields["t_final"] == 0.8
    assert fields["t_impact"] == pytest.approx(math.sqrt(2 * 100.0 / 9.81), rel=1e-12)


def test_a_step_that_does_not_divide_carries_the_ratio():
    with pytest.raises(fm.StepDoesNotDivide) as info:
        fm.fixed(fm.Drop(), k=1e6, dt=0.3)
    fields = info.value.fields
    assert fields["dt"] == 0.3 and fields["t_final"] == 0.8
    assert fields["ratio"] == pytest.approx(0.8 / 0.3, rel=1e-12)


def test_an_unknown_option_key_is_refused_with_the_key_in_the_reason():
    with pytest.raises(fm.ScenarioError) as info:
        _core.fixed(fm.Drop(), 1e6, 1e-4, {"max_stesp": 10})
    assert set(info.value.fields) == {"reason"}
    assert "max_stesp" in info.value.fields["reason"]


def test_an_error_the_binding_makes_itself_has_empty_fields():
    # A wrong array shape is refused by the binding before the core sees it.
    with pytest.raises(fm.InvalidParameter) as info:
        fm.sweep(fm.Drop(), k=[[1e5, 1e6]])
    assert info.value.fields == {}
