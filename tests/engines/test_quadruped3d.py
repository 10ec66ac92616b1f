"""dm_control's 3-D quadruped through the black-box driver (ferromotion.engines.quadruped3d), the CI case.

Never a mock: MuJoCo runs every step, on the MJCF shipped in the dm-control wheel. Each fact against
a route written here, apart from the module's:
* the toe pairs guarded are the contacts MuJoCo's own collision makes when the unrestricted robot
  stands on its four feet;
* the landing: a plain ``mj_step`` loop sees all four toes cross the floor between the same two
  step ends, and the driver finds them simultaneous: 4! orders, each a piece of the derivative, and
  the pieces differ (no one Jacobian);
* a stride touchdown (the front right foot ending its swing at 2 ms): the first switch the driver
  locates is that toe's entry, inside the step where the plain loop sees it cross, and (b) equals
  central differences of the plain loop perturbed with ``mj_integratePos`` and read with
  ``mj_differentiatePos``.
The whole table (MJX included: its compilation alone takes minutes) is ``make quadruped3d``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is installed only in .venv-engines (scripts/engines_env.sh)")
pytest.importorskip("dm_control", reason="dm-control is installed only in .venv-engines (scripts/engines_env.sh)")

from ferromotion.engines import quadruped3d as q3  # noqa: E402

DT = 2e-3


def _plain_run(m, trot: q3.Trot, t_end: float):
    """Toe distances at every step end of a plain mj_step loop (the warm start cleared, as a step
    from a state does), and the states at every step start."""
    d = mujoco.MjData(m)
    floor = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "floor")
    toes = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "toe_" + f) for f in q3.FEET]

    def distances():
        mujoco.mj_kinematics(m, d)
        return [mujoco.mj_geomDistance(m, d, g, floor, 1.0, None) for g in toes]

    dist, states = [distances()], []
    for k in range(round(t_end / DT)):
        u = trot.ctrl(m, k * DT)
        states.append((d.qpos.copy(), d.qvel.copy(), d.act.copy(), u))
        d.ctrl[:] = u
        d.qacc_warmstart[:] = 0.0
        mujoco.mj_step(m, d)
        dist.append(distances())
    return np.array(dist), states


def test_the_guarded_toe_pairs_are_the_contacts_mujoco_makes_standing() -> None:
    full = q3.quadruped_model("shipped", DT, toes_only=False)
    m = q3.quadruped_model("shipped", DT)
    assert (m.nv, m.na) == (22, 12)
    d = mujoco.MjData(full)
    for _ in range(300):  # land and stand
        mujoco.mj_step(full, d)
    mujoco.mj_forward(full, d)
    seen = {tuple(sorted((int(d.contact.geom1[c]), int(d.contact.geom2[c])))) for c in range(d.ncon)}
    assert seen == {tuple(sorted((g1, g2))) for g1, g2, _ in q3.toe_pairs(m)}


def test_the_four_foot_landing_is_refused_as_simultaneous() -> None:
    m = q3.quadruped_model("shipped", DT)
    dist, _ = _plain_run(m, q3.Trot(), 0.2)
    crossed = [np.flatnonzero((dist[:-1, i] > 0) & (dist[1:, i] <= 0))[0] for i in range(4)]
    assert len(set(crossed)) == 1  # all four in one step, by the model's symmetry
    tds, _ = q3.nominal("shipped", strides=0.0)
    assert len(tds) == 1 and tds[0].simultaneous and len(tds[0].feet) == 4
    c = q3.located_jacobian(m, tds[0], DT, halve_dt=False)
    # The four entries at one instant: every order of the four is a piece of the derivative, and
    # the pieces differ, so there is no one Jacobian.
    assert c.jacobian is None and c.refusal.startswith("NotDifferentiable")
    assert f"{math.factorial(4)} linear pieces" in c.refusal, c.refusal


def test_a_stride_touchdown_is_located_where_a_plain_loop_sees_the_toe_cross() -> None:
    m = q3.quadruped_model("shipped", DT)
    tds, summary = q3.nominal("shipped")
    assert summary["other_contacts"] == 0
    td = next(t for t in tds if t.feet == ("front_right",))
    dist, states = _plain_run(m, q3.Trot(), td.t1)
    k = round(td.t0 / DT)
    assert dist[k, 1] > 0 >= dist[k + 1, 1]  # the plain loop: the front right toe crosses in step k
    np.testing.assert_array_equal(states[k][0], td.qpos)
    c = q3.located_jacobian(m, td, DT)
    assert c.refusal is None, c.refusal
    names = q3.ToeGuards(q3._window_box(m, td)[1]).names()
    t_first, g_first = c.located[0]
    assert names[g_first] == "front_right entry" and td.t0 < t_first <= td.t0 + DT
    # (b) against central differences of the plain loop, written here.
    b = q3.difference_jacobian(m, td, DT)
    assert _plain_differences(m, td, [0, 5, 22, 30, 50], b.jacobian) < 1e-6


def _plain_differences(m, td: q3.Touchdown, cols, jac: np.ndarray, eps: float = 1e-6) -> float:
    """max over the columns given of |plain-loop central difference - jac| / max|jac|."""
    nv, n = m.nv, round((td.t1 - td.t0) / DT)

    def run(dq: np.ndarray, v: np.ndarray, a: np.ndarray):
        d = mujoco.MjData(m)
        q = td.qpos.copy()
        mujoco.mj_integratePos(m, q, dq, 1.0)
        d.qpos[:], d.qvel[:], d.act[:], d.ctrl[:] = q, v, a, td.ctrl
        m.opt.timestep = DT
        for _ in range(n):
            d.qacc_warmstart[:] = 0.0
            mujoco.mj_step(m, d)
        return d.qpos.copy(), np.concatenate([d.qvel, d.act])

    q_end, _ = run(np.zeros(nv), td.qvel.copy(), td.act.copy())
    worst = 0.0
    for j in cols:
        outs = []
        for s in (1.0, -1.0):
            x = np.concatenate([np.zeros(nv), td.qvel, td.act])
            x[j] += s * eps
            q, rest = run(x[:nv], x[nv:2 * nv], x[2 * nv:])
            dq = np.empty(nv)
            mujoco.mj_differentiatePos(m, dq, 1.0, q_end, q)
            outs.append(np.concatenate([dq, rest]))
        col = (outs[0] - outs[1]) / (2 * eps)
        worst = max(worst, float(np.max(np.abs(col - jac[:, j])) / np.max(np.abs(jac))))
    return worst
