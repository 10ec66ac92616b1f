"""The tumbling cube in Newton and Drake (ferromotion.engines._cube_force, _cube_newton,
_cube_drake; the table is scripts/cube_engines.py --engines newton,drake).

Never a mock: Newton and Drake run every step. Each fact against an independent route:
* each model's mass and inertia is the cube's (the core's closed form 2/3·m·a²);
* in flight, each engine's own gradient (Newton's ``wp.Tape``, Drake's AutoDiffXd) carried to the
  cube's tangent coordinates equals the core's exact J, and so does the black-box driver's J through
  each engine's step (a second route to the same coordinates: MuJoCo's free-joint tangent);
* the force laws' restitution depends on the struck corner's effective mass (Newton, SAP) or its
  impact speed (TAMSI): at stiff contact and a fine step, the damping derived for the first strike
  realises e = 0.5 there, and the second strike realises the law's stiff-limit prediction for its
  lighter, faster corner, measured on each engine's own rebound;
* the damping bisected on the engine's own rebound (from the exact flight's state) realises e = 0.5
  at the first strike of the engine's full run from x0.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("newton", reason="Newton is installed only in .venv-engines (scripts/engines_env.sh)")
pytest.importorskip("pydrake", reason="Drake is installed only in .venv-engines (scripts/engines_env.sh)")

import ferromotion as fm  # noqa: E402
from ferromotion.engines import _cube, _cube_force  # noqa: E402
from ferromotion.engines._cube_drake import DrakeCube, DrakeCubeStep  # noqa: E402
from ferromotion.engines._cube_newton import NewtonCube, NewtonCubeStep  # noqa: E402

X0 = [0.0, 0.0, 0.5, 0.5, 0.3, 0.2, 0.2, 0.0, 0.0, 2.0, 1.0, -1.0]
CUBE = fm.systems.TumblingCube(half_side=0.1, mass=1.0, restitution=0.5)
INERTIA = 2.0 / 3.0 * CUBE.mass * CUBE.half_side ** 2
SETTING = {"k": 1e6, "kd": 300.0, "hunt_crossley": 0.2}


def test_newton_and_drake_hold_the_cubes_mass_and_inertia() -> None:
    newton = NewtonCube(CUBE, 1e6, 300.0)
    assert np.allclose(newton.model.body_mass.numpy(), CUBE.mass, rtol=1e-6)
    assert np.allclose(newton.model.body_inertia.numpy()[0], INERTIA * np.eye(3), rtol=1e-6, atol=0)
    assert np.allclose(newton.model.body_com.numpy(), 0.0)
    for approximation in ("tamsi", "sap"):
        drake = DrakeCube(CUBE, approximation, SETTING, 1e-4)
        assert np.allclose(drake.inertia(), INERTIA * np.eye(3), rtol=1e-12)
        assert drake.plant.CalcTotalMass(drake.plant.CreateDefaultContext()) == pytest.approx(CUBE.mass, rel=1e-12)


def test_in_flight_each_engines_own_gradient_is_the_exact_jacobian() -> None:
    t_final = 0.2
    exact = CUBE.solve(X0, t_final)
    assert exact.impacts == []
    x, jac = NewtonCube(CUBE, 1e6, 300.0, worlds=12).gradient(X0, t_final, 1e-4)
    # float32 through 2,000 steps, and Newton's rotation update (q + dt/2·ω⊗q, normalised in float32)
    # changes |ω| by a few float32 ulps a step: J to 1e-3 of its unit scale.
    assert np.max(np.abs(jac - exact.jacobian)) < 1e-3
    assert np.max(np.abs(x - exact.state)) < 9.81 * t_final * 1e-4 + 1e-3
    for approximation in ("tamsi", "sap"):
        got = DrakeCube(CUBE, approximation, SETTING, 1e-4).gradient(X0, [t_final])
        x, jac, _ = got[t_final]
        # float64, a first-order quaternion update: O(|ω|²·dt) of the rotation rows.
        assert np.max(np.abs(jac - exact.jacobian)) < 1e-4
        assert np.max(np.abs(x - exact.state)) < 9.81 * t_final * 1e-4 + 1e-6


def test_in_flight_the_drivers_jacobian_through_each_engines_step_is_the_exact_one() -> None:
    # Newton's at a coarse step: its float32 state rounds every step, and 50 steps of that already move the
    # driver's J by about its float32 tolerance (the table's long runs show what that does).
    t_final = 0.05
    exact = CUBE.solve(X0, t_final)
    qpos, qvel = _cube.to_mujoco(X0)
    x0 = np.concatenate([qpos, qvel])
    for name, dt, system in (("newton", 1e-2, NewtonCubeStep(CUBE, 1e6, 300.0).step_function()),
                             ("drake-sap", 1e-3, DrakeCubeStep(CUBE, "sap", SETTING).step_function(1e-3))):
        s = fm.hybrid_jacobian(system, x0, 0.0, t_final, dt=dt, halve_dt=False, progress=False)
        assert s.events == ()
        x_end = _cube.from_mujoco(s.x[:7], s.x[7:13])
        jac = _cube.to_cube_tangent(s.jacobian, X0, x_end)
        # Newton's first-order rotation update at |ω|·dt = 0.025 errs by O((|ω|·dt)²) a step in J's rotation rows.
        assert np.max(np.abs(jac - exact.jacobian)) < (3e-3 if name == "newton" else 1e-4), name


def _rebound(engine: str, setting: dict, start: np.ndarray, corner: int, dt: float) -> float:
    return _cube_force.first_rebound(_cube_force.Runner(engine, CUBE, setting, dt), start, corner)


@pytest.mark.parametrize("engine", _cube_force.ENGINES)
def test_the_law_matched_at_the_first_strike_realises_its_own_prediction_at_the_second(engine: str) -> None:
    hits = _cube_force.strikes(CUBE, X0, 0.45)
    assert [h.corner for h in hits] == [i["corner"] for i in CUBE.solve(X0, 0.45).impacts]
    assert hits[1].effective_mass < hits[0].effective_mass and hits[1].speed > hits[0].speed
    setting = _cube_force.setting_for(engine, CUBE, 1e7, hits[0])
    law = _cube_force.law_restitutions(engine, setting, hits)
    assert law[0] == pytest.approx(CUBE.restitution, abs=1e-6)
    # Each strike from the exact state 13 ms before it, at k = 1e7 N/m and dt = 1e-5 s: stiff and fine, the
    # stiff limit to a few hundredths of e (the step's own dissipation, the force's jump at touchdown).
    got = [_rebound(engine, setting, CUBE.solve(X0, h.t - 0.013).state, h.corner, 1e-5) for h in hits]
    assert got[0] == pytest.approx(CUBE.restitution, abs=0.04), got
    assert got[1] == pytest.approx(law[1], abs=0.04), (got, law)
    # ... and the second is not the first: the same setting realises less at the lighter, faster corner,
    # as the law predicts (no one setting of this law gives e = 0.5 at both strikes).
    assert got[1] < got[0] - 0.03 and law[1] < law[0] - 0.03, (got, law)


@pytest.mark.parametrize("engine", ["newton", "drake-sap"])
def test_the_damping_bisected_on_the_engines_own_rebound_gives_the_first_strike_its_restitution(engine: str) -> None:
    hits = _cube_force.strikes(CUBE, X0, 0.28)
    runner = _cube_force.Runner(engine, CUBE, _cube_force.setting_for(engine, CUBE, 1e6, hits[0]), 1e-4)
    setting = _cube_force.tune(runner, X0, hits[0], iters=20)
    # Measured on the engine's full run from x0 (not the exact flight's state the bisection started from).
    realised = _cube_force.realised_restitutions(runner.trajectory(X0, 0.28), CUBE, 1e-4)
    assert [c for c, _ in realised] == [hits[0].corner]
    # float32 Newton's start differs by its flight's rounding; its force jumps at the first contact step.
    tolerance = 5e-3 if engine == "newton" else 1e-4
    assert realised[0][1] == pytest.approx(CUBE.restitution, abs=tolerance), (setting, realised)


def test_newtons_float32_step_is_refused_by_the_driver_in_flight_already() -> None:
    # What refuses Newton's cube through the strikes is its float32 step's rounding, not the contact: 500
    # steps of flight alone, no contact anywhere, move the driver's J by more than float32's tolerance at eps/2.
    qpos, qvel = _cube.to_mujoco(X0)
    assert CUBE.solve(X0, 0.05).impacts == []
    with pytest.raises(fm.ProbeDependent):
        fm.hybrid_jacobian(NewtonCubeStep(CUBE, 1e5, 200.0).step_function(), np.concatenate([qpos, qvel]), 0.0, 0.05,
                           dt=1e-4, halve_dt=False, progress=False)
