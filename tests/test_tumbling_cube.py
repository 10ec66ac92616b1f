"""The tumbling cube's exact route against an independent 50-digit event-driven simulation
(tests/cube_oracle.py: quaternions, strikes located by Newton at 50 digits, J by central
differences with tangent perturbations)."""

import numpy as np
import pytest

import ferromotion as fm
from cube_oracle import Cube, jacobian as oracle_jacobian

X0 = [0.0, 0.0, 0.5, 0.5, 0.3, 0.2, 0.2, 0.0, 0.0, 2.0, 1.0, -1.0]


@pytest.fixture(scope="module")
def oracle():
    return oracle_jacobian(Cube(0.1, 1.0, 0.5, 9.81), X0, 0.45)


def test_two_corner_strikes_with_the_oracles_times_and_corners(oracle):
    _, _, strikes = oracle
    s = fm.systems.TumblingCube(0.1, 1.0, 0.5).solve(X0, 0.45)
    assert [i["corner"] for i in s.impacts] == [k for _, k in strikes]
    assert np.allclose([i["t"] for i in s.impacts], [t for t, _ in strikes], rtol=0, atol=1e-12)


def test_position_velocity_block_within_1e_7_of_the_high_precision_oracle(oracle):
    state, jac, _ = oracle
    s = fm.systems.TumblingCube(0.1, 1.0, 0.5).solve(X0, 0.45)
    rows = [0, 1, 2, 6, 7, 8]          # c_T, v_T
    cols = [0, 1, 2, 6, 7, 8, 9, 10, 11]  # c_0, v_0, omega_0
    j = np.array(jac)
    assert np.max(np.abs(s.jacobian[np.ix_(rows, cols)] - j[np.ix_(rows, cols)])) < 1e-7
    assert np.max(np.abs(s.state - np.array(state))) < 1e-12


def test_whole_jacobian_in_tangent_coordinates_matches_the_oracle(oracle):
    _, jac, _ = oracle
    s = fm.systems.TumblingCube(0.1, 1.0, 0.5).solve(X0, 0.45)
    assert np.max(np.abs(s.jacobian - np.array(jac))) < 1e-7
    d = np.linspace(-1, 1, 12)
    assert np.allclose(s.jvp(d), np.array(jac) @ d, atol=1e-6)


def test_an_off_centre_strike_couples_linear_and_angular_motion(oracle):
    # The lever arm r x n: after a corner strike, v_T depends on omega_0 and omega_T on v_0.
    _, jac, _ = oracle
    j = np.array(jac)
    assert np.max(np.abs(j[6:9, 9:12])) > 0.1 and np.max(np.abs(j[9:12, 6:9])) > 1.0


def test_flight_without_strikes_has_the_closed_form_jacobian():
    s = fm.systems.TumblingCube().solve([0, 0, 5.0, 0.1, 0.2, 0.3, 0, 0, 0, 1.0, -2.0, 0.5], 0.3)
    assert s.impacts == []
    j = s.jacobian
    assert np.allclose(j[0:3, 6:9], 0.3 * np.eye(3), atol=1e-15)
    assert np.allclose(j[6:12, 6:12], np.eye(6), atol=1e-15)


@pytest.mark.parametrize("field, value, words", [
    ("half_side", -0.1, "half_side"), ("mass", 0.0, "mass"),
    ("restitution", 1.5, "restitution"), ("gravity", float("nan"), "gravity"),
])
def test_a_bad_parameter_is_refused_by_name(field, value, words):
    cube = fm.systems.TumblingCube(**{field: value})
    with pytest.raises(fm.FerroError, match=words):
        cube.solve(X0, 0.45)


def test_a_cube_starting_through_the_plane_is_refused():
    with pytest.raises(fm.FerroError, match="above the plane"):
        fm.systems.TumblingCube().solve([0, 0, 0.05] + X0[3:], 0.45)
