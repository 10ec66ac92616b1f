"""Engines running many rows at once (ferromotion.engines adapters' ``states``/``jacobians``, the
MuJoCo drop's ``step_rows``) against the same engine run one row at a time, and the adapter
registry against a user's adapter.

Never a mock. Row independence is a fact of each engine's program: MuJoCo's rollout threads run
each row's own ``mj_step`` loop, and Newton's worlds each their own particle kernels, so those
rows must equal the one-row runs bit for bit; XLA vectorises JAX and MJX differently from one
row, so those agree to float64 round-off (asserted 1e-12 relative; measured 0 for JAX and 3e-14
for MJX states, 1e-12 for MJX's J over 1,500 steps).
"""

from __future__ import annotations

import numpy as np
import pytest

import ferromotion as fm
from ferromotion.engines import AdapterBase, engine_adapter, register_engine
from ferromotion.engines._adapter import REGISTRY

#: A drop that lands and bounces within 500 steps (2 mm from rest: impact at 0.02 s).
TINY = fm.Drop(height=0.002, t_final=0.05)
DT = 1e-4
KS = np.array([1e4, 1e6])


def _rows() -> np.ndarray:
    x0 = np.array([TINY.height, TINY.velocity])
    return np.stack([x0, x0 + [1e-5, -2e-5]])


def test_mujoco_rows_are_each_rows_own_mj_step_loop_bit_for_bit() -> None:
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is installed only in .venv-engines")
    from ferromotion.engines._mujoco import mjcf

    ad = engine_adapter("mujoco")
    X = _rows()
    got = ad.states(TINY, KS, DT, X)
    for k, x, row in zip(KS, X, got):
        m = mujoco.MjModel.from_xml_string(mjcf(TINY, k, DT))
        d = mujoco.MjData(m)
        d.qpos[0], d.qvel[0] = x
        for _ in range(round(TINY.t_final / DT)):
            mujoco.mj_step(m, d)
        assert np.array_equal(row, [d.qpos[0], d.qvel[0]])
    s, j = ad.jacobians(TINY, KS, DT, X)
    for k, x, si, ji in zip(KS, X, s, j):
        s1, j1 = ad.jacobian(TINY, k, DT, x)
        assert np.array_equal(si, s1) and np.array_equal(ji, j1)


def test_mujoco_drop_step_rows_are_its_one_state_steps_bit_for_bit() -> None:
    pytest.importorskip("mujoco", reason="MuJoCo is installed only in .venv-engines")
    from ferromotion.engines._step_function import _MuJoCoDrop

    box = _MuJoCoDrop(fm.Drop(), 1e5, DT)
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.uniform(-2e-3, 1e-2, 40), rng.uniform(-4.0, 4.0, 40)])  # in and out of contact
    for dt in (DT, 3.7e-5):
        assert np.array_equal(box.step_rows(X, dt), np.array([box.step(x, dt) for x in X]))
    np.testing.assert_array_equal(box.entry_rows(X), [box.entry(x) for x in X])
    np.testing.assert_array_equal(box.release_rows(X), [box.release(x) for x in X])


def test_newton_worlds_are_each_rows_one_world_run_bit_for_bit() -> None:
    pytest.importorskip("newton", reason="Newton is installed only in .venv-engines")
    ad = engine_adapter("newton")
    X = _rows()
    s, j = ad.jacobians(TINY, KS, DT, X)
    assert np.array_equal(ad.states(TINY, KS, DT, X), s)
    for k, x, si, ji in zip(KS, X, s, j):
        s1, j1 = ad.jacobian(TINY, k, DT, x)  # one world, two reverse passes
        assert np.array_equal(si, s1) and np.array_equal(ji, j1), (si, s1, ji, j1)


@pytest.mark.parametrize("engine", ["jax", "mjx"])
def test_vmapped_rows_agree_with_one_row_to_round_off(engine: str) -> None:
    pytest.importorskip("jax", reason="JAX is installed only in .venv-engines")
    ad = engine_adapter(engine)
    X = _rows()
    got = ad.states(TINY, KS, DT, X)
    one = np.array([ad.state(TINY, k, DT, x) for k, x in zip(KS, X)])
    np.testing.assert_allclose(got, one, rtol=0, atol=1e-12 * np.max(np.abs(one)))
    if engine == "jax":  # MJX's jacfwd rows compile for minutes on a loaded CPU: the audit runs them
        s, j = ad.jacobians(TINY, KS, DT, X)
        j1 = np.array([ad.jacobian(TINY, k, DT, x)[1] for k, x in zip(KS, X)])
        np.testing.assert_allclose(j, j1, rtol=0, atol=1e-12 * np.max(np.abs(j1)))


class _OursAsAnEngine(AdapterBase):
    """A user's adapter: our fixed route standing in as 'an engine' (the registry's contract only)."""

    name = "ours-fixed"
    version = "ferromotion"
    gradient_route = "the core's fixed-step tangent"

    def state(self, drop, k, dt, x0):
        return self.jacobian(drop, k, dt, x0)[0]

    def jacobian(self, drop, k, dt, x0):
        d = fm.Drop(height=float(x0[0]), velocity=float(x0[1]), t_final=drop.t_final, zeta=drop.zeta,
                    mass=drop.mass, gravity=drop.gravity)
        r = fm.fixed(d, k, dt)
        return np.asarray(r.state), np.asarray(r.jacobian)


def test_a_registered_adapter_runs_the_conformance_fixtures_it_has_methods_for() -> None:
    from ferromotion.engines.conformance import conformance_engine

    register_engine("ours-fixed", __name__, "_OursAsAnEngine", "none")
    try:
        ad = engine_adapter("ours-fixed")
        assert isinstance(ad, fm.engines.EngineAdapter)
        run = conformance_engine("ours-fixed", stiffness=(1e4,), dt=1e-4)
        want = fm.conformance("drop", *[np.asarray(a) for a in (fm.fixed(fm.Drop(), 1e4, 1e-4).state,
                                                                 fm.fixed(fm.Drop(), 1e4, 1e-4).jacobian)])
        assert [r["fixture"] for r in run.rows] == ["drop"] and run.rows[0]["conformance"] == want.to_dict()
        assert run.skipped == ["slope: the ours-fixed adapter cannot express this fixture"]
    finally:
        REGISTRY.pop("ours-fixed", None)


def test_an_unknown_engine_is_refused_naming_the_registered_ones() -> None:
    with pytest.raises(ValueError, match="unknown engine 'bullet'; expected one of mujoco, mjx, jax"):
        engine_adapter("bullet")
