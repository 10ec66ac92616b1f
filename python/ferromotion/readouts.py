"""The lab's readouts: fits, the blame split, dt refinement and the drop's closed forms (core: ``lab/readout.rs``)."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Optional, Union, overload

import numpy as np

from . import _core
from ._common import ArrayLike, DT, Json, float_array, frozen
from ._results import Blame, EqualBudget, ExponentFit
from .routes import Drop


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Refinement(Json):
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


# Readouts


def blame(drop: Drop, k: float, dt: float = DT) -> Blame:
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
    return Blame._from_core(_core.blame(drop, k, dt))


def divergence_exponent(drop: Drop, dt: float = DT) -> ExponentFit:
    """Slope of log(gradient error) on log(k) over k = 10^4, 10^4.5, ..., 10^8 at step dt.

    Examples
    --------
    >>> import ferromotion as fm
    >>> fit = fm.divergence_exponent(fm.Drop(), dt=1e-4)
    >>> fit.points, bool(0 < fit.slope < 1)
    (9, True)
    """
    return ExponentFit._from_core(_core.divergence_exponent(drop, dt))


def contact_share_exponent(drop: Drop) -> ExponentFit:
    """Fitted exponent of the contact-model share on k = 10^4 .. 10^8 (no dt involved).

    Examples
    --------
    >>> import ferromotion as fm
    >>> round(fm.contact_share_exponent(fm.Drop()).slope, 1)
    -0.5
    """
    return ExponentFit._from_core(_core.contact_share_exponent(drop))


def dt_refinement(drop: Drop, k: float, base_dt: float = DT) -> Refinement:
    """Gradient error of the fixed route at base_dt, base_dt/10 and base_dt/100.

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.dt_refinement(fm.Drop(), k=1e6, base_dt=1e-4)
    >>> r.errors.shape
    (3,)
    """
    d = _core.dt_refinement(drop, k, base_dt)
    return Refinement(base_dt=d["base_dt"], errors=frozen(np.array(d["errors"], dtype=np.float64)),
                      ratio_10=d["ratio_10"], ratio_100=d["ratio_100"])


def step_stability(drop: Drop, k: float, dt: float = DT) -> Dict[str, Any]:
    """Whether the fixed route's semi-implicit Euler step is stable in contact at (k, dt).

    From the eigenvalues of the damped spring's contact-phase step matrix (the core's
    ``step_stability``): ``stable`` (spectral radius <= 1), ``spectral_radius`` and
    ``omega_dt`` = sqrt(k/m) dt (the undamped limit is 2; damping lowers it). An unstable
    step's x(T) is blown up: :func:`fixed` says so in its result.

    Examples
    --------
    >>> import ferromotion as fm
    >>> fm.step_stability(fm.Drop(), k=1e6, dt=1e-4)["stable"]
    True
    >>> s = fm.step_stability(fm.Drop(), k=1e9, dt=1e-4)
    >>> s["stable"], round(s["omega_dt"], 2)
    (False, 3.16)
    """
    return dict(_core.step_stability(drop, k, dt))


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
def time_of_impact_term(drop: Drop, speed: ArrayLike) -> np.ndarray: ...


def time_of_impact_term(drop: Drop, speed: Union[None, float, ArrayLike] = None) -> Union[float, np.ndarray]:
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
    speeds = float_array(speed, "speed")
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


def equal_budget(drop: Optional[Drop] = None, *, k: float = 1e6, budget: int = 32_000) -> EqualBudget:
    """Every route at the same force-evaluation budget, and the probe-size trap.

    Euler and RK4 at a uniform step, the adaptive route with and without events (Richardson's
    8 rollouts), the adaptive route's one-rollout forward sensitivities, and ``corrected``,
    each spending at most ``budget`` force evaluations on one Jacobian, scored against
    ``flow``; then central differences of uniform-step rollouts at probes 1e-2 .. 1e-8, each
    giving a different answer. Computed by the core (its document); each row's ``wall_s`` is
    the wall time of its route call (equal evaluations are not equal time), the rest is the
    same on every run. The result reads as a dict (the core's document) and prints as one
    line; ``.format_table()`` prints the table.

    Examples
    --------
    >>> import ferromotion as fm
    >>> t = fm.equal_budget(k=1e6, budget=32_000)
    >>> [r["route"] for r in t["rows"]][:2], t["rows"][1]["right_sign"]
    (['Euler uniform', 'RK4 uniform'], False)
    >>> print(t.format_table().splitlines()[1].split())
    ['route', 'setting', 'evals', 'wall', '(µs)', 'grad', 'err', 'state', 'err', 'dv/dy0', 'sign']
    """
    return EqualBudget(_core.equal_budget(drop if drop is not None else Drop(), {"k": k, "budget": budget}))
