"""Ferromotion in the browser: the native package's API for the drop, run by pyodide.

The lab's "Script it in Python" panel loads this package into pyodide. Every number is
computed by the lab's own WebAssembly core (``web/pkg``, the module ``web/js/sim.js``
loads); this file only converts arguments and answers and presents them, as the native
package (``python/ferromotion``) does over its PyO3 core. Same function names, arguments,
defaults (read from the core) and result fields as the native package, for: ``Drop``,
``exact``, ``fixed``, ``tolerance``, ``flow``, ``corrected``, ``rk4``, ``blame``,
``divergence_exponent``, ``time_of_impact_term``, ``equal_budget`` and ``sweep``.

Arrays: numpy cannot be loaded offline in pyodide (its wheel lives on pyodide's CDN), so
arrays arrive as Python lists: ``state`` is ``[y, v]``, ``jacobian`` is ``[[a, b], [c, d]]``
(write ``r.jacobian[1][0]``; ``r.jacobian[1, 0]`` needs numpy), sweep columns are lists
with one entry per k. When numpy does import (a page that loaded it), they are numpy arrays,
as natively.

Errors are the native ``FerroError`` subclasses with the core's messages; their names come
from the native stub ``python/ferromotion/_core.pyi`` (``_errors.py``, written at build time
by ``scripts/pyodide.sh``). The result classes (``Route``, ``ExponentFit``, ``Blame``, the sweep's,
the receipt's) are the native package's own ``_results.py``, copied at build time; this
file supplies only the calls into the WebAssembly core.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Union

from ._errors import *  # noqa: F401,F403  (the FerroError tree, generated from the native stub)
from . import _errors
_ERRORS = _errors  # the module, under a name the result classes' `_errors` tuple does not hide
# The result classes, their repr and to_dict: the native package's own module
# (python/ferromotion/_results.py, copied here by scripts/pyodide.sh).
from ._results import (Blame, CheckDirection, EqualBudget, ExponentFit, Receipt, Route, SweepBlame, SweepRoute, floats, frozen,
                       tolerance_rtol)
# The package's own plumbing, kept out of dir(fm) as natively (underscored names).
from ._results import Json as _Json, SweepResult as _SweepResult, raise_refusal as _raise_refusal
from ._results import sweep_options as _sweep_options
from ._results import _np

from _ferromotion_wasm import call as _js_call  # registered by web/js/python.js

__version__: str = "browser"


def _raise(kind: str, message: str) -> None:
    """The native class for the core's error kind (``Scenario`` is ``ScenarioError``)."""
    _raise_refusal(_errors, {"kind": kind, "message": message})


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


def _real(x: Any) -> float:
    """A number argument as the native binding takes it: a str is refused, as PyO3 does."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"must be real number, not {type(x).__name__}")
    return float(x)


def _call(name: str, *args: Any) -> Any:
    """Call the wasm export ``name``; the core's refusal becomes its FerroError subclass."""
    from pyodide.ffi import to_js
    from js import Object

    js_args = to_js(list(args), dict_converter=Object.fromEntries)
    answer = _py(_js_call(name, js_args))
    if not answer["ok"]:
        _raise(answer["kind"], answer["message"])
    return answer["value"]


def _native_types(d: Dict[str, Any]) -> Dict[str, Any]:
    """The core's defaults with Python's types: a JS number that happens to be whole (1.0)
    arrives as an int; counts stay ints, everything else is a float as natively."""
    counts = ("max_steps", "max_events", "random_directions", "seed")
    out: Dict[str, Any] = {}
    for key, v in d.items():
        if isinstance(v, dict):
            out[key] = _native_types(v)
        elif isinstance(v, list):
            out[key] = floats(v)
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


# ---------------------------------------------------------------------------------------
# Routes (same signatures as the native package)


def exact(drop: Drop, *, restitution: Optional[float] = None,
          graze_speed: float = _DEFAULTS["graze_speed"]) -> Route:
    """The rigid reference: flight maps composed with the saltation matrices of the impacts."""
    return Route._from_core("exact", _call("routeExact", drop.to_dict(), {
        "restitution": None if restitution is None else _real(restitution),
        "graze_speed": _real(graze_speed)}))


def fixed(drop: Drop, k: float, dt: float = _DT, *, max_steps: int = _DEFAULTS["max_steps"]) -> Route:
    """Semi-implicit Euler on the push-only penalty law, Jacobian by forward-mode tangent."""
    return Route._from_core("fixed", _call("routeFixed", drop.to_dict(), _real(k), _real(dt),
                                           {"max_steps": max_steps}))


def corrected(drop: Drop, k: float, dt: float = _DT, *, locate: bool = _DEFAULTS["locate"],
              max_steps: int = _DEFAULTS["max_steps"]) -> Route:
    """The fixed step with the missing event term restored, at the fixed route's cost."""
    return Route._from_core("corrected", _call("routeCorrected", drop.to_dict(), _real(k), _real(dt),
                                               {"locate": bool(locate), "max_steps": max_steps}))


def flow(drop: Drop, k: float, *, root_rtol: float = _DEFAULTS["root_rtol"],
         max_events: int = _DEFAULTS["max_events"]) -> Route:
    """The exact derivative of the continuous penalty ODE (closed form per phase)."""
    return Route._from_core("flow", _call("routeFlow", drop.to_dict(), _real(k), {
        "root_rtol": _real(root_rtol), "max_events": max_events}))


def tolerance(drop: Drop, k: float, *, rtol: float = _TOL["rtol"], atol: Optional[float] = _TOL["atol"],
              events: bool = _TOL["events"], eps: float = _TOL["eps"],
              max_steps: int = _TOL["max_steps"], jacobian: str = _TOL["jacobian"],
              min_step: float = _TOL["min_step"]) -> Route:
    """Dormand-Prince 5(4) with error control; J by central differences of 8 rollouts
    (``jacobian="richardson"``) or forward sensitivities of one event-located rollout
    (``jacobian="forward"``, needs ``events=True``)."""
    return Route._from_core("tolerance", _call("routeTolerance", drop.to_dict(), _real(k), {
        "rtol": _real(rtol), "atol": None if atol is None else _real(atol), "events": bool(events),
        "eps": _real(eps), "max_steps": max_steps, "jacobian": str(jacobian), "min_step": _real(min_step)}))


def rk4(drop: Drop, k: float, dt: float = _DT, *, max_steps: int = _DEFAULTS["max_steps"]) -> Route:
    """Classical fourth-order Runge-Kutta at a fixed step on the penalty law, tangent by forward mode."""
    return Route._from_core("rk4", _call("routeRk4", drop.to_dict(), _real(k), _real(dt), {"max_steps": max_steps}))


def blame(drop: Drop, k: float, dt: float = _DT) -> Blame:
    """Split the fixed route's Jacobian error into integrator and contact-model shares."""
    return Blame._from_core(_call("blameSplit", drop.to_dict(), _real(k), _real(dt)))


def divergence_exponent(drop: Drop, dt: float = _DT) -> ExponentFit:
    """Slope of log(gradient error) on log(k) over k = 10^4, 10^4.5, ..., 10^8 at step dt."""
    return ExponentFit._from_core(_call("divergenceExponent", drop.to_dict(), _real(dt)))


def time_of_impact_term(drop: Drop, speed: Any = None) -> Any:
    """The saltation entry (1+e) g / |v| in 1/s, with the limit restitution; a list of
    speeds gives a list."""
    if speed is None or isinstance(speed, (int, float)):
        return float(_call("dropTimeOfImpactTerm", drop.to_dict(), None if speed is None else float(speed)))
    return frozen([float(_call("dropTimeOfImpactTerm", drop.to_dict(), float(v))) for v in _numbers(speed, "speed")])


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

class Sweep(_SweepResult):
    """Every readout of a sweep over stiffness, as lists (numpy arrays when numpy imports).
    The native ``Sweep``'s attributes and presentation; ``plot()`` draws in the lab's panel."""

    _errors = (FerroError, InvalidParameter)
    _error_module = _ERRORS

    def __init__(self, answer: Dict[str, Any], drop: Drop) -> None:
        self._answer = answer
        self.drop = drop
        doc = answer["sweep"]  # the core's Sweep: its options inline, then exact and rows
        self.options = {key: value for key, value in doc.items() if key not in ("exact", "rows")}
        rows = doc["rows"]
        self.dt = float(doc["dt"])
        self.k = frozen(floats([r["k"] for r in rows]))
        self.exact = Route._from_core("exact", doc["exact"])
        self.fixed = SweepRoute._from_rows([r["fixed"] for r in rows])
        ran_tolerance = self.options["tolerance"] is not None
        self.tolerance = SweepRoute._from_rows([r["tolerance"] for r in rows]) if ran_tolerance else None
        self.corrected = SweepRoute._from_rows([r["corrected"] for r in rows]) if self.options["corrected"] else None
        self.blame = SweepBlame._from_rows([r["blame"] for r in rows]) if self.options["blame"] else None
        self.tolerance_cost_ratio = (frozen(floats([r["tolerance_cost_ratio"] for r in rows]))
                                     if ran_tolerance else None)

    def _core_document(self) -> Dict[str, Any]:
        return dict(self._answer["sweep"])

    def _fit_lab(self) -> Dict[str, Any]:
        return _call("divergenceExponent", self.drop.to_dict(), float(self.dt))

    def _log_grid(self, lo: float, hi: float, per_decade: int) -> List[float]:
        return _call("logGrid", float(lo), float(hi), int(per_decade))

    def plot(self, *, mark_k: Optional[float] = None, title: Optional[str] = None, width: int = 720,
             height: int = 480) -> Any:
        """Draw the relative gradient error and, below it on its own axis, the height error
        |dy| in m against k, log-log, in the lab's panel with the lab's own plotting code
        (``web/js/plots.js``), the core's wrong-sign bands shaded. ``width`` and ``height``
        are taken for the native signature; the panel's plot fits its column."""
        from _ferromotion_wasm import plot as _js_plot
        from pyodide.ffi import to_js
        from js import Object

        def column(values: Any) -> List[float]:
            return floats(list(values))

        spec = {
            "title": title or f"Errors against the exact answer, dt = {self.dt:g} s",
            "k": column(self.k),
            "gradient": column(self.gradient_error),
            "dy": column(self.dy),
            "tolerance": None if self.tolerance is None else column(self.tolerance.gradient_error),
            "corrected": None if self.corrected is None else column(self.corrected.gradient_error),
            "bands": [{"from": float(b["from"]), "to": float(b["to"])} for b in self._answer["wrong_sign"]],
            "wrong": sum(not s for s in self.right_sign),
            "mark_k": None if mark_k is None else float(mark_k),
        }
        _js_plot(to_js(spec, dict_converter=Object.fromEntries))
        return None


def sweep(drop: Drop, k: Any, dt: Any = _DT, *, tolerance: Union[None, bool, float] = None,
          events: bool = False, jacobian: str = _TOL["jacobian"], min_step: float = _TOL["min_step"],
          corrected: bool = False, blame: bool = False, quiet: bool = False, progress: Any = None) -> Sweep:
    """Run the routes at many stiffnesses (the core's sweep, in this page's wasm core).

    ``k`` is a list (or 1-D array) of stiffnesses in N/m; every readout comes back as a list
    with one entry per k. An array of steps ``dt`` (a native ``SweepGrid``) is not offered
    in the browser: loop over the steps instead. ``quiet`` is accepted (there is no progress
    bar here); ``progress``, a callable, is told ``(done, total)`` by the core as it goes (an
    exception it raises stops the sweep, as ``ScenarioError``). ``jacobian`` is the tolerance route's method (``"forward"`` needs ``events``),
    ``min_step`` its controller's floor (s; 0: none);
    each route's ``wall_s`` is timed with this page's ``performance.now()``.
    """
    if not isinstance(dt, (int, float)):
        raise _errors.InvalidParameter(
            "invalid parameter `dt`: the browser package takes one step per sweep (loop over the steps)")
    ks = _numbers(k, "k")
    options = _sweep_options(_real(dt), tolerance_rtol(tolerance, _TOL["rtol"]), events, jacobian, _real(min_step),
                            corrected, blame)
    return Sweep(_call("sweep", drop.to_dict(), ks, options, progress), drop)


# ---------------------------------------------------------------------------------------
# Gradient checks

_CHECK: Dict[str, Any] = _DEFAULTS["check"]


def equal_budget(drop: Optional[Drop] = None, *, k: float = 1e6, budget: int = 32_000) -> EqualBudget:
    """Every route at the same force-evaluation budget, and the probe-size trap (the core's
    document, each row's ``wall_s`` timed with this page's ``performance.now()``): a dict
    that prints as one line; ``.format_table()`` prints the table."""
    def typed(value: Any, key: str) -> Any:
        if isinstance(value, dict):
            return {name: typed(v, name) for name, v in value.items()}
        if isinstance(value, list):
            return [typed(v, key) for v in value]
        if isinstance(value, (bool, str)) or value is None:
            return value
        return int(value) if key in ("force_evals", "budget") else float(value)

    return EqualBudget(typed(_call("equalBudget", (drop if drop is not None else Drop()).to_dict(), _real(k), _real(budget)), ""))


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
                   graze_speed: float = _CHECK["graze_speed"], scale: Any = None,
                   full_sweep: bool = _CHECK["full_sweep"], objective: Optional[str] = None, units: str = "",
                   description: str = "", route: str = "", integrator: str = "",
                   tolerances: Optional[Dict[str, float]] = None) -> Receipt:
    """Is this gradient real? The core's check (in this page's wasm core) of a claimed
    gradient of ``f`` at ``x``, with the native package's arguments and verdicts
    (``verified``, ``verified-within-noise``, ``verified-absolute``, ``not-verified``,
    ``refused``); ``f``, ``events`` and ``hvp`` are called back from the core with ``x`` as
    a list (a numpy array when numpy imports). An exception one of them raises stops the
    check and propagates unchanged."""
    from pyodide.ffi import create_proxy, to_js
    from js import Object

    if objective is None:
        objective = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    info = {"name": objective, "units": units, "description": description, "route": route,
            "integrator": integrator, "tolerances": [[str(k), float(v)] for k, v in (tolerances or {}).items()]}
    options = {"eps": _numbers(eps, "eps") if eps is not None else _CHECK["eps"],
               "taylor_h": _numbers(taylor_h, "taylor_h") if taylor_h is not None else _CHECK["taylor_h"],
               "random_directions": int(directions), "coordinates": bool(coordinates), "seed": int(seed),
               "tol": float(tol), "graze_speed": float(graze_speed),
               "scale": None if scale is None else _numbers(scale, "scale"), "full_sweep": bool(full_sweep)}
    kept: List[BaseException] = []

    def callback(fn: Any, convert: Any) -> Any:
        def call(p: Any) -> Any:
            if kept:
                return None
            try:
                return convert(fn(frozen([float(v) for v in p.to_py()])))
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
    return frozen(floats(_call("logGrid", float(lo), float(hi), int(per_decade))))


# What only the native package has: named as such, not a bare AttributeError.
_NATIVE_ONLY = ("descent", "hybrid_jacobian", "quadruped", "study", "audit_engine", "Workbench", "check_example",
                "check_fixture", "step_stability")
#: The public names (``dir(fm)``): not the typing helpers this module imports.
_PUBLIC = sorted(n for n in list(globals()) if not n.startswith("_")
                 and n not in {"Any", "Dict", "List", "Optional", "Union", "annotations", "dataclasses", "floats",
                               "frozen", "tolerance_rtol"})


def __getattr__(name: str) -> Any:
    if name == "Fit":  # the old name of ExponentFit, as natively
        import warnings
        warnings.warn("fm.Fit is renamed fm.ExponentFit (a log-log line's exponent); fm.fit is forward "
                      "matching, a different thing", DeprecationWarning, stacklevel=2)
        return ExponentFit
    if name in _NATIVE_ONLY:
        raise AttributeError(f"fm.{name} is native only: it is not in the lab's browser package; "
                             "run it with the installed package (pip install ferromotion)")
    raise AttributeError(f"module 'ferromotion' has no attribute {name!r}")


def __dir__() -> List[str]:
    return list(_PUBLIC)
