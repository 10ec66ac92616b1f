"""Any MuJoCo model through the black-box driver: :func:`mujoco_step_function` wraps a user's
``MjModel`` (or an MJCF file or string) into a step function with its contact guards, its
state in tangent coordinates, and MuJoCo's own ``mj_step`` unchanged.

**State.** MuJoCo's configuration ``qpos`` has nq entries and its velocity ``qvel`` nv; a free
joint holds a position and a unit quaternion (7 numbers, 6 degrees of freedom), a ball joint a
quaternion (4 numbers, 3). A flat perturbation of a quaternion leaves the unit sphere, so the
step's state is ``x = [dq (nv), qvel (nv), act (na)]`` with ``qpos = mj_integratePos(qpos_ref,
dq)``: MuJoCo's own tangent convention (``mj_integratePos`` / ``mj_differentiatePos``, the one
``mjd_transitionFD`` uses: a free joint's dq is the linear displacement then the rotation vector
in the *body* frame, a ball joint's the rotation vector in its local frame). Every qpos the
engine sees comes out of ``mj_integratePos``, so a quaternion never leaves the unit sphere.
``qpos_ref`` is the initial configuration (:meth:`MuJoCoModelStep.state_of`): at x0 the chart is
MuJoCo's tangent space exactly (the columns of J are MuJoCo's tangent directions at x0); at the
end, :meth:`MuJoCoModelStep.tangent_at_end` carries the rows to MuJoCo's tangent space at x(T).
The chart is smooth for rotations up to 2*pi away from ``qpos_ref``. ``layout`` lists each
joint's block (the manifold declaration the driver will read; until then it is here).

**Guards.** One per contact pair the model can make (explicit ``<pair>`` elements, and every
geom pair its ``contype``/``conaffinity`` filters allow between two bodies that are not welded
together, not parent and child unless ``filterparent`` is off, and not excluded): the entry is
the signed distance ``mj_geomDistance`` minus the pair's margin (MuJoCo's own "in contact" is
``dist < margin``); the release is, while MuJoCo holds the contact, the argument of the pair's
normal force before MuJoCo clamps it at zero (``-efc_b = aref - J qacc_smooth`` of the normal
row after ``mj_forward``; the least over the pair's contacts), and minus the distance otherwise
(positive while the contact pushes). Both with reset None: MuJoCo's law changes there and it decides the
law at each step's start.

Each call clears what an earlier call leaves behind (the solver's warm start, the clock, the
activations' and controls' leftovers are set from x and ``ctrl``), so the step depends on
(x, dt) alone, as the driver measures.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

#: MuJoCo's joint types, by ``mjtJoint`` value: name, qpos width, dof width.
_JOINTS = {0: ("free", 7, 6), 1: ("ball", 4, 3), 2: ("slide", 1, 1), 3: ("hinge", 1, 1)}


@dataclasses.dataclass(frozen=True)
class TangentBlock:
    """One joint's part of the state: ``qpos[qpos_adr : qpos_adr + nq]`` on the manifold ``kind``
    (``free``: R^3 x S^3, ``ball``: S^3, ``slide``/``hinge``: R), its tangent coordinates at
    ``x[dof_adr : dof_adr + nv]`` and its velocity at ``x[nv_total + dof_adr : ...]``."""

    joint: str
    kind: str
    qpos_adr: int
    nq: int
    dof_adr: int
    nv: int


def _load(model: Any) -> Any:
    import mujoco

    if isinstance(model, mujoco.MjModel):
        return model
    if isinstance(model, (str, os.PathLike)):
        text = str(model)
        if text.lstrip().startswith("<"):
            return mujoco.MjModel.from_xml_string(text)
        if not os.path.exists(text):
            raise ValueError(f"model: {text!r} is neither an MJCF string nor an existing file")
        return mujoco.MjModel.from_xml_path(text)
    raise TypeError(f"model: expected a mujoco.MjModel, an MJCF path or an MJCF string, got {type(model).__name__}")


def contact_pairs(m: Any) -> List[Tuple[int, int, float]]:
    """(geom1, geom2, margin) of every pair the model can put in contact (see the module docs)."""
    import mujoco

    pairs: List[Tuple[int, int, float]] = []
    for p in range(m.npair):
        pairs.append((int(m.pair_geom1[p]), int(m.pair_geom2[p]), float(m.pair_margin[p])))
    excluded = {int(s) for s in m.exclude_signature[:m.nexclude]}
    filterparent = not (m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT)
    explicit = {(a, b) for a, b, _ in pairs} | {(b, a) for a, b, _ in pairs}
    for g1 in range(m.ngeom):
        for g2 in range(g1 + 1, m.ngeom):
            b1, b2 = int(m.geom_bodyid[g1]), int(m.geom_bodyid[g2])
            if (g1, g2) in explicit:
                continue
            if not ((m.geom_contype[g1] & m.geom_conaffinity[g2]) or (m.geom_contype[g2] & m.geom_conaffinity[g1])):
                continue
            w1, w2 = int(m.body_weldid[b1]), int(m.body_weldid[b2])
            if w1 == w2:
                continue
            if filterparent and w1 != 0 and w2 != 0 and (int(m.body_weldid[m.body_parentid[w1]]) == w2
                                                        or int(m.body_weldid[m.body_parentid[w2]]) == w1):
                continue
            if ((min(b1, b2) << 16) + max(b1, b2)) in excluded:
                continue
            pairs.append((g1, g2, max(float(m.geom_margin[g1]), float(m.geom_margin[g2]))))
    return pairs


class MuJoCoModelStep:
    """A MuJoCo model as ``step(x, dt)`` in tangent coordinates, with its contact guards.

    Attributes
    ----------
    model : mujoco.MjModel
    layout : tuple of TangentBlock
        Each joint's block of the state (the manifold declaration).
    pairs : list of (int, int, float)
        The contact pairs guarded: (geom1, geom2, margin).
    qpos_ref : ndarray (nq,)
        The chart's centre.
    ctrl : ndarray (nu,)
        Controls applied at every step (open loop; default zeros).
    """

    def __init__(self, model: Any, qpos_ref: Optional[Sequence[float]] = None,
                 pairs: Optional[Sequence[Tuple[int, int, float]]] = None) -> None:
        import mujoco

        self._mj = mujoco
        self.model = _load(model)
        m = self.model
        self.data = mujoco.MjData(m)
        self.nq, self.nv, self.na = int(m.nq), int(m.nv), int(m.na)
        self.qpos_ref = np.array(m.qpos0 if qpos_ref is None else qpos_ref, dtype=float)
        if self.qpos_ref.shape != (self.nq,):
            raise ValueError(f"qpos_ref: expected shape ({self.nq},), got {self.qpos_ref.shape}")
        self.ctrl = np.zeros(m.nu)
        self.layout = tuple(
            TangentBlock(joint=mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint {j}",
                         kind=_JOINTS[int(m.jnt_type[j])][0], qpos_adr=int(m.jnt_qposadr[j]),
                         nq=_JOINTS[int(m.jnt_type[j])][1], dof_adr=int(m.jnt_dofadr[j]),
                         nv=_JOINTS[int(m.jnt_type[j])][2])
            for j in range(m.njnt))
        self.pairs = list(contact_pairs(m) if pairs is None else pairs)
        self.version = mujoco.__version__
        self._memo: Optional[Tuple[Tuple[float, ...], Any]] = None

    @property
    def dim(self) -> int:
        """Length of the state: 2 nv + na."""
        return 2 * self.nv + self.na

    # -- charts ----------------------------------------------------------------------------------
    def qpos(self, x: Any) -> np.ndarray:
        """qpos = mj_integratePos(qpos_ref, dq): on the manifold, unit quaternions."""
        q = self.qpos_ref.copy()
        self._mj.mj_integratePos(self.model, q, np.asarray(x[:self.nv], dtype=float), 1.0)
        return q

    def dq(self, qpos: Any) -> np.ndarray:
        """dq = mj_differentiatePos(qpos_ref, qpos): the chart's coordinates of qpos."""
        out = np.empty(self.nv)
        self._mj.mj_differentiatePos(self.model, out, 1.0, self.qpos_ref, np.asarray(qpos, dtype=float))
        return out

    def state_of(self, qpos: Any, qvel: Any, act: Any = ()) -> np.ndarray:
        """x of MuJoCo's (qpos, qvel, act); call it with the initial configuration first (it is
        then the chart's centre: ``qpos_ref`` is set to ``qpos``)."""
        self.qpos_ref = np.array(qpos, dtype=float)
        a = np.zeros(self.na) if len(act) == 0 else np.asarray(act, dtype=float)
        return np.concatenate([np.zeros(self.nv), np.asarray(qvel, dtype=float), a])

    def tangent_at_end(self, jacobian: Any, x_end: Any) -> np.ndarray:
        """J with its rows carried from the chart at ``qpos_ref`` to MuJoCo's tangent space at
        qpos(x_end) (the convention of ``mjd_transitionFD``): the derivative of
        ``mj_differentiatePos(q_T, mj_integratePos(qpos_ref, dq))`` in dq at x_end's dq, by
        central differences (the map is smooth: rotations compose)."""
        nv = self.nv
        q_end = self.qpos(x_end)
        d0 = np.asarray(x_end[:nv], dtype=float)
        h = 1e-7
        cols = []
        for j in range(nv):
            e = np.zeros(nv)
            e[j] = h
            up, dn = np.empty(nv), np.empty(nv)
            self._mj.mj_differentiatePos(self.model, up, 1.0, q_end, self.qpos(d0 + e))
            self._mj.mj_differentiatePos(self.model, dn, 1.0, q_end, self.qpos(d0 - e))
            cols.append((up - dn) / (2 * h))
        chart = np.eye(self.dim)
        chart[:nv, :nv] = np.stack(cols, axis=1)
        return chart @ np.asarray(jacobian, dtype=float)

    # -- the step -----------------------------------------------------------------------------------
    def _set(self, x: Any) -> Any:
        d = self.data
        d.qacc_warmstart[:] = 0.0
        d.time = 0.0
        d.qpos[:] = self.qpos(x)
        d.qvel[:] = x[self.nv:2 * self.nv]
        if self.na:
            d.act[:] = x[2 * self.nv:]
        if self.model.nu:
            d.ctrl[:] = self.ctrl
        return d

    def step(self, x: Any, dt: float) -> np.ndarray:
        """One ``mj_step`` of ``dt`` seconds from x; the result in the same chart."""
        d = self._set(np.asarray(x, dtype=float))
        self.model.opt.timestep = float(dt)
        self._mj.mj_step(self.model, d)
        return np.concatenate([self.dq(d.qpos), d.qvel, d.act])

    def step_rows(self, X: Any, dt: float) -> np.ndarray:
        """(m, n) -> (m, n): each row one :meth:`step` (the batched interface)."""
        return np.array([self.step(x, dt) for x in np.asarray(X, dtype=float)]).reshape(-1, self.dim)

    # -- the guards ---------------------------------------------------------------------------------
    def distance(self, i: int, x: Any) -> float:
        """Pair i's signed distance minus its margin at x (<= 0: MuJoCo holds the contact); beyond
        ten times the model's extent, that cap (positive)."""
        g1, g2, margin = self.pairs[i]
        d = self._set(np.asarray(x, dtype=float))
        self._mj.mj_kinematics(self.model, d)
        # Beyond distmax MuJoCo reads distmax: still positive (no event), only coarser.
        distmax = 10.0 * max(1.0, float(self.model.stat.extent)) + margin
        return float(self._mj.mj_geomDistance(self.model, d, g1, g2, distmax, None)) - margin

    def _forces(self, x: Any) -> Any:
        key = tuple(float(v) for v in x)
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        d = self._set(np.asarray(x, dtype=float))
        self._mj.mj_forward(self.model, d)
        pyramidal = self.model.opt.cone == self._mj.mjtCone.mjCONE_PYRAMIDAL
        forces: Dict[Tuple[int, int], float] = {}
        for c in range(d.ncon):
            adr, dim = int(d.contact.efc_address[c]), int(d.contact.dim[c])
            if adr < 0:
                continue
            g = (int(d.contact.geom1[c]), int(d.contact.geom2[c]))
            # The normal force's argument before MuJoCo clamps it at zero: -efc_b = aref - J qacc_smooth
            # of the normal row (a pyramidal cone's rows share the normal: their mean).
            rows = range(adr, adr + 2 * (dim - 1)) if pyramidal and dim > 1 else (adr,)
            push = -float(np.mean([d.efc_b[r] for r in rows]))
            for k in (g, g[::-1]):
                forces[k] = min(forces.get(k, np.inf), push)
        self._memo = (key, forces)
        return forces

    def release(self, i: int, x: Any) -> float:
        """While MuJoCo holds pair i's contact, the argument of its normal force before the clamp
        at zero (``aref - J qacc_smooth`` of the normal row, ``-efc_b``; the least over the pair's
        contacts), positive while it pushes; minus the distance otherwise. The clamped force
        itself stays at zero once released while the bodies still overlap, a guard that grazes
        its zero (measured: the drop refused ``Grazing`` at its release)."""
        g1, g2, _ = self.pairs[i]
        forces = self._forces(x)
        if (g1, g2) in forces:
            return forces[(g1, g2)]
        return -self.distance(i, x)

    def guards(self, release: bool = True) -> List[Callable[[np.ndarray], float]]:
        out: List[Callable[[np.ndarray], float]] = []
        for i in range(len(self.pairs)):
            out.append(functools.partial(self.distance, i))
            if release:
                out.append(functools.partial(self.release, i))
        return out


def mujoco_step_function(model: Any, qpos: Optional[Sequence[float]] = None, *,
                         pairs: Optional[Sequence[Tuple[int, int, float]]] = None,
                         release: bool = True) -> Tuple[Any, MuJoCoModelStep]:
    """A user's MuJoCo model as a :class:`ferromotion.StepFunction` (and the step object).

    Parameters
    ----------
    model : mujoco.MjModel, str or path
        The model, an MJCF file, or an MJCF string.
    qpos : sequence of float, optional
        The initial configuration: the chart's centre (default the model's ``qpos0``).
    pairs : sequence of (geom1, geom2, margin), optional
        The contact pairs to guard (default: every pair the model can make, :func:`contact_pairs`).
    release : bool
        Also guard each pair's release (default).

    Returns
    -------
    (StepFunction, MuJoCoModelStep)
        ``x = [dq, qvel, act]`` in the chart at ``qpos``; the object's ``layout``, ``qpos``,
        ``state_of``, ``tangent_at_end``.

    Examples
    --------
    Needs MuJoCo (``.venv-engines``).

    >>> import numpy as np, ferromotion as fm
    >>> xml = '<mujoco><worldbody><body pos="0 0 1"><freejoint/><geom type="box" size=".1 .1 .1"/>'
    >>> xml += '</body></worldbody></mujoco>'
    >>> sys, box = fm.engines.mujoco_step_function(xml)
    >>> [b.kind for b in box.layout], box.dim
    (['free'], 12)
    """
    from .. import StepFunction

    box = MuJoCoModelStep(model, qpos_ref=qpos, pairs=pairs)
    guards = box.guards(release)
    return StepFunction(box.step, guards=guards, resets=[None] * len(guards),
                        name=f"mujoco {box.version} model ({box.nq} qpos, {box.nv} dof, {len(box.pairs)} pairs)"), box


