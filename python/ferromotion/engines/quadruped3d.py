"""dm_control's 3-D quadruped under an open-loop trot: the derivative of each touchdown, three ways.

The model is dm_control's ``quadruped`` (``dm_control/suite/quadruped.xml``, read from the installed
``dm-control`` wheel with its ``common/`` includes and edited as the suite's ``walk`` task edits it:
no walls, ball, target, terrain or rangefinders), loaded by MuJoCo directly (the suite's import is not
needed). 22 degrees of freedom (a free torso and four legs of four hinges), 12 actuators with a first-
order filter (12 activations): the state in MuJoCo's tangent coordinates has 2·22 + 12 = 56 entries.

**The gait.** :class:`Trot`: the robot lands on its four feet and stands for ``start`` s, then each
leg's ``lift`` actuator follows ``lift·max(0, sin(2πf t + φ))`` and its ``extend`` actuator
``extend·cos(2πf t + φ)``, diagonal pairs half a period apart and the back leg of each pair ``lag``
rad behind its front partner (a perfectly symmetric trot lands each diagonal pair in the same step,
by the model's symmetry). The command is held for ``hold`` s (a 50 Hz controller); inside each
hold the step is a function of the state alone, as the black-box driver needs.

**A touchdown** is a toe's distance to the floor crossing zero between two step ends of the nominal
run (MuJoCo's own "in contact", ``mj_geomDistance``). A *stride touchdown* ends a swing: the foot was off the
floor at least ``swing`` s before it (and the landing at the start); the others (a stance foot
leaving the floor and touching it again within a few ms: MuJoCo's soft contact
chattering) are counted, not tabulated. Its **window** runs from the start of the step in which the
toe crosses for ``WINDOW`` = 6 ms, cut at the end of the hold (x before = the state at the window's start,
x after = the state at its end). Contacts are the four toes
against the floor (:func:`quadruped_model` ``toes_only``); :func:`nominal` reports every other contact
the unrestricted model makes on the same run (none on the default trot).

**Per touchdown**, dx(after)/dx(before) in MuJoCo's tangent coordinates at both ends
(``mj_integratePos`` / ``mj_differentiatePos``):

* (a) MJX's ``jax.jacfwd`` through its fixed-step rollout at dt = 2 ms and 0.2 ms (:func:`mjx_jacobian`);
* (b) central differences of MuJoCo's own fixed-step map at dt (:func:`difference_jacobian`);
* (c) the event-located black-box derivative through MuJoCo's step
  (``fm.engines.mujoco_step_function`` + ``fm.hybrid_jacobian``; :func:`located_jacobian`), with
  its answer at dt/2 and their spread, the driver's probes run as rows of one batch
  (:class:`RowsStep`, :meth:`ToeGuards.row_guards`: the one-state answer's bits). Touchdowns at one
  instant give the derivative's pieces (``NotDifferentiable`` where they differ); one guard crossed
  twice in a step is refused (``TwoEventsInOneStep``), and the row says which.

:func:`table` compares (a) and (b) against (c): sign agreement of (c)'s largest entries, the relative
error max|X - C| / max|C|, the dt refinement, and the split of (b)'s error into the part the fixed
grid's unlocated switch costs (b against (c) at the same dt: same law, same step) and the part dt
costs ((c) at dt against dt/2). The flow-based blame split (integrator against contact law) needs our
own law and does not apply to MuJoCo's soft constraint.

Run the whole table with ``make quadruped3d`` (``python -m ferromotion.engines.quadruped3d``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

#: The four feet, in the model's order.
FEET = ("front_left", "front_right", "back_right", "back_left")
#: Contact settings compared: (timeconst s, damping ratio) for every geom's ``solref``. "shipped" is the
#: model as dm_control ships it; "stiff" is 2.5x stiffer, the stiffest MuJoCo keeps at dt = 2 ms
#: (it raises a time constant below 2·dt to 2·dt).
CONTACTS: Dict[str, Tuple[float, float]] = {"shipped": (0.01, 1.0), "stiff": (0.004, 1.0), "frictionless": (0.01, 1.0)}
#: The steps compared: the model's step for (b) and (c); MJX at both.
DT, DT_FINE = 2e-3, 2e-4
#: A touchdown's window: from the start of the step in which the toe crosses, this long (cut at the
#: end of the hold, where the command changes), s.
WINDOW = 0.006
#: The table's limit on one answer of (c), s (see :func:`located_jacobian`).
TIMEOUT = 300.0
#: Entries of (c) whose signs are compared.
TOP = 10
#: The driver's probe agreement (eps against eps/2, relative to max(1, max|J|)). MuJoCo's impedance
#: ``solimp`` is a piecewise polynomial of the penetration, C¹ only at its midpoint and width, so
#: central differences across those points agree to O(eps), not O(eps²): measured 1.5e-4 at
#: eps = 1e-6 on a touchdown at dt = 0.2 ms, with the solver at tolerance 1e-14 as at 1e-8. The
#: driver's default 1e-6 refuses that; 1e-3 accepts it, and each answer reports its gap.
PROBE_RTOL = 1e-3


# -- the model ------------------------------------------------------------------------------------
def quadruped_mjcf() -> Tuple[str, Dict[str, bytes]]:
    """dm_control's quadruped MJCF as the ``walk`` task edits it, and its included files."""
    import importlib.util

    spec = importlib.util.find_spec("dm_control")  # its files only: the suite's import is not needed
    if spec is None or spec.origin is None:
        raise ImportError("the 3-D quadruped needs dm-control (scripts/engines_env.sh installs it into .venv-engines)")
    suite = Path(spec.origin).resolve().parent / "suite"
    root = ET.fromstring((suite / "quadruped.xml").read_text(encoding="utf-8"))
    world = root.find("worldbody")
    assert world is not None
    for el in list(world):
        name = el.get("name", "")
        if name.startswith("wall_") or name in ("terrain", "target", "ball"):
            world.remove(el)
    sensors = root.find("sensor")
    if sensors is not None:
        for el in list(sensors.findall("rangefinder")):
            sensors.remove(el)
    assets = {f"./common/{p.name}": p.read_bytes() for p in (suite / "common").glob("*.xml")}
    return ET.tostring(root, encoding="unicode"), assets


def quadruped_model(contact: str = "shipped", dt: float = DT, toes_only: bool = True) -> Any:
    """The quadruped as a ``mujoco.MjModel`` with ``contact``'s solref on every geom; with
    ``toes_only`` only the four toes collide, with the floor only."""
    import mujoco

    if contact not in CONTACTS:
        raise ValueError(f"contact: expected one of {sorted(CONTACTS)}, got {contact!r}")
    xml, assets = quadruped_mjcf()
    m = mujoco.MjModel.from_xml_string(xml, assets)
    m.opt.timestep = dt
    m.geom_solref[:] = CONTACTS[contact]
    if contact == "frictionless":
        m.geom_condim[:] = 1
    if toes_only:
        floor, toes = _floor(m), toe_geoms(m)
        for g in range(m.ngeom):
            m.geom_contype[g] = 1 if g in toes else 0
            m.geom_conaffinity[g] = 1 if g == floor else 0
    return m


def _floor(m: Any) -> int:
    import mujoco

    return int(mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "floor"))


def toe_geoms(m: Any) -> List[int]:
    """The toes' geom ids, in :data:`FEET`'s order."""
    import mujoco

    return [int(mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "toe_" + f)) for f in FEET]


def toe_pairs(m: Any) -> List[Tuple[int, int, float]]:
    """(toe, floor, margin) per foot: the contact pairs the driver guards."""
    floor = _floor(m)
    return [(g, floor, max(float(m.geom_margin[g]), float(m.geom_margin[floor]))) for g in toe_geoms(m)]


# -- the gait -------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Trot:
    """A fixed open-loop trot (see the module docs). Times in s, phases in rad."""

    lift: float = 0.7
    extend: float = 0.2
    frequency: float = 2.5
    lag: float = 0.4
    start: float = 1.0
    hold: float = 0.02

    def ctrl(self, m: Any, t: float) -> np.ndarray:
        """The command held over the hold interval containing t."""
        import mujoco

        t = math.floor(t / self.hold + 1e-9) * self.hold
        u = np.zeros(m.nu)
        if t < self.start:
            return u
        phase = {"front_left": 0.0, "back_right": -self.lag, "front_right": math.pi, "back_left": math.pi - self.lag}
        w = 2.0 * math.pi * self.frequency * (t - self.start)
        for i in range(m.nu):
            kind, leg = (mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, i) or "").split("_", 1)
            if kind == "lift":
                u[i] = self.lift * max(0.0, math.sin(w + phase[leg]))
            elif kind == "extend":
                u[i] = self.extend * math.cos(w + phase[leg])
        return u


@dataclasses.dataclass(frozen=True)
class Touchdown:
    """One window of the nominal run holding a stride touchdown.

    Attributes
    ----------
    feet : tuple of str
        The feet touching down in the window, in time order (a foot touching twice is listed twice).
    times : tuple of float
        The end of the step in which each touched down, s.
    simultaneous : bool
        Two feet touched down in the same step.
    t0, t1 : float
        The window (a hold interval), s.
    qpos, qvel, act, ctrl : ndarray
        The state at t0 and the command held over the window.
    """

    feet: Tuple[str, ...]
    times: Tuple[float, ...]
    simultaneous: bool
    t0: float
    t1: float
    qpos: np.ndarray
    qvel: np.ndarray
    act: np.ndarray
    ctrl: np.ndarray

    @property
    def label(self) -> str:
        return " + ".join(f.replace("_", " ") for f in self.feet) + f" at {self.times[0] * 1e3:.0f} ms " \
            f"(window {self.t0 * 1e3:.0f}-{self.t1 * 1e3:.0f} ms)"


def _toe_distances(m: Any, d: Any, pairs: Sequence[Tuple[int, int, float]]) -> np.ndarray:
    import mujoco

    mujoco.mj_kinematics(m, d)
    return np.array([mujoco.mj_geomDistance(m, d, g1, g2, 1.0, None) - mg for g1, g2, mg in pairs])


def _other_contacts(full: Any, fd: Any, qpos: np.ndarray) -> int:
    """Contacts the unrestricted model makes at qpos that are not a toe on the floor."""
    import mujoco

    fd.qpos[:] = qpos
    mujoco.mj_kinematics(full, fd)
    mujoco.mj_collision(full, fd)
    ok = {(g, _floor(full)) for g in toe_geoms(full)}
    return sum(1 for c in range(fd.ncon)
               if (int(fd.contact.geom1[c]), int(fd.contact.geom2[c])) not in ok
               and (int(fd.contact.geom2[c]), int(fd.contact.geom1[c])) not in ok)


def _run(m: Any, trot: Trot, t_end: float, dt: float) -> Tuple[np.ndarray, List[Any], int]:
    """The nominal run at dt (warm start cleared every step, as the driver's step does): each
    toe's distance at every step end (row 0 at t = 0), the state and command at every step's
    start, and the other contacts the unrestricted model makes on the same states."""
    import mujoco

    d = mujoco.MjData(m)
    full = quadruped_model("shipped", dt, toes_only=False)
    fd = mujoco.MjData(full)
    pairs = toe_pairs(m)
    m.opt.timestep = dt
    dist = [_toe_distances(m, d, pairs)]
    states: List[Any] = []
    others = 0
    for k in range(round(t_end / dt)):
        u = trot.ctrl(m, k * dt)
        states.append((d.qpos.copy(), d.qvel.copy(), d.act.copy(), u))
        d.ctrl[:] = u
        d.qacc_warmstart[:] = 0.0
        mujoco.mj_step(m, d)
        dist.append(_toe_distances(m, d, pairs))
        others += _other_contacts(full, fd, d.qpos)
    return np.array(dist), states, others


def nominal(contact: str = "shipped", trot: Trot = Trot(), strides: float = 2.0, dt: float = DT,
            swing: float = 0.05, window: float = WINDOW) -> Tuple[List[Touchdown], Dict[str, Any]]:
    """The stride touchdowns of the nominal run at dt (and the landing at the start), one
    :class:`Touchdown` per window; and a summary (every touchdown counted, other contacts)."""
    m = quadruped_model(contact, dt)
    dist, states, others = _run(m, trot, trot.start + strides / trot.frequency, dt)
    down = (dist[:-1] > 0) & (dist[1:] <= 0)  # step k -> k + 1 crosses
    out: List[Touchdown] = []
    for k in sorted(set(np.nonzero(down)[0])):
        t = (k + 1) * dt
        feet = [FEET[i] for i in np.flatnonzero(down[k])]
        off = []
        for i in np.flatnonzero(down[k]):
            touching = np.flatnonzero(dist[:k + 1, i] <= 0)
            off.append(k * dt - (touching[-1] * dt if len(touching) else -math.inf))  # time off the floor
        landing = t < trot.start and k == np.nonzero(down)[0][0]
        if not (landing or (t >= trot.start and max(off) > swing)):
            continue
        t0 = round(k * dt, 9)
        hold_end = (math.floor(t0 / trot.hold + 1e-9) + 1) * trot.hold
        t1 = round(min(t0 + window, hold_end), 9)
        q, v, a, u = states[k]
        out.append(Touchdown(feet=tuple(feet), times=(t,) * len(feet), simultaneous=len(feet) > 1,
                             t0=t0, t1=t1, qpos=q, qvel=v, act=a, ctrl=u))
    return out, {"touchdowns": int(down.sum()), "other_contacts": others,
                 "contact": contact, "dt": dt}


# -- the three answers -----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Answer:
    """One route's dx(t1)/dx(t0) for one window, or its refusal.

    Attributes
    ----------
    route : str
    dt : float
    jacobian : ndarray (56, 56) or None
        In MuJoCo's tangent coordinates at both ends; None when refused.
    wall_s : float
        Wall time of this answer, s (MJX: the compiled run; its compilation is ``compile_s``).
    refusal : str or None
        The driver's refusal, ``"ErrorClass: message"``.
    events : int
        (c): the switches located.
    half_dt_spread : float or None
        (c): max|J(dt) - J(dt/2)| as the driver reports it.
    half_dt : ndarray or None
        (c): the answer at dt/2 (tangent coordinates).
    compile_s : float
        MJX: the compilation this answer paid (0 once compiled).
    probe_gap : float or None
        (c): max|J(eps) - J(eps/2)| as the driver reports it.
    located : tuple of (float, int)
        (c): each located switch's time and guard (:meth:`ToeGuards.names` names them).
    """

    route: str
    dt: float
    jacobian: Optional[np.ndarray]
    wall_s: float
    refusal: Optional[str] = None
    events: int = 0
    half_dt_spread: Optional[float] = None
    half_dt: Optional[np.ndarray] = None
    compile_s: float = 0.0
    probe_gap: Optional[float] = None
    located: Tuple[Tuple[float, int], ...] = ()


class ToeGuards:
    """The switches of MuJoCo's law at one toe, as guards for the black-box driver.

    With the floor's ``condim`` 3 and MuJoCo's default pyramidal cone, a toe's contact is four
    unilateral rows (the pyramid's facets), each active while its force is positive. MuJoCo's
    force on an active row is ``-D·jar`` (``jar = J·qacc - aref``), so ``-jar`` is positive
    exactly while the row pushes and crosses zero where it switches: a facet switching on or off
    is friction changing from sticking to sliding (or direction), the last facet off is the
    normal release. Per toe: the entry (``mj_geomDistance`` minus margin, as
    ``mujoco_step_function``'s); the separation (+1 while MuJoCo holds the contact, minus the
    distance otherwise: the law changes there when the toe leaves still pushing); and one guard
    per facet (``-jar`` while held, +1 otherwise). All with reset None. A facet already off at the
    entry crosses in the entry's step: the driver then refuses two events in one step.
    """

    def __init__(self, box: Any) -> None:
        self.box = box
        self.model = box.model
        self._memo: Optional[Tuple[bytes, Dict[int, np.ndarray]]] = None
        self._memo_entries: Optional[Tuple[bytes, np.ndarray]] = None
        self._memo_facets: Optional[Tuple[bytes, np.ndarray]] = None
        self._pair_index = {k: i for i, (g1, g2, _) in enumerate(box.pairs) for k in ((g1, g2), (g2, g1))}

    def _rows(self, x: Any) -> Dict[int, np.ndarray]:
        """Per guarded pair held by MuJoCo at x: -jar of its rows."""
        key = np.asarray(x, dtype=float).tobytes()
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        d = self.box._set(np.asarray(x, dtype=float))
        self.box._mj.mj_forward(self.model, d)
        held = self._held(d)
        self._memo = (key, held)
        return held

    def _held(self, d: Any) -> Dict[int, np.ndarray]:
        """Per guarded pair held in d (after ``mj_forward``): -jar of its rows."""
        if not d.ncon:
            return {}
        m = self.model
        jar = d.efc_J.reshape(d.nefc, m.nv) @ d.qacc - d.efc_aref if d.nefc else np.zeros(0)
        held: Dict[int, np.ndarray] = {}
        con = d.contact
        for c, (g1, g2, adr, dim) in enumerate(zip(con.geom1.tolist(), con.geom2.tolist(), con.efc_address.tolist(),
                                                   con.dim.tolist())):
            i = self._pair_index.get((g1, g2))
            if i is not None:
                n = 1 if dim == 1 else 2 * (dim - 1)
                held[i] = -jar[adr:adr + n]
        return held

    def entries(self, X: Any) -> np.ndarray:
        """(m, n) -> (m, toes): each toe's distance minus margin per row, the one-state
        :meth:`MuJoCoModelStep.distance`'s numbers (``mj_kinematics`` per row)."""
        X = np.asarray(X, dtype=float)
        key = X.tobytes()
        if self._memo_entries is not None and self._memo_entries[0] == key:
            return self._memo_entries[1]
        mj, m, box = self.box._mj, self.model, self.box
        out = np.empty((X.shape[0], len(box.pairs)))
        distmax = 10.0 * max(1.0, float(m.stat.extent))
        for r, x in enumerate(X):
            d = box._set(x)
            mj.mj_kinematics(m, d)
            for i, (g1, g2, margin) in enumerate(box.pairs):
                out[r, i] = float(mj.mj_geomDistance(m, d, g1, g2, distmax + margin, None)) - margin
        self._memo_entries = (key, out)
        return out

    def facets(self, X: Any) -> np.ndarray:
        """(m, n) -> (m, toes, rows): each facet's guard per row (:meth:`facet`'s numbers, one
        ``mj_forward`` per row)."""
        X = np.asarray(X, dtype=float)
        key = X.tobytes()
        if self._memo_facets is not None and self._memo_facets[0] == key:
            return self._memo_facets[1]
        mj, m, box = self.box._mj, self.model, self.box
        n = self.rows()
        out = np.full((X.shape[0], len(box.pairs), n), -1.0)
        for r, x in enumerate(X):
            d = box._set(x)
            mj.mj_forward(m, d)
            for i, rows in self._held(d).items():
                k = min(n, len(rows))
                out[r, i, :k] = rows[:k]
        self._memo_facets = (key, out)
        return out

    def row_guards(self) -> List[Callable[[np.ndarray], np.ndarray]]:
        """The guards over rows (``StepFunction(batch=True)``), in :meth:`guards`' order."""
        import functools

        out: List[Callable[[np.ndarray], np.ndarray]] = []
        for i in range(len(self.box.pairs)):
            out.append(functools.partial(self._entry_rows, i))
            out += [functools.partial(self._facet_rows, i, f) for f in range(self.rows())]
        return out

    def _entry_rows(self, i: int, X: Any) -> np.ndarray:
        return self.entries(X)[:, i]

    def _facet_rows(self, i: int, f: int, X: Any) -> np.ndarray:
        return self.facets(X)[:, i, f]

    def separation(self, i: int, x: Any) -> float:
        return 1.0 if i in self._rows(x) else -self.box.distance(i, x)

    def facet(self, i: int, f: int, x: Any) -> float:
        rows = self._rows(x).get(i)
        return -1.0 if rows is None or f >= len(rows) else float(rows[f])

    def guards(self) -> List[Callable[[np.ndarray], float]]:
        import functools

        out: List[Callable[[np.ndarray], float]] = []
        n = self.rows()
        for i in range(len(self.box.pairs)):
            out += [functools.partial(self.box.distance, i)]
            out += [functools.partial(self.facet, i, f) for f in range(n)]
        return out

    def rows(self) -> int:
        """Rows of one toe's contact: 1 frictionless, 2·(condim - 1) in a pyramidal cone."""
        m = self.model
        dim = max(int(m.geom_condim[self.box.pairs[0][0]]), int(m.geom_condim[self.box.pairs[0][1]]))
        return 1 if dim == 1 else 2 * (dim - 1) if int(m.opt.cone) == 0 else dim

    def names(self) -> List[str]:
        n = self.rows()
        return [f"{foot} {kind}" for foot in FEET for kind in ["entry"] + [f"facet {f}" for f in range(n)]]


class RowsStep:
    """The window's ``mj_step`` over rows (``StepFunction(batch=True)``): from ``ROLLOUT_ROWS``
    rows up, every row one step of one ``mujoco.rollout`` call, a thread per core; below, the rows
    are stepped one after another. Each row starts from the state the one-state step sets (warm
    start zero, clock zero, the window's command), so each row is the one-state step's number, bit
    for bit; the charts (``mj_integratePos`` / ``mj_differentiatePos``) per row."""

    #: Fewest rows sent through ``mujoco.rollout``. Measured on this robot (CPU time per row, 2
    #: cores): one ``mj_step`` with its charts costs ~26 us one by one and 24-39 us through the
    #: rollout, so its threads only pay on wide calls; and on a loaded machine every call that
    #: hands rows to a thread waits for the scheduler (calls of 8 rows took 2.5x the one-state
    #: time at load 10). The driver's wide calls are its probe waves (4n + 1 rows, n = 56).
    ROLLOUT_ROWS = 64

    def __init__(self, box: Any, threads: Optional[int] = None) -> None:
        import os

        from mujoco import rollout

        self.box, self._rollout = box, rollout
        mj, m = box._mj, box.model
        self._spec = mj.mjtState.mjSTATE_FULLPHYSICS
        self._nstate = mj.mj_stateSize(m, self._spec)
        self._threads = [mj.MjData(m) for _ in range(max(1, threads or os.cpu_count() or 1))]

    def __call__(self, X: Any, dt: float) -> np.ndarray:
        box, mj, m = self.box, self.box._mj, self.box.model
        X = np.asarray(X, dtype=float)
        if X.shape[0] < self.ROLLOUT_ROWS:
            return np.array([box.step(x, dt) for x in X]).reshape(X.shape)
        m.opt.timestep = float(dt)
        s0 = np.empty((X.shape[0], self._nstate))
        for r, x in enumerate(X):
            mj.mj_getState(m, box._set(x), s0[r], self._spec)
        ctrl = np.tile(box.ctrl, (X.shape[0], 1, 1))
        nthread = min(len(self._threads), X.shape[0])
        state, _ = self._rollout.rollout(m, self._threads[:nthread], s0, ctrl, nstep=1,
                                         initial_warmstart=np.zeros((X.shape[0], box.nv)))
        nq, nv = box.nq, box.nv
        out = np.empty_like(X)
        for r in range(X.shape[0]):  # FULLPHYSICS = [time, qpos, qvel, act, ...]
            out[r, :nv] = box.dq(state[r, 0, 1:1 + nq])
        out[:, nv:] = state[:, 0, 1 + nq:1 + nq + nv + box.na]
        return out


def _window_box(m: Any, td: Touchdown, batch: bool = False) -> Tuple[Any, Any, np.ndarray]:
    """The window as a :class:`ferromotion.StepFunction` (one state per call, or rows with
    ``batch``: :class:`RowsStep` and :meth:`ToeGuards.row_guards`), its step object and x0."""
    from .. import StepFunction
    from ._mujoco_model import MuJoCoModelStep

    box = MuJoCoModelStep(m, qpos_ref=td.qpos.tolist(), pairs=toe_pairs(m))
    box.ctrl = np.array(td.ctrl, dtype=float)
    toes = ToeGuards(box)
    guards = toes.row_guards() if batch else toes.guards()
    sys_ = StepFunction(RowsStep(box) if batch else box.step, guards=guards, resets=[None] * len(guards),
                        batch=batch, name=f"dm_control quadruped in mujoco {box.version}")
    return sys_, box, box.state_of(td.qpos, td.qvel, td.act)


def located_jacobian(m: Any, td: Touchdown, dt: float = DT, halve_dt: bool = True,
                     progress: Any = False, probe_rtol: float = PROBE_RTOL, timeout: Optional[float] = None,
                     batch: bool = True) -> Answer:
    """(c): ``fm.hybrid_jacobian`` over the window through MuJoCo's step with :class:`ToeGuards`;
    rows and columns in MuJoCo's tangent coordinates. With ``batch`` (the default) the driver's
    probes run as rows (:class:`RowsStep`, :meth:`ToeGuards.row_guards`): the same answer as one
    state per call, bit for bit, in a fraction of the time. With ``timeout`` (s) it runs in a child
    process that is stopped at the timeout (the core's spectral radius of J once spun forever on
    some of this robot's 56 x 56 Jacobians; its Schur iteration is now capped, and the timeout
    stays as a guard); the answer then says so as its refusal."""
    if timeout is None:
        return _located(m, td, dt, halve_dt, progress, probe_rtol, batch)
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    start = time.perf_counter()
    proc = ctx.Process(target=_located_child, args=(child, m, td, dt, halve_dt, probe_rtol, batch),
                       daemon=True)
    proc.start()
    child.close()
    try:
        if parent.poll(timeout):
            return parent.recv()  # type: ignore[no-any-return]
    except EOFError:
        pass
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
    return Answer("c", dt, None, time.perf_counter() - start,
                  refusal=f"Timeout: no answer in {timeout:g} s (every step call had finished: the core's "
                          "spectral radius of J, nalgebra's Schur iteration, did not return)")


def _located_child(conn: Any, m: Any, td: Touchdown, dt: float, halve_dt: bool, probe_rtol: float,
                    batch: bool) -> None:
    conn.send(_located(m, td, dt, halve_dt, False, probe_rtol, batch))
    conn.close()


def _located(m: Any, td: Touchdown, dt: float, halve_dt: bool, progress: Any, probe_rtol: float,
             batch: bool = True) -> Answer:
    from .. import FerroError, hybrid_jacobian

    sys_, box, x0 = _window_box(m, td, batch)
    start = time.perf_counter()
    try:
        s = hybrid_jacobian(sys_, x0, td.t0, td.t1, dt=dt, halve_dt=halve_dt, progress=progress,
                            probe_rtol=probe_rtol)
    except FerroError as e:
        return Answer("c", dt, None, time.perf_counter() - start, refusal=f"{type(e).__name__}: {e}")
    wall = time.perf_counter() - start
    if not s.differentiable:
        # Simultaneous touchdowns whose orders give different matrices: the pieces remain
        # (s.pieces, s.jvp), no one Jacobian.
        try:
            s.jacobian
        except FerroError as e:
            return Answer("c", dt, None, wall, events=len(s.events), refusal=f"{type(e).__name__}: {e}")
    half = None if s.half_dt is None else box.tangent_at_end(s.half_dt.jacobian, s.half_dt.x)
    return Answer("c", dt, box.tangent_at_end(s.jacobian, s.x), wall, events=len(s.events),
                  half_dt_spread=None if s.half_dt is None else float(s.half_dt.spread), half_dt=half,
                  probe_gap=float(s.probe_gap), located=tuple((float(e.t), int(e.guard)) for e in s.events))


def difference_jacobian(m: Any, td: Touchdown, dt: float = DT, eps: float = 1e-6) -> Answer:
    """(b): central differences (probe eps) of MuJoCo's fixed-step map over the window, the
    same step as (c)'s, perturbed with ``mj_integratePos`` and read with ``mj_differentiatePos``."""
    _, box, x0 = _window_box(m, td)
    n = round((td.t1 - td.t0) / dt)

    def run(x: np.ndarray) -> np.ndarray:
        for _ in range(n):
            x = box.step(x, dt)
        return x

    start = time.perf_counter()
    x_end = run(x0)
    cols = []
    for j in range(box.dim):
        e = np.zeros(box.dim)
        e[j] = eps
        cols.append((run(x0 + e) - run(x0 - e)) / (2 * eps))
    jac = box.tangent_at_end(np.stack(cols, axis=1), x_end)
    return Answer("b", dt, jac, time.perf_counter() - start)


class MJXWindow:
    """(a): MJX's ``jax.jacfwd`` of the window's fixed-step rollout, compiled once per model
    structure (dt, the step count and the contact parameters are arguments, not constants).
    The tangent chart is written in JAX with MuJoCo's convention: a free joint's position plus
    its quaternion turned by the body-frame rotation vector; read at the end through
    ``2·Im(q_ref⁻¹ ⊗ q)``, whose derivative at q_ref is the rotation vector's."""

    def __init__(self, m: Any) -> None:
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        from mujoco import mjx

        self._jax, self._jnp, self._mjx = jax, jnp, mjx
        self.model = m
        self.nv, self.na = int(m.nv), int(m.na)
        self.free = [int(m.jnt_qposadr[j]) for j in range(m.njnt) if int(m.jnt_type[j]) == 0]
        self.free_dof = [int(m.jnt_dofadr[j]) for j in range(m.njnt) if int(m.jnt_type[j]) == 0]
        self.hinge = [(int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])) for j in range(m.njnt) if int(m.jnt_type[j]) in (2, 3)]
        self._jac = jax.jit(jax.jacfwd(self._window, argnums=0))
        self._end = jax.jit(self._rollout)
        self.compiled = False

    @staticmethod
    def _qmul(a: Any, b: Any, jnp: Any) -> Any:
        return jnp.stack([a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                          a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                          a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                          a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]])

    def _qpos(self, q0: Any, dq: Any) -> Any:
        jnp = self._jnp
        q = q0
        for a, v in zip(self.free, self.free_dof):
            q = q.at[a:a + 3].add(dq[v:v + 3])
            turn = jnp.concatenate([jnp.ones(1), dq[v + 3:v + 6] / 2])  # exp's first order, normalised
            quat = self._qmul(q0[a + 3:a + 7], turn / jnp.linalg.norm(turn), jnp)
            q = q.at[a + 3:a + 7].set(quat)
        for a, v in self.hinge:
            q = q.at[a].add(dq[v])
        return q

    def _dq(self, q_ref: Any, q: Any) -> Any:
        jnp = self._jnp
        out = jnp.zeros(self.nv)
        for a, v in zip(self.free, self.free_dof):
            out = out.at[v:v + 3].set(q[a:a + 3] - q_ref[a:a + 3])
            inv = q_ref[a + 3:a + 7] * jnp.array([1.0, -1.0, -1.0, -1.0])
            out = out.at[v + 3:v + 6].set(2.0 * self._qmul(inv, q[a + 3:a + 7], jnp)[1:])
        for a, v in self.hinge:
            out = out.at[v].set(q[a] - q_ref[a])
        return out

    def _rollout(self, x: Any, q0: Any, ctrl: Any, mx: Any, steps: Any) -> Any:
        jax, mjx = self._jax, self._mjx
        nv = self.nv
        d = mjx.make_data(mx).replace(qpos=self._qpos(q0, x[:nv]), qvel=x[nv:2 * nv], act=x[2 * nv:], ctrl=ctrl)

        def body(_: Any, d: Any) -> Any:
            return mjx.step(mx, d.replace(qacc_warmstart=self._jnp.zeros_like(d.qacc_warmstart)))

        d = jax.lax.fori_loop(1, steps, body, body(0, d))  # (make_data's int32 fields leave step as int64)
        return d.qpos, d.qvel, d.act

    def _window(self, x: Any, q0: Any, ctrl: Any, mx: Any, steps: Any, q_end: Any) -> Any:
        q, v, a = self._rollout(x, q0, ctrl, mx, steps)
        return self._jnp.concatenate([self._dq(q_end, q), v, a])

    def jacobian(self, td: Touchdown, dt: float, contact: str) -> Answer:
        """(a) at dt for the window, MuJoCo's tangent coordinates at both ends."""
        jnp = self._jnp
        m = self.model
        m.opt.timestep = dt
        m.geom_solref[:] = CONTACTS[contact]
        mx = self._mjx.put_model(m)
        steps = jnp.asarray(round((td.t1 - td.t0) / dt))
        x0 = jnp.concatenate([jnp.zeros(self.nv), jnp.asarray(td.qvel), jnp.asarray(td.act)])
        q0, u = jnp.asarray(td.qpos), jnp.asarray(td.ctrl)
        start = time.perf_counter()
        q_end = self._end(x0, q0, u, mx, steps)[0]
        jac = self._jac(x0, q0, u, mx, steps, q_end)
        jac.block_until_ready()
        first = time.perf_counter() - start
        compile_s = 0.0
        if not self.compiled:  # time the compiled run apart from the compilation
            self.compiled = True
            start = time.perf_counter()
            self._jac(x0, q0, u, mx, steps, q_end).block_until_ready()
            wall = time.perf_counter() - start
            compile_s = first - wall
        else:
            wall = first
        return Answer("a", dt, np.asarray(jac), wall, compile_s=compile_s)


# -- the table -------------------------------------------------------------------------------------
def _rel(x: Optional[np.ndarray], ref: Optional[np.ndarray]) -> Optional[float]:
    """max|x - ref| / max|ref|, None when either is missing."""
    if x is None or ref is None:
        return None
    return float(np.max(np.abs(x - ref)) / np.max(np.abs(ref)))


def sign_agreement(x: Optional[np.ndarray], ref: Optional[np.ndarray], top: int = TOP) -> Optional[int]:
    """Of ref's ``top`` largest entries (by magnitude), how many x gives with the same sign."""
    if x is None or ref is None:
        return None
    idx = np.argsort(np.abs(ref), axis=None)[::-1][:top]
    return int(np.sum(np.sign(x.flat[idx]) == np.sign(ref.flat[idx])))


def _named(refusal: Optional[str], names: Sequence[str]) -> Optional[str]:
    """The driver's refusal with its guard numbers given their names ("back right entry")."""
    import re

    if refusal is None:
        return None
    return re.sub(r"guards (\d+) and (\d+)", lambda g: f"guards {g.group(1)} ({names[int(g.group(1))]}) and "
                  f"{g.group(2)} ({names[int(g.group(2))]})", refusal)


def touchdown_row(m: Any, td: Touchdown, contact: str, mjx: Optional[MJXWindow],
                  say: Callable[[str], Any] = print) -> Dict[str, Any]:
    """Every answer for one window and the comparisons (see the module docs)."""
    ans: Dict[str, Answer] = {}
    for dt in (DT, DT_FINE):
        tag = f"{dt * 1e3:g} ms"
        ans[f"b {tag}"] = difference_jacobian(m, td, dt)
        ans[f"c {tag}"] = located_jacobian(m, td, dt, timeout=TIMEOUT)
        if mjx is not None:
            ans[f"a {tag}"] = mjx.jacobian(td, dt, contact)
        say(f"  {td.label}: dt = {tag}: " + ", ".join(f"({k[0]}) {v.wall_s:.1f} s" + (" refused" if v.refusal else "")
                                                    for k, v in ans.items() if k.split(" ", 1)[1] == tag))
    names = ToeGuards(_window_box(m, td)[1]).names()
    J = {k: v.jacobian for k, v in ans.items()}
    row: Dict[str, Any] = {"contact": contact, "window": [td.t0, td.t1], "feet": list(td.feet),
                           "times": list(td.times), "simultaneous": td.simultaneous, "label": td.label}
    for dt in (DT, DT_FINE):
        tag = f"{dt * 1e3:g} ms"
        c = ans[f"c {tag}"]
        row[tag] = {
            "c_refusal": _named(c.refusal, names), "c_events": c.events, "c_probe_gap": c.probe_gap,
            "c_half_dt_spread": _rel(c.half_dt, c.jacobian), "c_max": None if c.jacobian is None else float(np.max(np.abs(c.jacobian))),
            "rel_a": _rel(J.get(f"a {tag}"), c.jacobian), "rel_b": _rel(J[f"b {tag}"], c.jacobian),
            "sign_a": sign_agreement(J.get(f"a {tag}"), c.jacobian), "sign_b": sign_agreement(J[f"b {tag}"], c.jacobian),
            "a_vs_b": _rel(J.get(f"a {tag}"), J[f"b {tag}"]),
            "wall_s": {k[0]: v.wall_s for k, v in ans.items() if k.split(" ", 1)[1] == tag},
            "mjx_compile_s": ans[f"a {tag}"].compile_s if f"a {tag}" in ans else None}
    fine = J[f"c {DT_FINE * 1e3:g} ms"]
    row["refinement"] = {"c": _rel(J[f"c {DT * 1e3:g} ms"], fine), "a": _rel(J.get(f"a {DT * 1e3:g} ms"), J.get(f"a {DT_FINE * 1e3:g} ms")),
                         "b": _rel(J[f"b {DT * 1e3:g} ms"], J[f"b {DT_FINE * 1e3:g} ms"])}
    # (b)'s error at 2 ms against (c) at 0.2 ms, split: the fixed grid's unlocated switch (b against
    # c at 2 ms: same law, same dt) and dt ((c) at 2 ms against 0.2 ms).
    b2, c2 = J[f"b {DT * 1e3:g} ms"], J[f"c {DT * 1e3:g} ms"]
    row["blame"] = None if fine is None or b2 is None or c2 is None else {
        "total": _rel(b2, fine), "fixed_grid": float(np.max(np.abs(b2 - c2)) / np.max(np.abs(fine))), "dt": _rel(c2, fine)}
    return row


def table(contacts: Sequence[str] = ("shipped", "stiff"), trot: Trot = Trot(), strides: float = 2.0,
          mjx: bool = True, limit: Optional[int] = None, say: Callable[[str], Any] = print) -> Dict[str, Any]:
    """The per-touchdown table: every stride touchdown of ``strides`` strides (and the landing), for
    each contact setting; ``limit`` keeps the first few windows of each. Progress through ``say``."""
    start = time.perf_counter()
    rows: List[Dict[str, Any]] = []
    summaries = []
    window = None
    for contact in contacts:
        tds, summary = nominal(contact, trot, strides)
        summaries.append(summary)
        tds = tds[:limit] if limit is not None else tds
        say(f"{contact}: {summary['touchdowns']} touchdowns in the nominal run, {len(tds)} windows tabulated, "
            f"{summary['other_contacts']} contacts other than a toe on the floor")
        m = quadruped_model(contact)
        if mjx and window is None:
            say("MJX: compiling jacfwd of the window rollout (once; minutes on a small CPU)")
            window = MJXWindow(m)
        for i, td in enumerate(tds):
            say(f"{contact} {i + 1}/{len(tds)} ({time.perf_counter() - start:.0f} s so far)")
            rows.append(touchdown_row(m, td, contact, window if mjx else None, say))
    return {"rows": rows, "nominal": summaries, "wall_s": time.perf_counter() - start, "trot": dataclasses.asdict(trot),
            "dt": [DT, DT_FINE], "window_s": WINDOW, "probe_rtol": PROBE_RTOL, "top": TOP}


def _fmt(v: Any, spec: str = ".2g") -> str:
    return "–" if v is None else format(v, spec)


def markdown(result: Dict[str, Any]) -> str:
    """The table as Markdown: one line per window and dt."""
    lines = ["| contact | touchdown | dt | (c) events | (c) dt/2 spread | (a) vs (c) | (b) vs (c) | signs (a) | signs (b) "
             "| (a) vs (b) | wall (a) / (b) / (c) s |", "|---" * 11 + "|"]
    for r in result["rows"]:
        for tag in (f"{DT * 1e3:g} ms", f"{DT_FINE * 1e3:g} ms"):
            x = r[tag]
            w = x["wall_s"]
            walls = " / ".join(_fmt(w.get(k), ".1f") for k in "abc")
            if x["c_refusal"]:
                c = "refused: " + x["c_refusal"].split(":")[0]
                lines.append(f"| {r['contact']} | {r['label']} | {tag} | {c} | – | – | – | – | – | {_fmt(x['a_vs_b'])} | {walls} |")
                continue
            lines.append(f"| {r['contact']} | {r['label']} | {tag} | {x['c_events']} | {_fmt(x['c_half_dt_spread'])} "
                         f"| {_fmt(x['rel_a'])} | {_fmt(x['rel_b'])} | {_fmt(x['sign_a'], 'd')}/{TOP} "
                         f"| {_fmt(x['sign_b'], 'd')}/{TOP} | {_fmt(x['a_vs_b'])} | {walls} |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m ferromotion.engines.quadruped3d [--no-mjx] [--limit N] [--out FILE]``."""
    p = argparse.ArgumentParser(prog="python -m ferromotion.engines.quadruped3d", description=__doc__.split("\n")[0])
    p.add_argument("--contacts", default="shipped,stiff", help="comma-separated, of: " + ", ".join(CONTACTS))
    p.add_argument("--no-mjx", action="store_true", help="skip (a), MJX (its compilation takes minutes)")
    p.add_argument("--limit", type=int, default=None, help="at most N windows per contact setting")
    p.add_argument("--out", default=None, help="write the table as JSON here")
    args = p.parse_args(argv)
    contacts = [c.strip() for c in args.contacts.split(",") if c.strip()]
    for c in contacts:
        if c not in CONTACTS:
            p.error(f"--contacts: {c!r} is not one of {', '.join(CONTACTS)}")

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    result = table(contacts, mjx=not args.no_mjx, limit=args.limit, say=say)
    print(markdown(result))
    print(f"\nwhole table: {result['wall_s']:.0f} s wall")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")
        print(f"written to {args.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
