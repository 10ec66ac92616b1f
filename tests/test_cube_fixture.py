"""The tumbling cube as a conformance fixture and through `hybrid_jacobian`: exported by
`ferromotion fixtures export`, valid under the shipped JSON Schema, read back, and its exact J
equal to the independent 50-digit oracle (tests/cube_oracle.py: quaternions, strikes located by
Newton's method, J by central differences with tangent perturbations)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from cube_oracle import Cube, jacobian as oracle_jacobian
from support import run_cli

import ferromotion as fm

X0 = [0.0, 0.0, 0.5, 0.5, 0.3, 0.2, 0.2, 0.0, 0.0, 2.0, 1.0, -1.0]
SCHEMA = Path(fm.__file__).parent / "engines" / "fixture.schema.json"


@pytest.fixture(scope="module")
def oracle():
    return oracle_jacobian(Cube(0.1, 1.0, 0.5, 9.81), X0, 0.45)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("fixtures")
    p = run_cli("fixtures", "export", str(out))
    assert p.returncode == 0, p.stderr
    return out


def test_the_exported_cube_fixture_is_valid_under_the_shipped_schema(exported: Path) -> None:
    doc = json.loads((exported / "tumbling_cube.json").read_text())
    schema = json.loads((exported / "fixture.schema.json").read_text())
    assert schema == json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(doc, schema)
    assert doc["schema"] == "ferromotion.fixture/2"
    assert doc["system"] == {"kind": "tumbling_cube",
                             "parameters": {"half_side": [0.1], "mass": [1.0], "restitution": [0.5],
                                            "gravity": [9.81]}}
    assert doc["initial_state"] == X0 and doc["t_final"] == 0.45
    assert doc["state_names"][3:6] == ["theta_x", "theta_y", "theta_z"]


def test_the_cube_fixtures_jacobian_equals_the_high_precision_oracle(exported: Path, oracle) -> None:
    state, jac, strikes = oracle
    doc = fm.engines.conformance.load_fixture(exported / "tumbling_cube.json")  # read back, checked
    assert np.max(np.abs(np.array(doc["exact"]["jacobian"]) - np.array(jac, dtype=float))) < 1e-7
    assert np.max(np.abs(np.array(doc["exact"]["state"]) - np.array(state, dtype=float))) < 1e-12
    assert np.allclose(doc["exact"]["impacts"], [t for t, _ in strikes], rtol=0, atol=1e-12)
    # Judged against itself it conforms; the key entry dv_z(T)/dc_z(0) negated is a wrong sign.
    assert fm.conformance(doc, doc["exact"]["state"], doc["exact"]["jacobian"]).verdict == "conforms"
    flipped = np.array(doc["exact"]["jacobian"])
    flipped[8, 2] = -flipped[8, 2]
    assert fm.conformance(doc, doc["exact"]["state"], flipped).verdict == "wrong"


def test_a_cube_fixture_with_a_bad_parameter_is_refused_naming_the_field(exported: Path) -> None:
    doc = json.loads((exported / "tumbling_cube.json").read_text())
    doc["system"]["parameters"]["restitution"] = [1.5]
    with pytest.raises(fm.FixtureError, match=r"field 'system\.parameters\.restitution'"):
        fm.engines.conformance.load_fixture(doc)
    doc["system"]["parameters"] = {"half_side": [0.1], "spin": [1.0]}
    with pytest.raises(fm.FixtureError, match=r"field 'system\.parameters\.spin'"):
        fm.engines.conformance.load_fixture(doc)


def test_hybrid_jacobian_takes_the_cube_and_its_jvp_is_the_oracles(oracle) -> None:
    _, jac, strikes = oracle
    j = np.array(jac, dtype=float)
    s = fm.hybrid_jacobian(fm.systems.TumblingCube(0.1, 1.0, 0.5), X0, 0.0, 0.45)
    assert np.max(np.abs(s.jacobian - j)) < 1e-7
    assert [e.guard for e in s.events] == [k for _, k in strikes]
    assert all(e.guard_speed < 0 for e in s.events)
    d = np.cos(np.arange(12.0))
    assert np.max(np.abs(s.jvp(d) - j @ d)) < 1e-6
    # The flight is autonomous: starting the clock at t0 = 1 shifts the event times only.
    s1 = fm.hybrid_jacobian(fm.systems.TumblingCube(0.1, 1.0, 0.5), X0, 1.0, 1.45)
    assert np.allclose([e.t for e in s1.events], [1.0 + t for t, _ in strikes], rtol=0, atol=1e-12)
    assert np.max(np.abs(s1.jacobian - j)) < 1e-7
    with pytest.raises(fm.InvalidParameter, match="`t1`"):
        fm.hybrid_jacobian(fm.systems.TumblingCube(), X0, 0.45, 0.45)
