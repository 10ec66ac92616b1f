"""The command line through subprocess: output formats and exit statuses."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import List

import ferromotion as fm
import numpy as np
import pytest
from support import run_cli


@pytest.fixture(scope="module")
def audit_json() -> dict:
    p = run_cli("audit", "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_json_has_thirteen_rows_and_the_exponent(audit_json: dict) -> None:
    rows = audit_json["rows"]
    assert len(rows) == 13
    assert rows[0]["k"] == 1e2 and rows[-1]["k"] == 1e8
    for row in rows:
        assert row["tolerance"] is not None and row["corrected"] is not None and row["blame"] is not None
    exponent = audit_json["exponent"]
    assert exponent["points"] == 9 and set(exponent) == {"slope", "intercept", "r2", "points"}
    assert audit_json["tolerance"] == {**fm.defaults()["tolerance"], "rtol": fm.defaults()["tolerance"]["rtol"], "events": False, "jacobian": "richardson"}
    assert audit_json["dt"] == 1e-4


def test_table(audit_json: dict) -> None:
    p = run_cli("audit")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    rows = [line for line in lines if "RIGHT SIGN" in line or "WRONG SIGN" in line]
    assert len(rows) == 13
    assert any(line.startswith("divergence exponent:") and "points" in line and "R^2" in line for line in lines)
    # The table shows the fitted slope the JSON carries.
    assert f"{audit_json['exponent']['slope']:.3f}" in p.stdout


#: One row of the audit's text table: k, |dy| (m), |dv| (m/s), gradient error, the fixed
#: route's sign, its evaluations and wall time (µs), then the tolerance route's error, flags,
#: evaluations, wall time (µs) and cost ratio.
ROW = re.compile(
    r"^\s*(?P<k>\S+)(?: !)?\s+(?P<dy>\S+)\s+(?P<dv>\S+)\s+(?P<grad>\S+)\s+"
    r"(?P<sign>RIGHT SIGN, FAR OFF|RIGHT SIGN|WRONG SIGN)\s+(?P<fixed_evals>[\d,]+)\s+(?P<fixed_wall>[\d,]+\.\d)\s+"
    r"(?P<tol>\S+)(?P<probe> \*)?(?P<tol_sign> WRONG SIGN| FAR OFF)?\s+(?P<tol_evals>[\d,]+)\s+"
    r"(?P<tol_wall>[\d,]+\.\d)\s+(?P<ratio>\S+)x\s")


def audit_rows(*args: str) -> list:
    p = run_cli("audit", *args)
    assert p.returncode == 0, p.stderr
    rows = [ROW.match(line) for line in p.stdout.splitlines() if "SIGN" in line and not line.strip().startswith("k (N/m)")]
    assert rows and all(rows), p.stdout
    return rows


def sign_state(route, exact) -> str:
    """The three-state sign, from two routes' Jacobians, independently of the core's verdict."""
    got, want = route.jacobian[1, 0], exact.jacobian[1, 0]
    error = np.abs(route.jacobian - exact.jacobian).max() / np.abs(exact.jacobian).max()
    if np.sign(got) != np.sign(want):
        return "WRONG SIGN"
    return "RIGHT SIGN, FAR OFF" if error >= 1.0 else "RIGHT SIGN"


def test_audit_prints_dy_in_metres_in_its_own_column_and_the_three_state_sign() -> None:
    p = run_cli("audit")
    header = next(line for line in p.stdout.splitlines() if line.strip().startswith("k (N/m)"))
    assert "|dy| at T (m)" in header and "|dv| at T (m/s)" in header and "forward error" not in header
    exact = fm.exact(fm.Drop())
    states = set()
    rows = audit_rows()
    ks = fm.log_grid(2, 8, 2)  # the audit's default grid, in its order
    assert len(rows) == len(ks)
    for row, k in zip(rows, ks):
        assert float(row["k"]) == pytest.approx(k, rel=5e-3)
        fixed = fm.fixed(fm.Drop(), k=k, dt=1e-4)
        # |dy| and |dv| as the closed form and the fixed route give them, never mixed in one column.
        assert float(row["dy"]) == pytest.approx(abs(fixed.state[0] - exact.state[0]), rel=6e-4)
        assert float(row["dv"]) == pytest.approx(abs(fixed.state[1] - exact.state[1]), rel=6e-4)
        assert row["sign"] == sign_state(fixed, exact), (k, row["sign"])
        states.add(row["sign"])
    # The default grid reaches all three states (1e8 N/m is right-signed by accident at dt = 1e-4).
    assert states == {"RIGHT SIGN", "WRONG SIGN", "RIGHT SIGN, FAR OFF"}


def test_audit_takes_the_one_default_rtol_and_it_is_not_probe_dependent_at_1e6() -> None:
    # One default for every door: the core's (fm.defaults()), which the lab's workbench opens on too.
    rtol = fm.defaults()["tolerance"]["rtol"]
    assert fm.Workbench(fm.Drop()).config()["rtol"] == rtol
    p = run_cli("audit", "--k-min", "1e6", "--k-max", "1e6")
    assert f"tolerance route rtol = {rtol:g} without event location" in p.stdout
    (row,) = audit_rows("--k-min", "1e6", "--k-max", "1e6")
    # At that rtol the route's two probe sizes agree at 1e6 (no "*") and it has the right sign.
    assert not fm.tolerance(fm.Drop(), k=1e6).probe_dependent
    assert row["probe"] is None and row["tol_sign"] is None, row.group(0)


def test_audit_wall_times_are_columns_in_microseconds_aligned_at_the_point() -> None:
    # One unit per column, named in its header ("µs", never "us"), every number with one decimal
    # and right-aligned under the header, so the points line up: never "0.024 ms" above "9.8 us".
    p = run_cli("audit", "--k-min", "1e2", "--k-max", "1e8", "--per-decade", "1", "--budget", "8000")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    header = next(line for line in lines if line.strip().startswith("k (N/m)"))
    rows = [line for line in lines if ROW.match(line)]
    assert len(rows) == 7, p.stdout
    for column, group in (("fixed wall (µs)", "fixed_wall"), ("tol. wall (µs)", "tol_wall")):
        end = header.index(column) + len(column)
        for line in rows:
            assert ROW.match(line).end(group) == end, (column, line)
    budget_header = next(line for line in lines if line.strip().startswith("route"))
    end = budget_header.index("wall (µs)") + len("wall (µs)")
    budget = [line for line in lines if re.match(r"  (Euler|RK4|adaptive|corrected)", line)]
    assert len(budget) == 6, p.stdout
    for line in budget:
        assert re.fullmatch(r"[\d,]+\.\d", line[:end].split()[-1]), line
    assert not re.search(r"\d (us|ms)\b", p.stdout), p.stdout


def test_budget_table_is_the_cores() -> None:
    # The equal-budget table rides in the audit's JSON as the core's document, and the text
    # prints the same rows; the numbers are the core's (fm.equal_budget), not recomputed.
    p = run_cli("audit", "--json", "--k-min", "1e6", "--k-max", "1e6", "--budget", "8000")
    assert p.returncode == 0, p.stderr
    b = json.loads(p.stdout)["equal_budget"]
    import ferromotion as fm

    def untimed(doc):  # each run times its own route calls: compare everything else
        top = {k: v for k, v in doc.items() if k != "wall_resolution_s"}
        return {**top, "rows": [{k: v for k, v in r.items() if k != "wall_s"} for r in doc["rows"]]}

    assert untimed(b) == untimed(fm.equal_budget(k=1e6, budget=8000))
    assert all(r["wall_s"] >= 0 for r in b["rows"])
    assert [r["route"] for r in b["rows"]] == ["Euler uniform", "RK4 uniform", "adaptive", "adaptive + events",
                                              "adaptive + forward", "corrected"]
    assert all(r["force_evals"] <= 8000 for r in b["rows"] if r["route"] != "corrected")
    text = run_cli("audit", "--k-min", "1e6", "--k-max", "1e6", "--budget", "8000")
    assert text.returncode == 0, text.stderr
    assert "Equal budget: 8,000 force evaluations" in text.stdout and "Probe-size trap" in text.stdout
    bad = run_cli("audit", "--budget", "10")
    assert bad.returncode != 0 and "budget" in bad.stderr


def test_csv(audit_json: dict) -> None:
    p = run_cli("audit", "--csv")
    assert p.returncode == 0, p.stderr
    lines: List[str] = p.stdout.splitlines()
    assert len(lines) == 14
    header = lines[0].split(",")
    assert header[0] == "k" and "gradient_error" in header and "contact_share" in header
    first = dict(zip(header, lines[1].split(",")))
    assert float(first["gradient_error"]) == audit_json["rows"][0]["fixed"]["errors"]["gradient"]


def test_options_reach_the_sweep() -> None:
    p = run_cli("audit", "--json", "--k-min", "1e4", "--k-max", "1e6", "--per-decade", "1", "--dt", "1e-5",
            "--rtol", "1e-6", "--events")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert [r["k"] for r in d["rows"]] == [1e4, 1e5, 1e6]
    assert d["dt"] == 1e-5 and d["tolerance"] == {**fm.defaults()["tolerance"], "rtol": 1e-6, "events": True, "jacobian": "richardson"}


def test_no_exponent_outside_its_range() -> None:
    p = run_cli("audit", "--k-min", "1e2", "--k-max", "1e3")
    assert p.returncode == 0, p.stderr
    assert "divergence exponent: not available" in p.stdout
    p = run_cli("audit", "--json", "--k-min", "1e2", "--k-max", "1e3")
    assert json.loads(p.stdout)["exponent"] is None


@pytest.mark.parametrize("command", [[], ["audit"], ["descent"], ["check"], ["quadruped"], ["lab"], ["app"]])
def test_help(command: List[str]) -> None:
    p = run_cli(*command, "--help")
    assert p.returncode == 0 and p.stdout.startswith("usage: ferromotion"), p.stderr
    assert p.stderr == ""


def test_top_level_help_lists_every_command() -> None:
    p = run_cli("--help")
    for command in ("audit", "descent", "check", "quadruped", "lab", "app"):
        assert re.search(rf"^    {command}\b", p.stdout, re.M), command


def test_version() -> None:
    import ferromotion

    p = run_cli("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"ferromotion {ferromotion.__version__}"


@pytest.mark.parametrize("args", [
    [],
    ["bogus"],
    ["descent", "--grid", "2"],
    ["descent", "--grid", "many"],
    ["descent", "--bogus"],
    ["lab", "--port", "70000"],
    ["lab", "--port", "http"],
    ["app", "--port", "-1"],
    ["audit", "--bogus"],
    ["audit", "--k-min", "-1"],
    ["audit", "--k-max", "nan"],
    ["audit", "--per-decade", "0"],
    ["audit", "--dt", "fast"],
    ["audit", "--json", "--csv"],
    ["check"],
    ["check", "no-such-example"],
    ["check", "scalar", "--seed", "-1"],
    ["check", "scalar", "--tol", "0"],
    ["quadruped", "--stiffness", "-1e4"],
])
def test_bad_arguments_exit_2(args: List[str]) -> None:
    p = run_cli(*args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stdout == ""


@pytest.mark.parametrize("args, text", [
    (["--dt", "3e-4"], "does not divide"),
    (["--dt", "1e-8"], "--dt 1e-8: the fixed route goes past its cap of 10,000,000 steps: "),
    # A refused keyword the command has as a flag is told with the flag and the value as typed.
    (["--rtol", "0"], "--rtol 0: must be finite and > 0"),
    (["--k-min", "1e6", "--k-max", "1e4"], "--k-max 10000: must be >= --k-min = 1e6"),
])
def test_core_refusals_exit_1_with_the_message(args: List[str], text: str) -> None:
    p = run_cli("audit", *args)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert p.stdout == ""
    assert p.stderr.startswith("ferromotion: error: ") and text in p.stderr
    assert "Traceback" not in p.stderr


def test_console_script() -> None:
    script = Path(sys.executable).with_name("ferromotion")
    assert script.exists()
    p = subprocess.run([str(script), "audit", "--json", "--k-min", "1e4", "--k-max", "1e4"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert len(json.loads(p.stdout)["rows"]) == 1


# --- descent --------------------------------------------------------------------------------


def test_descent_prints_the_per_arm_table() -> None:
    p = run_cli("descent")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("arm "))
    assert "converged" in lines[header] and "cannot step" in lines[header] and "force evals" in lines[header]
    table = lines[header + 1:]
    labels = [line.split("  ")[0] for line in table]
    assert labels == [a.label for a in __import__("ferromotion").descent(grid=21).arms]
    exact = next(line for line in table if line.startswith("exact "))
    assert "4/4" in exact
    assert lines[0].startswith("ferromotion descent:") and any(line.startswith("starts:") for line in lines)


def test_descent_json() -> None:
    p = run_cli("descent", "--json", "--grid", "11")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["problem"]["grid"] == 11
    assert len(d["landscape"]["loss"]) == 11 * 11  # the core's row-major grid, null where infeasible
    assert None in d["landscape"]["loss"]
    assert len(d["arms"]) == 7 and len(d["arms"][0]["runs"]) == 4
    assert d["arms"][0]["arm"] == {"route": "exact"}
    assert d["arms"][1]["arm"] == {"route": "fixed", "k": 1e4, "dt": 1e-4}
    assert isinstance(d["arms"][0]["runs"][0]["path"][0], list)


def test_output_to_a_closed_pipe_is_not_a_traceback() -> None:
    # `ferromotion audit --json | head -1`: ~0.5 MB of JSON into a pipe whose reader leaves early.
    script = (
        "import subprocess, sys\n"
        f"p = subprocess.Popen([{sys.executable!r}, '-m', 'ferromotion', 'audit', '--json', '--per-decade', '30'],"
        " stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
        "p.stdout.readline(); p.stdout.close()\n"
        "err = p.stderr.read().decode(); p.wait()\n"
        "print(p.returncode); print(err)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300).stdout
    status, _, err = out.partition("\n")
    assert status == "1" and err.strip() == "", out


# --- check ----------------------------------------------------------------------------------


def test_check_list_says_what_each_example_checks() -> None:
    import ferromotion as fm

    p = run_cli("check", "--list")
    assert p.returncode == 0, p.stderr
    names = tuple(line for line in p.stdout.splitlines() if line and not line.startswith(" "))
    assert names == fm.EXAMPLES
    blocks = p.stdout.split("\n")
    for name in fm.EXAMPLES:
        i = blocks.index(name)
        checks, against, verdict = (line.strip() for line in blocks[i + 1:i + 4])
        r = fm.check_example(name)
        assert checks.startswith("checks: ") and r.objective["name"] in checks and r.objective["units"] in checks
        assert against.startswith("claimed gradient: ") and r.objective["route"] in against
        assert verdict == f"verdict: {r.verdict} ({r.why})"


@pytest.mark.parametrize("example, status, verdict", [
    ("drop-exact", 0, "verified"),
    ("drop-fixed", 3, "not-verified"),
    ("drop-across-impact", 4, "refused"),
    ("drop-grazing", 4, "refused"),
])
def test_check_exit_status_is_the_verdict(example: str, status: int, verdict: str) -> None:
    p = run_cli("check", example)
    assert p.returncode == status, (p.stdout, p.stderr)
    assert p.stderr == ""
    assert len(p.stdout.splitlines()) == 1 and f": {verdict} — " in p.stdout


def test_check_help_documents_the_exit_statuses() -> None:
    p = run_cli("check", "--help")
    text = " ".join(p.stdout.split())
    assert "0 verified (or verified within evaluation noise); 3 not verified" in text and "4 refused" in text
    assert "5 verified in absolute terms only" in text and "2 on bad arguments" in text
    # The checker's named objectives are worked examples ("fixture" is a conformance fixture).
    assert "EXAMPLE" in text and "Examples: scalar, projectile," in text and "fixture" not in text.lower()


def test_check_json_and_out(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    import ferromotion as fm

    out = tmp_path / "receipt.json"
    p = run_cli("check", "drop-fixed", "--json", "--out", str(out), "--seed", "3", "--directions", "2")
    assert p.returncode == 3, p.stderr
    receipt = json.loads(p.stdout)
    assert json.loads(out.read_text(encoding="utf-8")) == receipt
    jsonschema.validate(receipt, fm.receipt_schema())
    assert receipt["report"]["verdict"] == "not-verified"
    assert receipt["report"]["options"]["seed"] == 3 and receipt["report"]["options"]["random_directions"] == 2
    assert dict(receipt["environment"]["extra"])["package"] == "ferromotion"


def test_check_out_without_json_prints_the_summary(tmp_path: Path) -> None:
    out = tmp_path / "scalar.json"
    p = run_cli("check", "scalar", "--out", str(out))
    assert p.returncode == 0 and p.stdout.count("\n") == 1 and ": verified" in p.stdout
    assert json.loads(out.read_text(encoding="utf-8"))["report"]["verdict"] == "verified"


# --- quadruped ------------------------------------------------------------------------------


def test_quadruped_prints_the_two_axis_table() -> None:
    p = run_cli("quadruped", "--stiffness", "1e4", "1e8")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("ferromotion quadruped:")
    header = next(i for i, line in enumerate(lines) if line.startswith("law "))
    rows = [line.split("|")[0].strip() for line in lines[header + 1:header + 4]]
    assert rows == ["rigid (LCP)", "penalty k=1e4", "penalty k=1e8"]
    assert "FAILED: run at dt: unstable step" in lines[header + 3]
    assert any(line.strip().startswith("rigid (LCP)") and " = " in line for line in lines[header + 4:])


def test_quadruped_json() -> None:
    p = run_cli("quadruped", "--json", "--stiffness", "1e4", "--dt", "2e-3")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["config"]["dt"] == 2e-3 and d["config"]["stiffness"] == [1e4]
    assert d["rigid"]["forward"] is not None and d["rigid"]["trajectory"] is None


def test_audit_engine_not_installed_says_which_extra() -> None:
    # The engines live only in .venv-engines (tests/engines covers them there).
    pytest.importorskip("ferromotion")
    try:
        import mujoco  # noqa: F401
        pytest.skip("MuJoCo is installed in this environment")
    except ImportError:
        pass
    p = run_cli("audit", "--engine", "mujoco")
    assert p.returncode == 1 and "pip install 'ferromotion[mujoco]'" in p.stderr
