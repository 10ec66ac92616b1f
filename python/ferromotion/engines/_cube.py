"""The tumbling cube (``fm.systems.TumblingCube``, the ``tumbling_cube`` fixture) in the engines:
its MJCF, the conversion between MuJoCo's state and the cube's, each engine's gradient, and the
table of per-impact sign and gradient error against the exact J (``docs/engines.md``).

**The model.** A free body with one box geom (half side a, mass m: MuJoCo's box inertia
m/3·(2a²) is the cube's 2/3·m·a²) over a plane, gravity −g along z, ``integrator="Euler"``,
``condim=1`` (frictionless normal contact). The contact is MuJoCo's soft constraint with
``solref = (timeconst, dampratio)`` and a constant impedance ``solimp = (d, d, ...)``,
d = 0.9999: the contact point's normal motion then follows ``a = -B·v - K·r`` (constraint
space: the effective mass of the corner does not enter), a damped oscillator of damping ratio
``dampratio·sqrt(d)`` released where its force's argument reaches zero. Its stiff limit
(timeconst → 0) is Newton restitution on the contact point's normal velocity with
``e = limit_restitution(zeta)`` (the push-only law's, independent of the stiffness): so
``dampratio`` is chosen by :func:`zeta_for` to make e the cube's restitution. The stiffness
rows are ``timeconst`` values (smaller is stiffer); MuJoCo needs timeconst ≥ 2·dt.

**Through the driver.** :func:`cube_step_function` gives the step one guard pair per corner
(entry: MuJoCo's own distance at that corner, release: its contact's force argument), so both
strikes are located (one guard for the box refused the second, ``TwoEventsInOneStep``);
:func:`driver_row` runs it for MuJoCo (float64) or MuJoCo Warp (float32 declared). MuJoCo Warp's
runs the elliptic cone (:data:`WARP_OPTION`: the same law for this frictionless contact): with the
default pyramidal cone its Newton solver's incremental Hessian updates made its float32 answer
through a strike ~100 times noisier than its float32 state at timeconst 0.01 s, and the driver refused it
``ProbeDependent`` (docs/engines.md).

**Coordinates.** The cube's x = (c, θ, v, ω): θ a world-frame rotation vector (R = Exp(θ)),
ω world-frame; its J is in tangent coordinates with a world-frame rotation δ left-multiplied
(R' = Exp(δ)·R). MuJoCo's free joint holds (c, quaternion) and (v, ω in the *body* frame), its
tangent (``mj_integratePos``) a body-frame rotation right-multiplied. :func:`to_cube_tangent`
carries a Jacobian from MuJoCo's tangent coordinates to the cube's:
δ_w = R·δ_b, dω_w = R·dω_b − R·hat(ω_b)·δ_b.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

#: Constant impedance (MuJoCo's largest d), as the drop's mapping.
IMPEDANCE = 0.9999
#: MuJoCo Warp's cube through the driver runs the elliptic cone. For this frictionless contact
#: (condim 1) it is the same law as the default pyramidal cone: MuJoCo's ``mj_step`` gives the same
#: trajectory bit for bit (tests/engines/test_cube_engines.py). In MuJoCo Warp 4.0 it switches off
#: the incremental Hessian updates of its Newton solver (``solver._use_incremental``: Newton with a
#: non-elliptic cone), whose float32 answer through a corner strike was ~100 times noisier than the
#: float32 state at timeconst 0.01 s (docs/engines.md, "MuJoCo Warp's noise through a strike, located"). MJX 3.17 does
#: not implement condim 1 with the elliptic cone, so the cube's MJCF keeps the default.
WARP_OPTION = {"cone": "elliptic"}
#: The cube fixture's horizons for the per-impact table: after the first strike (0.263 s) and
#: before the second (0.302 s); after both (the fixture's T).
HORIZONS = (0.28, 0.45)


def zeta_for(restitution: float) -> float:
    """The damping ratio whose push-only stiff limit is ``restitution`` (the core's
    ``limit_restitution`` inverted by bisection)."""
    from .. import Drop, limit_restitution

    if not 0.0 < restitution < 1.0:
        raise ValueError(f"restitution: must be in (0, 1) for a damped contact, got {restitution}")
    lo, hi = 0.0, 0.999
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if limit_restitution(dataclasses.replace(Drop(), zeta=mid)) > restitution:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def cube_mjcf(cube: Any, timeconst: float, dt: float, *, impedance: float = IMPEDANCE,
              option: Optional[Dict[str, str]] = None, flag: Optional[Dict[str, str]] = None) -> str:
    """The cube's MJCF at ``solref = (timeconst, zeta_for(restitution))``, step dt. ``option`` and
    ``flag`` add or replace attributes of ``<option>`` and ``<option><flag>`` (``scripts/cube_engines.py
    --noise`` varies the solver with them), ``impedance`` the constant solimp."""
    a, zeta = float(cube.half_side), zeta_for(float(cube.restitution))
    imp = f"{float(impedance)!r} {float(impedance)!r} 0.001 0.5 2"
    opts = {"timestep": repr(float(dt)), "integrator": "Euler", "gravity": f"0 0 {-float(cube.gravity)!r}",
            **(option or {})}
    attrs = " ".join(f'{k}="{v}"' for k, v in opts.items())
    flags = "<flag " + " ".join(f'{k}="{v}"' for k, v in flag.items()) + "/>" if flag else ""
    return f"""
<mujoco model="ferromotion tumbling cube">
  <option {attrs}>{flags}</option>
  <default><geom condim="1" solref="{float(timeconst)!r} {zeta!r}" solimp="{imp}"/></default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="cube"><freejoint/><geom name="cube" type="box" size="{a!r} {a!r} {a!r}" mass="{float(cube.mass)!r}"/></body>
  </worldbody>
</mujoco>
"""


def _hat(w: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _rotation(theta: np.ndarray) -> np.ndarray:
    import mujoco

    q, r = np.zeros(4), np.zeros(9)
    angle = float(np.linalg.norm(theta))
    axis = theta / angle if angle > 0 else np.array([1.0, 0.0, 0.0])
    mujoco.mju_axisAngle2Quat(q, axis, angle)
    mujoco.mju_quat2Mat(r, q)
    return r.reshape(3, 3)


def _log(r: np.ndarray) -> np.ndarray:
    import mujoco

    q, w = np.zeros(4), np.zeros(3)
    mujoco.mju_mat2Quat(q, np.asarray(r, dtype=float).reshape(9))
    mujoco.mju_quat2Vel(w, q, 1.0)
    return w


def to_mujoco(x: Any) -> Tuple[np.ndarray, np.ndarray]:
    """The cube's x = (c, θ, v, ω_world) as MuJoCo's (qpos (7), qvel (6): ω in the body frame)."""
    import mujoco

    x = np.asarray(x, dtype=float)
    r = _rotation(x[3:6])
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, r.reshape(9))
    return np.concatenate([x[:3], q]), np.concatenate([x[6:9], r.T @ x[9:12]])


def from_mujoco(qpos: Any, qvel: Any) -> np.ndarray:
    """MuJoCo's free-joint (qpos, qvel) as the cube's x = (c, θ, v, ω_world)."""
    import mujoco

    flat = np.zeros(9)
    q = np.asarray(qpos[3:7], dtype=float)
    mujoco.mju_quat2Mat(flat, q / np.linalg.norm(q))
    r = flat.reshape(3, 3)
    return np.concatenate([qpos[:3], _log(r), qvel[:3], r @ np.asarray(qvel[3:6], dtype=float)])


def _chart(x: np.ndarray) -> np.ndarray:
    """dx_cube = M · dx_mujoco at x (MuJoCo's tangent: body-frame rotation and ω)."""
    r = _rotation(x[3:6])
    w_body = r.T @ x[9:12]
    m = np.eye(12)
    m[3:6, 3:6] = r
    m[9:12, 9:12] = r
    m[9:12, 3:6] = -r @ _hat(w_body)
    return m


def to_cube_tangent(jacobian: Any, x0: Any, x_end: Any) -> np.ndarray:
    """A Jacobian in MuJoCo's tangent coordinates (at x0 and at x(T): dq and qvel of a free joint)
    carried to the cube's (world-frame rotation left-multiplied, world-frame ω)."""
    return _chart(np.asarray(x_end, dtype=float)) @ np.asarray(jacobian, dtype=float) @ np.linalg.inv(
        _chart(np.asarray(x0, dtype=float)))


def probe_starts(x0: Any, h: float) -> np.ndarray:
    """(25, 12): x0, then for each tangent coordinate j the starts x0 ⊕ (+h e_j) and x0 ⊕ (−h e_j)
    (an orientation probe is Exp(±h e)·R0, written back as a rotation vector)."""
    x0 = np.asarray(x0, dtype=float)
    r0 = _rotation(x0[3:6])
    out = [x0]
    for j in range(12):
        for s in (h, -h):
            x = x0.copy()
            if 3 <= j < 6:
                e = np.zeros(3)
                e[j - 3] = s
                x[3:6] = _log(_rotation(e) @ r0)
            else:
                x[j] += s
            out.append(x)
    return np.array(out)


def jacobian_from(ends: Any, h: float) -> Tuple[np.ndarray, np.ndarray]:
    """(x(T), J) from the ends of :func:`probe_starts`' runs: central differences in the cube's
    tangent coordinates (orientation rows log(R(T)·R̄(T)ᵀ))."""
    ends = np.asarray(ends, dtype=float)
    xbar = ends[0]
    rbar = _rotation(xbar[3:6])
    tangent = ends.copy()
    for i in range(len(ends)):
        tangent[i, 3:6] = _log(_rotation(ends[i, 3:6]) @ rbar.T)
    jac = np.stack([(tangent[1 + 2 * j] - tangent[2 + 2 * j]) / (2 * h) for j in range(12)], axis=1)
    return xbar, jac


def mujoco_rollout(model: Any, x0: Sequence[float], horizons: Sequence[float]) -> Dict[float, np.ndarray]:
    """x at each horizon of MuJoCo's own loop (``mj_step`` at the model's timestep) from the
    cube's x0."""
    import mujoco

    d = mujoco.MjData(model)
    d.qpos[:], d.qvel[:] = to_mujoco(x0)
    out, n = {}, 0
    for t_final in sorted(horizons):
        while n < round(t_final / model.opt.timestep):
            mujoco.mj_step(model, d)
            n += 1
        out[t_final] = from_mujoco(d.qpos, d.qvel)
    return out


def warp_rollouts(box: Any, starts: Any, horizons: Sequence[float]) -> Dict[float, np.ndarray]:
    """(m, 12) at each horizon of MuJoCo Warp's own loop (float32 throughout), the m starts as m
    worlds: ``box`` a :class:`~ferromotion.engines._mujoco_warp.MuJoCoWarpStep` of
    :func:`cube_mjcf`."""
    wp, mjw = box._wp, box._mjw
    starts = np.asarray(starts, dtype=float)
    m = len(starts)
    n_worlds, d = box._data(m)
    pairs = [to_mujoco(x) for x in starts]
    pairs += [pairs[0]] * (n_worlds - m)
    out, n = {}, 0
    with wp.ScopedDevice(box._device):
        d.qpos.assign(np.array([p[0] for p in pairs], dtype=np.float32))
        d.qvel.assign(np.array([p[1] for p in pairs], dtype=np.float32))
        d.qacc_warmstart.zero_()
        d.time.zero_()
        box._wmodel.opt.timestep.fill_(float(box.model.opt.timestep))
        for t_final in sorted(horizons):
            while n < round(t_final / box.model.opt.timestep):
                mjw.step(box._wmodel, d)
                n += 1
            q, v = d.qpos.numpy()[:m].astype(float), d.qvel.numpy()[:m].astype(float)
            out[t_final] = np.array([from_mujoco(q[i], v[i]) for i in range(m)])
    return out


#: A positive guard value standing for "the engine makes no contact here" where the float64 height
#: is already at or below zero (the engine's own distance differs within its rounding of the zero).
_TINY = 1e-300

#: The box's corners in its own frame, in units of the half side, in MuJoCo's (and MuJoCo Warp's)
#: order: corner i has x = +a if i & 1, y = +a if i & 2, z = +a if i & 4.
CORNERS = np.array([[1.0 if i & 1 else -1.0, 1.0 if i & 2 else -1.0, 1.0 if i & 4 else -1.0] for i in range(8)])


def corner_at(corners: np.ndarray, pos: Any) -> int:
    """The corner a box-plane contact is at: MuJoCo puts it at the corner moved halfway to the
    plane along its normal (z), so the corner whose (x, y) is nearest."""
    return int(np.argmin(np.linalg.norm(corners[:, :2] - np.asarray(pos, dtype=float)[:2], axis=1)))


class _Corners:
    """One guard pair per corner of the cube's box (instead of one per geom pair, its lowest
    corner's). Corner c's entry is its distance *as MuJoCo computes it*: the distance of
    MuJoCo's contact at that corner where its collision makes one (<= 0: the next step takes
    the contact), else the corner's height over the floor (z = 0), kept positive. (The height
    alone differs from MuJoCo's distance by ~1e-17 m of rounding: the driver, moving a few ulps
    past the zero, then started the contact where MuJoCo's step did not.) Its release is the
    argument of that contact's normal force before MuJoCo clamps it (``-efc_b``) while MuJoCo
    holds it, minus the height otherwise. Mixed into the MuJoCo and MuJoCo Warp step classes
    (``self`` has ``model``, ``_mj`` and ``_set``)."""

    _corner_memo: Optional[Tuple[bytes, Any]] = None

    def corner_state(self, x: Any) -> Tuple[np.ndarray, Dict[int, float], Dict[int, float]]:
        """At x, by one ``mj_forward`` (float64): the 8 corners' world positions (8, 3), and per
        corner MuJoCo holds a contact at, its distance and its normal force's argument."""
        x = np.asarray(x, dtype=float)
        key = x.tobytes()
        if self._corner_memo is not None and self._corner_memo[0] == key:
            return self._corner_memo[1]
        mj = self._mj  # type: ignore[attr-defined]
        d = self._set(x)  # type: ignore[attr-defined]
        mj.mj_forward(self.model, d)  # type: ignore[attr-defined]
        box = int(self.model.ngeom) - 1  # type: ignore[attr-defined]
        half = float(self.model.geom_size[box][0])  # type: ignore[attr-defined]
        corners = d.geom_xpos[box] + (half * CORNERS) @ d.geom_xmat[box].reshape(3, 3).T
        dist: Dict[int, float] = {}
        push: Dict[int, float] = {}
        for c in range(d.ncon):
            corner = corner_at(corners, d.contact.pos[c])
            dist[corner] = min(dist.get(corner, np.inf), float(d.contact.dist[c]) - float(d.contact.includemargin[c]))
            adr = int(d.contact.efc_address[c])
            if adr >= 0:
                push[corner] = min(push.get(corner, np.inf), -float(d.efc_b[adr]))
        out = (corners, dist, push)
        self._corner_memo = (key, out)
        return out

    def corner_entry(self, c: int, x: Any) -> float:
        """Corner c's entry guard (MuJoCo's distance at that corner; its height, kept positive,
        where MuJoCo makes no contact there), m."""
        corners, dist, _ = self.corner_state(x)
        return min(dist[c], 0.0) if c in dist else max(float(corners[c, 2]), _TINY)

    def corner_release(self, c: int, x: Any) -> float:
        """Corner c's release guard: its contact's force argument while MuJoCo holds it, else minus
        its height."""
        corners, _, push = self.corner_state(x)
        return push[c] if c in push else -float(corners[c, 2])


def cube_step_function(cube: Any, timeconst: float, dt: float, qpos: Any, engine: str = "mujoco",
                       option: Optional[Dict[str, str]] = None) -> Tuple[Any, Any]:
    """The cube's MJCF as a :class:`ferromotion.StepFunction` with one guard pair per corner (16
    guards: entry, release per corner) and the step object: MuJoCo's ``mj_step`` (``engine=
    "mujoco"``) or MuJoCo Warp's (``"mujoco_warp"``: batched, float32 declared, each corner's
    entry MuJoCo Warp's own contact distance where its collision makes one). ``option``: attributes
    of the MJCF's ``<option>`` (:func:`cube_mjcf`)."""
    from .. import StepFunction
    from ._mujoco_model import MuJoCoModelStep

    xml = cube_mjcf(cube, timeconst, dt, option=option)
    if engine == "mujoco":
        class CubeStep(_Corners, MuJoCoModelStep):
            pass

        box = CubeStep(xml, qpos_ref=qpos)
        guards = [g for c in range(8) for g in (functools.partial(box.corner_entry, c),
                                               functools.partial(box.corner_release, c))]
        return StepFunction(box.step, guards=guards, resets=[None] * 16, name="mujoco cube, a guard pair per corner"), box
    if engine != "mujoco_warp":
        raise ValueError(f"engine: 'mujoco' or 'mujoco_warp', got {engine!r}")
    from ._mujoco_warp import MuJoCoWarpStep

    class CubeWarpStep(_Corners, MuJoCoWarpStep):
        _table: Optional[Tuple[bytes, np.ndarray]] = None

        def corner_guards(self, X: Any) -> np.ndarray:
            """(m, 16): per row, each corner's entry (MuJoCo Warp's own float32 contact distance at
            that corner where its collision makes one, <= 0; else MuJoCo's height kept positive)
            and release (MuJoCo's, :meth:`corner_release`). The last batch is remembered: the
            driver asks the 16 guards of one batch in turn."""
            X = np.asarray(X, dtype=float).reshape(-1, self.dim)
            key = X.tobytes()
            if self._table is not None and self._table[0] == key:
                return self._table[1]
            out = np.empty((len(X), 16))
            for r, (x, found) in enumerate(zip(X, self.contacts(X))):
                corners, _, _ = self.corner_state(x)
                for c in range(8):
                    near = [dist for _, _, dist, pos in found if corner_at(corners, pos) == c]
                    out[r, 2 * c] = min(min(near), 0.0) if near else max(float(corners[c, 2]), _TINY)
                    out[r, 2 * c + 1] = self.corner_release(c, x)
            self._table = (key, out)
            return out

        def guard_column(self, i: int, X: Any) -> np.ndarray:
            return self.corner_guards(X)[:, i]

    wbox = CubeWarpStep(xml, qpos_ref=qpos)
    rows = [functools.partial(wbox.guard_column, i) for i in range(16)]
    return StepFunction(wbox.step_rows, guards=rows, resets=[None] * 16, batch=True, precision="float32",
                        name="mujoco_warp cube, a guard pair per corner"), wbox


def horizon_fixture(cube: Any, x0: Sequence[float], t_final: float) -> Dict[str, Any]:
    """The shipped ``tumbling_cube`` fixture document moved to horizon ``t_final`` (its exact
    answer recomputed there by the core), for judging an engine after each strike."""
    from .conformance import fixtures

    doc = copy.deepcopy(fixtures()["tumbling_cube"])
    sol = cube.solve(list(x0), t_final)
    doc["name"] = f"tumbling_cube@{t_final:g}"
    doc["initial_state"] = [float(v) for v in x0]
    doc["t_final"] = float(t_final)
    doc["system"]["parameters"] = {k: [float(getattr(cube, k))] for k in ("half_side", "mass", "restitution", "gravity")}
    doc["exact"] = {"state": sol.state.tolist(), "jacobian": sol.jacobian.tolist(),
                    "impacts": [i["t"] for i in sol.impacts], "outcome": "differentiable"}
    return doc


@dataclasses.dataclass(frozen=True)
class CubeRow:
    """One (engine, route, stiffness, horizon): the engine's x(T) and J judged against the exact
    ones by the core (``fm.conformance``): state and gradient errors, the key entry
    dv_z(T)/dc_z(0) and its verdict, and the share of J's large entries (|J*| ≥ 10% of max|J*|)
    whose sign the engine gets right."""

    engine: str
    route: str
    #: The contact's setting: MuJoCo's ``timeconst`` (s) for MuJoCo, MJX and MuJoCo Warp; the
    #: stiffness k (N/m) for Newton and Drake (``_cube_force``).
    timeconst: float
    dt: float
    horizon: float
    strikes: int
    state_error: float
    gradient_error: Optional[float]
    key: float
    key_exact: Optional[float]
    verdict: str
    large_signs_right: float
    wall_s: float
    #: The driver's rows only: events located, J (cube tangent coordinates), the probe and
    #: tolerances used.
    events: Optional[int] = None
    jacobian: Optional[List[List[float]]] = None
    resolution: Optional[Dict[str, float]] = None
    #: Newton's and Drake's rows: the restitution the engine realised at each strike, and its law's.
    note: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


def judge(engine: str, route: str, timeconst: float, dt: float, doc: Dict[str, Any], x: Any, jac: Any,
          wall: float) -> CubeRow:
    """A row: the core's verdict on (x, J) against ``doc``, with the large entries' signs."""
    from .conformance import conformance

    c = conformance(doc, x, jac)
    exact = np.asarray(doc["exact"]["jacobian"])
    big = np.abs(exact) >= 0.1 * np.abs(exact).max()
    signs = float(np.mean(np.sign(np.asarray(jac)[big]) == np.sign(exact[big])))
    return CubeRow(engine=engine, route=route, timeconst=float(timeconst), dt=float(dt), horizon=float(doc["t_final"]),
                   strikes=len(doc["exact"]["impacts"]), state_error=c.state_error, gradient_error=c.gradient_error,
                   key=c.key, key_exact=c.key_exact, verdict=c.verdict, large_signs_right=signs, wall_s=wall)


def refused(engine: str, route: str, timeconst: float, dt: float, doc: Dict[str, Any], error: Exception,
            wall: float) -> CubeRow:
    """A row whose route refused: no numbers, the refusal's type and message as the verdict."""
    nan = float("nan")
    return CubeRow(engine=engine, route=route, timeconst=float(timeconst), dt=float(dt), horizon=float(doc["t_final"]),
                   strikes=len(doc["exact"]["impacts"]), state_error=nan, gradient_error=nan, key=nan,
                   key_exact=float(np.asarray(doc["exact"]["jacobian"])[tuple(doc["key_entry"])]),
                   verdict=f"refused: {type(error).__name__}: {str(error).split(';')[0]}", large_signs_right=nan,
                   wall_s=wall)


def mujoco_rows(cube: Any, x0: Sequence[float], timeconst: float, dt: float,
                horizons: Sequence[float] = HORIZONS, driver_dt: Optional[float] = None,
                h: float = 1e-6) -> List[CubeRow]:
    """MuJoCo (C) on the cube: central differences of its own map (probe h; 1e-6: what
    ``mjd_transitionFD`` chained over the steps gives; 1e-3: MuJoCo Warp's probe, a secant
    across the contact) and, with ``driver_dt``, the black-box driver through ``mj_step`` at
    that step (:func:`driver_row`)."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(cube_mjcf(cube, timeconst, dt))
    docs = {t: horizon_fixture(cube, x0, t) for t in horizons}
    start = time.perf_counter()
    runs = [mujoco_rollout(model, x, horizons) for x in probe_starts(x0, h)]
    wall = (time.perf_counter() - start) / len(horizons)
    out = []
    for t_final in horizons:
        x, jac = jacobian_from([r[t_final] for r in runs], h)
        out.append(judge("mujoco", f"own map, differences h = {h:g}", timeconst, dt, docs[t_final], x, jac, wall))
        if driver_dt is not None:
            out.append(driver_row(cube, x0, timeconst, driver_dt, docs[t_final], "mujoco"))
    return out


def driver_row(cube: Any, x0: Sequence[float], timeconst: float, dt: float, doc: Dict[str, Any],
               engine: str = "mujoco", halve_dt: bool = False, option: Optional[Dict[str, str]] = None) -> CubeRow:
    """The black-box driver through the engine's step (``mj_step``, or MuJoCo Warp's float32
    step), a guard pair per corner (:func:`cube_step_function`), from x0 to the horizon of
    ``doc``: J carried to the cube's tangent coordinates and judged by the core; a refusal is the
    row."""
    from .. import FerroError, hybrid_jacobian

    qpos, qvel = to_mujoco(x0)
    sys, box = cube_step_function(cube, timeconst, dt, qpos, engine, option)
    route = "black-box driver on " + ("mj_step" if engine == "mujoco" else "mujoco_warp.step (float32)")
    if option:
        route += " (" + ", ".join(f"{k} {v}" for k, v in option.items()) + ")"
    start = time.perf_counter()
    try:
        s = hybrid_jacobian(sys, box.state_of(qpos, qvel), 0.0, float(doc["t_final"]), dt=dt, halve_dt=halve_dt,
                            progress=False)
    except FerroError as e:  # the driver's typed refusal is the row
        return refused(engine, route, timeconst, dt, doc, e, time.perf_counter() - start)
    x_end = from_mujoco(box.qpos(s.x), s.x[6:12])
    jac = to_cube_tangent(box.tangent_at_end(s.jacobian, s.x), x0, x_end)
    row = judge(engine, route, timeconst, dt, doc, x_end, jac, time.perf_counter() - start)
    return dataclasses.replace(row, events=len(s.events), jacobian=jac.tolist(), resolution=s.resolution)


def warp_rows(cube: Any, x0: Sequence[float], timeconst: float, dt: float,
              horizons: Sequence[float] = HORIZONS, h: float = 1e-3,
              driver_dt: Optional[float] = None) -> List[CubeRow]:
    """MuJoCo Warp (CPU, float32) on the cube: central differences of its own float32 loop, the
    25 probe runs as 25 worlds of one loop (probe h = 1e-3, far above float32's rounding); it
    has no gradient of its own. With ``driver_dt``, the black-box driver through its float32
    step at that step with the elliptic cone (:data:`WARP_OPTION`; :func:`driver_row`): the gradient
    it lacks."""
    from ._mujoco_warp import MuJoCoWarpStep

    box = MuJoCoWarpStep(cube_mjcf(cube, timeconst, dt))
    docs = {t: horizon_fixture(cube, x0, t) for t in horizons}
    start = time.perf_counter()
    ends = warp_rollouts(box, probe_starts(x0, h), horizons)
    wall = (time.perf_counter() - start) / len(horizons)
    out = []
    for t_final in horizons:
        x, jac = jacobian_from(ends[t_final], h)
        out.append(judge("mujoco_warp", f"own f32 map, differences h = {h:g}", timeconst, dt, docs[t_final], x, jac,
                         wall))
        if driver_dt is not None:
            out.append(driver_row(cube, x0, timeconst, driver_dt, docs[t_final], "mujoco_warp", option=WARP_OPTION))
    return out


def table(rows: Sequence[CubeRow]) -> str:
    """The rows as the docs print them (setting: timeconst s for the MuJoCo family, k N/m for Newton
    and Drake)."""
    lines = [f"{'engine':<12} {'route':<34} {'setting':>9} {'dt':>7} {'T':>5} {'hits':>4} {'state err':>9} "
             f"{'grad err':>9} {'key':>10} {'exact key':>9} {'signs':>5} {'wall s':>6}  verdict"]
    for r in rows:
        lines.append(f"{r.engine:<12} {r.route:<34} {r.timeconst:9.1e} {r.dt:7.0e} {r.horizon:5.2f} {r.strikes:4d} "
                     f"{r.state_error:9.2e} {r.gradient_error:9.2e} {r.key:10.4g} {r.key_exact:9.4g} "
                     f"{r.large_signs_right:5.2f} {r.wall_s:6.1f}  {r.verdict}" + (f"  [{r.note}]" if r.note else ""))
    return "\n".join(lines)


def mjx_rows(cube: Any, x0: Sequence[float], timeconst: float, dt: float,
             horizons: Sequence[float] = HORIZONS) -> List[CubeRow]:
    """MJX (MuJoCo in JAX, float64) on the cube: its own gradient, ``jax.jacfwd`` through the
    ``mjx.step`` loop, taken in MuJoCo's tangent coordinates (a body-frame rotation right-
    multiplied on the quaternion, qvel) and carried to the cube's by :func:`to_cube_tangent`.
    The quaternion's exponential and logarithm are written to first order (exact in value
    and first derivative at the nominal run, which is all ``jacfwd`` at zero reads)."""
    import jax
    import mujoco
    from mujoco import mjx

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    mx = mjx.put_model(mujoco.MjModel.from_xml_string(cube_mjcf(cube, timeconst, dt)))
    d0 = mjx.make_data(mx)
    qpos0, qvel0 = (jnp.asarray(v) for v in to_mujoco(x0))

    def qmul(a: Any, b: Any) -> Any:
        return jnp.array([a[0] * b[0] - a[1:] @ b[1:], *(a[0] * b[1:] + b[0] * a[1:] + jnp.cross(a[1:], b[1:]))])

    def run(delta: Any, n: int) -> Any:
        turn = jnp.concatenate([jnp.ones(1), delta[3:6] / 2])
        q = qmul(qpos0[3:7], turn / jnp.linalg.norm(turn))
        d = d0.replace(qpos=jnp.concatenate([qpos0[:3] + delta[:3], q]), qvel=qvel0 + delta[6:12])
        d = jax.lax.fori_loop(0, n, lambda i, d: mjx.step(mx, d), d)
        return d.qpos, d.qvel

    docs = {t: horizon_fixture(cube, x0, t) for t in horizons}

    def tangent(delta: Any, n: Any, q_end: Any) -> Any:
        qpos, qvel = run(delta, n)
        rel = qmul(jnp.array([q_end[0], *(-q_end[1:4])]), qpos[3:7])
        return jnp.concatenate([qpos[:3], 2.0 * rel[1:] * jnp.sign(rel[0]), qvel])

    nominal = jax.jit(lambda n: run(jnp.zeros(12), n))
    jacobian = jax.jit(jax.jacfwd(tangent))
    out = []
    for t_final in horizons:
        n = jnp.asarray(round(t_final / dt))
        start = time.perf_counter()
        qpos_t, qvel_t = nominal(n)
        jac_mj = np.asarray(jacobian(jnp.zeros(12), n, qpos_t[3:7]))
        x_end = from_mujoco(np.asarray(qpos_t), np.asarray(qvel_t))
        jac = to_cube_tangent(jac_mj, x0, x_end)
        out.append(judge("mjx", "own gradient, jax.jacfwd", timeconst, dt, docs[t_final], x_end, jac,
                         time.perf_counter() - start))
    return out
