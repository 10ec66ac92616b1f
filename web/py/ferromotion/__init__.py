"""Ferromotion in the browser: the native package's API for the drop, run by pyodide.

The lab's "Script it in Python" panel loads this package into pyodide. Every number is
computed by the lab's own WebAssembly core (``web/pkg``, the module ``web/js/sim.js``
loads); this file only converts arguments and answers and presents them, as the native
package (``python/ferromotion``) does over its PyO3 core. Same function names, arguments,
defaults (read from the core) and result fields as the native package, for: ``Drop``,
``exact``, ``fixed``, ``tolerance``, ``flow``, ``corrected``, ``blame``,
``divergence_exponent``, ``time_of_impact_term`` and ``sweep``.

Arrays: numpy cannot be loaded offline in pyodide (its wheel lives on pyodide's CDN), so
arrays arrive as Python lists: ``state`` is ``[y, v]``, ``jacobian`` is ``[[a, b], [c, d]]``
(write ``r.jacobian[1][0]``; ``r.jacobian[1, 0]`` needs numpy), sweep columns are lists
with one entry per k. When numpy does import (a page that loaded it), they are numpy arrays,
as natively.

Errors are the native ``FerroError`` subclasses with the core's messages; their names come
from the native stub ``python/ferromotion/_core.pyi`` (``_errors.py``, written at build time
by ``scripts/pyodide.sh``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Dict, List, Optional, Union

from ._errors import *  # noqa: F401,F403  (the FerroError tree, generated from the native stub)
from . import _errors

try:  # pragma: no cover - depends on the page
    import numpy as _np
except ImportError:  # the usual case offline
    _np = None

from _ferromotion_wasm import call as _js_call  # registered by web/js/python.js

__version__: str = "browser"


def _raise(kind: str, message: str) -> None:
    """The native class for the core's error kind (``Scenario`` is ``ScenarioError``)."""
    cls = getattr(_errors, kind, None) or getattr(_errors, kind + "Error", None) or _errors.FerroError
    raise cls(message)


def _py(value: Any) -> Any:
    """A JS answer as Python data (dicts, lists, numbers, None): JS null arrives as
    pyodide's ``jsnull`` and becomes None, like undefined."""
    return _nulls(value.to_py() if hasattr(value, "to_py") else value)


def _nulls(v: Any) -> Any:
    if isinstance(v, memoryview):  # a typed array (Float64Array) arrives as a memoryview
        return v.tolist()
    if isinstance(v, dict):
        return {k: _nulls(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_nulls(x) for x in v]
    return None if type(v).__name__ == "JsNull" else v


def _call(name: str, *args: Any) -> Any:
    """Call the wasm export ``name``; the core's refusal becomes its FerroError subclass."""
    from pyodide.ffi import to_js
    from js import Object

    js_args = to_js(list(args), dict_converter=Object.fromEntries)
    answer = _py(_js_call(name, js_args))
    if not answer["ok"]:
        _raise(answer["kind"], answer["message"])
    return answer["value"]


def _array(values: Any) -> Any:
    """A list (nested lists stay nested) or, when numpy imported, a read-only numpy array."""
    if _np is None:
        return values
    a = _np.asarray(values)
    a.setflags(write=False)
    return a


def _floats(values: Any) -> Any:
    """Every number as a float (a JS integer-valued number arrives as an int)."""
    if isinstance(values, list):
        return [_floats(v) for v in values]
    return None if values is None else float(values)


def _matrix(flat: List[float]) -> List[List[float]]:
    """A row-major flat 2x2 as nested rows."""
    return [[float(flat[0]), float(flat[1])], [float(flat[2]), float(flat[3])]]


def _fmt_matrix(j: Any) -> str:
    return "[[" + ", ".join(f"{x:.4g}" for x in j[0]) + "], [" + ", ".join(f"{x:.4g}" for x in j[1]) + "]]"


def _native_types(d: Dict[str, Any]) -> Dict[str, Any]:
    """The core's defaults with Python's types: a JS number that happens to be whole (1.0)
    arrives as an int; counts stay ints, everything else is a float as natively."""
    counts = ("max_steps", "max_events", "random_directions", "seed")
    out: Dict[str, Any] = {}
    for key, v in d.items():
        if isinstance(v, dict):
            out[key] = _native_types(v)
        elif isinstance(v, list):
            out[key] = _floats(v)
        elif isinstance(v, (bool, str)) or v is None or key in counts:
            out[key] = v
        else:
            out[key] = float(v)
    return out


_DEFAULTS: Dict[str, Any] = _native_types(_call("scriptDefaults"))
_DROP = _DEFAULTS["drop"]
_TOL = _DEFAULTS["tolerance"]
_DT: float = _DEFAULTS["dt"]

for _name in _errors.__all__:  # the classes print as ferromotion.NoImpact, as natively
    getattr(_errors, _name).__module__ = "ferromotion"


class _Json:
    def to_dict(self) -> Dict[str, Any]:  # pragma: no cover
        raise NotImplementedError

    def to_json(self, indent: Optional[int] = None) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)


@dataclasses.dataclass(frozen=True)
class Drop(_Json):
    """A point mass dropped onto flat ground at y = 0 (SI units), validated by the core."""

    height: float = _DROP["height"]
    velocity: float = _DROP["velocity"]
    t_final: float = _DROP["t_final"]
    zeta: float = _DROP["zeta"]
    gravity: float = _DROP["gravity"]
    mass: float = _DROP["mass"]

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, float(getattr(self, f.name)))
        _call("validateDrop", self.to_dict())

    def impact_speed(self) -> float:
        """Speed of the first impact, m/s: sqrt(v0^2 + 2 g h)."""
        return float(_call("dropImpactSpeed", self.to_dict()))

    def first_impact_time(self) -> float:
        """Time of the first ground contact in free flight, s."""
        return float(_call("dropFirstImpactTime", self.to_dict()))

    def to_dict(self) -> Dict[str, float]:
        """The six parameters as a dict."""
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Route(_Json):
    """One route's answer: x(T) as ``[y, v]``, J as ``[[dy/dy0, dy/dv0], [dv/dy0, dv/dv0]]``."""

    route: str
    state: Any
    jacobian: Any
    steps: int
    rejected_steps: int
    force_evals: int
    state_force_evals: int
    rollouts: int
    probe_gap: Optional[float]
    probe_dependent: bool

    step_stable: Optional[bool] = None
    omega_dt: Optional[float] = None

    @classmethod
    def _from_core(cls, route: str, d: Dict[str, Any]) -> "Route":
        stability = d.get("step_stability") or {}
        return cls(
            route=route,
            state=_array(_floats(d["state"])),
            jacobian=_array(_matrix(d["jacobian"])),
            steps=int(d["steps"]),
            rejected_steps=int(d["rejected_steps"]),
            force_evals=int(d["force_evals"]),
            state_force_evals=int(d["state_force_evals"]),
            rollouts=int(d["rollouts"]),
            probe_gap=None if d["probe_gap"] is None else float(d["probe_gap"]),
            probe_dependent=bool(d["probe_dependent"]),
            step_stable=None if stability.get("stable") is None else bool(stability["stable"]),
            omega_dt=None if stability.get("omega_dt") is None else float(stability["omega_dt"]),
        )

    @property
    def dv_dy0(self) -> float:
        """dv(T)/dy0, 1/s: ``jacobian[1][0]`` as a plain float."""
        return float(self.jacobian[1][0])

    def __repr__(self) -> str:
        y, v = self.state
        text = (
            f"Route({self.route!r}: y = {y:.6g} m, v = {v:.6g} m/s, J = {_fmt_matrix(self.jacobian)}, "
            f"steps={self.steps}, force_evals={self.force_evals}, rollouts={self.rollouts}"
        )
        if self.probe_gap is not None:
            text += f", probe_gap={self.probe_gap:.3g}"
            if self.probe_dependent:
                text += " PROBE-DEPENDENT"
        if self.step_stable is False:
            text += f", UNSTABLE STEP: omega*dt = {self.omega_dt:.3g} is beyond semi-implicit Euler's limit"
        return text + ")"

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types (lists for the arrays)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["state"] = list(_floats(list(self.state)))
        d["jacobian"] = [list(_floats(list(row))) for row in self.jacobian]
        return d


@dataclasses.dataclass(frozen=True, repr=False)
class Fit(_Json):
    """A least-squares line through (log10 x, log10 y): y ~ x**slope."""

    slope: float
    intercept: float
    r2: float
    points: int

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)

    def __repr__(self) -> str:
        return f"Fit(slope = {self.slope:.4g}, R^2 = {self.r2:.4g}, {self.points} points)"


def _fit(d: Dict[str, Any]) -> Fit:
    return Fit(slope=float(d["slope"]), intercept=float(d["intercept"]), r2=float(d["r2"]), points=int(d["points"]))


@dataclasses.dataclass(frozen=True, repr=False)
class Blame(_Json):
    """The blame split of the fixed route's Jacobian error (absolute, not normalised)."""

    integrator_share: float
    contact_share: float
    ratio: float
    noise_floor: float
    integrator_below_floor: bool
    contact_below_floor: bool

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)

    def __repr__(self) -> str:
        def share(value: float, below: bool) -> str:
            return "< floor" if below else f"{value:.4g}"

        return (f"Blame(integrator share {share(self.integrator_share, self.integrator_below_floor)}, "
                f"contact share {share(self.contact_share, self.contact_below_floor)}, "
                f"ratio {self.ratio:.4g}, noise floor {self.noise_floor:.3g})")


def _blame(d: Dict[str, Any]) -> Blame:
    return Blame(
        integrator_share=float(d["integrator_share"]), contact_share=float(d["contact_share"]),
        ratio=float(d["ratio"]), noise_floor=float(d["noise_floor"]),
        integrator_below_floor=bool(d["integrator_below_floor"]), contact_below_floor=bool(d["contact_below_floor"]),
    )


# ---------------------------------------------------------------------------------------
# Routes (same signatures as the native package)


def exact(drop: Drop, *, restitution: Optional[float] = None,
          graze_speed: float = _DEFAULTS["graze_speed"]) -> Route:
    """The rigid reference: flight maps composed with the saltation matrices of the impacts."""
    return Route._from_core("exact", _call("routeExact", drop.to_dict(), restitution, float(graze_speed)))


def fixed(drop: Drop, k: float, dt: float = _DT, *, max_steps: int = _DEFAULTS["max_steps"]) -> Route:
    """Semi-implicit Euler on the push-only penalty law, Jacobian by forward-mode tangent."""
    return Route._from_core("fixed", _call("routeFixed", drop.to_dict(), float(k), float(dt), max_steps))


def corrected(drop: Drop, k: float, dt: float = _DT, *, locate: bool = _DEFAULTS["locate"],
              max_steps: int = _DEFAULTS["max_steps"]) -> Route:
    """The fixed step with the missing event term restored, at the fixed route's cost."""
    return Route._from_core("corrected", _call("routeCorrected", drop.to_dict(), float(k), float(dt),
                                               bool(locate), max_steps))


def flow(drop: Drop, k: float, *, root_rtol: float = _DEFAULTS["root_rtol"],
         max_events: int = _DEFAULTS["max_events"]) -> Route:
    """The exact derivative of the continuous penalty ODE (closed form per phase)."""
    return Route._from_core("flow", _call("routeFlow", drop.to_dict(), float(k), float(root_rtol), max_events))


def tolerance(drop: Drop, k: float, *, rtol: float = _TOL["rtol"], atol: Optional[float] = _TOL["atol"],
              events: bool = _TOL["events"], eps: float = _TOL["eps"],
              max_steps: int = _TOL["max_steps"], jacobian: str = _TOL["jacobian"],
              min_step: float = _TOL["min_step"]) -> Route:
    """Dormand-Prince 5(4) with error control; J by central differences of 8 rollouts
    (``jacobian="richardson"``) or forward sensitivities of one event-located rollout
    (``jacobian="forward"``, needs ``events=True``)."""
    return Route._from_core("tolerance", _call("routeTolerance", drop.to_dict(), float(k), float(rtol),
                                               None if atol is None else float(atol), bool(events),
                                               float(eps), max_steps, str(jacobian), float(min_step)))


def blame(drop: Drop, k: float, dt: float = _DT) -> Blame:
    """Split the fixed route's Jacobian error into integrator and contact-model shares."""
    return _blame(_call("blameSplit", drop.to_dict(), float(k), float(dt)))


def divergence_exponent(drop: Drop, dt: float = _DT) -> Fit:
    """Slope of log(gradient error) on log(k) over k = 10^4, 10^4.5, ..., 10^8 at step dt."""
    return _fit(_call("divergenceExponent", drop.to_dict(), float(dt)))


def time_of_impact_term(drop: Drop, speed: Any = None) -> Any:
    """The saltation entry (1+e) g / |v| in 1/s, with the limit restitution; a list of
    speeds gives a list."""
    if speed is None or isinstance(speed, (int, float)):
        return float(_call("dropTimeOfImpactTerm", drop.to_dict(), None if speed is None else float(speed)))
    return _array([float(_call("dropTimeOfImpactTerm", drop.to_dict(), float(v))) for v in _numbers(speed, "speed")])


def _numbers(value: Any, name: str) -> List[float]:
    """A flat list of floats from a list, tuple, range or 1-D array; InvalidParameter otherwise."""
    try:
        out = [float(v) for v in (value.tolist() if hasattr(value, "tolist") else value)]
    except (TypeError, ValueError) as e:
        raise _errors.InvalidParameter(
            f"invalid parameter `{name}`: expected an array of numbers of shape (n,): {e}") from e
    return out


# ---------------------------------------------------------------------------------------
# Sweeps

_ROUTE_COLUMNS = ("state", "jacobian", "dy", "dv", "forward_error", "forward_unit", "gradient_error", "dv_dy0",
                  "right_sign", "steps", "rejected_steps", "force_evals", "state_force_evals", "rollouts",
                  "wall_s", "probe_dependent")
_BLAME_COLUMNS = ("integrator_share", "contact_share", "ratio", "noise_floor", "integrator_below_floor",
                  "contact_below_floor")


class SweepRoute:
    """One route's readouts across a sweep, one list per readout (length n); the same
    names as the native ``SweepRoute``."""

    def __init__(self, rows: List[Dict[str, Any]]) -> None:
        e = [r["errors"] for r in rows]
        c = [r["cost"] for r in rows]
        cols: Dict[str, Any] = {
            "state": _floats([r["state"] for r in rows]),
            "jacobian": [_matrix(r["jacobian"]) for r in rows],
            "dy": _floats([x["dy"] for x in e]),
            "dv": _floats([x["dv"] for x in e]),
            "forward_error": _floats([x["forward"] for x in e]),
            "forward_unit": [x["forward_unit"] for x in e],
            "gradient_error": _floats([x["gradient"] for x in e]),
            "dv_dy0": _floats([x["dv_dy0"] for x in e]),
            "right_sign": [bool(x["right_sign"]) for x in e],
            "probe_dependent": [bool(r["probe_dependent"]) for r in rows],
            # Wall time per Jacobian, s, read from this page's performance.now() (NaN: not timed).
            "wall_s": _floats([float("nan") if r["wall_s"] is None else r["wall_s"] for r in rows]),
        }
        for name in ("steps", "rejected_steps", "force_evals", "state_force_evals", "rollouts"):
            cols[name] = [int(x[name]) for x in c]
        for name in _ROUTE_COLUMNS:
            setattr(self, name, _array(cols[name]))

    def __len__(self) -> int:
        return len(self.gradient_error)

    def __repr__(self) -> str:
        return f"SweepRoute({len(self)} stiffnesses, wrong sign at {sum(not s for s in self.right_sign)})"


class SweepBlame:
    """The blame split across a sweep, one list per field of :class:`Blame`."""

    def __init__(self, rows: List[Dict[str, Any]]) -> None:
        for name in _BLAME_COLUMNS:
            values = [r[name] for r in rows]
            setattr(self, name, _array([bool(v) for v in values] if name.endswith("floor") and "below" in name
                                       else _floats(values)))

    def __repr__(self) -> str:
        return f"SweepBlame({len(self.integrator_share)} stiffnesses)"


class Sweep(_Json):
    """Every readout of a sweep over stiffness, as lists (numpy arrays when numpy imports).
    The same attributes as the native ``Sweep``; ``plot()`` draws in the lab's panel."""

    def __init__(self, answer: Dict[str, Any], drop: Drop, rtol: Optional[float], events: bool,
                 ran: Dict[str, bool], jacobian: str = "richardson") -> None:
        self._answer = answer
        self._rtol = rtol
        self._events = events
        self._jacobian = jacobian
        self.drop = drop
        rows = answer["rows"]
        self.dt: float = float(answer["dt"])
        self.k = _array(_floats([r["k"] for r in rows]))
        ex = answer["exact"]
        self.exact = Route("exact", _array(_floats(ex["state"])), _array(_matrix(ex["jacobian"])),
                           0, 0, 0, 0, 0, None, False)
        self.fixed = SweepRoute([r["fixed"] for r in rows])
        self.tolerance: Optional[SweepRoute] = SweepRoute([r["tolerance"] for r in rows]) if ran["tolerance"] else None
        self.corrected: Optional[SweepRoute] = SweepRoute([r["corrected"] for r in rows]) if ran["corrected"] else None
        self.blame: Optional[SweepBlame] = SweepBlame([r["blame"] for r in rows]) if ran["blame"] else None
        self.tolerance_cost_ratio = (_array(_floats([r["tolerance_cost_ratio"] for r in rows]))
                                     if ran["tolerance"] else None)

    state = property(lambda self: self.fixed.state, doc="x(T) of the fixed route.")
    jacobian = property(lambda self: self.fixed.jacobian, doc="J of the fixed route.")
    dy = property(lambda self: self.fixed.dy, doc="|y - y_exact| of the fixed route, m.")
    dv = property(lambda self: self.fixed.dv, doc="|v - v_exact| of the fixed route, m/s.")
    forward_error = property(lambda self: self.fixed.forward_error, doc="The larger of dy and dv.")
    forward_unit = property(lambda self: self.fixed.forward_unit, doc='"m" or "m/s" per row.')
    gradient_error = property(lambda self: self.fixed.gradient_error,
                              doc="max_ij |J - J_exact| / max_ij |J_exact| of the fixed route.")
    dv_dy0 = property(lambda self: self.fixed.dv_dy0, doc="The fixed route's dv(T)/dy0.")
    right_sign = property(lambda self: self.fixed.right_sign, doc="dv(T)/dy0 has the exact answer's sign.")

    def __len__(self) -> int:
        return len(self.k)

    def exponent(self) -> Fit:
        """The divergence exponent fitted on the sweep's own points with k in [1e4, 1e8]."""
        if self._answer["exponent"] is None:
            err = self._answer["exponent_error"]
            _raise(err["kind"], err["message"])
        return _fit(self._answer["exponent"])

    def to_dict(self) -> Dict[str, Any]:
        """The core's serialisation (``dt``, ``exact``, ``rows``) plus the drop, the options
        and the fitted exponent (None when it cannot be fitted)."""
        a = self._answer
        return {
            "drop": self.drop.to_dict(),
            "dt": a["dt"],
            "tolerance": (None if self._rtol is None
                          else {"rtol": self._rtol, "events": self._events, "jacobian": self._jacobian}),
            "corrected": self.corrected is not None,
            "blame": self.blame is not None,
            "exact": a["exact"],
            "rows": a["rows"],
            "exponent": a["exponent"],
        }

    def plot(self, *, mark_k: Optional[float] = None, title: Optional[str] = None, width: int = 720,
             height: int = 480) -> Any:
        """Draw forward and gradient error against k, log-log, in the lab's panel with the
        lab's own plotting code (``web/js/plots.js``). ``width`` and ``height`` are taken
        for the native signature; the panel's plot fits its column."""
        from _ferromotion_wasm import plot as _js_plot
        from pyodide.ffi import to_js
        from js import Object

        wrong = [bool(not s) for s in self.right_sign]
        spec = {
            "title": title or "Forward and gradient error against stiffness",
            "k": list(_floats(list(self.k))),
            "forward": list(_floats(list(self.forward_error))),
            "gradient": list(_floats(list(self.gradient_error))),
            "wrong": wrong,
            "tolerance": None if self.tolerance is None else list(_floats(list(self.tolerance.gradient_error))),
            "corrected": None if self.corrected is None else list(_floats(list(self.corrected.gradient_error))),
            "mark_k": None if mark_k is None else float(mark_k),
        }
        _js_plot(to_js(spec, dict_converter=Object.fromEntries))
        return None

    def __repr__(self) -> str:
        n = len(self)
        if n == 0:
            return f"Sweep(no stiffnesses, dt = {self.dt:g} s)"
        routes = "fixed" + ("" if self.tolerance is None
                            else f" + tolerance (rtol = {self._rtol:g}, jacobian = {self._jacobian})")
        routes += "" if self.corrected is None else " + corrected"
        wrong = sum(not s for s in self.right_sign)
        return (
            f"Sweep({n} stiffnesses from {min(self.k):.3g} to {max(self.k):.3g} N/m, dt = {self.dt:g} s, "
            f"routes: {routes}{', blame' if self.blame is not None else ''}; "
            f"wrong sign at {wrong} of {n}; gradient error {min(self.gradient_error):.3g} .. "
            f"{max(self.gradient_error):.3g})"
        )


def _tolerance_rtol(tolerance: Union[None, bool, float]) -> Optional[float]:
    if tolerance is None or tolerance is False:
        return None
    if tolerance is True:
        return float(_TOL["rtol"])
    return float(tolerance)


def sweep(drop: Drop, k: Any, dt: Any = _DT, *, tolerance: Union[None, bool, float] = None,
          events: bool = False, jacobian: str = _TOL["jacobian"], corrected: bool = False, blame: bool = False,
          quiet: bool = False) -> Sweep:
    """Run the routes at many stiffnesses (the core's sweep, in this page's wasm core).

    ``k`` is a list (or 1-D array) of stiffnesses in N/m; every readout comes back as a list
    with one entry per k. An array of steps ``dt`` (a native ``SweepGrid``) is not offered
    in the browser: loop over the steps instead. ``quiet`` is accepted (there is no progress
    bar here). ``jacobian`` is the tolerance route's method (``"forward"`` needs ``events``).
    """
    if not isinstance(dt, (int, float)):
        raise _errors.InvalidParameter(
            "invalid parameter `dt`: the browser package takes one step per sweep (loop over the steps)")
    ks = _numbers(k, "k")
    rtol = _tolerance_rtol(tolerance)
    events = events if rtol is not None else False
    answer = _call("sweepRows", drop.to_dict(), ks, float(dt), rtol, bool(events), bool(corrected), bool(blame),
                   str(jacobian))
    ran = {"tolerance": rtol is not None, "corrected": bool(corrected), "blame": bool(blame)}
    return Sweep(answer, drop, rtol, events, ran, str(jacobian))


# ---------------------------------------------------------------------------------------
# Gradient checks

_CHECK: Dict[str, Any] = _DEFAULTS["check"]


def environment() -> Dict[str, str]:
    """Who is checking: the identity every receipt written here carries in
    ``environment.extra`` (the native keys; no git checkout in a browser)."""
    import platform
    import sys

    return {
        "package": "ferromotion",
        "package_version": __version__,
        "git_commit": "unknown",
        "git_dirty": "unknown",
        "platform": f"pyodide {sys.platform} ({platform.platform()})",
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "numpy": "unavailable" if _np is None else _np.__version__,
    }


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class CheckDirection(_Json):
    """The check along one direction d (the native fields; lists where native has arrays)."""

    label: str
    direction: Any
    claimed: float
    eps: Any
    fd: Any
    error: Any
    probe_classification: tuple
    best_error: Optional[float]
    best_eps: Optional[float]
    smooth_below: Optional[float]
    taylor_slope: Optional[float]
    taylor_second_order: bool
    classification: str
    certified: bool

    @classmethod
    def _from_core(cls, d: Dict[str, Any]) -> "CheckDirection":
        def column(key: str) -> Any:
            return _array([float("nan") if p[key] is None else float(p[key]) for p in d["probes"]])

        return cls(label=d["label"], direction=_array(_floats(d["direction"])), claimed=d["claimed"],
                   eps=column("eps"), fd=column("fd"), error=column("error"),
                   probe_classification=tuple(p["classification"] for p in d["probes"]), best_error=d["best_error"],
                   best_eps=d["best_eps"], smooth_below=d["smooth_below"], taylor_slope=d["taylor_slope"],
                   taylor_second_order=d["taylor_second_order"], classification=d["classification"],
                   certified=d["certified"])

    def to_dict(self) -> Dict[str, Any]:
        def ready(v: Any) -> Any:
            if isinstance(v, (list, tuple)) or (_np is not None and isinstance(v, _np.ndarray)):
                return [ready(x) for x in v]
            return None if isinstance(v, float) and not math.isfinite(v) else v

        return {f.name: ready(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def __repr__(self) -> str:
        best = ("no smooth probe" if self.best_error is None
                else f"best error {self.best_error:.2e} at eps {self.best_eps:.1e}")
        slope = "-" if self.taylor_slope is None else f"{self.taylor_slope:.2f}"
        return (f"CheckDirection({self.label}: {self.classification}, {best}, Taylor slope {slope}, "
                f"{'certified' if self.certified else 'not certified'})")


class Receipt(_Json):
    """A gradient check's receipt (the native attributes). ``plot()`` is native only (Bokeh)."""

    def __init__(self, text: str, summary: str) -> None:
        d = json.loads(text)
        self._dict: Dict[str, Any] = d
        self._summary = summary
        report = d["report"]
        self.schema: str = d["schema"]
        self.verdict: str = report["verdict"]
        self.why: str = report["why"]
        self.objective: Dict[str, Any] = d["objective"]
        self.x = _array(_floats(d["x"]))
        self.gradient = _array(_floats(d["gradient"]))
        self.directions = tuple(CheckDirection._from_core(r) for r in report["directions"])
        self.max_error: float = float("nan") if report["max_error"] is None else report["max_error"]
        self.median_error: float = float("nan") if report["median_error"] is None else report["median_error"]
        self.evaluations: int = report["evaluations"]
        self.options: Dict[str, Any] = report["options"]
        self.environment: Dict[str, Any] = d["environment"]

    @property
    def verified(self) -> bool:
        """The verdict is ``"verified"``."""
        return self.verdict == "verified"

    def summary(self) -> str:
        """One line: the objective, the verdict, why, and the errors (the core's text)."""
        return self._summary

    def to_dict(self) -> Dict[str, Any]:
        """The receipt document as plain Python types (non-finite numbers as None)."""
        return json.loads(json.dumps(self._dict))

    def to_json(self, indent: Optional[int] = 2) -> str:
        """The receipt document as JSON text."""
        return json.dumps(self._dict, indent=indent, allow_nan=False, ensure_ascii=False)

    def __repr__(self) -> str:
        name = self.objective["name"] or "unnamed objective"
        return (f"Receipt({name}: {self.verdict}, {len(self.directions)} directions, "
                f"max error {self.max_error:.2e})")


def _event_signature(value: Any) -> Dict[str, Any]:
    """An ``events`` answer as the native binding reads it: an int, a sequence of ints, or
    (sequence of ints, min_event_speed)."""
    import operator

    def ints(seq: Any) -> List[int]:
        return [operator.index(v) for v in seq]

    if isinstance(value, int):
        return {"sequence": [value], "min_event_speed": None}
    try:
        return {"sequence": ints(value), "min_event_speed": None}
    except TypeError:
        pass
    try:
        seq, speed = value
        return {"sequence": ints(seq), "min_event_speed": None if speed is None else float(speed)}
    except (TypeError, ValueError):
        raise TypeError("events must return a sequence of ints or (sequence of ints, min_event_speed), "
                        f"got {value!r}") from None


def check_gradient(f: Any, grad: Any, x: Any, *, events: Any = None, hvp: Any = None, eps: Any = None,
                   taylor_h: Any = None, directions: int = _CHECK["random_directions"],
                   coordinates: bool = _CHECK["coordinates"], seed: int = _CHECK["seed"], tol: float = _CHECK["tol"],
                   graze_speed: float = _CHECK["graze_speed"], objective: Optional[str] = None, units: str = "",
                   description: str = "", route: str = "", integrator: str = "",
                   tolerances: Optional[Dict[str, float]] = None) -> Receipt:
    """Is this gradient real? The core's check (in this page's wasm core) of a claimed
    gradient of ``f`` at ``x``; ``f``, ``events`` and ``hvp`` are called back from the core
    with ``x`` as a list (a numpy array when numpy imports). An exception one of them raises
    stops the check and propagates unchanged."""
    from pyodide.ffi import create_proxy, to_js
    from js import Object

    if objective is None:
        objective = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    info = {"name": objective, "units": units, "description": description, "route": route,
            "integrator": integrator, "tolerances": [[str(k), float(v)] for k, v in (tolerances or {}).items()]}
    options = {"eps": _numbers(eps, "eps") if eps is not None else _CHECK["eps"],
               "taylor_h": _numbers(taylor_h, "taylor_h") if taylor_h is not None else _CHECK["taylor_h"],
               "random_directions": int(directions), "coordinates": bool(coordinates), "seed": int(seed),
               "tol": float(tol), "graze_speed": float(graze_speed)}
    kept: List[BaseException] = []

    def callback(fn: Any, convert: Any) -> Any:
        def call(p: Any) -> Any:
            if kept:
                return None
            try:
                return convert(fn(_array([float(v) for v in p.to_py()])))
            except BaseException as e:  # noqa: BLE001 - kept and re-raised unchanged below
                kept.append(e)
                return None
        return create_proxy(call)

    def to_obj(v: Any) -> Any:
        return to_js(v, dict_converter=Object.fromEntries)

    proxies = [callback(f, float)]
    proxies.append(None if events is None else callback(events, lambda v: to_obj(_event_signature(v))))
    proxies.append(None if hvp is None else callback(hvp, lambda v: to_obj(_numbers(v, "hvp"))))
    try:
        answer = _call("checkGradient", proxies[0], _numbers(grad, "grad"), _numbers(x, "x"), info, proxies[1],
                       proxies[2], options, [[k, v] for k, v in environment().items()])
    except FerroError:
        if kept:
            raise kept[0] from None
        raise
    finally:
        for p in proxies:
            if p is not None:
                p.destroy()
    if kept:
        raise kept[0]
    return Receipt(answer["json"], answer["summary"])


def log_grid(lo: float, hi: float, per_decade: int) -> Any:
    """Stiffnesses 10^lo .. 10^hi (N/m), ``per_decade`` points per decade, inclusive (the core's grid)."""
    return _array(_floats(_call("logGrid", float(lo), float(hi), int(per_decade))))
