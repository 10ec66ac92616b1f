"""The quadruped through the binding: the two-axis table as numpy columns, trajectories for
animation, failures, configuration, the GIL. The physics is tested in cargo
(crates/ferromotion-quadruped/tests/quadruped.rs)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import ferromotion as fm
from ferromotion import _core
from gil import assert_gil_released

COLUMNS = {
    "label", "law", "stiffness", "penetration", "creep", "contact_work", "energy_change", "converged_distance",
    "distance_to_rigid", "mode_changes", "tangent_error", "typical_probe_error", "converged_error",
    "converged_spread", "converged_tangent_error", "refined_tangent_error", "certified_columns",
    "converged_certified_columns", "failed",
}


@pytest.fixture(scope="module")
def report() -> fm.QuadrupedReport:
    # 1e4 N/m runs; 1e8 N/m is far beyond the explicit step's stability at dt = 1 ms and fails.
    return fm.quadruped(stiffness=[1e4, 1e8])


def test_laws_and_labels(report: fm.QuadrupedReport) -> None:
    assert [law.label for law in report.laws] == ["rigid (LCP)", "penalty k=1e4", "penalty k=1e8"]
    assert report.rigid is report.laws[0] and report.penalty == report.laws[1:]
    assert report.rigid.law == "rigid" and report.rigid.stiffness is None
    assert report.penalty[0].stiffness == 1e4 and report.penalty[0].contact["law"] == "penalty"
    assert report.inputs == ("z0", "xdot0", "kp")
    assert report.outputs == ("x", "z", "pitch", "xdot", "zdot", "pitch_rate")
    assert report.config["converged_gradient"] is False and report.config["stiffness"] == [1e4, 1e8]


def test_table_columns(report: fm.QuadrupedReport) -> None:
    t = report.table()
    assert set(t) == COLUMNS
    for name, col in t.items():
        assert col.shape == (3,), name
        assert not col.flags.writeable, name
    assert t["mode_changes"].dtype == t["certified_columns"].dtype == np.int64
    assert t["failed"].dtype == bool and t["failed"].tolist() == [False, False, True]
    assert t["penetration"].dtype == np.float64 and math.isnan(t["stiffness"][0])
    # The rigid law does not penetrate; the soft penalty law does.
    assert t["penetration"][0] < 1e-9 < t["penetration"][1]
    assert t["distance_to_rigid"][0] == 0.0
    # Each column is the core's number, by name.
    law = report.penalty[0]
    assert law.forward is not None and law.gradient is not None and law.modes is not None
    assert t["creep"][1] == law.forward["max_creep"]
    assert t["energy_change"][1] == law.forward["energy_end"] - law.forward["energy_start"]
    assert t["mode_changes"][1] == law.modes["total"] and t["tangent_error"][1] == law.gradient["tangent_error"]
    # A certified reference column has no failure to explain.
    assert all(c["certified"] and c["failure"] is None for c in law.gradient["reference"])
    # Not computed without converged_gradient: NaN, never 0.
    assert np.isnan(t["converged_error"]).all() and np.isnan(t["refined_tangent_error"]).all()
    assert np.isnan(t["converged_spread"]).all() and (t["converged_certified_columns"] == -1).all()


def test_a_failed_law_is_reported_not_raised(report: fm.QuadrupedReport) -> None:
    bad = report.penalty[1]
    assert bad.failure is not None and "unstable step" in bad.failure
    assert bad.forward is None and bad.gradient is None and bad.trajectory is None and bad.tangent is None
    t = report.table()
    assert np.isnan(t["penetration"][2]) and t["mode_changes"][2] == -1 and t["certified_columns"][2] == -1
    assert "FAILED" in report.format_table() and "1 failed" in repr(report) and "FAILED" in repr(bad)


def test_the_table_prints_within_a_terminal_with_words_for_what_is_missing(report: fm.QuadrupedReport) -> None:
    t = report.table()
    text = str(t)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 120, text
    # No sentinel reaches the reader: NaN and -1 ("not computed") read n/a, never "nan" or "-1".
    cells = text.split()
    assert "nan" not in cells and "-1" not in cells and "n/a" in cells, text
    # Every column is on screen or named as not computed; each law's row carries its label.
    for name in t:
        assert name in text, name
    assert "not computed" in text and "converged_error" in text.split("not computed")[1]
    assert sum(line.startswith("penalty k=1e8") for line in lines) >= 2  # one line per law in each block
    # The data keep their sentinels (the display only reads them).
    assert t["certified_columns"][2] == -1 and np.isnan(t["penetration"][2])
    assert np.isnan(t["stiffness"][0]) and t["mode_changes"][1] == report.penalty[0].modes["total"]


def test_format_table_is_the_cores(report: fm.QuadrupedReport) -> None:
    lines = report.format_table().splitlines()
    assert lines[0].startswith("law") and "tan err" in lines[0]
    assert [line.split("|")[0].strip() for line in lines[1:]] == [law.label for law in report.laws]


def test_trajectories_for_animation(report: fm.QuadrupedReport) -> None:
    tr = report.rigid.trajectory
    assert tr is not None and tr is report.rigid.trajectory  # fetched once
    n = round(report.config["t_final"] / report.config["dt"])
    assert tr.t.shape == (n + 1,) and tr.t.dtype == np.float64
    assert tr.q.shape == tr.v.shape == (n + 1, 11)
    assert tr.modes.shape == (n, 4) and tr.modes.dtype == np.int8
    assert set(np.unique(tr.modes)) <= set(range(len(fm.MODE_NAMES)))
    assert fm.MODE_NAMES == ("separated", "sticking", "sliding_forward", "sliding_backward")
    assert fm.FOOT_NAMES == ("FL", "FR", "HL", "HR")
    assert tr.points.shape == (n + 1, 12, 2) and tr.feet.shape == tr.hips.shape == tr.knees.shape == (n + 1, 4, 2)
    # The trunk's (x, z) in q and the drawing points agree: the hips sit about the trunk.
    np.testing.assert_allclose(tr.hips.mean(axis=1), tr.q[:, :2], atol=0.05)
    d = tr.to_dict()
    assert len(d["t"]) == n + 1 and d["mode_names"] == list(fm.MODE_NAMES)


def test_jacobians(report: fm.QuadrupedReport) -> None:
    law = report.penalty[0]
    assert law.tangent is not None and law.tangent.shape == (6, 3)
    assert law.reference is not None and law.reference.shape == (6, 3)
    np.testing.assert_allclose(law.tangent, law.reference, rtol=1e-4, atol=1e-6)


def test_to_dict_has_no_trajectories(report: fm.QuadrupedReport) -> None:
    d = json.loads(report.to_json())
    assert d == report.to_dict()
    assert d["rigid"]["trajectory"] is None and d["rigid"]["forward"] is not None
    assert len(d["penalty"]) == 2


def test_configuration_reaches_the_core() -> None:
    r = fm.quadruped(stiffness=1e4, dt=2e-3, t_final=0.1, refinement=4, speed=0.2, robot={"friction": 0.6})
    assert r.config["dt"] == 2e-3 and r.config["refinement"] == 4 and r.config["robot"]["friction"] == 0.6
    assert r.config["stiffness"] == [1e4]
    tr = r.rigid.trajectory
    assert tr is not None and tr.t.shape == (51,)


def test_configuration_errors() -> None:
    with pytest.raises(fm.InvalidParameter, match="`dt`"):
        fm.quadruped(dt=math.nan)
    with pytest.raises(fm.InvalidParameter, match="`friction`"):
        fm.quadruped(robot={"friction": math.inf})
    with pytest.raises(fm.InvalidParameter, match="`stiffness`"):
        fm.quadruped(stiffness=[-1.0])
    with pytest.raises(fm.InvalidParameter, match=r"`stiffness`: expected a number or an array of shape \(n,\)"):
        fm.quadruped(stiffness=np.ones((2, 2)))
    with pytest.raises(fm.StepDoesNotDivide):
        fm.quadruped(dt=3e-3)
    with pytest.raises(fm.ScenarioError, match="bogus"):
        fm.quadruped(robot={"bogus": 1.0})


def test_rollout() -> None:
    tr = fm.quadruped_rollout(2e4, steps=20)
    assert tr.q.shape == (21, 11) and tr.modes.shape == (20, 4)
    assert fm.quadruped_rollout(steps=3).t.tolist() == pytest.approx([0.0, 1e-3, 2e-3, 3e-3])
    with pytest.raises(fm.Unstable):
        fm.quadruped_rollout(1e8)


def test_quadruped_releases_the_gil() -> None:
    config = json.dumps({"stiffness": [1e4], "t_final": 0.2})
    assert_gil_released(lambda: _core.quadruped(config), min_elapsed=0.05, what="run")



def test_verdict_is_the_cores(report: fm.QuadrupedReport) -> None:
    # The verdict is a field of the core's document (the lab reads the same one); the
    # rules themselves are pinned in crates/ferromotion-quadruped/tests/quadruped_verdict.rs.
    v = report.verdict
    assert v == json.loads(report.to_json())["verdict"]
    assert [m["key"] for m in v["gradient"]] == ["tangent_error", "typical_probe_error", "converged_error"]
    assert {m["outcome"] for m in v["gradient"]} <= {"tie", "win", "loss", "undecided", "not computed"}
    assert set(v["compared"]) <= set(range(len(report.penalty)))
