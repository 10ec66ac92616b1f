"""The hybrid systems the core defines (``crates/ferromotion-core/src/systems/``), one class per
system, made from the core's own registry: state names and units, parameters with their units,
ranges and defaults, and the exact answer where the system has one. Nothing here restates a
definition: a system added to the core's registry appears here by itself.

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

from . import _core
from ._common import ArrayLike, Json, float_array

__all__: List[str] = ["System", "catalogue"]


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
    return dataclasses.make_dataclass(spec["class"], fields, bases=(System,), namespace=namespace, frozen=True)


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
