"""Rigid against penalty contact on a trotting quadruped (core: the ``ferromotion-quadruped`` crate)."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from typing import Any, Dict, Mapping, Optional, Tuple, Union

import numpy as np

from . import _core
from ._core import InvalidParameter
from ._common import ArrayLike, DEFAULTS, Json, Table, float_array, frozen


# The quadruped

_QUAD: Dict[str, Any] = DEFAULTS["quadruped"]
#: Contact-mode names, indexed by the codes in :attr:`QuadrupedTrajectory.modes`.
MODE_NAMES: Tuple[str, ...] = tuple(_core.MODE_NAMES)
#: The feet, in the order of the legs everywhere (FL, FR, HL, HR).
FOOT_NAMES: Tuple[str, ...] = tuple(_core.FOOT_NAMES)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class QuadrupedTrajectory(Json):
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
        return cls(t=frozen(d["t"]), q=frozen(state[:, :ndof]), v=frozen(state[:, ndof:]),
                   modes=frozen(d["modes"]), points=frozen(d["points"]))

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
        ``typical_probe_error``, ``converged_error``, ``converged_spread``,
        ``converged_scheme``, ``refined_tangent_error``, ``certified_columns``,
        ``converged_certified_columns``, the reference columns, each with the ``failure``
        that says why it is not certified, ...).
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
        return frozen(np.array(self.gradient["tangent"], dtype=np.float64).reshape(6, 3))

    @property
    def reference(self) -> Optional[np.ndarray]:
        """The probe-stable central-difference reference, shape (6, 3) (NaN columns where
        no probe was stable)."""
        if self.gradient is None:
            return None
        cols = [[np.nan if v is None else v for v in c["column"]] for c in self.gradient["reference"]]
        return frozen(np.array(cols, dtype=np.float64).T)

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
    "converged_spread": ("gradient", "converged_spread"),
    "converged_tangent_error": ("gradient", "converged_tangent_error"),
    "refined_tangent_error": ("gradient", "refined_tangent_error"),
}


class QuadrupedReport(Json):
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

    def table(self) -> Table:
        """The two-axis table as numpy columns, one row per law (rigid first); it displays
        as a table (HTML in a notebook, aligned text in a terminal, wrapped at 120 characters,
        with NaN and -1 shown as ``n/a`` and columns never computed named below it).

        ``label``, ``law`` (str); ``stiffness`` (N/m, NaN for rigid); forward fidelity:
        ``penetration`` (m), ``creep`` (m/s), ``contact_work`` (J), ``energy_change`` (J),
        ``converged_distance`` (m, to the same law at dt/refinement), ``distance_to_rigid``
        (m, information only), ``mode_changes`` (int); gradient accuracy:
        ``tangent_error``, ``typical_probe_error``, ``converged_error`` (the tangent at dt
        against the law converged in dt: event-located central differences for the penalty
        law), ``converged_spread`` (that reference against the same probe at
        dt/(2·refinement): its own error in dt), ``converged_tangent_error`` (penalty: the
        event-located scheme's own tangent against that reference, a second route to it),
        ``refined_tangent_error`` (NaN when not
        computed or no column certified), ``certified_columns`` and
        ``converged_certified_columns`` (int; -1 when not computed); ``failed`` (bool). A
        failed law has NaN and -1. Why a column is not certified is in
        ``law.gradient["reference"][j]["failure"]`` (and ``converged_reference``).
        """
        def col(section: str, key: str) -> np.ndarray:
            vals = []
            for law in self.laws:
                part = getattr(law, section)
                v = None if part is None else part[key]
                vals.append(np.nan if v is None else v)
            return frozen(np.array(vals, dtype=np.float64))

        def count(section: str, key: str) -> np.ndarray:
            vals = [None if getattr(law, section) is None else getattr(law, section)[key] for law in self.laws]
            return frozen(np.array([-1 if v is None else v for v in vals], dtype=np.int64))

        out = Table({
            "label": frozen(np.array([law.label for law in self.laws], dtype=object)),
            "law": frozen(np.array([law.law for law in self.laws], dtype=object)),
            "stiffness": frozen(np.array([np.nan if law.stiffness is None else law.stiffness for law in self.laws],
                                          dtype=np.float64)),
        })
        for name, (section, key) in _QUAD_COLUMNS.items():
            out[name] = col(section, key)
        # The core's table prints energy_end - energy_start as "dE".
        out["energy_change"] = frozen(col("forward", "energy_end") - col("forward", "energy_start"))
        out["mode_changes"] = count("modes", "total")
        out["certified_columns"] = count("gradient", "certified_columns")
        out["converged_certified_columns"] = count("gradient", "converged_certified_columns")
        out["failed"] = frozen(np.array([law.failure is not None for law in self.laws], dtype=bool))
        # -1 in the counts means "not computed": the display prints it as n/a, the column keeps it.
        out.missing = {"mode_changes": -1, "certified_columns": -1, "converged_certified_columns": -1}
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
    """The core's configuration document (``QuadrupedExperiment``, JSON like a configuration
    file); non-finite numbers are refused here because JSON cannot carry them."""
    config: Dict[str, Any] = dict(fields)
    if robot is not None:
        config["robot"] = {str(k): float(v) for k, v in robot.items()}
    for name, value in [*fields.items(), *config.get("robot", {}).items()]:
        values = value if isinstance(value, list) else [value]
        for v in values:
            if isinstance(v, float) and not math.isfinite(v):
                raise InvalidParameter(f"invalid parameter `{name}` = {v}: must be finite")
    return json.dumps(config)


def quadruped(*, stiffness: Union[float, ArrayLike] = tuple(_QUAD["stiffness"]),
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
    GIL released (about a second at the defaults; ``converged_gradient=True`` adds a few
    minutes: about 2.5 CPU-minutes, mostly the event-located penalty references).

    Parameters
    ----------
    stiffness : float or array_like
        Penalty stiffnesses, N/m per foot.
    converged_gradient : bool
        Also measure each law's gradient against central differences of its dt/refinement
        run (for the penalty law an event-located run, every contact switch placed inside
        its step; expensive).
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
        ``fm.defaults()["quadruped"]["robot"]`` for the defaults).

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
    ks = float_array(stiffness, "stiffness")
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
    ferromotion.Unstable: unstable step at t = ... s: the velocity of ... (component ...) reached ... (beyond 1e3 m/s or rad/s) ...
    """
    config = _quadruped_config(robot, dt=float(dt), t_final=float(t_final), damping_ratio=float(damping_ratio),
                               reference_mass=float(reference_mass), clearance=float(clearance), speed=float(speed))
    return QuadrupedTrajectory._from_core(_core.quadruped_rollout(config, stiffness, steps))
