"""Regression tests for #12 (item 10): the same care in Python.

- the fixed route flags a step beyond semi-implicit Euler's stability limit (k = 1e9,
  dt = 1e-4 returned y = 3.5 m, v = +8.3 m/s after a 1 m drop, silently);
- ``QuadrupedReport.table()`` displays as a table;
- the README's own examples print plain numbers (no ``np.float64(...)``);
- ``Sweep.exponent()`` is the lab's nine-point exponent unless told otherwise.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from support import run_cli

import ferromotion as fm

ROOT = Path(__file__).resolve().parents[1]


def step_matrix_radius(drop: fm.Drop, k: float, dt: float) -> float:
    """Spectral radius of semi-implicit Euler's contact-phase step matrix, by numpy."""
    a_y = -k / drop.mass
    a_v = -2.0 * drop.zeta * np.sqrt(k * drop.mass) / drop.mass
    a = np.array([[1.0 + dt * dt * a_y, dt * (1.0 + dt * a_v)], [dt * a_y, 1.0 + dt * a_v]])
    return float(np.abs(np.linalg.eigvals(a)).max())


@pytest.mark.parametrize("k, dt", [(1e6, 1e-4), (1e8, 1e-4), (2.9e8, 1e-4), (4e8, 1e-4), (1e9, 1e-4), (1e9, 1e-5),
                                   (1e7, 8e-4)])
def test_the_fixed_route_flags_an_unstable_step(k: float, dt: float) -> None:
    """The flag is the closed-form eigenvalue test, and it predicts a real blow-up: a mass
    set down on the ground (1 nm up) settles into the spring at a stable step and ends
    farther from rest than it started at an unstable one."""
    drop = fm.Drop(height=1e-9, t_final=0.08)
    r = fm.fixed(drop, k=k, dt=dt)
    radius = step_matrix_radius(drop, k, dt)
    assert r.step_stable == (radius <= 1.0)
    assert r.omega_dt == pytest.approx(np.sqrt(k / drop.mass) * dt, rel=1e-12)
    assert fm.step_stability(drop, k, dt)["spectral_radius"] == pytest.approx(radius, rel=1e-9)
    y_eq = -drop.mass * drop.gravity / k

    def off(y: float, v: float) -> float:
        return float(np.hypot(y - y_eq, v * np.sqrt(drop.mass / k)))

    assert (off(*r.state) > off(drop.height, drop.velocity)) == (not r.step_stable)
    assert ("UNSTABLE STEP" in repr(r)) == (not r.step_stable)


def test_the_issues_blown_up_drop_is_flagged() -> None:
    r = fm.fixed(fm.Drop(), k=1e9, dt=1e-4)  # y = 3.5 m, v = +8.3 m/s after a 1 m drop from rest
    assert r.state[0] > fm.Drop().height and r.state[1] > 0
    assert r.step_stable is False and round(r.omega_dt, 2) == 3.16


def test_other_routes_have_no_step_to_flag() -> None:
    assert fm.exact(fm.Drop()).step_stable is None and fm.flow(fm.Drop(), 1e9).step_stable is None


def test_the_cli_audit_flags_unstable_rows() -> None:
    args = ["audit", "--k-min", "1e7", "--k-max", "1e9", "--rtol", "1e-6", "--quiet"]
    p = run_cli(*args, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "UNSTABLE STEP from k = " in p.stdout
    unstable = [line for line in p.stdout.splitlines() if re.match(r"^\s*\S+ !", line)]
    expected = sum(not fm.fixed(fm.Drop(), k=k, dt=1e-4).step_stable for k in fm.log_grid(7, 9, 2))
    assert len(unstable) == expected > 0


def test_the_quadruped_table_displays_as_a_table() -> None:
    q = fm.quadruped(stiffness=[1e4])
    t = q.table()
    html = t._repr_html_()
    assert html.startswith("<table") and html.count("<tr>") == 1 + len(q.laws)
    assert all(f"<th>{name}</th>" in html for name in t)
    # Printed in blocks of at most 120 columns, each a header and one row per law with the label
    # repeated; a note after them names the columns no row computed.
    text = str(t)
    assert max(len(line) for line in text.splitlines()) <= 120
    *blocks, note = [b.splitlines() for b in text.split("\n\n")]
    assert blocks[0][0].split()[:2] == ["label", "law"] and note[0].startswith("not computed")
    for b in blocks:
        assert len(b) == 1 + len(q.laws) and b[0].split()[0] == "label"
        assert b[1].startswith("rigid (LCP)") and b[2].startswith("penalty k=1e4")
    assert t["penetration"].shape == (2,)  # still the numpy columns


def test_the_readme_examples_print_plain_numbers() -> None:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert blocks
    for block in blocks:
        ns: dict = {}
        for stmt in ast.parse(block).body:
            code = ast.Module(body=[stmt], type_ignores=[])
            if isinstance(stmt, ast.Expr):
                value = eval(compile(ast.Expression(stmt.value), "<README>", "eval"), ns)
                shown = repr(value)
                assert "np.float64(" not in shown and "np.int64(" not in shown and "np.bool" not in shown, \
                    (ast.unparse(stmt), shown)
            else:
                exec(compile(code, "<README>", "exec"), ns)


def test_sweep_exponent_is_the_labs_nine_points_unless_told() -> None:
    drop = fm.Drop()
    s = fm.sweep(drop, k=np.logspace(2, 8, 61), dt=1e-4)
    lab = fm.divergence_exponent(drop, dt=1e-4)
    assert s.exponent() == lab and lab.points == 9
    own = s.exponent(points="all")
    assert own.points == int(((s.k >= 1e4) & (s.k <= 1e8)).sum()) == 41
    assert own.slope != lab.slope
    with pytest.raises(fm.InvalidParameter, match="nine-point"):
        fm.sweep(drop, k=np.logspace(4, 8, 5), dt=1e-4).exponent()
    assert "grid" in fm.Sweep.exponent.__doc__
