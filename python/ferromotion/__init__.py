"""Ferromotion: certify gradients through contact.

A point mass dropped onto the ground bounces once before the final time T. Every route
below returns its state x(T) = (y, v) and the Jacobian J = dx(T)/dx(0) as numpy arrays:
``state`` of shape (2,) in (m, m/s) and ``jacobian`` of shape (2, 2), rows (y, v) and
columns (y0, v0), so ``J[1, 0]`` is dv(T)/dy0. Every number is computed by the Rust core
(``ferromotion-core``); this package converts and presents.

Beyond the drop: :func:`check_gradient` qualifies any gradient (yours included) and writes a
:class:`Receipt`; :func:`hybrid_jacobian` differentiates a hybrid system through its events or
refuses; :func:`quadruped` compares rigid and penalty contact on a trotting quadruped.

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

import copy
import dataclasses
import functools
import json
import math
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import (Any, Callable, ClassVar, Dict, Iterator, List, Mapping, Optional, Protocol, Sequence, Tuple, Union,
                    overload)

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
    StepTooSmall,
    TooManySteps,
    TwoEventsInOneStep,
)

__version__: str = _core.__version__

__all__ = [
    "Arm",
    "audit_engine",
    "Workbench",
    "Blame",
    "blame",
    "BouncingDrop",
    "check_fixture",
    "check_gradient",
    "CheckDirection",
    "Conditioning",
    "conditioning",
    "contact_share_exponent",
    "ContactSolveFailed",
    "corrected",
    "descent",
    "Descent",
    "DescentArm",
    "DescentRun",
    "divergence_exponent",
    "Drop",
    "dt_refinement",
    "environment",
    "evaluate",
    "exact",
    "FerroError",
    "Fit",
    "fixed",
    "FIXTURES",
    "flow",
    "FOOT_NAMES",
    "Grazing",
    "HiddenState",
    "hybrid_jacobian",
    "HybridEvent",
    "HybridSolution",
    "HybridSystem",
    "InvalidParameter",
    "Landscape",
    "limit_restitution",
    "log_grid",
    "matched_dt",
    "MODE_NAMES",
    "NoImpact",
    "NonFinite",
    "ProbeDependent",
    "quadruped",
    "equal_budget",
    "quadruped_rollout",
    "QuadrupedLaw",
    "QuadrupedReport",
    "QuadrupedTrajectory",
    "realised_restitution",
    "Receipt",
    "RECEIPT_SCHEMA",
    "receipt_schema",
    "Refinement",
    "Route",
    "ScenarioError",
    "SlopeBall",
    "standard_arms",
    "StepDoesNotDivide",
    "StepSizeUnderflow",
    "StepTooSmall",
    "study",
    "Study",
    "StudyError",
    "sweep",
    "Sweep",
    "SweepBlame",
    "SweepGrid",
    "SweepRoute",
    "time_of_impact_term",
    "tolerance",
    "TooManySteps",
    "TwoEventsInOneStep",
    "Unstable",
    "WarmStartedDrop",
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


class Workbench:
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
    >>> bench = fm.Workbench(k=1e6)
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
        self._workbench = _core.Workbench(self.drop, k=k, base_dt=dt, dt_divisor=dt_divisor,
                                  tolerance=rtol is not None, rtol=rtol, events=events)

    @property
    def k(self) -> float:
        """Penalty stiffness, N/m."""
        return self._workbench.config()["k"]

    @property
    def dt(self) -> float:
        """The current fixed step, s (base dt / divisor)."""
        return self._workbench.config()["dt"]

    @property
    def base_dt(self) -> float:
        """The base fixed step, s."""
        return self._workbench.config()["base_dt"]

    @property
    def dt_divisor(self) -> int:
        """1, 10 or 100."""
        return self._workbench.config()["dt_divisor"]

    @property
    def tolerance(self) -> bool:
        """Whether the tolerance route runs."""
        return self._workbench.config()["tolerance"]

    def set_k(self, k: float) -> None:
        """Set the stiffness, N/m."""
        self._workbench.set_k(k)

    def set_log10_k(self, log10_k: float) -> None:
        """Set the stiffness from the slider's log10 k."""
        self._workbench.set_log10_k(log10_k)

    def set_dt_divisor(self, divisor: int) -> None:
        """Choose the current step: base dt / divisor with divisor 1, 10 or 100."""
        self._workbench.set_dt_divisor(divisor)

    def set_tolerance(self, on: bool, rtol: Optional[float] = None, events: Optional[bool] = None) -> None:
        """Switch the tolerance route; ``None`` keeps the current rtol or events flag."""
        self._workbench.set_tolerance(on, rtol, events)

    def readout(self) -> Dict[str, Any]:
        """Every readout for the current controls, as the core serialises it."""
        return json.loads(self._workbench.readout_json())

    def curve(self, k: Any) -> Sweep:
        """The fixed (and tolerance, when on) route's readouts against k at the current step."""
        ks = np.asarray(k, dtype=np.float64)
        run = self._workbench.curve(ks)
        c = self._workbench.config()
        return Sweep(run, self.drop, c["rtol"] if c["tolerance"] else None, c["events"] and c["tolerance"])

    def __repr__(self) -> str:
        c = self._workbench.config()
        tol = f", tolerance rtol = {c['rtol']:g}" if c["tolerance"] else ""
        return f"Workbench(k = {self.k:g} N/m, dt = {self.dt:g} s{tol})"


# ---------------------------------------------------------------------------------------
# hybrid_jacobian

# The restitution the drop's penalty law realises as k -> infinity (docs/model.md §2): the shipped
# hybrid systems' default, so that they bounce like the lab's rigid reference.
_LIMIT_RESTITUTION: float = _core.limit_restitution(Drop())
_HYBRID: Dict[str, Any] = _DEFAULTS["hybrid"]


@dataclasses.dataclass(frozen=True)
class BouncingDrop(_Json):
    """The drop as a hybrid system: x = (y in m, v in m/s), one mode, guard y (an impact
    when y reaches 0 from above), reset v+ = -e v-.

    Parameters
    ----------
    gravity : float
        m/s^2.
    restitution : float
        e; default: the push-only penalty law's k -> infinity limit at zeta = 0.1606
        (:func:`limit_restitution`), as in :func:`exact`.

    Examples
    --------
    >>> import ferromotion as fm
    >>> fm.BouncingDrop()
    BouncingDrop(gravity=9.81, restitution=0.632...)
    """

    gravity: float = _DROP["gravity"]
    restitution: float = _LIMIT_RESTITUTION
    _system: ClassVar[str] = "bouncing_drop"

    def to_dict(self) -> Dict[str, Any]:
        """The parameters and the system's kind."""
        return {"system": self._system, **dataclasses.asdict(self)}


@dataclasses.dataclass(frozen=True)
class SlopeBall(_Json):
    """A ball bouncing on a plane inclined by ``angle`` through the origin.

    x = (p_x, p_z, v_x, v_z) in m and m/s; guard: the height above the plane along its unit
    normal n; reset: v+ = v- - (1 + e)(n . v-) n (frictionless; restitution on the normal
    part).

    Parameters
    ----------
    angle : float
        Inclination of the plane, rad.
    restitution : float
        e on the normal velocity; default as :class:`BouncingDrop`.
    gravity : float
        m/s^2.
    """

    angle: float
    restitution: float = _LIMIT_RESTITUTION
    gravity: float = _DROP["gravity"]
    _system: ClassVar[str] = "slope_ball"

    def to_dict(self) -> Dict[str, Any]:
        """The parameters and the system's kind."""
        return {"system": self._system, **dataclasses.asdict(self)}


@dataclasses.dataclass(frozen=True)
class WarmStartedDrop(_Json):
    """The drop whose contact impulse comes from a warm-started iterative solver: its
    result depends on the previous solve, which x does not carry (hidden state), so
    :func:`hybrid_jacobian` refuses it with :class:`HiddenState`."""

    gravity: float = _DROP["gravity"]
    restitution: float = _LIMIT_RESTITUTION
    _system: ClassVar[str] = "warm_started_drop"

    def to_dict(self) -> Dict[str, Any]:
        """The parameters and the system's kind."""
        return {"system": self._system, **dataclasses.asdict(self)}


class HybridSystem(Protocol):
    """What :func:`hybrid_jacobian` needs of a system written in Python: the methods of the
    core's ``HybridSystem`` trait, with the same names and arguments. ``mode`` and ``i``
    (a guard's index) are ints, ``x`` a float64 array of shape (dim,); vectors may be
    returned as any array-like of shape (dim,), matrices of shape (dim, dim).

    Optional: ``name`` (str, for messages; default the class name) and
    ``hidden_state()`` returning None, or a sentence saying what state outside x the flow
    depends on (the system is then refused with :class:`HiddenState`).
    """

    dim: int

    def rhs(self, mode: int, x: np.ndarray) -> Any:
        """The flow f(x) in ``mode``."""

    def rhs_jacobian(self, mode: int, x: np.ndarray) -> Any:
        """df/dx, shape (dim, dim)."""

    def guard_count(self, mode: int) -> int:
        """How many guards ``mode`` watches."""

    def guard(self, mode: int, i: int, x: np.ndarray) -> float:
        """Guard i; an event fires when it crosses from > 0 to <= 0."""

    def guard_gradient(self, mode: int, i: int, x: np.ndarray) -> Any:
        """The gradient of guard i, shape (dim,)."""

    def reset(self, mode: int, i: int, x: np.ndarray) -> Tuple[int, Any]:
        """Guard i's reset: (the new mode, x+)."""

    def reset_jacobian(self, mode: int, i: int, x: np.ndarray) -> Any:
        """dx+/dx- of guard i's reset, shape (dim, dim)."""


@dataclasses.dataclass(frozen=True)
class HybridEvent(_Json):
    """One event on the way.

    Attributes
    ----------
    t : float
        Time of the event (the system's unit, s for the shipped ones).
    mode_before, mode_after : int
        Modes on either side.
    guard : int
        The guard that fired.
    guard_speed : float
        d guard / dt just before the event (negative: the guard was falling).
    saltation_max : float
        Largest |entry| of the event's saltation matrix.
    """

    t: float
    mode_before: int
    guard: int
    mode_after: int
    guard_speed: float
    saltation_max: float

    def to_dict(self) -> Dict[str, Any]:
        """The fields as a dict."""
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class HybridSolution(_Json):
    """What :func:`hybrid_jacobian` found.

    Attributes
    ----------
    x : numpy.ndarray
        x(t1), shape (n,), float64.
    mode : int
        The mode at t1.
    jacobian : numpy.ndarray
        dx(t1)/dx(t0), shape (n, n), row-major: ``jacobian[i, j]`` is dx_i(t1)/dx_j(t0).
    events : tuple of HybridEvent
        In order.
    probe_gap : float
        max |J(dt) - J(dt/2)| (0 when the probe check is off).
    spectral_radius : float
        Largest |eigenvalue| of J.
    worst_gain : float
        Largest singular value of J (max |J d| over unit d).
    """

    x: np.ndarray
    mode: int
    jacobian: np.ndarray
    events: Tuple[HybridEvent, ...]
    probe_gap: float
    spectral_radius: float = float("nan")
    worst_gain: float = float("nan")

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types."""
        return {"x": self.x.tolist(), "mode": self.mode, "jacobian": self.jacobian.tolist(),
                "events": [e.to_dict() for e in self.events], "probe_gap": self.probe_gap,
                "spectral_radius": self.spectral_radius, "worst_gain": self.worst_gain}

    def __repr__(self) -> str:
        rows = "[" + ", ".join("[" + ", ".join(f"{v:.4g}" for v in r) + "]" for r in self.jacobian) + "]"
        x = ", ".join(f"{v:.6g}" for v in self.x)
        return f"HybridSolution(x = [{x}], J = {rows}, {len(self.events)} events, probe gap {self.probe_gap:.2g})"


def hybrid_jacobian(system: Union[BouncingDrop, SlopeBall, WarmStartedDrop, HybridSystem], x0: _ArrayLike,
                    t0: float, t1: float, *, mode: int = 0, dt: float = _HYBRID["dt"],
                    graze_speed: float = _HYBRID["graze_speed"], probe_rtol: float = _HYBRID["probe_rtol"],
                    max_steps: int = _HYBRID["max_steps"]) -> HybridSolution:
    """The Jacobian dx(t1)/dx(t0) of a hybrid system through its events, or a typed refusal.

    The core steps the flow with RK4 at a fixed step, brackets each event to one step,
    locates it inside the step and composes the flow Jacobians with the events' saltation
    matrices. It refuses when no honest Jacobian exists.

    Parameters
    ----------
    system : BouncingDrop, SlopeBall, WarmStartedDrop or a HybridSystem
        A shipped system (run with the GIL released) or a Python object with the methods
        of :class:`HybridSystem` (called back from the core; an exception one of them
        raises is re-raised here unchanged).
    x0 : array_like
        x(t0), shape (n,).
    t0, t1 : float
        Start and end times, t1 > t0.
    mode : int
        The mode at t0.
    dt : float
        Fixed step.
    graze_speed : float
        Events whose guard speed is below this are refused as grazing.
    probe_rtol : float
        The answer is recomputed with dt/2 and refused if the Jacobian moves by more than
        probe_rtol * max(1, max|J|); 0 switches the check off.
    max_steps : int
        Refuse longer runs.

    Returns
    -------
    HybridSolution

    Raises
    ------
    Grazing
        An event slower than ``graze_speed``; the message gives the time-of-impact term
        the saltation matrix would have carried.
    HiddenState
        The system declares state outside x that its flow depends on.
    TwoEventsInOneStep
        Two events inside one step.
    ProbeDependent
        The Jacobian moved beyond ``probe_rtol`` when recomputed with dt/2.
    InvalidParameter, TooManySteps, NonFinite

    Examples
    --------
    >>> import ferromotion as fm
    >>> s = fm.hybrid_jacobian(fm.BouncingDrop(), [1.0, 0.0], 0.0, 0.8)
    >>> s.jacobian.shape, len(s.events), round(float(s.jacobian[1, 0]), 2)   # as fm.exact
    ((2, 2), 1, 3.61)
    >>> fm.hybrid_jacobian(fm.BouncingDrop(), [4e-8, 0.0], 0.0, 1.5e-4, dt=1e-5)
    Traceback (most recent call last):
        ...
    ferromotion.Grazing: grazing impact at t = ... s: speed 8.8...e-4 m/s is below the threshold 1e-3 m/s
    (the time-of-impact term would be 1.8...e4 1/s)
    """
    d = _core.hybrid_jacobian(system, _float_array(x0, "x0"), t0, t1, mode=mode, dt=dt, graze_speed=graze_speed,
                              probe_rtol=probe_rtol, max_steps=max_steps)
    return HybridSolution(x=_frozen(d["x"]), mode=d["mode"], jacobian=_frozen(d["jacobian"]),
                          events=tuple(HybridEvent(**e) for e in d["events"]), probe_gap=d["probe_gap"],
                          spectral_radius=d["spectral_radius"], worst_gain=d["worst_gain"])


# ---------------------------------------------------------------------------------------
# Gradient checks and receipts

_CHECK: Dict[str, Any] = _DEFAULTS["check"]
#: The fixtures :func:`check_fixture` knows, by name.
FIXTURES: Tuple[str, ...] = tuple(_core.FIXTURES)
#: The ``schema`` field of every receipt; ``receipt.schema.json`` describes the document.
RECEIPT_SCHEMA: str = _core.RECEIPT_SCHEMA


@functools.lru_cache(maxsize=1)
def _git_identity() -> Tuple[str, str]:
    """(commit, dirty) of the ferromotion checkout this package is imported from, or
    ("unknown", "unknown") when it is not one (an installed wheel; a package that merely sits
    inside someone else's repository; no git)."""
    here = Path(__file__).resolve().parent
    try:
        top = subprocess.run(["git", "-C", str(here), "rev-parse", "--show-toplevel", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=True).stdout.splitlines()
        root, commit = Path(top[0]), top[1]
        if not (root / "python" / "ferromotion" / "__init__.py").resolve() == Path(__file__).resolve():
            return "unknown", "unknown"
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10, check=True).stdout
        return commit, "true" if status.strip() else "false"
    except (OSError, subprocess.SubprocessError, IndexError, ValueError):
        return "unknown", "unknown"


def environment() -> Dict[str, str]:
    """Who is checking: the identity every receipt written from Python carries in
    ``environment.extra`` (next to the core's own version and target).

    Keys: ``package`` and ``package_version``, ``git_commit`` and ``git_dirty`` of the
    ferromotion checkout the package is imported from ("unknown" when it is not one),
    ``platform``, ``python``, ``python_implementation`` and ``numpy``.

    Examples
    --------
    >>> import ferromotion as fm
    >>> sorted(fm.environment())
    ['git_commit', 'git_dirty', 'numpy', 'package', 'package_version', 'platform', 'python', 'python_implementation']
    """
    commit, dirty = _git_identity()
    return {
        "package": "ferromotion",
        "package_version": __version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "numpy": np.__version__,
    }


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class CheckDirection(_Json):
    """The check along one direction d.

    Attributes
    ----------
    label : str
        ``"random 0"``, ``"coordinate 1"``, ...
    direction : numpy.ndarray
        The unit direction, shape (n,).
    claimed : float
        The claimed directional derivative g . d.
    eps : numpy.ndarray
        The probe sizes of the central-difference sweep, largest first, shape (m,).
    fd : numpy.ndarray
        (f(x + eps d) - f(x - eps d)) / (2 eps) per probe (NaN where an evaluation failed).
    error : numpy.ndarray
        |g . d - fd| / max(1, |g . d|, |fd|) per probe: the V of truncation and round-off.
    probe_classification : tuple of str
        Per probe: ``"smooth"``, ``"event-crossing"`` (the event sequence differs between
        +eps and -eps) or ``"grazing"``.
    best_error, best_eps : float or None
        The smallest error over smooth probes and its probe size.
    smooth_below : float or None
        The largest probe below which every probe is smooth (None: not even the smallest).
    taylor_slope : float or None
        Fitted slope of the Taylor remainder on log-log axes: ~1 for a right gradient, ~0
        for a wrong one (~2 when ``taylor_second_order``); None when the remainder is
        below round-off throughout.
    taylor_second_order : bool
        A Hessian-vector product was claimed and the second-order remainder is reported.
    classification : str
        The direction's: ``"smooth"``, ``"event-crossing"`` or ``"grazing"``.
    certified : bool
        Smooth, agrees to tolerance at its best probe, and the Taylor slope confirms it.
    """

    label: str
    direction: np.ndarray
    claimed: float
    eps: np.ndarray
    fd: np.ndarray
    error: np.ndarray
    probe_classification: Tuple[str, ...]
    best_error: Optional[float]
    best_eps: Optional[float]
    smooth_below: Optional[float]
    taylor_slope: Optional[float]
    taylor_second_order: bool
    classification: str
    certified: bool

    @classmethod
    def _from_core(cls, d: Mapping[str, Any]) -> "CheckDirection":
        def column(key: str) -> np.ndarray:
            return _frozen(np.array([np.nan if p[key] is None else p[key] for p in d["probes"]], dtype=np.float64))

        return cls(label=d["label"], direction=_frozen(np.array(d["direction"], dtype=np.float64)),
                   claimed=d["claimed"], eps=column("eps"), fd=column("fd"), error=column("error"),
                   probe_classification=tuple(p["classification"] for p in d["probes"]), best_error=d["best_error"],
                   best_eps=d["best_eps"], smooth_below=d["smooth_below"], taylor_slope=d["taylor_slope"],
                   taylor_second_order=d["taylor_second_order"], classification=d["classification"],
                   certified=d["certified"])

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types (arrays as lists, NaN as None)."""
        return _json_ready({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    def __repr__(self) -> str:
        best = ("no smooth probe" if self.best_error is None
                else f"best error {self.best_error:.2e} at eps {self.best_eps:.1e}")
        slope = "-" if self.taylor_slope is None else f"{self.taylor_slope:.2f}"
        return (f"CheckDirection({self.label}: {self.classification}, {best}, Taylor slope {slope}, "
                f"{'certified' if self.certified else 'not certified'})")


class Receipt(_Json):
    """A gradient check's receipt: everything needed to judge its verdict later.

    Made by :func:`check_gradient` and :func:`check_fixture`; the core writes it, this
    class reads it. ``to_json()`` is the document ``receipt.schema.json`` describes
    (see :func:`receipt_schema`).

    Attributes
    ----------
    verdict : str
        ``"verified"`` (every direction smooth, agreeing to tolerance, Taylor slope
        confirming), ``"not-verified"`` (some smooth direction disagrees) or ``"refused"``
        (some direction crosses an event or grazes: smooth differences cannot judge it).
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
        Over the directions' best errors (NaN when no direction had a smooth probe).
    evaluations : int
        Objective evaluations spent.
    options : dict
        The check's options as the core used them.
    environment : dict
        ``core_version``, ``target`` and ``extra`` ([key, value] pairs, see
        :func:`environment`).

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.check_fixture("drop-exact")
    >>> r.verdict, r.verified, len(r.directions), r.directions[0].error.shape
    ('verified', True, 6, (19,))
    >>> r.to_dict()["schema"]
    'ferromotion.receipt/1'
    """

    def __init__(self, receipt: _core.Receipt) -> None:
        self._receipt = receipt
        d = json.loads(receipt.to_json())
        self._dict: Dict[str, Any] = d
        report = d["report"]
        self.schema: str = d["schema"]
        self.verdict: str = report["verdict"]
        self.why: str = report["why"]
        self.objective: Dict[str, Any] = d["objective"]
        self.x: np.ndarray = _frozen(np.array(d["x"], dtype=np.float64))
        self.gradient: np.ndarray = _frozen(np.array(d["gradient"], dtype=np.float64))
        self.directions: Tuple[CheckDirection, ...] = tuple(CheckDirection._from_core(r) for r in report["directions"])
        self.max_error: float = np.nan if report["max_error"] is None else report["max_error"]
        self.median_error: float = np.nan if report["median_error"] is None else report["median_error"]
        self.evaluations: int = report["evaluations"]
        self.options: Dict[str, Any] = report["options"]
        self.environment: Dict[str, Any] = d["environment"]

    @property
    def verified(self) -> bool:
        """The verdict is ``"verified"``."""
        return self.verdict == "verified"

    def summary(self) -> str:
        """One line: the objective, the verdict, why, and the errors (the core's text)."""
        return self._receipt.summary()

    def to_dict(self) -> Dict[str, Any]:
        """The receipt document as plain Python types (non-finite numbers as None)."""
        return copy.deepcopy(self._dict)

    def to_json(self, indent: Optional[int] = 2) -> str:
        """The receipt document as JSON text (UTF-8 characters kept as they are)."""
        return json.dumps(self._dict, indent=indent, allow_nan=False, ensure_ascii=False)

    def write(self, path: Union[str, "os.PathLike[str]"]) -> Path:
        """Write the receipt's JSON to ``path`` (UTF-8, indented); returns the path."""
        p = Path(path)
        p.write_text(self.to_json() + "\n", encoding="utf-8")
        return p

    def plot(self, *, title: Optional[str] = None, width: int = 720, height: int = 480) -> Any:
        """A Bokeh figure: each direction's normalized error against the probe size, log-log.

        A right gradient shows a V (truncation error falling with eps, round-off rising);
        probes that cross an event are drawn as crosses. Needs bokeh
        (``pip install 'ferromotion[plot]'``).
        """
        from .plot import receipt_figure

        return receipt_figure(self, title=title, width=width, height=height)

    def __repr__(self) -> str:
        name = self.objective["name"] or "unnamed objective"
        return (f"Receipt({name}: {self.verdict}, {len(self.directions)} directions, "
                f"max error {self.max_error:.2e})")


def receipt_schema() -> Dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a receipt document, shipped with the package.

    Examples
    --------
    >>> import ferromotion as fm
    >>> fm.receipt_schema()["properties"]["schema"]["const"] == fm.RECEIPT_SCHEMA
    True
    """
    text = (Path(__file__).resolve().parent / "receipt.schema.json").read_text(encoding="utf-8")
    schema: Dict[str, Any] = json.loads(text)
    return schema


def _check_options(eps: Optional[_ArrayLike], taylor_h: Optional[_ArrayLike]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for name, value in (("eps", eps), ("taylor_h", taylor_h)):
        if value is not None:
            a = _float_array(value, name)
            if a.ndim != 1:
                raise InvalidParameter(f"invalid parameter `{name}`: expected array of shape (n,), got {a.shape}")
            out[name] = [float(v) for v in a]
    return out


def _extra() -> List[Tuple[str, str]]:
    return list(environment().items())


def check_gradient(f: Callable[[np.ndarray], float], grad: _ArrayLike, x: _ArrayLike, *,
                   events: Optional[Callable[[np.ndarray], Any]] = None,
                   hvp: Optional[Callable[[np.ndarray], Any]] = None, eps: Optional[_ArrayLike] = None,
                   taylor_h: Optional[_ArrayLike] = None, directions: int = _CHECK["random_directions"],
                   coordinates: bool = _CHECK["coordinates"], seed: int = _CHECK["seed"], tol: float = _CHECK["tol"],
                   graze_speed: float = _CHECK["graze_speed"], objective: Optional[str] = None, units: str = "",
                   description: str = "", route: str = "", integrator: str = "",
                   tolerances: Optional[Mapping[str, float]] = None) -> Receipt:
    """Is this gradient real? Check a claimed gradient of any scalar function, with evidence.

    Along seeded random unit directions (and every coordinate axis) the core compares
    g . d with centered differences over a logarithmic sweep of probe sizes (the whole
    curve is kept, never one epsilon), runs the Taylor remainder test, and, when
    ``events`` is given, classifies each probe and direction: a probe whose two sides see
    different event sequences is event-crossing and never certifies anything. The numerics
    run in the core; ``f``, ``events`` and ``hvp`` are called back from it.

    Parameters
    ----------
    f : callable
        ``f(x) -> float`` for x a float64 array of shape (n,). Return NaN where the model
        is undefined (that probe then certifies nothing); an exception ``f`` raises stops
        the check and propagates unchanged.
    grad : array_like
        The claimed gradient at x, shape (n,).
    x : array_like
        The point, shape (n,).
    events : callable, optional
        ``events(x)`` -> the event sequence the evaluation went through (a sequence of
        ints, e.g. the step index of each bounce), or ``(sequence, min_event_speed)`` when
        events have a speed (slower than ``graze_speed`` is grazing).
    hvp : callable, optional
        ``hvp(d)`` -> the claimed Hessian-vector product H d at x, shape (n,): the Taylor
        test then expects slope ~2.
    eps : array_like, optional
        Probe sizes; default 19 from 1e-1 down to 1e-10, half a decade apart.
    taylor_h : array_like, optional
        Step sizes of the Taylor remainder test; default 1e-2 down to 1e-6.
    directions : int
        Seeded random unit directions (besides the coordinates).
    coordinates : bool
        Also check along every coordinate axis.
    seed : int
        Seed of the random directions (the same seed gives the same directions everywhere).
    tol : float
        Largest normalized error that certifies a direction.
    graze_speed : float
        Events slower than this make a direction grazing.
    objective, units, description, route, integrator : str
        What is certified against and how the gradient was produced, for the receipt.
        ``objective`` defaults to ``f``'s name.
    tolerances : mapping, optional
        Name -> value of the integrator's tolerances and parameters (dt, k, rtol, ...).

    Returns
    -------
    Receipt
        Its ``environment.extra`` carries :func:`environment`.

    Examples
    --------
    >>> import numpy as np, ferromotion as fm
    >>> def f(x):
    ...     return float(np.sin(x[0]) * x[1] ** 2)
    >>> x = np.array([0.3, 2.0])
    >>> right = [np.cos(0.3) * 4.0, np.sin(0.3) * 4.0]
    >>> fm.check_gradient(f, right, x, objective="sin(a) b^2").verdict
    'verified'
    >>> r = fm.check_gradient(f, [right[0], 0.0], x)   # forgot the b term
    >>> r.verdict, [d.label for d in r.directions if not d.certified][-1]
    ('not-verified', 'coordinate 1')
    """
    if objective is None:
        objective = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    info = {"name": objective, "units": units, "description": description, "route": route,
            "integrator": integrator, "tolerances": {str(k): float(v) for k, v in (tolerances or {}).items()}}
    receipt = _core.check_gradient(f, _float_array(grad, "grad"), _float_array(x, "x"), info, events=events, hvp=hvp,
                                   directions=directions, coordinates=coordinates, seed=seed, tol=tol,
                                   graze_speed=graze_speed, extra=_extra(),
                                   **_check_options(eps, taylor_h))
    return Receipt(receipt)


def check_fixture(name: str, *, eps: Optional[_ArrayLike] = None, taylor_h: Optional[_ArrayLike] = None,
                  directions: int = _CHECK["random_directions"], coordinates: bool = _CHECK["coordinates"],
                  seed: int = _CHECK["seed"], tol: float = _CHECK["tol"],
                  graze_speed: float = _CHECK["graze_speed"]) -> Receipt:
    """The receipt of one of the core's fixtures (:data:`FIXTURES`).

    - ``scalar``: x_{k+1} = a x_k + b u, J = (x2 - 2)^2 / 2 at (a, b) = (0.5, 0.4), gradient
      (-1.61, -1.725);
    - ``projectile``: a projectile on semi-implicit Euler aimed at a landing point;
    - ``drop-exact``, ``drop-fixed``: v(T) of the rigid drop against the saltation gradient
      (verified) and against the fixed-step penalty tangent at k = 1e6, dt = 1e-4 (not
      verified: it answers another question);
    - ``drop-fixed-own-map``: the same tangent against its own discrete map (verified for
      probes below about |v| dt);
    - ``drop-across-impact``: T a hair after the impact, so every direction crosses it
      (refused);
    - ``drop-grazing``: an impact at 8.9e-4 m/s (refused).

    Options as :func:`check_gradient`.

    Raises
    ------
    InvalidParameter
        An unknown name (the message lists the known ones).

    Examples
    --------
    >>> import ferromotion as fm
    >>> [(n, fm.check_fixture(n).verdict) for n in ("scalar", "drop-fixed", "drop-across-impact")]
    [('scalar', 'verified'), ('drop-fixed', 'not-verified'), ('drop-across-impact', 'refused')]
    """
    return Receipt(_core.check_fixture(name, directions=directions, coordinates=coordinates, seed=seed, tol=tol,
                                       graze_speed=graze_speed, extra=_extra(), **_check_options(eps, taylor_h)))


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Conditioning(_Json):
    """How well a sensitivity matrix observes its inputs.

    Attributes
    ----------
    singular_values : numpy.ndarray
        Descending, one per input, shape (n_in,) (zeros beyond the rank).
    condition_number : float
        Largest over smallest (inf when rank-deficient).
    weak_directions : numpy.ndarray
        Unit input combinations observed at less than ``rel`` of the strongest, one per
        row, shape (m, n_in).
    """

    singular_values: np.ndarray
    condition_number: float
    weak_directions: np.ndarray

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types (inf as None)."""
        return _json_ready({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    def __repr__(self) -> str:
        sv = ", ".join(f"{s:.3g}" for s in self.singular_values)
        return (f"Conditioning(singular values [{sv}], condition number {self.condition_number:.3g}, "
                f"{len(self.weak_directions)} weak)")


def conditioning(jacobian: Any, rel: float = 1e-8) -> Conditioning:
    """Singular values of a sensitivity matrix and its weakly observed input combinations.

    Parameters
    ----------
    jacobian : array_like
        Shape (n_out, n_in), row-major (``jacobian[i, j]`` = d out_i / d in_j).
    rel : float
        Combinations with a singular value below ``rel`` times the largest are weak.

    Examples
    --------
    >>> import ferromotion as fm
    >>> c = fm.conditioning([[1.0, 1.0], [1.0, 1.0 + 1e-12]])
    >>> c.weak_directions.shape, round(abs(float(c.weak_directions[0, 0])), 3)
    ((1, 2), 0.707)
    """
    d = _core.conditioning(_float_array(jacobian, "jacobian"), rel)
    return Conditioning(singular_values=_frozen(d["singular_values"]), condition_number=d["condition_number"],
                        weak_directions=_frozen(d["weak_directions"]))


# ---------------------------------------------------------------------------------------
# The quadruped

_QUAD: Dict[str, Any] = _DEFAULTS["quadruped"]
#: Contact-mode names, indexed by the codes in :attr:`QuadrupedTrajectory.modes`.
MODE_NAMES: Tuple[str, ...] = tuple(_core.MODE_NAMES)
#: The feet, in the order of the legs everywhere (FL, FR, HL, HR).
FOOT_NAMES: Tuple[str, ...] = tuple(_core.FOOT_NAMES)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class QuadrupedTrajectory(_Json):
    """One law's run at dt, for plots and animation.

    Attributes
    ----------
    t : numpy.ndarray
        Step times, s, shape (n + 1,).
    q : numpy.ndarray
        Generalised coordinates per time, shape (n + 1, 11): trunk x (m), z (m), pitch
        (rad), then hip and knee angles (rad) of FL, FR, HL, HR.
    v : numpy.ndarray
        Their velocities, shape (n + 1, 11).
    modes : numpy.ndarray
        int8 contact-mode code of each foot in each step, shape (n, 4); names in
        :data:`MODE_NAMES`.
    points : numpy.ndarray
        Drawing points per time, shape (n + 1, 12, 2): hips, knees, feet (FL, FR, HL, HR
        each), (x, z) in m.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    modes: np.ndarray
    points: np.ndarray

    @classmethod
    def _from_core(cls, d: Mapping[str, Any]) -> "QuadrupedTrajectory":
        state = d["state"]
        ndof = state.shape[1] // 2
        return cls(t=_frozen(d["t"]), q=_frozen(state[:, :ndof]), v=_frozen(state[:, ndof:]),
                   modes=_frozen(d["modes"]), points=_frozen(d["points"]))

    @property
    def hips(self) -> np.ndarray:
        """Hip points, shape (n + 1, 4, 2)."""
        return self.points[:, 0:4]

    @property
    def knees(self) -> np.ndarray:
        """Knee points, shape (n + 1, 4, 2)."""
        return self.points[:, 4:8]

    @property
    def feet(self) -> np.ndarray:
        """Foot points, shape (n + 1, 4, 2)."""
        return self.points[:, 8:12]

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types (nested lists), with ``mode_names``."""
        d = {f.name: getattr(self, f.name).tolist() for f in dataclasses.fields(self)}
        d["mode_names"] = list(MODE_NAMES)
        return d

    def __repr__(self) -> str:
        return f"QuadrupedTrajectory({len(self.t) - 1} steps, t = {self.t[0]:g} .. {self.t[-1]:g} s)"


def _exp(x: float) -> str:
    """``1e4`` as the core's tables write it (Rust's ``{:.0e}``), not Python's ``1e+04``."""
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


class QuadrupedLaw:
    """Both axes for one contact law (one row of the two-axis table).

    Attributes
    ----------
    label : str
        ``"rigid (LCP)"`` or ``"penalty k=1e4"``.
    law : str
        ``"rigid"`` or ``"penalty"``.
    stiffness : float or None
        The penalty law's k, N/m per foot (None for rigid).
    contact : dict
        The law's parameters as the core states them.
    failure : str or None
        Why the run failed (an unstable explicit step, a refused LCP); the axes are then None.
    forward : dict or None
        Forward fidelity: ``max_penetration`` (m), ``max_creep`` (m/s), ``contact_work``
        (J), ``energy_start`` and ``energy_end`` (J), ``converged_distance`` (m, to the same
        law at dt/refinement), ``converged_final_velocity`` (m/s), ``converged_penetration``
        (m), ``distance_to_rigid`` (m, information only), ``travel`` (m).
    gradient : dict or None
        Gradient accuracy as the core reports it (``tangent_error``,
        ``typical_probe_error``, ``converged_error``, ``refined_tangent_error``,
        ``certified_columns``, the reference columns, ...).
    modes : dict or None
        Contact-mode changes over the run: ``total``, ``touchdowns``, ``liftoffs``,
        ``stick_to_slide``, ``slide_to_stick``, ``slide_reversals``, ``per_foot``,
        ``contact_foot_steps``.
    lcp : dict or None
        The rigid law's worst LCP check over the run.
    """

    def __init__(self, d: Mapping[str, Any], run: _core.QuadrupedRun, index: int) -> None:
        self._run = run
        self._index = index
        self._trajectory: Optional[QuadrupedTrajectory] = None
        contact = d["contact"]
        self.law: str = d["law"]
        self.contact: Dict[str, Any] = contact
        self.stiffness: Optional[float] = contact.get("stiffness")
        self.label: str = "rigid (LCP)" if self.stiffness is None else f"penalty k={_exp(self.stiffness)}"
        self.failure: Optional[str] = d["failure"]
        self.forward: Optional[Dict[str, Any]] = d["forward"]
        self.gradient: Optional[Dict[str, Any]] = d["gradient"]
        self.modes: Optional[Dict[str, Any]] = d["modes"]
        self.lcp: Optional[Dict[str, Any]] = d["lcp"]

    @property
    def tangent(self) -> Optional[np.ndarray]:
        """The law's forward-mode one-period Jacobian, shape (6, 3): rows the trunk's final
        (x, z, pitch, xdot, zdot, pitch rate), columns (z0, xdot0, kp)."""
        if self.gradient is None:
            return None
        return _frozen(np.array(self.gradient["tangent"], dtype=np.float64).reshape(6, 3))

    @property
    def reference(self) -> Optional[np.ndarray]:
        """The probe-stable central-difference reference, shape (6, 3) (NaN columns where
        no probe was stable)."""
        if self.gradient is None:
            return None
        cols = [[np.nan if v is None else v for v in c["column"]] for c in self.gradient["reference"]]
        return _frozen(np.array(cols, dtype=np.float64).T)

    @property
    def trajectory(self) -> Optional[QuadrupedTrajectory]:
        """The run at dt (None when it failed)."""
        if self._trajectory is None:
            d = self._run.trajectory(self._index)
            self._trajectory = None if d is None else QuadrupedTrajectory._from_core(d)
        return self._trajectory

    def __repr__(self) -> str:
        if self.failure is not None:
            return f"QuadrupedLaw({self.label}: FAILED: {self.failure})"
        assert self.forward is not None and self.gradient is not None and self.modes is not None
        err = self.gradient["tangent_error"]
        return (f"QuadrupedLaw({self.label}: penetration {self.forward['max_penetration']:.2e} m, "
                f"{self.modes['total']} mode changes, tangent error {'-' if err is None else f'{err:.2e}'})")


# Columns of QuadrupedReport.table(): name -> (section, field) in the core's report.
_QUAD_COLUMNS = {
    "penetration": ("forward", "max_penetration"),
    "creep": ("forward", "max_creep"),
    "contact_work": ("forward", "contact_work"),
    "converged_distance": ("forward", "converged_distance"),
    "distance_to_rigid": ("forward", "distance_to_rigid"),
    "tangent_error": ("gradient", "tangent_error"),
    "typical_probe_error": ("gradient", "typical_probe_error"),
    "converged_error": ("gradient", "converged_error"),
    "refined_tangent_error": ("gradient", "refined_tangent_error"),
}


class QuadrupedReport(_Json):
    """The quadruped's two-axis comparison (made by :func:`quadruped`): the rigid law and
    the penalty law at each stiffness, forward fidelity and gradient accuracy.

    Attributes
    ----------
    config : dict
        What was run (the core's configuration, robot included).
    inputs : tuple of str
        The Jacobians' columns: ``("z0", "xdot0", "kp")``.
    outputs : tuple of str
        Their rows: the trunk's final ``x, z, pitch, xdot, zdot, pitch_rate``.
    laws : tuple of QuadrupedLaw
        The rigid law first, then one per stiffness.
    verdict : dict
        Which law wins each axis, decided by the core: ``forward`` (``rigid_wins``,
        ``matches`` ...; laws by index into ``penalty``), ``gradient`` (one ``outcome`` per
        measure: ``tie``, ``win``, ``loss``, ``undecided`` or ``not computed``), ``both``.
    """

    def __init__(self, run: _core.QuadrupedRun) -> None:
        self._run = run
        d = json.loads(run.to_json())
        self._dict: Dict[str, Any] = d
        self.config: Dict[str, Any] = d["config"]
        self.inputs: Tuple[str, ...] = tuple(d["inputs"])
        self.outputs: Tuple[str, ...] = tuple(d["outputs"])
        self.laws: Tuple[QuadrupedLaw, ...] = tuple(
            QuadrupedLaw(law, run, i) for i, law in enumerate([d["rigid"], *d["penalty"]]))
        #: Which law wins each axis, as the core decides it (the lab reads the same field).
        self.verdict: Dict[str, Any] = d["verdict"]

    @property
    def rigid(self) -> QuadrupedLaw:
        """The rigid (LCP) law."""
        return self.laws[0]

    @property
    def penalty(self) -> Tuple[QuadrupedLaw, ...]:
        """The penalty law, one per stiffness."""
        return self.laws[1:]

    def table(self) -> Dict[str, np.ndarray]:
        """The two-axis table as numpy columns, one row per law (rigid first).

        ``label``, ``law`` (str); ``stiffness`` (N/m, NaN for rigid); forward fidelity:
        ``penetration`` (m), ``creep`` (m/s), ``contact_work`` (J), ``energy_change`` (J),
        ``converged_distance`` (m, to the same law at dt/refinement), ``distance_to_rigid``
        (m, information only), ``mode_changes`` (int); gradient accuracy:
        ``tangent_error``, ``typical_probe_error``, ``converged_error``,
        ``refined_tangent_error`` (NaN when not computed or no column certified),
        ``certified_columns`` (int); ``failed`` (bool). A failed law has NaN and -1.
        """
        def col(section: str, key: str) -> np.ndarray:
            vals = []
            for law in self.laws:
                part = getattr(law, section)
                v = None if part is None else part[key]
                vals.append(np.nan if v is None else v)
            return _frozen(np.array(vals, dtype=np.float64))

        def count(section: str, key: str) -> np.ndarray:
            return _frozen(np.array([-1 if getattr(law, section) is None else getattr(law, section)[key]
                                     for law in self.laws], dtype=np.int64))

        out: Dict[str, np.ndarray] = {
            "label": _frozen(np.array([law.label for law in self.laws], dtype=object)),
            "law": _frozen(np.array([law.law for law in self.laws], dtype=object)),
            "stiffness": _frozen(np.array([np.nan if law.stiffness is None else law.stiffness for law in self.laws],
                                          dtype=np.float64)),
        }
        for name, (section, key) in _QUAD_COLUMNS.items():
            out[name] = col(section, key)
        # The core's table prints energy_end - energy_start as "dE".
        out["energy_change"] = _frozen(col("forward", "energy_end") - col("forward", "energy_start"))
        out["mode_changes"] = count("modes", "total")
        out["certified_columns"] = count("gradient", "certified_columns")
        out["failed"] = _frozen(np.array([law.failure is not None for law in self.laws], dtype=bool))
        return out

    def format_table(self) -> str:
        """The two-axis table as text (the core's), one line per law."""
        return self._run.table().rstrip("\n")

    def to_dict(self) -> Dict[str, Any]:
        """The core's serialisation without the trajectories (NaN as None)."""
        return copy.deepcopy(self._dict)

    def __repr__(self) -> str:
        ks = ", ".join(_exp(law.stiffness) for law in self.penalty if law.stiffness is not None)
        failed = sum(law.failure is not None for law in self.laws)
        return f"QuadrupedReport(rigid + penalty at k = [{ks}] N/m, dt = {self.config['dt']:g} s, {failed} failed)"


def _quadruped_config(robot: Optional[Mapping[str, float]], **fields: Any) -> str:
    """The core's configuration document; non-finite numbers are refused here because
    JSON cannot carry them."""
    config: Dict[str, Any] = dict(fields)
    if robot is not None:
        config["robot"] = {str(k): float(v) for k, v in robot.items()}
    for name, value in [*fields.items(), *config.get("robot", {}).items()]:
        values = value if isinstance(value, list) else [value]
        for v in values:
            if isinstance(v, float) and not math.isfinite(v):
                raise InvalidParameter(f"invalid parameter `{name}` = {v}: must be finite")
    return json.dumps(config)


def quadruped(*, stiffness: Union[float, _ArrayLike] = tuple(_QUAD["stiffness"]),
              converged_gradient: bool = _QUAD["converged_gradient"], dt: float = _QUAD["dt"],
              t_final: float = _QUAD["t_final"], refinement: int = _QUAD["refinement"],
              damping_ratio: float = _QUAD["damping_ratio"], reference_mass: float = _QUAD["reference_mass"],
              clearance: float = _QUAD["clearance"], speed: float = _QUAD["speed"],
              typical_probe: float = _QUAD["typical_probe"], probe_tol: float = _QUAD["probe_tol"],
              min_probe: float = _QUAD["min_probe"], max_steps: int = _QUAD["max_steps"],
              robot: Optional[Mapping[str, float]] = None) -> QuadrupedReport:
    """Rigid against penalty contact on a trotting planar quadruped, on both axes.

    One time-stepping scheme, two contact laws (only the contact impulse differs): the
    velocity-level LCP with Coulomb friction (Lemke) and a one-sided spring-damper with
    friction saturated at the cone, at each penalty stiffness. Per law: forward fidelity
    (penetration, creep of sticking feet, contact work, energy, distance to its own
    dt/refinement run) and gradient accuracy (the one-period tangent against probe-stable
    central differences that keep the contact-mode sequence). The core runs it with the
    GIL released (about a second at the defaults; ``converged_gradient=True`` adds about
    a minute).

    Parameters
    ----------
    stiffness : float or array_like
        Penalty stiffnesses, N/m per foot.
    converged_gradient : bool
        Also measure each law's gradient against central differences of its dt/refinement
        run (expensive).
    dt : float
        Fixed step, s.
    t_final : float
        Horizon, s (a whole number of steps; default one gait period).
    refinement : int
        The converged runs use dt / refinement.
    damping_ratio : float
        Penalty damping ratio of a ``reference_mass`` (kg) on the contact spring.
    clearance : float
        Initial foot clearance, m.
    speed : float
        Initial forward trunk speed, m/s.
    typical_probe, probe_tol, min_probe : float
        The simulator-typical probe, the agreement a probe-stable reference column must
        reach, and the smallest probe tried.
    max_steps : int
        Cap on the steps of one rollout.
    robot : mapping, optional
        Overrides of the robot's parameters (``trunk_mass``, ``friction``, ``kp``, ...; see
        ``fm._QUAD["robot"]`` for the defaults).

    Returns
    -------
    QuadrupedReport
        A law whose run fails (an unstable explicit step, a refused LCP) is reported with
        its ``failure``; :func:`quadruped_rollout` raises the typed error instead.

    Raises
    ------
    InvalidParameter, StepDoesNotDivide, TooManySteps, ScenarioError
        Invalid configuration (an unknown robot parameter is a ScenarioError).

    Examples
    --------
    >>> import ferromotion as fm
    >>> q = fm.quadruped(stiffness=[1e4])
    >>> [law.label for law in q.laws]
    ['rigid (LCP)', 'penalty k=1e4']
    >>> t = q.table()
    >>> t["penetration"].shape, bool(t["penetration"][0] < t["penetration"][1])
    ((2,), True)
    >>> q.rigid.trajectory.feet.shape
    (501, 4, 2)
    """
    ks = _float_array(stiffness, "stiffness")
    if ks.ndim > 1:
        raise InvalidParameter(
            f"invalid parameter `stiffness`: expected a number or an array of shape (n,), got {ks.shape}")
    config = _quadruped_config(
        robot, stiffness=[float(k) for k in np.atleast_1d(ks)], converged_gradient=bool(converged_gradient),
        dt=float(dt), t_final=float(t_final), refinement=int(refinement), damping_ratio=float(damping_ratio),
        reference_mass=float(reference_mass), clearance=float(clearance), speed=float(speed),
        typical_probe=float(typical_probe), probe_tol=float(probe_tol), min_probe=float(min_probe),
        max_steps=int(max_steps))
    return QuadrupedReport(_core.quadruped(config))


def equal_budget(drop: Optional[Drop] = None, *, k: float = 1e6, budget: int = 32_000) -> Dict[str, Any]:
    """Every route at the same force-evaluation budget, and the probe-size trap.

    Euler and RK4 at a uniform step, the adaptive route with and without events, and
    ``corrected``, each spending at most ``budget`` force evaluations on one Jacobian,
    scored against ``flow``; then central differences of uniform-step rollouts at probes
    1e-2 .. 1e-8, each giving a different answer. Computed by the core (its serde document).

    Examples
    --------
    >>> t = fm.equal_budget(k=1e6, budget=32_000)
    >>> [r["route"] for r in t["rows"]][:2], t["rows"][1]["right_sign"]
    (['Euler uniform', 'RK4 uniform'], False)
    """
    d = drop if drop is not None else Drop()
    table: Dict[str, Any] = json.loads(_core.equal_budget(d, json.dumps({"k": k, "budget": budget})))
    return table


def quadruped_rollout(stiffness: Optional[float] = None, *, steps: Optional[int] = None, dt: float = _QUAD["dt"],
                      t_final: float = _QUAD["t_final"], damping_ratio: float = _QUAD["damping_ratio"],
                      reference_mass: float = _QUAD["reference_mass"], clearance: float = _QUAD["clearance"],
                      speed: float = _QUAD["speed"],
                      robot: Optional[Mapping[str, float]] = None) -> QuadrupedTrajectory:
    """Roll one contact law out from the experiment's initial state, with the library's step.

    Parameters
    ----------
    stiffness : float, optional
        None for the rigid (LCP) law, else the penalty law's k, N/m per foot.
    steps : int, optional
        Steps of ``dt``; default ``t_final / dt``.
    dt, t_final, damping_ratio, reference_mass, clearance, speed, robot
        As :func:`quadruped`.

    Returns
    -------
    QuadrupedTrajectory

    Raises
    ------
    Unstable
        The explicit step blew up (a penalty stiffness too large for dt).
    ContactSolveFailed
        The rigid law's complementarity problem had no verified solution.

    Examples
    --------
    >>> import ferromotion as fm
    >>> fm.quadruped_rollout(steps=100).q.shape
    (101, 11)
    >>> fm.quadruped_rollout(1e8)
    Traceback (most recent call last):
        ...
    ferromotion.Unstable: unstable step at t = ... s: component ... reached ... (beyond 1e3 m/s or rad/s) ...
    """
    config = _quadruped_config(robot, dt=float(dt), t_final=float(t_final), damping_ratio=float(damping_ratio),
                               reference_mass=float(reference_mass), clearance=float(clearance), speed=float(speed))
    return QuadrupedTrajectory._from_core(_core.quadruped_rollout(config, stiffness, steps))


from .study import Study, StudyError, study  # noqa: E402  (study.py builds on the names above)
from .engines import audit_engine  # noqa: E402  (the engines are imported only when an audit runs)
