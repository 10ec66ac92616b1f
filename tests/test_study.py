"""fm.study: the table equals the package's functions called point by point (bit for bit),
a re-run recomputes nothing done, a killed worker loses nothing, a refused point keeps its
typed error, the spec's mistakes are named, and the test cluster listens on 127.0.0.1 only."""

from __future__ import annotations

import logging
import math
import os
import signal
import sys
import urllib.parse
from pathlib import Path
from typing import Any, Dict, Iterator, List

import numpy as np
import pytest
from support import run_cli

import ferromotion as fm

pd = pytest.importorskip("pandas")
distributed = pytest.importorskip("distributed")
from ferromotion.study import local_cluster_options  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """Two worker processes, one thread each, everything on 127.0.0.1 (the study's own options)."""
    options = local_cluster_options(workers=2, processes=True)
    options["silence_logs"] = logging.CRITICAL  # the kill test's dead worker is expected
    with distributed.LocalCluster(**options) as cluster, distributed.Client(cluster) as c:
        yield c


def _host(address: str) -> str:
    return urllib.parse.urlsplit(address).hostname or ""


def test_the_test_cluster_listens_on_127_0_0_1_only(client: Any) -> None:
    info = client.scheduler_info()
    assert _host(info["address"]) == "127.0.0.1"
    assert len(info["workers"]) == 2
    for address, worker in info["workers"].items():
        assert _host(address) == "127.0.0.1"
        assert _host(worker["nanny"]) == "127.0.0.1"
    assert _host(client.dashboard_link) == "127.0.0.1"
    # The sockets themselves: every listening socket of the scheduler's process is bound to
    # 127.0.0.1 (the workers are checked from inside their processes).
    psutil = pytest.importorskip("psutil")

    def listening() -> List[str]:
        return [c.laddr.ip for c in psutil.Process().net_connections(kind="inet") if c.status == "LISTEN"]

    assert set(listening()) == {"127.0.0.1"}
    for ips in client.run(listening).values():
        assert set(ips) == {"127.0.0.1"}


# --- the spec ------------------------------------------------------------------------------


@pytest.mark.parametrize("spec, named", [
    ({"study": "bounce"}, "`study`"),
    ({"study": "drop", "grdi": {}}, "`grdi`"),
    ({"study": "drop", "grid": {"heigth": 1.0}}, "`grid.heigth`"),
    ({"study": "drop", "grid": {"k": []}}, "`grid.k`"),
    ({"study": "drop", "grid": {"k": "1e4"}}, "`grid.k`"),
    ({"study": "drop", "grid": {"dt": float("nan"), "k": 1e4}}, "`grid.dt`"),
    ({"study": "drop", "grid": {"dt": 1e-4}}, "`grid.k`"),
    ({"study": "drop", "grid": {"k": {"log": [2, 8]}}}, "`grid.k.log`"),
    ({"study": "drop", "grid": {"k": {"range": [2, 8, 1]}}}, "`grid.k`"),
    ({"study": "drop", "grid": {"events": True}}, "`grid.events`"),
    ({"study": "drop", "batch": 0}, "`batch`"),
    ({"study": "drop", "corrected": "yes"}, "`corrected`"),
    ({"study": "quadruped", "grid": {"law": "soft"}}, "`grid.law`"),
    ({"study": "quadruped", "grid": {"refinement": 2.5}}, "`grid.refinement`"),
    ({"study": "quadruped", "corrected": True}, "`corrected`"),
])
def test_a_bad_spec_is_refused_naming_the_key(spec: Dict[str, Any], named: str) -> None:
    with pytest.raises(fm.StudyError, match=named.replace(".", r"\.")):
        fm.study(spec)


def test_a_bad_toml_file_is_refused_with_its_path(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('study = "drop"\n[grid]\nk = [1e4,\n')
    with pytest.raises(fm.StudyError, match="bad.toml: not valid TOML"):
        fm.study(bad)
    bad.write_text('study = "drop"\n[grid]\nzeta = true\n')
    with pytest.raises(fm.StudyError, match=r"bad.toml: `grid\.zeta`: expected a number"):
        fm.study(bad)


def test_the_examples_parse(tmp_path: Path) -> None:
    q = fm.study(ROOT / "examples" / "quadruped_study.toml", out=tmp_path / "q")
    assert (q.n_points, q.n_tasks) == (24, 6)
    d = fm.study(ROOT / "examples" / "drop_study.toml", out=tmp_path / "d")
    assert (d.n_points, d.n_tasks) == (10_000, 20)


# --- bit for bit against point-by-point calls ------------------------------------------------

DROP_SPEC: Dict[str, Any] = {
    "study": "drop", "batch": 3, "corrected": True, "blame": True,
    # height 100 m never lands before t_final (NoImpact for all its points); k = -1 is refused
    # by the core (InvalidParameter) while the other stiffnesses of the same call still run.
    "grid": {"height": [1.0, 100.0, 0.5], "k": [1e3, -1.0, 1e5, 1e7], "dt": 1e-4, "rtol": 1e-6},
}


def _drop_reference(height: float, k: float) -> Dict[str, Any]:
    """The point's row from fm.sweep called on that one point, or its error."""
    try:
        s = fm.sweep(fm.Drop(height=height), [k], 1e-4, tolerance=1e-6, corrected=True, blame=True)
    except fm.FerroError as e:
        return {"error": type(e).__name__, "error_message": str(e)}
    row: Dict[str, Any] = {"error": None, "error_message": None}
    row.update(exact_y=s.exact.state[0], exact_v=s.exact.state[1])
    for name in ("fixed", "tolerance", "corrected"):
        route = getattr(s, name)
        row[f"{name}_y"], row[f"{name}_v"] = route.state[0]
        for i in range(2):
            for j in range(2):
                row[f"{name}_J{i}{j}"] = route.jacobian[0, i, j]
                row[f"exact_J{i}{j}"] = s.exact.jacobian[i, j]
        for field in ("dy", "dv", "forward_error", "forward_unit", "gradient_error", "dv_dy0", "right_sign",
                      "steps", "rejected_steps", "force_evals", "state_force_evals", "rollouts", "probe_dependent"):
            row[f"{name}_{field}"] = getattr(route, field)[0]
    for field in ("integrator_share", "contact_share", "ratio", "noise_floor", "integrator_below_floor",
                  "contact_below_floor"):
        row[f"blame_{field}"] = getattr(s.blame, field)[0]
    row["tolerance_cost_ratio"] = s.tolerance_cost_ratio[0]
    return row


def _same(a: Any, b: Any) -> bool:
    """Equal bit for bit (NaN equals NaN; None and NaN both mean missing)."""
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    if isinstance(a, (float, np.floating)):
        return isinstance(b, (float, np.floating)) and np.float64(a).tobytes() == np.float64(b).tobytes()
    return bool(a == b)


def test_a_drop_study_equals_sweep_point_by_point(client: Any, tmp_path: Path) -> None:
    s = fm.study(DROP_SPEC, out=tmp_path / "drop")
    assert s.n_tasks == 4  # 12 points, 3 per task: calls are split and packed across tasks
    table = s.compute(client, progress=False)
    assert list(table["point"]) == list(range(12))
    assert list(table["height"]) == [1.0] * 4 + [100.0] * 4 + [0.5] * 4
    assert list(table["k"]) == [1e3, -1.0, 1e5, 1e7] * 3
    for _, got in table.iterrows():
        want = _drop_reference(got["height"], got["k"])
        for column, value in want.items():
            assert _same(value, got[column]), (got["point"], column, value, got[column])
    errors = table.groupby("error")["point"].apply(list).to_dict()
    assert errors == {"InvalidParameter": [1, 9], "NoImpact": [4, 5, 6, 7]}
    ok = table["error"].isna()
    assert ok.sum() == 6 and table.loc[ok, "fixed_gradient_error"].notna().all()


QUAD_SPEC: Dict[str, Any] = {
    # A short horizon keeps it quick; dt = 4e-3 does not divide it (StepDoesNotDivide).
    "study": "quadruped", "grid": {"law": ["rigid", "penalty"], "stiffness": [1e3, 1e4], "t_final": 0.03,
                                    "dt": [1e-3, 4e-3, 5e-4], "friction": [0.5, 1.0]},
}


def test_a_quadruped_study_equals_quadruped_point_by_point(client: Any, tmp_path: Path) -> None:
    s = fm.study(QUAD_SPEC, out=tmp_path / "quad")
    assert (s.n_points, s.n_tasks) == (18, 6)
    table = s.compute(client, progress=False)
    assert list(table["law"]) == ["rigid", "penalty", "penalty"] * 6
    for _, got in table.iterrows():
        stiffness = [] if got["law"] == "rigid" else [got["stiffness"]]
        try:
            q = fm.quadruped(stiffness=stiffness, t_final=0.03, dt=got["dt"], robot={"friction": got["friction"]})
        except fm.FerroError as e:
            assert (got["error"], got["error_message"]) == (type(e).__name__, str(e))
            continue
        assert got["error"] is None
        row = -1  # the law asked for: the rigid law alone, or the one penalty stiffness
        want = {name: col[row] for name, col in q.table().items()}
        assert _same(want["stiffness"], got["stiffness"]) and want["law"] == got["law"]
        for column, value in want.items():
            assert _same(value.item() if isinstance(value, np.generic) else value, got[column]), column
        assert got["failure"] == q.laws[row].failure
    assert set(table.loc[table["dt"] == 4e-3, "error"]) == {"StepDoesNotDivide"}
    assert table.loc[table["dt"] != 4e-3, "error"].isna().all()


# --- nothing lost -------------------------------------------------------------------------

RESUME_SPEC: Dict[str, Any] = {"study": "drop", "batch": 4,
                               "grid": {"zeta": [0.1, 0.3], "k": {"log": [3, 7, 2]}, "dt": 1e-4}}


def test_a_rerun_resumes_and_recomputes_nothing_done(client: Any, tmp_path: Path) -> None:
    out = tmp_path / "resume"
    s = fm.study(RESUME_SPEC, out=out)
    assert s.n_tasks == 5
    calls: List[int] = []
    first = s.compute(client, progress=False, on_task=lambda done, total: calls.append(done))
    assert calls == [1, 2, 3, 4, 5]
    parts = sorted((out / "parts").glob("b*.parquet"))
    stamps = {p.name: p.stat().st_mtime_ns for p in parts}
    # Without resume the finished store is refused; another spec in the same store too.
    with pytest.raises(fm.StudyError, match="--resume"):
        fm.study(RESUME_SPEC, out=out)
    with pytest.raises(fm.StudyError, match="holds a different study"):
        fm.study({**RESUME_SPEC, "batch": 5}, out=out, resume=True)
    # A complete store: nothing runs at all (no client needed), the same table comes back.
    again = fm.study(RESUME_SPEC, out=out, resume=True).compute(client=None, progress=False)
    pd.testing.assert_frame_equal(again, first)
    # Lose one part (a crash before it was written): only that task runs.
    parts[2].unlink()
    calls.clear()
    resumed = fm.study(RESUME_SPEC, out=out, resume=True)
    assert resumed.done() == [0, 1, 3, 4]
    third = resumed.compute(client, progress=False, on_task=lambda done, total: calls.append(done))
    assert calls == [5] and [t["task"] for t in resumed.stats] == [2]
    pd.testing.assert_frame_equal(third, first)
    for p in sorted((out / "parts").glob("b*.parquet")):
        if p.name != parts[2].name:
            assert p.stat().st_mtime_ns == stamps[p.name], p.name


KILL_SPEC: Dict[str, Any] = {
    # 12 tasks of ~0.1-0.3 s each (the tolerance route at a tight rtol).
    "study": "drop", "batch": 6,
    "grid": {"height": [0.6, 0.8, 1.0, 1.2], "k": {"geomspace": [1e4, 1e6, 18]}, "dt": 1e-4, "rtol": 1e-9},
}


def test_a_killed_worker_loses_nothing(client: Any, tmp_path: Path) -> None:
    out = tmp_path / "kill"
    s = fm.study(KILL_SPEC, out=out)
    assert s.n_tasks == 12
    pids = client.run(os.getpid)
    killed: Dict[str, Any] = {}

    def kill_a_busy_worker(done: int, total: int) -> None:
        if killed:
            return
        # The first part is written: kill (SIGKILL, no goodbye) a worker that is running a task.
        busy = [addr for addr, keys in client.processing().items() if keys] or list(pids)
        killed["address"] = busy[0]
        killed["parts"] = len(list((out / "parts").glob("b*.parquet")))
        os.kill(pids[busy[0]], signal.SIGKILL)

    table = s.compute(client, progress=False, on_task=kill_a_busy_worker)
    assert killed and killed["parts"] < s.n_tasks  # it died mid-study
    assert killed["address"] not in client.scheduler_info()["workers"]  # the scheduler saw it go
    assert list(table["point"]) == list(range(s.n_points)) and table["error"].isna().all()
    # The same rows as a run nobody interrupted (one worker thread in this process).
    calm = fm.study(KILL_SPEC).compute(workers=1, processes=False, progress=False)
    pd.testing.assert_frame_equal(table, calm)


# --- the command line ---------------------------------------------------------------------


def test_the_cli_runs_resumes_and_refuses(client: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ferromotion.cli import main

    spec = tmp_path / "tiny.toml"
    spec.write_text('study = "drop"\nbatch = 2\n[grid]\nk = [1e4, 1e5, 1e6]\nheight = [1.0, 100.0]\n')
    argv = ["study", str(spec), "--out", str(tmp_path / "out"), "--scheduler", client.scheduler.address, "--quiet"]
    assert main(argv) == 0
    assert "6 points, 3 refused by the core (NoImpact)" in capsys.readouterr().out
    table = pd.read_parquet(tmp_path / "out" / "table.parquet")
    assert list(table["error"].fillna("")) == ["", "", "", "NoImpact", "NoImpact", "NoImpact"]
    assert main(argv) == 1 and "pass --resume" in capsys.readouterr().err
    assert main([*argv, "--resume"]) == 0 and "(3 already done)" in capsys.readouterr().err
    spec.write_text('study = "drop"\n[grid]\nk = [1e4, "x"]\n')
    assert main(argv) == 1
    assert "tiny.toml: `grid.k`: expected a number, got 'x'" in capsys.readouterr().err


def test_the_cli_command_is_installed(tmp_path: Path) -> None:
    p = run_cli("study", "--help", timeout=120)
    assert p.returncode == 0 and "--scheduler ADDR" in p.stdout and "--resume" in p.stdout
