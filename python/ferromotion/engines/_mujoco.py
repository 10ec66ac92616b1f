"""The drop in MuJoCo (native C) and in MJX (MuJoCo in JAX): one MJCF model, two engines.

The model: a sphere of radius 0.1 m on a slide joint along z above a plane, so that the joint
coordinate is the drop's height y (the gap between sphere and plane) and the joint velocity is
v. Mass m, gravity g, ``integrator="Euler"`` (MuJoCo's Euler is semi-implicit: v first, then q
with the new v, as our fixed route) at ``timestep = dt``; ``condim=1`` (frictionless normal
contact), the same ``solref``/``solimp`` on both geoms (MuJoCo mixes the two geoms' values).

Contact law, mapped to ours (push-only ``F = max(0, -k*y - c*v)`` for y < 0, c = 2*zeta*sqrt(k*m)):
MuJoCo's soft constraint makes the contact acceleration ``a = (1-d)*a0 + d*aref`` while the
constraint is active, with ``a0 = -g`` the unconstrained acceleration, impedance d (from
``solimp``) and ``aref = -B*v - K*d*y``. With a *negative* ``solref = (-k/m, -c/m)`` MuJoCo takes
``K = k/(m*dmax^2)`` and ``B = c/(m*dmax)`` directly, and with ``solimp = (d, d, ...)`` the
impedance is the constant ``d = dmax`` (0.9999 here, MuJoCo's largest), so that

    a = -g + (max(0, -k*y - c*v + d*m*g)) / m        (y < 0; a = -g otherwise).

That is our law plus a constant ``d*m*g`` (the constraint also carries the body's weight while
active, and lets go when the spring-damper force falls to ``-d*m*g`` rather than 0). It does
not map exactly onto ours: the equilibrium penetration is 0 instead of m*g/k (1e-5 m at
k = 1e6) and the release comes slightly later. So the blame split against our ``flow`` is not
made for MuJoCo or MJX; their dt refinement is measured on the engine itself. A positive
``solref = (timeconst, dampratio)`` gives ``K = 1/(dmax^2*timeconst^2*dampratio^2)``,
``B = 2/(dmax*timeconst)``: k = 1/(dmax*timeconst^2*dampratio^2)*m and damping ratio
``dampratio`` in our terms, with the same extra ``d*m*g``.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Sequence, Tuple

import numpy as np

from ._adapter import AdapterBase, rows

#: Constant impedance: MuJoCo's largest d (its soft constraint is then as hard as it gets).
IMPEDANCE = 0.9999
RADIUS = 0.1

_XML = """
<mujoco model="ferromotion drop">
  <option timestep="{dt!r}" integrator="Euler" gravity="0 0 {minus_g!r}"/>
  <default><geom condim="1" solref="{solref}" solimp="{solimp}"/></default>
  <worldbody>
    <geom name="ground" type="plane" size="5 5 0.1"/>
    <body name="ball" pos="0 0 {radius!r}">
      <joint name="y" type="slide" axis="0 0 1"/>
      <geom name="ball" type="sphere" size="{radius!r}" mass="{mass!r}"/>
    </body>
  </worldbody>
</mujoco>
"""


_SLOPE_XML = """
<mujoco model="ferromotion slope">
  <compiler angle="radian"/>
  <option timestep="{dt!r}" integrator="Euler" gravity="0 0 {minus_g!r}"/>
  <default><geom condim="1" solref="{solref}" solimp="{solimp}"/></default>
  <worldbody>
    <geom name="slope" type="plane" size="20 20 0.1" euler="0 {minus_angle!r} 0"/>
    <body name="ball">
      <joint name="x" type="slide" axis="1 0 0"/>
      <joint name="z" type="slide" axis="0 0 1"/>
      <geom name="ball" type="sphere" size="{radius!r}" mass="{mass!r}"/>
    </body>
  </worldbody>
</mujoco>
"""


def slope_mjcf(fixture: Any, k: float, dt: float) -> str:
    """The slope fixture's MJCF: the plane through the origin tilted about y by the fixture's
    angle (normal n = (-sin, 0, cos)), the ball on two slide joints (x, z) at its centre."""
    p = fixture["parameters"]
    ref = solref_for(k, p["zeta"], p["mass"])
    imp = (IMPEDANCE, IMPEDANCE, 0.001, 0.5, 2.0)
    return _SLOPE_XML.format(dt=float(dt), minus_g=-float(p["gravity"]), radius=RADIUS, mass=float(p["mass"]),
                             minus_angle=-float(p["angle"]), solref=" ".join(repr(float(v)) for v in ref),
                             solimp=" ".join(repr(float(v)) for v in imp))


def slope_qv(fixture: Any, x0: Any) -> np.ndarray:
    """Contact-point state (p_x, p_z, v_x, v_z) -> the joints' (q_x, q_z, v_x, v_z) (centre = p + r*n)."""
    a = float(fixture["parameters"]["angle"])
    return np.array([x0[0] - RADIUS * np.sin(a), x0[1] + RADIUS * np.cos(a), x0[2], x0[3]], dtype=float)


def slope_x(fixture: Any, qv: Any) -> np.ndarray:
    a = float(fixture["parameters"]["angle"])
    return np.array([qv[0] + RADIUS * np.sin(a), qv[1] - RADIUS * np.cos(a), qv[2], qv[3]], dtype=float)


def fixture_steps(fixture: Any, dt: float) -> int:
    n = round(fixture["t_final"] / dt)
    if n < 1 or abs(n * dt - fixture["t_final"]) > 1e-9 * fixture["t_final"]:
        raise ValueError(f"dt = {dt:g} s must divide T = {fixture['t_final']:g} s")
    return n


def solref_for(k: float, zeta: float, mass: float) -> Tuple[float, float]:
    """MuJoCo's direct (negative) ``solref`` for our stiffness k (N/m) and damping ratio zeta."""
    c = 2.0 * zeta * np.sqrt(k * mass)
    return (-k / mass, -c / mass)


def mjcf(drop: Any, k: float, dt: float, solref: Any = None, solimp: Any = None) -> str:
    """The drop's MJCF: stiffness k mapped through a negative solref unless ``solref`` is given."""
    ref = solref_for(k, drop.zeta, drop.mass) if solref is None else tuple(solref)
    imp = (IMPEDANCE, IMPEDANCE, 0.001, 0.5, 2.0) if solimp is None else tuple(solimp)
    return _XML.format(dt=float(dt), minus_g=-float(drop.gravity), radius=RADIUS, mass=float(drop.mass),
                       solref=" ".join(repr(float(v)) for v in ref), solimp=" ".join(repr(float(v)) for v in imp))


def steps(drop: Any, dt: float) -> int:
    n = round(drop.t_final / dt)
    if n < 1 or abs(n * dt - drop.t_final) > 1e-9 * drop.t_final:
        raise ValueError(f"dt = {dt:g} s must divide T = {drop.t_final:g} s")
    return n


class MuJoCo(AdapterBase):
    """Native MuJoCo: ``mj_step`` rollouts; its gradient is ``mjd_transitionFD`` chained."""

    name = "mujoco"
    gradient_route = ("mjd_transitionFD (centered, eps 1e-6) step Jacobians chained over the rollout: "
                      "MuJoCo's own derivative of its step")
    law = __doc__ or ""
    law_maps_onto_ours = False
    law_differs = "MuJoCo's soft constraint adds d*m*g while in contact; see ferromotion.engines._mujoco"
    batch_route = "mujoco.rollout: a model per row, a thread per core"

    def __init__(self) -> None:
        import mujoco

        self._mj = mujoco
        self.version = mujoco.__version__
        self._models: Dict[Tuple[float, ...], Any] = {}

    def model(self, drop: Any, k: float, dt: float) -> Any:
        key = (float(k), float(dt), float(drop.mass), float(drop.zeta), float(drop.gravity))
        if key not in self._models:
            if len(self._models) >= 64:  # a batch holds a model per stiffness; keep the cache bounded
                self._models = {}
            self._models[key] = self._mj.MjModel.from_xml_string(mjcf(drop, k, dt))
        return self._models[key]

    def _data(self, m: Any, x0: Any) -> Any:
        d = self._mj.MjData(m)
        d.qpos[0], d.qvel[0] = float(x0[0]), float(x0[1])
        return d

    def state(self, drop: Any, k: float, dt: float, x0: Any) -> np.ndarray:
        """[y(T), v(T)] of a native rollout (MuJoCo's C rollout loop)."""
        return self.states(drop, [k], dt, np.asarray(x0, dtype=float)[None, :])[0]

    def states(self, drop: Any, ks: Sequence[float], dt: float, X: Any) -> np.ndarray:
        """(m, 2): the rows as one ``mujoco.rollout`` call, a model per row and a thread per core
        (each row is its own ``mj_step`` loop: the same numbers as one row at a time, bit for bit)."""
        from mujoco import rollout

        k, x = rows(ks, X)
        spec = self._mj.mjtState.mjSTATE_FULLPHYSICS
        models = [self.model(drop, float(ki), dt) for ki in k]
        nstate = self._mj.mj_stateSize(models[0], spec)
        s0 = np.empty((k.size, nstate))
        for i, (m, xi) in enumerate(zip(models, x)):
            self._mj.mj_getState(m, self._data(m, xi), s0[i], spec)
        n = steps(drop, dt)
        nq = models[0].nq
        out = np.empty((k.size, 2))
        chunk = max(1, int(2e7 // (n * nstate)))  # the rollout keeps every step's state: bound its memory
        threads = [self._mj.MjData(models[0]) for _ in range(min(os.cpu_count() or 1, k.size))]
        for a in range(0, k.size, chunk):
            b = min(k.size, a + chunk)
            traj, _ = rollout.rollout(models[a:b], threads[:b - a], s0[a:b], nstep=n)
            # FULLPHYSICS = [time, qpos, qvel, act, ...]
            out[a:b, 0], out[a:b, 1] = traj[:, -1, 1], traj[:, -1, 1 + nq]
        return out

    def jacobian(self, drop: Any, k: float, dt: float, x0: Any) -> Tuple[np.ndarray, np.ndarray]:
        """(x(T), dx(T)/dx0) with the step Jacobians of ``mjd_transitionFD`` chained."""
        m = self.model(drop, k, dt)
        d = self._data(m, x0)
        a = np.zeros((2 * m.nv + m.na, 2 * m.nv + m.na))
        jac = np.eye(2)
        for _ in range(steps(drop, dt)):
            self._mj.mjd_transitionFD(m, d, 1e-6, True, a, None, None, None)
            jac = a @ jac
            self._mj.mj_step(m, d)
        return np.array([d.qpos[0], d.qvel[0]]), jac


    def fixture_slope(self, fixture: Any, k: float, dt: float, x0: Any = None, jac: bool = True) -> Tuple[np.ndarray, Any]:
        """(x(T), J) of the slope fixture, J from ``mjd_transitionFD`` chained (4x4)."""
        m = self._mj.MjModel.from_xml_string(slope_mjcf(fixture, k, dt))
        d = self._mj.MjData(m)
        qv = slope_qv(fixture, fixture["initial_state"] if x0 is None else x0)
        d.qpos[:], d.qvel[:] = qv[:2], qv[2:]
        a = np.zeros((4, 4))
        j = np.eye(4)
        for _ in range(fixture_steps(fixture, dt)):
            if jac:
                self._mj.mjd_transitionFD(m, d, 1e-6, True, a, None, None, None)
                j = a @ j
            self._mj.mj_step(m, d)
        return slope_x(fixture, np.concatenate([d.qpos, d.qvel])), (j if jac else None)


    # -- the 2-D contact fixtures (V-groove, cylinder; ferromotion.engines._planar) ----------------
    def _planar(self, fixture: Any, k: float, dt: float, x0: Any = None, jac: bool = True) -> Tuple[np.ndarray, Any]:
        """(x(T), J) of a V-groove or cylinder fixture, J from ``mjd_transitionFD`` chained (4x4):
        the joints' (q_x, q_z, v_x, v_z) are the fixture's (p_x, p_y, v_x, v_y)."""
        from . import _planar

        lw = _planar.law(fixture)
        xml = _planar.mjcf(fixture, dt, solref_for(k, lw["zeta"], lw["mass"]),
                           (IMPEDANCE, IMPEDANCE, 0.001, 0.5, 2.0))
        m = self._mj.MjModel.from_xml_string(xml)
        d = self._mj.MjData(m)
        qv = np.asarray(fixture["initial_state"] if x0 is None else x0, dtype=float)
        d.qpos[:], d.qvel[:] = qv[:2], qv[2:]
        a = np.zeros((4, 4))
        j = np.eye(4)
        for _ in range(_planar.steps(fixture, dt)):
            if jac:
                self._mj.mjd_transitionFD(m, d, 1e-6, True, a, None, None, None)
                j = a @ j
            self._mj.mj_step(m, d)
        return np.concatenate([d.qpos, d.qvel]), (j if jac else None)

    fixture_v_groove_90 = fixture_v_groove_100 = fixture_v_groove_off_axis = fixture_cylinder = _planar


class MJX(AdapterBase):
    """MJX: ``mjx.step`` in a JAX loop, x64; its gradient is ``jax.jacfwd`` through the loop.

    Reverse mode (``jax.grad``) fails on the constraint solver's ``while_loop``; forward mode
    differentiates the iterations the solver actually ran, so it is the derivative of the
    computed map. The step count is a traced argument, so one compilation serves every k and dt.
    """

    name = "mjx"
    gradient_route = "jax.jacfwd through mjx.step in a lax.fori_loop (x64)"
    law = MuJoCo.law
    law_maps_onto_ours = False
    law_differs = MuJoCo.law_differs
    batch_route = "jax.vmap over rows (each row's solref in the model)"

    def __init__(self) -> None:
        import jax
        import mujoco
        from mujoco import mjx

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        self._mj, self._mjx, self._jax, self._jnp = mujoco, mjx, jax, jnp
        self.version = f"mujoco-mjx {mujoco.__version__}, jax {jax.__version__}"

        def run(mx: Any, d0: Any, x: Any, n: Any) -> Any:
            nq = d0.qpos.shape[0]
            d = d0.replace(qpos=x[:nq], qvel=x[nq:])
            d = jax.lax.fori_loop(0, n, lambda i, d: mjx.step(mx, d), d)
            return jnp.concatenate([d.qpos, d.qvel])

        def run_and_jac(mx: Any, d0: Any, x: Any, n: Any) -> Any:
            def f(x: Any) -> Any:
                out = run(mx, d0, x, n)
                return out, out
            jac, out = jax.jacfwd(f, has_aux=True)(x)
            return out, jac

        def with_solref(mx: Any, solref: Any) -> Any:
            return mx.replace(geom_solref=jnp.broadcast_to(solref, mx.geom_solref.shape))

        def run_rows(mx: Any, d0: Any, solref: Any, xs: Any, n: Any) -> Any:
            return jax.vmap(lambda sr, x: run(with_solref(mx, sr), d0, x, n))(solref, xs)

        def run_and_jac_rows(mx: Any, d0: Any, solref: Any, xs: Any, n: Any) -> Any:
            return jax.vmap(lambda sr, x: run_and_jac(with_solref(mx, sr), d0, x, n))(solref, xs)

        self._run = jax.jit(run)
        self._run_and_jac = jax.jit(run_and_jac)
        self._run_rows = jax.jit(run_rows)
        self._run_and_jac_rows = jax.jit(run_and_jac_rows)
        self._widths: Dict[str, int] = {}
        self._models: Dict[Tuple[Any, ...], Any] = {}

    def _model(self, drop: Any, k: float, dt: float) -> Any:
        key = (float(k), float(dt))
        if key not in self._models:
            m = self._mj.MjModel.from_xml_string(mjcf(drop, k, dt))
            mx = self._mjx.put_model(m)
            self._models = {key: (mx, self._mjx.make_data(mx))}
        return self._models[key]

    def fixture_slope(self, fixture: Any, k: float, dt: float, x0: Any = None, jac: bool = True) -> Tuple[np.ndarray, Any]:
        """(x(T), J) of the slope fixture by ``jax.jacfwd`` (4x4)."""
        key = ("slope", float(k), float(dt))
        if key not in self._models:
            mx = self._mjx.put_model(self._mj.MjModel.from_xml_string(slope_mjcf(fixture, k, dt)))
            self._models = {key: (mx, self._mjx.make_data(mx))}
        mx, d0 = self._models[key]
        qv = self._jnp.asarray(slope_qv(fixture, fixture["initial_state"] if x0 is None else x0))
        n = fixture_steps(fixture, dt)
        if not jac:
            return slope_x(fixture, np.asarray(self._run(mx, d0, qv, n))), None
        out, j = self._run_and_jac(mx, d0, qv, n)
        # x = p - r*n(angle) is a shift: J in contact-point coordinates is J in the joints'.
        return slope_x(fixture, np.asarray(out)), np.asarray(j)

    def _planar(self, fixture: Any, k: float, dt: float, x0: Any = None, jac: bool = True) -> Tuple[np.ndarray, Any]:
        """(x(T), J) of a V-groove or cylinder fixture by ``jax.jacfwd`` (4x4); the same MJCF as MuJoCo's."""
        from . import _planar

        key = ("planar", fixture["name"], float(k), float(dt))
        if key not in self._models:
            lw = _planar.law(fixture)
            xml = _planar.mjcf(fixture, dt, solref_for(k, lw["zeta"], lw["mass"]),
                               (IMPEDANCE, IMPEDANCE, 0.001, 0.5, 2.0))
            mx = self._mjx.put_model(self._mj.MjModel.from_xml_string(xml))
            self._models = {key: (mx, self._mjx.make_data(mx))}
        mx, d0 = self._models[key]
        qv = self._jnp.asarray(np.asarray(fixture["initial_state"] if x0 is None else x0, dtype=float))
        n = _planar.steps(fixture, dt)
        if not jac:
            return np.asarray(self._run(mx, d0, qv, n)), None
        out, j = self._run_and_jac(mx, d0, qv, n)
        return np.asarray(out), np.asarray(j)

    fixture_v_groove_90 = fixture_v_groove_100 = fixture_v_groove_off_axis = fixture_cylinder = _planar

    def state(self, drop: Any, k: float, dt: float, x0: Any) -> np.ndarray:
        mx, d0 = self._model(drop, k, dt)
        return np.asarray(self._run(mx, d0, self._jnp.asarray(x0, dtype=float), steps(drop, dt)))

    def jacobian(self, drop: Any, k: float, dt: float, x0: Any) -> Tuple[np.ndarray, np.ndarray]:
        mx, d0 = self._model(drop, k, dt)
        out, jac = self._run_and_jac(mx, d0, self._jnp.asarray(x0, dtype=float), steps(drop, dt))
        return np.asarray(out), np.asarray(jac)

    def _rows(self, drop: Any, ks: Sequence[float], dt: float, X: Any, fn: str) -> Tuple[Any, ...]:
        """One model at dt, each row's solref (the only thing k changes in the MJCF) and x0, the
        rows padded (with copies of the first) up to the most this function has run: each new
        row count is a new XLA compilation (tens of seconds on a loaded CPU), a padded row is not."""
        k, x = rows(ks, X)
        width = max(k.size, self._widths.get(fn, 0))
        self._widths[fn] = width
        k = np.concatenate([k, np.full(width - k.size, k[0])])
        x = np.concatenate([x, np.tile(x[:1], (width - x.shape[0], 1))])
        mx, d0 = self._model(drop, float(k[0]), dt)
        solref = np.array([solref_for(float(ki), drop.zeta, drop.mass) for ki in k])
        return mx, d0, self._jnp.asarray(solref), self._jnp.asarray(x), steps(drop, dt)

    def states(self, drop: Any, ks: Sequence[float], dt: float, X: Any) -> np.ndarray:
        """(m, 2): every row in one ``jax.vmap`` of the step loop (the model's ``geom_solref`` per row)."""
        m = np.asarray(ks).size
        return np.asarray(self._run_rows(*self._rows(drop, ks, dt, X, "states")))[:m]

    def jacobians(self, drop: Any, ks: Sequence[float], dt: float, X: Any) -> Tuple[np.ndarray, np.ndarray]:
        m = np.asarray(ks).size
        out, jac = self._run_and_jac_rows(*self._rows(drop, ks, dt, X, "jacobians"))
        return np.asarray(out)[:m], np.asarray(jac)[:m]
