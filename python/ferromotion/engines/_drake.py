"""The drop (and the slope) in Drake: a sphere on a half-space, point contact, discrete
``MultibodyPlant`` at the step dt, under TAMSI or SAP; gradient by ``Simulator_[AutoDiffXd]``
on ``Diagram.ToAutoDiffXd()`` (forward mode through the discrete solver, float64).

The model: a sphere of radius ``RADIUS`` and mass m on a joint (prismatic along z for the
drop; planar in the world's x-z plane for the slope, its rotation never driven: the contact is
frictionless and its force passes through the centre) above a ``HalfSpace`` (the ground, or
the slope's plane through the origin). A contact exists only when a step *starts* penetrating
(d < 0 below): Drake's point-contact query reports penetrating pairs only, so the step that
crosses the surface flies through it, and the next one already feels the implicit damping
c*|v_n| (TAMSI: k*|d|*d_hc*|v_n|): the force jumps at touchdown, and the map x0 -> x(T) jumps
wherever the first contact step moves on the time grid. ``MultibodyPlantConfig(time_step=dt,
contact_model="point", discrete_contact_approximation="tamsi" | "sap")``. Both geometries get
``point_contact_stiffness`` = 2k (Drake combines two stiffnesses in series: k), Coulomb
friction 0. With d = signed gap (sphere centre height minus r along n) and v_n = its rate, the
step is semi-implicit: v+ from the contact impulse at the new velocity, then q+ = q + dt*v+.

``drake-tamsi``: TAMSI with Hunt–Crossley dissipation ``hunt_crossley_dissipation`` = d_hc on
both geometries (combined: d_hc)::

    F = k * max(0, -(d + dt*v_n+)) * max(0, 1 - d_hc*v_n+)     (d < 0 at the step's start)

Hunt–Crossley's damping grows with the depth, ours (c*v_n) does not: no d_hc maps our law.
We pick the d_hc whose stiff-limit restitution at the fixture's first impact speed u equals
ours (``hunt_crossley_for``: e depends on d_hc*u alone; d_hc = 0.193 s/m at u = 4.43 m/s).
The rebound then leaves with our speed, but the force history differs inside the contact.

``drake-sap``: SAP with the linear (Kelvin–Voigt) dissipation of its ``relaxation_time`` tau
(Hunt–Crossley is ignored by SAP): tau = c/k on the ball, 0 on the ground (Drake adds them)::

    F = max(0, -k*(d + dt*v_n+) - c*v_n+),   c = 2*zeta*sqrt(k*m)      (d < 0 at the step's start)

which is our law, evaluated implicitly at the end of the step (backward Euler in the contact,
our fixed route is explicit). Both are solved to convergence (pinned to 1e-9 against a numpy
rollout that solves each step's scalar equation by bisection). ``Drake("sap", relaxation=None)``: SAP with the material left as TAMSI's (no
relaxation time): Drake's default relaxation time then governs, and the ball comes to rest on
the ground instead of bouncing; the audit shows it.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Dict, Optional, Tuple

import numpy as np

from ._adapter import AdapterBase
from ._mujoco import steps

RADIUS = 0.1


def _proximity(material: Dict[str, Any], relaxation: Optional[float]) -> Any:
    """Drake's proximity properties for the ball and the surfaces: Hunt-Crossley dissipation,
    point stiffness, no friction, and SAP's relaxation time where given."""
    from pydrake.geometry import AddContactMaterial, ProximityProperties
    from pydrake.multibody.plant import CoulombFriction

    p = ProximityProperties()
    AddContactMaterial(dissipation=material["hunt_crossley"], point_stiffness=material["point_stiffness"],
                       friction=CoulombFriction(0.0, 0.0), properties=p)
    if relaxation is not None:
        p.AddProperty("material", "relaxation_time", relaxation)
    return p


def hunt_crossley_restitution(beta: float, n: int = 4000) -> float:
    """Stiff-limit restitution of F = k*x*(1 + d*x') at d*u = beta (x the depth, u the entry
    speed; gravity negligible): scaled, X'' = -X*(1 + beta*X')+ from X = 0, X' = 1, RK4."""
    def f(s: np.ndarray) -> np.ndarray:
        return np.array([s[1], -s[0] * max(0.0, 1.0 + beta * s[1])])

    s, h = np.array([0.0, 1.0]), math.pi / n
    for _ in range(4 * n):
        k1 = f(s)
        k2 = f(s + 0.5 * h * k1)
        k3 = f(s + 0.5 * h * k2)
        k4 = f(s + h * k3)
        nxt = s + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        if nxt[0] < 0.0:  # back at the surface: interpolate the exit speed linearly
            w = s[0] / (s[0] - nxt[0])
            return float(-(s[1] + w * (nxt[1] - s[1])))
        s = nxt
    raise RuntimeError(f"hunt_crossley_restitution: no release for beta = {beta}")


@functools.lru_cache(maxsize=64)
def hunt_crossley_for(restitution: float, speed: float) -> float:
    """The Hunt–Crossley dissipation d (s/m) whose stiff-limit restitution at entry speed
    ``speed`` is ``restitution`` (bisection on beta = d*speed)."""
    lo, hi = 0.0, 10.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if hunt_crossley_restitution(mid, 400) > restitution:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi) / speed


class Drake(AdapterBase):
    """Drake's discrete MultibodyPlant; gradient by ``Simulator_[AutoDiffXd]``."""

    law = __doc__ or ""
    law_maps_onto_ours = False

    def __init__(self, approximation: str = "tamsi", relaxation: Optional[str] = "mapped") -> None:
        from importlib.metadata import version

        from pydrake.autodiffutils import AutoDiffXd

        self._ad = AutoDiffXd
        self.approximation = approximation
        self.relaxation = relaxation
        self.name = f"drake-{approximation}" if relaxation == "mapped" or approximation == "tamsi" else \
            f"drake-{approximation}-default"
        self.version = f"drake {version('drake')} ({approximation.upper()}, point contact)"
        self.gradient_route = ("Simulator_[AutoDiffXd] on Diagram.ToAutoDiffXd() (forward mode through the "
                               f"discrete {approximation.upper()} solve, float64)")
        self._cache: Dict[Tuple[Any, ...], Any] = {}
        self.law_differs = ("TAMSI damps by Hunt-Crossley (d chosen for our restitution at the first impact "
                            "speed); see ferromotion.engines._drake") if approximation == "tamsi" else \
            ("SAP evaluates our law implicitly, at the end of each step (backward Euler in the contact); "
             "see ferromotion.engines._drake")

    def dissipation(self, k: float, zeta: float, mass: float, restitution: float, speed: float) -> Dict[str, float]:
        """The material this adapter gives both geometries for our k and zeta."""
        out = {"point_stiffness": 2.0 * k, "hunt_crossley": hunt_crossley_for(restitution, speed)}
        if self.approximation == "sap" and self.relaxation == "mapped":
            out["relaxation_time"] = 2.0 * zeta * math.sqrt(k * mass) / k
        return out

    def _diagram(self, material: Dict[str, float], mass: float, gravity: float, dt: float,
                 normal: Optional[Tuple[float, float]]) -> Any:
        key = (tuple(sorted(material.items())), mass, gravity, dt, normal)
        if key in self._cache:
            return self._cache[key]
        from pydrake.geometry import HalfSpace, Sphere
        from pydrake.math import RigidTransform, RotationMatrix
        from pydrake.multibody.plant import AddMultibodyPlant, MultibodyPlantConfig
        from pydrake.multibody.tree import FixedOffsetFrame, PlanarJoint, PrismaticJoint, SpatialInertia
        from pydrake.systems.framework import DiagramBuilder

        builder = DiagramBuilder()
        plant, _ = AddMultibodyPlant(MultibodyPlantConfig(
            time_step=dt, contact_model="point", discrete_contact_approximation=self.approximation), builder)
        plant.mutable_gravity_field().set_gravity_vector([0.0, 0.0, -gravity])
        ball = plant.AddRigidBody("ball", SpatialInertia.SolidSphereWithMass(mass, RADIUS))
        if normal is None:
            plant.AddJoint(PrismaticJoint("z", plant.world_frame(), ball.body_frame(), [0.0, 0.0, 1.0]))
            n3 = np.array([0.0, 0.0, 1.0])
        else:
            # The joint's x-y plane is the world's x-z plane (its y axis is world z).
            frame = plant.AddFrame(FixedOffsetFrame("xz", plant.world_frame(),
                                                    RigidTransform(RotationMatrix.MakeXRotation(math.pi / 2))))
            plant.AddJoint(PlanarJoint("xz", frame, ball.body_frame(), [0.0, 0.0, 0.0]))
            n3 = np.array([normal[0], 0.0, normal[1]])

        def props(relaxation: Optional[float]) -> Any:
            return _proximity(material, relaxation)

        tau = material.get("relaxation_time")
        plant.RegisterCollisionGeometry(ball, RigidTransform(), Sphere(RADIUS), "ball", props(tau))
        plant.RegisterCollisionGeometry(plant.world_body(), HalfSpace.MakePose(n3, [0.0, 0.0, 0.0]), HalfSpace(),
                                        "ground", props(None if tau is None else 0.0))
        plant.Finalize()
        diagram = builder.Build()
        diagram_ad = diagram.ToAutoDiffXd()
        built = (diagram, plant, diagram_ad, diagram_ad.GetSubsystemByName(plant.get_name()))
        self._cache = {key: built}
        return built

    def _q(self, x0: np.ndarray, normal: Optional[Tuple[float, float]]) -> np.ndarray:
        """Contact-point state -> the joint's [q, v] (centre = p + r*n)."""
        if normal is None:
            return np.array([x0[0] + RADIUS, x0[1]])
        nx, nz = normal
        return np.array([x0[0] + RADIUS * nx, x0[1] + RADIUS * nz, 0.0, x0[2], x0[3], 0.0])

    def _x(self, qv: np.ndarray, normal: Optional[Tuple[float, float]]) -> np.ndarray:
        if normal is None:
            return np.array([qv[0] - RADIUS, qv[1]])
        nx, nz = normal
        return np.array([qv[0] - RADIUS * nx, qv[1] - RADIUS * nz, qv[3], qv[4]])

    def run(self, material: Dict[str, float], mass: float, gravity: float, dt: float, t_final: float,
            x0: np.ndarray, normal: Optional[Tuple[float, float]], jac: bool) -> Tuple[np.ndarray, Any]:
        from pydrake.autodiffutils import ExtractGradient, ExtractValue, InitializeAutoDiff
        from pydrake.systems.analysis import Simulator, Simulator_

        diagram, plant, diagram_ad, plant_ad = self._diagram(material, mass, gravity, dt, normal)
        qv0 = self._q(np.asarray(x0, dtype=float), normal)
        if not jac:
            sim = Simulator(diagram)
            pc = plant.GetMyMutableContextFromRoot(sim.get_mutable_context())
            plant.SetPositionsAndVelocities(pc, qv0)
            sim.AdvanceTo(t_final)
            return self._x(np.asarray(plant.GetPositionsAndVelocities(pc)), normal), None
        ctx = diagram_ad.CreateDefaultContext()
        pc = plant_ad.GetMyMutableContextFromRoot(ctx)
        # Seed the derivatives on the contact-point coordinates: d(centre)/d(p) = I.
        plant_ad.SetPositionsAndVelocities(pc, InitializeAutoDiff(qv0))
        sim = Simulator_[self._ad](diagram_ad, ctx)
        sim.AdvanceTo(t_final)
        out = plant_ad.GetPositionsAndVelocities(pc)
        val = np.asarray(ExtractValue(out)).ravel()
        grad = np.asarray(ExtractGradient(out))
        if normal is None:
            return self._x(val, normal), grad
        idx = [0, 1, 3, 4]
        return self._x(val, normal), grad[np.ix_(idx, idx)]

    # -- the drop ------------------------------------------------------------------------------
    def _drop_material(self, drop: Any, k: float) -> Dict[str, float]:
        from .. import limit_restitution

        speed = math.sqrt(drop.velocity ** 2 + 2.0 * drop.gravity * drop.height)
        return self.dissipation(k, drop.zeta, drop.mass, limit_restitution(drop), speed)

    def state(self, drop: Any, k: float, dt: float, x0: Any) -> np.ndarray:
        steps(drop, dt)
        return self.run(self._drop_material(drop, k), drop.mass, drop.gravity, dt, drop.t_final,
                        np.asarray(x0, dtype=float), None, jac=False)[0]

    def jacobian(self, drop: Any, k: float, dt: float, x0: Any) -> Tuple[np.ndarray, np.ndarray]:
        steps(drop, dt)
        return self.run(self._drop_material(drop, k), drop.mass, drop.gravity, dt, drop.t_final,
                        np.asarray(x0, dtype=float), None, jac=True)

    # -- the slope -----------------------------------------------------------------------------
    @staticmethod
    def slope_speed(fixture: Dict[str, Any]) -> float:
        """The slope's first impact speed along the normal (m/s), from the fixture's x0."""
        p = fixture["parameters"]
        a = float(p["angle"])
        x0 = fixture["initial_state"]
        nx, nz = -math.sin(a), math.cos(a)
        h, vn = nx * x0[0] + nz * x0[1], nx * x0[2] + nz * x0[3]
        return math.sqrt(vn * vn + 2.0 * p["gravity"] * nz * h)

    def fixture_slope(self, fixture: Dict[str, Any], k: float, dt: float, x0: Any = None,
              jac: bool = True) -> Tuple[np.ndarray, Any]:
        p = fixture["parameters"]
        a = float(p["angle"])
        normal = (-math.sin(a), math.cos(a))
        x0 = np.asarray(fixture["initial_state"] if x0 is None else x0, dtype=float)
        material = self.dissipation(k, p["zeta"], p["mass"], p["restitution"], self.slope_speed(fixture))
        return self.run(material, p["mass"], p["gravity"], dt, fixture["t_final"], x0, normal, jac)

    # -- the 2-D contact fixtures (V-groove, cylinder; ferromotion.engines._planar) ----------------
    def _planar_diagram(self, material: Dict[str, float], fixture: Dict[str, Any], dt: float) -> Any:
        """The ball on a planar joint in the world's x-z plane (as the slope's) against the groove's
        two half-spaces or the cylinder (a Drake ``Cylinder`` along the world's y)."""
        from . import _planar

        key = ("planar", tuple(sorted(material.items())), fixture["name"], dt)
        if key in self._cache:
            return self._cache[key]
        from pydrake.geometry import Cylinder, HalfSpace, Sphere
        from pydrake.math import RigidTransform, RotationMatrix
        from pydrake.multibody.plant import AddMultibodyPlant, MultibodyPlantConfig
        from pydrake.multibody.tree import FixedOffsetFrame, PlanarJoint, SpatialInertia
        from pydrake.systems.framework import DiagramBuilder

        lw = _planar.law(fixture)
        builder = DiagramBuilder()
        plant, _ = AddMultibodyPlant(MultibodyPlantConfig(
            time_step=dt, contact_model="point", discrete_contact_approximation=self.approximation), builder)
        plant.mutable_gravity_field().set_gravity_vector([0.0, 0.0, -lw["gravity"]])
        ball = plant.AddRigidBody("ball", SpatialInertia.SolidSphereWithMass(lw["mass"], _planar.RADIUS))
        frame = plant.AddFrame(FixedOffsetFrame("xz", plant.world_frame(),
                                                RigidTransform(RotationMatrix.MakeXRotation(math.pi / 2))))
        plant.AddJoint(PlanarJoint("xz", frame, ball.body_frame(), [0.0, 0.0, 0.0]))

        def props(relaxation: Optional[float]) -> Any:
            return _proximity(material, relaxation)

        tau = material.get("relaxation_time")
        world = None if tau is None else 0.0
        plant.RegisterCollisionGeometry(ball, RigidTransform(), Sphere(_planar.RADIUS), "ball", props(tau))
        if _planar.kind(fixture) == "v_groove":
            for i, (nx, ny) in enumerate(_planar.walls(fixture)):
                n3 = np.array([nx, 0.0, ny])
                plant.RegisterCollisionGeometry(plant.world_body(), HalfSpace.MakePose(n3, -_planar.RADIUS * n3),
                                                HalfSpace(), f"wall{i}", props(world))
        else:
            radius = _planar.system(fixture)[1]["radius"] - _planar.RADIUS
            plant.RegisterCollisionGeometry(plant.world_body(), RigidTransform(RotationMatrix.MakeXRotation(math.pi / 2)),
                                            Cylinder(radius, 10.0), "cylinder", props(world))
        plant.Finalize()
        diagram = builder.Build()
        diagram_ad = diagram.ToAutoDiffXd()
        built = (diagram, plant, diagram_ad, diagram_ad.GetSubsystemByName(plant.get_name()))
        self._cache = {key: built}
        return built

    def _planar(self, fixture: Dict[str, Any], k: float, dt: float, x0: Any = None,
                jac: bool = True) -> Tuple[np.ndarray, Any]:
        """(x(T), J) of a V-groove or cylinder fixture: the joint's (x, z, theta) are the fixture's
        (p_x, p_y, 0); J by ``Simulator_[AutoDiffXd]`` (4x4, the rotation dropped: no torque acts)."""
        from pydrake.autodiffutils import ExtractGradient, ExtractValue, InitializeAutoDiff
        from pydrake.systems.analysis import Simulator, Simulator_

        from . import _planar

        _planar.steps(fixture, dt)
        lw = _planar.law(fixture)
        material = self.dissipation(k, lw["zeta"], lw["mass"], lw["restitution"], _planar.first_speed(fixture))
        diagram, plant, diagram_ad, plant_ad = self._planar_diagram(material, fixture, dt)
        x = np.asarray(fixture["initial_state"] if x0 is None else x0, dtype=float)
        qv0 = np.array([x[0], x[1], 0.0, x[2], x[3], 0.0])
        idx = [0, 1, 3, 4]
        if not jac:
            sim = Simulator(diagram)
            pc = plant.GetMyMutableContextFromRoot(sim.get_mutable_context())
            plant.SetPositionsAndVelocities(pc, qv0)
            sim.AdvanceTo(float(fixture["t_final"]))
            return np.asarray(plant.GetPositionsAndVelocities(pc))[idx], None
        ctx = diagram_ad.CreateDefaultContext()
        pc = plant_ad.GetMyMutableContextFromRoot(ctx)
        plant_ad.SetPositionsAndVelocities(pc, InitializeAutoDiff(qv0))
        sim = Simulator_[self._ad](diagram_ad, ctx)
        sim.AdvanceTo(float(fixture["t_final"]))
        out = plant_ad.GetPositionsAndVelocities(pc)
        val = np.asarray(ExtractValue(out)).ravel()
        grad = np.asarray(ExtractGradient(out))
        return val[idx], grad[np.ix_(idx, idx)]

    fixture_v_groove_90 = fixture_v_groove_100 = fixture_v_groove_off_axis = fixture_cylinder = _planar
