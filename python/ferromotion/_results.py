"""The drop's result classes: their fields, ``repr``, ``to_dict`` and ``to_json``. No core calls.

One presentation for two packages. The native package (``python/ferromotion``, over the PyO3
core) builds its results with these classes, and the lab's in-browser package
(``web/py/ferromotion``, over the WebAssembly core, run by pyodide) gets this very file,
copied there at build time by ``scripts/pyodide.sh``. Each package only supplies the core's
answers (``_from_core`` takes the core's serde document, or numpy columns natively), so a
readout prints the same digits in a notebook and in the lab's Python panel.

Pure Python: numpy is used when it imports (always, natively); without it (pyodide offline)
arrays are lists, nested for matrices.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
from typing import Any, Dict, List, Mapping, NoReturn, Optional, Tuple, Type, Union

_np: Any
try:
    import numpy as _np
except ImportError:  # pragma: no cover - pyodide offline: arrays stay lists
    _np = None


def frozen(values: Any, dtype: Optional[str] = None) -> Any:
    """A read-only numpy array of ``values`` (results are immutable), or without numpy the
    values themselves (lists)."""
    if _np is None:
        return values
    arr = _np.asarray(values) if dtype is None else _np.asarray(values, dtype=dtype)
    arr.setflags(write=False)
    return arr


def floats(values: Any) -> Any:
    """Every number as a float, nesting kept (the core's integer-valued numbers can arrive
    as ints from JavaScript); None stays None."""
    if isinstance(values, (list, tuple)):
        return [floats(v) for v in values]
    return None if values is None else float(values)


def matrix(j: Any) -> List[List[float]]:
    """A 2x2 Jacobian as rows of floats, from the core's flat row-major 4 numbers or from
    rows (lists or an array)."""
    flat = j.tolist() if hasattr(j, "tolist") else list(j)
    if flat and isinstance(flat[0], (list, tuple)):
        flat = [x for row in flat for x in row]
    return [[float(flat[0]), float(flat[1])], [float(flat[2]), float(flat[3])]]


def json_ready(x: Any) -> Any:
    """NaN and infinities as None (JSON has no such numbers), numpy scalars and arrays as
    Python numbers and lists."""
    if isinstance(x, dict):
        return {k: json_ready(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_ready(v) for v in x]
    if hasattr(x, "tolist") and not isinstance(x, (str, bytes)):  # numpy arrays and scalars
        return json_ready(x.tolist())
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _plain(x: Any) -> Any:
    """An array (or list) as a Python list of Python numbers."""
    return x.tolist() if hasattr(x, "tolist") else [_plain(v) if isinstance(v, (list, tuple)) else v for v in x]


def _optional_float(x: Any) -> Optional[float]:
    """``None`` stays ``None``; anything else becomes a float."""
    return None if x is None else float(x)


def fmt_matrix(j: Any) -> str:
    """A 2x2 matrix as ``[[a, b], [c, d]]`` with four significant digits."""
    return "[[" + ", ".join(f"{x:.4g}" for x in j[0]) + "], [" + ", ".join(f"{x:.4g}" for x in j[1]) + "]]"


def tolerance_rtol(tolerance: Union[None, bool, float], default: float) -> Optional[float]:
    """A sweep's ``tolerance`` argument: None/False off; True the core's ``default`` rtol; a
    number that rtol."""
    if tolerance is None or tolerance is False:
        return None
    if tolerance is True:
        return float(default)
    return float(tolerance)


def sweep_options(dt: float, rtol: Optional[float], events: bool, jacobian: str, min_step: float,
                  corrected: bool, blame: bool) -> Dict[str, Any]:
    """The core's ``SweepOptions`` document from a ``sweep`` call's arguments (both packages'
    ``sweep`` pass it to the core as it is; the core fills in the rest and validates it). The
    tolerance route runs when ``rtol`` is not None; its ``events`` only then."""
    tol = None if rtol is None else {"rtol": rtol, "events": bool(events), "jacobian": str(jacobian),
                                     "min_step": min_step}
    return {"dt": dt, "tolerance": tol, "corrected": bool(corrected), "blame": bool(blame)}


def raise_refusal(errors: Any, refusal: Mapping[str, Any]) -> NoReturn:
    """Raise the core's refusal ``{kind, message}`` as the package's class of that kind, found in
    the module ``errors`` (``Scenario`` is ``ScenarioError``; FerroError when unknown)."""
    kind = refusal["kind"]
    cls = getattr(errors, kind, None) or getattr(errors, kind + "Error", None) or errors.FerroError
    raise cls(refusal["message"])


class Json:
    """``to_json`` for result objects that have a ``to_dict``."""

    __slots__ = ()

    def to_dict(self) -> Dict[str, Any]:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def to_json(self, indent: Optional[int] = None) -> str:
        """:meth:`to_dict` as JSON text (non-finite numbers become null)."""
        return json.dumps(json_ready(self.to_dict()), indent=indent, allow_nan=False)


# Readers of one field from the core's RouteResult document: (document, the field's name).

def _state_of(d: Mapping[str, Any], _: str = "state") -> Any:
    """x(T) as floats."""
    return floats(list(_plain(d["state"])))


def _jacobian_flat(d: Mapping[str, Any], _: str = "jacobian") -> List[float]:
    """The Jacobian flat, row-major (it may arrive flat or as rows)."""
    return [x for row in matrix(d["jacobian"]) for x in row]


def _count(d: Mapping[str, Any], name: str) -> int:
    """A counter (0 where the document has none: a sweep's reference)."""
    return int(d.get(name, 0))


def _number(d: Mapping[str, Any], name: str) -> Optional[float]:
    """An optional number (absent: None)."""
    return _optional_float(d.get(name))


def _flag(d: Mapping[str, Any], name: str) -> bool:
    """A flag (absent: False)."""
    return bool(d.get(name, False))


def _stability(d: Mapping[str, Any], name: str) -> Any:
    """``step_stable`` and ``omega_dt``: from the document's ``step_stability`` (None when none)."""
    stability = d.get("step_stability") or {}
    if name == "step_stable":
        return None if stability.get("stable") is None else bool(stability["stable"])
    return _optional_float(stability.get("omega_dt"))


_REQUIRED: Any = dataclasses.MISSING
_set = object.__setattr__


class _Field:
    """A field of :class:`Route`, read from the core's ``RouteResult`` document by ``read``
    (document, name); its name comes from the class body, where it is declared once."""

    def __init__(self, read: Any, doc: str, default: Any = _REQUIRED) -> None:
        self.read, self.__doc__, self.default, self.name = read, doc, default, ""

    def __set_name__(self, owner: Any, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self if obj is None else self.read(obj._document(), self.name)


class _Array(_Field):
    """A field made a read-only float64 array on first access and kept (slot ``_NAME``)."""

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        try:
            return getattr(obj, "_" + self.name)
        except AttributeError:
            value = frozen(self.read(obj._document(), self.name), "float64")
            _set(obj, "_" + self.name, value)
            return value


def _field(read: Any, doc: str, default: Any = _REQUIRED) -> Any:
    """A :class:`Route` field's declaration (typed ``Any`` so that the annotation is its type)."""
    return _Field(read, doc, default)


def _array(read: Any, doc: str) -> Any:
    """A :class:`Route` array field's declaration."""
    return _Array(read, doc)


class Route(Json):
    """One route's answer: x(T), its Jacobian, and what it cost.

    Attributes
    ----------
    route : str
        ``"exact"``, ``"fixed"``, ``"corrected"``, ``"flow"``, ``"tolerance"`` or ``"rk4"``.
    state : numpy.ndarray
        x(T) = (y in m, v in m/s), shape (2,), float64.
    jacobian : numpy.ndarray
        J = dx(T)/dx(0), shape (2, 2), float64, row-major: ``jacobian[1, 0]`` is dv(T)/dy0.
    steps, rejected_steps : int
        Integrator steps accepted and rejected, summed over rollouts.
    force_evals : int
        Force (right-hand side) evaluations spent on the Jacobian.
    state_force_evals : int
        Force evaluations of a separate nominal rollout (the tolerance route), else 0.
    rollouts : int
        Whole rollouts run to get the Jacobian.
    probe_gap : float or None
        Tolerance route only: max |J(eps) - J(eps/2)| between the two probe sizes.
    probe_dependent : bool
        Tolerance route only: the probe gap exceeds 1e-3 max|J| (PROBE-DEPENDENT).
    step_stable : bool or None
        Fixed, corrected and rk4 routes only: the contact-phase step matrix (semi-implicit
        Euler's for fixed and corrected, RK4's for rk4) has spectral radius <= 1 at this dt.
        False means x(T) is blown up (the repr says UNSTABLE STEP).
    omega_dt : float or None
        Fixed, corrected and rk4 routes only: omega * dt with omega = sqrt(k/m) (the undamped
        limit is 2 for fixed and corrected, 2 sqrt(2) for rk4).
    wall_s : float or None
        Wall time of the whole call, s, measured by the core around the route (one
        measurement on a possibly busy machine: for reading beside ``force_evals``, never for
        asserting; ``make bench`` times properly). None where nothing timed it (a sweep's
        reference, a scenario file). Not part of the repr, which stays the same run to run.
    wall_resolution_s : float or None
        The resolution of the clock behind ``wall_s``, s. A ``wall_s`` below it means "under
        one tick": in the lab's Python panel the browser coarsens its clock to 100 us.

    In the lab's Python panel (no numpy) ``state`` is ``[y, v]`` and ``jacobian`` is
    ``[[dy/dy0, dy/dv0], [dv/dy0, dv/dv0]]``: write ``jacobian[1][0]``.

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.fixed(fm.Drop(), k=1e6, dt=1e-4)
    >>> r.state.shape, r.jacobian.shape, r.jacobian.dtype
    ((2,), (2, 2), dtype('float64'))
    >>> r.steps, r.force_evals, r.rollouts
    (8000, 8000, 1)
    >>> r.wall_s >= 0          # seconds this call took (not in the repr)
    True
    """

    __slots__ = ("route", "_answer", "_state", "_jacobian")
    _answer: Any  # the core's RouteAnswer (native) or its RouteResult document (a dict)
    _state: Any  # the arrays, made on first access
    _jacobian: Any

    # The fields, in order, declared once: the dataclass fields (`dataclasses.fields(Route)`,
    # `asdict`, `replace`), the constructor's signature and `to_dict` are made from these lines.
    route: str
    state: Any = _array(lambda d, _: _state_of(d), "x(T) = (y in m, v in m/s), shape (2,), float64, read-only.")
    jacobian: Any = _array(lambda d, _: matrix(_jacobian_flat(d)), "J = dx(T)/dx(0), shape (2, 2), row-major.")
    steps: int = _field(_count, "Integrator steps accepted, summed over rollouts.")
    rejected_steps: int = _field(_count, "Integrator steps rejected, summed over rollouts.")
    force_evals: int = _field(_count, "Force evaluations spent on the Jacobian.")
    state_force_evals: int = _field(_count, "Force evaluations of a separate nominal rollout.")
    rollouts: int = _field(_count, "Whole rollouts run to get the Jacobian.")
    probe_gap: Optional[float] = _field(_number, "Tolerance route only: max |J(eps) - J(eps/2)|.")
    probe_dependent: bool = _field(_flag, "Tolerance route only: the probe gap exceeds 1e-3 max|J|.")
    step_stable: Optional[bool] = _field(_stability, "Fixed, corrected and rk4 only: the contact step is stable.", None)
    omega_dt: Optional[float] = _field(_stability, "Fixed, corrected and rk4 only: omega * dt.", None)
    wall_s: Optional[float] = _field(_number, "Wall time of the whole call, s (None where nothing timed it).", None)
    wall_resolution_s: Optional[float] = _field(_number, "The resolution of the clock behind wall_s, s.", None)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """From every field, by position or name (as the dataclass was built); the routes use
        :meth:`_from_core`."""
        values = _SIGNATURE.bind(*args, **kwargs)
        values.apply_defaults()
        d = dict(values.arguments)
        stable, omega_dt = d.pop("step_stable"), d.pop("omega_dt")
        d["step_stability"] = None if stable is None else {"stable": stable, "omega_dt": omega_dt}
        _set(self, "route", d.pop("route"))
        _set(self, "_answer", d)

    @classmethod
    def _from_core(cls, route: str, answer: Any) -> "Route":
        """From the core's answer: the native ``RouteAnswer`` as it is, or the ``RouteResult``
        document, a dict (``jacobian`` flat, row-major; no counters in a sweep's reference).
        The native binding builds its Routes the same way (``routes.rs``: ``route_object``)."""
        r = object.__new__(cls)
        _set(r, "route", route)
        _set(r, "_answer", answer)
        return r

    def _document(self) -> Mapping[str, Any]:
        """The core's ``RouteResult`` document (a native answer makes it once, on first use)."""
        answer = self._answer
        return answer if type(answer) is dict else answer.document()

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    @property
    def dv_dy0(self) -> float:
        """dv(T)/dy0, 1/s: ``jacobian[1, 0]`` as a plain float (the number whose sign the
        routes disagree on).

        Examples
        --------
        >>> import ferromotion as fm
        >>> round(fm.fixed(fm.Drop(), k=1e6, dt=1e-4).dv_dy0, 1), round(fm.exact(fm.Drop()).dv_dy0, 2)
        (-160.9, 3.61)
        """
        return float(_jacobian_flat(self._document())[2])

    def __repr__(self) -> str:
        y, v = self.state
        text = (
            f"Route({self.route!r}: y = {y:.6g} m, v = {v:.6g} m/s, J = {fmt_matrix(self.jacobian)}, "
            f"steps={self.steps}, force_evals={self.force_evals}, rollouts={self.rollouts}"
        )
        if self.probe_gap is not None:
            text += f", probe_gap={self.probe_gap:.3g}"
            if self.probe_dependent:
                text += " PROBE-DEPENDENT"
        if self.step_stable is False:
            method = {"rk4": "explicit RK4"}.get(self.route, "semi-implicit Euler")
            text += f", UNSTABLE STEP: omega*dt = {self.omega_dt:.3g} is beyond {method}'s limit"
        return text + ")"

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types (lists for the arrays), ready for ``json.dumps``."""
        d = {name: getattr(self, name) for name in ROUTE_FIELDS}
        d["state"] = _plain(self.state)
        d["jacobian"] = _plain(self.jacobian)
        return d


#: :class:`Route`'s fields as its class body declares them: (name, type, default).
_ROUTE: List[Tuple[str, Any, Any]] = [
    (name, kind, getattr(vars(Route).get(name), "default", _REQUIRED))
    for name, kind in Route.__annotations__.items() if not name.startswith("_")]
#: A route answer's fields, in the order ``to_dict`` lists them.
ROUTE_FIELDS: Tuple[str, ...] = tuple(name for name, *_ in _ROUTE)
_RouteFields = dataclasses.make_dataclass(
    "Route", [(name, kind) if default is _REQUIRED else (name, kind, dataclasses.field(default=default))
              for name, kind, default in _ROUTE], frozen=True, eq=False, repr=False)
setattr(Route, "__dataclass_fields__", getattr(_RouteFields, "__dataclass_fields__"))
setattr(Route, "__dataclass_params__", getattr(_RouteFields, "__dataclass_params__"))
_SIGNATURE = inspect.Signature([
    inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                      default=inspect.Parameter.empty if default is _REQUIRED else default, annotation=kind)
    for name, kind, default in _ROUTE])
setattr(Route.__init__, "__signature__", inspect.Signature(
    [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *_SIGNATURE.parameters.values()]))


@dataclasses.dataclass(frozen=True, repr=False)
class ExponentFit(Json):
    """A least-squares line through (log10 x, log10 y): y ~ x**slope, the exponent of a power law
    (``fm.fit`` is another thing: forward matching; the old name ``fm.Fit`` is a deprecated alias).

    Attributes
    ----------
    slope : float
        The exponent.
    intercept : float
        log10 y at log10 x = 0.
    r2 : float
        Coefficient of determination in log-log space.
    points : int
        Points used.
    """

    slope: float
    intercept: float
    r2: float
    points: int

    @classmethod
    def _from_core(cls, d: Mapping[str, Any]) -> "ExponentFit":
        """From the core's ``Fit`` document."""
        return cls(slope=float(d["slope"]), intercept=float(d["intercept"]), r2=float(d["r2"]),
                   points=int(d["points"]))

    def to_dict(self) -> Dict[str, Any]:
        """The four numbers as a dict."""
        return dataclasses.asdict(self)

    def __repr__(self) -> str:
        return f"ExponentFit(slope = {self.slope:.4g}, R^2 = {self.r2:.4g}, {self.points} points)"


@dataclasses.dataclass(frozen=True, repr=False)
class Blame(Json):
    """The blame split of the fixed route's Jacobian error (absolute, not normalised).

    Attributes
    ----------
    integrator_share : float
        max_ij |J_fixed - J_flow|: what the fixed-step integrator and its tangent add.
    contact_share : float
        max_ij |J_flow - J_exact|: what the penalty contact model itself differs by.
    ratio : float
        integrator_share / contact_share.
    noise_floor : float
        An upper bound of J_flow's own error (the round-off of its matrix products and of its
        located switch times, carried to T): a share below it cannot be resolved.
    integrator_below_floor, contact_below_floor : bool
        The share is below the noise floor (reads "< floor").

    Examples
    --------
    >>> import ferromotion as fm
    >>> b = fm.blame(fm.Drop(), k=1e6, dt=1e-4)
    >>> b.integrator_share > b.contact_share > b.noise_floor
    True
    """

    integrator_share: float
    contact_share: float
    ratio: float
    noise_floor: float
    integrator_below_floor: bool
    contact_below_floor: bool

    @classmethod
    def _from_core(cls, d: Mapping[str, Any]) -> "Blame":
        """From the core's ``Blame`` document."""
        return cls(integrator_share=float(d["integrator_share"]), contact_share=float(d["contact_share"]),
                   ratio=float(d["ratio"]), noise_floor=float(d["noise_floor"]),
                   integrator_below_floor=bool(d["integrator_below_floor"]),
                   contact_below_floor=bool(d["contact_below_floor"]))

    def to_dict(self) -> Dict[str, Any]:
        """The readout as a dict."""
        return dataclasses.asdict(self)

    def __repr__(self) -> str:
        def share(value: float, below: bool) -> str:
            return "< floor" if below else f"{value:.4g}"

        return (f"Blame(integrator share {share(self.integrator_share, self.integrator_below_floor)}, "
                f"contact share {share(self.contact_share, self.contact_below_floor)}, "
                f"ratio {self.ratio:.4g}, noise floor {self.noise_floor:.3g})")


# ---------------------------------------------------------------------------------------
# Sweeps

#: A sweep route's columns, one entry per stiffness (``SweepRoute``'s attributes).
ROUTE_COLUMNS: Tuple[str, ...] = (
    "state", "jacobian", "dy", "dv", "forward_error", "forward_unit", "gradient_error", "dv_dy0", "right_sign",
    "sign", "steps", "rejected_steps", "force_evals", "state_force_evals", "rollouts", "wall_s", "probe_dependent")
#: The blame split's columns (``SweepBlame``'s attributes).
BLAME_COLUMNS: Tuple[str, ...] = (
    "integrator_share", "contact_share", "ratio", "noise_floor", "integrator_below_floor", "contact_below_floor")


class SweepRoute:
    """One route's readouts across a sweep, one array per readout (length n).

    Attributes
    ----------
    state : numpy.ndarray
        x(T) per stiffness, shape (n, 2).
    jacobian : numpy.ndarray
        J per stiffness, shape (n, 2, 2), row-major.
    dy, dv : numpy.ndarray
        |y - y_exact| in m and |v - v_exact| in m/s.
    forward_error : numpy.ndarray
        The larger of dy and dv; its unit is in ``forward_unit`` ("m" or "m/s").
    gradient_error : numpy.ndarray
        max_ij |J - J_exact| / max_ij |J_exact|.
    dv_dy0 : numpy.ndarray
        The route's dv(T)/dy0.
    right_sign : numpy.ndarray
        bool: dv(T)/dy0 has the sign of the exact answer's.
    sign : list of str
        The core's three-state sign line per stiffness: ``"right"``, ``"wrong"`` or
        ``"right_far_off"`` (right-signed with a gradient error of at least 1, by accident).
    steps, rejected_steps, force_evals, state_force_evals, rollouts : numpy.ndarray
        Cost counters (uint64).
    wall_s : numpy.ndarray
        Wall time of each route call (its state and Jacobian), s: one measurement where the
        route ran (natively with the rows in parallel; in the lab with ``performance.now()``),
        for reading, never for asserting (NaN where nothing was timed).
    probe_dependent : numpy.ndarray
        bool: the tolerance route's two probe sizes disagree.
    """

    state: Any
    jacobian: Any
    dy: Any
    dv: Any
    forward_error: Any
    forward_unit: Any
    gradient_error: Any
    dv_dy0: Any
    right_sign: Any
    sign: Any
    steps: Any
    rejected_steps: Any
    force_evals: Any
    state_force_evals: Any
    rollouts: Any
    wall_s: Any
    probe_dependent: Any

    def __init__(self, columns: Mapping[str, Any]) -> None:
        for name, value in columns.items():
            setattr(self, name, frozen(value))

    @classmethod
    def _from_rows(cls, rows: List[Mapping[str, Any]]) -> "SweepRoute":
        """From the core's ``RouteRow`` documents, one per stiffness."""
        e = [r["errors"] for r in rows]
        c = [r["cost"] for r in rows]
        cols: Dict[str, Any] = {
            "state": floats([list(r["state"]) for r in rows]),
            "jacobian": [matrix(r["jacobian"]) for r in rows],
            "dy": floats([x["dy"] for x in e]),
            "dv": floats([x["dv"] for x in e]),
            "forward_error": floats([x["forward"] for x in e]),
            "forward_unit": [x["forward_unit"] for x in e],
            "gradient_error": floats([x["gradient"] for x in e]),
            "dv_dy0": floats([x["dv_dy0"] for x in e]),
            "right_sign": [bool(x["right_sign"]) for x in e],
            "sign": [str(x["sign"]) for x in e],
        }
        for name in ("steps", "rejected_steps", "force_evals", "state_force_evals", "rollouts"):
            cols[name] = [int(x[name]) for x in c]
        cols["probe_dependent"] = [bool(r["probe_dependent"]) for r in rows]
        cols["wall_s"] = [float("nan") if r.get("wall_s") is None else float(r["wall_s"]) for r in rows]
        return cls({name: cols[name] for name in ROUTE_COLUMNS})

    def __len__(self) -> int:
        return len(self.gradient_error)

    def __repr__(self) -> str:
        return f"SweepRoute({len(self)} stiffnesses, wrong sign at {sum(not s for s in self.right_sign)})"


class SweepBlame:
    """The blame split across a sweep: arrays ``integrator_share``, ``contact_share``,
    ``ratio``, ``noise_floor``, ``integrator_below_floor`` and ``contact_below_floor``
    (see :class:`Blame`)."""

    integrator_share: Any
    contact_share: Any
    ratio: Any
    noise_floor: Any
    integrator_below_floor: Any
    contact_below_floor: Any

    def __init__(self, columns: Mapping[str, Any]) -> None:
        for name, value in columns.items():
            setattr(self, name, frozen(value))

    @classmethod
    def _from_rows(cls, rows: List[Mapping[str, Any]]) -> "SweepBlame":
        """From the core's ``Blame`` documents, one per stiffness."""
        return cls({name: [bool(r[name]) for r in rows] if name.endswith("_below_floor")
                    else floats([r[name] for r in rows]) for name in BLAME_COLUMNS})

    def __repr__(self) -> str:
        return f"SweepBlame({len(self.integrator_share)} stiffnesses)"


# The lab's nine-point grid of the divergence exponent: log10 k = 4, 4.5, ..., 8.
_LAB_GRID = (4.0, 8.0, 2)


class SweepResult(Json):
    """What both packages' ``Sweep`` share, built from the core's sweep answer (its columns or
    rows, ``options``, ``exponent``/``exponent_error``, ``wrong_sign``): the fixed route's
    readouts at the top level, the exponent, ``to_dict`` and ``repr``. A package's ``Sweep``
    sets the attributes below and supplies the core calls (``_core_document``, ``_fit_lab``,
    ``_log_grid``) and its errors module.

    ``options`` is the core's ``SweepOptions`` the sweep ran with (``dt``, ``tolerance``: the
    tolerance route's options or None, ``corrected``, ``blame``), as a dict.
    """

    drop: Any
    dt: float
    k: Any
    exact: Route
    fixed: SweepRoute
    tolerance: Optional[SweepRoute]
    corrected: Optional[SweepRoute]
    blame: Optional[SweepBlame]
    tolerance_cost_ratio: Any
    options: Dict[str, Any]
    # The core's answer: ``exponent``, ``exponent_error``, ``wrong_sign`` and the rest.
    _answer: Mapping[str, Any]
    # The package's FerroError and InvalidParameter classes, and the module holding every class.
    _errors: Tuple[Type[Exception], Type[Exception]]
    _error_module: Any

    def _core_document(self) -> Dict[str, Any]:  # pragma: no cover - each package's Sweep supplies it
        """The core's serialisation of the sweep: its options (``dt``, ``tolerance``,
        ``blame``, ``corrected``), ``exact``, ``rows``."""
        raise NotImplementedError

    def _fit_own(self) -> Mapping[str, Any]:
        """The core's exponent fit on the sweep's own points with k in [1e4, 1e8], or its
        refusal raised."""
        if self._answer["exponent"] is None:
            raise_refusal(self._error_module, self._answer["exponent_error"])
        return self._answer["exponent"]

    def _fit_lab(self) -> Mapping[str, Any]:  # pragma: no cover
        """The core's divergence exponent at this drop and dt (the lab's nine points)."""
        raise NotImplementedError

    def _log_grid(self, lo: float, hi: float, per_decade: int) -> Any:  # pragma: no cover
        """The core's stiffness grid."""
        raise NotImplementedError

    # The fixed route's readouts, at the top level.
    @property
    def state(self) -> Any:
        """x(T) of the fixed route, shape (n, 2)."""
        return self.fixed.state

    @property
    def jacobian(self) -> Any:
        """J of the fixed route, shape (n, 2, 2), row-major."""
        return self.fixed.jacobian

    @property
    def dy(self) -> Any:
        """|y - y_exact| of the fixed route, m."""
        return self.fixed.dy

    @property
    def dv(self) -> Any:
        """|v - v_exact| of the fixed route, m/s."""
        return self.fixed.dv

    @property
    def forward_error(self) -> Any:
        """The larger of dy and dv; unit in ``forward_unit``."""
        return self.fixed.forward_error

    @property
    def forward_unit(self) -> Any:
        """"m" or "m/s" per row: the unit of ``forward_error``."""
        return self.fixed.forward_unit

    @property
    def gradient_error(self) -> Any:
        """max_ij |J - J_exact| / max_ij |J_exact| of the fixed route."""
        return self.fixed.gradient_error

    @property
    def dv_dy0(self) -> Any:
        """The fixed route's dv(T)/dy0."""
        return self.fixed.dv_dy0

    @property
    def right_sign(self) -> Any:
        """bool: the fixed route's dv(T)/dy0 has the exact answer's sign."""
        return self.fixed.right_sign

    def __len__(self) -> int:
        return len(self.k)

    def exponent(self, points: str = "lab") -> ExponentFit:
        """The divergence exponent: the slope of log(gradient error) on log(k).

        The number depends on the grid it is fitted on: the error is not a clean power of
        k (it steps where the first contact step changes), so a fit on 41 points between
        1e4 and 1e8 (a 61-point sweep from 1e2 to 1e8) reads 0.447 where the lab's nine
        points read 0.476 at the default drop and dt = 1e-4.

        Parameters
        ----------
        points : {"lab", "all"}
            ``"lab"`` (default): the lab's and the CLI's definition, nine points
            k = 1e4, 10^4.5, ..., 1e8 (:func:`divergence_exponent`); the sweep must hold those
            stiffnesses. ``"all"``: every one of the sweep's own points with k in [1e4, 1e8].

        ``ExponentFit.points`` says how many were used.

        Raises
        ------
        InvalidParameter
            ``"lab"``: the sweep lacks one of the nine stiffnesses; ``"all"``: fewer than two
            of its stiffnesses lie in [1e4, 1e8].

        Examples
        --------
        >>> import numpy as np, ferromotion as fm
        >>> s = fm.sweep(fm.Drop(), k=np.logspace(2, 8, 61), dt=1e-4)
        >>> lab, own = s.exponent(), s.exponent(points="all")
        >>> (lab.points, round(lab.slope, 3)), (own.points, round(own.slope, 3))
        ((9, 0.476), (41, 0.447))
        """
        invalid = self._errors[1]
        if points == "all":
            return ExponentFit._from_core(self._fit_own())
        if points != "lab":
            raise invalid(f"invalid parameter `points` = {points!r}: must be \"lab\" or \"all\"")
        ks = [float(x) for x in self.k]
        nine = [float(x) for x in self._log_grid(*_LAB_GRID)]
        missing = [k for k in nine if not any(abs(x - k) <= 1e-9 * abs(k) for x in ks)]
        if missing:
            raise invalid(
                f"invalid parameter `k`: the lab's nine-point exponent needs k = 1e4, 10^4.5, ..., 1e8 in the sweep; "
                f"{len(missing)} of them are missing (exponent(points=\"all\") fits the sweep's own points)")
        return ExponentFit._from_core(self._fit_lab())

    def to_dict(self) -> Dict[str, Any]:
        """The drop, then the core's serialisation (the options: ``dt``, ``tolerance``,
        ``blame``, ``corrected``; ``exact``, ``rows``), then the fitted exponent: the lab's nine
        points when the sweep holds them, else its own points in [1e4, 1e8] (``points`` says
        how many), None when neither fits."""
        exponent: Optional[Dict[str, Any]] = None
        for points in ("lab", "all"):
            try:
                exponent = self.exponent(points).to_dict()
                break
            except self._errors[0]:
                pass
        return {"drop": self.drop.to_dict(), **self._core_document(), "exponent": exponent}

    def to_json(self, indent: Optional[int] = None) -> str:
        """:meth:`to_dict` as JSON."""
        return json.dumps(self.to_dict(), indent=indent)

    def __repr__(self) -> str:
        n = len(self)
        if n == 0:
            return f"Sweep(no stiffnesses, dt = {self.dt:g} s)"
        tol = self.options["tolerance"]
        routes = "fixed" + ("" if tol is None
                            else f" + tolerance (rtol = {tol['rtol']:g}, jacobian = {tol['jacobian']})")
        routes += "" if self.corrected is None else " + corrected"
        wrong = sum(not s for s in self.right_sign)
        return (
            f"Sweep({n} stiffnesses from {min(self.k):.3g} to {max(self.k):.3g} N/m, dt = {self.dt:g} s, "
            f"routes: {routes}{', blame' if self.blame is not None else ''}; "
            f"wrong sign at {wrong} of {n}; gradient error {min(self.gradient_error):.3g} .. "
            f"{max(self.gradient_error):.3g})"
        )


# ---------------------------------------------------------------------------------------
# Gradient checks


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class CheckDirection(Json):
    """The check along one direction p (``docs/checking.md`` states the rules).

    Read from a receipt of either schema version: fields a version-1 receipt does not carry
    are NaN (arrays) or None.

    Attributes
    ----------
    label : str
        ``"random 0"``, ``"coordinate 1"``, ...
    direction : numpy.ndarray
        The displacement per unit probe size, p = scale * d (d a unit vector), shape (n,).
    claimed : float
        The claimed directional derivative g . p.
    verdict : str
        This direction's verdict (the check's words; see :class:`Receipt`).
    eps : numpy.ndarray
        The probe sizes the walk took, largest first, shape (m,).
    fd : numpy.ndarray
        (f(x + eps p) - f(x - eps p)) / (2 eps) per probe (NaN where an evaluation failed).
    error : numpy.ndarray
        Relative discrepancy |g . p - fd| / |fd| per probe (version 1: the normalized error
        |g . p - fd| / max(1, |g . p|, |fd|)).
    abs_error : numpy.ndarray
        Absolute discrepancy |g . p - fd| per probe.
    resolution : numpy.ndarray
        The differences' own error estimate per probe (round-off plus truncation; NaN where
        it cannot be read).
    probe_classification : tuple of str
        Per probe: ``"smooth"`` (measured smooth), ``"non-smooth"`` (the curve shows a kink
        or jump within +-eps), ``"unmeasured"``, ``"event-crossing"`` (the event sequence
        differs between +eps and -eps) or ``"grazing"``.
    best_eps : float or None
        The probe the verdict is read at (smallest resolution among probes measured smooth).
    best_error, best_abs_error : float or None
        Relative and absolute discrepancy there (version 1: the normalized error, None).
    best_resolution, floor : float or None
        The differences' resolution E there, and the floor 3 E below which a discrepancy
        cannot be told from noise and truncation.
    smooth_below : float or None
        The largest probe measured smooth (None: none was).
    taylor_slope : float or None
        Fitted slope of the Taylor remainder on log-log axes: ~1 for a right gradient, ~0
        for a wrong one (~2 when ``taylor_second_order``); None when nothing clears the noise.
    taylor_second_order : bool
        A Hessian-vector product was claimed and the second-order remainder is reported.
    classification : str
        The direction's: ``"smooth"``, ``"non-smooth"``, ``"unmeasured"``,
        ``"event-crossing"`` or ``"grazing"``.
    certified : bool
        The direction agrees (verified, within noise, or in absolute terms).
    kink : dict or None
        The one-sided slopes at x when they differ beyond noise (a kink exactly at x; the
        direction is refused): ``eps``, ``forward``, ``backward``, ``noise`` and
        ``claim_equals`` (``"forward"``, ``"backward"``, ``"average"`` or ``"neither"``);
        None otherwise (and for receipts before version 3).
    scatter : float or None
        The central difference's scatter at the probe scale, when measured.
    probe_noise : float or None
        f's noise at the probe scale, when it exceeded the stencils' and the direction was read
        again with it.
    """

    label: str
    direction: Any
    claimed: float
    verdict: str
    eps: Any
    fd: Any
    error: Any
    abs_error: Any
    resolution: Any
    probe_classification: Tuple[str, ...]
    best_eps: Optional[float]
    best_error: Optional[float]
    best_abs_error: Optional[float]
    best_resolution: Optional[float]
    floor: Optional[float]
    smooth_below: Optional[float]
    taylor_slope: Optional[float]
    taylor_second_order: bool
    classification: str
    certified: bool
    kink: Optional[Dict[str, Any]] = None
    scatter: Optional[float] = None
    probe_noise: Optional[float] = None

    @classmethod
    def _from_core(cls, d: Mapping[str, Any]) -> "CheckDirection":
        """From one direction of the core's receipt document (schema version 1, 2 or 3)."""
        def column(key: str) -> Any:
            return frozen([math.nan if p.get(key) is None else float(p[key]) for p in d["probes"]], "float64")

        def number(key: str) -> Optional[float]:
            return None if d.get(key) is None else float(d[key])

        v1 = "verdict" not in d
        certified = bool(d["certified"])
        if v1:
            verdict = "verified" if certified else ("not-verified" if d["classification"] == "smooth" else "refused")
        else:
            verdict = d["verdict"]
        return cls(label=d["label"], direction=frozen(floats(list(d["direction"])), "float64"),
                   claimed=float(d["claimed"]), verdict=verdict, eps=column("eps"), fd=column("fd"),
                   error=column("error" if v1 else "rel_error"), abs_error=column("abs_error"),
                   resolution=column("resolution"),
                   probe_classification=tuple(p["classification"] for p in d["probes"]),
                   best_eps=number("best_eps"), best_error=number("best_error" if v1 else "rel_error"),
                   best_abs_error=number("abs_error"), best_resolution=number("resolution"),
                   floor=number("floor"), smooth_below=number("smooth_below"),
                   taylor_slope=number("taylor_slope"), taylor_second_order=bool(d["taylor_second_order"]),
                   classification=d["classification"], certified=certified, kink=d.get("kink"),
                   scatter=number("scatter"), probe_noise=number("probe_noise"))

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types (arrays as lists, NaN as None)."""
        out: Dict[str, Any] = json_ready({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})
        return out

    def __repr__(self) -> str:
        best = ("no probe measured smooth" if self.best_error is None
                else f"relative error {self.best_error:.2e} at eps {self.best_eps:.1e}")
        slope = "-" if self.taylor_slope is None else f"{self.taylor_slope:.2f}"
        return (f"CheckDirection({self.label}: {self.verdict}, {self.classification}, {best}, Taylor slope {slope}, "
                f"{'certified' if self.certified else 'not certified'})")


class Receipt(Json):
    """A gradient check's receipt: everything needed to judge its verdict later.

    Made by :func:`check_gradient` and :func:`check_example`; the core writes it, this
    class reads it. ``to_json()`` is the document ``receipt.schema.json`` describes
    (see :func:`receipt_schema`).

    Attributes
    ----------
    verdict : str
        ``"verified"`` (right to relative accuracy ``tol`` in every direction where the
        differences resolve the derivative), ``"verified-within-noise"`` (agrees within the
        floor f's evaluation noise allows, coarser than ``tol``: see ``noise``),
        ``"verified-absolute"`` (every directional derivative is below what differences
        resolve: agreement in absolute terms only), ``"not-verified"`` (a discrepancy beyond
        both the floor and ``tol``) or ``"refused"`` (a direction crosses an event, grazes,
        or has no probe measured smooth). ``docs/checking.md`` states the rules.
    why : str
        The verdict's reason, in words.
    objective : dict
        ``name``, ``units``, ``description``, ``route``, ``integrator``, ``tolerances``
        (a list of [name, value] pairs): what was certified against, and how the gradient
        was produced.
    x, gradient : numpy.ndarray
        The point and the claimed gradient, shape (n,).
    directions : tuple of CheckDirection
        Per direction: the probe sweep, the classification and the Taylor slope.
    max_error, median_error : float
        Over the directions' relative errors at their best probes (NaN when no direction had
        a probe measured smooth; version 1: normalized errors).
    max_abs_error : float
        The largest absolute error at a best probe (NaN for version 1).
    noise : dict or None
        f's measured evaluation noise: ``sigma`` (f's units), ``f_scale``, ``relative``,
        ``step``, ``evaluations`` and ``cause`` (None for version 1).
    evaluations : int
        Objective evaluations spent.
    options : dict
        The check's options as the core used them.
    environment : dict
        ``core_version``, ``target`` and ``extra`` ([key, value] pairs, see
        :func:`environment`).
    guarantee : dict or None
        What the random directions guarantee: ``directions``, ``dimension``, ``delta`` (an
        error of at least delta |g| in norm reads not-verified with probability at least
        1 - ``beta``), ``beta``, ``beta_at_one_percent`` and ``coordinates`` (None before
        version 3, or without random directions).
    outputs : int or None
        For a Jacobian check, f's number of outputs m (``gradient`` then holds J row-major).
    """

    def __init__(self, document: str, summary: str) -> None:
        """From the core's receipt document (JSON text) and its one-line summary."""
        d = json.loads(document)
        self._dict: Dict[str, Any] = d
        self._summary = summary
        report = d["report"]
        self.schema: str = d["schema"]
        self.verdict: str = report["verdict"]
        self.why: str = report["why"]
        self.objective: Dict[str, Any] = d["objective"]
        self.x: Any = frozen(floats(d["x"]), "float64")
        self.gradient: Any = frozen(floats(d["gradient"]), "float64")
        self.directions: Tuple[CheckDirection, ...] = tuple(CheckDirection._from_core(r) for r in report["directions"])
        self.max_error: float = math.nan if report["max_error"] is None else report["max_error"]
        self.median_error: float = math.nan if report["median_error"] is None else report["median_error"]
        self.max_abs_error: float = math.nan if report.get("max_abs_error") is None else report["max_abs_error"]
        self.noise: Optional[Dict[str, Any]] = report.get("noise")
        self.guarantee: Optional[Dict[str, Any]] = report.get("guarantee")
        self.outputs: Optional[int] = d.get("outputs")
        self.evaluations: int = report["evaluations"]
        self.options: Dict[str, Any] = report["options"]
        self.environment: Dict[str, Any] = d["environment"]

    @property
    def verified(self) -> bool:
        """The verdict is plain ``"verified"`` (not within noise, not absolute)."""
        return self.verdict == "verified"

    @property
    def agrees(self) -> bool:
        """The gradient agrees: ``"verified"``, ``"verified-within-noise"`` or ``"verified-absolute"``."""
        return self.verdict.startswith("verified")

    def summary(self) -> str:
        """One line: the objective, the verdict, why, and the errors (the core's text)."""
        return self._summary

    def to_dict(self) -> Dict[str, Any]:
        """The receipt document as plain Python types (non-finite numbers as None)."""
        out: Dict[str, Any] = json.loads(json.dumps(self._dict))
        return out

    def to_json(self, indent: Optional[int] = 2) -> str:
        """The receipt document as JSON text (UTF-8 characters kept as they are)."""
        return json.dumps(self._dict, indent=indent, allow_nan=False, ensure_ascii=False)

    def __repr__(self) -> str:
        name = self.objective["name"] or "unnamed objective"
        return (f"Receipt({name}: {self.verdict}, {len(self.directions)} directions, "
                f"max relative error {self.max_error:.2e})")


def fmt_us(seconds: float) -> str:
    """A wall time in µs with one decimal and thousands separated (4.8, 250.3, 8,512.0): one unit
    for a whole column, whose numbers then align at the decimal point when right-aligned."""
    return f"{seconds * 1e6:,.1f}" if math.isfinite(seconds) else "n/a"


#: The core's three sign states as the lab prints them (web/js/format.js `signText`), and the
#: tables of `ferromotion audit` with and without --engine.
SIGN_TEXT = {"right": "RIGHT SIGN", "wrong": "WRONG SIGN", "right_far_off": "RIGHT SIGN, FAR OFF"}

#: The core's three sign states as the equal-budget table prints them.
BUDGET_SIGN = {"right": "ok", "wrong": "WRONG", "right_far_off": "FAR OFF"}


class EqualBudget(Dict[str, Any]):
    """Every route at one force-evaluation budget, and the probe-size trap: the core's
    document (made by ``fm.equal_budget``), read as a dict (``b["rows"]``, ``b["probe_trap"]``,
    ``b["flow_jacobian"]``, ``b["probe_spread"]`` ...) that prints as a one-line summary;
    :meth:`format_table` prints the table. Nothing here recomputes a number.
    """

    __slots__ = ()

    def format_table(self) -> str:
        """The routes and the probe-size trap as text, one line per route and per probe
        (what ``ferromotion audit --budget N`` prints)."""
        lines = [f"Equal budget: {self['budget']:,} force evaluations per Jacobian at k = {self['k']:.0e} N/m "
                 f"(flow's dv(T)/dy0 = {self['flow_jacobian'][2]:.4f})",
                 f"  {'route':<18} {'setting':<32} {'evals':>8} {'wall (µs)':>10} {'grad err':>10} {'state err':>10} "
                 f"{'dv/dy0':>10}  sign"]
        for r in self["rows"]:
            if r["gradient_error"] is None:  # no rtol on the grid fits the budget: the row has no numbers
                lines.append(f"  {r['route']:<18} {r['setting']}")
                continue
            wall = "-" if r.get("wall_s") is None else fmt_us(r["wall_s"])
            lines.append(f"  {r['route']:<18} {r['setting']:<32} {r['force_evals']:>8,} {wall:>10} "
                         f"{r['gradient_error']:>10.2e} {r['state_error']:>10.2e} {r['dv_dy0']:>10.4f}  "
                         f"{BUDGET_SIGN[r['sign']]}")
        lines.append("Probe-size trap: central differences of uniform-step rollouts, dv(T)/dy0 and the Jacobian's error")
        lines.append(f"  {'probe':>8} {'Euler':>12} {'error':>10} {'RK4':>12} {'error':>10}")
        for p in self["probe_trap"]:
            lines.append(f"  {p['probe']:>8.0e} {p['euler_dv_dy0']:>12.4f} {p['euler_error']:>10.2e} "
                         f"{p['rk4_dv_dy0']:>12.4f} {p['rk4_error']:>10.2e}")
        return "\n".join(lines)

    def to_dict(self) -> Dict[str, Any]:
        """The core's document as plain dicts and lists (a copy)."""
        d: Dict[str, Any] = json.loads(json.dumps(dict(self)))
        return d

    def to_json(self, indent: Optional[int] = None) -> str:
        """The core's document as JSON text (non-finite numbers become null)."""
        return json.dumps(json_ready(dict(self)), indent=indent, allow_nan=False)

    def __repr__(self) -> str:
        wrong = [r["route"] for r in self["rows"] if r.get("sign") == "wrong"]
        return (f"EqualBudget(k = {self['k']:.0e} N/m, budget = {self['budget']:,} force evaluations: "
                f"{len(self['rows'])} routes, wrong sign: {', '.join(wrong) if wrong else 'none'}; "
                f"{len(self['probe_trap'])} probe sizes; .format_table() prints them)")

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # IPython: the same short line, not its dict printer
        p.text(repr(self))
