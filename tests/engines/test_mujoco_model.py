"""Any MuJoCo model through the black-box driver (ferromotion.engines.mujoco_step_function).

Never a mock: MuJoCo itself runs every step. Each fact against an independent route:
* a free-floating box tumbling in flight: the driver's J (tangent coordinates, MuJoCo's
  convention) against central differences of a plain ``mj_step`` loop on a fresh MjData, its
  probes taken with ``mj_integratePos`` at x0 and read with ``mj_differentiatePos`` at x(T);
* every configuration the driver hands MuJoCo has unit quaternions;
* the entry guard of a sphere over a plane is the closed-form gap z - r;
* the contact pairs found from contype/conaffinity are the ones MuJoCo's own collision reports.
"""

from __future__ import annotations

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is installed only in .venv-engines (scripts/engines_env.sh)")

import ferromotion as fm  # noqa: E402
from ferromotion.engines import mujoco_step_function  # noqa: E402

BOX = """
<mujoco>
  <option timestep="0.001"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body name="box" pos="0 0 2">
      <freejoint/>
      <geom name="box" type="box" size=".1 .2 .3" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""
T, DT = 0.1, 1e-3


def _tumbling_box():
    sys, box = mujoco_step_function(BOX)
    q0 = np.array([0.1, -0.2, 2.0, np.cos(0.4), np.sin(0.4) * 0.6, 0.0, np.sin(0.4) * 0.8])
    x0 = box.state_of(q0, [0.3, 0.0, 1.0, 2.0, -1.0, 3.0])
    return sys, box, q0, x0


def _mujoco_rollout(q0: np.ndarray, v0: np.ndarray) -> tuple:
    m = mujoco.MjModel.from_xml_string(BOX)
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = q0, v0
    for _ in range(round(T / DT)):
        mujoco.mj_step(m, d)
    return m, d.qpos.copy(), d.qvel.copy()


def test_free_body_jacobian_in_tangent_coordinates_matches_mujoco_differences() -> None:
    sys, box, q0, x0 = _tumbling_box()
    sol = fm.hybrid_jacobian(sys, x0, 0.0, T, dt=DT, halve_dt=False)
    assert len(sol.events) == 0  # in flight: away from events
    jac = box.tangent_at_end(sol.jacobian, sol.x)
    # The independent route: MuJoCo's own loop, perturbed in its tangent space.
    v0 = x0[6:12]
    m, qT, vT = _mujoco_rollout(q0, v0)
    np.testing.assert_allclose(box.qpos(sol.x), qT, rtol=0, atol=1e-12)
    eps = 1e-6
    ref = np.zeros((12, 12))
    for j in range(12):
        cols = []
        for s in (1.0, -1.0):
            q, v = q0.copy(), v0.copy()
            if j < 6:
                dq = np.zeros(6)
                dq[j] = s * eps
                mujoco.mj_integratePos(m, q, dq, 1.0)
            else:
                v[j - 6] += s * eps
            _, qe, ve = _mujoco_rollout(q, v)
            dqe = np.empty(6)
            mujoco.mj_differentiatePos(m, dqe, 1.0, qT, qe)
            cols.append(np.concatenate([dqe, ve - vT]))
        ref[:, j] = (cols[0] - cols[1]) / (2 * eps)
    # Both are central differences at 1e-6 of the same smooth map: they agree to the probes'
    # truncation and round-off, ~1e-8 relative.
    assert np.max(np.abs(jac - ref)) / np.max(np.abs(ref)) < 1e-6, np.max(np.abs(jac - ref))
    # The rotation couples: the box's angular velocity moves its orientation at T.
    assert np.max(np.abs(ref[3:6, 9:12])) > 0.05


def test_every_configuration_the_driver_hands_mujoco_has_unit_quaternions() -> None:
    _, box, _, x0 = _tumbling_box()
    norms = []

    def step(x: np.ndarray, dt: float) -> np.ndarray:
        norms.append(np.linalg.norm(box.qpos(x)[3:7]))
        return box.step(x, dt)

    fm.hybrid_jacobian(fm.StepFunction(step), x0, 0.0, 0.02, dt=DT, halve_dt=False)
    assert len(norms) > 100
    assert np.max(np.abs(np.array(norms) - 1.0)) < 1e-14


def test_the_entry_guard_is_the_closed_form_gap_of_a_sphere_over_a_plane() -> None:
    xml = ('<mujoco><worldbody><geom type="plane" size="5 5 .1"/><body pos="0 0 1"><joint type="slide" axis="0 0 1"/>'
           '<geom type="sphere" size="0.25" mass="1"/></body></worldbody></mujoco>')
    sys, box = mujoco_step_function(xml)
    assert [b.kind for b in box.layout] == ["slide"] and len(box.pairs) == 1
    for z in (0.7, 0.3, 0.01, -0.02):  # the slide coordinate is the centre's height minus 1
        x = box.state_of([z], [0.0])
        assert box.distance(0, x) == pytest.approx(1.0 + z - 0.25, abs=1e-12)
    # Its release guard is positive while MuJoCo's contact pushes (the ball held 2 cm deep).
    assert box.release(0, box.state_of([-0.77], [0.0])) > 0


def test_the_contact_pairs_are_the_ones_mujoco_collides() -> None:
    sys, box, _, _ = _tumbling_box()
    m = box.model
    d = mujoco.MjData(m)
    d.qpos[:] = [0.0, 0.0, 0.25, 1.0, 0.0, 0.0, 0.0]  # the box's corner into the floor
    mujoco.mj_forward(m, d)
    seen = {tuple(sorted((int(d.contact.geom1[c]), int(d.contact.geom2[c])))) for c in range(d.ncon)}
    assert seen == {(g1, g2) for g1, g2, _ in box.pairs}
