"""notebooks/08_audit_your_robot.ipynb runs top to bottom in .venv-engines (real MuJoCo and
JAX), with its outputs stripped, and prints the verdicts it is written to show."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mujoco", reason="MuJoCo is installed only in .venv-engines (scripts/engines_env.sh)")
pytest.importorskip("dm_control", reason="dm-control is installed only in .venv-engines (scripts/engines_env.sh)")
nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
from jupyter_client import KernelManager  # noqa: E402
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402

PATH = Path(__file__).resolve().parents[2] / "notebooks" / "08_audit_your_robot.ipynb"


def test_notebook_08_is_stripped_and_runs(tmp_path: Path) -> None:
    nb = nbformat.read(PATH, as_version=4)
    nbformat.validate(nb)
    assert all(c.outputs == [] and c.execution_count is None for c in nb.cells if c.cell_type == "code")
    kdir = tmp_path / "kernels" / "ferromotion-engines"
    kdir.mkdir(parents=True)
    (kdir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "ferromotion engines", "language": "python"}))
    ksm = KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")])
    km = KernelManager(kernel_name="ferromotion-engines", kernel_spec_manager=ksm)
    nbclient.NotebookClient(nb, timeout=600, km=km, allow_errors=False,
                            resources={"metadata": {"path": str(PATH.parent)}}).execute()
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    for expected in ("baseline: driver = differences", "refused: NotDifferentiable", "(b) against (c):",
                     "NotDifferentiable: ", "20% mass: "):
        assert expected in text, expected
