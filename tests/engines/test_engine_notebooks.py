"""The notebooks that need a real engine run top to bottom in .venv-engines, with their outputs
stripped, and print the verdicts they are written to show: 04 (MuJoCo, JAX: audit your
simulator) and 08 (MuJoCo, dm_control's quadruped: audit your robot)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
from jupyter_client import KernelManager  # noqa: E402
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

# (notebook, the engines it imports, its time limit per cell in s, what its outputs must say)
CASES: List[Tuple[str, Tuple[str, ...], int, Tuple[str, ...]]] = [
    ("04_audit_your_simulator.ipynb", ("mujoco", "jax"), 300,
     ("WRONG SIGN", "mujoco: verified", "Hunt-Crossley drop in JAX: verified", "contact gradient cut: not-verified",
      "receipt written to", "right sign from mj_step through the black-box driver")),
    ("08_audit_your_robot.ipynb", ("mujoco", "dm_control"), 600,
     ("baseline: driver = differences", "refused: NotDifferentiable", "(b) against (c):", "NotDifferentiable: ",
      "20% mass: ")),
]


@pytest.mark.parametrize("name, engines, timeout, expected", CASES, ids=[c[0] for c in CASES])
def test_engine_notebook_is_stripped_runs_and_prints_its_verdicts(tmp_path: Path, name: str, engines: Tuple[str, ...],
                                                                  timeout: int, expected: Tuple[str, ...]) -> None:
    for module in engines:
        pytest.importorskip(module, reason=f"{module} is installed only in .venv-engines (scripts/engines_env.sh)")
    path = NOTEBOOKS / name
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert all(c.outputs == [] and c.execution_count is None for c in nb.cells if c.cell_type == "code")
    kdir = tmp_path / "kernels" / "ferromotion-engines"
    kdir.mkdir(parents=True)
    (kdir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "ferromotion engines", "language": "python"}))
    ksm = KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")])
    km = KernelManager(kernel_name="ferromotion-engines", kernel_spec_manager=ksm)
    nbclient.NotebookClient(nb, timeout=timeout, km=km, allow_errors=False,
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    for phrase in expected:
        assert phrase in text, phrase
