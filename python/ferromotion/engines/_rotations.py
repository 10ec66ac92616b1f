"""Unit quaternions (w, x, y, z) and the charts between a quaternion's perturbation and the
tumbling cube's tangent coordinates (a world-frame rotation δ left-multiplied: R' = Exp(δ)·R), for
the engines that hold a body's orientation as a quaternion (Newton, Drake: ``_cube_newton``,
``_cube_drake``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def qmul(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product of quaternions (w, x, y, z)."""
    return np.array([p[0] * q[0] - p[1:] @ q[1:], *(p[0] * q[1:] + q[0] * p[1:] + np.cross(p[1:], q[1:]))])


def quat_of(theta: Any) -> np.ndarray:
    """The unit quaternion (w, x, y, z) of the rotation vector θ."""
    theta = np.asarray(theta, dtype=float)
    angle = float(np.linalg.norm(theta))
    if angle == 0.0:
        return np.array([1.0, 0.0, 0.0, 0.0])
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * theta / angle])


def theta_of(q: Any) -> np.ndarray:
    """The rotation vector of the quaternion q (w, x, y, z), normalised first."""
    q = np.asarray(q, dtype=float)
    q = q / np.linalg.norm(q) * (1.0 if q[0] >= 0 else -1.0)
    s = float(np.linalg.norm(q[1:]))
    if s == 0.0:
        return np.zeros(3)
    return 2.0 * math.atan2(s, q[0]) * q[1:] / s


def tangent_in(q: np.ndarray) -> np.ndarray:
    """(4, 3): d quaternion (w, x, y, z) / d δ at δ = 0 for q' = exp(δ/2) ⊗ q (a world-frame turn)."""
    return np.stack([qmul(np.concatenate([[0.0], 0.5 * e]), q) for e in np.eye(3)], axis=1)


def tangent_out(q: np.ndarray) -> np.ndarray:
    """(3, 4): d δ / d quaternion at q, δ = 2·vec(q' ⊗ q̄) (the world-frame turn from q to q')."""
    conj = q * np.array([1.0, -1.0, -1.0, -1.0])
    return np.stack([2.0 * qmul(e, conj)[1:] for e in np.eye(4)], axis=1)
