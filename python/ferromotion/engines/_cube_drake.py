"""The tumbling cube in Drake (discrete ``MultibodyPlant``, point contact, TAMSI or SAP, float64):
the model, its own rollouts, and its own gradient by ``Simulator_[AutoDiffXd]`` on
``Diagram.ToAutoDiffXd()`` (forward mode through the discrete solve).

**The model.** One free body (Drake's quaternion floating joint) with the cube's mass and
``SpatialInertia.SolidBoxWithMass`` of side 2a (2/3·m·a², the cube's); its collision geometry is eight
``Sphere`` s of radius ``R_S`` = 1 mm centred on the corners. Drake's point-contact query under
AutoDiffXd takes only some shape pairs (a sphere against a half-space is one of them; a box against
a half-space is not), and only corners strike a falling cube. The ground is a ``HalfSpace`` lowered
by ``R_S``: a sphere touches it exactly when its corner reaches z = 0, its contact point straight
below the corner (the same force and torque as on the corner for a frictionless force along z).

**The contact**, as the drop's adapter maps it (``ferromotion.engines._drake``): point stiffness 2k
on both geometries (Drake puts them in series: k), friction 0; TAMSI damps by Hunt–Crossley d_hc
(on both), SAP by its relaxation time τ = kd/k on the spheres (0 on the ground; Drake adds them).
A contact exists only when a step *starts* penetrating. State: positions (quaternion w x y z, p),
velocities (ω, v) in the world frame.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

from . import _cube
from ._rotations import quat_of, tangent_in, tangent_out, theta_of

#: The corner spheres' radius (m); the ground half-space is lowered by it.
R_S = 1e-3


def _raw(x: Any) -> np.ndarray:
    """The cube's x as Drake's free body state (q w x y z, p, ω, v)."""
    x = np.asarray(x, dtype=float)
    return np.concatenate([quat_of(x[3:6]), x[:3], x[9:12], x[6:9]])


def _cube_x(s: np.ndarray) -> np.ndarray:
    s = np.asarray(s, dtype=float)
    return np.concatenate([s[4:7], theta_of(s[0:4]), s[10:13], s[7:10]])


def chart_in(x: Any) -> np.ndarray:
    """(13, 12): d (Drake's state) / d (the cube's tangent coordinates) at x."""
    m = np.zeros((13, 12))
    m[0:4, 3:6] = tangent_in(quat_of(np.asarray(x, dtype=float)[3:6]))
    m[4:7, 0:3] = np.eye(3)
    m[7:10, 9:12] = np.eye(3)
    m[10:13, 6:9] = np.eye(3)
    return m


def chart_out(x: Any) -> np.ndarray:
    """(12, 13): d (the cube's tangent coordinates) / d (Drake's state) at x."""
    m = np.zeros((12, 13))
    m[3:6, 0:4] = tangent_out(quat_of(np.asarray(x, dtype=float)[3:6]))
    m[0:3, 4:7] = np.eye(3)
    m[9:12, 7:10] = np.eye(3)
    m[6:9, 10:13] = np.eye(3)
    return m


class DrakeCube:
    """The cube in a discrete ``MultibodyPlant`` at step dt, ``approximation`` "tamsi" or "sap",
    stiffness k (N/m) and the damping of ``setting`` (``_cube_force.setting_for``)."""

    def __init__(self, cube: Any, approximation: str, setting: Dict[str, float], dt: float) -> None:
        from importlib.metadata import version

        from pydrake.geometry import HalfSpace, Sphere
        from pydrake.math import RigidTransform
        from pydrake.multibody.plant import AddMultibodyPlant, MultibodyPlantConfig
        from pydrake.multibody.tree import SpatialInertia
        from pydrake.systems.framework import DiagramBuilder

        from ._drake import _proximity

        if approximation not in ("tamsi", "sap"):
            raise ValueError(f"approximation: 'tamsi' or 'sap', got {approximation!r}")
        self.cube, self.dt, self.approximation = cube, float(dt), approximation
        self.version = f"drake {version('drake')} ({approximation.upper()}, point contact)"
        k = float(setting["k"])
        material = {"point_stiffness": 2.0 * k, "hunt_crossley": float(setting["hunt_crossley"])}
        tau = float(setting["kd"]) / k if approximation == "sap" else None
        builder = DiagramBuilder()
        plant, _ = AddMultibodyPlant(MultibodyPlantConfig(
            time_step=self.dt, contact_model="point", discrete_contact_approximation=approximation), builder)
        plant.mutable_gravity_field().set_gravity_vector([0.0, 0.0, -float(cube.gravity)])
        a = float(cube.half_side)
        body = plant.AddRigidBody("cube", SpatialInertia.SolidBoxWithMass(float(cube.mass), 2.0 * a, 2.0 * a, 2.0 * a))
        for i, c in enumerate(_cube.CORNERS):
            plant.RegisterCollisionGeometry(body, RigidTransform(a * c), Sphere(R_S), f"corner{i}",
                                            _proximity(material, tau))
        plant.RegisterCollisionGeometry(plant.world_body(), HalfSpace.MakePose([0.0, 0.0, 1.0], [0.0, 0.0, -R_S]),
                                        HalfSpace(), "ground", _proximity(material, None if tau is None else 0.0))
        plant.Finalize()
        self.diagram, self.plant, self.body = builder.Build(), plant, body
        self.corner_of = {g: i for i, g in enumerate(plant.GetCollisionGeometriesForBody(body))}
        self._context = self.diagram.CreateDefaultContext()
        self._sim: Any = None

    def inertia(self) -> np.ndarray:
        """The body's rotational inertia about its centre (3, 3), as the plant holds it."""
        ctx = self.plant.CreateDefaultContext()
        return np.asarray(self.body.CalcSpatialInertiaInBodyFrame(ctx).CalcRotationalInertia().CopyToFullMatrix3())

    def trajectory(self, x0: Any, t_final: float) -> np.ndarray:
        """(n + 1, 12): the cube's state at every step of Drake's own loop from x0."""
        from pydrake.systems.analysis import Simulator

        sim = Simulator(self.diagram)
        pc = self.plant.GetMyMutableContextFromRoot(sim.get_mutable_context())
        self.plant.SetPositionsAndVelocities(pc, _raw(x0))
        out = [np.asarray(x0, dtype=float)]
        for i in range(1, round(t_final / self.dt) + 1):
            sim.AdvanceTo(i * self.dt)
            out.append(_cube_x(self.plant.GetPositionsAndVelocities(pc)))
        return np.array(out)

    def gradient(self, x0: Any, horizons: Any,
                 progress: Any = None) -> Dict[float, Tuple[np.ndarray, np.ndarray, float]]:
        """Per horizon: (x(T), J, wall s), J the engine's own: ``Simulator_[AutoDiffXd]`` from x0
        with the 12 derivatives of the cube's tangent coordinates seeded through the chart, read
        back through the chart at x(T). One forward-mode run through every horizon."""
        import time

        from pydrake.autodiffutils import AutoDiffXd, ExtractGradient, ExtractValue
        from pydrake.systems.analysis import Simulator_

        diagram_ad = self.diagram.ToAutoDiffXd()
        plant_ad = diagram_ad.GetSubsystemByName(self.plant.get_name())
        ctx = diagram_ad.CreateDefaultContext()
        pc = plant_ad.GetMyMutableContextFromRoot(ctx)
        seed = chart_in(x0)
        plant_ad.SetPositionsAndVelocities(pc, np.array([AutoDiffXd(v, seed[i]) for i, v in enumerate(_raw(x0))]))
        sim = Simulator_[AutoDiffXd](diagram_ad, ctx)
        out, start = {}, time.perf_counter()
        for t_final in sorted(horizons):
            sim.AdvanceTo(round(t_final / self.dt) * self.dt)
            s = plant_ad.GetPositionsAndVelocities(pc)
            x_end = _cube_x(np.asarray(ExtractValue(s)).ravel())
            out[t_final] = (x_end, chart_out(x_end) @ np.asarray(ExtractGradient(s)), time.perf_counter() - start)
            if progress is not None:
                progress(f"drake-{self.approximation} AutoDiffXd to {t_final:g} s: {time.perf_counter() - start:.0f} s")
        return out

    # -- one step, for the black-box driver ----------------------------------------------------------
    def _set(self, x: np.ndarray) -> Any:
        """The plant's context at the driver's state x = (p, quaternion w x y z, v, ω body)."""
        pc = self.plant.GetMyMutableContextFromRoot(self._context)
        quat = x[3:7] / np.linalg.norm(x[3:7])
        w = _cube._rotation(theta_of(quat)) @ x[10:13]
        self.plant.SetPositionsAndVelocities(pc, np.concatenate([quat, x[0:3], w, x[7:10]]))
        return pc

    def step(self, x: Any) -> np.ndarray:
        """One discrete update of the plant (its ``Simulator`` from time 0 to ``time_step``: Drake's
        own step) from the driver's state x, returned in the same coordinates."""
        from pydrake.systems.analysis import Simulator

        if self._sim is None:
            self._sim = Simulator(self.diagram, self._context)
        self._context.SetTime(0.0)
        pc = self._set(np.asarray(x, dtype=float))
        self._sim.Initialize()
        self._sim.AdvanceTo(self.dt)
        s = np.asarray(self.plant.GetPositionsAndVelocities(pc))
        quat = s[0:4] / np.linalg.norm(s[0:4])
        return np.concatenate([s[4:7], quat, s[10:13], _cube._rotation(theta_of(quat)).T @ s[7:10]])

    def depths(self, x: Any) -> Dict[int, float]:
        """Corner -> penetration depth of the pairs Drake's point-contact query reports at x (the
        pairs its step makes contacts of)."""
        pc = self._set(np.asarray(x, dtype=float))
        query = self.plant.get_geometry_query_input_port().Eval(pc)
        out = {}
        for p in query.ComputePointPairPenetration():
            corner = self.corner_of.get(p.id_A, self.corner_of.get(p.id_B))
            if corner is not None:
                out[corner] = float(p.depth)
        return out


class DrakeCubeStep:
    """Drake's step of the cube for the black-box driver: ``step(x, dt)`` is one discrete update of
    a plant built at time_step dt (Drake fixes the step when the plant is finalised; one plant per
    dt asked, kept), the state MuJoCo's free-joint (p, quaternion w x y z, v, ω body: declared
    ``("free", 0)``); one guard pair per corner: entry, minus the depth Drake's point query reports
    for that corner (its step makes a contact exactly there), else the float64 height kept positive;
    release, the depth while reported, else minus the height (the force's own clamp, continuous, is
    left to the driver to locate)."""

    def __init__(self, cube: Any, approximation: str, setting: Dict[str, float]) -> None:
        self.cube, self.approximation, self.setting = cube, approximation, dict(setting)
        self._plants: Dict[float, DrakeCube] = {}
        self._memo: Any = None

    def plant_at(self, dt: float) -> DrakeCube:
        dt = float(dt)
        if dt not in self._plants:
            if len(self._plants) > 512:
                self._plants.pop(next(iter(self._plants)))
            self._plants[dt] = DrakeCube(self.cube, self.approximation, self.setting, dt)
        return self._plants[dt]

    def step(self, x: Any, dt: float) -> np.ndarray:
        return self.plant_at(dt).step(x)

    def corner_guards(self, x: Any) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        key = x.tobytes()
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        depth = next(iter(self._plants.values())).depths(x)
        heights = x[2] + (float(self.cube.half_side) * _cube.CORNERS @ _cube._rotation(theta_of(x[3:7])).T)[:, 2]
        out = np.empty(16)
        for c in range(8):
            outside = max(float(heights[c]), _cube._TINY)
            out[2 * c] = -depth[c] if c in depth else outside
            out[2 * c + 1] = depth[c] if c in depth else -outside
        self._memo = (key, out)
        return out

    def guard(self, i: int, x: Any) -> float:
        return float(self.corner_guards(x)[i])

    def step_function(self, dt: float) -> Any:
        """The :class:`ferromotion.StepFunction` (float64, ``("free", 0)``), its first plant at dt."""
        import functools

        from .. import StepFunction

        self.plant_at(dt)
        guards = [functools.partial(self.guard, i) for i in range(16)]
        return StepFunction(self.step, guards=guards, resets=[None] * 16, manifold=[("free", 0)],
                            name=f"drake-{self.approximation} cube, a guard pair per corner")
