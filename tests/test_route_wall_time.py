"""Every single route carries the wall time of its call beside its force evaluations
(issue 13: "cost readouts everywhere"), and so does every row of the equal-budget table. (The
rk4 route itself is checked against a hand-written RK4 in tests/test_route_refusals.py.)"""

import math
import time

import pytest
from support import run_cli

import ferromotion as fm

ROUTES = {
    "exact": lambda d: fm.exact(d),
    "fixed": lambda d: fm.fixed(d, 1e6, 1e-4),
    "corrected": lambda d: fm.corrected(d, 1e6, 1e-4),
    "flow": lambda d: fm.flow(d, 1e6),
    "tolerance": lambda d: fm.tolerance(d, 1e6, rtol=1e-6, events=True, jacobian="forward"),
    "richardson": lambda d: fm.tolerance(d, 1e6, rtol=1e-6, events=True, jacobian="richardson"),
    "rk4": lambda d: fm.rk4(d, 1e6, 1e-4),
}


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_a_route_reports_the_wall_time_of_its_call(name):
    drop = fm.Drop()
    start = time.perf_counter()
    r = ROUTES[name](drop)
    outside = time.perf_counter() - start
    # Measured inside the call: non-negative, finite, no longer than the call seen from here.
    assert r.wall_s is not None and math.isfinite(r.wall_s)
    assert 0.0 <= r.wall_s <= outside
    assert 0.0 < r.wall_resolution_s < 1e-3
    # It is a field of the answer, but not of its repr (which must not change run to run).
    assert "wall" not in repr(r)
    assert r.to_dict()["wall_s"] == r.wall_s


def test_the_wall_time_grows_with_the_work():
    # 100x the steps: the wall time must grow (by far more than the clock's tick).
    short = min(fm.fixed(fm.Drop(), 1e6, 1e-4).wall_s for _ in range(5))
    long = min(fm.fixed(fm.Drop(), 1e6, 1e-6).wall_s for _ in range(3))
    assert long > 10 * short


def test_a_sweeps_rows_are_timed_too():
    s = fm.sweep(fm.Drop(), [1e6])
    assert all(w is not None and w >= 0 for w in s.fixed.wall_s)


def test_the_equal_budget_rows_carry_wall_times_beside_equal_evaluations():
    t = fm.equal_budget(k=1e6, budget=8_000)
    rows = {r["route"]: r for r in t["rows"]}
    assert set(rows) == {"Euler uniform", "RK4 uniform", "adaptive", "adaptive + events",
                         "adaptive + forward", "corrected"}
    for r in t["rows"]:
        assert r["wall_s"] is not None and 0.0 <= r["wall_s"] < 60.0
    # The Euler row is the fixed route at T/B, called here (its wall time aside).
    direct = fm.fixed(fm.Drop(), 1e6, fm.Drop().t_final / 8_000)
    assert rows["Euler uniform"]["force_evals"] == direct.force_evals == 8_000
    assert rows["Euler uniform"]["dv_dy0"] == direct.dv_dy0


def test_the_audit_prints_the_budget_table_with_its_wall_column(tmp_path):
    p = run_cli("audit", "--budget", "8000", timeout=600, check=True)
    header = next(line for line in p.stdout.splitlines() if line.strip().startswith("route"))
    assert "evals" in header and "wall" in header
    assert "adaptive + forward" in p.stdout
