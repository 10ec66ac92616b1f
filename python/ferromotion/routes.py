"""The drop and its routes: x(T) and J = dx(T)/dx(0) by each route (core: ``physics/``, ``lab/scenario.rs``).

Each route passes its options on as ``(names, values)``, two tuples the binding reads as the
core's options struct (a dict would do, but costs a call several times more to build), and
the binding returns the :class:`Route` itself: a route called in a loop pays the core and
well under a microsecond (``benches/call_overhead.py``).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Dict, Optional, Union

from . import _core
from ._common import DEFAULTS, DROP, DT, Json, TOL
from ._results import Route


@dataclasses.dataclass(frozen=True)
class Drop(Json):
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

    height: float = DROP["height"]
    velocity: float = DROP["velocity"]
    t_final: float = DROP["t_final"]
    zeta: float = DROP["zeta"]
    gravity: float = DROP["gravity"]
    mass: float = DROP["mass"]

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


# Routes


def exact(drop: Drop, *, restitution: Optional[float] = None,
          graze_speed: float = DEFAULTS["graze_speed"]) -> Route:
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
    return _core.exact(drop, (("restitution", "graze_speed"), (restitution, graze_speed)))


def fixed(drop: Drop, k: float, dt: float = DT, *, max_steps: int = DEFAULTS["max_steps"]) -> Route:
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
    return _core.fixed(drop, k, dt, (("max_steps",), (max_steps,)))


def rk4(drop: Drop, k: float, dt: float = DT, *, max_steps: int = DEFAULTS["max_steps"]) -> Route:
    """Classical fourth-order Runge-Kutta at a fixed step on the penalty law, tangent by forward mode.

    The uniform higher-order route: on a smooth stretch it converges at fourth order in dt,
    but its uniform step straddles the force's jump at contact entry and its branch-wise
    tangent misses that jump's saltation, like the ``fixed`` route's. Four force
    evaluations per step (``fm.equal_budget`` compares it with the other routes at one
    budget).

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
        ``NonFinite`` names omega * dt when explicit RK4 went unstable (above about 2.8).

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.rk4(fm.Drop(), k=1e6, dt=1e-4)
    >>> r.force_evals == 4 * r.steps == 32000
    True
    >>> bool(r.jacobian[1, 0] < 0)   # a higher order does not restore the saltation
    True
    """
    return _core.rk4(drop, k, dt, (("max_steps",), (max_steps,)))


def corrected(drop: Drop, k: float, dt: float = DT, *, locate: bool = DEFAULTS["locate"],
              max_steps: int = DEFAULTS["max_steps"]) -> Route:
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
        ``step_stable`` is the fixed route's flag (its steps in contact are the same
        semi-implicit Euler): False means x(T) is blown up, however plausible J looks.

    Raises
    ------
    InvalidParameter, StepDoesNotDivide, TooManySteps, NonFinite

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.corrected(fm.Drop(), k=1e6, dt=1e-4)
    >>> bool(r.jacobian[1, 0] > 0), r.force_evals >= fm.fixed(fm.Drop(), k=1e6, dt=1e-4).force_evals
    (True, True)
    """
    return _core.corrected(drop, k, dt, (("locate", "max_steps"), (locate, max_steps)))


def flow(drop: Drop, k: float, *, root_rtol: float = DEFAULTS["root_rtol"],
         max_events: int = DEFAULTS["max_events"]) -> Route:
    """The exact derivative of the continuous penalty ODE (closed form per phase).

    No integrator is involved: this is the reference of the blame split.

    Parameters
    ----------
    drop : Drop
        The drop.
    k : float
        Penalty stiffness, N/m.
    root_rtol : float
        Tolerance on the force-zero times, relative to T. The default 0 brackets each of them
        between adjacent floats (the Jacobian feels an error there times k/m); a positive
        value stops earlier.
    max_events : int
        Cap on contact switches before T.

    Returns
    -------
    Route

    Raises
    ------
    InvalidParameter
        A parameter out of range, or a stiffness f64 cannot hold: when the flow's own error
        bound (the blame split's noise floor) exceeds 1e-3 of its largest Jacobian entry
        (from about k = 1e24 N/m on the default drop), it refuses rather than answer.
    NoImpact, TooManySteps

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.flow(fm.Drop(), k=1e6)
    >>> bool(r.jacobian[1, 0] > 0)
    True
    """
    return _core.flow(drop, k, (("root_rtol", "max_events"), (root_rtol, max_events)))


def tolerance(drop: Drop, k: float, *, rtol: float = TOL["rtol"], atol: Optional[float] = TOL["atol"],
              events: bool = TOL["events"], eps: float = TOL["eps"],
              max_steps: int = TOL["max_steps"], jacobian: str = TOL["jacobian"],
              min_step: float = TOL["min_step"]) -> Route:
    """Dormand-Prince 5(4) with error control; J by central differences of 8 rollouts, or
    by forward sensitivities along one event-located rollout.

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
    jacobian : {"richardson", "forward"}
        ``"richardson"``: central differences of 8 whole rollouts (probes eps and eps/2).
        ``"forward"``: the variational equations integrated with the state along ONE rollout,
        the saltation applied at each located switch; needs ``events=True`` (without located
        switches the tangent never sees the force's jump at entry, so it is refused).
    min_step : float
        Smallest step the controller may ask for, s (0: no floor); below it the rollout is
        refused (:class:`StepTooSmall`) instead of creeping on.

    Returns
    -------
    Route
        ``probe_dependent`` is True when the two probe sizes disagree by more than
        1e-3 max|J|: the value is shown but should not be trusted.

    Raises
    ------
    InvalidParameter, TooManySteps, StepSizeUnderflow, StepTooSmall, NonFinite
        ``InvalidParameter`` names ``events`` for ``jacobian="forward"`` without events.
    ScenarioError
        A ``jacobian`` that is neither ``"richardson"`` nor ``"forward"``.

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.tolerance(fm.Drop(), k=1e6, rtol=1e-6, events=True)
    >>> r.rollouts, bool(r.jacobian[1, 0] > 0)
    (8, True)
    >>> f = fm.tolerance(fm.Drop(), k=1e6, rtol=1e-6, events=True, jacobian="forward")
    >>> f.rollouts, bool(abs(f.jacobian - fm.flow(fm.Drop(), k=1e6).jacobian).max() < 1e-4)
    (1, True)
    """
    # The one fast path (benches/call_overhead.py): when every option but rtol is its signature's
    # own default object (identity: a value that merely compares equal, such as max_steps=1e7, a
    # float, still goes to the core and is refused there), only rtol crosses; the core fills in
    # the same defaults, and the call skips reading six entries (~0.3 us of its ~1 us).
    if (atol is _TOL_ATOL and events is _TOL_EVENTS and eps is _TOL_EPS and max_steps is _TOL_MAX_STEPS
            and jacobian is _TOL_JACOBIAN and min_step is _TOL_MIN_STEP):
        return _core.tolerance(drop, k, (("rtol",), (rtol,)))
    return _core.tolerance(drop, k, (("rtol", "atol", "events", "eps", "max_steps", "jacobian", "min_step"),
                                     (rtol, atol, events, eps, max_steps, jacobian, min_step)))


# fm.tolerance's default objects, by identity (its fast path above).
_TOL_ATOL, _TOL_EVENTS, _TOL_EPS = TOL["atol"], TOL["events"], TOL["eps"]
_TOL_MAX_STEPS, _TOL_JACOBIAN, _TOL_MIN_STEP = TOL["max_steps"], TOL["jacobian"], TOL["min_step"]



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
    return _core.evaluate(text)
