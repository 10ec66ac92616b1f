"""`ferromotion fit DATA.csv` through subprocess: the report, and a clear message with its exit
status (never a traceback) for every kind of bad data."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from support import run_cli

import ferromotion as fm


def run(*args: str) -> subprocess.CompletedProcess:
    return run_cli("fit", *args)


def write(tmp_path: Path, header: str, rows: list) -> Path:
    p = tmp_path / "data.csv"
    p.write_text(header + "\n" + "\n".join(",".join(str(c) for c in r) for r in rows) + "\n")
    return p


@pytest.fixture()
def good(tmp_path: Path) -> Path:
    t = np.round(np.arange(1, 17) * 0.05, 10)
    y = fm.fit_predict(fm.Drop(zeta=0.2), t, route="flow", k=1e4)["y"]
    y = y + 1e-3 * np.random.default_rng(0).standard_normal(t.size)
    return write(tmp_path, "t,y,sigma_y", [(a, repr(float(b)), 1e-3) for a, b in zip(t, y)])


def test_fit_prints_estimates_and_verdicts(good: Path) -> None:
    p = run(str(good), "--params", "zeta,k", "--route", "flow", "--k", "2e4")
    assert p.returncode == 0, p.stderr
    assert "zeta" in p.stdout and "95% [" in p.stdout and "gradient check: verified" in p.stdout


def test_fit_json_is_the_report(good: Path) -> None:
    p = run(str(good), "--params", "zeta,k", "--route", "flow", "--k", "2e4", "--json", "--no-check")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["schema"] == fm.FIT_SCHEMA and [q["name"] for q in doc["params"]] == ["zeta", "k"]
    assert doc["receipt"]["verdicts"] == ["not-run", "not-run"]


def test_sigma_scale_flag_picks_the_interval_rule(good: Path) -> None:
    docs = {}
    for rule in ("stated", "either"):
        p = run(str(good), "--params", "zeta", "--k", "1e4", "--json", "--no-check", "--sigma-scale", rule)
        assert p.returncode == 0, p.stderr
        docs[rule] = json.loads(p.stdout)["receipt"]["intervals"]
    assert docs["stated"]["sigma_scale"] == "stated" and docs["stated"]["delta_chi2"] == pytest.approx(3.841458820694124)
    assert docs["either"]["sigma_scale"] == "either" and docs["either"]["delta_chi2"] >= docs["stated"]["delta_chi2"]
    p = run(str(good), "--params", "zeta", "--sigma-scale", "maybe")
    assert p.returncode == 2 and "invalid choice" in p.stderr and "Traceback" not in p.stderr


def test_empty_cells_are_missing_samples(tmp_path: Path, good: Path) -> None:
    lines = good.read_text().splitlines()
    cells = lines[4].split(",")
    lines[4] = ",".join([cells[0], "", cells[2]])
    good.write_text("\n".join(lines) + "\n")
    p = run(str(good), "--params", "zeta", "--k", "1e4", "--json", "--no-check")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["observations"] == 15


@pytest.mark.parametrize("header, rows, flags, message", [
    ("time,height", [(0.1, 0.9), (0.5, 0.1), (0.8, 0.3)], [], "needs a column `t`"),
    ("t,y", [(0.1, 0.9), (0.1, 0.1), (0.8, 0.3)], ["--sigma-y", "1e-3"], "increase strictly"),
    ("t,y", [(0.1, 0.9), (0.5, "nan"), (0.8, 0.3)], ["--sigma-y", "1e-3"], "not finite"),
    ("t,y", [(0.1, 0.9), (0.5, "abc"), (0.8, 0.3)], ["--sigma-y", "1e-3"], "expected a number"),
    ("t,y", [(0.1, 0.9), (0.5, 0.1), (0.8, 0.3)], ["--sigma-y", "0"], "--sigma-y 0"),
    ("t,y", [(0.1, 0.9), (0.5, 0.1), (0.8, 0.3)], ["--sigma-y", "-1"], "--sigma-y -1"),
    ("t,y", [(0.1, 0.9), (0.5, 0.1), (0.8, 0.3)], [], "standard deviation"),
    ("t,y", [(0.5, 0.1), (0.8, 0.3)], ["--sigma-y", "1e-3", "--params", "zeta,k"], "too few samples"),
    ("t,y", [(0.1, 0.9), (0.5, 0.1), (0.8, 0.3)], ["--sigma-y", "1e-3", "--params", "spin"], "unknown parameter"),
])
def test_bad_data_is_refused_with_a_message_and_status_1(tmp_path: Path, header, rows, flags, message) -> None:
    p = run(str(write(tmp_path, header, rows)), "--no-check", *flags)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert p.stderr.startswith("ferromotion: error:") and message in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


def test_missing_file_and_no_file(tmp_path: Path) -> None:
    p = run(str(tmp_path / "nope.csv"))
    assert p.returncode == 1 and "cannot read" in p.stderr and "Traceback" not in p.stderr
    p = run()
    assert p.returncode == 2 and "DATA.csv" in p.stderr


def test_unidentifiable_design_exits_3_naming_the_weak_direction(tmp_path: Path) -> None:
    d = fm.Drop(zeta=0.2)
    t = np.round(np.concatenate([np.arange(1, 9), np.arange(10, 17)]) * 0.05, 10)
    y = fm.fit_predict(d, t, route="flow", k=1e8)["y"]
    p = run(str(write(tmp_path, "t,y", [(a, repr(float(b))) for a, b in zip(t, y)])), "--sigma-y", "1e-3",
            "--params", "zeta,k", "--zeta", "0.2", "--k", "1e8", "--no-check")
    assert p.returncode == 3, (p.stdout, p.stderr)
    assert "cannot identify" in p.stderr and "log k" in p.stderr


def test_demo_json_has_every_method_per_scenario() -> None:
    p = run("--demo", "--starts", "1", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    methods = {r["method"] for r in doc["rows"]}
    assert {f"LM + {r} Jacobian" for r in ("fixed", "corrected", "tolerance", "flow", "exact")} <= methods
    assert {s["horizon"] for s in doc["scenarios"]} == {0.8, 1.5}
    fixed = {s["horizon"]: s["dv_dy0"] for s in doc["scenarios"]}
    assert fixed[1.5]["fixed"] < -1e5 < 0 < fixed[1.5]["exact"]
    assert {r["route"] for r in doc["robustness"]} == {"flow", "fixed"}


def test_heights_without_sigma_name_the_flag(tmp_path: Path) -> None:
    p = run(str(write(tmp_path, "t,y", [(0.1, 0.9), (0.5, 0.1), (0.8, 0.3)])), "--no-check")
    assert p.returncode == 1 and "--sigma-y" in p.stderr and "NaN" not in p.stderr, p.stderr


def test_cma_imports_without_the_matplotlib_warning() -> None:
    import sys
    pytest.importorskip("cma")
    code = "from ferromotion.fit import _import_cma; _import_cma()"
    p = subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "matplotlib" not in p.stderr, p.stderr
