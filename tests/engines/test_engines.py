"""Real engines (MuJoCo, MJX, JAX) running the drop, audited by ferromotion.engines.

Never a mock: every test drives the installed engine. The engines live only in
.venv-engines (scripts/engines_env.sh; scripts/test.sh runs this folder there); elsewhere the
file is skipped. Rollouts are kept short where the engine is slow: MJX compiles its step loop
once (about a minute on a busy 2-core machine) and then costs ~0.2 ms a step on CPU.

Each fact is checked against an independent route:
* native MuJoCo against the mapped law written out here in plain numpy (the mapping is the
  one ferromotion.engines._mujoco documents, so this pins the documentation too);
* the JAX adapter against our fixed route (same law, same integrator);
* each engine's own gradient against central differences of the engine's own map;
* the checker's verdict: a right gradient of the engine's map verifies, a perturbed one does
  not (issue 14: the Taylor rung used to fail the right one).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from support import run_cli

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is installed only in .venv-engines (scripts/engines_env.sh)")
jax = pytest.importorskip("jax", reason="JAX is installed only in .venv-engines (scripts/engines_env.sh)")

import ferromotion as fm  # noqa: E402
from ferromotion.engines import _fd_jacobian, engine_adapter  # noqa: E402
from ferromotion.engines._mujoco import IMPEDANCE  # noqa: E402

#: A short drop (0.15 s, about 1500 steps at dt = 1e-4 s) for the slow engines: 5 cm from
#: rest, an impact at 0.10 s at 0.99 m/s and a bounce, as the default drop has.
SHORT = fm.Drop(height=0.05, t_final=0.15)
DT = 1e-4


def mapped_law(drop: fm.Drop, k: float, dt: float, x0: np.ndarray) -> np.ndarray:
    """MuJoCo's soft contact under the documented mapping, as plain semi-implicit Euler."""
    y, v = float(x0[0]), float(x0[1])
    m, g = drop.mass, drop.gravity
    c = 2.0 * drop.zeta * np.sqrt(k * m)
    for _ in range(round(drop.t_final / dt)):
        f = max(0.0, -k * y - c * v + IMPEDANCE * m * g) if y < 0.0 else 0.0
        v += dt * (f / m - g)
        y += dt * v
    return np.array([y, v])


@pytest.fixture(scope="module")
def native() -> object:
    return engine_adapter("mujoco")


@pytest.fixture(scope="module")
def mjx() -> object:
    pytest.importorskip("mujoco.mjx")
    return engine_adapter("mjx")


@pytest.mark.parametrize("k", [1e4, 1e6])
def test_native_mujoco_runs_the_mapped_law(native: object, k: float) -> None:
    drop = fm.Drop()
    x0 = np.array([drop.height, drop.velocity])
    np.testing.assert_allclose(native.state(drop, k, DT, x0), mapped_law(drop, k, DT, x0), rtol=1e-12, atol=1e-12)


def test_mujoco_transition_fd_chain_matches_differences_of_its_rollouts(native: object) -> None:
    drop = fm.Drop()
    x0 = np.array([drop.height, drop.velocity])
    _, jac = native.jacobian(drop, 1e6, DT, x0)
    fd = _fd_jacobian(native, drop, 1e6, DT, x0, 1e-6)
    # mjd_transitionFD differences each step at eps = 1e-6: its chain carries that error, ~1e-7.
    assert np.max(np.abs(jac - fd)) / np.max(np.abs(fd)) < 1e-5
    # The wrong sign of the fixed-step contact map is MuJoCo's too.
    assert jac[1, 0] < 0 < fm.exact(drop).jacobian[1, 0]


def test_jax_adapter_is_our_fixed_route() -> None:
    ad = engine_adapter("jax")
    drop = fm.Drop()
    for k in (1e4, 1e6):
        state, jac = ad.jacobian(drop, k, DT, [drop.height, drop.velocity])
        r = fm.fixed(drop, k, DT)
        np.testing.assert_allclose(state, r.state, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(jac, r.jacobian, rtol=1e-12, atol=1e-9)


def test_a_right_gradient_of_native_mujoco_verifies_and_a_perturbed_one_does_not(native: object) -> None:
    x0 = np.array([SHORT.height, SHORT.velocity])
    _, jac = native.jacobian(SHORT, 1e6, DT, x0)

    def v_final(x: np.ndarray) -> float:
        return float(native.state(SHORT, 1e6, DT, x)[1])

    # The chain of mjd_transitionFD is off by ~1e-7 (its own differences): tol 1e-5.
    right = fm.check_gradient(v_final, jac[1], x0, tol=1e-5, eps=np.logspace(-2, -9, 8))
    assert right.verdict == "verified", right.why
    wrong = fm.check_gradient(v_final, jac[1] * [1.001, 1.0], x0, tol=1e-5, eps=np.logspace(-2, -9, 8))
    assert wrong.verdict == "not-verified", wrong.why


def test_mjx_jacfwd_is_the_derivative_of_its_map_and_the_check_says_so(mjx: object) -> None:
    x0 = np.array([SHORT.height, SHORT.velocity])
    state, jac = mjx.jacobian(SHORT, 1e6, DT, x0)

    def v_final(x: np.ndarray) -> float:
        # The jacfwd function returns the state too: one compilation serves both.
        return float(mjx.jacobian(SHORT, 1e6, DT, x)[0][1])

    # Same model in C and in JAX: the same state.
    np.testing.assert_allclose(state, engine_adapter("mujoco").state(SHORT, 1e6, DT, x0), rtol=1e-9, atol=1e-12)
    fd = np.array([(v_final(x0 + e) - v_final(x0 - e)) / 2e-6 for e in np.eye(2) * 1e-6])
    assert np.max(np.abs(jac[1] - fd)) / np.max(np.abs(fd)) < 1e-6
    # The default ladder, half a decade apart: the map kinks every |v|·dt = 1e-4 m in y0, and
    # smoothness is measured on at least three probes below that.
    opts = dict(directions=1)
    right = fm.check_gradient(v_final, jac[1], x0, **opts)
    assert right.verdict == "verified", right.why
    # Each direction's Taylor slope, where one clears the noise and tol, is first order.
    assert all(d.certified and (d.taylor_slope is None or d.taylor_slope > 0.75) for d in right.directions)
    wrong = fm.check_gradient(v_final, jac[1] * [1.001, 1.0], x0, **opts)
    assert wrong.verdict == "not-verified", wrong.why


def test_audit_engine_on_jax_gives_the_sign_table_the_exponent_and_the_blame() -> None:
    a = fm.audit_engine("jax", stiffness=np.logspace(4, 8, 5), dt=DT, refine=(10,), check_k=1e6,
                        check_options={"directions": 1, "eps": np.logspace(-2, -9, 8)})
    # Our law: the engine's numbers are our fixed route's, computed by a different program.
    np.testing.assert_allclose(a.dv_dy0, a.ours_dv_dy0, rtol=1e-10)
    assert np.all(a.autodiff_vs_fd < 1e-6)
    assert list(a.right_sign) == list(np.sign(a.ours_dv_dy0) == np.sign(a.exact_jacobian[1, 0]))
    # The sign line is the core's three states, as the sweep gives them for our fixed route (the
    # same numbers here): at 1e8 the sign agrees only by accident.
    assert list(a.sign) == [str(x) for x in fm.sweep(fm.Drop(), a.k, DT, quiet=True).fixed.sign]
    assert a.sign[-1] == "right_far_off" and a.gradient_error[-1] >= 1.0
    assert a.exponent is not None and a.exponent.points == 5
    np.testing.assert_allclose(a.blame["contact_share"],
                               [np.max(np.abs(np.asarray(fm.flow(fm.Drop(), k).jacobian) - a.exact_jacobian))
                                for k in a.k], rtol=1e-12)
    assert a.receipt is not None and a.receipt.verdict == "verified", a.receipt.why
    # No events callback: smoothness is measured, never assumed. The map kinks every
    # |v|·dt = 4.4e-4 m in y0; the receipt claims smooth only the probes it measured smooth.
    assert "measured smooth up to" in a.receipt.why
    kink = fm.Drop().impact_speed() * DT
    assert all(d.smooth_below is not None and d.smooth_below < kink for d in a.receipt.directions)
    assert "WRONG SIGN" in a.table()


def test_cli_audit_engine_prints_the_sign_table_and_writes_the_receipt(tmp_path) -> None:
    import json

    receipt = tmp_path / "jax.receipt.json"
    out = run_cli("audit", "--engine", "jax", "--k-min", "1e4", "--k-max", "1e6", "--per-decade", "1", "--receipt",
                  str(receipt), timeout=600, check=True).stdout
    assert "WRONG SIGN" in out and "divergence exponent" in out and "receipt: v(T) of the drop in jax: verified" in out
    assert json.loads(receipt.read_text())["report"]["verdict"] == "verified"


def test_the_engines_docstring_examples_run() -> None:
    import doctest

    import ferromotion.engines

    result = doctest.testmod(ferromotion.engines, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_the_engine_table_says_the_sign_in_the_plain_audits_three_states() -> None:
    # JAX runs our law and our integrator, so at each k the engine table's sign column must read
    # as the plain audit's (the core's sign line there, from the sweep): FAR OFF at 1e8 included.
    args = ("--k-min", "1e6", "--k-max", "1e8", "--per-decade", "1", "--quiet")
    sign = re.compile(r"^\s*(\d\.\d\de\+\d\d)\b.*?\s(RIGHT SIGN, FAR OFF|RIGHT SIGN|WRONG SIGN)\s")

    def signs(stdout: str) -> dict:
        return {float(m[1]): m[2] for m in map(sign.match, stdout.splitlines()) if m}

    engine = run_cli("audit", "--engine", "jax", *args, timeout=600)
    plain = run_cli("audit", *args)
    assert engine.returncode == 0 and plain.returncode == 0, engine.stderr + plain.stderr
    header = next(line for line in engine.stdout.splitlines() if line.strip().startswith("k (N/m)"))
    assert "dv(T)/dy0 sign" in header
    assert signs(engine.stdout) == signs(plain.stdout) == {1e6: "WRONG SIGN", 1e7: "WRONG SIGN",
                                                           1e8: "RIGHT SIGN, FAR OFF"}, engine.stdout
