"""Gradient qualification through the binding: hybrid_jacobian (shipped and Python-defined
systems), check_gradient on Python callables, receipts and their JSON Schema, the worked examples
and conditioning. Shapes, dtypes, orientation, exceptions and the document format; the numerics
are tested in cargo (crates/ferromotion-core/tests/{check,hybrid}.rs)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, List

import numpy as np
import pytest

import ferromotion as fm
from ferromotion import _core

jsonschema = pytest.importorskip("jsonschema")


# --- hybrid_jacobian ------------------------------------------------------------------------


class PyDrop:
    """fm.BouncingDrop written in Python, method for method."""

    name = "python drop"

    def __init__(self, gravity: float = fm.BouncingDrop().gravity, e: float = fm.BouncingDrop().restitution) -> None:
        self.g, self.e = gravity, e
        self.dim = 2
        self.calls = 0

    def rhs(self, mode: int, x: np.ndarray) -> Any:
        self.calls += 1
        assert isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == (2,)
        return np.array([x[1], -self.g])

    def rhs_jacobian(self, mode: int, x: np.ndarray) -> Any:
        return [[0.0, 1.0], [0.0, 0.0]]

    def guard_count(self, mode: int) -> int:
        return 1

    def guard(self, mode: int, i: int, x: np.ndarray) -> float:
        return float(x[0])

    def guard_gradient(self, mode: int, i: int, x: np.ndarray) -> Any:
        return (1.0, 0.0)

    def reset(self, mode: int, i: int, x: np.ndarray) -> Any:
        return mode, [x[0], -self.e * x[1]]

    def reset_jacobian(self, mode: int, i: int, x: np.ndarray) -> Any:
        return np.diag([1.0, -self.e])


def test_hybrid_drop_shapes_dtypes_and_orientation() -> None:
    s = fm.hybrid_jacobian(fm.BouncingDrop(), np.array([1.0, 0.0]), 0.0, 0.8)
    assert s.x.shape == (2,) and s.jacobian.shape == (2, 2)
    assert s.x.dtype == s.jacobian.dtype == np.float64
    assert not s.jacobian.flags.writeable
    assert s.mode == 0 and len(s.events) == 1 and isinstance(s.events[0], fm.HybridEvent)
    e = s.events[0]
    assert 0.0 < e.t < 0.8 and e.guard == 0 and e.guard_speed < 0 and e.saltation_max > 1
    # Row-major like every Jacobian of the package: [1, 0] is dv(T)/dy0, as fm.exact's.
    np.testing.assert_allclose(s.jacobian, fm.exact(fm.Drop()).jacobian, rtol=1e-9)
    assert 0 < s.probe_gap < 1e-9
    d = s.to_dict()
    assert json.loads(s.to_json()) == d and len(d["events"]) == 1
    assert "1 events" in repr(s)


def test_hybrid_options_reach_the_core() -> None:
    x0 = [1.0, 0.0]
    assert fm.hybrid_jacobian(fm.BouncingDrop(), x0, 0.0, 0.8, probe_rtol=0.0).probe_gap == 0.0
    several = fm.hybrid_jacobian(fm.BouncingDrop(), x0, 0.0, 1.9, dt=1e-3)
    assert len(several.events) >= 5
    with pytest.raises(fm.TooManySteps):
        fm.hybrid_jacobian(fm.BouncingDrop(), x0, 0.0, 0.8, dt=1e-3, max_steps=10)
    with pytest.raises(fm.InvalidParameter, match="`dt`"):
        fm.hybrid_jacobian(fm.BouncingDrop(), x0, 0.0, 0.8, dt=-1.0)


def test_slope_ball_is_four_dimensional() -> None:
    s = fm.hybrid_jacobian(fm.SlopeBall(angle=0.3, restitution=0.7), [0.0, 1.0, 0.5, 0.0], 0.0, 1.2)
    assert s.x.shape == (4,) and s.jacobian.shape == (4, 4) and len(s.events) >= 2
    assert fm.SlopeBall(angle=0.3).to_dict()["system"] == "slope_ball"


def test_a_python_system_gives_the_shipped_systems_answer() -> None:
    sys_ = PyDrop()
    py = fm.hybrid_jacobian(sys_, [1.0, 0.0], 0.0, 0.8)
    rust = fm.hybrid_jacobian(fm.BouncingDrop(), [1.0, 0.0], 0.0, 0.8)
    assert sys_.calls > 1000
    np.testing.assert_array_equal(py.jacobian, rust.jacobian)
    np.testing.assert_array_equal(py.x, rust.x)
    assert py.events == rust.events


def test_an_exception_inside_a_python_system_propagates_unchanged() -> None:
    class Broken(PyDrop):
        def reset(self, mode: int, i: int, x: np.ndarray) -> Any:
            raise ZeroDivisionError("the reset broke")

    with pytest.raises(ZeroDivisionError, match="the reset broke"):
        fm.hybrid_jacobian(Broken(), [1.0, 0.0], 0.0, 0.8)


def test_a_python_system_returning_a_wrong_shape_is_named() -> None:
    class Wide(PyDrop):
        def rhs_jacobian(self, mode: int, x: np.ndarray) -> Any:
            return np.zeros((2, 3))

    expected = r"`system.rhs_jacobian`: expected array of shape \(2, 2\), got \(2, 3\)"
    with pytest.raises(fm.InvalidParameter, match=expected):
        fm.hybrid_jacobian(Wide(), [1.0, 0.0], 0.0, 0.8)


def test_a_python_system_declares_hidden_state() -> None:
    class Warm(PyDrop):
        def hidden_state(self) -> str:
            return "the impulse is warm-started"

    with pytest.raises(fm.HiddenState, match="hidden state in `python drop`: the impulse is warm-started"):
        fm.hybrid_jacobian(Warm(), [1.0, 0.0], 0.0, 0.8)


def test_an_undeclared_memory_python_system_is_measured_and_refused() -> None:
    # Issue 14 (the anchor's `a_flow_with_memory_is_refused`): the callback keeps memory of its
    # previous call and says nothing; the core measures it (repeat and whole-vs-split flow).
    class Cached(PyDrop):
        last: Any = None

        def rhs(self, mode: int, x: np.ndarray) -> Any:
            prev, self.last = self.last, x.copy()
            f = np.array([x[1], -self.g])
            return f if prev is None else f + 0.5 * (prev - x)

    with pytest.raises(fm.HiddenState, match="hidden state in `python drop`: measured"):
        fm.hybrid_jacobian(Cached(), [1.0, 0.0], 0.0, 0.8)
    s = fm.hybrid_jacobian(PyDrop(), [1.0, 0.0], 0.0, 0.8)  # the memoryless one still passes
    # Spectral radius and worst-case gain of J, against numpy on the returned matrix.
    assert s.spectral_radius == pytest.approx(max(abs(np.linalg.eigvals(s.jacobian))), rel=1e-12)
    assert s.worst_gain == pytest.approx(np.linalg.norm(s.jacobian, 2), rel=1e-12)


def test_an_object_that_is_not_a_system_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="lacks rhs, rhs_jacobian, guard_count"):
        fm.hybrid_jacobian(object(), [1.0, 0.0], 0.0, 0.8)  # type: ignore[arg-type]


def test_hybrid_x0_shape() -> None:
    with pytest.raises(fm.InvalidParameter, match=r"`x0`: expected array of shape \(n,\), got \(2, 1\)"):
        fm.hybrid_jacobian(fm.BouncingDrop(), [[1.0], [0.0]], 0.0, 0.8)
    with pytest.raises(fm.InvalidParameter, match="`x0`"):
        fm.hybrid_jacobian(fm.BouncingDrop(), [1.0, 0.0, 0.0], 0.0, 0.8)


# --- check_gradient on Python callables ---------------------------------------------------


def f(x: np.ndarray) -> float:
    return float(np.sin(x[0]) * x[1] ** 2)


def grad_f(x: np.ndarray) -> np.ndarray:
    return np.array([np.cos(x[0]) * x[1] ** 2, 2 * np.sin(x[0]) * x[1]])


X = np.array([0.3, 2.0])


def test_receipt_shapes_and_types() -> None:
    r = fm.check_gradient(f, grad_f(X), X, objective="sin(a) b^2", units="1", route="by hand",
                          tolerances={"dt": 1e-3})
    assert r.verdict == "verified" and r.verified and r.schema == fm.RECEIPT_SCHEMA
    assert r.x.shape == r.gradient.shape == (2,) and r.x.dtype == np.float64
    assert [d.label for d in r.directions] == ["random 0", "random 1", "random 2", "random 3",
                                               "coordinate 0", "coordinate 1"]
    n_eps = len(fm.defaults()["check"]["eps"])
    for d in r.directions:
        # The walk takes a few probes of the ladder (at least three, to measure smoothness).
        assert 3 <= d.eps.shape[0] <= n_eps and d.eps.shape == d.fd.shape == d.error.shape == d.abs_error.shape
        assert d.eps.dtype == d.fd.dtype == d.error.dtype == np.float64
        assert np.all(np.diff(d.eps) < 0)  # largest probe first
        assert d.direction.shape == (2,) and math.isclose(float(np.linalg.norm(d.direction)), 1.0)
        assert set(d.probe_classification) == {"smooth"} and d.classification == "smooth"
        assert d.certified and d.verdict == "verified" and d.best_error is not None and d.best_error < 1e-6
        assert d.best_abs_error is not None and d.floor is not None and d.smooth_below is not None
    # The whole ladder on request: the V, and a Taylor slope on every direction.
    full = fm.check_gradient(f, grad_f(X), X, full_sweep=True)
    assert full.verdict == "verified" and full.options["full_sweep"]
    assert all(d.eps.shape == (n_eps,) and d.taylor_slope is not None for d in full.directions)
    assert r.noise is not None and r.noise["sigma"] > 0 and "float64" in r.noise["cause"]
    assert r.objective == {"name": "sin(a) b^2", "units": "1", "description": "", "route": "by hand",
                           "integrator": "", "tolerances": [["dt", 1e-3]]}
    assert "verified" in r.summary() and "sin(a) b^2" in r.summary()
    assert r.evaluations <= 95 < full.evaluations and r.max_error >= r.median_error
    assert "verified" in repr(r) and "certified" in repr(r.directions[0])


def test_environment_identity_is_filled_by_python() -> None:
    r = fm.check_gradient(f, grad_f(X), X)
    env = r.environment
    assert env["core_version"] == fm.__version__ and env["target"]
    extra = dict(env["extra"])
    assert extra == fm.environment()
    assert extra["package_version"] == fm.__version__ and extra["numpy"] == np.__version__
    commit = extra["git_commit"]
    assert commit == "unknown" or len(commit) == 40
    assert dict(fm.check_example("scalar").environment["extra"]) == extra


def test_objective_name_defaults_to_the_callable() -> None:
    assert fm.check_gradient(f, grad_f(X), X).objective["name"] == "f"


def test_options_reach_the_core() -> None:
    r = fm.check_gradient(f, grad_f(X), X, eps=[1e-3, 1e-5], directions=1, coordinates=False, seed=7, tol=1e-4)
    assert [d.label for d in r.directions] == ["random 0"]
    assert r.directions[0].eps.tolist() == [1e-3, 1e-5]
    assert r.options["seed"] == 7 and r.options["tol"] == 1e-4 and r.options["random_directions"] == 1
    other_seed = fm.check_gradient(f, grad_f(X), X, directions=1, coordinates=False, seed=8)
    assert not np.array_equal(r.directions[0].direction, other_seed.directions[0].direction)


def test_a_wrong_gradient_is_not_verified() -> None:
    r = fm.check_gradient(f, grad_f(X) * [1.0, 1.1], X)
    assert r.verdict == "not-verified" and not r.verified
    assert [d.label for d in r.directions if d.certified] == ["coordinate 0"]


def test_exceptions_inside_f_propagate_unchanged() -> None:
    calls: List[int] = []

    def fails_later(x: np.ndarray) -> float:
        calls.append(1)
        if len(calls) > 5:
            raise KeyError("inside f")
        return f(x)

    with pytest.raises(KeyError, match="inside f"):
        fm.check_gradient(fails_later, grad_f(X), X)
    assert len(calls) == 6  # nothing is called after the first exception

    def fails_at_once(x: np.ndarray) -> float:
        raise RuntimeError("at x")

    with pytest.raises(RuntimeError, match="at x"):
        fm.check_gradient(fails_at_once, grad_f(X), X)
    with pytest.raises(TypeError):
        fm.check_gradient(lambda x: "not a number", grad_f(X), X)  # type: ignore[arg-type,return-value]


def test_nan_marks_a_point_outside_the_model() -> None:
    # Undefined for a > 0.35: the largest probes leave the domain and certify nothing.
    r = fm.check_gradient(lambda x: f(x) if x[0] <= 0.35 else math.nan, grad_f(X), X, full_sweep=True)
    assert r.verdict == "verified"
    d = r.directions[-2]  # coordinate 0
    assert np.isnan(d.fd[0]) and d.probe_classification[0] == "event-crossing"
    assert d.smooth_below is not None and d.smooth_below < 0.05


def step_count(x: np.ndarray) -> int:
    return int(x[0] > 0.3)  # an "event" exactly at a = 0.3


@pytest.mark.parametrize("events", [
    lambda x: [step_count(x)],
    lambda x: step_count(x),
    lambda x: np.array([step_count(x), 7]),
    lambda x: ([step_count(x)], 5.0),
    lambda x: ((step_count(x),), None),
], ids=["list", "int", "array", "with speed", "speed None"])
def test_events_accept_sequences_ints_and_speeds(events: Any) -> None:
    r = fm.check_gradient(f, grad_f(X), X, events=events)
    assert r.verdict == "refused"
    by_label = {d.label: d.classification for d in r.directions}
    assert by_label["coordinate 0"] == "event-crossing" and by_label["coordinate 1"] == "smooth"
    assert [d.certified for d in r.directions if d.label == "coordinate 1"] == [True]


def test_slow_events_are_grazing() -> None:
    r = fm.check_gradient(f, grad_f(X), X, events=lambda x: ([1], 1e-4))
    assert r.verdict == "refused" and {d.classification for d in r.directions} == {"grazing"}
    assert "slower than" in r.why


def test_events_of_another_type_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="events must return a sequence of ints"):
        fm.check_gradient(f, grad_f(X), X, events=lambda x: "once")


def test_hessian_vector_products_claim_second_order() -> None:
    def hvp(d: np.ndarray) -> np.ndarray:
        a, b = X
        h = np.array([[-np.sin(a) * b * b, 2 * np.cos(a) * b], [2 * np.cos(a) * b, 2 * np.sin(a)]])
        return h @ d

    # The second-order remainder falls like h^2 after dividing by h: start the Taylor sweep at
    # 1e-1 so that several steps stay above round-off (as the core's own test does).
    r = fm.check_gradient(f, grad_f(X), X, hvp=hvp, taylor_h=np.logspace(-1, -4, 7))
    assert r.verdict == "verified", r.why
    assert all(d.taylor_second_order for d in r.directions)
    assert r.options["taylor_h"] == np.logspace(-1, -4, 7).tolist()
    slopes = [d.taylor_slope for d in r.directions]
    assert all(s is None or abs(s - 2) < 0.25 for s in slopes) and slopes.count(None) <= 1, slopes
    with pytest.raises(fm.InvalidParameter, match=r"`hvp`: expected array of shape \(2,\), got \(3,\)"):
        fm.check_gradient(f, grad_f(X), X, hvp=lambda d: np.zeros(3))


def test_bad_shapes() -> None:
    with pytest.raises(fm.InvalidParameter, match=r"`grad`: expected array of shape \(2,\), got \(3,\)"):
        fm.check_gradient(f, [1.0, 2.0, 3.0], X)
    with pytest.raises(fm.InvalidParameter, match=r"`x`: expected array of shape \(n,\), got \(1, 2\)"):
        fm.check_gradient(f, grad_f(X), [X])
    with pytest.raises(fm.InvalidParameter, match="`eps`"):
        fm.check_gradient(f, grad_f(X), X, eps=[[1e-3]])
    with pytest.raises(fm.InvalidParameter, match="`x`"):
        fm.check_gradient(f, grad_f(X), [math.nan, 1.0])


def test_receipt_writes_and_reads_back(tmp_path: Path) -> None:
    r = fm.check_gradient(f, grad_f(X), X, objective="J = ½ b²·sin a")
    path = r.write(tmp_path / "r.json")
    text = path.read_text(encoding="utf-8")
    assert "½" in text  # kept as UTF-8, not escaped
    assert json.loads(text) == r.to_dict() == json.loads(r.to_json(indent=None))
    d = r.to_dict()
    d["report"]["verdict"] = "changed"
    assert r.verdict == "verified" and r.to_dict()["report"]["verdict"] == "verified"  # a copy


def test_receipt_plot() -> None:
    pytest.importorskip("bokeh")
    fig = fm.check_example("drop-across-impact").plot()
    assert fig.x_scale.__class__.__name__ == "LogScale"


# --- worked examples -----------------------------------------------------------------------


def test_example_names_come_from_the_core() -> None:
    assert fm.EXAMPLES == tuple(_core.EXAMPLES)
    assert {"scalar", "projectile", "drop-exact", "drop-fixed", "drop-across-impact"} <= set(fm.EXAMPLES)
    with pytest.raises(fm.InvalidParameter, match="unknown example `nope`; known: scalar"):
        fm.check_example("nope")


def test_the_old_fixture_spellings_still_answer_with_a_deprecation_warning() -> None:
    # The checker's examples were called fixtures; code written then keeps working, told why.
    with pytest.deprecated_call(match="fm.check_fixture is renamed fm.check_example"):
        old = fm.check_fixture
    assert old is fm.check_example
    with pytest.deprecated_call(match="fm.FIXTURES is renamed fm.EXAMPLES"):
        assert fm.FIXTURES == fm.EXAMPLES
    with pytest.deprecated_call():
        from ferromotion import check_fixture
    # The fixed-step tangent answers another question than the rigid drop's v(T), by either name.
    assert check_fixture("drop-fixed").verdict == "not-verified"
    assert "check_fixture" not in fm.__all__ and "FIXTURES" not in fm.__all__
    with pytest.raises(AttributeError):
        fm.no_such_name  # noqa: B018  (only the renamed names are answered)


def test_example_verdicts_and_classifications() -> None:
    scalar = fm.check_example("scalar")
    np.testing.assert_allclose(scalar.gradient, [-1.61, -1.725], rtol=1e-12)
    assert fm.check_example("drop-exact").verdict == "verified"
    fixed = fm.check_example("drop-fixed")
    assert fixed.verdict == "not-verified" and fixed.objective["tolerances"] == [["k", 1e6], ["dt", 1e-4]]
    across = fm.check_example("drop-across-impact")
    assert across.verdict == "refused" and "event-crossing" in {d.classification for d in across.directions}
    assert np.isnan(across.max_error)
    assert fm.check_example("drop-grazing").directions[0].classification == "grazing"
    assert fm.check_example("scalar", directions=0).directions[0].label == "coordinate 0"


# --- the receipt schema ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def validator() -> Any:
    schema = fm.receipt_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_schema_ships_inside_the_package() -> None:
    assert (Path(fm.__file__).parent / "receipt.schema.json").is_file()
    assert fm.receipt_schema()["properties"]["schema"]["const"] == fm.RECEIPT_SCHEMA


@pytest.mark.parametrize("name", fm.EXAMPLES)
def test_every_example_receipt_validates(name: str, validator: Any) -> None:
    validator.validate(json.loads(fm.check_example(name).to_json()))


def test_receipts_of_user_callables_validate(validator: Any) -> None:
    for r in [
        fm.check_gradient(f, grad_f(X), X, tolerances={"rtol": 1e-8}),
        fm.check_gradient(f, grad_f(X), X, events=lambda x: ([step_count(x)], 1e-4), hvp=lambda d: d),
        fm.check_gradient(lambda x: f(x) if x[0] <= 0.35 else math.nan, grad_f(X), X),
    ]:
        validator.validate(json.loads(r.to_json()))


def test_the_schema_rejects_a_changed_receipt(validator: Any) -> None:
    good = fm.check_example("scalar").to_dict()
    for change in [
        lambda d: d["report"].__setitem__("verdict", "probably"),
        lambda d: d.__setitem__("schema", "ferromotion.receipt/1"),
        lambda d: d["report"]["directions"][0]["probes"][0].__setitem__("classification", "bumpy"),
        lambda d: d["environment"].__setitem__("extra", {"python": "3"}),
        lambda d: d.__setitem__("comment", "an unknown field"),
    ]:
        bad = json.loads(json.dumps(good))
        change(bad)
        assert not validator.is_valid(bad)


# --- conditioning ----------------------------------------------------------------------------


def test_conditioning_shapes() -> None:
    c = fm.conditioning(np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 1e-12]]))
    assert c.singular_values.shape == (3,) and c.singular_values.dtype == np.float64
    assert np.all(np.diff(c.singular_values) <= 0)
    assert c.weak_directions.shape == (2, 3)  # the 1e-12 axis and the unobserved combination
    assert math.isinf(fm.conditioning([[1.0, 0.0], [0.0, 0.0]]).condition_number)
    assert fm.conditioning(np.eye(2)).weak_directions.shape == (0, 2)
    assert c.to_dict()["weak_directions"] == c.weak_directions.tolist()
    with pytest.raises(fm.InvalidParameter, match=r"expected array of shape \(n, m\), got \(3,\)"):
        fm.conditioning([1.0, 2.0, 3.0])
    with pytest.raises(fm.InvalidParameter, match="`rel`"):
        fm.conditioning(np.eye(2), rel=0.0)


# --- schema versions: receipts written before version 2 still load -------------------------

V1 = Path(__file__).parent / "data" / "receipt_v1_scalar.json"


def test_a_version_1_receipt_loads_and_validates_against_its_schema() -> None:
    doc = json.loads(V1.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(fm.receipt_schema(1)).validate(doc)
    assert not jsonschema.Draft202012Validator(fm.receipt_schema()).is_valid(doc)
    r = fm.load_receipt(V1)
    assert r.schema == fm.RECEIPT_SCHEMA_V1 == "ferromotion.receipt/1" and r.verdict == doc["report"]["verdict"]
    assert r.noise is None and math.isnan(r.max_abs_error)
    d = r.directions[0]
    # Version 1's normalized error is read as `error`; fields it lacks are NaN or None.
    assert d.error.tolist() == [p["error"] for p in doc["report"]["directions"][0]["probes"]]
    assert np.isnan(d.abs_error).all() and d.floor is None and d.verdict == "verified"
    assert "read back from ferromotion.receipt/1" in r.summary()
    with pytest.raises(fm.InvalidParameter, match="version"):
        fm.receipt_schema(4)  # versions 1, 2 and 3 exist


def test_a_version_2_receipt_round_trips_through_a_file(tmp_path: Path) -> None:
    r = fm.check_gradient(f, grad_f(X), X, scale=[1.0, 2.0])
    back = fm.load_receipt(r.write(tmp_path / "r.json"))
    assert back.to_dict() == r.to_dict() and back.options["scale"] == [1.0, 2.0]
    assert [d.verdict for d in back.directions] == [d.verdict for d in r.directions]
    with pytest.raises(fm.InvalidParameter, match="not a receipt"):
        fm.load_receipt('{"schema": "something else"}')


# --- verdicts at every scale and precision -------------------------------------------------


def f32(x: np.ndarray) -> float:
    """f computed in float32."""
    a, b = np.float32(x[0]), np.float32(x[1])
    return float(np.sin(a) * b * b)


def test_float32_objective_is_verified_within_noise_and_a_five_percent_error_is_not() -> None:
    r = fm.check_gradient(f32, grad_f(X), X)
    assert r.verdict == "verified-within-noise" and not r.verified and r.agrees, r.why
    assert "float32" in r.why and "float32" in r.noise["cause"]
    wrong = fm.check_gradient(f32, grad_f(X) * 1.05, X)
    assert wrong.verdict == "not-verified", wrong.why


def test_a_sign_flip_near_an_optimum_is_caught_and_the_optimum_itself_is_absolute() -> None:
    def bowl(x: np.ndarray) -> float:
        return float((x[0] - 1.0) ** 2 + 3.0 * (x[1] + 2.0) ** 2)

    near = np.array([1.0 + 1e-5, -2.0 + 2e-5])
    g = np.array([2e-5, 12e-5])
    assert fm.check_gradient(bowl, g, near).verdict == "verified"
    assert fm.check_gradient(bowl, -g, near).verdict == "not-verified"
    at = fm.check_gradient(bowl, [0.0, 0.0], [1.0, -2.0])
    assert at.verdict == "verified-absolute" and not at.verified and at.agrees, at.why


def test_scale_is_recorded_and_must_match_x() -> None:
    r = fm.check_gradient(f, grad_f(X), X, scale=[0.3, 2.0])
    assert r.options["scale"] == [0.3, 2.0] and r.verdict == "verified"
    np.testing.assert_allclose(r.directions[-1].direction, [0.0, 2.0])
    with pytest.raises(fm.InvalidParameter, match="`scale`"):
        fm.check_gradient(f, grad_f(X), X, scale=[1.0])
    with pytest.raises(fm.InvalidParameter, match="`scale`"):
        fm.check_gradient(f, grad_f(X), X, scale=[1.0, -1.0])


def test_f_not_finite_at_x_is_a_typed_error() -> None:
    with pytest.raises(fm.NonFinite, match="f\\(x\\) = NaN"):
        fm.check_gradient(lambda x: math.nan, grad_f(X), X)
    with pytest.raises(fm.InvalidParameter, match="`grad`"):
        fm.check_gradient(f, [math.nan, 1.0], X)
