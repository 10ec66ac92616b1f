"""The tumbling cube (``fm.systems.TumblingCube``) in the force-law engines, Newton and Drake:
their models, their own gradients carried to the cube's tangent coordinates, the restitution each
realises at each strike, and the rows of ``_cube.table`` (docs/engines.md, "The tumbling cube in
Newton and Drake").

**Why these engines need the corner's effective mass.** Newton's ``SolverSemiImplicit`` penalty and
Drake's SAP (Kelvin–Voigt, relaxation time τ) are *force* laws on the struck corner: its normal
motion is an oscillator of the corner's effective mass m_eff = 1/(1/m + |r×n|²/I) (r the corner
from the centre, I = 2/3·m·a² the cube's isotropic inertia), so the damping ratio, and with it the
stiff-limit restitution, is kd/(2·sqrt(k·m_eff)). Drake's TAMSI (Hunt–Crossley) restitution depends
on d_hc·u instead (u the corner's normal impact speed), not on the mass. The fixture's corners
strike with m_eff 0.607 kg then 0.401 kg and u 2.50 then 3.03 m/s: one setting cannot realise e =
0.5 at both strikes. Each engine's damping is therefore chosen for the **first** strike: its law's
closed form (:func:`setting_for`, from the exact flight's state just before it: :func:`strikes`)
is the stiff limit only, so the damping is bisected on the engine's own rebound there
(:func:`tune`); the second strike's restitution is the law's stiff limit for its corner
(:func:`law_restitutions`) and is measured on the engine's own rollout from x0
(:func:`realised_restitutions`, from the impulse). Past the second strike each row is judged
twice: against the exact J (e = 0.5 at both) and against the rigid J at the e the engine
realised there (:func:`realised_law_fixture`): what is left is the gradient's own error.

**Coordinates.** The cube's x = (c, θ, v, ω): θ a world-frame rotation vector, ω world-frame; its J
in tangent coordinates with a world-frame rotation δ left-multiplied (R' = Exp(δ)·R), as
``_cube.to_cube_tangent`` documents. Newton's body holds (p, quaternion xyzw) and (v, ω) in the
world frame; Drake's quaternion floating body (quaternion wxyz, p) and (ω, v) in the world frame.
Each engine's own gradient is seeded on the engine's raw coordinates through
``_rotations.tangent_in`` (δ → d quaternion) and read back through ``_rotations.tangent_out``
(d quaternion → δ).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from . import _cube


# -- the strikes and the laws' restitution -------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Strike:
    """A corner strike of the exact answer: its time, corner (``_cube.CORNERS`` order), the corner's
    normal speed just before it u (m/s) and its effective mass m_eff = 1/(1/m + |r×n|²/I) (kg)."""

    t: float
    corner: int
    speed: float
    effective_mass: float


def corner_kinematics(x: Any, half_side: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """At the cube's x: the corners' offsets from the centre r (8, 3), positions (8, 3) and
    velocities (8, 3), all in the world frame."""
    x = np.asarray(x, dtype=float)
    r = (half_side * _cube.CORNERS) @ _cube._rotation(x[3:6]).T
    return r, x[:3] + r, x[6:9] + np.cross(x[9:12], r)


def strikes(cube: Any, x0: Sequence[float], t_final: float) -> List[Strike]:
    """The exact answer's strikes before ``t_final``, each with the struck corner's normal speed and
    effective mass read from the exact flight's state just before it (corner: the lowest)."""
    out = []
    inertia = 2.0 / 3.0 * float(cube.mass) * float(cube.half_side) ** 2
    for imp in cube.solve(list(x0), t_final).impacts:
        before = cube.solve(list(x0), float(imp["t"]) * (1.0 - 1e-9)).state
        r, pos, vel = corner_kinematics(before, float(cube.half_side))
        c = int(np.argmin(pos[:, 2]))
        lever = float(r[c, 0] ** 2 + r[c, 1] ** 2)  # |r×n|² with n = z
        out.append(Strike(t=float(imp["t"]), corner=c, speed=float(-vel[c, 2]),
                          effective_mass=1.0 / (1.0 / float(cube.mass) + lever / inertia)))
    return out


def law_restitutions(engine: str, setting: Dict[str, float], hits: Sequence[Strike]) -> List[float]:
    """The stiff-limit restitution the engine's law realises at each strike with ``setting`` (the
    damping chosen for the first): Newton's undamped release ``newton_restitution(ζ)``, SAP's
    push-only ``limit_restitution(ζ)``, with ζ = kd/(2·sqrt(k·m_eff)); TAMSI's Hunt–Crossley at
    d_hc·u."""
    import dataclasses as dc

    from .. import Drop, limit_restitution
    from ._drake import hunt_crossley_restitution
    from ._newton import newton_restitution

    out = []
    for s in hits:
        if engine == "drake-tamsi":
            out.append(hunt_crossley_restitution(setting["hunt_crossley"] * s.speed, 400))
            continue
        zeta = setting["kd"] / (2.0 * math.sqrt(setting["k"] * s.effective_mass))
        out.append(newton_restitution(zeta) if engine == "newton" else limit_restitution(dc.replace(Drop(), zeta=zeta)))
    return out


def setting_for(engine: str, cube: Any, k: float, first: Strike) -> Dict[str, float]:
    """The engine's contact setting at stiffness k whose stiff limit realises the cube's restitution
    at the ``first`` strike (closed form, from its effective mass or speed)."""
    from ._cube import zeta_for
    from ._drake import hunt_crossley_for
    from ._newton import _invert, newton_restitution

    e = float(cube.restitution)
    if engine == "newton":
        zeta = _invert(newton_restitution, e)
    elif engine == "drake-sap":
        zeta = zeta_for(e)
    elif engine == "drake-tamsi":
        return {"k": float(k), "kd": 0.0, "hunt_crossley": hunt_crossley_for(e, first.speed)}
    else:
        raise ValueError(f"engine: 'newton', 'drake-tamsi' or 'drake-sap', got {engine!r}")
    return {"k": float(k), "kd": 2.0 * zeta * math.sqrt(k * first.effective_mass), "hunt_crossley": 0.0}


def realised_restitutions(trajectory: np.ndarray, cube: Any, dt: float) -> List[Tuple[int, float]]:
    """(corner, realised restitution) of each corner contact in a trajectory of cube states (one per
    step of dt, in time order), from the impulse the engine applied: with the last state before the
    corner goes below the floor and the first after it is back above, λ = m·Δv_z + m·g·(time
    between), and e = λ/(m_eff·u) − 1 (u the corner's normal speed and m_eff its effective mass in
    the state before): the rigid law's e for the same impulse. (The corner's own normal velocity
    after the contact is not the measure: the cube spins at ~23 rad/s after the first strike, and
    its corner's normal velocity changes by up to ~90 m/s² of centripetal acceleration in flight.)"""
    a, m, g = float(cube.half_side), float(cube.mass), float(cube.gravity)
    inertia = 2.0 / 3.0 * m * a * a
    kin = [corner_kinematics(x, a) for x in trajectory]
    h = np.array([pos[:, 2] for _, pos, _ in kin])
    found = []
    for c in range(8):
        i = 1
        while i < len(h):
            if h[i, c] <= 0.0 < h[i - 1, c]:
                j = i
                while j < len(h) and h[j, c] <= 0.0:
                    j += 1
                if j < len(h):
                    r, _, vel = kin[i - 1]
                    m_eff = 1.0 / (1.0 / m + (r[c, 0] ** 2 + r[c, 1] ** 2) / inertia)
                    impulse = m * (trajectory[j][8] - trajectory[i - 1][8]) + m * g * (j - i + 1) * dt
                    found.append((i, c, float(impulse / (m_eff * -vel[c, 2]) - 1.0)))
                i = j
            i += 1
    return [(c, e) for _, c, e in sorted(found)]


# -- the engines, tuned on their own first rebound -------------------------------------------------
ENGINES = ("newton", "drake-tamsi", "drake-sap")
#: Each engine's own gradient, as its row's route.
ROUTES = {"newton": "own gradient, wp.Tape (float32)", "drake-tamsi": "own gradient, AutoDiffXd (TAMSI)",
          "drake-sap": "own gradient, AutoDiffXd (SAP)"}
#: The damping each engine's setting tunes: Newton's and SAP's kd, TAMSI's Hunt–Crossley d_hc.
KNOB = {"newton": "kd", "drake-tamsi": "hunt_crossley", "drake-sap": "kd"}


class Runner:
    """An engine's cube at a setting and step dt: ``trajectory(x0, t)`` (its state at every step)
    and ``gradient(x0, horizons)`` ({T: (x(T), J, wall s)}, J in the cube's tangent coordinates).
    Newton's model is built once and its damping reassigned (:meth:`retune`)."""

    def __init__(self, engine: str, cube: Any, setting: Dict[str, float], dt: float) -> None:
        if engine not in ENGINES:
            raise ValueError(f"engine: one of {', '.join(ENGINES)}, got {engine!r}")
        self.engine, self.cube, self.dt, self.setting = engine, cube, float(dt), dict(setting)
        self._model: Any = None

    def retune(self, setting: Dict[str, float]) -> None:
        self.setting = dict(setting)
        if self.engine == "newton" and self._model is not None:
            self._model.set_damping(self.setting["kd"])
        else:
            self._model = None

    def model(self, worlds: int = 1) -> Any:
        if self._model is None or getattr(self._model, "worlds", 1) < worlds:
            if self.engine == "newton":
                from ._cube_newton import NewtonCube

                self._model = NewtonCube(self.cube, self.setting["k"], self.setting["kd"], worlds)
            else:
                from ._cube_drake import DrakeCube

                self._model = DrakeCube(self.cube, self.engine.split("-", 1)[1], self.setting, self.dt)
        return self._model

    def trajectory(self, x0: Any, t_final: float) -> np.ndarray:
        if self.engine == "newton":
            return self.model().trajectory(x0, t_final, self.dt)
        return self.model().trajectory(x0, t_final)

    def gradient(self, x0: Any, horizons: Sequence[float], progress: Any = None) -> Dict[float, Any]:
        import time

        if self.engine != "newton":
            return self.model().gradient(x0, horizons, progress)
        out = {}
        for t_final in sorted(horizons):
            start = time.perf_counter()
            x, jac = self.model(12).gradient(x0, t_final, self.dt)
            out[t_final] = (x, jac, time.perf_counter() - start)
            if progress is not None:
                progress(f"newton wp.Tape to {t_final:g} s: {out[t_final][2]:.0f} s")
        return out


def first_rebound(runner: Runner, start: Any, corner: int, span: float = 0.03) -> float:
    """The restitution the engine realises at ``corner``'s first contact from ``start`` within
    ``span`` s (its own rollout; :func:`realised_restitutions`)."""
    got = [e for c, e in realised_restitutions(runner.trajectory(start, span), runner.cube, runner.dt) if c == corner]
    if not got:
        raise RuntimeError(f"{runner.engine}: corner {corner} made no complete contact within {span} s")
    return got[0]


def tune(runner: Runner, x0: Any, first: Strike, iters: int = 30) -> Dict[str, float]:
    """The engine's damping bisected so that its own rebound at the first strike realises the cube's
    restitution, each trial from the engine's own state on its own time grid ~13 ms before the strike
    (its run from x0 is flight until then): its law's closed form (:func:`setting_for`) misses it at
    finite stiffness and step, and the rebound depends on where touchdown falls between two steps
    (the force jumps there). Returns the setting (the runner keeps it) with ``closed_form_e``, the
    rebound the closed form's damping gives there."""
    target = float(runner.cube.restitution)
    knob = KNOB[runner.engine]
    base = setting_for(runner.engine, runner.cube, runner.setting["k"], first)
    start = runner.trajectory(x0, math.floor((first.t - 0.013) / runner.dt) * runner.dt)[-1]

    def rebound(value: float) -> float:
        runner.retune({**base, knob: value})
        return first_rebound(runner, start, first.corner)

    closed = rebound(base[knob])
    lo, hi = 0.0, 4.0 * base[knob]
    if rebound(hi) > target or rebound(lo) < target:
        raise RuntimeError(f"{runner.engine}: no damping in [0, {hi:.4g}] gives e = {target} at the first strike")
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if rebound(mid) > target:
            lo = mid
        else:
            hi = mid
    runner.retune({**base, knob: 0.5 * (lo + hi)})
    return {**runner.setting, "closed_form_e": closed}


def restitution_note(realised: Sequence[Tuple[int, float]], law: Sequence[float], hits: Sequence[Strike]) -> str:
    """The row's note: each contact's realised restitution (corner: e), and the stiff limit of the
    law at each exact strike with the damping derived for the first (:func:`setting_for`)."""
    got = ", ".join(f"c{c} {e:.3f}" for c, e in realised)
    want = ", ".join(f"c{s.corner} {e:.3f}" for s, e in zip(hits, law))
    return f"e realised {got}; the law's stiff limit {want}"


def realised_law_fixture(cube: Any, x0: Sequence[float], hits: Sequence[Strike], second: float,
                         t_final: float) -> Dict[str, Any]:
    """The horizon fixture of ``_cube.horizon_fixture`` with its exact answer replaced by the rigid
    cube's with restitution ``second`` at the second strike (the cube's own at the first): the exact
    flight to between the strikes, then a cube of restitution ``second`` to ``t_final``, J
    composed in the cube's tangent coordinates (J = J₂·J₁). The reference for an engine that
    realises e = ``second`` there: its gradient's own error, the law's mismatch taken out."""
    doc = _cube.horizon_fixture(cube, x0, t_final)
    t_mid = 0.5 * (hits[0].t + hits[1].t)
    first = cube.solve(list(x0), t_mid)
    other = type(cube)(half_side=float(cube.half_side), mass=float(cube.mass), restitution=float(second),
                       gravity=float(cube.gravity))
    rest = other.solve(list(first.state), t_final - t_mid)
    doc["name"] += f", e = {second:.3f} at the second strike"
    doc["exact"]["state"] = rest.state.tolist()
    doc["exact"]["jacobian"] = (np.asarray(rest.jacobian) @ np.asarray(first.jacobian)).tolist()
    return doc


def realised_law_note(cube: Any, x0: Sequence[float], hits: Sequence[Strike],
                      realised: Sequence[Tuple[int, float]], row: Any, x: Any, jac: Any) -> str:
    """For a row past the second strike: the core's judgement of (x, J) against the rigid answer at
    the restitution the engine realised there (:func:`realised_law_fixture`), as a note."""
    from .conformance import conformance

    if row.strikes < 2 or len(hits) < 2:
        return ""
    after = [e for c, e in realised if c == hits[1].corner]
    if not after:
        return ""
    doc = realised_law_fixture(cube, x0, hits, after[0], row.horizon)
    c = conformance(doc, x, jac)
    return (f"; vs the rigid J at its realised e = {after[0]:.3f} there: state err {c.state_error:.2e}, "
            f"grad err {c.gradient_error:.2e}, key {c.key:.4g} ({c.key_exact:.4g}), {c.verdict}")


def force_rows(engine: str, cube: Any, x0: Sequence[float], k: float, dt: float,
               horizons: Sequence[float] = _cube.HORIZONS, progress: Any = None,
               driver: bool = False) -> List[Any]:
    """Newton or Drake on the cube at stiffness k and step dt, the damping tuned on the engine's own
    first rebound (:func:`tune`): per horizon, the engine's own gradient judged by the core
    (``_cube.judge``), each row's note the restitution realised at each strike of the engine's own
    rollout from x0 and its law's stiff limit there (:func:`restitution_note`). With ``driver``,
    also the black-box driver on the engine's same step (:func:`driver_row`)."""
    import time

    hits = strikes(cube, x0, max(horizons))
    runner = Runner(engine, cube, setting_for(engine, cube, k, hits[0]), dt)
    start = time.perf_counter()
    setting = tune(runner, x0, hits[0])
    if progress is not None:
        progress(f"{engine} k = {k:g}: {KNOB[engine]} = {setting[KNOB[engine]]:.6g} by bisection on its first "
                 f"rebound ({time.perf_counter() - start:.0f} s)")
    realised = realised_restitutions(runner.trajectory(x0, max(horizons)), cube, dt)
    note = restitution_note(realised, law_restitutions(engine, setting_for(engine, cube, k, hits[0]), hits), hits)
    note += (f"; {KNOB[engine]} {setting[KNOB[engine]]:.4g} (the closed form's "
             f"{setting_for(engine, cube, k, hits[0])[KNOB[engine]]:.4g} gives c{hits[0].corner} "
             f"{setting['closed_form_e']:.3f})")
    out = []
    for t_final, (x, jac, wall) in sorted(runner.gradient(x0, horizons, progress).items()):
        doc = _cube.horizon_fixture(cube, x0, t_final)
        row = _cube.judge(engine, ROUTES[engine], k, dt, doc, x, jac, wall)
        more = realised_law_note(cube, x0, hits, realised, row, x, jac)
        out.append(dataclasses.replace(row, note=note + more))
        if driver:
            got, x, jac = driver_row(engine, cube, x0, setting, dt, doc, progress)
            more = "" if x is None else realised_law_note(cube, x0, hits, realised, got, x, jac)
            out.append(dataclasses.replace(got, note=note + more))
    return out


def driver_row(engine: str, cube: Any, x0: Sequence[float], setting: Dict[str, float], dt: float,
               doc: Dict[str, Any], progress: Any = None) -> Tuple[Any, Any, Any]:
    """(row, x(T), J) of the black-box driver (``fm.hybrid_jacobian``) through the engine's own step at dt, a guard
    pair per corner: Newton's float32 step batched over worlds (``precision="float32"``), Drake's
    discrete update; J carried from MuJoCo's free-joint tangent coordinates to the cube's
    (``_cube.to_cube_tangent``) and judged by the core; a refusal is the row (x and J None)."""
    import time

    from .. import FerroError, hybrid_jacobian

    if engine == "newton":
        from ._cube_newton import NewtonCubeStep

        system = NewtonCubeStep(cube, setting["k"], setting["kd"]).step_function()
        route = "black-box driver on its f32 step"
    else:
        from ._cube_drake import DrakeCubeStep

        system = DrakeCubeStep(cube, engine.split("-", 1)[1], setting).step_function(dt)
        route = "black-box driver on its step"
    qpos, qvel = _cube.to_mujoco(x0)
    start = time.perf_counter()
    try:
        s = hybrid_jacobian(system, np.concatenate([qpos, qvel]), 0.0, float(doc["t_final"]), dt=dt, halve_dt=False,
                            progress=False)
    except FerroError as e:  # the driver's typed refusal is the row
        row = _cube.refused(engine, route, setting["k"], dt, doc, e, time.perf_counter() - start)
        x_end = jac = None
    else:
        x_end = _cube.from_mujoco(s.x[:7], s.x[7:13])
        jac = _cube.to_cube_tangent(s.jacobian, x0, x_end)
        row = _cube.judge(engine, route, setting["k"], dt, doc, x_end, jac, time.perf_counter() - start)
        row = dataclasses.replace(row, events=len(s.events), jacobian=jac.tolist(), resolution=s.resolution)
    if progress is not None:
        progress(f"{engine} driver to {doc['t_final']:g} s: {row.verdict} ({row.wall_s:.0f} s)")
    return row, x_end, jac
