"""The tumbling cube in Newton (``SolverSemiImplicit``, CPU, float32): the model, its own rollout,
its own gradient by ``wp.Tape``, and its step for the black-box driver with a
guard pair per corner.

**The model.** One free body per world: a box shape of the cube's half side with density m/(2a)³
(Newton's box inertia m·(2a)²/6 is the cube's 2/3·m·a²; the box itself takes no contact) and eight
spheres of radius ``R_S`` = 1 mm centred on the box's corners, density 0, the only colliding shapes.
The ground is a plane lowered by ``R_S``, so a sphere touches it exactly when its corner reaches
z = 0, with the contact point straight below the corner: for a frictionless force along z the same
force and torque as on the corner itself (only corners strike a falling cube). ``angular_damping``
is 0 (Newton's default 0.05 would damp the spin). Both shapes carry ke = k and kd (Newton averages
the pair's), kf = mu = 0.

**Contacts collided once**, with a 2 m gap, at the start (as the drop's adapter and Newton's own
``example_diffsim_ball`` do): a sphere–plane contact keeps the sphere's centre as its body-frame
point and the plane's normal, which never change here, so the one-shot contact set (the eight
corners) is the exact one, and the tape's derivative is not cut by a collision kernel.

**The law** (``kernels_contact._eval_body_contact``): with d the corner's height (as Newton computes
it, in float32) and d' its rate, ``F = n·(-k·d - kd·min(d', 0))`` for d < 0: damped on the way in,
undamped on the way out, never clamped; the force jumps by kd·|d'| at touchdown. Integrator:
semi-implicit Euler, the quaternion advanced by ``q + dt/2·ω⊗q`` and normalised.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from . import _cube
from ._rotations import quat_of, tangent_in, tangent_out, theta_of

#: The corner spheres' radius (m); the ground plane is lowered by it.
R_S = 1e-3
#: The one-shot collision's gap (m): every corner within it at the start.
GAP = 2.0


def _raw(x: Any) -> Tuple[np.ndarray, np.ndarray]:
    """The cube's x as Newton's body (p, quaternion x y z w) and (v, ω world)."""
    x = np.asarray(x, dtype=float)
    q = quat_of(x[3:6])
    return np.concatenate([x[:3], q[1:], q[:1]]), np.concatenate([x[6:9], x[9:12]])


def _cube_x(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    return np.concatenate([q[:3], theta_of(np.concatenate([q[6:7], q[3:6]])), qd[:3], qd[3:6]])


_XYZW = [1, 2, 3, 0]  # Newton's quaternion entries (x, y, z, w) in (w, x, y, z) order


def chart_in(x: Any) -> np.ndarray:
    """(13, 12): d (Newton's q, qd) / d (the cube's tangent coordinates) at x."""
    q = quat_of(np.asarray(x, dtype=float)[3:6])
    m = np.zeros((13, 12))
    m[0:3, 0:3] = np.eye(3)
    m[3:7, 3:6] = tangent_in(q)[_XYZW]
    m[7:13, 6:12] = np.eye(6)
    return m


def chart_out(x: Any) -> np.ndarray:
    """(12, 13): d (the cube's tangent coordinates) / d (Newton's q, qd) at x."""
    q = quat_of(np.asarray(x, dtype=float)[3:6])
    m = np.zeros((12, 13))
    m[0:3, 0:3] = np.eye(3)
    m[3:6, 3:7] = tangent_out(q)[:, _XYZW]
    m[6:12, 7:13] = np.eye(6)
    return m


class NewtonCube:
    """The cube in ``worlds`` Newton worlds at contact stiffness k (N/m) and damping kd (N·s/m)."""

    def __init__(self, cube: Any, k: float, kd: float, worlds: int = 1) -> None:
        import warp as wp

        wp.config.log_level = wp.LOG_WARNING
        wp.init()
        import newton

        self._wp, self.cube, self.worlds = wp, cube, int(worlds)
        self.k, self.kd = float(k), float(kd)
        self.version = f"newton {newton.__version__}, warp-lang {wp.__version__} (float32, cpu)"
        a, m = float(cube.half_side), float(cube.mass)
        b = newton.ModelBuilder(up_axis=newton.Axis.Z, gravity=(0.0, 0.0, -float(cube.gravity)))
        touch = newton.ModelBuilder.ShapeConfig(ke=self.k, kd=self.kd, kf=0.0, mu=0.0, density=0.0, gap=GAP)
        body_cfg = newton.ModelBuilder.ShapeConfig(density=m / (2 * a) ** 3, has_shape_collision=False,
                                                   ke=0.0, kd=0.0, kf=0.0, mu=0.0)
        for _ in range(self.worlds):
            b.begin_world()
            body = b.add_body(xform=wp.transform((0.0, 0.0, 0.5), wp.quat_identity()))
            b.add_shape_box(body, hx=a, hy=a, hz=a, cfg=body_cfg)
            for c in _cube.CORNERS:
                b.add_shape_sphere(body, xform=wp.transform(tuple(a * c), wp.quat_identity()), radius=R_S, cfg=touch)
            b.end_world()
        b.add_ground_plane(height=-R_S, cfg=touch)
        self.model = b.finalize(device="cpu", requires_grad=True)
        self.solver = newton.solvers.SolverSemiImplicit(self.model, angular_damping=0.0)
        pipeline = newton.CollisionPipeline(self.model, requires_grad=True)
        self.contacts = pipeline.contacts()
        pipeline.collide(self.model.state(), self.contacts)
        n = int(self.contacts.rigid_contact_count.numpy()[0])
        if n != 8 * self.worlds:
            raise RuntimeError(f"Newton's one-shot collision found {n} contacts, expected 8 per world")
        self._control = self.model.control()

    def set_damping(self, kd: float) -> None:
        """Every shape's kd (N·s/m) reassigned: the same model at another damping."""
        self.kd = float(kd)
        self.model.shape_material_kd.fill_(self.kd)

    # -- rollouts -------------------------------------------------------------------------------
    def _states(self, n: int, grad: bool) -> List[Any]:
        return [self.model.state(requires_grad=grad) for _ in range(n + 1 if grad else 2)]

    def _assign(self, state: Any, q: np.ndarray, qd: np.ndarray) -> None:
        wp = self._wp
        state.body_q.assign(wp.array(np.asarray(q, dtype=np.float32), dtype=wp.transform))
        state.body_qd.assign(wp.array(np.asarray(qd, dtype=np.float32), dtype=wp.spatial_vector))

    def _pad(self, rows: np.ndarray) -> np.ndarray:
        if len(rows) > self.worlds:
            raise ValueError(f"{len(rows)} rows for {self.worlds} worlds")
        return np.concatenate([rows, np.repeat(rows[:1], self.worlds - len(rows), axis=0)])

    def _run(self, states: List[Any], n: int, dt: float, record: Optional[List[Any]] = None) -> Any:
        grad = len(states) > 2
        for i in range(n):
            a, b = (states[i], states[i + 1]) if grad else (states[i % 2], states[(i + 1) % 2])
            a.clear_forces()
            self.solver.step(a, b, self._control, self.contacts, dt)
            if record is not None:
                record.append((b.body_q.numpy().copy(), b.body_qd.numpy().copy()))
        return states[n] if grad else states[n % 2]

    def trajectory(self, x0: Any, t_final: float, dt: float) -> np.ndarray:
        """(n + 1, 12): the cube's state at every step of Newton's loop from x0 (world 0)."""
        q0, qd0 = _raw(x0)
        states = self._states(0, False)
        self._assign(states[0], self._pad(q0[None]), self._pad(qd0[None]))
        record: List[Any] = []
        self._run(states, round(t_final / dt), dt, record)
        return np.array([np.asarray(x0, dtype=float)] + [_cube_x(q[0], qd[0]) for q, qd in record])

    def gradient(self, x0: Any, t_final: float, dt: float) -> Tuple[np.ndarray, np.ndarray]:
        """(x(T), J): J by one reverse pass of ``wp.Tape`` through Newton's loop, the 12 rows of J in
        12 worlds started alike, world i seeded on row i of the chart to the cube's tangent
        coordinates at x(T), its adjoint at x0 carried by the chart at x0."""
        wp = self._wp
        if self.worlds < 12:
            raise ValueError("gradient needs 12 worlds (one per row of J)")
        n = round(t_final / dt)
        q0, qd0 = _raw(x0)
        states = self._states(n, True)
        self._assign(states[0], np.repeat(q0[None], self.worlds, 0), np.repeat(qd0[None], self.worlds, 0))
        tape = wp.Tape()
        with tape:
            self._run(states, n, dt)
        last = states[-1]
        x_end = _cube_x(last.body_q.numpy()[0], last.body_qd.numpy()[0])
        seeds = np.zeros((self.worlds, 13))
        seeds[:12] = chart_out(x_end)
        tape.backward(grads={last.body_q: wp.array(seeds[:, :7].astype(np.float32), dtype=wp.transform),
                             last.body_qd: wp.array(seeds[:, 7:].astype(np.float32), dtype=wp.spatial_vector)})
        adj = np.concatenate([states[0].body_q.grad.numpy(), states[0].body_qd.grad.numpy()], axis=1)[:12]
        return x_end, adj.astype(float) @ chart_in(x0)


def _corner_distance_kernel() -> Any:
    """A Warp kernel that computes each contact's d exactly as Newton's
    ``kernels_contact._eval_body_contact`` does (the same float32 expressions: the plane's point
    untransformed, the sphere's centre transformed by its body plus its radius along n), so the
    driver's "in contact" is Newton's own."""
    import warp as wp

    # Warp reads a kernel's argument types from these annotations (calls, which mypy cannot read).
    @wp.kernel
    def corner_distance(body_q: wp.array(dtype=wp.transform),  # type: ignore[valid-type, no-untyped-def]
                        shape_body: wp.array(dtype=int),  # type: ignore[valid-type]
                        point0: wp.array(dtype=wp.vec3), point1: wp.array(dtype=wp.vec3),  # type: ignore[valid-type]
                        normal: wp.array(dtype=wp.vec3), shape1: wp.array(dtype=int),  # type: ignore[valid-type]
                        margin1: wp.array(dtype=float), out: wp.array(dtype=float)):  # type: ignore[valid-type]
        tid = wp.tid()
        n = -normal[tid]
        bx_a = point0[tid]
        bx_b = wp.transform_point(body_q[shape_body[shape1[tid]]], point1[tid]) + margin1[tid] * n
        out[tid] = wp.dot(n, bx_a - bx_b)

    return corner_distance


class NewtonCubeStep(NewtonCube):
    """Newton's step of the cube for the black-box driver: batched (a world per row), the state
    MuJoCo's free-joint (p, quaternion w x y z, v, ω in the body frame: declared ``("free", 0)``)
    so that ``_cube.to_cube_tangent`` carries its J; one guard pair per corner (entry: the corner's
    distance as Newton computes it where it is < 0, else its float64 height kept positive; release:
    minus the same, the law releasing at d = 0, never clamping)."""

    def __init__(self, cube: Any, k: float, kd: float, worlds: int = 49) -> None:
        super().__init__(cube, k, kd, worlds)
        wp = self._wp
        c = self.contacts
        shape1 = c.rigid_contact_shape1.numpy()[:8 * self.worlds]
        body = self.model.shape_body.numpy()
        first = {int(b): int(np.min(np.nonzero(body == b)[0])) for b in set(body[shape1].tolist())}
        # contact -> (world, corner): a world's shapes are its box, then its 8 corner spheres in order.
        self._slot = np.array([[int(body[s]), int(s) - first[int(body[s])] - 1] for s in shape1])
        self._kernel = _corner_distance_kernel()
        self._d = wp.zeros(8 * self.worlds, dtype=float, device="cpu")
        self._memo: Any = None
        self._state = self.model.state()
        self._next = self.model.state()

    @staticmethod
    def to_newton(X: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        q = X[:, [0, 1, 2, 4, 5, 6, 3]]
        w = np.array([_cube._rotation(theta_of(x[3:7])) @ x[10:13] for x in X])
        return q, np.concatenate([X[:, 7:10], w], axis=1)

    @staticmethod
    def from_newton(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        quat = q[:, [6, 3, 4, 5]]
        quat = quat / np.linalg.norm(quat, axis=1, keepdims=True)
        w = np.array([_cube._rotation(theta_of(u)).T @ v for u, v in zip(quat, qd[:, 3:6])])
        return np.concatenate([q[:, :3], quat, qd[:, :3], w], axis=1)

    def step_rows(self, X: Any, dt: float) -> np.ndarray:
        X = np.asarray(X, dtype=float).reshape(-1, 13)
        q, qd = self.to_newton(X)
        self._assign(self._state, self._pad(q), self._pad(qd))
        self._state.clear_forces()
        self.solver.step(self._state, self._next, self._control, self.contacts, float(dt))
        return self.from_newton(self._next.body_q.numpy()[:len(X)], self._next.body_qd.numpy()[:len(X)])

    def distances(self, X: np.ndarray) -> np.ndarray:
        """(m, 8): each row's corner distances as Newton computes them (float32), and (m, 8) the
        float64 heights."""
        wp = self._wp
        q, qd = self.to_newton(X)
        self._assign(self._state, self._pad(q), self._pad(qd))
        c = self.contacts
        wp.launch(self._kernel, dim=8 * self.worlds, device="cpu",
                  inputs=[self._state.body_q, self.model.shape_body, c.rigid_contact_point0, c.rigid_contact_point1,
                          c.rigid_contact_normal, c.rigid_contact_shape1, c.rigid_contact_margin1], outputs=[self._d])
        d = np.empty((self.worlds, 8))
        d[self._slot[:, 0], self._slot[:, 1]] = self._d.numpy().astype(float)
        return d[:len(X)]

    def corner_guards(self, X: Any) -> np.ndarray:
        """(m, 16): per row, each corner's entry then release guard (see the class docs)."""
        X = np.asarray(X, dtype=float).reshape(-1, 13)
        key = X.tobytes()
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        d = self.distances(X)
        heights = np.array([x[2] + (self.cube.half_side * _cube.CORNERS @ _cube._rotation(theta_of(x[3:7])).T)[:, 2]
                            for x in X])
        outside = np.maximum(heights, _cube._TINY)
        out = np.empty((len(X), 16))
        out[:, 0::2] = np.where(d < 0, d, outside)
        out[:, 1::2] = np.where(d < 0, -d, -outside)
        self._memo = (key, out)
        return out

    def guard_column(self, i: int, X: Any) -> np.ndarray:
        return self.corner_guards(X)[:, i]

    def step_function(self) -> Any:
        """The :class:`ferromotion.StepFunction` (batched, float32 declared, ``("free", 0)``)."""
        import functools

        from .. import StepFunction

        guards = [functools.partial(self.guard_column, i) for i in range(16)]
        return StepFunction(self.step_rows, guards=guards, resets=[None] * 16, batch=self.worlds, precision="float32",
                            manifold=[("free", 0)], name="newton cube, a guard pair per corner")
