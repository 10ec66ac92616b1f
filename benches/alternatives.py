"""The fixed route as a user would write it without Ferromotion: JAX, NumPy, plain Python.

The same discrete map as the core's ``fixed`` route (docs/model.md §3, crates/ferromotion-core/src/
integrate/fixed.rs): semi-implicit Euler on the push-only penalty drop,

    f = -k·y - c·v,  c = 2·zeta·sqrt(k·m)
    a = f/m - g  if y < 0 and f > 0,  else  -g
    v += dt·a;  y += dt·v

and its Jacobian J = dx(T)/dx(0) with the contact branch taken as given. JAX gets J from
``jacfwd`` (forward mode through ``lax.fori_loop``, float64), so it is an independent check of
the core's hand-written tangent (tests/bench_env/test_jax_parity.py). NumPy and plain Python
carry the tangent by hand, ``J <- A·J`` with the step's Jacobian
``A = [[1 + dt²·a_y, dt·(1 + dt·a_v)], [dt·a_y, 1 + dt·a_v]]``, in the core's order of
operations, so they give the core's bits.

Used by benches/bench.py (``make bench``) in .venv-bench, the only environment with JAX.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any, Tuple

import numpy as np


@dataclass(frozen=True)
class DropParams:
    """The drop (SI units; docs/model.md §1 defaults)."""

    height: float = 1.0
    velocity: float = 0.0
    t_final: float = 0.8
    gravity: float = 9.81
    mass: float = 1.0
    zeta: float = 0.1606

    def steps(self, dt: float) -> int:
        """N = round(T/dt), as the core counts them."""
        return int(round(self.t_final / dt))


# --------------------------------------------------------------------------------------
# JAX: jit(jacfwd) of the map, vmap over k for sweeps.


def jax_module() -> Any:
    """Import JAX with float64 on (the core computes in f64)."""
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax


def jax_fixed(drop: DropParams, dt: float) -> Any:
    """``f(k) -> (J (2, 2), x(T) (2,))``: jit(jacfwd) of the rollout at one stiffness k."""
    jax = jax_module()
    import jax.numpy as jnp
    from jax import lax

    n = drop.steps(dt)
    g, m, zeta = drop.gravity, drop.mass, drop.zeta

    def rollout(x0: Any, k: Any) -> Tuple[Any, Any]:
        c = 2.0 * zeta * jnp.sqrt(k * m)
        inv_m = 1.0 / m

        def step(_: Any, x: Any) -> Any:
            y, v = x[0], x[1]
            f = -k * y - c * v
            acc = jnp.where((y < 0.0) & (f > 0.0), f * inv_m - g, -g)
            v = v + dt * acc
            y = y + dt * v
            return jnp.stack([y, v])

        x = lax.fori_loop(0, n, step, x0)
        return x, x

    jac = jax.jacfwd(rollout, argnums=0, has_aux=True)
    x0 = jnp.array([drop.height, drop.velocity])
    return jax.jit(partial(jac, x0))


def jax_sweep(drop: DropParams, dt: float) -> Any:
    """``f(ks) -> (J (n, 2, 2), x(T) (n, 2))``: jit(vmap(jacfwd)) of the rollout over k."""
    jax = jax_module()
    one = jax_fixed(drop, dt)
    return jax.jit(jax.vmap(one))


# --------------------------------------------------------------------------------------
# NumPy: the loop in Python, every step one array operation over all k.


def numpy_sweep(drop: DropParams, dt: float, ks: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(J (n, 2, 2), x(T) (n, 2)) for every k at once."""
    k = np.asarray(ks, dtype=np.float64)
    g, m = drop.gravity, drop.mass
    c = 2.0 * drop.zeta * np.sqrt(k * m)
    inv_m = 1.0 / m
    y = np.full_like(k, drop.height)
    v = np.full_like(k, drop.velocity)
    j00, j01, j10, j11 = np.ones_like(k), np.zeros_like(k), np.zeros_like(k), np.ones_like(k)
    a_y_contact, a_v_contact = -k * inv_m, -c * inv_m
    for _ in range(drop.steps(dt)):
        f = -k * y - c * v
        contact = (y < 0.0) & (f > 0.0)
        acc = np.where(contact, f * inv_m - g, -g)
        a_y = np.where(contact, a_y_contact, 0.0)
        a_v = np.where(contact, a_v_contact, 0.0)
        v = v + dt * acc
        y = y + dt * v
        d10 = j10 + dt * (a_y * j00 + a_v * j10)
        d11 = j11 + dt * (a_y * j01 + a_v * j11)
        j00 = j00 + dt * d10
        j01 = j01 + dt * d11
        j10, j11 = d10, d11
    jac = np.stack([np.stack([j00, j01], -1), np.stack([j10, j11], -1)], -2)
    return jac, np.stack([y, v], -1)


# --------------------------------------------------------------------------------------
# Plain Python: one k, scalars.


def python_fixed(drop: DropParams, dt: float, k: float) -> Tuple[list, list]:
    """(J row-major [J00, J01, J10, J11], x(T) [y, v]) at one k."""
    g, m = drop.gravity, drop.mass
    c = 2.0 * drop.zeta * math.sqrt(k * m)
    inv_m = 1.0 / m
    y, v = drop.height, drop.velocity
    j00, j01, j10, j11 = 1.0, 0.0, 0.0, 1.0
    for _ in range(drop.steps(dt)):
        f = -k * y - c * v
        if y < 0.0 and f > 0.0:
            acc, a_y, a_v = f * inv_m - g, -k * inv_m, -c * inv_m
        else:
            acc, a_y, a_v = -g, 0.0, 0.0
        v += dt * acc
        y += dt * v
        d10 = j10 + dt * (a_y * j00 + a_v * j10)
        d11 = j11 + dt * (a_y * j01 + a_v * j11)
        j00 += dt * d10
        j01 += dt * d11
        j10, j11 = d10, d11
    return [j00, j01, j10, j11], [y, v]
