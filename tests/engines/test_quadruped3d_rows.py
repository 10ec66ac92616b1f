"""dm_control's 3-D quadruped through the driver's batched rows (``quadruped3d.RowsStep``,
``ToeGuards.row_guards``) against one state per call.

Never a mock: MuJoCo runs every step. The oracle is the one-state path, itself ``mj_step`` on the
state the model step sets: each row of ``RowsStep`` (``mujoco.rollout``, a thread per core) equals
that step bit for bit, in and out of contact, at two steps; each row's guards equal the one-state
guards; and a stride touchdown's located Jacobian (with its dt/2 answer) is the same bits both ways.
"""

from __future__ import annotations

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is installed only in .venv-engines (scripts/engines_env.sh)")
pytest.importorskip("dm_control", reason="dm-control is installed only in .venv-engines (scripts/engines_env.sh)")

from ferromotion.engines import quadruped3d as q3  # noqa: E402

DT = 2e-3


@pytest.fixture(scope="module")
def touchdown():
    tds, _ = q3.nominal("shipped", strides=1.0)
    td = next(t for t in tds if not t.simultaneous)  # the front right foot ending its swing
    return q3.quadruped_model("shipped", DT), td


def _states(box, x0, count):
    """States around x0, half of them with a toe pushed into the floor."""
    rng = np.random.default_rng(7)
    X = x0 + rng.normal(0.0, 1e-3, (count, x0.size))
    X[::2, 2] -= 0.02  # the torso's height: the stance toes deeper, the swing toe nearer
    return X


def test_rollout_rows_are_the_one_state_step_bit_for_bit(touchdown) -> None:
    m, td = touchdown
    _, box, x0 = q3._window_box(m, td)
    rows = q3.RowsStep(box)
    X = _states(box, x0, 3 * q3.RowsStep.ROLLOUT_ROWS)
    for dt in (DT, 2.7e-4):
        one = np.array([box.step(x, dt) for x in X])
        assert np.array_equal(rows(X, dt), one)
        assert np.array_equal(rows(X[:3], dt), one[:3])  # below ROLLOUT_ROWS: stepped one by one


def test_row_guards_are_the_one_state_guards(touchdown) -> None:
    m, td = touchdown
    _, box, x0 = q3._window_box(m, td)
    toes = q3.ToeGuards(box)
    X = _states(box, x0, 12)
    held = [len(toes._rows(x)) for x in X]
    assert min(held) < max(held)  # some states hold more toes than others
    got = np.column_stack([g(X) for g in toes.row_guards()])
    want = np.array([[g(x) for g in q3.ToeGuards(box).guards()] for x in X])
    assert np.array_equal(got, want)


def test_a_stride_touchdown_gives_the_same_bits_batched(touchdown) -> None:
    m, td = touchdown
    many = q3.located_jacobian(m, td, DT, batch=True)
    one = q3.located_jacobian(m, td, DT, batch=False)
    assert one.refusal is None and many.refusal is None, (one.refusal, many.refusal)
    assert np.array_equal(many.jacobian, one.jacobian) and np.array_equal(many.half_dt, one.half_dt)
    assert many.located == one.located
    print(f"\n{td.label}, dt = 2 ms with its dt/2: one state {one.wall_s:.1f} s, rows {many.wall_s:.1f} s")
