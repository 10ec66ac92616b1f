"""notebooks/07_fit_a_bounce.ipynb in .venv-engines, where MuJoCo is installed: its MuJoCo section fits
MuJoCo's own drop trajectory (the rest of the notebook also runs in .venv, tests/test_notebooks.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mujoco", reason="MuJoCo is installed only in .venv-engines (scripts/engines_env.sh)")
for _module in ("nbformat", "nbclient", "scipy", "cma", "jsonschema", "bokeh"):
    pytest.importorskip(_module)
import nbclient  # noqa: E402
import nbformat  # noqa: E402
from jupyter_client import KernelManager  # noqa: E402
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402

PATH = Path(__file__).resolve().parents[2] / "notebooks" / "07_fit_a_bounce.ipynb"


def test_notebook_07_fits_mujocos_trajectory(tmp_path: Path) -> None:
    nb = nbformat.read(PATH, as_version=4)
    spec = tmp_path / "kernels" / "ferromotion-engines"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "ferromotion engines", "language": "python"}))
    km = KernelManager(kernel_name="ferromotion-engines",
                       kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")]))
    nbclient.NotebookClient(nb, timeout=600, km=km, allow_errors=False,
                            resources={"metadata": {"path": str(PATH.parent)}}).execute()
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "MuJoCo fitted with the flow route" in text and "MuJoCo fitted with the fixed route" in text
    assert "is not installed" not in text
