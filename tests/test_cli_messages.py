"""Refusals in the user's words: the parameter as the user spelled it (the flag on the command
line, the keyword in Python), the allowed range or the valid names, never "= NaN" for something
that is not a number, never an internal type name, never a 16-digit float.

One test per message. Each expectation is a fact about the input (the nearest allowed budget,
the shipped fixtures' names, the route names the documentation lists), not text pasted from a run.
"""

from __future__ import annotations

import re

import pytest
from support import run_cli

import ferromotion as fm

#: A float printed with more figures than a reader can use (the 0.050030000000000005 kind).
LONG_FLOAT = re.compile(r"\d\.\d{9,}|\d{10,}\.\d")


def refused(call) -> str:
    with pytest.raises(fm.FerroError) as e:
        call()
    return str(e.value)


def nearest_budget(b: int) -> int:
    """The allowed budget (a multiple of 4 from 8 to 10,000,000) nearest to b, upwards on a tie."""
    allowed = range(8, 10_000_001, 4)
    return min((a for a in (max(8, b - b % 4), max(8, b - b % 4 + 4)) if a in allowed), key=lambda a: (abs(a - b), -a))


@pytest.mark.parametrize("budget", [7, 10, 13, 4, 1_000_000_000])
def test_a_budget_outside_its_range_is_refused_with_the_range_and_the_nearest_allowed(budget: int) -> None:
    message = refused(lambda: fm.equal_budget(k=1e6, budget=budget))
    assert "a multiple of 4 from 8 to 10,000,000" in message
    assert f"the nearest allowed is {nearest_budget(min(budget, 10_000_000)):,}" in message
    # The cap of a route the user never named is not the message ("hit the cap max_steps").
    assert "max_steps" not in message and "RK4 spends 4 per step" not in message


def test_the_audit_tells_a_refused_budget_with_its_flag_and_the_value_as_typed() -> None:
    p = run_cli("audit", "--quiet", "--budget", "7")
    assert p.returncode == 1 and p.stdout == ""
    assert "ferromotion: error: --budget 7: the force evaluations per Jacobian must be a multiple of 4" in p.stderr
    assert "`budget`" not in p.stderr and "Traceback" not in p.stderr


def test_an_rtol_tighter_than_a_double_resolves_is_refused_with_the_range() -> None:
    message = refused(lambda: fm.tolerance(fm.Drop(), 1e6, rtol=1e-20))
    assert "`rtol` = 1e-20" in message and "at least 1e-14" in message
    assert "below 1" in message and "underflow at" not in message
    # The tightest allowed rtol runs on the stiffest spring the lab offers.
    assert fm.tolerance(fm.Drop(), 1e8, rtol=1e-14).jacobian is not None


def test_the_audit_refuses_rtol_1e_20_naming_the_flag_and_the_range_as_the_lab_does() -> None:
    p = run_cli("audit", "--quiet", "--rtol", "1e-20", "--k-min", "1e6", "--k-max", "1e6", timeout=120)
    assert p.returncode == 1 and p.stdout == ""
    assert "--rtol 1e-20: must be at least 1e-14 and below 1" in p.stderr
    assert "underflow at t =" not in p.stderr and not LONG_FLOAT.search(p.stderr), p.stderr


def test_a_flag_the_core_refuses_is_named_as_typed() -> None:
    p = run_cli("audit", "--quiet", "--min-step", "-1", "--k-min", "1e6", "--k-max", "1e6", timeout=120)
    assert p.returncode == 1 and "--min-step -1: must be finite and >= 0" in p.stderr, p.stderr


def test_an_unknown_route_names_the_keyword_and_the_routes() -> None:
    message = refused(lambda: fm.fit_predict(fm.Drop(), [0.1, 0.8], route="flo"))
    assert '`route` = "flo" is not one of its choices: ' in message
    names = message.rsplit(": ", 1)[1].split(", ")
    assert set(names) == {"fixed", "corrected", "tolerance", "flow", "exact"}  # the routes docs/fit.md lists
    assert "unknown variant" not in message and "`" not in message.rsplit(": ", 1)[1]


def test_an_unknown_option_lists_the_options() -> None:
    # An options dict (the in-browser package's options object reaches the core the same way).
    from ferromotion import _core

    message = refused(lambda: _core.tolerance(fm.Drop(), 1e6, {"rtl": 1e-6}))
    assert "unknown option `rtl`: the options are " in message
    assert "rtol" in message.split("the options are ", 1)[1].split(", ")


def test_a_parameter_value_is_shown_in_six_figures_at_most() -> None:
    message = refused(lambda: fm.fixed(fm.Drop(), -(0.1 + 0.2), 1e-4))
    assert "`k` = -0.3: must be finite and > 0" in message and not LONG_FLOAT.search(message)


def test_an_unknown_conformance_fixture_lists_the_shipped_names() -> None:
    from ferromotion.engines.conformance import fixtures

    p = run_cli("conformance", "--engine", "mujoco", "--fixture", "ramp", timeout=120)
    assert p.returncode == 1 and "No such file or directory" not in p.stderr, p.stderr
    shipped = ", ".join(fixtures())
    assert f"ramp: no such file, and no shipped fixture has this name: the shipped fixtures are {shipped}" in p.stderr


def test_a_step_over_the_cap_names_the_route_its_cap_counted_and_the_smallest_dt_that_fits() -> None:
    # The drop lasts t_final = 0.8 s: at dt = 1e-9 s the fixed route needs 8e8 steps; its cap is
    # the 10,000,000 of fm.defaults(), so the smallest dt that fits is 0.8 / 1e7 = 8e-8 s.
    cap = fm.defaults()["max_steps"]
    with pytest.raises(fm.TooManySteps) as e:
        fm.fixed(fm.Drop(), 1e6, 1e-9)
    message = str(e.value)
    assert message.startswith(f"the fixed route goes past its cap of {cap:,} steps (`max_steps`): ")
    assert f"T/dt = {0.8 / 1e-9:.0e}".replace("e+0", "e") in message
    assert f"the smallest dt within the cap is {0.8 / cap:.0e}".replace("e-0", "e-") in message
    assert "hit the cap" not in message and not LONG_FLOAT.search(message)
    # The structured fields stay: the route, the cap and the detail, as numbers and text.
    assert e.value.fields["route"] == "fixed" and e.value.fields["max_steps"] == cap
    # Each route speaks in its own name, an adaptive one with the time it reached in six figures.
    with pytest.raises(fm.TooManySteps, match=r"^the corrected route goes past its cap of 100 steps"):
        fm.corrected(fm.Drop(), 1e6, 1e-4, max_steps=100)
    with pytest.raises(fm.TooManySteps) as adaptive:
        fm.tolerance(fm.Drop(), 1e6, max_steps=50)
    assert str(adaptive.value).startswith("the tolerance route goes past its cap of 50 steps (`max_steps`): ")
    assert not LONG_FLOAT.search(str(adaptive.value)), str(adaptive.value)


def test_the_audit_tells_a_step_too_fine_for_the_cap_with_the_dt_flag_and_the_smallest_dt_that_fits() -> None:
    cap = fm.defaults()["max_steps"]
    p = run_cli("audit", "--quiet", "--dt", "1e-9", "--k-min", "1e6", "--k-max", "1e6", timeout=120)
    assert p.returncode == 1 and p.stdout == ""
    # No flag sets the cap, so the message names --dt as typed and the dt that would fit (0.8 s / cap).
    assert f"--dt 1e-9: the fixed route goes past its cap of {cap:,} steps: " in p.stderr, p.stderr
    assert f"the smallest dt within the cap is {0.8 / cap:.0e}".replace("e-0", "e-") in p.stderr
    assert "max_steps" not in p.stderr and "Traceback" not in p.stderr
