"""fm.systems.RimlessWheel: the closed form and the measured return-map multiplier (core:
crates/ferromotion-core/src/systems/wheel/; the Rust twin is tests/rimless_wheel.rs). Facts
asserted: McGeer's closed form, recomputed here, and a second reading of the same derivative."""

from __future__ import annotations

import math

import pytest

import ferromotion as fm


def _closed(half_angle: float, slope: float, length: float = 1.0, g: float = 9.81) -> tuple[float, float]:
    c2 = math.cos(2 * half_angle) ** 2
    k = 4 * g / length * math.sin(half_angle) * math.sin(slope)
    return c2, math.sqrt(c2 * k / (1 - c2))


@pytest.mark.parametrize("half_angle, slope", [(0.3, 0.08), (0.2, 0.05)])
def test_closed_form_is_mcgeers(half_angle: float, slope: float) -> None:
    w = fm.systems.RimlessWheel(half_angle=half_angle, slope=slope)
    c2, omega = _closed(half_angle, slope)
    assert w.multiplier() == pytest.approx(c2, abs=1e-15)
    theta, om = w.fixed_point()
    assert theta == -half_angle
    assert om == pytest.approx(omega, rel=1e-14)


@pytest.mark.parametrize("half_angle, slope", [(0.3, 0.08), (0.2, 0.05)])
def test_chained_multiplier_is_the_closed_form_at_every_horizon(half_angle: float, slope: float) -> None:
    w = fm.systems.RimlessWheel(half_angle=half_angle, slope=slope)
    c2, _ = _closed(half_angle, slope)
    readings = w.measured_multiplier([10, 50, 200])
    assert [r["horizon"] for r in readings] == [10, 50, 200]
    for r in readings:
        assert r["chained"]["per_step"] == pytest.approx(c2, abs=1e-8)
        assert r["closed_form"] == pytest.approx(c2 ** r["horizon"], rel=1e-12)
        assert r["direct"] is None


def test_direct_reading_agrees_with_the_chain_at_a_short_horizon() -> None:
    w = fm.systems.RimlessWheel()
    (r,) = w.measured_multiplier(10, direct=True)
    assert r["direct"]["per_step"] == pytest.approx(r["chained"]["per_step"], abs=1e-8)


@pytest.mark.parametrize("horizons", [[], [0], [2001]])
def test_a_horizon_out_of_range_is_refused_by_name(horizons: list[int]) -> None:
    with pytest.raises(fm.InvalidParameter, match="horizons"):
        fm.systems.RimlessWheel().measured_multiplier(horizons)


def test_a_bad_wheel_is_refused_by_name() -> None:
    with pytest.raises(fm.InvalidParameter, match="half_angle"):
        fm.systems.RimlessWheel(half_angle=1.0)
