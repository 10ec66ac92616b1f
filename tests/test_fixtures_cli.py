"""`ferromotion fixtures export` and `ferromotion conformance` in the package's own environment
(no engines here: tests/engines runs them in .venv-engines)."""

from __future__ import annotations

import importlib.util
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from support import run_cli, set_field

import ferromotion as fm


def test_export_writes_the_core_numbers_and_the_schema(tmp_path: Path) -> None:
    p = run_cli("fixtures", "export", str(tmp_path / "out"))
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "out" / "drop.json").read_text())
    assert doc["schema"] == "ferromotion.fixture/1"
    np.testing.assert_array_equal(doc["exact"]["jacobian"], fm.exact(fm.Drop()).jacobian)
    assert (tmp_path / "out" / "fixture.schema.json").is_file()
    # The exact answers conform; the fixed step's gradient at k = 1e6 has the wrong sign.
    assert fm.conformance("slope", *(lambda d: (d["exact"]["state"], d["exact"]["jacobian"]))(
        json.loads((tmp_path / "out" / "slope.json").read_text()))).verdict == "conforms"
    r = fm.fixed(fm.Drop(), 1e6, 1e-4)
    assert fm.conformance(tmp_path / "out" / "drop.json", r.state, r.jacobian).verdict == "wrong"


@pytest.mark.parametrize("engine,module,extra", [("newton", "warp", "newton"), ("drake-sap", "pydrake", "drake")])
def test_a_missing_engine_gives_the_install_hint(engine: str, module: str, extra: str) -> None:
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here")
    for cmd in (("conformance", "--engine", engine), ("audit", "--engine", engine)):
        p = run_cli(*cmd)
        assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
        assert f"pip install 'ferromotion[{extra}]'" in p.stderr


# (field edited, new value or None to delete it, the field the refusal names, a word of the reason)
BAD_FIELDS = [
    ("t_final", None, "t_final", "missing"),
    ("exact.jacobian", [[1.0, 0.0], [0.0, "1"]], "exact.jacobian[1][1]", "invalid type"),
    ("parameters.zeta", 1.5, "parameters.zeta", "in [0, 1)"),
    ("parameters.friction", 0.3, "parameters.friction", "unknown field"),
    ("schema", "ferromotion.fixture/3", "schema", "later version"),
    ("exact.jacobian", [[1.0, 0.0], [0.0]], "exact.jacobian[1]", "1 entries"),
    ("exact.state", [1.0], "exact.state", "1 entries"),
    ("key_entry", [5, 0], "key_entry", "outside"),
]


@pytest.mark.parametrize("field,value,named,word", BAD_FIELDS, ids=[b[0] + ":" + b[3] for b in BAD_FIELDS])
def test_a_bad_fixture_file_is_refused_with_its_path_and_the_field(tmp_path: Path, field: str, value: object,
                                                                   named: str, word: str) -> None:
    doc = fm.engines.conformance.fixtures()["drop"]
    set_field(doc, field, value)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    prefix = f"{bad}: field '{named}': "
    for call in (lambda: fm.engines.conformance.load_fixture(bad),
                 lambda: fm.conformance(bad, [0.0, 0.0], np.eye(2))):
        with pytest.raises(fm.FixtureError) as e:
            call()
        assert str(e.value).startswith(prefix) and word in str(e.value), str(e.value)
        assert isinstance(e.value, fm.FerroError) and isinstance(e.value, ValueError)
    with pytest.raises(fm.FixtureError) as e:  # a dict is "fixture document"
        fm.conformance(doc, [0.0, 0.0], np.eye(2))
    assert str(e.value).startswith(f"fixture document: field '{named}': "), str(e.value)
    # The CLI reads the fixtures before it needs the engine: the refusal, exit 1, no traceback.
    p = run_cli("conformance", "--engine", "newton", "--fixture", str(bad))
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert f"ferromotion conformance: error: {prefix}" in p.stderr and word in p.stderr, p.stderr


@pytest.mark.parametrize("content,word", [
    (b"{not json", "not JSON"),
    (b"\xff\xfe{", "not UTF-8"),
    (b"[" * 50 + b"]" * 50, "nested deeper than"),
    (b" " * (1 << 20) + b"{}", "more than the"),
], ids=["not-json", "not-utf8", "too-deep", "too-large"])
def test_a_fixture_file_at_fault_as_a_whole_is_refused_with_its_path(tmp_path: Path, content: bytes,
                                                                    word: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    with pytest.raises(fm.FixtureError) as e:
        fm.engines.conformance.load_fixture(bad)
    assert str(e.value).startswith(f"{bad}: ") and word in str(e.value), str(e.value)
    p = run_cli("conformance", "--engine", "newton", "--fixture", str(bad))
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert f"{bad}: " in p.stderr and word in p.stderr, p.stderr


def test_a_non_finite_number_in_a_fixture_document_is_refused_naming_its_field() -> None:
    doc = fm.engines.conformance.fixtures()["drop"]
    doc["initial_state"][1] = float("nan")
    with pytest.raises(fm.FixtureError, match=r"^fixture document: field 'initial_state\[1\]': not a finite number"):
        fm.conformance(doc, [0.0, 0.0], np.eye(2))


def test_an_engine_answer_of_the_wrong_shape_names_it() -> None:
    with pytest.raises(fm.InvalidParameter, match="state"):
        fm.conformance("drop", [1.0, 2.0, 3.0], np.eye(2))


def _flat_landing(inertia: Fraction, order: tuple, e: Fraction = Fraction(1, 2)) -> tuple:
    """A rod of mass 1 and length 1 landing flat at v_y = -1: Newton impulses at the ends of
    `order` in turn (the first always, then each while its end approaches), swept until none
    approaches; (v_y, omega) per unit impact speed, exact."""
    vy, om, first = Fraction(-1), Fraction(0), True
    while True:
        fired = False
        for i in order:
            r = Fraction(-1 if i == 0 else 1, 2)
            u = vy + r * om
            if not first and u >= 0:
                continue
            first = False
            p = -(1 + e) * u / (1 + r * r / inertia)
            vy, om, fired = vy + p, om + r * p / inertia, True
        if not fired:
            return vy, om


def test_export_writes_the_rods_landing_flat_uniform_set_valued_and_dumbbell_differentiable(tmp_path: Path) -> None:
    import jsonschema

    p = run_cli("fixtures", "export", str(tmp_path))
    assert p.returncode == 0, p.stderr
    schema = json.loads((tmp_path / "fixture.schema.json").read_text())
    rod = json.loads((tmp_path / "rigid_rod.json").read_text())
    bell = json.loads((tmp_path / "dumbbell_rod.json").read_text())
    for doc in (rod, bell):
        jsonschema.validate(doc, schema)
        assert fm.engines.conformance.load_fixture(doc) == doc
        assert doc["schema"] == "ferromotion.fixture/2" and doc["system"]["kind"] == "rigid_rod"
    assert rod["system"]["parameters"]["inertia"] == [1 / 12] and bell["system"]["parameters"]["inertia"] == [0.25]
    # Uniform: each order's x(T) is the exact landing flown to T (the Rust test checks no end strikes
    # again before it).
    assert rod["exact"]["outcome"] == "set_valued" and rod["exact"]["state"] == []
    g, y0, t1 = 9.81, rod["initial_state"][1], rod["t_final"]
    ti = np.sqrt(2 * y0 / g)
    s = t1 - ti
    for o in rod["exact"]["outcomes"]:
        vy, om = (float(v) * g * ti for v in _flat_landing(Fraction(1, 12), tuple(o["order"])))
        want = [0.0, vy * s - 0.5 * g * s * s, om * s, 0.0, vy - g * s, om]
        assert want[1] - 0.5 * abs(np.sin(want[2])) > 0  # both ends still above the ground at T
        np.testing.assert_allclose(o["state"], want, rtol=0, atol=1e-12)
    assert sorted(tuple(o["order"]) for o in rod["exact"]["outcomes"]) == [(0, 1), (1, 0)]
    # Dumbbell: both orders give v_y = e*V, omega = 0, so one J; dv_y(T)/dy0 = (1 + e) g / V.
    assert _flat_landing(Fraction(1, 4), (0, 1)) == _flat_landing(Fraction(1, 4), (1, 0)) == (Fraction(1, 2), 0)
    assert bell["exact"]["outcome"] == "differentiable" and len(bell["exact"]["pieces"]) == 2
    assert abs(bell["exact"]["jacobian"][4][1] - 1.5 * g / np.sqrt(2 * g * y0)) < 1e-12
    assert fm.conformance(bell, bell["exact"]["state"], bell["exact"]["jacobian"]).verdict == "conforms"


def test_export_writes_the_penalty_rod_as_a_converged_numeric_jacobian_said_so(tmp_path: Path) -> None:
    import jsonschema

    p = run_cli("fixtures", "export", str(tmp_path))
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "penalty_rod.json").read_text())
    jsonschema.validate(doc, json.loads((tmp_path / "fixture.schema.json").read_text()))
    assert doc["system"]["kind"] == "penalty_rod" and doc["exact"]["outcome"] == "differentiable"
    assert "converged numeric answer, not a closed form" in doc["description"]
    assert doc["suggested"]["stiffness"] == doc["system"]["parameters"]["stiffness"] == [1e4]
    # The ends touch down together and let go together: two simultaneous groups, the orders agreeing.
    assert len(doc["exact"]["impacts"]) == 2 and len(doc["exact"]["pieces"]) >= 2
    for piece in doc["exact"]["pieces"]:
        np.testing.assert_allclose(piece["jacobian"], doc["exact"]["jacobian"], rtol=0, atol=1e-8)
