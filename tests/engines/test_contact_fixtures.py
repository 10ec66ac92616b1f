"""Real engines on the 2-D contact fixtures: the V-groove (90 degrees, 100 degrees, off its axis)
and the cylinder, judged by the core (fm.conformance) against their exact event-driven answers.

The independent route is the core's exact answer (closed-form flights, impacts located to
adjacent floats, saltation matrices; itself held against a 50-digit oracle in tests/test_systems.py)
and facts that need no answer at all: a mirror symmetry the engine's model has, and central
differences of the engine's own map. What these tests pin:

* MuJoCo's x(T) converges towards the exact x(T) as its contact stiffens, while its own gradient
  (mjd_transitionFD chained) moves away from the exact J and has the wrong sign: the fixed-step
  soft-contact gradient diverges on the groove and the cylinder as on the drop;
* that gradient is the derivative of MuJoCo's own map (central differences agree): the adapter
  reports MuJoCo's numbers, not an artefact of the chaining;
* on the set-valued 100 degree groove MuJoCo and Drake keep the model's mirror symmetry (x stays
  on the axis) and so pick neither order's outcome: the core says so (`equidistant`);
* `ferromotion audit --engine mujoco --fixture v_groove_100` prints that verdict.
"""

from __future__ import annotations

import numpy as np
import pytest
from support import run_cli

from ferromotion.engines import engine_adapter
from ferromotion.engines.conformance import conformance, load_fixture, run_fixture

DT = 1e-4


@pytest.fixture(scope="module")
def mujoco_adapter():  # type: ignore[no-untyped-def]
    pytest.importorskip("mujoco")
    return engine_adapter("mujoco")


@pytest.mark.parametrize("name", ["v_groove_off_axis", "cylinder"])
def test_mujoco_state_converges_as_contact_stiffens_while_its_gradient_diverges(mujoco_adapter, name: str) -> None:
    doc = load_fixture(name)
    verdicts = []
    for k in (1e4, 1e5, 1e6):
        x, j = run_fixture(mujoco_adapter, doc, k, DT)
        verdicts.append(conformance(doc, x, j))
    states = [c.state_error for c in verdicts]
    grads = [c.gradient_error for c in verdicts]
    # x(T) approaches the rigid answer (the stiff limit of the mapped law)...
    assert states[0] > states[1] > states[2], states
    assert states[2] < 0.05, states
    # ...while the gradient moves away from the exact J, several-fold per decade of k, and its key
    # entry dv_x(T)/dp_x0 ends with the wrong sign.
    assert grads[2] > 5.0 * grads[0] and grads[0] > 1.0, grads
    assert verdicts[2].verdict == "wrong" and verdicts[2].sign == "wrong", verdicts[2]
    assert np.sign(verdicts[2].key_exact) == np.sign(np.asarray(doc["exact"]["jacobian"])[2, 0])


def test_mujocos_chained_step_jacobian_is_the_derivative_of_its_own_map(mujoco_adapter) -> None:
    doc = load_fixture("v_groove_off_axis")
    k, eps = 1e5, 1e-6
    x0 = np.asarray(doc["initial_state"], dtype=float)
    _, j = run_fixture(mujoco_adapter, doc, k, DT)
    fd = np.empty((4, 4))
    for c in range(4):
        e = np.zeros(4)
        e[c] = eps
        plus, _ = run_fixture(mujoco_adapter, doc, k, DT, x0 + e, jac=False)
        minus, _ = run_fixture(mujoco_adapter, doc, k, DT, x0 - e, jac=False)
        fd[:, c] = (plus - minus) / (2 * eps)
    assert np.max(np.abs(fd - j)) < 1e-3 * np.max(np.abs(j)), (fd, j)


def test_mujoco_keeps_the_mirror_symmetry_of_the_obtuse_groove_and_picks_neither_outcome(mujoco_adapter) -> None:
    doc = load_fixture("v_groove_100")
    outcomes = [o["state"] for o in doc["exact"]["outcomes"]]
    # The exact outcomes are mirror images off the axis (the core's, independently of MuJoCo).
    assert outcomes[0][0] == pytest.approx(-outcomes[1][0]) and abs(outcomes[0][0]) > 0.2
    x, j = run_fixture(mujoco_adapter, doc, 1e5, DT)
    # MuJoCo's model is mirror-symmetric and it solves both contacts together: x stays on the axis.
    assert abs(x[0]) < 1e-9 and abs(x[2]) < 1e-9, x
    c = conformance(doc, x, j)
    assert (c.verdict, c.sign, c.gradient_error, c.key_exact) == ("set_valued", None, None, None)
    assert c.outcomes is not None and c.outcomes["decision"] == "equidistant", c.outcomes
    assert c.outcomes["nearest"] is None and c.nearest.startswith("neither")


def test_mujoco_on_the_right_angled_groove_approaches_the_exact_state(mujoco_adapter) -> None:
    doc = load_fixture("v_groove_90")
    x, j = run_fixture(mujoco_adapter, doc, 1e6, DT)
    c = conformance(doc, x, j)
    # One Jacobian exists here (the orders commute): the verdict is an ordinary one.
    assert c.outcome == "differentiable" and c.pieces is None and c.outcomes is None
    assert c.state_error < 0.03, c
    assert c.verdict == "wrong", c


def test_drake_keeps_the_mirror_symmetry_too_and_runs_the_cylinder() -> None:
    pytest.importorskip("pydrake")
    ad = engine_adapter("drake-sap")
    doc = load_fixture("v_groove_100")
    x, j = run_fixture(ad, doc, 1e4, DT)
    assert abs(x[0]) < 1e-9 and abs(x[2]) < 1e-9, x
    c = conformance(doc, x, j)
    assert c.verdict == "set_valued" and c.outcomes["decision"] == "equidistant", c
    cyl = load_fixture("cylinder")
    x, j = run_fixture(ad, cyl, 1e4, DT)
    c = conformance(cyl, x, j)
    # The ball leaves the cylinder on the side it fell (x > 0, moving away), near the exact state.
    assert x[0] > 0.5 and x[2] > 0.0 and c.state_error < 0.15, (x, c)


def test_the_audit_command_runs_an_engine_on_a_fixture_and_prints_the_core_verdict() -> None:
    pytest.importorskip("mujoco")
    out = run_cli("audit", "--engine", "mujoco", "--fixture", "v_groove_100", "--k-min", "1e4", "--k-max", "1e4",
                  "--per-decade", "1", timeout=300)
    assert out.returncode == 0, out.stderr
    assert "set_valued" in out.stdout and "neither" in out.stdout, out.stdout
    bad = run_cli("audit", "--fixture", "v_groove_100", timeout=120)
    assert bad.returncode == 2 and "--engine" in bad.stderr
