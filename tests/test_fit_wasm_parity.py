"""The fit in WebAssembly (the lab's door, `fit` of target/wasm/node-pkg under Node) and in the
native extension (`fm.fit`) is one core: on the same observations both doors return the same
report, bit for bit, verdicts included (wall times aside: each door times its own call)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import ferromotion as fm

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "target" / "wasm" / "node-pkg" / "ferromotion_wasm.js"

SCRIPT = """
const wasm = require(process.argv[1]);
const [drop, obs, opts] = JSON.parse(process.argv[2]);
process.stdout.write(JSON.stringify(wasm.fit(drop, obs, opts), (k, v) => (typeof v === "number" && !Number.isFinite(v) ? String(v) : v)));
"""


def _untimed(doc: dict) -> dict:
    doc = {k: v for k, v in doc.items() if k != "wall_s"}
    doc["iterations"] = [{k: v for k, v in it.items() if k != "wall_s"} for it in doc["iterations"]]
    return doc


def _plain(x):
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return str(x).replace("inf", "Infinity").replace("nan", "NaN")
    return x


@pytest.mark.parametrize("route", ["flow", "fixed", "exact"])
def test_wasm_and_native_fits_agree_bit_for_bit(route: str) -> None:
    node = shutil.which("node")
    if node is None or not PKG.is_file():
        pytest.fail("node and target/wasm/node-pkg are needed: run `make wasm`")
    t = np.round(np.arange(1, 21) * 0.04, 10)
    y = fm.fit_predict(fm.Drop(zeta=0.2), t, route="flow", k=1e5)["y"] + 1e-3 * np.sin(np.arange(20) * 1.7)
    guess = {"height": 1.05, "velocity": 0.0, "t_final": 0.8, "gravity": 9.81, "mass": 1.0, "zeta": 0.12}
    obs = {"t": t.tolist(), "y": y.tolist(), "sigma_y": 1e-3}
    opts = {"params": ["height", "zeta"], "route": route, "k": 1e5, "dt": 1e-4}
    out = subprocess.run([node, "-e", SCRIPT, str(PKG), json.dumps([guess, obs, opts])], capture_output=True,
                         text=True, timeout=300, check=True).stdout
    wasm = _untimed(json.loads(out))
    native = _untimed(_plain(fm.fit(fm.Drop(**guess), t, y, sigma_y=1e-3, params=opts["params"], route=route,
                                    k=1e5, dt=1e-4)._report.document()))
    assert wasm == native
