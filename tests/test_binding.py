"""The Python binding: shapes, dtypes, row-major Jacobians, defaults from the core, sweeps,
the bench, the GIL, and that the docstring examples run. The physics is tested in cargo."""

from __future__ import annotations

import dataclasses
import doctest
import importlib.metadata
import io
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import ferromotion as fm
from ferromotion import _core
from gil import assert_gil_released

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def drop() -> fm.Drop:
    return fm.Drop()


# --- package ------------------------------------------------------------------------------


def test_version_is_the_workspace_cargo_version() -> None:
    cargo = (ROOT / "Cargo.toml").read_text()
    workspace_version = re.search(r'\[workspace\.package\][^\[]*?version\s*=\s*"([^"]+)"', cargo, re.S)
    assert workspace_version is not None
    assert fm.__version__ == workspace_version.group(1)
    assert importlib.metadata.version("ferromotion") == fm.__version__


def test_public_names_exist() -> None:
    for name in fm.__all__:
        assert hasattr(fm, name), name


# --- Drop ---------------------------------------------------------------------------------


def test_drop_defaults_come_from_the_core(drop: fm.Drop) -> None:
    assert drop.to_dict() == {k: _core.DEFAULTS["drop"][k] for k in drop.to_dict()}
    assert set(drop.to_dict()) == set(_core.DEFAULTS["drop"])


def test_drop_is_frozen_and_coerces_to_float() -> None:
    d = fm.Drop(height=2, t_final=1)
    assert isinstance(d.height, float) and d.height == 2.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.height = 3.0  # type: ignore[misc]
    assert d == fm.Drop(height=2.0, t_final=1.0)


def test_drop_impact_helpers_are_positive(drop: fm.Drop) -> None:
    assert 0 < drop.first_impact_time() < drop.t_final
    assert drop.impact_speed() > 0


# --- routes -------------------------------------------------------------------------------


def _routes(drop: fm.Drop) -> list:
    return [
        fm.exact(drop),
        fm.fixed(drop, k=1e6, dt=1e-4),
        fm.corrected(drop, k=1e6, dt=1e-4),
        fm.flow(drop, k=1e6),
        fm.tolerance(drop, k=1e6, rtol=1e-6, events=True),
    ]


def test_route_shapes_and_dtypes(drop: fm.Drop) -> None:
    for r in _routes(drop):
        assert isinstance(r, fm.Route)
        assert r.state.shape == (2,) and r.state.dtype == np.float64
        assert r.jacobian.shape == (2, 2) and r.jacobian.dtype == np.float64
        assert r.jacobian.flags.c_contiguous
        assert not r.state.flags.writeable and not r.jacobian.flags.writeable
        for count in (r.steps, r.rejected_steps, r.force_evals, r.state_force_evals, r.rollouts):
            assert isinstance(count, int) and count >= 0
        assert isinstance(r.probe_dependent, bool)
        assert np.isfinite(r.state).all() and np.isfinite(r.jacobian).all()


def test_route_names_and_counters(drop: fm.Drop) -> None:
    exact, fixed, corrected, flow, tol = _routes(drop)
    assert [r.route for r in (exact, fixed, corrected, flow, tol)] == [
        "exact", "fixed", "corrected", "flow", "tolerance"]
    assert corrected.rollouts == 1 and corrected.force_evals >= fixed.force_evals
    assert fixed.steps == fixed.force_evals == round(drop.t_final / 1e-4)
    assert fixed.rollouts == 1 and fixed.probe_gap is None
    assert tol.rollouts == 8 and isinstance(tol.probe_gap, float)
    assert exact.probe_gap is None and flow.probe_gap is None


def test_route_to_dict_is_json_ready(drop: fm.Drop) -> None:
    r = fm.fixed(drop, k=1e6, dt=1e-4)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["route"] == "fixed"
    assert d["jacobian"] == r.jacobian.tolist()
    assert d["state"] == r.state.tolist()


def test_route_repr_is_readable(drop: fm.Drop) -> None:
    text = repr(fm.fixed(drop, k=1e6, dt=1e-4))
    assert text.startswith("Route('fixed'") and "m/s" in text and "steps=" in text
    assert "PROBE-DEPENDENT" not in text


def test_jacobian_is_row_major_dv_dy0_is_the_time_of_impact_term(drop: fm.Drop) -> None:
    # exact's J[1, 0] = dv(T)/dy0 is the saltation entry (1+e) g / |v-| (flight maps do not
    # change the v row's first entry); in column-major order it would land in J[0, 1].
    term = fm.time_of_impact_term(drop)
    j = fm.exact(drop).jacobian
    assert j[1, 0] == pytest.approx(term, rel=1e-12)
    assert j[0, 1] != pytest.approx(term, rel=1e-3)


def test_jacobian_matches_the_cores_row_major_serialisation(drop: fm.Drop) -> None:
    # The core's JSON carries J flat as [dy/dy0, dy/dv0, dv/dy0, dv/dv0].
    e = fm.evaluate({"k": 1e6, "dt": 1e-4})
    assert fm.exact(drop).jacobian.ravel().tolist() == e["exact"]["jacobian"]
    assert fm.fixed(drop, k=1e6, dt=1e-4).jacobian.ravel().tolist() == e["fixed"]["jacobian"]
    assert fm.flow(drop, k=1e6).jacobian.ravel().tolist() == e["flow"]["jacobian"]
    assert fm.corrected(drop, k=1e6, dt=1e-4).jacobian.ravel().tolist() == e["corrected"]["jacobian"]


def test_route_options_reach_the_core(drop: fm.Drop) -> None:
    assert fm.exact(drop, restitution=1.0).jacobian[1, 0] != fm.exact(drop).jacobian[1, 0]
    loose = fm.tolerance(drop, k=1e6, rtol=1e-4, events=True)
    tight = fm.tolerance(drop, k=1e6, rtol=1e-8, events=True)
    assert tight.force_evals > loose.force_evals
    shortcut = fm.corrected(drop, k=1e6, dt=1e-4, locate=False)
    assert shortcut.jacobian.tolist() != fm.corrected(drop, k=1e6, dt=1e-4).jacobian.tolist()
    with pytest.raises(fm.TooManySteps):
        fm.fixed(drop, k=1e6, dt=1e-4, max_steps=100)


def test_tolerance_with_default_options_is_the_same_answer_as_with_every_option_spelled_out(drop: fm.Drop) -> None:
    # fm.tolerance passes only rtol when the rest are its defaults; the answer must be the one
    # the binding gives with all seven options written out (the core's defaults, by value).
    opts = dict(_core.DEFAULTS["tolerance"], rtol=1e-6)
    full = _core.tolerance(drop, 1e5, (tuple(opts), tuple(opts.values())))
    short = fm.tolerance(drop, k=1e5, rtol=1e-6)
    assert short.jacobian.tolist() == full.jacobian.tolist() and short.force_evals == full.force_evals
    # A value of the wrong type that merely equals a default still reaches the core and is refused.
    with pytest.raises(fm.ScenarioError, match="max_steps"):
        fm.tolerance(drop, k=1e5, max_steps=float(_core.DEFAULTS["tolerance"]["max_steps"]))


# --- readouts -----------------------------------------------------------------------------


def test_readout_types(drop: fm.Drop) -> None:
    b = fm.blame(drop, k=1e6, dt=1e-4)
    assert isinstance(b, fm.Blame)
    assert all(isinstance(getattr(b, f), float) for f in ("integrator_share", "contact_share", "ratio", "noise_floor"))
    assert isinstance(b.integrator_below_floor, bool)
    assert b.ratio == pytest.approx(b.integrator_share / b.contact_share, rel=1e-15)

    fit = fm.divergence_exponent(drop, dt=1e-4)
    assert isinstance(fit, fm.ExponentFit) and fit.points == 9 and 0 <= fit.r2 <= 1
    assert fm.contact_share_exponent(drop).points == 9

    ref = fm.dt_refinement(drop, k=1e6, base_dt=1e-4)
    assert ref.errors.shape == (3,) and ref.errors.dtype == np.float64
    assert ref.ratio_10 == pytest.approx(ref.errors[1] / ref.errors[0], rel=1e-15)
    assert ref.base_dt == 1e-4

    assert 0 < fm.limit_restitution(drop) < 1
    e = fm.realised_restitution(drop, k=1e2)
    assert e is None or isinstance(e, float)
    assert fm.realised_restitution(drop, k=1e2, speed=drop.impact_speed()) == e
    assert fm.time_of_impact_term(drop, speed=drop.impact_speed()) == fm.time_of_impact_term(drop)
    assert 0 < fm.matched_dt(drop, k=1e6) <= drop.t_final


def test_log_grid() -> None:
    g = fm.log_grid(2, 8, 2)
    assert g.shape == (13,) and g.dtype == np.float64
    assert g[0] == 1e2 and g[-1] == 1e8


def test_evaluate_accepts_text_and_dict() -> None:
    assert fm.evaluate('{"k": 1e4}') == fm.evaluate({"k": 1e4})


# --- sweeps -------------------------------------------------------------------------------


def test_sweep_shapes_and_dtypes(drop: fm.Drop) -> None:
    ks = np.logspace(2, 8, 7)
    s = fm.sweep(drop, k=ks, dt=1e-4)
    n = len(ks)
    assert len(s) == n
    assert s.k.dtype == np.float64 and np.array_equal(s.k, ks)
    for name in ("forward_error", "dy", "dv", "gradient_error", "dv_dy0"):
        arr = getattr(s, name)
        assert arr.shape == (n,) and arr.dtype == np.float64, name
    assert s.right_sign.shape == (n,) and s.right_sign.dtype == np.bool_
    assert s.jacobian.shape == (n, 2, 2) and s.jacobian.dtype == np.float64
    assert s.state.shape == (n, 2)
    assert set(s.forward_unit.tolist()) <= {"m", "m/s"}
    assert s.fixed.force_evals.dtype == np.uint64
    assert s.exact.jacobian.shape == (2, 2)
    assert s.tolerance is None and s.corrected is None and s.blame is None
    assert not s.gradient_error.flags.writeable


def test_sweep_with_tolerance_and_blame(drop: fm.Drop) -> None:
    ks = np.array([1e4, 1e6])
    s = fm.sweep(drop, k=ks, tolerance=1e-6, events=True, corrected=True, blame=True)
    assert s.tolerance is not None and s.corrected is not None and s.blame is not None
    assert s.corrected.jacobian[1].tolist() == fm.corrected(drop, k=1e6, dt=1e-4).jacobian.tolist()
    assert s.tolerance.gradient_error.shape == (2,)
    assert s.tolerance.jacobian.shape == (2, 2, 2)
    assert s.tolerance.rollouts.tolist() == [8, 8]
    assert s.tolerance.probe_dependent.dtype == np.bool_
    assert s.blame.integrator_share.shape == (2,)
    # Same core, same numbers: the sweep's rows equal the single-k calls.
    b = fm.blame(drop, k=1e6, dt=1e-4)
    assert s.blame.integrator_share[1] == b.integrator_share
    assert s.blame.contact_share[1] == b.contact_share
    t = fm.tolerance(drop, k=1e6, rtol=1e-6, events=True)
    assert s.tolerance.jacobian[1].tolist() == t.jacobian.tolist()


def test_sweep_rows_keep_their_order_across_chunks_and_threads(drop: fm.Drop) -> None:
    ks = np.logspace(2, 8, 41)[::-1].copy()  # several chunks, descending on purpose
    s = fm.sweep(drop, k=ks, dt=1e-4, quiet=True)
    assert np.array_equal(s.k, ks)
    for i in (0, 17, 40):
        assert s.jacobian[i].tolist() == fm.fixed(drop, k=float(ks[i]), dt=1e-4).jacobian.tolist()


def test_sweep_accepts_lists_and_strided_arrays(drop: fm.Drop) -> None:
    a = fm.sweep(drop, k=[1e4, 1e5, 1e6])
    b = fm.sweep(drop, k=np.array([1e4, 0.0, 1e5, 0.0, 1e6])[::2])
    assert np.array_equal(a.gradient_error, b.gradient_error)


def test_sweep_exponent_is_the_cores_fit(drop: fm.Drop) -> None:
    s = fm.sweep(drop, k=fm.log_grid(2, 8, 2), dt=1e-4)
    fit = s.exponent()
    assert fit.points == 9
    direct = fm.divergence_exponent(drop, dt=1e-4)
    assert fit.slope == pytest.approx(direct.slope, rel=1e-12)
    assert fit.r2 == pytest.approx(direct.r2, rel=1e-12)


def test_empty_sweep(drop: fm.Drop) -> None:
    s = fm.sweep(drop, k=np.array([]))
    assert len(s) == 0 and s.gradient_error.shape == (0,) and s.jacobian.shape == (0, 2, 2)
    with pytest.raises(fm.InvalidParameter):
        s.exponent()
    assert s.to_dict()["exponent"] is None
    assert "no stiffnesses" in repr(s)


def test_sweep_to_dict_and_json(drop: fm.Drop) -> None:
    s = fm.sweep(drop, k=fm.log_grid(3, 5, 2), tolerance=True, blame=True)
    d = json.loads(s.to_json())
    assert d == s.to_dict()
    assert len(d["rows"]) == 5
    assert d["drop"] == drop.to_dict()
    tol = {key: d["tolerance"][key] for key in ("rtol", "events", "jacobian")}
    assert tol == {"rtol": _core.DEFAULTS["tolerance"]["rtol"], "events": False, "jacobian": "richardson"}
    # All of the tolerance route's options it ran with: the core's, every one of them default.
    assert d["tolerance"] == _core.DEFAULTS["tolerance"] == s.options["tolerance"]
    assert (d["dt"], d["corrected"], d["blame"]) == (1e-4, False, True)
    assert d["exponent"]["points"] == 3
    assert d["rows"][0]["fixed"]["jacobian"] == s.jacobian[0].ravel().tolist()
    assert d["rows"][0]["blame"]["integrator_share"] == s.blame.integrator_share[0]  # type: ignore[union-attr]
    text = repr(s)
    assert "5 stiffnesses" in text and "tolerance" in text and "wrong sign" in text


def test_sweep_progress_is_silent_when_not_a_tty(drop: fm.Drop, capsys: pytest.CaptureFixture[str]) -> None:
    fm.sweep(drop, k=np.logspace(2, 8, 40))
    assert capsys.readouterr().err == ""


def test_sweep_progress_path_on_a_terminal(drop: fm.Drop, monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    s = fm.sweep(drop, k=np.logspace(2, 8, 40))  # several chunks, a (delayed) progress bar
    assert len(s) == 40
    quiet = fm.sweep(drop, k=np.logspace(2, 8, 40), quiet=True)
    assert np.array_equal(s.gradient_error, quiet.gradient_error)


# --- the bench ----------------------------------------------------------------------------


def test_bench_readout_is_a_dict_and_setters_reach_the_core() -> None:
    bench = fm.Workbench(k=1e6)
    r = bench.readout()
    assert r["k"] == 1e6 and r["dt"] == bench.dt
    for key in ("exact", "fixed", "flow", "exponent", "refinement", "blame", "contact_exponent"):
        assert key in r, key
    assert r["tolerance"] is None
    bench.set_dt_divisor(10)
    assert bench.dt == pytest.approx(bench.base_dt / 10)
    bench.set_tolerance(True, rtol=1e-6, events=True)
    r = bench.readout()
    assert r["tolerance"]["rtol"] == 1e-6 and r["tolerance"]["events"] is True
    bench.set_log10_k(4.0)
    assert bench.k == pytest.approx(1e4)
    with pytest.raises(fm.InvalidParameter):
        bench.set_dt_divisor(3)
    assert "Workbench(" in repr(bench)


def test_bench_curve_is_a_sweep() -> None:
    bench = fm.Workbench(k=1e6, tolerance=1e-6, events=True)
    s = bench.curve(np.array([1e3, 1e5]))
    assert isinstance(s, fm.Sweep) and len(s) == 2 and s.tolerance is not None
    assert s.dt == bench.dt


# --- the GIL ------------------------------------------------------------------------------


def test_gil_is_released_during_core_work(drop: fm.Drop) -> None:
    """A sweep in one thread must not stop another thread's Python code."""
    ks = np.logspace(4, 8, 480)  # 8e5 steps per stiffness at dt = 1e-6: ~4e8 steps, well over 0.1 s
    # One core call: no chance to switch threads unless the GIL is released.
    assert_gil_released(lambda: _core.sweep(drop, ks, {"dt": 1e-6}), min_elapsed=0.1, what="sweep")

@pytest.mark.parametrize("module", [
    "ferromotion", "ferromotion._common", "ferromotion._results", "ferromotion.routes", "ferromotion.readouts", "ferromotion.sweep",
    "ferromotion.workbench", "ferromotion.descent", "ferromotion.hybrid", "ferromotion.check", "ferromotion.quadruped",
    "ferromotion.cli", "ferromotion.plot", "ferromotion.app", "ferromotion.study",
])
def test_docstring_examples_run(module: str) -> None:
    mod = importlib.import_module(module)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_every_public_function_has_an_example() -> None:
    for name in fm.__all__:
        obj = getattr(fm, name)
        if callable(obj) and not isinstance(obj, type):
            assert obj.__doc__ and "Examples" in obj.__doc__, name


README = ROOT / "README.md"


@pytest.mark.skipif(not README.exists(), reason="no README.md yet")
def test_readme_python_snippets_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})


# --- sweeps over dt -----------------------------------------------------------------------


def test_sweep_over_an_array_of_steps_is_a_grid(drop: fm.Drop) -> None:
    ks = np.array([1e4, 1e5, 1e6])
    g = fm.sweep(drop, k=ks, dt=[1e-4, 1e-5], corrected=True, blame=True)
    assert isinstance(g, fm.SweepGrid) and len(g) == 2
    assert g.dt.dtype == np.float64 and g.dt.tolist() == [1e-4, 1e-5]
    assert np.array_equal(g.k, ks)
    assert g.gradient_error.shape == (2, 3) and g.gradient_error.dtype == np.float64
    assert g.right_sign.shape == (2, 3) and g.right_sign.dtype == np.bool_
    assert g.jacobian.shape == (2, 3, 2, 2) and g.state.shape == (2, 3, 2)
    assert g.forward_unit.shape == (2, 3)
    assert g.stack("gradient_error", route="corrected").shape == (2, 3)
    assert g.stack("integrator_share", route="blame").shape == (2, 3)
    # Each step's sweep is the one a scalar dt gives, number for number.
    for i, dt in enumerate((1e-4, 1e-5)):
        one = fm.sweep(drop, k=ks, dt=dt, corrected=True, blame=True)
        assert isinstance(g[i], fm.Sweep) and g[i].dt == dt
        assert g.gradient_error[i].tolist() == one.gradient_error.tolist()
        assert g.jacobian[i].tolist() == one.jacobian.tolist()
    fits = fm.sweep(drop, k=fm.log_grid(4, 8, 2), dt=np.array([1e-4])).exponent()
    assert len(fits) == 1 and fits[0].slope == fm.divergence_exponent(drop, dt=1e-4).slope
    d = json.loads(g.to_json())
    assert d["dt"] == [1e-4, 1e-5] and len(d["sweeps"]) == 2 and d["sweeps"][1]["dt"] == 1e-5
    assert "3 stiffnesses x 2 steps" in repr(g)
    with pytest.raises(fm.InvalidParameter, match="route"):
        g.stack("gradient_error", route="tolerance")


def test_sweep_over_steps_validates_each_step(drop: fm.Drop) -> None:
    with pytest.raises(fm.StepDoesNotDivide):
        fm.sweep(drop, k=[1e4], dt=[1e-4, 3e-4])
    with pytest.raises(fm.InvalidParameter, match=r"`dt`.*\(m,\), got \(1, 2\)"):
        fm.sweep(drop, k=[1e4], dt=[[1e-4, 1e-5]])
    with pytest.raises(fm.InvalidParameter, match="`dt`"):
        fm.sweep(drop, k=[1e4], dt=["fast"])
    assert len(fm.sweep(drop, k=[1e4], dt=[])) == 0


def test_sweep_tolerance_cost_ratio_is_the_cores(drop: fm.Drop) -> None:
    s = fm.sweep(drop, k=[1e5, 1e6], tolerance=1e-6, events=True)
    assert s.tolerance_cost_ratio is not None and s.tolerance_cost_ratio.shape == (2,)
    d = s.to_dict()
    assert s.tolerance_cost_ratio.tolist() == [row["tolerance_cost_ratio"] for row in d["rows"]]
    assert fm.sweep(drop, k=[1e5]).tolerance_cost_ratio is None


def test_progress_bar_shows_on_a_terminal_when_the_sweep_is_slow(drop: fm.Drop,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setattr(sys.modules["ferromotion.sweep"], "_PROGRESS_DELAY", 0.0)  # as if the sweep took longer than the delay
    fm.sweep(drop, k=np.logspace(2, 8, 40))
    assert "sweep" in term.getvalue() and "40/40" in term.getvalue()
    term.truncate(0)
    fm.sweep(drop, k=np.logspace(2, 8, 40), quiet=True)
    assert term.getvalue().strip("\0") == ""


# --- results as JSON and plots --------------------------------------------------------------


def test_every_result_has_to_dict_and_to_json(drop: fm.Drop) -> None:
    results = [fm.fixed(drop, k=1e6, dt=1e-4), fm.blame(drop, k=1e6, dt=1e-4), fm.divergence_exponent(drop),
               fm.dt_refinement(drop, k=1e6), fm.sweep(drop, k=[1e4, 1e6]), fm.Arm.fixed(1e6, 1e-4)]
    for r in results:
        assert json.loads(r.to_json()) == json.loads(json.dumps(r.to_dict())), type(r).__name__
        assert type(r).__name__ in repr(r)


def test_reprs_are_readable(drop: fm.Drop) -> None:
    assert repr(fm.divergence_exponent(drop)).startswith("ExponentFit(slope = 0.4")
    assert "integrator share" in repr(fm.blame(drop, k=1e6, dt=1e-4))
    assert "at dt/10" in repr(fm.dt_refinement(drop, k=1e6))


def test_time_of_impact_term_takes_arrays(drop: fm.Drop) -> None:
    speeds = np.array([[4.0, 1.0], [0.01, drop.impact_speed()]])
    t = fm.time_of_impact_term(drop, speeds)
    assert t.shape == (2, 2) and t.dtype == np.float64
    assert t[1, 1] == fm.time_of_impact_term(drop)
    assert t[0, 0] == fm.time_of_impact_term(drop, 4.0)
    with pytest.raises(fm.InvalidParameter, match="speed"):
        fm.time_of_impact_term(drop, [4.0, -1.0])


def test_sweep_plot_is_a_bokeh_figure(drop: fm.Drop) -> None:
    pytest.importorskip("bokeh")
    from bokeh.models import BoxAnnotation, Span
    from bokeh.plotting import figure

    from ferromotion.plot import wrong_sign_spans

    s = fm.sweep(drop, k=np.logspace(2, 8, 25), tolerance=1e-6, events=True, corrected=True)
    fig = s.plot(mark_k=1e6)
    assert isinstance(fig, figure)
    assert type(fig.x_scale).__name__ == "LogScale" and type(fig.y_scale).__name__ == "LogScale"
    bands = [b for b in fig.renderers + list(fig.center) if isinstance(b, BoxAnnotation)]
    assert [(b.left, b.right) for b in bands] == wrong_sign_spans(s.k, s.right_sign) and bands
    span = fig.select_one({"name": "current_k"})
    assert isinstance(span, Span) and span.location == 1e6 and span.visible
    labels = [item.label["value"] for item in fig.legend[0].items]
    assert any("tolerance" in x for x in labels) and any("corrected" in x for x in labels)
    assert any("wrong sign" in x for x in labels)
    g = fm.sweep(drop, k=np.logspace(2, 8, 9), dt=[1e-4, 1e-5]).plot()
    assert [item.label["value"] for item in g.legend[0].items][1:] == ["dt = 0.0001 s", "dt = 1e-05 s"]


def test_wrong_sign_spans() -> None:
    from ferromotion.plot import wrong_sign_spans

    assert wrong_sign_spans([1e2, 1e4], [True, True]) == []
    assert wrong_sign_spans([1e2, 1e4], [False, False]) == [(1e2, 1e4)]
    assert wrong_sign_spans([1e6, 1e2, 1e4], [True, True, False]) == [(1e3, 1e5)]  # any order
    assert wrong_sign_spans([1, 10, 100, 1000, 10000], [False, True, False, True, False]) == [
        (1, pytest.approx(10 ** 0.5)), (pytest.approx(10 ** 1.5), pytest.approx(10 ** 2.5)),
        (pytest.approx(10 ** 3.5), 10000)]


# --- the descent experiment -------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_descent() -> fm.Descent:
    return fm.descent(arms=[fm.Arm.exact(), fm.Arm.fixed(1e6), fm.Arm.corrected(1e6),
                            fm.Arm.tolerance(1e6, 1e-6), fm.Arm.central_differences()], grid=15)


def test_descent_types_and_shapes(small_descent: fm.Descent) -> None:
    d = small_descent
    assert d.target.shape == (2,) and d.optimum.tolist() == [1.0, 0.0] and d.grid == 15
    land = d.landscape
    assert land.heights.shape == (15,) and land.velocities.shape == (15,)
    assert land.loss.shape == (15, 15) and land.loss.dtype == np.float64
    assert np.isnan(land.loss).any() and np.isfinite(land.loss).any()  # infeasible points are NaN
    assert land.starts.shape == (4, 2) and land.grid_minimum.shape == (2,)
    assert isinstance(land.local_minima, int)
    assert [a.arm.route for a in d.arms] == ["exact", "fixed", "corrected", "tolerance", "central_differences"]
    for a in d.arms:
        assert isinstance(a, fm.DescentArm) and len(a.runs) == 4
        assert a.converged == sum(r.converged for r in a.runs)
        assert a.iterations == sum(r.iterations for r in a.runs)
        for run, start in zip(a.runs, land.starts):
            assert isinstance(run, fm.DescentRun)
            assert run.path.shape == (run.iterations + 1, 2) and run.path.dtype == np.float64
            assert run.start.tolist() == start.tolist()
            assert not run.path.flags.writeable
    assert d["exact"].converged == 4
    table = d.table()
    assert table["label"].tolist() == [a.label for a in d.arms]
    assert table["converged"].dtype == np.int64 and table["starts"].tolist() == [4] * 5
    text = d.format_table()
    assert text.splitlines()[0].startswith("arm") and len(text.splitlines()) == 6
    assert "exact 4/4" in repr(d)


def test_descent_to_dict_is_the_cores_serialisation(small_descent: fm.Descent) -> None:
    d = json.loads(small_descent.to_json())
    assert d == small_descent.to_dict()
    assert d["arms"][1]["arm"] == {"route": "fixed", "k": 1e6, "dt": 1e-4}
    assert d["arms"][1]["label"] == small_descent.arms[1].label
    loss = small_descent.landscape.loss.ravel()
    assert [None if np.isnan(x) else x for x in loss] == d["landscape"]["loss"]


def test_standard_arms_and_defaults_come_from_the_core() -> None:
    arms = fm.standard_arms()
    assert [a.route for a in arms] == [a["route"] for a in _core.standard_arms()]
    assert fm.Arm.fixed(1e4, 1e-4) in arms and fm.Arm.exact() in arms
    assert _core.DEFAULTS["descent"]["grid"] == 41


def test_arm_validation() -> None:
    with pytest.raises(fm.InvalidParameter, match="route"):
        fm.Arm("rk4")
    with pytest.raises(fm.InvalidParameter, match="needs k"):
        fm.Arm("fixed", dt=1e-4)
    with pytest.raises(fm.InvalidParameter, match="takes no dt"):
        fm.Arm("exact", dt=1e-4)
    with pytest.raises(fm.InvalidParameter, match="`k`"):
        fm.descent(arms=[fm.Arm.fixed(-1.0)], grid=5)
    with pytest.raises(fm.StepDoesNotDivide):
        fm.descent(arms=[fm.Arm.fixed(1e6, 3e-4)], grid=5)
    with pytest.raises(fm.InvalidParameter, match="grid"):
        fm.descent(grid=2)
    with pytest.raises(fm.InvalidParameter, match="optimum"):
        fm.descent(optimum=(1.0, 0.0, 2.0))  # type: ignore[arg-type]


def test_the_binding_reads_arms_by_attribute() -> None:
    class Spec:
        route, k, dt, rtol = "bogus", None, None, None

    with pytest.raises(fm.InvalidParameter, match="route"):
        _core.descent(fm.Drop(), arms=[Spec()], grid=5)
    Spec.route = "fixed"
    with pytest.raises(fm.InvalidParameter, match="needs k"):
        _core.descent(fm.Drop(), arms=[Spec()], grid=5)


def test_descent_releases_the_gil() -> None:
    arms = [fm.Arm.fixed(1e4), fm.Arm.fixed(1e6)] * 4
    assert_gil_released(lambda: fm.descent(arms=arms, grid=11), min_elapsed=0.05, what="descent")

def test_sweep_releases_the_gil_through_the_public_api(drop: fm.Drop) -> None:
    """fm.sweep with a dt array (several core calls) in a thread does not stop this one."""
    assert_gil_released(
        lambda: fm.sweep(drop, k=np.logspace(4, 8, 48), dt=[1e-6] * 8, quiet=True),
        min_elapsed=0.1,
        what="sweep",
    )

