"""JAX's ``jacfwd`` of the fixed route's discrete map equals the core's hand-written tangent.

An independent check of ``fm.fixed``: benches/alternatives.py writes the same map in JAX
(float64, ``lax.fori_loop``) and lets forward-mode autodiff differentiate it, the contact
branch taken as given (``jnp.where``), as a JAX user would. The core's Jacobian and x(T) must
agree with it to 1e-12 relative (max-norm) on a set of drops, stiffnesses and steps. The
drops bounce once before T, as the lab's does: a mass left to settle in contact for long has
a Jacobian decaying into subnormal numbers, which XLA flushes to zero (no check there).

JAX lives only in the benchmark's environment, so this file runs there:
``.venv-bench/bin/python -m pytest tests/bench_env`` (scripts/test.sh does, after
scripts/bench_env.sh has created .venv-bench); elsewhere it is skipped.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax", reason="JAX is installed only in .venv-bench (scripts/bench_env.sh)")

import ferromotion as fm  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benches"))
from alternatives import DropParams, jax_sweep  # noqa: E402

RTOL = 1e-12
KS = np.array([1e2, 10**2.5, 1e3, 1e4, 10**4.5, 1e5, 1e6, 10**6.5, 1e7, 1e8])
DROPS = [
    (dict(), 1e-4),
    (dict(), 1e-5),
    (dict(height=0.5, velocity=1.0), 1e-4),
    (dict(height=2.0, velocity=-1.0, t_final=1.2), 1e-4),
    (dict(zeta=0.0), 1e-4),
    (dict(height=1.3, zeta=0.3, mass=2.5, gravity=3.7, t_final=1.4), 1e-4),
]


def relative(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """max |a - b| / max |b| over the last axes, per k."""
    axes = tuple(range(1, a.ndim))
    return np.abs(a - b).max(axis=axes) / np.abs(b).max(axis=axes)


@pytest.mark.parametrize(("params", "dt"), DROPS, ids=[f"{p or 'default'}-dt{dt:g}" for p, dt in DROPS])
def test_jax_jacfwd_equals_the_fixed_route(params: dict, dt: float) -> None:
    drop = fm.Drop(**params)
    jac, x = (np.asarray(a) for a in jax_sweep(DropParams(**params), dt)(KS))
    routes = [fm.fixed(drop, k=k, dt=dt) for k in KS]
    core_jac = np.stack([r.jacobian for r in routes])
    core_x = np.stack([r.state for r in routes])
    assert jac.shape == (len(KS), 2, 2)
    err_j, err_x = relative(jac, core_jac), relative(x, core_x)
    worst = int(np.argmax(err_j))
    assert err_j.max() <= RTOL, f"k = {KS[worst]:g}: JAX J = {jac[worst].tolist()}, core {core_jac[worst].tolist()}"
    assert err_x.max() <= RTOL, f"x(T) differs by {err_x.max():.2e} relative"
    # Not a comparison of zeros: every Jacobian is of order one or more.
    assert np.abs(core_jac).max(axis=(1, 2)).min() > 0.1
