"""Newton (on Warp) and Drake (TAMSI, SAP) running the drop, audited by ferromotion.engines.

Never a mock: every test drives the installed engine (.venv-engines). Each mapping is pinned by
an independent rollout of the mapped law in plain numpy (tests/engines/mapped_laws.py), each
engine's own gradient against central differences of the engine's own map, and the audit
table's verdict is the checker's (this file asserts no verdict of its own on Newton's float32
gradient). Rollouts are short (the 0.15 s drop, 1500 steps) except where the full drop is the
point (SAP at rest).
"""

from __future__ import annotations


import numpy as np
import pytest
from support import run_cli

import ferromotion as fm
from ferromotion.engines import _fd_jacobian, engine_adapter
from mapped_laws import drop_rollout

SHORT = fm.Drop(height=0.05, t_final=0.15)
DT = 1e-4


def _x0(drop: fm.Drop) -> np.ndarray:
    return np.array([drop.height, drop.velocity])


@pytest.fixture(scope="module")
def newton() -> object:
    pytest.importorskip("newton", reason="Newton is installed only in .venv-engines (scripts/engines_env.sh)")
    return engine_adapter("newton")


@pytest.fixture(scope="module")
def tamsi() -> object:
    pytest.importorskip("pydrake", reason="Drake is installed only in .venv-engines (scripts/engines_env.sh)")
    return engine_adapter("drake-tamsi")


@pytest.fixture(scope="module")
def sap() -> object:
    pytest.importorskip("pydrake", reason="Drake is installed only in .venv-engines (scripts/engines_env.sh)")
    return engine_adapter("drake-sap")


@pytest.mark.parametrize("k", [1e4, 1e6])
def test_newton_runs_the_mapped_law_in_float32(newton: object, k: float) -> None:
    got = newton.state(SHORT, k, DT, _x0(SHORT))
    want = drop_rollout("newton", SHORT, k, DT)
    # float32 state, 1500 steps: a few float32 ulps of the 5 cm scale per step, accumulated.
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-4 * np.max(np.abs(want)))
    # ... and not our law: Newton's release is undamped, so the rebound is faster than ours.
    ours = fm.fixed(SHORT, k, DT).state
    assert got[1] > ours[1] + 0.05, (got, ours)


def test_newton_tape_gradient_against_differences_of_its_own_map(newton: object) -> None:
    x, jac = newton.jacobian(SHORT, 1e4, DT, _x0(SHORT))
    fd = _fd_jacobian(newton, SHORT, 1e4, DT, _x0(SHORT))
    assert np.all(np.isfinite(jac))
    # float32 map probed at 1e-5: agreement to a few percent is all float32 allows here.
    assert np.max(np.abs(jac - fd)) / np.max(np.abs(fd)) < 5e-2, (jac, fd)
    # A second route: the float64 derivative of the mapped law (central differences at 1e-7 of
    # the numpy rollout, far below its jump spacing |v|*dt = 1e-4 m): the tape is that, in float32.
    def law(x: np.ndarray) -> np.ndarray:
        return drop_rollout("newton", fm.Drop(height=x[0], velocity=x[1], t_final=SHORT.t_final), 1e4, DT)

    x0 = _x0(SHORT)
    ref = np.stack([(law(x0 + e) - law(x0 - e)) / 2e-7 for e in np.eye(2) * 1e-7], axis=1)
    np.testing.assert_allclose(jac, ref, rtol=1e-3, atol=1e-3 * np.max(np.abs(ref)))
    # The wrong sign of the fixed-step contact map is Newton's too.
    assert jac[1, 0] < 0 < fm.exact(SHORT).jacobian[1, 0]


@pytest.mark.parametrize("k", [1e4, 1e6])
def test_drake_tamsi_runs_hunt_crossley_implicitly(tamsi: object, k: float) -> None:
    from ferromotion.engines._drake import hunt_crossley_for

    got = tamsi.state(SHORT, k, DT, _x0(SHORT))
    speed = np.sqrt(2 * SHORT.gravity * SHORT.height)
    d_hc = hunt_crossley_for(fm.limit_restitution(SHORT), speed)
    want = drop_rollout("tamsi", SHORT, k, DT, hunt_crossley=d_hc)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("k", [1e4, 1e6])
def test_drake_sap_runs_our_law_at_the_end_of_each_step(sap: object, k: float) -> None:
    got = sap.state(SHORT, k, DT, _x0(SHORT))
    np.testing.assert_allclose(got, drop_rollout("sap", SHORT, k, DT), rtol=1e-7, atol=1e-9)


def test_hunt_crossley_dissipation_gives_our_restitution() -> None:
    from ferromotion.engines._drake import hunt_crossley_for, hunt_crossley_restitution

    e = fm.limit_restitution(fm.Drop())
    d = hunt_crossley_for(e, 4.43)
    assert abs(hunt_crossley_restitution(d * 4.43) - e) < 1e-4
    assert hunt_crossley_restitution(0.0) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("which", ["tamsi", "sap"])
def test_drake_autodiff_is_the_derivative_of_its_own_map(which: str, request: pytest.FixtureRequest) -> None:
    ad = request.getfixturevalue(which)
    _, jac = ad.jacobian(SHORT, 1e6, DT, _x0(SHORT))
    fd = _fd_jacobian(ad, SHORT, 1e6, DT, _x0(SHORT))
    assert np.max(np.abs(jac - fd)) / np.max(np.abs(fd)) < 1e-6, (jac, fd)


def test_drake_sap_with_its_default_relaxation_time_comes_to_rest() -> None:
    pytest.importorskip("pydrake")
    from ferromotion.engines._drake import Drake

    drop = fm.Drop()
    x0 = _x0(drop)
    rest = Drake("sap", relaxation=None).state(drop, 1e6, DT, x0)
    mapped = Drake("sap").state(drop, 1e6, DT, x0)
    # The rigid answer at T is in flight after the bounce (y = 0.38 m). The mapped SAP bounces
    # too; the default one has come to rest on the ground.
    assert fm.exact(drop).state[0] > 0.3
    assert abs(rest[1]) < 1e-3 and abs(rest[0]) < 1e-3, rest
    assert mapped[0] > 0.1, mapped


@pytest.mark.parametrize("engine", ["newton", "drake-tamsi", "drake-sap"])
def test_audit_engine_prints_the_table_with_the_checkers_verdict(engine: str) -> None:
    pytest.importorskip("newton" if engine == "newton" else "pydrake")
    a = fm.audit_engine(engine, stiffness=[1e6], drop=SHORT, refine=(), check_k=1e6,
                        check_options={"directions": 1, "eps": np.logspace(-3, -5, 3)})
    table = a.table()
    assert a.receipt is not None
    # The verdict string is the checker's, quoted as it is.
    assert f"receipt: {a.receipt.summary()}" in table
    assert a.receipt.verdict in table and a.engine == engine
    assert np.all(np.isfinite(a.jacobian))
    assert "no blame split" in table


def test_cli_audit_engine_drake_sap_prints_the_table() -> None:
    pytest.importorskip("pydrake")
    out = run_cli("audit", "--engine", "drake-sap", "--k-min", "1e4", "--k-max", "1e6", "--per-decade", "1",
                  timeout=900)
    assert out.returncode == 0, out.stderr
    assert "WRONG SIGN" in out.stdout or "RIGHT" in out.stdout
    assert "receipt: v(T) of the drop in drake-sap" in out.stdout
