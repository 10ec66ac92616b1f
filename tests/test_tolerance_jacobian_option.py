"""Regression test for #13 (item 2's API, "the same option in the core, the wasm workbench, the
CLI and the lab"; "cost readouts everywhere show wall time per Jacobian"): the tolerance
route's ``jacobian`` option reaches the route from ``fm.sweep``, ``fm.Workbench`` and
``ferromotion audit --jacobian``; forward without events is the same typed refusal at every
door; the cost readouts carry a wall time beside the force evaluations.

The oracle is ``fm.tolerance`` called directly with the same options: a second, independent
call of the route, never a number pasted from an earlier run.
"""

from __future__ import annotations

import json

import ferromotion as fm
import numpy as np
import pytest
from support import run_cli

DROP = fm.Drop()
RTOL = 1e-6
METHODS = ("richardson", "forward")


def direct(k: float, jacobian: str) -> fm.Route:
    return fm.tolerance(DROP, k, rtol=RTOL, events=True, jacobian=jacobian)


@pytest.mark.parametrize("jacobian", METHODS)
def test_the_sweep_option_reaches_the_route(jacobian: str) -> None:
    ks = [1e5, 1e6]
    s = fm.sweep(DROP, ks, tolerance=RTOL, events=True, jacobian=jacobian)
    assert s.tolerance is not None
    for i, k in enumerate(ks):
        r = direct(k, jacobian)
        assert np.array_equal(s.tolerance.jacobian[i], r.jacobian)
        assert int(s.tolerance.force_evals[i]) == r.force_evals
        assert int(s.tolerance.rollouts[i]) == r.rollouts
    assert s.to_dict()["tolerance"] == {**fm.defaults()["tolerance"], "rtol": RTOL, "events": True, "jacobian": jacobian}
    # Every route of every row was timed where it ran.
    for route in (s.fixed, s.tolerance):
        assert route.wall_s.dtype == np.float64 and np.all(np.isfinite(route.wall_s)) and np.all(route.wall_s >= 0)


def test_the_two_methods_are_different_routes_to_nearly_the_same_jacobian() -> None:
    rich, fwd = (fm.sweep(DROP, [1e6], tolerance=RTOL, events=True, jacobian=j).tolerance for j in METHODS)
    assert (int(rich.rollouts[0]), int(fwd.rollouts[0])) == (8, 1)
    assert int(rich.force_evals[0]) != int(fwd.force_evals[0])
    flow = fm.flow(DROP, 1e6).jacobian
    for route in (rich, fwd):
        # The target for forward at rtol 1e-6 is 1e-6; Richardson's probes add O(eps^4).
        assert np.abs(route.jacobian[0] - flow).max() / np.abs(flow).max() < 1e-5


@pytest.mark.parametrize("jacobian", METHODS)
def test_the_workbench_option_reaches_the_route(jacobian: str) -> None:
    bench = fm.Workbench(k=1e6, tolerance=RTOL, events=True, jacobian=jacobian)
    assert bench.config()["jacobian"] == jacobian
    t = bench.readout()["tolerance"]
    r = direct(1e6, jacobian)
    assert t["jacobian_method"] == jacobian
    assert t["jacobian"] == r.jacobian.reshape(-1).tolist()  # the matrix, row-major
    assert (t["cost"]["force_evals"], t["cost"]["rollouts"]) == (r.force_evals, r.rollouts)
    assert (t["probe_gap"] is None) == (jacobian == "forward")
    assert t["wall_s"] >= 0


def test_the_workbench_readout_carries_wall_time_beside_every_evaluation_count() -> None:
    r = fm.Workbench(k=1e6, tolerance=RTOL, events=True, jacobian="forward").readout()
    assert r["wall_resolution_s"] > 0
    for name in ("fixed", "corrected", "flow", "tolerance"):
        assert isinstance(r[name]["wall_s"], float) and r[name]["wall_s"] >= 0, name
    assert r["yardstick"]["wall_s"] >= 0
    # The golden evaluation is never timed (parity compares bits): its rows say so.
    e = fm.evaluate({"k": 1e6})
    assert all(e[name]["wall_s"] is None for name in ("fixed", "corrected", "flow", "tolerance"))


def test_set_tolerance_switches_the_method_and_keeps_it() -> None:
    bench = fm.Workbench(k=1e6)
    bench.set_tolerance(True, rtol=RTOL, events=True, jacobian="forward")
    assert bench.readout()["tolerance"]["cost"]["rollouts"] == 1
    bench.set_tolerance(True, rtol=1e-8)  # None keeps the method and events
    c = bench.config()
    assert (c["jacobian"], c["events"], c["rtol"]) == ("forward", True, 1e-8)


def test_forward_without_events_is_the_same_typed_refusal_at_every_door() -> None:
    calls = {
        "tolerance": lambda: fm.tolerance(DROP, 1e6, rtol=RTOL, jacobian="forward"),
        "sweep": lambda: fm.sweep(DROP, [1e6], tolerance=RTOL, jacobian="forward"),
        "Workbench": lambda: fm.Workbench(k=1e6, tolerance=RTOL, jacobian="forward"),
        "set_tolerance": lambda: fm.Workbench(k=1e6).set_tolerance(True, rtol=RTOL, jacobian="forward"),
    }
    messages = set()
    for name, call in calls.items():
        with pytest.raises(fm.InvalidParameter) as e:
            call()
        assert "`events`" in str(e.value) and "forward sensitivities need events" in str(e.value), name
        messages.add(str(e.value))
    assert len(messages) == 1, messages
    # A bench that refused keeps its controls.
    bench = fm.Workbench(k=1e6, tolerance=RTOL, events=True)
    with pytest.raises(fm.InvalidParameter):
        bench.set_tolerance(True, events=False, jacobian="forward")
    assert bench.config()["jacobian"] == "richardson" and bench.config()["events"] is True


def test_an_unknown_method_is_refused_by_name() -> None:
    for call in (lambda: fm.tolerance(DROP, 1e6, jacobian="fwd"),
                 lambda: fm.sweep(DROP, [1e6], tolerance=RTOL, events=True, jacobian="fwd"),
                 lambda: fm.Workbench(k=1e6).set_tolerance(True, jacobian="fwd")):
        with pytest.raises(fm.FerroError, match="fwd"):
            call()


@pytest.mark.parametrize("jacobian", METHODS)
def test_the_cli_flag_reaches_the_route(jacobian: str) -> None:
    p = run_cli("audit", "--json", "--k-min", "1e6", "--k-max", "1e6", "--rtol", str(RTOL), "--events",
            "--jacobian", jacobian)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["tolerance"] == {**fm.defaults()["tolerance"], "rtol": RTOL, "events": True, "jacobian": jacobian}
    (row,) = d["rows"]
    t, r = row["tolerance"], direct(1e6, jacobian)
    assert t["jacobian"] == r.jacobian.reshape(-1).tolist()
    assert (t["cost"]["force_evals"], t["cost"]["rollouts"]) == (r.force_evals, r.rollouts)
    assert t["wall_s"] >= 0 and row["fixed"]["wall_s"] >= 0


def test_the_cli_table_prints_evaluations_and_wall_time() -> None:
    p = run_cli("audit", "--k-min", "1e6", "--k-max", "1e6", "--rtol", str(RTOL), "--events", "--jacobian", "forward")
    assert p.returncode == 0, p.stderr
    assert "by forward sensitivities along 1 rollout" in p.stdout
    (line,) = [x for x in p.stdout.splitlines() if "SIGN" in x and x.startswith("1.00e+06")]
    r = direct(1e6, "forward")
    header = next(x for x in p.stdout.splitlines() if x.strip().startswith("k (N/m)"))
    assert "tol. evals" in header and "tol. wall (µs)" in header
    end = header.index("tol. evals") + len("tol. evals")
    assert line[:end].split()[-1] == f"{r.force_evals:,}", line
    wall = line[:header.index("tol. wall (µs)") + len("tol. wall (µs)")].split()[-1]
    assert float(wall.replace(",", "")) >= 0, line
    csv = run_cli("audit", "--csv", "--k-min", "1e6", "--k-max", "1e6", "--rtol", str(RTOL), "--events",
              "--jacobian", "forward")
    header, values = csv.stdout.splitlines()[:2]
    row = dict(zip(header.split(","), values.split(",")))
    assert int(row["tolerance_force_evals"]) == r.force_evals
    assert float(row["tolerance_wall_s"]) >= 0 and float(row["fixed_wall_s"]) >= 0


def test_the_cli_refuses_forward_without_events_with_the_cores_message() -> None:
    p = run_cli("audit", "--k-min", "1e6", "--k-max", "1e6", "--jacobian", "forward")
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert p.stdout == ""
    assert p.stderr.startswith("ferromotion: error: --events")
    assert "forward sensitivities need events" in p.stderr and "Traceback" not in p.stderr
    bad = run_cli("audit", "--jacobian", "fwd")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
