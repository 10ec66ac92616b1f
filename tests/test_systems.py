"""fm.systems: the systems the core defines once, read by Python from its registry; simultaneous
events (V-groove, switched field) and the turning normal (cylinder) held against an exact
event-driven simulation at 50 digits written apart from the core (tests/events_oracle.py)."""

from __future__ import annotations

import math
import re
from decimal import Decimal as D

import numpy as np
import pytest

import ferromotion as fm
from events_oracle import cylinder, groove, jacobian, one_sided, pi, switched

T = D("0.8")


def test_the_classes_come_from_the_cores_registry():
    kinds = {s["kind"] for s in fm.systems.catalogue()}
    assert {"bouncing_drop", "slope_ball", "v_groove", "cylinder", "switched_field"} <= kinds
    for spec in fm.systems.catalogue():
        cls = getattr(fm.systems, spec["class"])
        assert cls.kind == spec["kind"] and len(cls.state_names) == len(cls.units)
    assert fm.BouncingDrop is fm.systems.BouncingDrop
    assert fm.BouncingDrop().restitution == pytest.approx(fm.limit_restitution(fm.Drop()))


@pytest.mark.parametrize("make, name", [
    (lambda: fm.systems.Cylinder(radius=-0.5, restitution=0.6), "radius"),
    (lambda: fm.systems.VGroove(angle=0.0, restitution=0.5), "angle"),
    (lambda: fm.systems.VGroove(angle=math.pi, restitution=0.5), "angle"),
    (lambda: fm.systems.VGroove(angle=1.0, restitution=1.2), "restitution"),
    (lambda: fm.systems.Cylinder(radius=0.5, restitution=-0.1), "restitution"),
    (lambda: fm.systems.SlopeBall(angle=2.0), "angle"),
])
def test_bad_parameters_are_refused_naming_them(make, name):
    with pytest.raises(fm.InvalidParameter, match=f"`{name}`"):
        make()


def test_a_right_angled_groove_gives_the_jacobian_of_the_exact_simulation():
    angle = math.pi / 2
    g = fm.systems.VGroove(angle=angle, restitution=0.5)
    x0 = [0.0, 1.0, 0.0, 0.0]
    s = fm.hybrid_jacobian(g, x0, 0.0, 0.8)
    # The oracle's groove is right-angled to 60 digits (a float pi/2 is not, by 6e-17: its two
    # orders then differ by that much, which a 1e-20 probe would see).
    oracle = np.array(jacobian(lambda x: groove(pi() / 2, D("0.5"), D("9.81"), x, T), x0))
    assert np.abs(s.jacobian - oracle).max() < 1e-7
    assert np.abs(g.exact(x0, 0.0, 0.8).jacobian - oracle).max() < 1e-7
    assert s.commuted and len(s.pieces) == 2
    d = np.array([0.3, -0.2, 1.0, 0.5])
    assert np.allclose(s.jvp(d), s.jacobian @ d, rtol=0, atol=1e-12)


def test_an_obtuse_groove_is_set_valued_as_the_two_sides_of_the_axis_are():
    angle = math.radians(100)
    g = fm.systems.VGroove(angle=angle, restitution=0.5)
    with pytest.raises(fm.SetValued) as refused:
        fm.hybrid_jacobian(g, [0.0, 1.0, 0.0, 0.0], 0.0, 0.8)
    left = groove(D(angle), D("0.5"), D("9.81"), [D("-1e-30"), 1, 0, 0], T)
    right = groove(D(angle), D("0.5"), D("9.81"), [D("1e-30"), 1, 0, 0], T)
    assert abs(float(left[0] - right[0])) > 0.4
    said = [float(v) for v in re.findall(r"-?\d+\.\d+", str(refused.value))]
    for side in (left, right):
        assert min(abs(v - float(side[0])) for v in said) < 1e-5, str(refused.value)


def test_off_the_axis_the_groove_has_single_impacts_and_their_jacobian():
    angle = math.radians(100)
    g = fm.systems.VGroove(angle=angle, restitution=0.5)
    x0 = [0.05, 1.0, 0.0, 0.0]
    s = fm.hybrid_jacobian(g, x0, 0.0, 0.8)
    oracle = np.array(jacobian(lambda x: groove(D(angle), D("0.5"), D("9.81"), x, T), x0))
    assert not s.commuted and len(s.pieces) == 1
    assert np.abs(s.jacobian - oracle).max() < 1e-7


def test_the_cylinder_gives_the_jacobian_of_the_exact_simulation():
    c = fm.systems.Cylinder(radius=0.5, restitution=0.6)
    x0 = [0.2, 1.2, 0.0, 0.0]
    s = fm.hybrid_jacobian(c, x0, 0.0, 0.8)
    oracle = np.array(jacobian(lambda x: cylinder(D("0.5"), D("0.6"), D("9.81"), x, T), x0))
    assert len(s.events) == 1
    assert np.abs(s.jacobian - oracle).max() < 1e-7
    assert np.abs(c.exact(x0, 0.0, 0.8).jacobian - oracle).max() < 1e-7


def test_the_switched_field_has_two_exact_pieces_and_refuses_one_jacobian():
    f = fm.systems.SwitchedField()
    fields = [f.before, f.after_x1, f.after_x2, f.after_both]
    x0, t1 = [1.0, 1.0], D(2)
    s = fm.hybrid_jacobian(f, x0, 0.0, 2.0)
    with pytest.raises(fm.NotDifferentiable, match="2 linear pieces"):
        s.jacobian
    assert len(s.pieces) == 2 and not s.differentiable
    for d in ([0.1, 0.7], [0.7, -0.2], [-1.0, 0.3], [0.5, 0.5], [-0.2, -0.9]):
        oracle = one_sided(lambda x: switched(fields, x, t1), x0, d)
        assert np.allclose(s.jvp(d), oracle, rtol=0, atol=1e-9), d
    for p in s.pieces:  # each piece's matrix is the oracle's inside its cone
        inside = np.array([0.1, 0.7]) if p.orders[0][0] == 0 else np.array([0.7, 0.1])
        assert (p.cone @ inside <= 0).all()
        for k in range(2):
            e = np.eye(2)[k] * 1e-3 + inside
            assert np.allclose(p.matrix @ e, one_sided(lambda x: switched(fields, x, t1), x0, e), atol=1e-9)


def test_fixtures_export_writes_the_v2_fixtures_and_the_schema_validates_every_one(tmp_path):
    import json

    import jsonschema
    from support import run_cli

    p = run_cli("fixtures", "export", str(tmp_path))
    assert p.returncode == 0, p.stderr
    schema = json.loads((tmp_path / "fixture.schema.json").read_text())
    docs = {f.stem: json.loads(f.read_text()) for f in tmp_path.glob("*.json") if f.name != "fixture.schema.json"}
    assert {"drop", "slope", "v_groove_90", "v_groove_100", "v_groove_off_axis", "cylinder",
            "switched_field"} <= set(docs)
    for name, doc in docs.items():
        jsonschema.validate(doc, schema)
        assert fm.engines.conformance.load_fixture(tmp_path / f"{name}.json") == doc
    assert docs["drop"]["schema"] == "ferromotion.fixture/1" and "system" not in docs["drop"]
    assert docs["v_groove_100"]["exact"]["outcome"] == "set_valued"
    assert docs["switched_field"]["exact"]["outcome"] == "not_differentiable"
    # The exported answers are the exact simulation's.
    g = docs["v_groove_90"]
    oracle = jacobian(lambda x: groove(pi() / 2, D("0.5"), D("9.81"), x, T), g["initial_state"])
    assert np.abs(np.array(g["exact"]["jacobian"]) - oracle).max() < 1e-7
    # A /2 document given a /1 schema is refused by the core and by the JSON Schema alike.
    bad = dict(g, schema="ferromotion.fixture/1")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    with pytest.raises(fm.FixtureError, match="parameters"):
        fm.engines.conformance.load_fixture(bad)


def test_a_rod_landing_flat_is_set_valued_if_uniform_and_commutes_if_a_dumbbell():
    flat = [0.0, 0.5, 0.0, 0.0, 0.0, 0.0]
    with pytest.raises(fm.SetValued):
        fm.hybrid_jacobian(fm.systems.RigidRod(inertia=1 / 12, restitution=0.5), flat, 0.0, 0.5)
    s = fm.hybrid_jacobian(fm.systems.RigidRod(inertia=0.25, restitution=0.5), flat, 0.0, 0.5)
    assert s.commuted and s.jacobian.shape == (6, 6)
