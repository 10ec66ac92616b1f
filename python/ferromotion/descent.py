"""Gradient descent through one impact (core: ``experiments/descent.rs``)."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from . import _core
from ._core import InvalidParameter
from ._common import DEFAULTS, DT, Json, TOL, float_array, frozen, json_ready
from .routes import Drop


# The descent experiment

_DESCENT: Dict[str, Any] = DEFAULTS["descent"]
_ROUTES_WITH = {"exact": (), "fixed": ("k", "dt"), "tolerance": ("k", "rtol"), "corrected": ("k", "dt"),
                "central_differences": ()}


@dataclasses.dataclass(frozen=True)
class Arm(Json):
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
    def fixed(cls, k: float, dt: float = DT) -> "Arm":
        """The fixed-step autodiff tangent of the penalty model at (k N/m, dt s)."""
        return cls("fixed", k=k, dt=dt)

    @classmethod
    def tolerance(cls, k: float, rtol: float = TOL["rtol"]) -> "Arm":
        """Central differences of adaptive rollouts of the penalty model."""
        return cls("tolerance", k=k, rtol=rtol)

    @classmethod
    def corrected(cls, k: float, dt: float = DT) -> "Arm":
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
    return [_arm(a) for a in _core.standard_arms()]


def _arm(spec: Mapping[str, Any]) -> Arm:
    """An arm from the core's document (``{"route": ..., "k": ..., ...}``)."""
    return Arm(spec["route"], k=spec.get("k"), dt=spec.get("dt"), rtol=spec.get("rtol"))


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class DescentRun(Json):
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
class DescentArm(Json):
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
class Landscape(Json):
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
        return json_ready({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    def __repr__(self) -> str:
        n = len(self.heights)
        feasible = int(np.isfinite(self.loss).sum())
        return f"Landscape({n} x {n} grid, {feasible} one-bounce points, {self.local_minima} local minima)"


class Descent(Json):
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

    def __init__(self, doc: Dict[str, Any], drop: Drop) -> None:
        def array(x: Any) -> np.ndarray:
            return frozen(np.array(x, dtype=np.float64))

        self._doc = doc
        problem = doc["problem"]
        self.drop = drop
        self.optimum: np.ndarray = array(problem["optimum"])
        self.height_range: Tuple[float, float] = tuple(problem["height_range"])
        self.velocity_range: Tuple[float, float] = tuple(problem["velocity_range"])
        self.grid: int = problem["grid"]
        self.target: np.ndarray = array(doc["target"])
        land = doc["landscape"]
        heights, velocities = array(land["heights"]), array(land["velocities"])
        self.landscape = Landscape(
            heights=heights, velocities=velocities,
            loss=frozen(np.array(land["loss"], dtype=np.float64).reshape(len(heights), len(velocities))),
            grid_minimum=array(land["grid_minimum"]), local_minima=land["local_minima"],
            starts=frozen(np.array(land["starts"], dtype=np.float64).reshape(-1, 2)),
        )
        arms = []
        for a in doc["arms"]:
            runs = tuple(
                DescentRun(path=frozen(np.array(r["path"], dtype=np.float64).reshape(-1, 2)),
                           iterations=r["iterations"], converged=r["converged"], cannot_step=r["cannot_step"],
                           force_evals=r["force_evals"], final_loss=r["final_loss"])
                for r in a["runs"]
            )
            arms.append(DescentArm(
                arm=_arm(a["arm"]), label=a["label"], runs=runs, converged=a["converged"],
                cannot_step=a["cannot_step"], iterations=a["iterations"], force_evals=a["force_evals"],
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
            "label": frozen(np.array([a.label for a in self.arms], dtype=object)),
            "converged": frozen(np.array([a.converged for a in self.arms], dtype=np.int64)),
            "starts": frozen(np.array([len(a.runs) for a in self.arms], dtype=np.int64)),
            "cannot_step": frozen(np.array([a.cannot_step for a in self.arms], dtype=np.int64)),
            "iterations": frozen(np.array([a.iterations for a in self.arms], dtype=np.int64)),
            "force_evals": frozen(np.array([a.force_evals for a in self.arms], dtype=np.int64)),
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
        d: Dict[str, Any] = json_ready(self._doc)
        return d

    def __repr__(self) -> str:
        summary = ", ".join(f"{a.label} {a.converged}/{len(a.runs)}" for a in self.arms)
        return f"Descent({len(self.arms)} arms from {len(self.landscape.starts)} starts: {summary})"


def _pair(value: Sequence[float], name: str) -> Tuple[float, float]:
    a = float_array(value, name)
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
    problem = {"optimum": _pair(optimum, "optimum"), "height_range": _pair(height_range, "height_range"),
               "velocity_range": _pair(velocity_range, "velocity_range")}
    doc = _core.descent(drop, arms=None if arms is None else list(arms), grid=grid, problem=problem)
    return Descent(doc, drop)
