"""The drop (and the slope) in Newton on NVIDIA Warp: a particle on a plane, ``SolverSemiImplicit``,
gradient by ``wp.Tape`` (float32, CPU).

The model: one particle of mass m and radius ``RADIUS`` above a static plane (the ground, or
the slope's plane through the origin with unit normal n), ``newton.ModelBuilder(gravity=-g)``,
``SolverSemiImplicit`` at the step dt. Contacts are collided once at the start with a wide
gap (as Newton's own ``example_diffsim_ball`` does): for a plane the contact point and the
normal do not change, so the one-shot contact is exact, and the frozen normal Newton's
gradients use costs nothing here (it would on a curved surface).

Contact law (``kernels_contact.eval_particle_body_contact``, particle against a shape), with
d = n.(p - plane) - r the signed gap and d' = n.v its rate, ke and kd the averages of the
particle's (``model.soft_contact_ke/kd``) and the shape's (``ShapeConfig.ke/kd``), both set here
to ke = k and kd = c = 2*zeta*sqrt(k*m), kf = mu = 0 (frictionless), adhesion 0::

    F = n * (-ke*d - kd*min(d', 0))     for d <= 0; 0 otherwise

Against ours (``F = max(0, -k*d - c*d')`` for d < 0): the same while the particle approaches
(d' < 0); while it separates Newton drops the damping term (-kd*min(d', 0) = 0) instead of
letting it pull, and so never clamps. Less energy is lost on the way out: the stiff-limit
restitution is ``newton_restitution(zeta)`` = sqrt(ours): 0.795 instead of 0.632 at zeta = 0.1606.
So the law does not map exactly; the blame split is not made, and every number is compared
with the rigid answer at Newton's own restitution as well as ours (docs/engines.md).

Integrator: Newton's semi-implicit Euler (v += dt*(F/m + g), then p += dt*v), as our fixed
route. Precision: Warp's particle arrays are float32; y0 = 1 m is stored to ~6e-8 m, and the
map x0 -> x(T) carries float32 noise, so the central-difference probe of the engine's own map
is ``FD_EPS`` = 1e-5 (not the float64 engines' 1e-6). Newton's force is also *discontinuous* at
touchdown: the first contact step already feels -kd*min(d', 0) = c*|v|, not ~0 as ours does.
So its map jumps (ours only kinks) wherever the first contact step moves on the time grid,
every |v|*dt in y0 (4.4e-4 m at the drop's impact): a central difference straddling one is not
a derivative (at 1e-4 on the 5 cm drop it reads dv/dy0 = +17.3 where the derivative is -7.8).
"""

from __future__ import annotations

import copy
import math
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from ._adapter import AdapterBase, rows
from ._mujoco import steps

RADIUS = 0.1
#: Central-difference probe of Newton's float32 map (m, m/s): above its float32 noise, and well
#: below the spacing |v|*dt of the jumps its map has (see the module docs).
FD_EPS = 1e-5


def newton_restitution(zeta: float) -> float:
    """Stiff-limit restitution of Newton's law: damped on the way in, undamped on the way out.

    The approach is our damped half-oscillation up to the deepest point (omega*s*t = acos(zeta),
    s = sqrt(1 - zeta^2)); the release is undamped, so the exit speed is omega times that depth:
    e = exp(-zeta*acos(zeta)/s), the square root of ours (``fm.limit_restitution``,
    exp(-2*zeta*acos(zeta)/s)): 0.795 against 0.632 at zeta = 0.1606.
    """
    s = math.sqrt(1.0 - zeta * zeta)
    return math.exp(-zeta * math.acos(zeta) / s)


class Newton(AdapterBase):
    """Newton 1.x: a particle on a plane, ``SolverSemiImplicit``; gradient by ``wp.Tape``."""

    name = "newton"
    gradient_route = "wp.Tape (reverse mode, float32) through SolverSemiImplicit.step over the rollout"
    law = __doc__ or ""
    law_maps_onto_ours = False
    law_differs = ("Newton's particle contact drops the damping while the particle separates: "
                   "stiff-limit restitution sqrt(ours); see ferromotion.engines._newton")
    fd_eps = FD_EPS
    batch_route = "a world per row in one model (a reverse pass seeds every row)"

    def __init__(self) -> None:
        import warp as wp

        wp.config.log_level = wp.LOG_WARNING  # no banner or module-load lines in the audit's table
        wp.init()
        import newton

        self._wp, self._newton = wp, newton
        self.version = f"newton {newton.__version__}, warp-lang {wp.__version__} (float32, {wp.get_device()})"
        self._models: Dict[Tuple[Any, ...], Any] = {}

    # -- the model --------------------------------------------------------------------------
    def _build(self, k: float, zeta: float, mass: float, gravity: float, normal: Tuple[float, float]) -> Any:
        key = (float(k), float(zeta), float(mass), float(gravity), normal)
        if key in self._models:
            return self._models[key]
        wp, newton = self._wp, self._newton
        c = 2.0 * zeta * math.sqrt(k * mass)
        b = newton.ModelBuilder(up_axis=newton.Axis.Z, gravity=(0.0, 0.0, -float(gravity)))
        b.add_particle(pos=wp.vec3(0.0, 0.0, 10.0), vel=wp.vec3(0.0, 0.0, 0.0), mass=float(mass), radius=RADIUS)
        cfg = newton.ModelBuilder.ShapeConfig(ke=float(k), kd=float(c), kf=0.0, mu=0.0)
        nx, nz = normal
        b.add_shape_plane(plane=(nx, 0.0, nz, 0.0), width=0.0, length=0.0, cfg=cfg)
        model = b.finalize(device="cpu", requires_grad=True)
        model.soft_contact_ke = float(k)
        model.soft_contact_kd = float(c)
        model.soft_contact_kf = 0.0
        model.soft_contact_mu = 0.0
        model.particle_adhesion = 0.0
        model.particle_grid = None  # one particle: no particle-particle contact kernel
        solver = newton.solvers.SolverSemiImplicit(model)
        pipeline = newton.CollisionPipeline(model, broad_phase="explicit", soft_contact_gap=100.0, requires_grad=True)
        contacts = pipeline.contacts()
        state = model.state()
        pipeline.collide(state, contacts)
        self._models = {key: (model, solver, contacts)}
        return self._models[key]

    def _tape(self) -> Any:
        """A ``wp.Tape`` that keeps no scopes. Newton's step opens a ``wp.ScopedTimer`` (inactive),
        which records a scope on the active tape; ``Tape.record_scope_end`` walks every scope
        recorded so far, so a rollout of n steps costs O(n^2) there (most of an 80,000-step tape's
        time). Scopes only label the tape's visualisation: the launches, and so every number, are
        the same."""
        wp = self._wp

        class _Tape(wp.Tape):  # type: ignore[misc, name-defined]
            def record_scope_begin(self, scope_name: Any, metadata: Any = None) -> None:
                pass

            def record_scope_end(self, remove_scope_if_empty: bool = True) -> None:
                pass

        return _Tape()

    @staticmethod
    def _states(model: Any, n: int, grad: bool) -> List[Any]:
        """The states a rollout of n steps writes: n + 1 for the tape (it keeps every step's), two
        taken in turn without it. Each is ``model.state()``'s: its particle arrays cloned from the
        model's (the rest of ``model.state()``, custom attributes, is empty for particles on a plane
        and costs ~3 ms a state: a shallow copy of the first shares it)."""
        import warp as wp

        first = model.state(requires_grad=grad)
        states = [first]
        for _ in range(n if grad else 1):
            s = copy.copy(first)
            s.particle_q = wp.clone(model.particle_q, requires_grad=grad)
            s.particle_qd = wp.clone(model.particle_qd, requires_grad=grad)
            s.particle_f = wp.zeros_like(model.particle_qd, requires_grad=grad)
            states.append(s)
        return states

    def _initial(self, built: Any, p0: np.ndarray, v0: np.ndarray, n: int, grad: bool) -> List[Any]:
        """The states of a rollout, the first set to (p0, v0) (outside any tape: a recorded
        copy would take the adjoint away from the initial state)."""
        wp = self._wp
        states = self._states(built[0], n, grad)
        states[0].particle_q.assign(wp.array([wp.vec3(*p0)], dtype=wp.vec3))
        states[0].particle_qd.assign(wp.array([wp.vec3(*v0)], dtype=wp.vec3))
        return states

    @staticmethod
    def _rollout(built: Any, states: List[Any], dt: float, n: int) -> Any:
        """n steps through ``states`` (one per step, or two in turn); returns the last."""
        model, solver, contacts = built
        control = model.control()
        m = len(states)
        for i in range(n):
            a, b = (states[i], states[i + 1]) if m > n else (states[i % 2], states[(i + 1) % 2])
            a.clear_forces()
            solver.step(a, b, control, contacts, dt)
        return states[n] if m > n else states[n % 2]

    def _run(self, k: float, zeta: float, mass: float, gravity: float, normal: Tuple[float, float],
             x0: np.ndarray, n: int, dt: float, jac: bool, rows: Tuple[int, ...] = (0, 1, 2, 3)) -> Tuple[np.ndarray, Any]:
        """x0 = (p_x, p_z, v_x, v_z) of the contact point; returns x(T) and, with jac, the
        ``rows`` of J (one reverse pass each; J is 4x4 with every row)."""
        wp = self._wp
        built = self._build(k, zeta, mass, gravity, normal)
        nx, nz = normal
        p0 = np.array([x0[0] + RADIUS * nx, 0.0, x0[1] + RADIUS * nz])
        v0 = np.array([x0[2], 0.0, x0[3]])
        states = self._initial(built, p0, v0, n, grad=jac)
        if not jac:
            return self._x(self._rollout(built, states, dt, n), normal), None
        tape = self._tape()
        with tape:
            self._rollout(built, states, dt, n)
        x = self._x(states[-1], normal)
        out = []
        for comp, arr in [((0, "q"), (2, "q"), (0, "qd"), (2, "qd"))[r] for r in rows]:
            seed_q = np.zeros((1, 3), dtype=np.float32)
            seed_v = np.zeros((1, 3), dtype=np.float32)
            (seed_q if arr == "q" else seed_v)[0, comp] = 1.0
            last = states[-1]
            tape.backward(grads={last.particle_q: wp.array(seed_q, dtype=wp.vec3),
                                 last.particle_qd: wp.array(seed_v, dtype=wp.vec3)})
            gq = states[0].particle_q.grad.numpy()[0].astype(float)
            gv = states[0].particle_qd.grad.numpy()[0].astype(float)
            out.append([gq[0], gq[2], gv[0], gv[2]])
            tape.zero()
        return x, np.array(out)

    @staticmethod
    def _x(state: Any, normal: Tuple[float, float]) -> np.ndarray:
        p = state.particle_q.numpy()[0].astype(float)
        v = state.particle_qd.numpy()[0].astype(float)
        nx, nz = normal
        return np.array([p[0] - RADIUS * nx, p[2] - RADIUS * nz, v[0], v[2]])

    # -- many rows at once: one world per row -------------------------------------------------
    def _build_rows(self, ks: np.ndarray, zeta: float, mass: float, gravity: float,
                    normal: Tuple[float, float]) -> Any:
        """One model with a world per row: its particle and its own plane, the row's k and c on the
        plane as 2k and 2c with the particle's material 0 (Newton averages the two: k and c, the
        same float32 numbers as :meth:`_build`'s k and k), contacts collided once, per world."""
        key = ("rows", tuple(float(k) for k in ks), float(zeta), float(mass), float(gravity), normal)
        if key in self._models:
            return self._models[key]
        wp, newton = self._wp, self._newton
        b = newton.ModelBuilder(up_axis=newton.Axis.Z, gravity=(0.0, 0.0, -float(gravity)))
        nx, nz = normal
        for k in ks:
            c = 2.0 * zeta * math.sqrt(float(k) * mass)
            b.begin_world()
            b.add_particle(pos=wp.vec3(0.0, 0.0, 10.0), vel=wp.vec3(0.0, 0.0, 0.0), mass=float(mass), radius=RADIUS)
            cfg = newton.ModelBuilder.ShapeConfig(ke=2.0 * float(k), kd=2.0 * c, kf=0.0, mu=0.0)
            b.add_shape_plane(plane=(nx, 0.0, nz, 0.0), width=0.0, length=0.0, cfg=cfg)
            b.end_world()
        model = b.finalize(device="cpu", requires_grad=True)
        model.soft_contact_ke = 0.0
        model.soft_contact_kd = 0.0
        model.soft_contact_kf = 0.0
        model.soft_contact_mu = 0.0
        model.particle_adhesion = 0.0
        model.particle_grid = None  # no particle-particle contact kernel
        solver = newton.solvers.SolverSemiImplicit(model)
        pipeline = newton.CollisionPipeline(model, broad_phase="explicit", soft_contact_gap=100.0, requires_grad=True)
        contacts = pipeline.contacts()
        pipeline.collide(model.state(), contacts)
        self._models = {key: (model, solver, contacts)}
        return self._models[key]

    def _run_rows(self, ks: np.ndarray, zeta: float, mass: float, gravity: float, normal: Tuple[float, float],
                  X: np.ndarray, n: int, dt: float, seeds: Any = None) -> Tuple[np.ndarray, Any]:
        """X (m, 4) contact-point states -> x(T) (m, 4); with ``seeds`` (m, 4) one reverse pass
        seeded on each row's x(T) by its row of seeds, and the (m, 4) adjoints at x0: each row
        is its own world, so one pass gives every row its own row of J."""
        wp = self._wp
        built = self._build_rows(ks, zeta, mass, gravity, normal)
        nx, nz = normal
        p0 = np.stack([X[:, 0] + RADIUS * nx, np.zeros(len(X)), X[:, 1] + RADIUS * nz], axis=1)
        v0 = np.stack([X[:, 2], np.zeros(len(X)), X[:, 3]], axis=1)
        states = self._states(built[0], n, seeds is not None)
        states[0].particle_q.assign(wp.array(p0, dtype=wp.vec3))
        states[0].particle_qd.assign(wp.array(v0, dtype=wp.vec3))
        if seeds is None:
            return self._xs(self._rollout(built, states, dt, n), normal), None
        tape = self._tape()
        with tape:
            self._rollout(built, states, dt, n)
        seed_q = np.zeros((len(X), 3), dtype=np.float32)
        seed_v = np.zeros((len(X), 3), dtype=np.float32)
        seed_q[:, 0], seed_q[:, 2], seed_v[:, 0], seed_v[:, 2] = seeds[:, 0], seeds[:, 1], seeds[:, 2], seeds[:, 3]
        last = states[-1]
        tape.backward(grads={last.particle_q: wp.array(seed_q, dtype=wp.vec3),
                             last.particle_qd: wp.array(seed_v, dtype=wp.vec3)})
        gq = states[0].particle_q.grad.numpy().astype(float)
        gv = states[0].particle_qd.grad.numpy().astype(float)
        return self._xs(last, normal), np.stack([gq[:, 0], gq[:, 2], gv[:, 0], gv[:, 2]], axis=1)

    @staticmethod
    def _xs(state: Any, normal: Tuple[float, float]) -> np.ndarray:
        p = state.particle_q.numpy().astype(float)
        v = state.particle_qd.numpy().astype(float)
        nx, nz = normal
        return np.stack([p[:, 0] - RADIUS * nx, p[:, 2] - RADIUS * nz, v[:, 0], v[:, 2]], axis=1)

    def states(self, drop: Any, ks: Sequence[float], dt: float, X: Any) -> np.ndarray:
        """(m, 2): one rollout of a model with a world per row (bit for bit the one-row numbers)."""
        k, x = rows(ks, X)
        X4 = np.stack([np.zeros(k.size), x[:, 0], np.zeros(k.size), x[:, 1]], axis=1)
        out, _ = self._run_rows(k, drop.zeta, drop.mass, drop.gravity, (0.0, 1.0), X4, steps(drop, dt), dt)
        return out[:, [1, 3]]

    def jacobians(self, drop: Any, ks: Sequence[float], dt: float, X: Any) -> Tuple[np.ndarray, np.ndarray]:
        """Each row twice in one taped rollout (a world each), seeded on y(T) in the first copy and
        v(T) in the second: one reverse pass gives every J, where one row alone takes two."""
        k, x = rows(ks, X)
        m = k.size
        X4 = np.stack([np.zeros(m), x[:, 0], np.zeros(m), x[:, 1]], axis=1)
        seeds = np.zeros((2 * m, 4))
        seeds[:m, 1], seeds[m:, 3] = 1.0, 1.0
        out, adj = self._run_rows(np.concatenate([k, k]), drop.zeta, drop.mass, drop.gravity, (0.0, 1.0),
                                  np.concatenate([X4, X4]), steps(drop, dt), dt, seeds=seeds)
        jac = np.stack([adj[:m][:, [1, 3]], adj[m:][:, [1, 3]]], axis=1)
        return out[:m][:, [1, 3]], jac

    # -- the drop (x = [y, v]) ------------------------------------------------------------------
    def state(self, drop: Any, k: float, dt: float, x0: Any) -> np.ndarray:
        x, _ = self._run(k, drop.zeta, drop.mass, drop.gravity, (0.0, 1.0),
                         np.array([0.0, x0[0], 0.0, x0[1]]), steps(drop, dt), dt, jac=False)
        return x[[1, 3]]

    def jacobian(self, drop: Any, k: float, dt: float, x0: Any) -> Tuple[np.ndarray, np.ndarray]:
        x, j = self._run(k, drop.zeta, drop.mass, drop.gravity, (0.0, 1.0),
                         np.array([0.0, x0[0], 0.0, x0[1]]), steps(drop, dt), dt, jac=True, rows=(1, 3))
        return x[[1, 3]], j[:, [1, 3]]

    # -- the slope (x = [p_x, p_z, v_x, v_z]) ---------------------------------------------------
    def fixture_slope(self, fixture: Dict[str, Any], k: float, dt: float, x0: Any = None,
              jac: bool = True) -> Tuple[np.ndarray, Any]:
        p = fixture["parameters"]
        a = float(p["angle"])
        x0 = np.asarray(fixture["initial_state"] if x0 is None else x0, dtype=float)
        n = round(fixture["t_final"] / dt)
        return self._run(k, p["zeta"], p["mass"], p["gravity"], (-math.sin(a), math.cos(a)), x0, n, dt, jac)

    # -- the 2-D contact fixtures (ferromotion.engines._planar) -----------------------------------
    # The V-groove: the particle against the two walls as planes through the origin, collided once
    # (a plane's contact point and normal never change, so the one-shot contact is exact). Its
    # centre's free space is the groove raised by RADIUS/sin(angle/2): p = centre - (0, that).
    # The cylinder is not run: Newton's soft contacts are collided once and keep the contact point
    # and normal found then, a tangent plane fixed at the initial configuration, not the curved
    # surface the fixture is about (re-colliding every step would leave the tape's derivative
    # without the normal's turning, the term the fixture measures).
    def _planar_model(self, fixture: Dict[str, Any], k: float) -> Any:
        from . import _planar

        key = ("planar", fixture["name"], float(k))
        if key in self._models:
            return self._models[key]
        wp, newton = self._wp, self._newton
        lw = _planar.law(fixture)
        # Newton's law leaves the way out undamped: the zeta whose stiff limit is the fixture's e.
        zeta = _invert(newton_restitution, lw["restitution"])
        c = 2.0 * zeta * math.sqrt(k * lw["mass"])
        b = newton.ModelBuilder(up_axis=newton.Axis.Z, gravity=(0.0, 0.0, -lw["gravity"]))
        b.add_particle(pos=wp.vec3(0.0, 0.0, 10.0), vel=wp.vec3(0.0, 0.0, 0.0), mass=lw["mass"], radius=RADIUS)
        cfg = newton.ModelBuilder.ShapeConfig(ke=float(k), kd=float(c), kf=0.0, mu=0.0)
        for nx, ny in _planar.walls(fixture):
            b.add_shape_plane(plane=(nx, 0.0, ny, 0.0), width=0.0, length=0.0, cfg=cfg)
        model = b.finalize(device="cpu", requires_grad=True)
        model.soft_contact_ke, model.soft_contact_kd = float(k), float(c)
        model.soft_contact_kf = model.soft_contact_mu = model.particle_adhesion = 0.0
        model.particle_grid = None
        solver = newton.solvers.SolverSemiImplicit(model)
        pipeline = newton.CollisionPipeline(model, broad_phase="explicit", soft_contact_gap=100.0, requires_grad=True)
        contacts = pipeline.contacts()
        pipeline.collide(model.state(), contacts)
        self._models = {key: (model, solver, contacts)}
        return self._models[key]

    def _v_groove(self, fixture: Dict[str, Any], k: float, dt: float, x0: Any = None,
                  jac: bool = True) -> Tuple[np.ndarray, Any]:
        """(x(T), J) of a V-groove fixture, J by ``wp.Tape`` (4 reverse passes, float32)."""
        from . import _planar

        _planar.kind(fixture)
        if _planar.system(fixture)[0] != "v_groove":
            raise ValueError("Newton's adapter runs the V-groove fixtures only (see ferromotion.engines._newton)")
        wp = self._wp
        built = self._planar_model(fixture, k)
        lift = RADIUS / math.sin(0.5 * _planar.system(fixture)[1]["angle"])
        x = np.asarray(fixture["initial_state"] if x0 is None else x0, dtype=float)
        n = _planar.steps(fixture, dt)
        states = self._initial(built, np.array([x[0], 0.0, x[1] + lift]), np.array([x[2], 0.0, x[3]]), n, grad=jac)

        def point(state: Any) -> np.ndarray:
            p = state.particle_q.numpy()[0].astype(float)
            v = state.particle_qd.numpy()[0].astype(float)
            return np.array([p[0], p[2] - lift, v[0], v[2]])

        if not jac:
            return point(self._rollout(built, states, dt, n)), None
        tape = self._tape()
        with tape:
            self._rollout(built, states, dt, n)
        out = []
        for comp, arr in ((0, "q"), (2, "q"), (0, "qd"), (2, "qd")):
            seeds = {"q": np.zeros((1, 3), dtype=np.float32), "qd": np.zeros((1, 3), dtype=np.float32)}
            seeds[arr][0, comp] = 1.0
            tape.backward(grads={states[-1].particle_q: wp.array(seeds["q"], dtype=wp.vec3),
                                 states[-1].particle_qd: wp.array(seeds["qd"], dtype=wp.vec3)})
            gq = states[0].particle_q.grad.numpy()[0].astype(float)
            gv = states[0].particle_qd.grad.numpy()[0].astype(float)
            out.append([gq[0], gq[2], gv[0], gv[2]])
            tape.zero()
        return point(states[-1]), np.array(out)

    fixture_v_groove_90 = fixture_v_groove_100 = fixture_v_groove_off_axis = _v_groove


def _invert(f: Any, target: float) -> float:
    """The zeta in [0, 0.999] with f(zeta) = target, f falling (bisection)."""
    lo, hi = 0.0, 0.999
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if f(mid) > target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)
