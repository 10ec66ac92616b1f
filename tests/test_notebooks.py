"""The notebooks run top to bottom (nbclient, a kernel on this interpreter) and are committed
with their outputs stripped."""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
from jupyter_client import KernelManager  # noqa: E402
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# Notebooks that need a real engine run in .venv-engines (tests/engines/test_engine_notebooks.py).
ENGINE_NOTEBOOKS = {"04_audit_your_simulator.ipynb", "08_audit_your_robot.ipynb"}
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if p.name not in ENGINE_NOTEBOOKS)
# Each notebook is written to run in a few seconds; this is a hang guard, not a benchmark.
TIMEOUT_S = 120
# What a notebook's printed output must show (besides running without an error).
EXPECTED_TEXT = {
    # A user's simulator checked three ways, and the receipt it writes validated.
    "03_qualify_your_gradient.ipynb": [": verified", ": not-verified", ": refused", "event-crossing",
                                       "the receipt follows ferromotion.receipt/3"],
    # The prose reads the uniform-step rows as wrong-signed and the probe table as moving.
    "06_equal_budget.ipynb": ["Euler uniform", "WRONG", "moves by"],
    # The fit's report validates; the fixed-step fit is shown as a misfit beside the baselines; a weak direction.
    "07_fit_a_bounce.ipynb": ["the report follows ferromotion.fit/1", "MISFIT", "CMA-ES", "Nelder-Mead",
                              "WEAK", "mass +20%"],
}


def test_the_notebooks_exist() -> None:
    assert [p.name for p in NOTEBOOKS] == ["01_stiffness_sweep.ipynb", "02_blame_split.ipynb",
                                           "03_qualify_your_gradient.ipynb", "05_study_at_scale.ipynb",
                                           "06_equal_budget.ipynb", "07_fit_a_bounce.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_outputs_are_stripped(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name} cell {i} has outputs: strip them before committing"
            assert cell.execution_count is None, f"{path.name} cell {i} has an execution count"
    assert "widgets" not in nb.metadata


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A kernelspec that runs this very interpreter (the venv's), whatever PATH says."""
    d = tmp_path_factory.mktemp("kernels")
    (d / "ferromotion-test").mkdir()
    (d / "ferromotion-test" / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "ferromotion tests", "language": "python",
    }))
    yield d


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path: Path, kernel_dir: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    km = KernelManager(kernel_name="ferromotion-test", kernel_spec_manager=KernelSpecManager(kernel_dirs=[kernel_dir]))
    client = nbclient.NotebookClient(nb, km=km, timeout=TIMEOUT_S, allow_errors=False,
                                     resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - t0
    # Collect the finished client's reference cycles now, while its zmq context can be closed:
    # left to a later test's garbage collection they surface there as "unclosed socket" warnings.
    gc.collect()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code)
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    # Every plot cell produced a Bokeh document.
    plots = [c for c in code if "show(" in c.source]
    assert plots and all(any("application/vnd.bokehjs_exec.v0+json" in o.get("data", {}) for o in c.outputs)
                         for c in plots)
    text = "".join(o.get("text", "") for c in code for o in c.outputs)  # a print may arrive in pieces
    for expected in EXPECTED_TEXT.get(path.name, []):
        assert expected in text, expected
    assert elapsed < TIMEOUT_S
