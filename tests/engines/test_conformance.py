"""Conformance fixtures as data: exported from the core, read without ferromotion, run in real engines.

* `ferromotion fixtures export` writes the fixtures and the schema, and every file validates
  against the shipped JSON Schema;
* a consumer that cannot import ferromotion (fixture_consumer.py, run with ferromotion removed
  from its path) reads the files, runs its own numpy engine and reaches the verdicts and errors
  that fm.conformance gives on the same numbers;
* a bad fixture file is refused naming the file and the field; a missing engine gives the
  install hint, never a traceback;
* the slope runs in MuJoCo, MJX, Newton and Drake, each pinned against the mapped law in numpy
  (mapped_laws.py), each engine's gradient against differences of its own map.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support import run_cli, set_field

import ferromotion as fm
from ferromotion.engines import engine_adapter
from ferromotion.engines.conformance import (SCHEMA_FILE, FixtureError, conformance_engine, fixtures, load_fixture,
                                             run_fixture)
from mapped_laws import rollout

HERE = Path(__file__).resolve().parent
REPO_PYTHON = str(HERE.parents[1] / "python")


def test_export_writes_every_fixture_and_the_schema_validates_them(tmp_path: Path) -> None:
    out = run_cli("fixtures", "export", str(tmp_path), timeout=900)
    assert out.returncode == 0, out.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert {"drop.json", "fixture.schema.json", "slope.json", "v_groove_90.json", "cylinder.json"} <= set(names)
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((tmp_path / "fixture.schema.json").read_text())
    assert schema == json.loads(SCHEMA_FILE.read_text())
    for n in ("drop", "slope"):
        doc = json.loads((tmp_path / f"{n}.json").read_text())
        jsonschema.validate(doc, schema)
        assert doc["schema"] == "ferromotion.fixture/1"
    for p in tmp_path.glob("*.json"):  # the /2 fixtures of systems/ too
        if p.name != "fixture.schema.json":
            jsonschema.validate(json.loads(p.read_text()), schema)
    # The numbers are the core's: the drop's exact answer is fm.exact's.
    drop = json.loads((tmp_path / "drop.json").read_text())
    e = fm.exact(fm.Drop())
    np.testing.assert_array_equal(drop["exact"]["jacobian"], e.jacobian)
    np.testing.assert_array_equal(drop["exact"]["state"], e.state)


@pytest.mark.parametrize("field,value", [
    ("t_final", None), ("exact.jacobian", [[1.0, 0.0], [0.0, "1"]]), ("parameters.zeta", 1.5),
    ("parameters.friction", 0.3), ("schema", "ferromotion.fixture/3"), ("parameters.angle", 2.0),
    ("suggested.dt", [-1e-4]), ("exact.impacts", [-0.1]), ("t_final", 0.0)])
def test_the_schema_refuses_what_the_core_refuses(field: str, value: object) -> None:
    # A consumer validating with the shipped schema alone refuses the document the core refuses
    # (the shape relations between x(0), x(T) and J are the core's alone: JSON Schema cannot say them).
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA_FILE.read_text())
    doc = fixtures()["drop"]
    set_field(doc, field, value)
    with pytest.raises(FixtureError):
        load_fixture(doc)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


def test_slope_exact_answer_agrees_with_hybrid_jacobian_of_slope_ball() -> None:
    doc = fixtures()["slope"]
    p = doc["parameters"]
    sol = fm.hybrid_jacobian(fm.SlopeBall(gravity=p["gravity"], restitution=p["restitution"], angle=p["angle"]),
                             doc["initial_state"], 0.0, doc["t_final"])
    np.testing.assert_allclose(doc["exact"]["jacobian"], sol.jacobian, rtol=1e-8, atol=1e-9)


def test_a_consumer_without_ferromotion_reaches_the_same_verdicts(tmp_path: Path) -> None:
    fm.engines.conformance.export_fixtures(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # -I: no user site, no PYTHONPATH, no script directory; the .pth putting python/ on the
    # path is dropped too, so `import ferromotion` must fail inside the consumer.
    code = (f"import sys; sys.path = [p for p in sys.path if not p.startswith({REPO_PYTHON!r})]; "
            "import importlib.util; assert importlib.util.find_spec('ferromotion') is None, 'ferromotion visible'; "
            f"sys.argv = ['consumer', {str(tmp_path)!r}]; "
            f"exec(compile(open({str(HERE / 'fixture_consumer.py')!r}).read(), 'fixture_consumer.py', 'exec'))")
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert {(r["fixture"], r["k"]) for r in rows} == {(f, k) for f in ("drop", "slope") for k in (1e4, 1e6)}
    for r in rows:
        c = fm.conformance(r["fixture"], r["state"], r["jacobian"])
        assert c.verdict == r["verdict"], (r, c)
        assert c.gradient_error == pytest.approx(r["gradient_error"], rel=1e-12)
        assert c.state_error == pytest.approx(r["state_error"], rel=1e-12)
    # The consumer's drop engine is our fixed route, so its numbers are fm.fixed's.
    drop = next(r for r in rows if r["fixture"] == "drop" and r["k"] == 1e6)
    np.testing.assert_allclose(drop["jacobian"], fm.fixed(fm.Drop(), 1e6, 1e-4).jacobian, rtol=1e-9)
    assert drop["verdict"] == "wrong"


def test_a_bad_fixture_file_is_refused_with_its_path_and_field(tmp_path: Path) -> None:
    doc = fixtures()["slope"]
    bad = tmp_path / "bad.json"
    doc["exact"]["jacobian"][1] = [1.0]
    bad.write_text(json.dumps(doc))
    with pytest.raises(FixtureError, match=r"bad\.json.*exact\.jacobian\[1\]"):
        load_fixture(bad)
    del doc["t_final"]
    bad.write_text(json.dumps(doc))
    with pytest.raises(FixtureError, match=r"bad\.json.*t_final"):
        load_fixture(bad)
    out = run_cli("conformance", "--engine", "mujoco", "--fixture", str(bad), timeout=900)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert f"{bad}: field 't_final': missing" in out.stderr, out.stderr
    bad.write_text("{not json")
    with pytest.raises(FixtureError, match=r"bad\.json"):
        load_fixture(bad)
    with pytest.raises(fm.InvalidParameter, match="state"):
        fm.conformance("drop", [1.0, 2.0, 3.0], np.eye(2))


def test_a_missing_engine_gives_the_install_hint_not_a_traceback() -> None:
    try:
        import torch  # noqa: F401
        pytest.skip("torch is installed here: no missing engine to ask for")
    except ImportError:
        pass
    out = run_cli("conformance", "--engine", "torch", timeout=900)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "pip install 'ferromotion[torch]'" in out.stderr


# -- the slope in real engines -----------------------------------------------------------------

def _slope() -> dict:
    return fixtures()["slope"]


def _mapped(law: str, doc: dict, k: float, **kw) -> np.ndarray:
    p = doc["parameters"]
    return rollout(law, doc["initial_state"], doc["t_final"], 1e-4, k, p["zeta"], p["mass"], p["gravity"],
                   angle=p["angle"], **kw)


def _own_fd(ad: object, doc: dict, k: float, eps: float) -> np.ndarray:
    x0 = np.array(doc["initial_state"], dtype=float)
    cols = []
    for j in range(4):
        e = np.zeros(4)
        e[j] = eps
        cols.append((run_fixture(ad, doc, k, 1e-4, x0 + e, jac=False)[0]
                     - run_fixture(ad, doc, k, 1e-4, x0 - e, jac=False)[0]) / (2 * eps))
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("engine,law,atol,own", [
    ("mujoco", "mujoco", 1e-10, 1e-5),
    ("newton", "newton", 5e-3, 5e-2),  # float32 over 8000 steps
    ("drake-tamsi", "tamsi", 1e-8, 1e-6),
    ("drake-sap", "sap", 1e-8, 1e-6),
])
def test_the_slope_runs_the_mapped_law_in_each_engine(engine: str, law: str, atol: float, own: float) -> None:
    pytest.importorskip({"mujoco": "mujoco", "newton": "newton"}.get(engine, "pydrake"))
    ad = engine_adapter(engine)
    doc = _slope()
    k = 1e6
    kw = {}
    if law == "tamsi":
        from ferromotion.engines._drake import hunt_crossley_for

        ad_speed = ad.slope_speed(doc)
        kw["hunt_crossley"] = hunt_crossley_for(doc["parameters"]["restitution"], ad_speed)
    if engine == "newton":
        # 8000 float32 steps: the forward map only (four tape passes and eight probe rollouts
        # take minutes on CPU; the tape is checked on the short drop in test_newton_drake.py,
        # and its slope map jumps every |v_n|*dt, so probes of it straddle jumps).
        x, _ = run_fixture(ad, doc, k, 1e-4, jac=False)
        np.testing.assert_allclose(x, _mapped(law, doc, k, **kw), rtol=0, atol=atol)
        return
    x, j = run_fixture(ad, doc, k, 1e-4)
    np.testing.assert_allclose(x, _mapped(law, doc, k, **kw), rtol=0, atol=atol)
    fd = _own_fd(ad, doc, k, getattr(ad, "fd_eps", 1e-6))
    assert np.max(np.abs(j - fd)) / np.max(np.abs(fd)) < own, (j, fd)
    c = fm.conformance(doc, x, j)
    assert c.verdict in doc["verdicts"]


def test_the_slope_in_mjx_equals_native_mujoco() -> None:
    pytest.importorskip("mujoco.mjx")
    doc = _slope()
    xj, jj = run_fixture(engine_adapter("mjx"), doc, 1e6, 1e-4)
    xn, _ = run_fixture(engine_adapter("mujoco"), doc, 1e6, 1e-4, jac=False)
    np.testing.assert_allclose(xj, xn, rtol=1e-9, atol=1e-12)
    assert np.all(np.isfinite(jj))


def test_cli_conformance_prints_the_table_and_writes_receipts(tmp_path: Path) -> None:
    out = run_cli("conformance", "--engine", "mujoco", "--k", "1e6", "--receipt", str(tmp_path), timeout=900)
    assert out.returncode == 0, out.stderr
    assert "drop" in out.stdout and "slope" in out.stdout and "wrong" in out.stdout
    files = sorted(p.name for p in tmp_path.iterdir())
    # One receipt per fixture MuJoCo expresses (the 2-D contact fixtures too; not switched_field).
    assert {"mujoco.drop.k1e+06.json", "mujoco.slope.k1e+06.json", "mujoco.v_groove_100.k1e+06.json",
            "mujoco.cylinder.k1e+06.json"} <= set(files)
    assert not any("switched_field" in f for f in files) and "switched_field" in out.stdout
    r = json.loads((tmp_path / "mujoco.slope.k1e+06.json").read_text())
    assert r["conformance"] == fm.conformance("slope", r["state"], r["jacobian"]).to_dict()


def test_conformance_engine_jax_skips_the_slope_it_cannot_express() -> None:
    pytest.importorskip("jax")
    run = conformance_engine("jax", stiffness=(1e6,))
    assert [r["fixture"] for r in run.rows] == ["drop"]
    assert any("slope" in s for s in run.skipped)
