"""The hybrid systems the core defines (``crates/ferromotion-core/src/systems/``), one class per
system, made from the core's own registry: state names and units, parameters with their units,
ranges and defaults, and the exact answer where the system has one. Nothing here restates a
definition: a system added to the core's registry appears here by itself.

:class:`TumblingCube` (core: ``systems/tumbling_cube.rs``) is the 3-D one: a cube tumbling onto the
frictionless plane z = 0, corners striking one at a time; x(T) and its Jacobian in tangent
coordinates, exact.

>>> import ferromotion as fm
>>> g = fm.systems.VGroove(angle=1.5707963267948966, restitution=0.5)
>>> g.state_names, g.units
(('p_x', 'p_y', 'v_x', 'v_y'), ('m', 'm', 'm/s', 'm/s'))
>>> fm.systems.Cylinder(radius=-0.5, restitution=0.6)
Traceback (most recent call last):
    ...
ferromotion.InvalidParameter: invalid parameter `radius` = -0.5: must be finite and in > 0 (m)
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _core
from ._common import ArrayLike, Json, float_array

__all__: List[str] = ["System", "catalogue", "TumblingCube", "CubeSolution", "CUBE_STATE"]


class System(Json):
    """Base of every shipped system: ``kind`` (the core's name), ``state_names``, ``units``,
    ``to_dict()`` (the document the core reads) and :meth:`exact`."""

    __slots__ = ()
    kind: str = ""
    state_names: Tuple[str, ...] = ()
    units: Tuple[str, ...] = ()
    summary: str = ""
    has_exact: bool = False

    def to_dict(self) -> Dict[str, Any]:
        """The parameters and the system's kind."""
        out: Dict[str, Any] = {"system": self.kind}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            out[f.name] = list(v) if isinstance(v, tuple) else v
        return out

    def exact(self, x0: ArrayLike, t0: float, t1: float, *, mode: int = 0) -> Any:
        """The exact answer from x0 over [t0, t1] (closed-form flights composed through the
        events, simultaneous events in every order): a :class:`HybridSolution`, or the core's
        refusal (``SetValued`` when the orders give different states). Raises ``TypeError``
        for a system without one."""
        from .hybrid import _solution
        d = _core.system_exact(self.to_dict(), float_array(x0, "x0"), t0, t1, mode=mode)
        if d is None:
            raise TypeError(f"{type(self).__name__} has no exact answer")
        return _solution(d)


class _RimlessWheelMethods:
    """The rimless wheel's closed form and its measured return-map multiplier (core:
    ``systems/wheel/``; ``docs/systems.md``, "The rimless wheel's multiplier").

    >>> import ferromotion as fm
    >>> w = fm.systems.RimlessWheel()
    >>> round(w.multiplier(), 6)
    0.681179
    >>> r = w.measured_multiplier([10, 50])
    >>> abs(r[1]["chained"]["per_step"] - w.multiplier()) < 1e-8
    True
    """

    __slots__ = ()

    def _wheel(self) -> Dict[str, Any]:
        d: Dict[str, Any] = self.to_dict()  # type: ignore[attr-defined]
        d.pop("system")
        return d

    def fixed_point(self) -> np.ndarray:
        """The periodic gait's post-impact state (theta, omega) = (-half_angle, omega*)."""
        return np.asarray(_core.rimless_wheel_closed_form(self._wheel())["fixed_point"], dtype=float)

    def multiplier(self) -> float:
        """The return map's Floquet multiplier in closed form, cos²(2·half_angle)."""
        return float(_core.rimless_wheel_closed_form(self._wheel())["multiplier"])

    def measured_multiplier(self, horizons: Any = (10, 20, 50), *, direct: bool = False,
                            options: Any = None) -> List[Dict[str, Any]]:
        """The N-step return map's derivative dω_N/dω_0 on the section theta = 0, from the fixed
        point, at each horizon N (impacts, 1 to 2000): one dict per N with ``horizon``,
        ``closed_form`` (c^(2N)), ``chained`` (one ``hybrid_jacobian`` per step, multiplied:
        right at every N) and ``direct`` (one ``hybrid_jacobian`` over N impacts, when
        ``direct=True``: loses the sign once c^(2N) falls under J's error), each a dict of
        ``derivative``, ``per_step`` (its signed N-th root) and ``closed_form``. ``options``: the
        core's HybridOptions."""
        hs = [int(n) for n in np.atleast_1d(np.asarray(horizons))]
        return list(_core.rimless_wheel_multiplier(self._wheel(), hs, direct=direct, options=options))


#: Methods a system's class gains beside the generic ones, by kind.
_METHODS: Dict[str, type] = {"rimless_wheel": _RimlessWheelMethods}


def _post_init(self: Any) -> None:
    checked = _core.system_check(self.to_dict())
    for k, v in checked.items():
        object.__setattr__(self, k, tuple(v) if isinstance(v, list) else v)


def _make(spec: Dict[str, Any]) -> type:
    fields = []
    lines = []
    for p in spec["params"]:
        default = p["default"]
        if default is None:
            field = dataclasses.field()
        elif p["len"] == 1:
            field = dataclasses.field(default=float(default[0]))
        else:
            field = dataclasses.field(default=tuple(float(v) for v in default))
        typ = "float" if p["len"] == 1 else "tuple of float"
        fields.append((p["name"], Any, field))
        shown = "required" if default is None else f"default {default[0] if p['len'] == 1 else tuple(default)}"
        lines.append(f"    {p['name']} : {typ}\n        {p['doc']}, {p['unit']}, in {p['range']} ({shown}).")
    doc = (f"{spec['summary']}.\n\n    x = ({', '.join(spec['state_names'])}) in "
           f"({', '.join(spec['units'])}).\n\n    Parameters\n    ----------\n" + "\n".join(lines) + "\n")
    namespace = {"kind": spec["kind"], "state_names": tuple(spec["state_names"]), "units": tuple(spec["units"]),
                 "summary": spec["summary"], "has_exact": spec["has_exact"], "__post_init__": _post_init,
                 "__doc__": doc, "__module__": __name__}
    # Required parameters first, as Python signatures need (the core's order otherwise).
    fields.sort(key=lambda f: f[2].default is not dataclasses.MISSING)
    bases = (_METHODS[spec["kind"]], System) if spec["kind"] in _METHODS else (System,)
    return dataclasses.make_dataclass(spec["class"], fields, bases=bases, namespace=namespace, frozen=True)


_CATALOGUE: List[Dict[str, Any]] = _core.systems_catalogue()
_CLASSES: Dict[str, type] = {}
for _spec in _CATALOGUE:
    _cls = _make(_spec)
    _CLASSES[_spec["kind"]] = _cls
    globals()[_spec["class"]] = _cls
    __all__.append(_spec["class"])


def catalogue() -> List[Dict[str, Any]]:
    """Every shipped system's definition, as the core gives it (kind, class, summary, state
    names and units, parameters with unit, range and default, whether it has an exact answer)."""
    return [dict(s) for s in _CATALOGUE]


def by_kind(kind: str) -> Optional[type]:
    """The class of the system the core calls ``kind`` (``v_groove``), or None."""
    return _CLASSES.get(kind)


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
