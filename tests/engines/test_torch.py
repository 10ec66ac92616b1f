"""PyTorch running the drop, audited by ferromotion.engines (the torch adapter, ``_jax.Torch``).

Never a mock: every test drives the installed torch. torch lives only in .venv-engines, and only
when it was opted in (``ENGINES_TORCH=1 scripts/engines_env.sh``); elsewhere this file is skipped.

Independent routes:
* torch's x(T) and its autograd Jacobian against our fixed route (same law, same integrator,
  written by a different program: the law maps exactly);
* torch's reverse-mode autograd against central differences of torch's own map.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is installed only with ENGINES_TORCH=1 scripts/engines_env.sh")

import ferromotion as fm  # noqa: E402
from ferromotion.engines import _fd_jacobian, engine_adapter  # noqa: E402

DT = 1e-4


@pytest.fixture(scope="module")
def ad() -> object:
    return engine_adapter("torch")


@pytest.mark.parametrize("k", [1e4, 1e6])
def test_torch_runs_our_fixed_route(ad: object, k: float) -> None:
    drop = fm.Drop()
    state, jac = ad.jacobian(drop, k, DT, [drop.height, drop.velocity])
    r = fm.fixed(drop, k, DT)
    np.testing.assert_allclose(state, r.state, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jac, r.jacobian, rtol=1e-12, atol=1e-9)
    # The no-grad rollout is the same map.
    np.testing.assert_array_equal(ad.state(drop, k, DT, [drop.height, drop.velocity]), state)


def test_torch_autograd_is_the_derivative_of_its_own_map(ad: object) -> None:
    drop = fm.Drop()
    x0 = np.array([drop.height, drop.velocity])
    _, jac = ad.jacobian(drop, 1e6, DT, x0)
    fd = _fd_jacobian(ad, drop, 1e6, DT, x0, 1e-6)
    assert np.max(np.abs(jac - fd)) / np.max(np.abs(fd)) < 1e-6
    # ... and it has the fixed step's wrong sign against the exact rigid answer.
    assert jac[1, 0] < 0 < fm.exact(drop).jacobian[1, 0]


def test_audit_engine_on_torch_gives_the_sign_table_the_exponent_and_the_receipt(ad: object) -> None:
    a = fm.audit_engine("torch", stiffness=np.logspace(4, 8, 5), dt=DT, refine=(10,), check_k=1e6,
                        check_options={"directions": 1, "eps": np.logspace(-2, -9, 8)}, adapter=ad)
    np.testing.assert_allclose(a.dv_dy0, a.ours_dv_dy0, rtol=1e-10)
    assert np.all(a.autodiff_vs_fd < 1e-6)
    assert list(a.right_sign) == list(np.sign(a.ours_dv_dy0) == np.sign(a.exact_jacobian[1, 0]))
    assert a.exponent is not None and a.exponent.points == 5
    assert a.blame is not None
    assert a.receipt is not None and a.receipt.verdict == "verified", a.receipt.why
    assert "WRONG SIGN" in a.table() and a.engine == "torch" and a.version.startswith("torch ")
