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
from typing import Any, Dict, Iterator, Mapping, Optional, Union

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
    ScenarioError,
    StepDoesNotDivide,
    StepSizeUnderflow,
    TooManySteps,
    TwoEventsInOneStep,
)

__version__: str = _core.__version__

__all__ = [
    "Bench",
    "Blame",
    "Drop",
    "FerroError",
    "Fit",
    "Grazing",
    "HiddenState",
    "InvalidParameter",
    "NoImpact",
    "NonFinite",
    "ProbeDependent",
    "Refinement",
    "Route",
    "ScenarioError",
    "StepDoesNotDivide",
    "StepSizeUnderflow",
    "Sweep",
    "SweepBlame",
    "SweepRoute",
    "TooManySteps",
    "TwoEventsInOneStep",
    "blame",
    "contact_share_exponent",
    "corrected",
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
    "sweep",
    "time_of_impact_term",
    "tolerance",
]

# The core's defaults, read once so that signatures show them without restating them.
_DEFAULTS: Dict[str, Any] = _core.DEFAULTS
_DROP = _DEFAULTS["drop"]
_TOL = _DEFAULTS["tolerance"]
_DT: float = _DEFAULTS["dt"]

# Stiffnesses per core call in a sweep: progress is reported between chunks.
_CHUNK = 16


def _frozen(a: Any) -> np.ndarray:
    """A read-only view of an array returned by the core (results are immutable)."""
    arr = np.asarray(a)
    arr.setflags(write=False)
    return arr


def _fmt_matrix(j: np.ndarray) -> str:
    return "[[" + ", ".join(f"{x:.4g}" for x in j[0]) + "], [" + ", ".join(f"{x:.4g}" for x in j[1]) + "]]"


@dataclasses.dataclass(frozen=True)
class Drop:
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
class Route:
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


@dataclasses.dataclass(frozen=True)
class Fit:
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


@dataclasses.dataclass(frozen=True)
class Blame:
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


@dataclasses.dataclass(frozen=True, eq=False)
class Refinement:
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


def time_of_impact_term(drop: Drop, speed: Optional[float] = None) -> float:
    """The saltation entry (1+e) g / |v| in 1/s, with the limit restitution.

    ``speed`` (m/s) defaults to the drop's impact speed.

    Examples
    --------
    >>> import ferromotion as fm
    >>> round(fm.time_of_impact_term(fm.Drop()), 2), round(fm.time_of_impact_term(fm.Drop(), 0.01))
    (3.61, 1601)
    """
    return _core.time_of_impact_term(drop, speed)


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


class Sweep:
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


def _chunks(n: int, quiet: bool) -> Iterator[slice]:
    """Slices of the stiffness array, with a tqdm bar on a TTY when the sweep is long."""
    bar = None
    if not quiet and n > _CHUNK and sys.stderr.isatty():
        try:
            from tqdm import tqdm  # type: ignore[import-untyped]
        except ImportError:  # tqdm is optional
            tqdm = None
        if tqdm is not None:
            # `delay`: sweeps that finish within half a second show nothing.
            bar = tqdm(total=n, unit="k", desc="sweep", delay=0.5, file=sys.stderr)
    try:
        for start in range(0, n, _CHUNK):
            stop = min(n, start + _CHUNK)
            yield slice(start, stop)
            if bar is not None:
                bar.update(stop - start)
    finally:
        if bar is not None:
            bar.close()


def sweep(drop: Drop, k: Any, dt: float = _DT, *, tolerance: Union[None, bool, float] = None,
          events: bool = False, corrected: bool = False, blame: bool = False, quiet: bool = False) -> Sweep:
    """Run the routes at many stiffnesses; every readout comes back as a numpy array.

    The core computes the rows in parallel with the GIL released. Long sweeps show a
    progress bar on a terminal (needs tqdm) unless ``quiet``.

    Parameters
    ----------
    drop : Drop
        The drop.
    k : array_like
        Stiffnesses, N/m, shape (n,).
    dt : float
        Fixed step, s.
    tolerance : None, bool or float
        Also run the tolerance route: True for the default rtol, a number for that rtol.
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
    Sweep

    Raises
    ------
    InvalidParameter
        ``k`` is not one-dimensional or not numeric, or a value is out of range.

    Examples
    --------
    >>> import numpy as np, ferromotion as fm
    >>> s = fm.sweep(fm.Drop(), k=np.logspace(2, 8, 61), dt=1e-4)
    >>> s.gradient_error.shape, s.jacobian.shape, s.right_sign.dtype
    ((61,), (61, 2, 2), dtype('bool'))
    >>> s.exponent().points   # the 41 of the 61 stiffnesses in [1e4, 1e8]
    41
    """
    try:
        ks = np.asarray(k, dtype=np.float64)
    except (TypeError, ValueError) as e:
        message = f"invalid parameter `k`: expected an array of numbers of shape (n,): {e}"
        raise InvalidParameter(message) from e
    rtol = _tolerance_rtol(tolerance)
    run = _core.SweepRun(drop, dt, tolerance=rtol is not None, rtol=rtol, events=events, corrected=corrected,
                         blame=blame)
    if ks.ndim != 1:
        run.extend(ks)  # the binding refuses it with the shape in the message
    for part in _chunks(len(ks), quiet):
        run.extend(ks[part])
    return Sweep(run, drop, rtol, events if rtol is not None else False)


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
