"""The drop as a user would write it in plain JAX (and in PyTorch): our law, mapped exactly.

One semi-implicit Euler step of the push-only spring-damper, the law of ``fm.fixed``::

    F = max(0, -k*y - c*v) if y < 0 else 0,   c = 2*zeta*sqrt(k*m)
    v' = v + dt*(F/m - g),   y' = y + dt*v'

The gradient is the framework's own autodiff through the step loop (``jax.jacfwd``; torch's
reverse-mode autograd). Because the law and the integrator are ours,
the state must equal ``fm.fixed``'s to round-off, and the blame split against our ``flow`` is exact.
"""

from __future__ import annotations

from typing import Any, Sequence, Tuple

import numpy as np

from ._adapter import AdapterBase, rows
from ._mujoco import steps

LAW = __doc__ or ""


def jax_step(x: Any, dt: float, k: float, c: float, m: float, g: float) -> Any:
    """One step of the drop in JAX: ``x = [y, v]`` -> the next ``[y, v]``."""
    import jax.numpy as jnp

    y, v = x[0], x[1]
    f = jnp.where(y < 0.0, jnp.maximum(0.0, -k * y - c * v), 0.0)
    v = v + dt * (f / m - g)
    return jnp.stack([y + dt * v, v])


class Jax(AdapterBase):
    """Plain JAX (x64): ``jax_step`` in a ``lax.fori_loop``; gradient ``jax.jacfwd``."""

    name = "jax"
    gradient_route = "jax.jacfwd through a lax.fori_loop of jax_step (x64)"
    law = LAW
    law_maps_onto_ours = True
    batch_route = "jax.vmap over rows"

    def __init__(self) -> None:
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        self._jnp = jnp
        self.version = f"jax {jax.__version__}"

        def run(x: Any, p: Any, n: Any) -> Any:
            return jax.lax.fori_loop(0, n, lambda i, x: jax_step(x, p[0], p[1], p[2], p[3], p[4]), x)

        self._run = jax.jit(run)
        self._jac = jax.jit(jax.jacfwd(run))
        self._run_rows = jax.jit(jax.vmap(run, in_axes=(0, 0, None)))
        self._jac_rows = jax.jit(jax.vmap(jax.jacfwd(run), in_axes=(0, 0, None)))

    def _args(self, drop: Any, k: float, dt: float, x0: Any) -> Tuple[Any, Any, int]:
        c = 2.0 * drop.zeta * np.sqrt(k * drop.mass)
        p = self._jnp.asarray([dt, k, c, drop.mass, drop.gravity], dtype=float)
        return self._jnp.asarray(x0, dtype=float), p, steps(drop, dt)

    def state(self, drop: Any, k: float, dt: float, x0: Any) -> np.ndarray:
        return np.asarray(self._run(*self._args(drop, k, dt, x0)))

    def jacobian(self, drop: Any, k: float, dt: float, x0: Any) -> Tuple[np.ndarray, np.ndarray]:
        args = self._args(drop, k, dt, x0)
        return np.asarray(self._run(*args)), np.asarray(self._jac(*args))

    def _rows(self, drop: Any, ks: Sequence[float], dt: float, X: Any) -> Tuple[Any, Any, int]:
        k, x = rows(ks, X)
        c = 2.0 * drop.zeta * np.sqrt(k * drop.mass)
        p = np.stack([np.full(k.size, dt), k, c, np.full(k.size, drop.mass), np.full(k.size, drop.gravity)], axis=1)
        return self._jnp.asarray(x), self._jnp.asarray(p), steps(drop, dt)

    def states(self, drop: Any, ks: Sequence[float], dt: float, X: Any) -> np.ndarray:
        """(m, 2): every row in one ``jax.vmap`` of the step loop."""
        return np.asarray(self._run_rows(*self._rows(drop, ks, dt, X)))

    def jacobians(self, drop: Any, ks: Sequence[float], dt: float, X: Any) -> Tuple[np.ndarray, np.ndarray]:
        args = self._rows(drop, ks, dt, X)
        return np.asarray(self._run_rows(*args)), np.asarray(self._jac_rows(*args))


class Torch(AdapterBase):
    """PyTorch (float64): the same step in a Python loop, as a user writes it; gradient by
    autograd (reverse mode, ``torch.autograd.grad`` of y(T) and v(T) through the loop)."""

    name = "torch"
    gradient_route = "torch.autograd.grad (reverse mode) through a Python loop of the step (float64)"
    law = LAW
    law_maps_onto_ours = True

    def __init__(self) -> None:
        import torch

        self._torch = torch
        self.version = f"torch {torch.__version__}"

    def _run(self, drop: Any, k: float, dt: float) -> Any:
        torch = self._torch
        c = 2.0 * drop.zeta * float(np.sqrt(k * drop.mass))
        m, g, n = float(drop.mass), float(drop.gravity), steps(drop, dt)

        def run(x: Any) -> Any:
            y, v = x[0], x[1]
            for _ in range(n):
                f = torch.where(y < 0.0, torch.clamp(-k * y - c * v, min=0.0), torch.zeros_like(y))
                v = v + dt * (f / m - g)
                y = y + dt * v
            return torch.stack([y, v])

        return run

    def state(self, drop: Any, k: float, dt: float, x0: Any) -> np.ndarray:
        torch = self._torch
        with torch.no_grad():
            return self._run(drop, k, dt)(torch.tensor(np.asarray(x0, dtype=float))).numpy()

    def jacobian(self, drop: Any, k: float, dt: float, x0: Any) -> Tuple[np.ndarray, np.ndarray]:
        torch = self._torch
        x = torch.tensor(np.asarray(x0, dtype=float), requires_grad=True)
        out = self._run(drop, k, dt)(x)
        rows = [torch.autograd.grad(out[i], x, retain_graph=i == 0)[0] for i in range(2)]
        return out.detach().numpy(), torch.stack(rows).numpy()
