"""Jacobians of hybrid systems through their events (core: ``hybrid.rs``; a
system known only by its step function: ``hybrid/black_box.rs``)."""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Dict, Optional, Protocol, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._common import ArrayLike, DEFAULTS, InvalidParameter, Json, float_array, frozen
from . import systems
from ._core import NotDifferentiable


# hybrid_jacobian

_HYBRID: Dict[str, Any] = DEFAULTS["hybrid"]
_STEP: Dict[str, Any] = DEFAULTS["hybrid_step"]

# The shipped systems are defined once in the core (``systems/``); fm.BouncingDrop & co. are
# fm.systems' classes.
BouncingDrop = systems.BouncingDrop  # type: ignore[attr-defined]
SlopeBall = systems.SlopeBall  # type: ignore[attr-defined]
WarmStartedDrop = systems.WarmStartedDrop  # type: ignore[attr-defined]


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


#: Unit round-off of the arithmetic a :class:`StepFunction` may name.
PRECISIONS = {"float64": 2.0 ** -53, "float32": 2.0 ** -24}


def _precision(p: Union[str, float]) -> float:
    """A :class:`StepFunction`'s ``precision`` as a unit round-off (the core checks its range)."""
    if isinstance(p, str):
        if p not in PRECISIONS:
            raise InvalidParameter(f"invalid parameter `precision` = {p!r}: 'float64', 'float32' or a unit round-off "
                                   f"from 2^-53 to 1e-2")
        return PRECISIONS[p]
    return float(p)


@dataclasses.dataclass(frozen=True)
class StepFunction:
    """A hybrid system known only by its step function (any integrator or simulator step):
    what :func:`hybrid_jacobian` differentiates by measurement, with no Jacobian from you.

    Parameters
    ----------
    step : callable
        ``step(x, dt) -> x``: x after one step of ``dt`` seconds from ``x`` (a float64 array of
        shape (n,); return any array-like of shape (n,)). It must depend on (x, dt) alone:
        this is *measured* (a repeated call must repeat bit for bit, and the split residual
        ``|step(x0, 2h) - step(step(x0, h), h)|`` must be below 1e-9 relative to
        max(1, max|x0|) or fall at least 3x when h halves, as an integrator's local error
        does) and a step with memory is refused with :class:`HiddenState`.
    guards : sequence of callables, optional
        ``g(x) -> float``. An event is a guard crossing from > 0 to <= 0 between two step
        ends; it is located inside the step by root-finding on the sub-step length.
    resets : sequence of callables or None, optional
        Empty, or one per guard: ``R(x) -> x`` applied by the driver at that guard's event
        (for a step function that does not apply it itself, e.g. free flight with the
        bounce ``(y, -e v)``); None where the step's own law changes at the guard (soft
        contact: a penalty force switching on at ``y = 0``, and off at its release). Such a
        step decides its law at each step's start, as engines do; the driver continues from
        a state strictly past the guard's zero and restarts its grid there. Declare the
        release too (for a push-only penalty law, the force's argument ``-k y - c v`` while
        ``y < 0``, and anything positive above ground). Without it the driver detects the
        switch from the step's own Jacobian and, where the step's field is continuous there
        (a clamped force), locates it itself (:attr:`HybridSolution.switches`) at the cost of
        computing the answer once more per switch; where the field jumps it refuses with
        :class:`UnguardedSwitch`.
    name : str, optional
        For messages; default the step's ``__name__``.
    batch : bool or int
        False (the default): ``step(x, dt)`` takes and returns one state, shape (n,), and
        each guard ``g(x)`` returns a float. True: the functions are *batched*: ``step(X, dt)``
        takes and returns an (m, n) float64 array of m states (dt is one float for all
        rows), each guard takes (m, n) and returns (m,), each reset takes (m, n) and returns
        (m, n); the driver runs every independent probe (the nominal run, ±eps and ±eps/2
        per coordinate, all of it again at dt/2) as rows of one batch, each row locating its
        own events. An int: at most that many rows per call (rows then run in waves, dt's
        first). Row i of the output must depend on row i of the input alone; a batched step
        that computes each row as its one-state twin does gives the same Jacobian, bit for
        bit.
    manifold : sequence of (str, int)
        Blocks of x that hold unit quaternions, each ``("free", i)`` (7 coordinates from
        index i: position x, y, z in the world frame, then a quaternion w, x, y, z; 6 tangent
        coordinates) or ``("ball", i)`` (a quaternion w, x, y, z; 3 tangent coordinates).
        Probes are then taken in the tangent space and the Jacobian is reported in tangent
        coordinates, with MuJoCo's convention (``mj_integratePos`` / ``mj_differentiatePos``):
        ``x ⊕ δ`` moves a position by δp and turns a quaternion as ``q ⊗ exp(δθ)``, δθ a
        rotation vector in the body's own frame multiplied on the right;
        ``J = d(x(t1) ⊖ x̄(t1)) / dδ`` with ``x ⊖ b = log(b⁻¹ ⊗ x)`` on quaternions. A
        quaternion never leaves the unit sphere: x0 and every state the step returns must be
        unit to 1e-6 (normalise in your step), and every probe is normalised.
    precision : "float64", "float32" or float
        The arithmetic of your step: its unit round-off (2^-53 for ``"float64"``, the default;
        2^-24 for ``"float32"``, e.g. MuJoCo Warp or a GPU engine; or the number, from 2^-53 to
        1e-2). A difference quotient at probe eps carries the step's round-off divided by
        eps, so the driver scales by it what depends on it: the probe (``eps`` is the
        float64 probe, multiplied by ``(precision / 2^-53)^(1/3)``, where truncation and
        round-off balance: 8.1e-4 in float32), the eps/eps-2 agreement (``probe_rtol``
        raised to ``100 * precision / probe``) and the unguarded-switch check's floor
        (``64 * precision / probe``). A float64 step's answer is unchanged. What was used is
        in the answer's ``resolution``. A float32 step declared float64 is refused (its
        noise looks like an undeclared switch), not answered wrongly.

    Examples
    --------
    >>> import numpy as np, ferromotion as fm
    >>> def flight(x, dt):                      # free flight, exact over any dt
    ...     return [x[0] + x[1] * dt - 9.81 * dt * dt / 2, x[1] - 9.81 * dt]
    >>> e = fm.limit_restitution(fm.Drop())     # 0.632, as fm.exact
    >>> sys = fm.StepFunction(flight, guards=[lambda x: x[0]], resets=[lambda x: [x[0], -e * x[1]]])
    >>> s = fm.hybrid_jacobian(sys, [1.0, 0.0], 0.0, 0.8)
    >>> bool(np.allclose(s.jacobian, fm.exact(fm.Drop()).jacobian, rtol=1e-6, atol=1e-6)), len(s.events)
    (True, 1)

    The same, batched: one call steps every row.

    >>> def flights(X, dt):                     # X: (m, 2)
    ...     return np.stack([X[:, 0] + X[:, 1] * dt - 9.81 * dt * dt / 2, X[:, 1] - 9.81 * dt], axis=1)
    >>> b = fm.hybrid_jacobian(fm.StepFunction(flights, guards=[lambda X: X[:, 0]],
    ...                                        resets=[lambda X: np.stack([X[:, 0], -e * X[:, 1]], axis=1)],
    ...                                        batch=True), [1.0, 0.0], 0.0, 0.8)
    >>> bool(np.array_equal(b.jacobian, s.jacobian)), b.batch_calls < s.step_calls // 4
    (True, True)
    """

    step: Callable[[np.ndarray, float], Any]
    guards: Sequence[Callable[[np.ndarray], Any]] = ()
    resets: Sequence[Optional[Callable[[np.ndarray], Any]]] = ()
    name: Optional[str] = None
    batch: Union[bool, int] = False
    manifold: Sequence[Tuple[str, int]] = ()
    precision: Union[str, float] = "float64"

    def __post_init__(self) -> None:
        object.__setattr__(self, "precision", _precision(self.precision))
        object.__setattr__(self, "guards", tuple(self.guards))
        object.__setattr__(self, "resets", tuple(self.resets))
        object.__setattr__(self, "manifold", tuple((str(k), int(i)) for k, i in self.manifold))


@dataclasses.dataclass(frozen=True, eq=False)
class PartialPass:
    """One step size's rows of an interrupted :class:`StepFunction` answer.

    Attributes
    ----------
    dt : float
        The step, s.
    x : numpy.ndarray or None
        x(t1) of the nominal run, None if it did not finish.
    jacobian : numpy.ndarray
        J in tangent coordinates with the columns whose ±eps probes finished (and kept the
        nominal run's events); NaN elsewhere. Not checked against eps/2.
    columns : tuple of int
        The columns filled in.
    unfinished : int
        Rows of this step size that did not finish.
    refused : str or None
        The first refusal among its finished rows.
    """

    dt: float
    x: Optional[np.ndarray]
    jacobian: np.ndarray
    columns: Tuple[int, ...]
    unfinished: int
    refused: Optional[str]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`hybrid_jacobian` on a :class:`StepFunction`; what finished is kept.

    A ``KeyboardInterrupt`` (a script still stops), with the core's account: ``summary``
    (what finished and what did not), ``rows_done`` and ``rows_total``, ``split_residual``
    (None if the hidden-state measurement did not finish), ``passes`` (:class:`PartialPass`
    at dt, then dt/2) and ``wall_time_s``.
    """

    def __init__(self, doc: Dict[str, Any], wall_time_s: float) -> None:
        super().__init__(doc["summary"])
        self.summary: str = doc["summary"]
        self.rows_done: int = doc["rows_done"]
        self.rows_total: int = doc["rows_total"]
        self.split_residual: Optional[float] = doc["split_residual"]
        self.step_calls: int = doc["step_calls"]
        self.passes: Tuple[PartialPass, ...] = tuple(
            PartialPass(dt=p["dt"], x=None if p["x"] is None else frozen(p["x"]), jacobian=frozen(p["jacobian"]),
                        columns=tuple(p["columns"]), unfinished=p["unfinished"], refused=p["refused"])
            for p in doc["passes"])
        self.wall_time_s = wall_time_s


# Seconds before a StepFunction's progress line appears (answers that finish sooner print nothing).
_PROGRESS_AFTER_S = 2.0


def _progress_printer() -> Callable[[Dict[str, Any]], None]:
    """The default progress report: one line on stderr once the answer has run for
    ``_PROGRESS_AFTER_S``, rewritten in place on a terminal, else at most every 10 s."""
    import sys
    tty = sys.stderr.isatty()
    last = [-1e9]

    def tell(p: Dict[str, Any]) -> None:
        elapsed = p.get("elapsed_s") or 0.0
        done = p["rows_done"] == p["rows_total"]
        if elapsed < _PROGRESS_AFTER_S or (not tty and not done and elapsed - last[0] < 10.0):
            return
        last[0] = elapsed
        left = p.get("remaining_s")
        eta = "" if left is None or done else f", about {left:.0f} s left"
        line = (f"hybrid_jacobian: {p['rows_done']}/{p['rows_total']} rows done, {100 * p['fraction']:.0f}% of the "
                f"work in {elapsed:.0f} s{eta}")
        sys.stderr.write(("\r" + line + ("\n" if done else "")) if tty else line + "\n")
        sys.stderr.flush()

    return tell


@dataclasses.dataclass(frozen=True)
class HybridEvent(Json):
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
class LocatedSwitch(Json):
    """A switch of a :class:`StepFunction`'s law that no guard declared, located by the driver
    from the step's own Jacobian (a push-only penalty contact's release): its events are
    listed among :attr:`HybridSolution.events` with guard numbers after the declared ones.

    Attributes
    ----------
    t : float
        When the nominal run met it, s.
    x : numpy.ndarray
        The state there (just past it).
    normal : numpy.ndarray
        The unit normal of the switching surface at x (tangent coordinates), pointing to the
        side before the switch.
    """

    t: float
    x: np.ndarray
    normal: np.ndarray

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types."""
        return {"t": self.t, "x": self.x.tolist(), "normal": self.normal.tolist()}


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class HalfDt(Json):
    """A :class:`StepFunction`'s answer recomputed at dt/2, beside the one at dt.

    The black-box driver differentiates the step function's event-located map at *its* dt;
    that derivative approaches the continuous law's as dt shrinks (first order for a
    first-order step) and is not it. The spread says how far along the answer is.

    Attributes
    ----------
    x : numpy.ndarray
        x(t1) at dt/2.
    jacobian : numpy.ndarray
        J at dt/2, shape (n, n).
    events : int
        Events met at dt/2.
    spread : float
        max|J(dt) - J(dt/2)| / max(1, max|J(dt)|).
    """

    x: np.ndarray
    jacobian: np.ndarray
    events: int
    spread: float

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types."""
        return {"x": self.x.tolist(), "jacobian": self.jacobian.tolist(), "events": self.events,
                "spread": self.spread}


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Piece(Json):
    """One linear piece of dx(t1)/dx(t0): where simultaneous events were met, the order they
    were crossed in decides which piece a perturbation d of x(t0) sees.

    Attributes
    ----------
    orders : tuple of tuple of int
        Per simultaneous group met (in time order), the guards in the order they were crossed
        (first first). Empty when no events were simultaneous.
    cone : numpy.ndarray
        Shape (rows, n): the piece holds for the d with ``cone @ d <= 0`` (no rows: every d).
    matrix : numpy.ndarray
        Shape (n, n): dx(t1) = matrix @ d for d in the cone.
    """

    orders: Tuple[Tuple[int, ...], ...]
    cone: np.ndarray
    matrix: np.ndarray

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types."""
        return {"orders": [list(o) for o in self.orders], "cone": self.cone.tolist(), "matrix": self.matrix.tolist()}


class HybridSolution(Json):
    """What :func:`hybrid_jacobian` found.

    Attributes
    ----------
    x : numpy.ndarray
        x(t1), shape (n,), float64.
    mode : int
        The mode at t1.
    jacobian : numpy.ndarray
        dx(t1)/dx(t0), shape (n, n), row-major: ``jacobian[i, j]`` is dx_i(t1)/dx_j(t0). Only
        when the derivative is one matrix: where simultaneous events' orders give different
        matrices, reading it raises :class:`NotDifferentiable` (naming the pieces and their
        largest difference); :meth:`jvp` and :attr:`pieces` remain.
    pieces : tuple of Piece
        The derivative's linear pieces (one when no events were simultaneous).
    commuted : bool
        Simultaneous events were met and every order gave one matrix (the switches commuted).
    enumerated : bool
        False when more than three events met at one instant: their orders were not
        enumerated; :meth:`jvp` orders them along d instead.
    largest_difference : float
        max |M_a - M_b| over pairs of pieces.
    events : tuple of HybridEvent
        In order (of a simultaneous group: its first order's).
    probe_gap : float
        max |J(dt) - J(dt/2)| over the pieces (0 when the probe check is off). For a
        :class:`StepFunction`: max|J(eps) - J(eps/2)| / max(1, max|J(eps)|) of its event-located map.
    spectral_radius : float
        Largest |eigenvalue| of J (NaN without a Jacobian).
    worst_gain : float
        Largest singular value of J (max |J d| over unit d; NaN without a Jacobian).
    split_residual : float or None
        For a :class:`StepFunction`: the measured ``|step(x0, 2h) - step(step(x0, h), h)|``
        relative to max(1, max|x0|) at h = min(dt, (t1 - t0)/2); None for a declared system.
    half_dt : HalfDt or None
        For a :class:`StepFunction` with ``halve_dt`` (the default): the answer at dt/2 and
        the spread.
    step_calls : int or None
        For a :class:`StepFunction`: how many times the driver called ``step`` (every pass
        together, dt/2 included).
    wall_time_s : float or None
        For a :class:`StepFunction`: wall time of the whole answer, s.
    batch_calls : int or None
        For a :class:`StepFunction`: how many times ``step`` was called (``step_calls`` counts
        the states stepped; the two are equal one state at a time).
    switches : tuple of LocatedSwitch
        For a :class:`StepFunction`: the switches of its law no guard declared that the driver
        located itself (at dt); their events are guards ``len(guards) + k``.
    resolution : dict or None
        For a :class:`StepFunction`: what its declared ``precision`` gave the driver:
        ``precision`` (the unit round-off), ``eps`` (the probe used), ``probe_rtol`` (the
        eps/eps-2 agreement required) and ``switch_floor`` (the unguarded-switch check's).
    """

    x: np.ndarray
    mode: int
    _jacobian: Optional[np.ndarray]
    events: Tuple[HybridEvent, ...]
    probe_gap: float
    spectral_radius: float
    worst_gain: float
    split_residual: Optional[float]
    half_dt: Optional[HalfDt]
    step_calls: Optional[int]
    wall_time_s: Optional[float]
    batch_calls: Optional[int]
    switches: Tuple[LocatedSwitch, ...]
    resolution: Optional[Dict[str, float]]
    pieces: Tuple[Piece, ...]
    commuted: bool
    enumerated: bool
    largest_difference: float
    _refusal: Optional[str]
    _handle: Any
    _again: Optional[Callable[[np.ndarray], Any]]

    __slots__ = ("x", "mode", "_jacobian", "events", "probe_gap", "spectral_radius", "worst_gain",
                 "split_residual", "half_dt", "step_calls", "wall_time_s", "batch_calls", "switches", "resolution", "pieces", "commuted", "enumerated",
                 "largest_difference", "_refusal", "_handle", "_again")

    def __init__(self, x: np.ndarray, mode: int, jacobian: Optional[np.ndarray], events: Tuple[HybridEvent, ...],
                 probe_gap: float, spectral_radius: float = float("nan"), worst_gain: float = float("nan"),
                 split_residual: Optional[float] = None, half_dt: Optional[HalfDt] = None,
                 step_calls: Optional[int] = None, wall_time_s: Optional[float] = None, batch_calls: Optional[int] = None,
                 pieces: Optional[Tuple[Piece, ...]] = None, commuted: bool = False, enumerated: bool = True,
                 largest_difference: float = 0.0, refusal: Optional[str] = None, handle: Any = None,
                 again: Optional[Callable[[np.ndarray], Any]] = None,
                 switches: Tuple[LocatedSwitch, ...] = (),
                 resolution: Optional[Dict[str, float]] = None) -> None:
        set_ = object.__setattr__
        for k, v in (("x", x), ("mode", mode), ("_jacobian", jacobian), ("events", events),
                     ("probe_gap", probe_gap), ("spectral_radius", spectral_radius), ("worst_gain", worst_gain),
                     ("split_residual", split_residual), ("half_dt", half_dt), ("step_calls", step_calls),
                     ("wall_time_s", wall_time_s), ("batch_calls", batch_calls), ("resolution", resolution), ("commuted", commuted), ("enumerated", enumerated),
                     ("largest_difference", largest_difference), ("_refusal", refusal), ("_handle", handle),
                     ("_again", again), ("switches", tuple(switches))):
            set_(self, k, v)
        if pieces is None:
            n = len(x)
            pieces = (Piece(orders=(), cone=frozen(np.zeros((0, n))), matrix=jacobian),) if jacobian is not None else ()
        set_(self, "pieces", tuple(pieces))

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    @property
    def jacobian(self) -> np.ndarray:
        """dx(t1)/dx(t0); :class:`NotDifferentiable` where the pieces disagree."""
        if self._jacobian is None:
            raise NotDifferentiable(self._refusal or "no Jacobian: the derivative's pieces disagree")
        return self._jacobian

    @property
    def differentiable(self) -> bool:
        """Whether :attr:`jacobian` exists (the pieces agree)."""
        return self._jacobian is not None

    def jvp(self, d: ArrayLike) -> np.ndarray:
        """The directional derivative of x(t1) along a perturbation d of x(t0): the matrix of
        the piece whose cone holds d, times d (the core picks the piece). Exists wherever the
        flow is continuous, with or without a Jacobian; beyond three simultaneous events the
        core orders them along d."""
        v = float_array(d, "d")
        if not self.enumerated and self._again is not None:
            return frozen(self._again(v))
        if self._handle is not None:
            return frozen(self._handle.jvp(v))
        return frozen(self.jacobian @ v)

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types."""
        return {"x": self.x.tolist(), "mode": self.mode,
                "jacobian": None if self._jacobian is None else self._jacobian.tolist(),
                "not_differentiable": self._refusal, "pieces": [p.to_dict() for p in self.pieces],
                "commuted": self.commuted, "enumerated": self.enumerated,
                "largest_difference": self.largest_difference,
                "events": [e.to_dict() for e in self.events], "probe_gap": self.probe_gap,
                "spectral_radius": self.spectral_radius, "worst_gain": self.worst_gain,
                "split_residual": self.split_residual,
                "half_dt": None if self.half_dt is None else self.half_dt.to_dict(),
                "step_calls": self.step_calls, "wall_time_s": self.wall_time_s, "batch_calls": self.batch_calls,
                "switches": [w.to_dict() for w in self.switches],
                "resolution": self.resolution}

    def __repr__(self) -> str:
        x = ", ".join(f"{v:.6g}" for v in self.x)
        if self._jacobian is not None:
            rows = "[" + ", ".join("[" + ", ".join(f"{v:.4g}" for v in r) + "]" for r in self._jacobian) + "]"
            body = f"J = {rows}"
        else:
            body = f"no Jacobian: {len(self.pieces)} pieces differing by {self.largest_difference:.3g}"
        if self.commuted:
            body += " (simultaneous events commuted)"
        extra = ""
        if self.half_dt is not None:
            extra += f", dt/2 spread {self.half_dt.spread:.2g}"
        if self.switches:
            extra += f", {len(self.switches)} undeclared switches located"
        if self.step_calls is not None and self.wall_time_s is not None:
            extra += f", {self.step_calls} step calls in {self.wall_time_s:.3g} s"
        return (f"HybridSolution(x = [{x}], {body}, {len(self.events)} events, probe gap {self.probe_gap:.2g}"
                f"{extra})")


def _solution(d: Any, again: Optional[Callable[[np.ndarray], Any]] = None, **extra: Any) -> HybridSolution:
    """The core's dict as a :class:`HybridSolution` (``extra``: the black-box driver's own entries)."""
    pieces = tuple(Piece(orders=tuple(tuple(o) for o in p["orders"]), cone=frozen(p["cone"]),
                         matrix=frozen(p["matrix"])) for p in d["pieces"])
    j = d["jacobian"]
    return HybridSolution(x=frozen(d["x"]), mode=d["mode"], jacobian=None if j is None else frozen(j),
                          events=tuple(HybridEvent(**e) for e in d["events"]), probe_gap=d["probe_gap"],
                          spectral_radius=d["spectral_radius"], worst_gain=d["worst_gain"], pieces=pieces,
                          commuted=d["commuted"], enumerated=d["enumerated"],
                          largest_difference=d["largest_difference"], refusal=d.get("not_differentiable"),
                          handle=d["handle"], again=again, **extra)


def hybrid_jacobian(system: Union[systems.System, systems.TumblingCube, HybridSystem, StepFunction],
                    x0: ArrayLike, t0: float, t1: float, *, mode: int = 0, dt: float = _HYBRID["dt"],
                    graze_speed: float = _HYBRID["graze_speed"], probe_rtol: float = _HYBRID["probe_rtol"],
                    max_steps: int = _HYBRID["max_steps"], eps: Optional[float] = None,
                    halve_dt: Optional[bool] = None,
                    progress: Union[None, bool, Callable[[Dict[str, Any]], Any]] = None) -> HybridSolution:
    """The Jacobian dx(t1)/dx(t0) of a hybrid system through its events, or a typed refusal.

    For a declared system the core steps the flow with RK4 at a fixed step, brackets each
    event to one step, locates it inside the step and composes the flow Jacobians with the
    events' saltation matrices. For a :class:`StepFunction` (a black box: your simulator's
    step) every derivative is measured on the step itself: each event is located inside its
    step, the run continues from it on the new law's side with the grid restarted there,
    and J is the central difference of that event-located map (probes ``eps`` and ``eps/2``
    must agree, and keep the events' sequence), which carries every event's saltation; the
    saltation matrix is also estimated from the step (f- and f+ by differences in time) for
    the grazing check. That is the derivative at *your* dt: it approaches the continuous
    law's as dt shrinks, so it is also answered at dt/2 (``half_dt``, with the spread).
    Either way hidden state is measured, and the answer is refused when no honest Jacobian
    exists.

    Parameters
    ----------
    system : BouncingDrop, SlopeBall, WarmStartedDrop, TumblingCube, HybridSystem or StepFunction
        A shipped system (run with the GIL released; the :class:`~ferromotion.systems.TumblingCube`
        by its exact route, J in its tangent coordinates, each corner strike an event whose
        ``guard`` is the corner), a Python object with the methods
        of :class:`HybridSystem`, or a :class:`StepFunction` (called back from the core;
        an exception a callback raises is re-raised here unchanged).
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
        Declared systems: the answer is recomputed with dt/2 and refused if the Jacobian
        moves by more than probe_rtol * max(1, max|J|). A :class:`StepFunction` (your
        event-located map at your dt is the object): its differences at probes eps and
        eps/2 must agree to probe_rtol * max(1, max|J|). 0 switches the check off.
    max_steps : int
        Refuse longer runs.
    eps : float, optional
        :class:`StepFunction` only: the central-difference probe, ``eps * max(|x_j|, 1)``
        (default 1e-6).
    halve_dt : bool, optional
        :class:`StepFunction` only: also answer at dt/2 and report the spread (``half_dt``;
        default True).
    progress : None, bool or callable, optional
        :class:`StepFunction` only. The core reports its progress (rows done of all, the
        fraction of the work, the time elapsed and an estimate of the time left, s) when a
        row finishes and every 0.5 s between: None (the default) prints one line on stderr
        once the answer has run 2 s; False prints nothing; a callable is called with the
        report, a dict with ``rows_done``, ``rows_total``, ``fraction``, ``elapsed_s``,
        ``remaining_s``. Ctrl-C stops the answer and raises :class:`Interrupted` (a
        ``KeyboardInterrupt``) holding what finished and saying what did not.

    Returns
    -------
    HybridSolution

    Raises
    ------
    Grazing
        An event slower than ``graze_speed``; the message gives the time-of-impact term
        the saltation matrix would have carried.
    HiddenState
        The system declares state outside x that its flow depends on, or it is measured:
        a repeated call does not repeat, or the flow (step) over 2h whole and as two halves
        differs by more than 1e-9 relative to max(1, max|x0|) without falling like an
        integrator's local error when h halves.
    TwoEventsInOneStep
        Two events inside one step.
    EventsInAdjacentSteps
        :class:`StepFunction`: events in two adjacent steps.
    ProbeDependent
        The Jacobian moved beyond ``probe_rtol`` when recomputed with dt/2 (a
        :class:`StepFunction`: with eps/2, or a probe changed the events' sequence).
    UnguardedSwitch
        :class:`StepFunction`: after an event without a reset, the step's law changed again
        inside a step where no guard was declared (its step Jacobian jumps); the message
        names the guard to declare.
    InvalidParameter, TooManySteps, NonFinite
        NonFinite also when a step function or guard returns NaN or infinity.
    Interrupted
        :class:`StepFunction`: Ctrl-C; ``.passes`` hold the columns that finished.

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

    A black box: your step function, with a guard and the reset the driver applies.

    >>> import numpy as np
    >>> def rk4(x, dt):                         # RK4 of the free flight (x' = v, v' = -g)
    ...     f = lambda x: np.array([x[1], -9.81])
    ...     k1 = f(x); k2 = f(x + dt / 2 * k1); k3 = f(x + dt / 2 * k2); k4 = f(x + dt * k3)
    ...     return x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    >>> e = fm.BouncingDrop().restitution
    >>> s = fm.hybrid_jacobian(fm.StepFunction(rk4, guards=[lambda x: x[0]], resets=[lambda x: [x[0], -e * x[1]]]),
    ...                        [1.0, 0.0], 0.0, 0.8)
    >>> round(float(s.jacobian[1, 0]), 4), bool(s.split_residual < 1e-12)
    (3.6147, True)
    """
    options = {"dt": dt, "graze_speed": graze_speed, "probe_rtol": probe_rtol, "max_steps": max_steps}
    if isinstance(system, StepFunction):
        if mode != 0:
            raise InvalidParameter(f"invalid parameter `mode` = {mode}: a StepFunction has one mode, 0")
        if eps is not None:
            options["eps"] = eps
        options["halve_dt"] = _STEP["halve_dt"] if halve_dt is None else bool(halve_dt)
        options["precision"] = _precision(system.precision)
        tell: Optional[Callable[[Dict[str, Any]], Any]] = (
            None if progress is False else _progress_printer() if progress is None or progress is True else progress)
        start = time.perf_counter()
        b = _core.step_jacobian(system.step, float_array(x0, "x0"), t0, t1, guards=list(system.guards),
                                resets=list(system.resets), name=system.name, options=options,
                                batch=system.batch, manifold=list(system.manifold), progress=tell)
        wall = time.perf_counter() - start
        if "stopped" in b:
            raise Interrupted(b["stopped"], wall)
        h = b["half_dt"]
        half = None if h is None else HalfDt(x=frozen(h["x"]), jacobian=frozen(h["jacobian"]), events=h["events"],
                                             spread=h["spread"])
        return _solution(b, split_residual=b["split_residual"], half_dt=half, step_calls=b["step_calls"],
                         wall_time_s=wall, batch_calls=b["batch_calls"],
                         switches=tuple(LocatedSwitch(t=w["t"], x=frozen(w["x"]), normal=frozen(w["normal"]))
                                        for w in b["switches"]),
                         resolution=dict(b["resolution"]))
    if eps is not None:
        raise InvalidParameter("invalid parameter `eps`: only a StepFunction is differentiated by central "
                               "differences (a declared system's flow Jacobian is integrated)")
    if progress is not None:
        raise InvalidParameter("invalid parameter `progress`: only a StepFunction reports progress (a declared "
                               "system's answer takes milliseconds)")
    if halve_dt is not None:
        raise InvalidParameter("invalid parameter `halve_dt`: only a StepFunction is answered at dt/2 beside dt "
                               "(a declared system is recomputed at dt/2 by its probe_rtol check)")
    x = float_array(x0, "x0")
    if isinstance(system, systems.TumblingCube):  # its own exact route (orientation on SO(3))
        if mode != 0:
            raise InvalidParameter(f"invalid parameter `mode` = {mode}: the TumblingCube has one mode, 0")
        return _solution(_core.tumbling_cube_hybrid(system.to_dict(), x, float(t0), float(t1)))
    arg = system.to_dict() if isinstance(system, systems.System) else system  # type: ignore[union-attr]

    def again(d: np.ndarray) -> Any:
        return _core.hybrid_jvp(arg, x, t0, t1, d, mode=mode, options=options)

    d = _core.hybrid_jacobian(arg, x, t0, t1, mode=mode, options=options)
    return _solution(d, again)
