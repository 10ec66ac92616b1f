"""`ferromotion fixtures export` and `ferromotion conformance` in the package's own environment
(no engines here: tests/engines runs them in .venv-engines)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

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


def test_a_bad_fixture_file_names_the_file_and_the_field(tmp_path: Path) -> None:
    doc = fm.engines.conformance.fixtures()["drop"]
    doc["key_entry"] = [5, 0]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(fm.FixtureError, match=r"bad\.json.*key_entry"):
        fm.conformance(bad, [0.0, 0.0], np.eye(2))
