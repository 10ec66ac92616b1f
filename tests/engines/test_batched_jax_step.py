"""A third-party JAX step through ``fm.hybrid_jacobian``, one state per call against ``jax.vmap``
over the driver's rows (``fm.StepFunction(..., batch=True)``).

Never a mock: both systems are the same JAX program (a push-only penalty ball, semi-implicit
Euler, float64 via ``jax_enable_x64``), compiled once by ``jax.jit`` for one state and once as
``jax.jit(jax.vmap(...))`` for the rows, as a user would write them. The oracle for the batched
Jacobian is the one-state answer on the same probes; XLA may vectorise the vmapped program's
arithmetic differently from the one-state program, so the two are compared within 1e-10 (and the
largest difference is printed), and each row of the vmapped step is compared with the one-state
step directly. The wall-time ratio is measured here, both runs side by side after compilation (JAX
compiles the vmapped step once per row count: the first run's time, which pays that, is printed).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is installed only in .venv-engines (scripts/engines_env.sh)")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

import ferromotion as fm  # noqa: E402

K, M, G, ZETA = 1e5, 1.0, 9.81, 0.1606
C = 2 * ZETA * math.sqrt(K * M)
X0, T, DT = [1.0, 0.0], 0.8, 1e-4


def penalty(x: jnp.ndarray, dt: float) -> jnp.ndarray:
    """One step of the push-only penalty ball, as a JAX user would write it: x = (y, v)."""
    y, v = x[0], x[1]
    force = jnp.where(y < 0.0, jnp.maximum(0.0, -K * y - C * v), 0.0)
    v = v + dt * (force / M - G)
    return jnp.stack([y + dt * v, v])


def release(x: jnp.ndarray) -> jnp.ndarray:
    """The force's argument while in contact (positive while it pushes), 1 above the ground."""
    return jnp.where(x[0] < 0.0, -K * x[0] - C * x[1], 1.0)


# Step and guards each compiled once for one state and once over rows, as a JAX user would.
_step, _entry, _release = jax.jit(penalty), jax.jit(lambda x: x[0]), jax.jit(release)
_steps = jax.jit(jax.vmap(penalty, in_axes=(0, None)))
_entries, _releases = jax.jit(jax.vmap(lambda x: x[0])), jax.jit(jax.vmap(release))

ONE = fm.StepFunction(lambda x, dt: np.asarray(_step(x, dt)), guards=[lambda x: float(_entry(x)),
                      lambda x: float(_release(x))], resets=[None, None], name="jax penalty (jit, one state)")
ROWS = fm.StepFunction(lambda X, dt: np.asarray(_steps(X, dt)), guards=[lambda X: np.asarray(_entries(X)),
                       lambda X: np.asarray(_releases(X))], resets=[None, None], batch=True,
                       name="jax penalty (jit of vmap, rows)")


def test_vmapped_rows_step_as_the_one_state_step_does() -> None:
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.uniform(-2e-3, 1e-2, 64), rng.uniform(-4.0, 4.0, 64)])  # in and out of contact
    for dt in (DT, DT / 2, 3.7e-5):
        one = np.array([np.asarray(_step(x, dt)) for x in X])
        rows = np.asarray(_steps(X, dt))
        scale = np.max(np.abs(one), axis=0)
        assert np.max(np.abs(rows - one) / scale) <= 1e-15, np.max(np.abs(rows - one) / scale)


def test_a_batched_jax_step_gives_the_one_state_jacobian_in_a_quarter_of_the_time() -> None:
    # JAX compiles the vmapped step once per row count it meets: the first run pays that (printed),
    # the timed runs below do not. The one-state step has one shape.
    cold = fm.hybrid_jacobian(ROWS, X0, 0.0, T, dt=DT, progress=False)
    fm.hybrid_jacobian(ONE, X0, 0.0, 0.05, dt=DT, progress=False)
    load = os.getloadavg()[0]
    one = fm.hybrid_jacobian(ONE, X0, 0.0, T, dt=DT, progress=False)
    many = fm.hybrid_jacobian(ROWS, X0, 0.0, T, dt=DT, progress=False)
    assert one.half_dt is not None and many.half_dt is not None
    gap = max(float(np.max(np.abs(many.jacobian - one.jacobian))),
              float(np.max(np.abs(many.half_dt.jacobian - one.half_dt.jacobian))))
    assert many.events == one.events and many.step_calls == one.step_calls
    assert one.wall_time_s is not None and many.wall_time_s is not None
    print(f"\njax one state: {one.wall_time_s:.2f} s, jax.vmap rows: {many.wall_time_s:.2f} s "
          f"({many.wall_time_s / one.wall_time_s:.3f}x), {many.batch_calls} calls for {many.step_calls} states; "
          f"max |J_rows - J_one| = {gap:.1e} (bit-identical: {gap == 0.0}); load {load:.1f}; the first rows run, "
          f"compiling each row count: {cold.wall_time_s:.2f} s")
    assert gap <= 1e-10
    assert len(one.events) >= 2 and np.all(np.isfinite(one.jacobian))  # the entry and the release located
    assert many.wall_time_s <= 0.25 * one.wall_time_s
