"""The tumbling cube in the engines (ferromotion.engines._cube; the table is
scripts/cube_engines.py, `make cube-engines`), and MuJoCo Warp's step (engines/_mujoco_warp.py).

Never a mock: MuJoCo, MuJoCo Warp run every step. Each fact against an independent route:
* MuJoCo compiles the cube's MJCF to the cube's inertia 2/3 m a^2 (the core's closed form);
* in flight, the black-box driver's J through ``mj_step``, carried from MuJoCo's tangent
  coordinates to the cube's, equals the core's exact J (closed-form flight);
* through the first corner strike at stiff contact, the driver's J through ``mj_step`` has the
  exact J's key sign and is nearer the exact J than central differences of MuJoCo's own map;
* the generic model step's release guard (the normal force's argument before MuJoCo's clamp)
  gives the drop the J of the hand-mapped guards of ``fm.engines.step_function``;
* a guard pair per corner takes both strikes through the driver on ``mj_step``: every large
  entry's sign the exact one's, nearer the exact J than MuJoCo's own differences;
* MuJoCo Warp's step of the cube equals MuJoCo's C step to float32 precision, in flight and in
  contact, and its entry guard is its own contact distance;
* MuJoCo Warp's drop through the driver (``mujoco_warp_step_function``, float32 declared) gets
  MuJoCo's verdict from the core's judge, its J within the tolerance it states of MuJoCo's;
* the elliptic cone MuJoCo Warp's cube runs with is the pyramidal cone's law in MuJoCo, bit for bit
  (its cube through the driver: tests/engines/test_mujoco_warp_noise.py).
"""

from __future__ import annotations

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is installed only in .venv-engines (scripts/engines_env.sh)")

import ferromotion as fm  # noqa: E402
from ferromotion.engines import _cube, mujoco_step_function  # noqa: E402

X0 = [0.0, 0.0, 0.5, 0.5, 0.3, 0.2, 0.2, 0.0, 0.0, 2.0, 1.0, -1.0]
CUBE = fm.systems.TumblingCube(half_side=0.1, mass=1.0, restitution=0.5)
WARP_SKIP = "MuJoCo Warp is installed only by `make warp` (tests/engines/requirements-warp.txt)"


def _driver(timeconst: float, dt: float, t_final: float, x0=X0):
    qpos, qvel = _cube.to_mujoco(x0)
    sys, box = mujoco_step_function(_cube.cube_mjcf(CUBE, timeconst, dt), qpos=qpos)
    s = fm.hybrid_jacobian(sys, box.state_of(qpos, qvel), 0.0, t_final, dt=dt, halve_dt=False, progress=False)
    x_end = _cube.from_mujoco(box.qpos(s.x), s.x[6:12])
    return s, x_end, _cube.to_cube_tangent(box.tangent_at_end(s.jacobian, s.x), x0, x_end)


def test_the_cube_mjcf_has_the_cubes_inertia_and_restitution_map() -> None:
    m = mujoco.MjModel.from_xml_string(_cube.cube_mjcf(CUBE, 0.01, 1e-4))
    assert np.allclose(m.body_inertia[1], 2.0 / 3.0 * CUBE.mass * CUBE.half_side ** 2, rtol=1e-12)
    import dataclasses
    zeta = _cube.zeta_for(CUBE.restitution)
    assert abs(fm.limit_restitution(dataclasses.replace(fm.Drop(), zeta=zeta)) - CUBE.restitution) < 1e-12


def test_in_flight_the_drivers_jacobian_through_mj_step_is_the_exact_one() -> None:
    s, x_end, jac = _driver(0.01, 1e-3, 0.2)
    exact = CUBE.solve(X0, 0.2)
    assert s.events == () and exact.impacts == []
    # Semi-implicit Euler is exact for constant velocity and rotation; the position lags g*T*dt/2.
    assert np.max(np.abs(jac - exact.jacobian)) < 1e-6
    assert np.max(np.abs(x_end - exact.state)) < 9.81 * 0.2 * 1e-3


def test_through_the_first_strike_the_driver_beats_mujocos_own_differences() -> None:
    # The fixture's cube 0.2 s in (the exact flight's state; the strike 63 ms later), to 0.08 s.
    tc, dt, t_final = 0.01, 5e-5, 0.08
    x0 = CUBE.solve(X0, 0.2).state
    exact = CUBE.solve(x0, t_final)
    assert len(exact.impacts) == 1
    s, x_end, jac = _driver(tc, dt, t_final, x0)
    assert [e.guard for e in s.events] == [0, 1]  # the pair's entry, then its release
    model = mujoco.MjModel.from_xml_string(_cube.cube_mjcf(CUBE, tc, dt))
    runs = [_cube.mujoco_rollout(model, x, [t_final])[t_final] for x in _cube.probe_starts(x0, 1e-6)]
    _, own = _cube.jacobian_from(runs, 1e-6)
    err = lambda j: np.max(np.abs(j - exact.jacobian)) / np.max(np.abs(exact.jacobian))  # noqa: E731
    assert np.sign(jac[8, 2]) == np.sign(exact.jacobian[8, 2])
    assert err(jac) < err(own)


def test_the_release_guard_gives_the_drop_the_hand_mapped_guards_jacobian() -> None:
    from ferromotion.engines._mujoco import mjcf

    k, dt = 1e4, 1e-3
    sys, box = mujoco_step_function(mjcf(fm.Drop(), k, dt), qpos=[1.0])
    s = fm.hybrid_jacobian(sys, box.state_of([1.0], [0.0]), 0.0, 0.8, dt=dt, halve_dt=False, progress=False)
    ref = fm.hybrid_jacobian(fm.engines.step_function("mujoco", fm.Drop(), k, dt), [1.0, 0.0], 0.0, 0.8, dt=dt,
                             halve_dt=False, progress=False)
    assert len(s.events) == len(ref.events) == 2
    assert np.max(np.abs(s.jacobian - ref.jacobian)) < 1e-6


def test_a_guard_pair_per_corner_takes_both_strikes_through_mj_step_with_the_exact_signs() -> None:
    # From the exact flight's state at 0.25 s over 0.08 s: corner 1 strikes at 0.2632 s, corner 4 at
    # 0.3015 s (the fixture's two strikes). One guard for the box refused the second strike
    # (TwoEventsInOneStep); a guard pair per corner locates each corner's entry and release.
    x0 = CUBE.solve(X0, 0.25).state
    doc = _cube.horizon_fixture(CUBE, x0, 0.08)
    assert [i["corner"] for i in CUBE.solve(list(x0), 0.08).impacts] == [1, 4]
    row = _cube.driver_row(CUBE, x0, 0.01, 2e-4, doc, "mujoco")
    assert row.events == 4 and row.verdict in ("right", "conforms"), row
    assert row.large_signs_right == 1.0
    # Nearer the exact J than MuJoCo's own map's differences (what mjd_transitionFD gives).
    model = mujoco.MjModel.from_xml_string(_cube.cube_mjcf(CUBE, 0.01, 2e-4))
    runs = [_cube.mujoco_rollout(model, x, [0.08])[0.08] for x in _cube.probe_starts(x0, 1e-6)]
    _, own = _cube.jacobian_from(runs, 1e-6)
    exact = np.asarray(doc["exact"]["jacobian"])
    assert np.max(np.abs(np.asarray(row.jacobian) - exact)) < np.max(np.abs(own - exact))


@pytest.mark.mujoco_warp
def test_mujoco_warps_step_is_mujocos_to_float32() -> None:
    pytest.importorskip("mujoco_warp", reason=WARP_SKIP)
    from ferromotion.engines._mujoco_warp import MuJoCoWarpStep

    xml = _cube.cube_mjcf(CUBE, 0.01, 1e-4)
    qpos, qvel = _cube.to_mujoco(X0)
    warp = MuJoCoWarpStep(xml, qpos_ref=qpos)
    c, _ = mujoco_step_function(xml, qpos=qpos)
    x = warp.state_of(qpos, qvel)
    flight = np.stack([x, x + 0.01])
    # In contact: the cube lowered until its lowest corner is 2 mm into the floor.
    low = x.copy()
    lowest = X0[2] - CUBE.half_side * float(np.sum(np.abs(_cube._rotation(np.asarray(X0[3:6]))[2])))
    low[2] -= lowest + 0.002
    assert c.guards[0](low) < 0
    for state in (*flight, low):
        for dt in (1e-4, 1e-3):
            a, b = warp.step(state, dt), c.step(state, dt)
            # float32 rounding of the state, and the contact solver's float32 answer (1e-3 of the step's change)
            bound = 1e-6 * max(1.0, np.max(np.abs(b))) + 1e-3 * np.max(np.abs(b - state))
            assert np.max(np.abs(a - b)) <= bound, (state, dt, a - b)
    rows = warp.step_rows(np.stack([*flight, low]), 1e-4)
    assert np.array_equal(rows[2], warp.step(low, 1e-4))  # a world's bits do not depend on its company
    # Its entry guard is its own float32 contact distance: <= 0 exactly where it makes a contact.
    entry = warp.entry_rows(0, np.stack([*flight, low]))
    assert entry[0] > 0 and entry[1] > 0 and -0.0021 < entry[2] < -0.0019


@pytest.mark.mujoco_warp
def test_mujoco_warps_drop_gets_mujocos_verdict_through_the_driver() -> None:
    pytest.importorskip("mujoco_warp", reason=WARP_SKIP)
    from ferromotion.engines._mujoco import mjcf
    from ferromotion.engines._mujoco_warp import mujoco_warp_step_function
    from ferromotion.engines.conformance import conformance, fixtures

    k, dt = 1e4, 1e-3
    doc = fixtures()["drop"]
    got = {}
    for name, make in (("mujoco", mujoco_step_function), ("mujoco_warp", mujoco_warp_step_function)):
        sys, box = make(mjcf(fm.Drop(), k, dt), qpos=[1.0])
        s = fm.hybrid_jacobian(sys, box.state_of([1.0], [0.0]), 0.0, 0.8, dt=dt, halve_dt=False, progress=False)
        got[name] = (s, conformance(doc, s.x, s.jacobian))
    (s32, c32), (s64, c64) = got["mujoco_warp"], got["mujoco"]
    assert s32.resolution["precision"] == 2.0 ** -24 and s64.resolution["eps"] == 1e-6
    assert [e.guard for e in s32.events] == [e.guard for e in s64.events] == [0, 1]
    assert c32.verdict == c64.verdict == "right"
    # The same derivative of the same law, measured on a float32 step: within the tolerance it states.
    gap = np.max(np.abs(s32.jacobian - s64.jacobian)) / max(1.0, np.max(np.abs(s64.jacobian)))
    assert gap <= s32.resolution["probe_rtol"], (gap, s32.resolution)


def test_the_elliptic_cone_is_the_pyramidal_cones_law_for_the_cubes_frictionless_contact() -> None:
    # MuJoCo Warp's driver route runs the elliptic cone (_cube.WARP_OPTION); MuJoCo's own step gives the
    # same trajectory bit for bit through both strikes (condim 1: one normal row, no friction cone).
    ends = {}
    for option in (None, _cube.WARP_OPTION):
        model = mujoco.MjModel.from_xml_string(_cube.cube_mjcf(CUBE, 0.01, 2e-4, option=option))
        ends[str(option)] = _cube.mujoco_rollout(model, X0, [0.45])[0.45]
    a, b = ends.values()
    assert len(CUBE.solve(X0, 0.45).impacts) == 2
    assert np.array_equal(a, b)
