"""The engines' contact laws as ferromotion.engines documents them, written out in plain numpy.

Each rollout is independent of the engine and of ferromotion's adapters: a point (the ball's
contact point) above a plane through the origin with unit normal n = (-sin a, cos a) in (x, z),
gravity -g along z, frictionless, stepped as the engine steps (semi-implicit Euler: the new
velocity, then the position with it). d = n.p is the signed gap, v_n = n.v its rate. Only the
normal force differs between engines:

* ``mujoco``: explicit, ``F = max(0, -k*d - c*v_n + D*m*g*cos a)`` for d < 0 (MuJoCo's soft
  constraint with constant impedance D adds the weight's normal part);
* ``newton``: explicit, ``F = -k*d - c*min(v_n, 0)`` for d <= 0 (damped approach, undamped release);
* ``tamsi``: implicit, ``F = k*max(0, -(d + dt*v_n+))*max(0, 1 - d_hc*v_n+)`` (Hunt–Crossley);
* ``sap``: implicit, ``F = max(0, -k*(d + dt*v_n+) - c*v_n+)`` (linear, our law at the step's end);
  for both Drake laws a contact exists only when the step starts penetrating (d < 0): Drake's
  point-contact query reports penetrating pairs only.
"""

from __future__ import annotations

import math
from typing import Dict

import numpy as np

IMPEDANCE = 0.9999  # MuJoCo's constant impedance, as the adapter sets it (solimp = (D, D, ...)).


def _implicit_vn(vn_free: float, d: float, dt: float, m: float, force) -> float:
    """Solve s = vn_free + dt*force(d, s)/m for the new normal velocity s (force decreasing in s)."""
    lo, hi = vn_free, vn_free + dt * force(d, vn_free) / m
    if hi == lo:
        return lo
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid - vn_free - dt * force(d, mid) / m > 0.0:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-15 * max(1.0, abs(hi)):
            break
    return 0.5 * (lo + hi)


def rollout(law: str, x0, t_final: float, dt: float, k: float, zeta: float, m: float, g: float,
            angle: float = 0.0, hunt_crossley: float = 0.0) -> np.ndarray:
    """x(T) = (p_x, p_z, v_x, v_z) under ``law`` from x0 = (p_x, p_z, v_x, v_z)."""
    nx, nz = -math.sin(angle), math.cos(angle)
    c = 2.0 * zeta * math.sqrt(k * m)
    px, pz, vx, vz = (float(v) for v in x0)
    for _ in range(round(t_final / dt)):
        d = nx * px + nz * pz
        vn = nx * vx + nz * vz
        if law == "mujoco":
            f = max(0.0, -k * d - c * vn + IMPEDANCE * m * g * nz) if d < 0.0 else 0.0
            vn_new = vn - g * nz * dt + dt * f / m
        elif law == "newton":
            f = (-k * d - c * min(vn, 0.0)) if d <= 0.0 else 0.0
            vn_new = vn - g * nz * dt + dt * f / m
        elif d >= 0.0:  # Drake: no contact pair unless the step starts penetrating
            vn_new = vn - g * nz * dt
        elif law == "tamsi":
            vn_new = _implicit_vn(vn - g * nz * dt, d, dt, m, lambda d, s: k * max(0.0, -(d + dt * s))
                                  * max(0.0, 1.0 - hunt_crossley * s))
        elif law == "sap":
            vn_new = _implicit_vn(vn - g * nz * dt, d, dt, m, lambda d, s: max(0.0, -k * (d + dt * s) - c * s))
        else:
            raise ValueError(law)
        # Tangential velocity: gravity's tangential part only (frictionless).
        tx, tz = nz, -nx
        vt = tx * vx + tz * vz - g * tz * dt
        vx, vz = vt * tx + vn_new * nx, vt * tz + vn_new * nz
        px, pz = px + dt * vx, pz + dt * vz
    return np.array([px, pz, vx, vz])


def drop_rollout(law: str, drop, k: float, dt: float, **kw: Dict) -> np.ndarray:
    """(y, v) of the drop under ``law``."""
    x = rollout(law, [0.0, drop.height, 0.0, drop.velocity], drop.t_final, dt, k, drop.zeta, drop.mass,
                drop.gravity, **kw)
    return x[[1, 3]]
