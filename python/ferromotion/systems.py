"""Systems with exact answers (core: ``systems/``).

:class:`TumblingCube`: a cube tumbling onto the frictionless plane z = 0, corners striking one
at a time; x(T) and its Jacobian in tangent coordinates, exact.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Tuple

import numpy as np

from . import _core
from ._common import Json, float_array

#: The tumbling cube's 12 state coordinates, in order, with their units.
CUBE_STATE: Tuple[Tuple[str, str], ...] = (
    ("c_x", "m"), ("c_y", "m"), ("c_z", "m"),
    ("theta_x", "rad"), ("theta_y", "rad"), ("theta_z", "rad"),
    ("v_x", "m/s"), ("v_y", "m/s"), ("v_z", "m/s"),
    ("omega_x", "rad/s"), ("omega_y", "rad/s"), ("omega_z", "rad/s"),
)


@dataclasses.dataclass(frozen=True)
class CubeSolution:
    """x(T), J = dx(T)/dx(0) in tangent coordinates, and the corner strikes.

    ``state`` is (c, theta, v, omega) (:data:`CUBE_STATE`); theta is the world-frame rotation
    vector of the orientation (R = Exp(theta)). ``jacobian`` rows and columns 3..5 are in
    tangent coordinates: an orientation perturbation is a world-frame rotation vector delta,
    left-multiplied (R' = Exp(delta) R), at t = 0 and at T. ``impacts``: one dict per strike
    (``t`` in s, ``corner`` 0..7, ``normal_speed`` in m/s, ``impulse`` in N s).
    """

    state: np.ndarray
    jacobian: np.ndarray
    impacts: List[Dict[str, Any]]

    def jvp(self, d: Any) -> np.ndarray:
        """The directional derivative J d for a tangent perturbation ``d`` (12,)."""
        return self.jacobian @ float_array(d, "d").reshape(12)


@dataclasses.dataclass(frozen=True)
class TumblingCube(Json):
    """A cube of half side ``half_side`` (m) and ``mass`` (kg) with isotropic inertia
    (2/3) m a^2, over the frictionless plane z = 0, gravity along -z. In flight the world-frame
    angular velocity is constant; a corner reaching the plane strikes with Newton restitution
    on the contact point's normal velocity (impulse through the effective mass
    1/m + |r x n|^2 / I).

    Examples
    --------
    >>> import ferromotion as fm
    >>> cube = fm.systems.TumblingCube(half_side=0.1, mass=1.0, restitution=0.5)
    >>> s = cube.solve([0, 0, 0.5, 0.5, 0.3, 0.2, 0.2, 0, 0, 2, 1, -1], t_final=0.45)
    >>> len(s.impacts), s.jacobian.shape
    (2, (12, 12))
    """

    half_side: float = 0.1
    mass: float = 1.0
    restitution: float = 0.5
    gravity: float = 9.81

    def to_dict(self) -> Dict[str, Any]:
        """The parameters, as the core reads them."""
        return dataclasses.asdict(self)

    def solve(self, x0: Any, t_final: float) -> CubeSolution:
        """From ``x0`` = (c, theta, v, omega) (12 numbers) to ``t_final`` (s)."""
        out = _core.tumbling_cube(self.to_dict(), x0, float(t_final))
        return CubeSolution(state=out["state"], jacobian=out["jacobian"], impacts=list(out["impacts"]))
