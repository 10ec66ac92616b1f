"""Where MuJoCo Warp's noise through a corner strike comes from (ferromotion.engines._cube_noise; the
table is `scripts/cube_engines.py --noise`, docs/engines.md "MuJoCo Warp's noise through a strike,
located").

Never a mock, never a pasted number: MuJoCo and MuJoCo Warp step the same MJCF in the same run, and
each fact is a ratio between routes measured here:
* MuJoCo Warp's noise through the strike (second differences of its map along ω) stands far above the
  float32 state's own floor (MuJoCo's float64 solver fed the state rounded to float32 before every
  step) with the pyramidal cone, and falls to that floor with its incremental Hessian updates switched
  off or with the elliptic cone (which, for this frictionless contact, is the same law in MuJoCo);
* with the elliptic cone the driver answers MuJoCo Warp's cube through a strike with MuJoCo's verdict
  (with the pyramidal cone it refuses `ProbeDependent`: docs/engines.md).
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.mujoco_warp
mujoco = pytest.importorskip("mujoco", reason="MuJoCo is installed only in .venv-engines (scripts/engines_env.sh)")
pytest.importorskip("mujoco_warp",
                    reason="MuJoCo Warp is installed only by `make warp` (tests/engines/requirements-warp.txt)")

import ferromotion as fm  # noqa: E402
from ferromotion.engines import _cube, _cube_noise  # noqa: E402

X0 = [0.0, 0.0, 0.5, 0.5, 0.3, 0.2, 0.2, 0.0, 0.0, 2.0, 1.0, -1.0]
CUBE = fm.systems.TumblingCube(half_side=0.1, mass=1.0, restitution=0.5)


def test_warps_noise_through_a_strike_is_its_incremental_newton_path_not_its_float32_state() -> None:
    x0 = CUBE.solve(X0, _cube_noise.START).state
    by = {s.name: s for s in _cube_noise.SETTINGS}
    rows = {name: _cube_noise.noise_row(CUBE, x0, by[name], gap=False)
            for name in ("the cube's model (pyramidal cone)", "MuJoCo Warp's incremental Hessian off (diagnostic)",
                         "elliptic cone")}
    pyramidal, off, elliptic = rows.values()
    # The float32 state's own floor through the strike: MuJoCo's float64 solve of a state rounded to float32.
    floor = pyramidal["mujoco_f32_state"]["strike"]
    assert floor > 1e3 * pyramidal["mujoco"]["strike"]  # float32 rounding, amplified by the contact
    # The driver's step (warm start cleared each step): far above that floor with the pyramidal cone ...
    assert pyramidal["warp"]["strike"] > 10 * floor, pyramidal
    # ... at the floor with the incremental Hessian updates off (the one change) or the elliptic cone,
    # and, in both, as far above its flight level as MuJoCo with a float32 state is.
    for row in (off, elliptic):
        assert row["warp"]["strike"] < 3 * row["mujoco_f32_state"]["strike"], row
    # In flight the cone changes nothing (no contact): float32 rounding alone.
    assert elliptic["warp"]["flight"] < 1e-5 and pyramidal["warp"]["flight"] < 1e-5
    # Both engines see one contact at a time through this strike (the box-plane collider's count).
    assert pyramidal["contacts"] == (1, 1)


def test_with_the_elliptic_cone_the_driver_answers_warps_cube_through_a_strike_with_mujocos_verdict() -> None:
    # Through corner 1's strike (0.25 s to 0.28 s), MuJoCo and MuJoCo Warp through the driver, the same
    # MJCF (the elliptic cone). (With the pyramidal cone MuJoCo Warp's is refused ProbeDependent: the
    # table in docs/engines.md; the test above pins why.) ~60 s: MuJoCo Warp's float32 step, ~20 ms a call.
    x0 = CUBE.solve(X0, 0.25).state
    doc = _cube.horizon_fixture(CUBE, x0, 0.03)
    warp, c = (_cube.driver_row(CUBE, x0, 0.01, 2e-4, doc, engine, option=_cube.WARP_OPTION)
               for engine in ("mujoco_warp", "mujoco"))
    assert c.verdict == "right" and warp.verdict == c.verdict, (warp, c)
    assert warp.events == c.events == 2
    assert warp.resolution["precision"] == 2.0 ** -24
    # The same derivative measured on a float32 step: within the tolerance it states, relative to max|J|.
    gap = np.max(np.abs(np.asarray(warp.jacobian) - c.jacobian)) / max(1.0, np.max(np.abs(c.jacobian)))
    assert gap <= warp.resolution["probe_rtol"], (gap, warp.resolution)
