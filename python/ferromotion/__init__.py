"""Ferromotion: certify gradients through contact.

A point mass dropped onto the ground bounces once before the final time T. Every route
below returns its state x(T) = (y, v) and the Jacobian J = dx(T)/dx(0) as numpy arrays:
``state`` of shape (2,) in (m, m/s) and ``jacobian`` of shape (2, 2), rows (y, v) and
columns (y0, v0), so ``J[1, 0]`` is dv(T)/dy0. Every number is computed by the Rust core
(``ferromotion-core``); this package converts and presents.

Examples
--------
>>> import ferromotion as fm
>>> drop = fm.Drop()
>>> truth = fm.exact(drop)
>>> autodiff = fm.fixed(drop, k=1e6, dt=1e-4)
>>> bool(truth.jacobian[1, 0] > 0), bool(autodiff.jacobian[1, 0] > 0)   # the sign flips
(True, False)
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union, overload

import numpy as np

from . import _core
from ._core import (
    FerroError,
    Grazing,
    HiddenState,
    InvalidParameter,
    NoImpact,
    NonFinite,
    ProbeDependent,
    ContactSolveFailed,
    Unstable,
    ScenarioError,
    StepDoesNotDivide,
    StepSizeUnderflow,
    TooManySteps,
    TwoEventsInOneStep,
)

__version__: str = _core.__version__

__all__ = [
    "Arm",
    "Bench",
    "Blame",
    "Descent",
    "DescentArm",
    "DescentRun",
    "Drop",
    "FerroError",
    "Fit",
    "Grazing",
    "HiddenState",
    "InvalidParameter",
    "Landscape",
    "NoImpact",
    "NonFinite",
    "ProbeDependent",
    "ContactSolveFailed",
    "Unstable",
    "Refinement",
    "Route",
    "ScenarioError",
    "StepDoesNotDivide",
    "StepSizeUnderflow",
    "Sweep",
    "SweepBlame",
    "SweepGrid",
    "SweepRoute",
    "TooManySteps",
    "TwoEventsInOneStep",
    "blame",
    "contact_share_exponent",
    "corrected",
    "descent",
    "divergence_exponent",
    "dt_refinement",
    "evaluate",
    "exact",
    "fixed",
    "flow",
    "limit_restitution",
    "log_grid",
    "matched_dt",
    "realised_restitution",
    "standard_arms",
    "sweep",
    "time_of_impact_term",
    "tolerance",
]

# The core's defaults, read once so that signatures show them without restating them.
_DEFAULTS: Dict[str, Any] = _core.DEFAULTS
_DROP = _DEFAULTS["drop"]
_TOL = _DEFAULTS["tolerance"]
_DT: float = _DEFAULTS["dt"]

# Stiffnesses per core call in a sweep when a progress bar is shown (it moves between calls).
_CHUNK = 16
# Seconds before a sweep's progress bar appears: sweeps that finish sooner print nothing.
_PROGRESS_DELAY = 0.5


def _frozen(a: Any) -> np.ndarray:
    """A read-only view of an array returned by the core (results are immutable)."""
    arr = np.asarray(a)
    arr.setflags(write=False)
    return arr


class _Json:
    """``to_json`` for result objects that have a ``to_dict``."""

    def to_dict(self) -> Dict[str, Any]:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def to_json(self, indent: Optional[int] = None) -> str:
        """:meth:`to_dict` as JSON text (non-finite numbers become null)."""
        return json.dumps(_json_ready(self.to_dict()), indent=indent, allow_nan=False)


def _json_ready(x: Any) -> Any:
    """NaN and infinities as None (JSON has no such numbers), numpy scalars and arrays as
    Python numbers and lists."""
    if isinstance(x, dict):
        return {k: _json_ready(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_ready(v) for v in x]
    if isinstance(x, np.ndarray):
        return _json_ready(x.tolist())
    if isinstance(x, np.generic):
        return _json_ready(x.item())
    if isinstance(x, float) and not np.isfinite(x):
        return None
    return x


def _float_array(value: Any, name: str) -> np.ndarray:
    """float64 numbers from a number, list or array; InvalidParameter otherwise."""
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InvalidParameter(f"invalid parameter `{name}`: expected an array of numbers of shape (n,): {e}") from e


_ArrayLike = Union[Sequence[float], np.ndarray]


def _fmt_matrix(j: np.ndarray) -> str:
    return "[[" + ", ".join(f"{x:.4g}" for x in j[0]) + "], [" + ", ".join(f"{x:.4g}" for x in j[1]) + "]]"


@dataclasses.dataclass(frozen=True)
class Drop(_Json):
    """A point mass dropped onto flat ground at y = 0 (SI units throughout).

    Validated by the core at construction: every number finite; height, t_final,
    gravity and mass > 0; zeta in [0, 1); and at least one impact before t_final.

    Parameters
    ----------
    height : float
        Initial height y0, m.
    velocity : float
        Initial velocity v0, m/s (positive up).
    t_final : float
        Final time T, s.
    zeta : float
        Damping ratio of the penalty contact law, held fixed while k sweeps.
    gravity : float
        Gravitational acceleration g, m/s^2.
    mass : float
        Mass m, kg.

    Raises
    ------
    InvalidParameter
        A parameter is non-finite or out of range.
    NoImpact
        The drop does not reach the ground before t_final.

    Examples
    --------
    >>> import ferromotion as fm
    >>> fm.Drop()
    Drop(height=1.0, velocity=0.0, t_final=0.8, zeta=0.1606, gravity=9.81, mass=1.0)
    >>> round(fm.Drop().impact_speed(), 2)   # sqrt(2 g h)
    4.43
    >>> fm.Drop(height=100.0)
    Traceback (most recent call last):
        ...
    ferromotion.NoImpact: no impact before t_final = 0.8 s: ...
    """

    height: float = _DROP["height"]
    velocity: float = _DROP["velocity"]
    t_final: float = _DROP["t_final"]
    zeta: float = _DROP["zeta"]
    gravity: float = _DROP["gravity"]
    mass: float = _DROP["mass"]

    def __post_init__(self) -> None:
        _core.validate_drop(self)
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, float(getattr(self, f.name)))

    def impact_speed(self) -> float:
        """Speed of the first impact, m/s: sqrt(v0^2 + 2 g h)."""
        return _core.impact_speed(self)

    def first_impact_time(self) -> float:
        """Time of the first ground contact in free flight, s."""
        return _core.first_impact_time(self)

    def to_dict(self) -> Dict[str, float]:
        """The six parameters as a dict."""
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Route(_Json):
    """One route's answer: x(T), its Jacobian, and what it cost.

    Attributes
    ----------
    route : str
        ``"exact"``, ``"fixed"``, ``"corrected"``, ``"flow"`` or ``"tolerance"``.
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

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.fixed(fm.Drop(), k=1e6, dt=1e-4)
    >>> r.state.shape, r.jacobian.shape, r.jacobian.dtype
    ((2,), (2, 2), dtype('float64'))
    >>> r.steps, r.force_evals, r.rollouts
    (8000, 8000, 1)
    """

    route: str
    state: np.ndarray
    jacobian: np.ndarray
    steps: int
    rejected_steps: int
    force_evals: int
    state_force_evals: int
    rollouts: int
    probe_gap: Optional[float]
    probe_dependent: bool

    @classmethod
    def _from_core(cls, route: str, d: Mapping[str, Any]) -> "Route":
        return cls(
            route=route,
            state=_frozen(d["state"]),
            jacobian=_frozen(d["jacobian"]),
            steps=d["steps"],
            rejected_steps=d["rejected_steps"],
            force_evals=d["force_evals"],
            state_force_evals=d["state_force_evals"],
            rollouts=d["rollouts"],
            probe_gap=d["probe_gap"],
            probe_dependent=d["probe_dependent"],
        )

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
        return text + ")"

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types (lists for the arrays), ready for ``json.dumps``."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["state"] = self.state.tolist()
        d["jacobian"] = self.jacobian.tolist()
        return d


@dataclasses.dataclass(frozen=True, repr=False)
class Fit(_Json):
    """A least-squares line through (log10 x, log10 y): y ~ x**slope.

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

    def to_dict(self) -> Dict[str, Any]:
        """The four numbers as a dict."""
        return dataclasses.asdict(self)

    def __repr__(self) -> str:
        return f"Fit(slope = {self.slope:.4g}, R^2 = {self.r2:.4g}, {self.points} points)"


@dataclasses.dataclass(frozen=True, repr=False)
class Blame(_Json):
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
        How far J_flow moves when its root-finding tolerance goes from 1e-10 to 1e-14.
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

    def to_dict(self) -> Dict[str, Any]:
        """The readout as a dict."""
        return dataclasses.asdict(self)

    def __repr__(self) -> str:
        def share(value: float, below: bool) -> str:
            return "< floor" if below else f"{value:.4g}"

        return (f"Blame(integrator share {share(self.integrator_share, self.integrator_below_floor)}, "
                f"contact share {share(self.contact_share, self.contact_below_floor)}, "
                f"ratio {self.ratio:.4g}, noise floor {self.noise_floor:.3g})")


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Refinement(_Json):
    """The fixed route's gradient error at base_dt, base_dt/10 and base_dt/100.

    Attributes
    ----------
    base_dt : float
        The base step, s.
    errors : numpy.ndarray
        Gradient errors at the three steps, shape (3,).
    ratio_10, ratio_100 : float
        errors[1] / errors[0] and errors[2] / errors[0] (always against the base step).
    """

    base_dt: float
    errors: np.ndarray
    ratio_10: float
    ratio_100: float

    def to_dict(self) -> Dict[str, Any]:
        """The readout as a dict (``errors`` as a list)."""
        return {"base_dt": self.base_dt, "errors": self.errors.tolist(), "ratio_10": self.ratio_10,
                "ratio_100": self.ratio_100}

    def __repr__(self) -> str:
        return (f"Refinement(base dt = {self.base_dt:g} s: gradient error x{self.ratio_10:.3g} at dt/10, "
                f"x{self.ratio_100:.3g} at dt/100)")


# ---------------------------------------------------------------------------------------
# Routes


def exact(drop: Drop, *, restitution: Optional[float] = None,
          graze_speed: float = _DEFAULTS["graze_speed"]) -> Route:
    """The rigid reference: flight maps composed with the saltation matrices of the impacts.

    Parameters
    ----------
    drop : Drop
        The drop.
    restitution : float, optional
        Coefficient of restitution in [0, 1]. Default: the push-only penalty law's
        k -> infinity limit for ``drop.zeta`` (see :func:`limit_restitution`).
    graze_speed : float
        Impacts slower than this (m/s) are refused as grazing.

    Returns
    -------
    Route

    Raises
    ------
    Grazing
        An impact slower than ``graze_speed``.

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.exact(fm.Drop())
    >>> round(float(r.jacobian[1, 0]), 2)   # the time-of-impact term (1+e) g / |v|
    3.61
    """
    return Route._from_core("exact", _core.exact(drop, restitution=restitution, graze_speed=graze_speed))


def fixed(drop: Drop, k: float, dt: float = _DT, *, max_steps: int = _DEFAULTS["max_steps"]) -> Route:
    """Semi-implicit Euler on the push-only penalty law, Jacobian by forward-mode tangent.

    This is what an autodiff framework (JAX, PyTorch, Warp, Brax) returns for the loop:
    the contact branch is not differentiated.

    Parameters
    ----------
    drop : Drop
        The drop.
    k : float
        Penalty stiffness, N/m.
    dt : float
        Fixed step, s; must divide ``drop.t_final`` into a whole number of steps.
    max_steps : int
        Refuse rollouts longer than this.

    Returns
    -------
    Route

    Raises
    ------
    InvalidParameter, StepDoesNotDivide, TooManySteps, NonFinite

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.fixed(fm.Drop(), k=1e6, dt=1e-4)
    >>> bool(r.jacobian[1, 0] < 0)   # the true dv(T)/dy0 is positive
    True
    """
    return Route._from_core("fixed", _core.fixed(drop, k, dt, max_steps=max_steps))


def corrected(drop: Drop, k: float, dt: float = _DT, *, locate: bool = _DEFAULTS["locate"],
              max_steps: int = _DEFAULTS["max_steps"]) -> Route:
    """The fixed step with the missing event term restored, at the fixed route's cost.

    Each contact switch (entry, force returning to zero, re-engagement) is located inside
    its step and the step is split there; the tangent follows the switch times.

    Parameters
    ----------
    drop : Drop
        The drop.
    k : float
        Penalty stiffness, N/m.
    dt : float
        Fixed step, s; must divide ``drop.t_final``.
    locate : bool
        False applies the continuous entry saltation at the step that detects contact
        instead of locating the switches (a shortcut, kept so that its error can be measured).
    max_steps : int
        Refuse rollouts longer than this.

    Returns
    -------
    Route

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.corrected(fm.Drop(), k=1e6, dt=1e-4)
    >>> bool(r.jacobian[1, 0] > 0), r.force_evals >= fm.fixed(fm.Drop(), k=1e6, dt=1e-4).force_evals
    (True, True)
    """
    return Route._from_core("corrected", _core.corrected(drop, k, dt, locate=locate, max_steps=max_steps))


def flow(drop: Drop, k: float, *, root_rtol: float = _DEFAULTS["root_rtol"],
         max_events: int = _DEFAULTS["max_events"]) -> Route:
    """The exact derivative of the continuous penalty ODE (closed form per phase).

    No integrator is involved: this is the reference of the blame split.

    Parameters
    ----------
    drop : Drop
        The drop.
    k : float
        Penalty stiffness, N/m.
    root_rtol : float
        Root-finding tolerance on the event times, relative to T.
    max_events : int
        Cap on contact switches before T.

    Returns
    -------
    Route

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.flow(fm.Drop(), k=1e6)
    >>> bool(r.jacobian[1, 0] > 0)
    True
    """
    return Route._from_core("flow", _core.flow(drop, k, root_rtol=root_rtol, max_events=max_events))


def tolerance(drop: Drop, k: float, *, rtol: float = _TOL["rtol"], atol: Optional[float] = _TOL["atol"],
              events: bool = _TOL["events"], eps: float = _TOL["eps"],
              max_steps: int = _TOL["max_steps"]) -> Route:
    """Dormand-Prince 5(4) with error control; J by central differences of 8 rollouts.

    Parameters
    ----------
    drop : Drop
        The drop.
    k : float
        Penalty stiffness, N/m.
    rtol : float
        Relative tolerance of each rollout.
    atol : float, optional
        Absolute tolerance (m and m/s); default rtol * 1e-2.
    events : bool
        Stop each rollout exactly at the contact switches and restart there.
    eps : float
        Larger probe size; the smaller is eps/2, combined by Richardson extrapolation.
    max_steps : int
        Cap on accepted plus rejected steps per rollout.

    Returns
    -------
    Route
        ``probe_dependent`` is True when the two probe sizes disagree by more than
        1e-3 max|J|: the value is shown but should not be trusted.

    Raises
    ------
    InvalidParameter, TooManySteps, StepSizeUnderflow, NonFinite

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.tolerance(fm.Drop(), k=1e6, rtol=1e-6, events=True)
    >>> r.rollouts, bool(r.jacobian[1, 0] > 0)
    (8, True)
    """
    return Route._from_core(
        "tolerance",
        _core.tolerance(drop, k, rtol=rtol, atol=atol, events=events, eps=eps, max_steps=max_steps),
    )


# ---------------------------------------------------------------------------------------
# Readouts


def blame(drop: Drop, k: float, dt: float = _DT) -> Blame:
    """Split the fixed route's Jacobian error into integrator and contact-model shares.

    Parameters
    ----------
    drop : Drop
        The drop.
    k : float
        Penalty stiffness, N/m.
    dt : float
        Fixed step, s.

    Returns
    -------
    Blame

    Examples
    --------
    >>> import ferromotion as fm
    >>> b = fm.blame(fm.Drop(), k=1e6, dt=1e-4)
    >>> b.ratio > 1   # at 1e6 the integrator's share dominates
    True
    """
    return Blame(**_core.blame(drop, k, dt))


def divergence_exponent(drop: Drop, dt: float = _DT) -> Fit:
    """Slope of log(gradient error) on log(k) over k = 10^4, 10^4.5, ..., 10^8 at step dt.

    Examples
    --------
    >>> import ferromotion as fm
    >>> fit = fm.divergence_exponent(fm.Drop(), dt=1e-4)
    >>> fit.points, bool(0 < fit.slope < 1)
    (9, True)
    """
    return Fit(**_core.divergence_exponent(drop, dt))


def contact_share_exponent(drop: Drop) -> Fit:
    """Fitted exponent of the contact-model share on k = 10^4 .. 10^8 (no dt involved).

    Examples
    --------
    >>> import ferromotion as fm
    >>> round(fm.contact_share_exponent(fm.Drop()).slope, 1)
    -0.5
    """
    return Fit(**_core.contact_share_exponent(drop))


def dt_refinement(drop: Drop, k: float, base_dt: float = _DT) -> Refinement:
    """Gradient error of the fixed route at base_dt, base_dt/10 and base_dt/100.

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.dt_refinement(fm.Drop(), k=1e6, base_dt=1e-4)
    >>> r.errors.shape
    (3,)
    """
    d = _core.dt_refinement(drop, k, base_dt)
    return Refinement(base_dt=d["base_dt"], errors=_frozen(d["errors"]), ratio_10=d["ratio_10"],
                      ratio_100=d["ratio_100"])


def limit_restitution(drop: Drop) -> float:
    """Restitution the push-only law realises as k -> infinity; depends on ``drop.zeta`` alone.

    Examples
    --------
    >>> import ferromotion as fm
    >>> round(fm.limit_restitution(fm.Drop()), 3)
    0.632
    """
    return _core.limit_restitution(drop)


def realised_restitution(drop: Drop, k: float, speed: Optional[float] = None) -> Optional[float]:
    """Restitution the push-only law realises at finite k for an impact at ``speed`` (m/s).

    ``speed`` defaults to the drop's impact speed. Returns None when the mass never
    leaves the ground.

    Examples
    --------
    >>> import ferromotion as fm
    >>> e_soft = fm.realised_restitution(fm.Drop(), k=1e2)
    >>> e_stiff = fm.realised_restitution(fm.Drop(), k=1e8)
    >>> abs(e_stiff - fm.limit_restitution(fm.Drop())) < abs(e_soft - fm.limit_restitution(fm.Drop()))
    True
    """
    return _core.realised_restitution(drop, k, speed)


@overload
def time_of_impact_term(drop: Drop, speed: Optional[float] = None) -> float: ...


@overload
def time_of_impact_term(drop: Drop, speed: _ArrayLike) -> np.ndarray: ...


def time_of_impact_term(drop: Drop, speed: Union[None, float, _ArrayLike] = None) -> Union[float, np.ndarray]:
    """The saltation entry (1+e) g / |v| in 1/s, with the limit restitution.

    ``speed`` (m/s) defaults to the drop's impact speed; an array of speeds gives an
    array of the same shape.

    Raises
    ------
    InvalidParameter
        A speed that is not finite and > 0.

    Examples
    --------
    >>> import ferromotion as fm
    >>> round(fm.time_of_impact_term(fm.Drop()), 2), round(fm.time_of_impact_term(fm.Drop(), 0.01))
    (3.61, 1601)
    >>> fm.time_of_impact_term(fm.Drop(), [4.0, 0.01]).round(1)
    array([   4. , 1601.1])
    """
    if speed is None or np.ndim(speed) == 0:
        return _core.time_of_impact_term(drop, None if speed is None else float(speed))  # type: ignore[arg-type]
    speeds = _float_array(speed, "speed")
    out = np.array([_core.time_of_impact_term(drop, float(v)) for v in speeds.ravel()], dtype=np.float64)
    return out.reshape(speeds.shape)


def matched_dt(drop: Drop, k: float) -> float:
    """The step at matched resolution: T/N with N = round(T sqrt(k/m) / 0.1).

    Examples
    --------
    >>> import ferromotion as fm
    >>> fm.matched_dt(fm.Drop(), k=1e6) <= 1e-4
    True
    """
    return _core.matched_dt(drop, k)


def log_grid(lo: float, hi: float, per_decade: int) -> np.ndarray:
    """Stiffnesses 10^lo .. 10^hi (N/m), ``per_decade`` points per decade, inclusive.

    Examples
    --------
    >>> import ferromotion as fm
    >>> fm.log_grid(2, 8, 2).shape
    (13,)
    """
    return _core.log_grid(lo, hi, per_decade)


def evaluate(scenario: Union[str, Dict[str, Any]]) -> Dict[str, Any]:
    """Every route on one scenario document (the golden-test format), as the core serialises it.

    Parameters
    ----------
    scenario : str or dict
        ``{"drop": {...}, "k": 1e6, "dt": 1e-4}``; missing drop fields take the defaults.

    Raises
    ------
    ScenarioError
        The document could not be read (bad JSON, unknown field).

    Examples
    --------
    >>> import ferromotion as fm
    >>> e = fm.evaluate({"k": 1e6, "dt": 1e-4})
    >>> len(e["exact"]["jacobian"]), e["fixed"]["errors"]["right_sign"]   # J flat, row-major
    (4, False)
    """
    text = scenario if isinstance(scenario, str) else json.dumps(scenario)
    return json.loads(_core.evaluate(text))


# ---------------------------------------------------------------------------------------
# Sweeps


class SweepRoute:
    """One route's readouts across a sweep, one numpy array per readout (length n).

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
    steps, rejected_steps, force_evals, state_force_evals, rollouts : numpy.ndarray
        Cost counters (uint64).
    probe_dependent : numpy.ndarray
        bool: the tolerance route's two probe sizes disagree.
    """

    state: np.ndarray
    jacobian: np.ndarray
    dy: np.ndarray
    dv: np.ndarray
    forward_error: np.ndarray
    forward_unit: np.ndarray
    gradient_error: np.ndarray
    dv_dy0: np.ndarray
    right_sign: np.ndarray
    steps: np.ndarray
    rejected_steps: np.ndarray
    force_evals: np.ndarray
    state_force_evals: np.ndarray
    rollouts: np.ndarray
    probe_dependent: np.ndarray

    def __init__(self, columns: Dict[str, Any]) -> None:
        for name, value in columns.items():
            setattr(self, name, _frozen(value))

    def __len__(self) -> int:
        return len(self.gradient_error)

    def __repr__(self) -> str:
        return f"SweepRoute({len(self)} stiffnesses, wrong sign at {int((~self.right_sign).sum())})"


class SweepBlame:
    """The blame split across a sweep: arrays ``integrator_share``, ``contact_share``,
    ``ratio``, ``noise_floor``, ``integrator_below_floor`` and ``contact_below_floor``
    (see :class:`Blame`)."""

    integrator_share: np.ndarray
    contact_share: np.ndarray
    ratio: np.ndarray
    noise_floor: np.ndarray
    integrator_below_floor: np.ndarray
    contact_below_floor: np.ndarray

    def __init__(self, columns: Dict[str, Any]) -> None:
        for name, value in columns.items():
            setattr(self, name, _frozen(value))

    def __repr__(self) -> str:
        return f"SweepBlame({len(self.integrator_share)} stiffnesses)"


class Sweep(_Json):
    """Every readout of a sweep over stiffness, as numpy arrays.

    Made by :func:`sweep`. The fixed route is the sweep's subject: its readouts are
    also available at the top level (``s.gradient_error`` is ``s.fixed.gradient_error``).

    Attributes
    ----------
    drop : Drop
        The drop.
    dt : float
        Fixed step, s.
    k : numpy.ndarray
        Stiffnesses, N/m, shape (n,), in the order given.
    exact : Route
        The rigid reference every row is compared with.
    fixed : SweepRoute
        The fixed route's readouts.
    tolerance : SweepRoute or None
        The tolerance route's readouts, when asked for.
    corrected : SweepRoute or None
        The corrected route's readouts (same dt), when asked for.
    blame : SweepBlame or None
        The blame split, when asked for.
    tolerance_cost_ratio : numpy.ndarray or None
        Force evaluations of the tolerance route's Jacobian over the fixed route's, per k,
        when the tolerance route ran.
    """

    def __init__(self, run: _core.SweepRun, drop: Drop, rtol: Optional[float], events: bool) -> None:
        self._run = run
        self._rtol = rtol
        self._events = events
        self.drop = drop
        cols = run.columns()
        self.dt: float = cols["dt"]
        self.k: np.ndarray = _frozen(cols["k"])
        exact_cols = cols["exact"]
        self.exact = Route("exact", _frozen(exact_cols["state"]), _frozen(exact_cols["jacobian"]),
                           0, 0, 0, 0, 0, None, False)
        self.fixed = SweepRoute(cols["fixed"])
        self.tolerance: Optional[SweepRoute] = (
            SweepRoute(cols["tolerance"]) if cols["tolerance"] is not None else None
        )
        self.corrected: Optional[SweepRoute] = (
            SweepRoute(cols["corrected"]) if cols["corrected"] is not None else None
        )
        self.blame: Optional[SweepBlame] = SweepBlame(cols["blame"]) if cols["blame"] is not None else None
        ratio = cols["tolerance_cost_ratio"]
        self.tolerance_cost_ratio: Optional[np.ndarray] = None if ratio is None else _frozen(ratio)

    # The fixed route's readouts, at the top level.
    @property
    def state(self) -> np.ndarray:
        """x(T) of the fixed route, shape (n, 2)."""
        return self.fixed.state

    @property
    def jacobian(self) -> np.ndarray:
        """J of the fixed route, shape (n, 2, 2), row-major."""
        return self.fixed.jacobian

    @property
    def dy(self) -> np.ndarray:
        """|y - y_exact| of the fixed route, m."""
        return self.fixed.dy

    @property
    def dv(self) -> np.ndarray:
        """|v - v_exact| of the fixed route, m/s."""
        return self.fixed.dv

    @property
    def forward_error(self) -> np.ndarray:
        """The larger of dy and dv; unit in ``forward_unit``."""
        return self.fixed.forward_error

    @property
    def forward_unit(self) -> np.ndarray:
        """"m" or "m/s" per row: the unit of ``forward_error``."""
        return self.fixed.forward_unit

    @property
    def gradient_error(self) -> np.ndarray:
        """max_ij |J - J_exact| / max_ij |J_exact| of the fixed route."""
        return self.fixed.gradient_error

    @property
    def dv_dy0(self) -> np.ndarray:
        """The fixed route's dv(T)/dy0."""
        return self.fixed.dv_dy0

    @property
    def right_sign(self) -> np.ndarray:
        """bool: the fixed route's dv(T)/dy0 has the exact answer's sign."""
        return self.fixed.right_sign

    def __len__(self) -> int:
        return len(self.k)

    def exponent(self) -> Fit:
        """The divergence exponent fitted on the sweep's own points with k in [1e4, 1e8].

        ``Fit.points`` says how many were used.

        Raises
        ------
        InvalidParameter
            Fewer than two of the sweep's stiffnesses lie in [1e4, 1e8].
        """
        return Fit(**self._run.exponent())

    def to_dict(self) -> Dict[str, Any]:
        """The core's serialisation (``dt``, ``exact``, ``rows``) plus the drop, the
        options and the fitted exponent (None when it cannot be fitted)."""
        d: Dict[str, Any] = json.loads(self._run.to_json())
        try:
            exponent: Optional[Dict[str, Any]] = self.exponent().to_dict()
        except FerroError:
            exponent = None
        return {
            "drop": self.drop.to_dict(),
            "dt": d["dt"],
            "tolerance": None if self._rtol is None else {"rtol": self._rtol, "events": self._events},
            "corrected": self.corrected is not None,
            "blame": self.blame is not None,
            "exact": d["exact"],
            "rows": d["rows"],
            "exponent": exponent,
        }

    def to_json(self, indent: Optional[int] = None) -> str:
        """:meth:`to_dict` as JSON."""
        return json.dumps(self.to_dict(), indent=indent)

    def plot(self, *, mark_k: Optional[float] = None, title: Optional[str] = None, width: int = 720,
             height: int = 480) -> Any:
        """A Bokeh figure: forward and gradient error against k, log-log.

        The fixed route's two errors, the tolerance and corrected routes' gradient errors
        when the sweep ran them, the k ranges where the fixed route's dv(T)/dy0 has the
        wrong sign shaded, and ``mark_k`` (N/m) marked with a vertical line. Show it with
        ``bokeh.plotting.show(fig)`` or put it in a Panel app.

        Needs bokeh (``pip install 'ferromotion[plot]'``).

        Examples
        --------
        >>> import numpy as np, ferromotion as fm
        >>> fig = fm.sweep(fm.Drop(), k=np.logspace(2, 8, 25)).plot(mark_k=1e6)
        >>> fig.x_scale.__class__.__name__, fig.y_scale.__class__.__name__
        ('LogScale', 'LogScale')
        """
        from .plot import sweep_figure

        return sweep_figure(self, mark_k=mark_k, title=title, width=width, height=height)

    def __repr__(self) -> str:
        n = len(self)
        if n == 0:
            return f"Sweep(no stiffnesses, dt = {self.dt:g} s)"
        routes = "fixed" + ("" if self.tolerance is None else f" + tolerance (rtol = {self._rtol:g})")
        routes += "" if self.corrected is None else " + corrected"
        wrong = int((~self.right_sign).sum())
        return (
            f"Sweep({n} stiffnesses from {self.k.min():.3g} to {self.k.max():.3g} N/m, dt = {self.dt:g} s, "
            f"routes: {routes}{', blame' if self.blame is not None else ''}; "
            f"wrong sign at {wrong} of {n}; gradient error {self.gradient_error.min():.3g} .. "
            f"{self.gradient_error.max():.3g})"
        )


def _tolerance_rtol(tolerance: Union[None, bool, float]) -> Optional[float]:
    """None/False: off; True: the core's default rtol; a number: that rtol."""
    if tolerance is None or tolerance is False:
        return None
    if tolerance is True:
        return float(_TOL["rtol"])
    return float(tolerance)


def _progress_bar(total: int, quiet: bool) -> Any:
    """A tqdm bar on a terminal, or None (quiet, not a TTY, tqdm missing, or a short sweep)."""
    if quiet or total <= _CHUNK or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm  # type: ignore[import-untyped,unused-ignore]
    except ImportError:  # tqdm is optional (the `progress` extra)
        return None
    return tqdm(total=total, unit="k", desc="sweep", delay=_PROGRESS_DELAY, file=sys.stderr)


def _chunks(n: int, bar: Any) -> Iterator[slice]:
    """Slices of the stiffness array: the whole array in one core call when no bar is shown
    (fastest), otherwise chunks small enough for the bar to move."""
    if bar is None:
        yield slice(0, n)
        return
    size = max(_CHUNK, -(-n // 50))
    for start in range(0, n, size):
        stop = min(n, start + size)
        yield slice(start, stop)
        bar.update(stop - start)


@overload
def sweep(drop: Drop, k: Any, dt: float = ..., *, tolerance: Union[None, bool, float] = ...,
          events: bool = ..., corrected: bool = ..., blame: bool = ..., quiet: bool = ...) -> Sweep: ...


@overload
def sweep(drop: Drop, k: Any, dt: _ArrayLike, *, tolerance: Union[None, bool, float] = ...,
          events: bool = ..., corrected: bool = ..., blame: bool = ..., quiet: bool = ...) -> "SweepGrid": ...


def sweep(drop: Drop, k: Any, dt: Union[float, _ArrayLike] = _DT, *, tolerance: Union[None, bool, float] = None,
          events: bool = False, corrected: bool = False, blame: bool = False,
          quiet: bool = False) -> Union[Sweep, "SweepGrid"]:
    """Run the routes at many stiffnesses; every readout comes back as a numpy array.

    The core computes the rows on all cores with the GIL released. Sweeps that take
    longer than about half a second show a progress bar on a terminal (needs tqdm), unless
    ``quiet``; nothing is printed when stderr is not a terminal.

    Parameters
    ----------
    drop : Drop
        The drop.
    k : array_like
        Stiffnesses, N/m, shape (n,), in any order (the rows keep it).
    dt : float or array_like
        Fixed step, s. A number gives a :class:`Sweep`. An array of steps, shape (m,),
        gives a :class:`SweepGrid`: one sweep per step, its readouts stacked with the step
        first, shape (m, n).
    tolerance : None, bool or float
        Also run the tolerance route: True for the default rtol, a number for that rtol.
        (It has no fixed step, so in a grid it is the same at every dt.)
    events : bool
        The tolerance route stops its rollouts at the contact switches.
    corrected : bool
        Also run the corrected route at the same dt.
    blame : bool
        Also compute the blame split at every k.
    quiet : bool
        Never show a progress bar.

    Returns
    -------
    Sweep or SweepGrid

    Raises
    ------
    InvalidParameter
        ``k`` (or ``dt``) is not one-dimensional or not numeric, or a value is out of range.
    StepDoesNotDivide, TooManySteps
        A step does not suit the drop's final time.

    Examples
    --------
    >>> import numpy as np, ferromotion as fm
    >>> s = fm.sweep(fm.Drop(), k=np.logspace(2, 8, 61), dt=1e-4)
    >>> s.gradient_error.shape, s.jacobian.shape, s.right_sign.dtype
    ((61,), (61, 2, 2), dtype('bool'))
    >>> s.exponent().points   # the 41 of the 61 stiffnesses in [1e4, 1e8]
    41
    >>> g = fm.sweep(fm.Drop(), k=np.logspace(4, 8, 9), dt=[1e-4, 1e-5, 1e-6])
    >>> g.gradient_error.shape   # (dt, k)
    (3, 9)
    >>> [round(f.slope, 2) for f in g.exponent()]
    [0.48, 0.48, 0.5]
    """
    ks = _float_array(k, "k")
    dts = _float_array(dt, "dt")
    rtol = _tolerance_rtol(tolerance)
    events = events if rtol is not None else False
    if dts.ndim > 1:
        raise InvalidParameter(
            f"invalid parameter `dt`: expected a number or an array of shape (m,), got {dts.shape}")
    steps = [float(dts)] if dts.ndim == 0 else [float(x) for x in dts]
    runs = [_core.SweepRun(drop, d, tolerance=rtol is not None, rtol=rtol, events=events, corrected=corrected,
                           blame=blame) for d in steps]
    if ks.ndim != 1:
        for run in runs[:1]:
            run.extend(ks)  # the binding refuses it with the shape in the message
        if not runs:
            raise InvalidParameter(f"invalid parameter `k`: expected array of shape (n,), got {ks.shape}")
    bar = _progress_bar(len(ks) * len(runs), quiet)
    try:
        for run in runs:
            for part in _chunks(len(ks), bar):
                run.extend(ks[part])
    finally:
        if bar is not None:
            bar.close()
    sweeps = [Sweep(run, drop, rtol, events) for run in runs]
    if dts.ndim == 0:
        return sweeps[0]
    return SweepGrid(drop, dts, ks, sweeps)


class SweepGrid(_Json):
    """Sweeps over stiffness at several fixed steps: one :class:`Sweep` per dt.

    Made by :func:`sweep` with an array of steps. The fixed route's readouts are stacked
    with the step first: ``g.gradient_error[i, j]`` is at ``dt[i]`` and ``k[j]``. Other
    routes' readouts: ``g.stack("gradient_error", route="corrected")``; one step's whole
    sweep: ``g[i]``.

    Attributes
    ----------
    drop : Drop
        The drop.
    dt : numpy.ndarray
        Fixed steps, s, shape (m,).
    k : numpy.ndarray
        Stiffnesses, N/m, shape (n,).
    sweeps : tuple of Sweep
        One sweep per step, in the order of ``dt``.

    Examples
    --------
    >>> import ferromotion as fm
    >>> g = fm.sweep(fm.Drop(), k=[1e4, 1e6], dt=[1e-4, 1e-5], corrected=True)
    >>> g.jacobian.shape, g.stack("gradient_error", route="corrected").shape
    ((2, 2, 2, 2), (2, 2))
    >>> g[1].dt
    1e-05
    """

    def __init__(self, drop: Drop, dt: np.ndarray, k: np.ndarray, sweeps: Sequence[Sweep]) -> None:
        self.drop = drop
        self.dt: np.ndarray = _frozen(dt.copy())
        self.k: np.ndarray = _frozen(k.copy())
        self.sweeps: Tuple[Sweep, ...] = tuple(sweeps)

    def __len__(self) -> int:
        return len(self.sweeps)

    def __getitem__(self, i: int) -> Sweep:
        return self.sweeps[i]

    def __iter__(self) -> Iterator[Sweep]:
        return iter(self.sweeps)

    def stack(self, name: str, route: str = "fixed") -> np.ndarray:
        """One readout of one route (``"fixed"``, ``"tolerance"``, ``"corrected"`` or
        ``"blame"``) stacked over the steps: shape (m, n, ...)."""
        parts = []
        for s in self.sweeps:
            part = getattr(s, route)
            if part is None:
                raise InvalidParameter(f"invalid parameter `route`: the sweep did not run {route!r}")
            parts.append(getattr(part, name))
        if not parts:
            return _frozen(np.empty((0, len(self.k))))
        return _frozen(np.stack(parts))

    @property
    def state(self) -> np.ndarray:
        """x(T) of the fixed route, shape (m, n, 2)."""
        return self.stack("state")

    @property
    def jacobian(self) -> np.ndarray:
        """J of the fixed route, shape (m, n, 2, 2), row-major."""
        return self.stack("jacobian")

    @property
    def forward_error(self) -> np.ndarray:
        """The fixed route's forward error, shape (m, n); units in ``forward_unit``."""
        return self.stack("forward_error")

    @property
    def forward_unit(self) -> np.ndarray:
        """"m" or "m/s" per entry, shape (m, n)."""
        return self.stack("forward_unit")

    @property
    def gradient_error(self) -> np.ndarray:
        """The fixed route's gradient error, shape (m, n)."""
        return self.stack("gradient_error")

    @property
    def dv_dy0(self) -> np.ndarray:
        """The fixed route's dv(T)/dy0, shape (m, n)."""
        return self.stack("dv_dy0")

    @property
    def right_sign(self) -> np.ndarray:
        """bool, shape (m, n): the fixed route's dv(T)/dy0 has the exact answer's sign."""
        return self.stack("right_sign")

    def exponent(self) -> List[Fit]:
        """The divergence exponent at each step (see :meth:`Sweep.exponent`)."""
        return [s.exponent() for s in self.sweeps]

    def plot(self, *, mark_k: Optional[float] = None, title: Optional[str] = None, width: int = 720,
             height: int = 480) -> Any:
        """A Bokeh figure: the fixed route's gradient error against k, one line per step,
        log-log, with the k ranges where it has the wrong sign at the first step shaded.

        Needs bokeh (``pip install 'ferromotion[plot]'``)."""
        from .plot import grid_figure

        return grid_figure(self, mark_k=mark_k, title=title, width=width, height=height)

    def to_dict(self) -> Dict[str, Any]:
        """``dt``, ``k`` and one :meth:`Sweep.to_dict` per step."""
        return {"dt": self.dt.tolist(), "k": self.k.tolist(), "sweeps": [s.to_dict() for s in self.sweeps]}

    def __repr__(self) -> str:
        steps = ", ".join(f"{d:g}" for d in self.dt)
        return f"SweepGrid({len(self.k)} stiffnesses x {len(self)} steps dt = [{steps}] s)"


# ---------------------------------------------------------------------------------------
# The descent experiment

_DESCENT: Dict[str, Any] = _DEFAULTS["descent"]
_ROUTES_WITH = {"exact": (), "fixed": ("k", "dt"), "tolerance": ("k", "rtol"), "corrected": ("k", "dt"),
                "central_differences": ()}


@dataclasses.dataclass(frozen=True)
class Arm(_Json):
    """Where the descent experiment's gradient comes from.

    Make one with the constructors: ``Arm.exact()``, ``Arm.fixed(k, dt)``,
    ``Arm.tolerance(k, rtol)``, ``Arm.corrected(k, dt)``, ``Arm.central_differences()``.

    Attributes
    ----------
    route : str
        ``"exact"``, ``"fixed"``, ``"tolerance"``, ``"corrected"`` or ``"central_differences"``.
    k : float or None
        Penalty stiffness, N/m (fixed, tolerance, corrected).
    dt : float or None
        Fixed step, s (fixed, corrected).
    rtol : float or None
        Relative tolerance (tolerance).

    Examples
    --------
    >>> import ferromotion as fm
    >>> fm.Arm.fixed(1e6, 1e-4)
    Arm(route='fixed', k=1000000.0, dt=0.0001, rtol=None)
    >>> [a.route for a in fm.standard_arms()][:3]
    ['exact', 'fixed', 'fixed']
    """

    route: str
    k: Optional[float] = None
    dt: Optional[float] = None
    rtol: Optional[float] = None

    def __post_init__(self) -> None:
        needs = _ROUTES_WITH.get(self.route)
        if needs is None:
            raise InvalidParameter(f"invalid parameter `route` = {self.route!r}: must be one of "
                                   + ", ".join(repr(r) for r in _ROUTES_WITH))
        for name in ("k", "dt", "rtol"):
            value = getattr(self, name)
            if name in needs and value is None:
                raise InvalidParameter(f"invalid parameter `{name}`: the {self.route!r} arm needs {name}")
            if name not in needs and value is not None:
                raise InvalidParameter(f"invalid parameter `{name}`: the {self.route!r} arm takes no {name}")
            if value is not None:
                object.__setattr__(self, name, float(value))

    @classmethod
    def exact(cls) -> "Arm":
        """The rigid model's saltation Jacobian."""
        return cls("exact")

    @classmethod
    def fixed(cls, k: float, dt: float = _DT) -> "Arm":
        """The fixed-step autodiff tangent of the penalty model at (k N/m, dt s)."""
        return cls("fixed", k=k, dt=dt)

    @classmethod
    def tolerance(cls, k: float, rtol: float = _TOL["rtol"]) -> "Arm":
        """Central differences of adaptive rollouts of the penalty model."""
        return cls("tolerance", k=k, rtol=rtol)

    @classmethod
    def corrected(cls, k: float, dt: float = _DT) -> "Arm":
        """The fixed step with the contact switches located."""
        return cls("corrected", k=k, dt=dt)

    @classmethod
    def central_differences(cls) -> "Arm":
        """Central differences of the true objective (the control)."""
        return cls("central_differences")

    def to_dict(self) -> Dict[str, Any]:
        """``route``, ``k``, ``dt``, ``rtol``."""
        return dataclasses.asdict(self)


def standard_arms() -> List[Arm]:
    """The core's arms of the descent experiment: exact, fixed at k = 1e4, 1e6 and 1e8,
    tolerance and corrected at 1e6, and central differences of the true objective.

    Examples
    --------
    >>> import ferromotion as fm
    >>> len(fm.standard_arms())
    7
    """
    return [Arm(a["route"], k=a["k"], dt=a["dt"], rtol=a["rtol"]) for a in _core.standard_arms()]


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class DescentRun(_Json):
    """One start's descent.

    Attributes
    ----------
    path : numpy.ndarray
        theta = (h0 in m, v0 in m/s) after each accepted step, starting with the start,
        shape (iterations + 1, 2).
    iterations : int
        Accepted steps.
    converged : bool
        Reached |theta - theta*| below the convergence threshold.
    cannot_step : bool
        No downhill step was possible on the first iteration.
    force_evals : int
        Force evaluations spent on gradients.
    final_loss : float
        The true objective at the end, m^2.
    """

    path: np.ndarray
    iterations: int
    converged: bool
    cannot_step: bool
    force_evals: int
    final_loss: float

    @property
    def start(self) -> np.ndarray:
        """The start, shape (2,)."""
        return self.path[0]

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types (``path`` as a list of pairs)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["path"] = self.path.tolist()
        return d

    def __repr__(self) -> str:
        verdict = "converged" if self.converged else ("cannot step" if self.cannot_step else "not converged")
        return (f"DescentRun(from ({self.start[0]:.4g} m, {self.start[1]:.4g} m/s): {verdict} after "
                f"{self.iterations} steps, loss {self.final_loss:.3g} m^2)")


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class DescentArm(_Json):
    """One gradient arm of the descent experiment, over all starts.

    Attributes
    ----------
    arm : Arm
        Where the gradient came from.
    label : str
        The core's short label for tables.
    runs : tuple of DescentRun
        One per start.
    converged, cannot_step : int
        Starts that converged; starts that could not take a single step.
    iterations : int
        Accepted steps summed over starts.
    force_evals : int
        Force evaluations summed over starts.
    """

    arm: Arm
    label: str
    runs: Tuple[DescentRun, ...]
    converged: int
    cannot_step: int
    iterations: int
    force_evals: int

    @property
    def paths(self) -> List[np.ndarray]:
        """Each start's path, shape (steps + 1, 2)."""
        return [r.path for r in self.runs]

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types."""
        return {"arm": self.arm.to_dict(), "label": self.label, "converged": self.converged,
                "cannot_step": self.cannot_step, "iterations": self.iterations, "force_evals": self.force_evals,
                "runs": [r.to_dict() for r in self.runs]}

    def __repr__(self) -> str:
        return (f"DescentArm({self.label}: converged {self.converged}/{len(self.runs)}, "
                f"cannot step {self.cannot_step}, {self.iterations} steps, {self.force_evals} force evals)")


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Landscape(_Json):
    """The true objective scanned on a grid of starts theta = (h0, v0).

    Attributes
    ----------
    heights : numpy.ndarray
        Grid values of h0, m, shape (n,).
    velocities : numpy.ndarray
        Grid values of v0, m/s, shape (n,).
    loss : numpy.ndarray
        The objective in m^2, shape (n, n), indexed [height, velocity]; NaN where the drop
        does not bounce exactly once before T.
    grid_minimum : numpy.ndarray
        The grid point with the smallest loss, shape (2,).
    local_minima : int
        Strict local minima of the loss on the grid.
    starts : numpy.ndarray
        The descent's starts, shape (4, 2).
    """

    heights: np.ndarray
    velocities: np.ndarray
    loss: np.ndarray
    grid_minimum: np.ndarray
    local_minima: int
    starts: np.ndarray

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types (NaN loss as None)."""
        return _json_ready({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    def __repr__(self) -> str:
        n = len(self.heights)
        feasible = int(np.isfinite(self.loss).sum())
        return f"Landscape({n} x {n} grid, {feasible} one-bounce points, {self.local_minima} local minima)"


class Descent(_Json):
    """Gradient descent through one impact (made by :func:`descent`).

    The objective and the line search always use the rigid model's x(T); only the
    gradient handed to the step differs between arms.

    Attributes
    ----------
    drop : Drop
        The drop whose t_final, gravity, mass and zeta are used.
    optimum : numpy.ndarray
        theta* = (h*, v*), whose exact x(T) is the target, shape (2,).
    target : numpy.ndarray
        The target x(T) = (y* in m, v* in m/s), shape (2,).
    landscape : Landscape
        The scanned objective and the starts.
    arms : tuple of DescentArm
        One per gradient arm.
    """

    def __init__(self, run: _core.DescentRun, drop: Drop) -> None:
        self._run = run
        cols = run.columns()
        problem = cols["problem"]
        self.drop = drop
        self.optimum: np.ndarray = _frozen(np.array(problem["optimum"], dtype=np.float64))
        self.height_range: Tuple[float, float] = tuple(problem["height_range"])
        self.velocity_range: Tuple[float, float] = tuple(problem["velocity_range"])
        self.grid: int = problem["grid"]
        self.target: np.ndarray = _frozen(cols["target"])
        land = cols["landscape"]
        self.landscape = Landscape(
            heights=_frozen(land["heights"]), velocities=_frozen(land["velocities"]), loss=_frozen(land["loss"]),
            grid_minimum=_frozen(land["grid_minimum"]), local_minima=land["local_minima"],
            starts=_frozen(land["starts"]),
        )
        arms = []
        for a in cols["arms"]:
            spec = a["arm"]
            runs = tuple(
                DescentRun(path=_frozen(r["path"]), iterations=r["iterations"], converged=r["converged"],
                           cannot_step=r["cannot_step"], force_evals=r["force_evals"], final_loss=r["final_loss"])
                for r in a["runs"]
            )
            arms.append(DescentArm(
                arm=Arm(spec["route"], k=spec["k"], dt=spec["dt"], rtol=spec["rtol"]), label=spec["label"],
                runs=runs, converged=a["converged"], cannot_step=a["cannot_step"], iterations=a["iterations"],
                force_evals=a["force_evals"],
            ))
        self.arms: Tuple[DescentArm, ...] = tuple(arms)

    def __getitem__(self, label: str) -> DescentArm:
        """The arm with this label (``d["exact"]``)."""
        for a in self.arms:
            if a.label == label:
                return a
        raise KeyError(label)

    def table(self) -> Dict[str, np.ndarray]:
        """The per-arm table as numpy columns: ``label``, ``converged``, ``starts``,
        ``cannot_step``, ``iterations``, ``force_evals``."""
        return {
            "label": _frozen(np.array([a.label for a in self.arms], dtype=object)),
            "converged": _frozen(np.array([a.converged for a in self.arms], dtype=np.int64)),
            "starts": _frozen(np.array([len(a.runs) for a in self.arms], dtype=np.int64)),
            "cannot_step": _frozen(np.array([a.cannot_step for a in self.arms], dtype=np.int64)),
            "iterations": _frozen(np.array([a.iterations for a in self.arms], dtype=np.int64)),
            "force_evals": _frozen(np.array([a.force_evals for a in self.arms], dtype=np.int64)),
        }

    def format_table(self) -> str:
        """The per-arm table as text, one line per arm."""
        width = max([len("arm")] + [len(a.label) for a in self.arms])
        lines = [f"{'arm':<{width}}  {'converged':>9}  {'cannot step':>11}  {'steps':>7}  {'force evals':>12}"]
        for a in self.arms:
            lines.append(f"{a.label:<{width}}  {f'{a.converged}/{len(a.runs)}':>9}  {a.cannot_step:>11}  "
                         f"{a.iterations:>7}  {a.force_evals:>12}")
        return "\n".join(lines)

    def to_dict(self) -> Dict[str, Any]:
        """The core's serialisation: problem, target, landscape (NaN loss as None) and arms."""
        d: Dict[str, Any] = json.loads(self._run.to_json())
        return d

    def __repr__(self) -> str:
        summary = ", ".join(f"{a.label} {a.converged}/{len(a.runs)}" for a in self.arms)
        return f"Descent({len(self.arms)} arms from {len(self.landscape.starts)} starts: {summary})"


def _pair(value: Sequence[float], name: str) -> Tuple[float, float]:
    a = _float_array(value, name)
    if a.shape != (2,):
        raise InvalidParameter(f"invalid parameter `{name}`: expected 2 numbers, got shape {a.shape}")
    return float(a[0]), float(a[1])


def descent(drop: Optional[Drop] = None, *, arms: Optional[Sequence[Arm]] = None,
            optimum: Tuple[float, float] = tuple(_DESCENT["optimum"]),
            height_range: Tuple[float, float] = tuple(_DESCENT["height_range"]),
            velocity_range: Tuple[float, float] = tuple(_DESCENT["velocity_range"]),
            grid: int = _DESCENT["grid"]) -> Descent:
    """Does a wrong gradient matter? Gradient descent through one impact.

    Choose theta = (h0, v0) so that the drop's x(T) hits the rigid model's x(T) from
    ``optimum``. The landscape is scanned first (so "converged" means something), four
    starts are picked in the one-bounce region, and every arm descends from every start
    with the same Gauss-Newton step and Armijo line search on the true objective; only
    the gradient differs. The core runs it with the GIL released.

    Parameters
    ----------
    drop : Drop, optional
        Its t_final, gravity, mass and zeta are used (its height and velocity are not).
    arms : sequence of Arm, optional
        Default: :func:`standard_arms`.
    optimum : (float, float)
        theta* = (h* in m, v* in m/s).
    height_range, velocity_range : (float, float)
        Grid bounds for h0 (m) and v0 (m/s).
    grid : int
        Grid points per axis (at least 3).

    Returns
    -------
    Descent

    Examples
    --------
    >>> import ferromotion as fm
    >>> d = fm.descent(arms=[fm.Arm.exact(), fm.Arm.fixed(1e6, 1e-4)], grid=21)
    >>> [(a.label, a.converged) for a in d.arms]
    [('exact', 4), ('fixed k=1e6 dt=1e-4', 0)]
    >>> d.landscape.loss.shape, d.arms[0].runs[0].path.shape[1]
    ((21, 21), 2)
    """
    drop = Drop() if drop is None else drop
    run = _core.descent(drop, arms=None if arms is None else list(arms), optimum=_pair(optimum, "optimum"),
                        height_range=_pair(height_range, "height_range"),
                        velocity_range=_pair(velocity_range, "velocity_range"), grid=grid)
    return Descent(run, drop)


# ---------------------------------------------------------------------------------------
# The bench


class Bench:
    """The browser lab's bench from Python: controls, and every readout for them.

    The core caches the readouts that do not depend on k, so moving k is cheap.

    Parameters
    ----------
    drop : Drop, optional
        The drop; default ``Drop()``.
    k : float
        Penalty stiffness, N/m.
    dt : float
        The base fixed step, s (the lab's "dt" button).
    dt_divisor : int
        1, 10 or 100: the current step is dt / dt_divisor.
    tolerance : None, bool or float
        Run the tolerance route too: True for the default rtol, a number for that rtol.
    events : bool
        The tolerance route stops at the contact switches.

    Examples
    --------
    >>> import ferromotion as fm
    >>> bench = fm.Bench(k=1e6)
    >>> r = bench.readout()
    >>> r["fixed"]["errors"]["right_sign"]
    False
    >>> bench.set_k(1e2)
    >>> bench.readout()["fixed"]["errors"]["right_sign"]
    True
    """

    def __init__(self, drop: Optional[Drop] = None, *, k: float = _DEFAULTS["k"], dt: float = _DT,
                 dt_divisor: int = 1, tolerance: Union[None, bool, float] = None,
                 events: bool = False) -> None:
        self.drop = Drop() if drop is None else drop
        rtol = _tolerance_rtol(tolerance)
        self._bench = _core.Bench(self.drop, k=k, base_dt=dt, dt_divisor=dt_divisor,
                                  tolerance=rtol is not None, rtol=rtol, events=events)

    @property
    def k(self) -> float:
        """Penalty stiffness, N/m."""
        return self._bench.config()["k"]

    @property
    def dt(self) -> float:
        """The current fixed step, s (base dt / divisor)."""
        return self._bench.config()["dt"]

    @property
    def base_dt(self) -> float:
        """The base fixed step, s."""
        return self._bench.config()["base_dt"]

    @property
    def dt_divisor(self) -> int:
        """1, 10 or 100."""
        return self._bench.config()["dt_divisor"]

    @property
    def tolerance(self) -> bool:
        """Whether the tolerance route runs."""
        return self._bench.config()["tolerance"]

    def set_k(self, k: float) -> None:
        """Set the stiffness, N/m."""
        self._bench.set_k(k)

    def set_log10_k(self, log10_k: float) -> None:
        """Set the stiffness from the slider's log10 k."""
        self._bench.set_log10_k(log10_k)

    def set_dt_divisor(self, divisor: int) -> None:
        """Choose the current step: base dt / divisor with divisor 1, 10 or 100."""
        self._bench.set_dt_divisor(divisor)

    def set_tolerance(self, on: bool, rtol: Optional[float] = None, events: Optional[bool] = None) -> None:
        """Switch the tolerance route; ``None`` keeps the current rtol or events flag."""
        self._bench.set_tolerance(on, rtol, events)

    def readout(self) -> Dict[str, Any]:
        """Every readout for the current controls, as the core serialises it."""
        return json.loads(self._bench.readout_json())

    def curve(self, k: Any) -> Sweep:
        """The fixed (and tolerance, when on) route's readouts against k at the current step."""
        ks = np.asarray(k, dtype=np.float64)
        run = self._bench.curve(ks)
        c = self._bench.config()
        return Sweep(run, self.drop, c["rtol"] if c["tolerance"] else None, c["events"] and c["tolerance"])

    def __repr__(self) -> str:
        c = self._bench.config()
        tol = f", tolerance rtol = {c['rtol']:g}" if c["tolerance"] else ""
        return f"Bench(k = {self.k:g} N/m, dt = {self.dt:g} s{tol})"
