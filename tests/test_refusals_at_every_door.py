"""Issue 13 through every door (an outside audit): the tolerance route's options, the equal-budget
table and the stepper's refusals reach the user the same way from Python, the CLI and the
WebAssembly build (run under Node from target/wasm/node-pkg, what the lab loads), and a refusal
is the core's typed error with the core's message at each, never a traceback.

The facts asserted come from elsewhere than the code under test: which budgets the adaptive
route cannot fit is read off the tolerance route itself, and each door's message is compared
with another door's, not with a pasted string.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import ferromotion as fm
import pytest
from support import run_cli
from ferromotion import _core

ROOT = Path(__file__).resolve().parent.parent
NODE_PKG = ROOT / "target" / "wasm" / "node-pkg" / "ferromotion_wasm.js"
DROP = fm.Drop()


def node(calls: list[str]) -> list[dict]:
    """Evaluate each JS expression against the Node build (`m` is the module, `drop` the default
    drop as Python's Drop holds it): {kind, message} for a thrown Error, {value} otherwise."""
    if shutil.which("node") is None or not NODE_PKG.is_file():
        pytest.fail("the Node build is missing: run `make wasm` (it writes target/wasm/node-pkg/)")
    body = ",".join(f"() => ({c})" for c in calls)
    script = (f"const m = require({json.dumps(str(NODE_PKG))}); const drop = {json.dumps(DROP.to_dict())};"
              f"const out = [{body}].map((f) => {{ try {{ return {{ value: f() }}; }}"
              f" catch (e) {{ return {{ kind: e.name, message: e.message }}; }} }});"
              "process.stdout.write(JSON.stringify(out));")
    p = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def untimed(doc: dict) -> dict:
    """An equal-budget document without its wall times, which differ from call to call; each
    row that ran must carry one (a number), a row that fits no tolerance none."""
    for r in doc["rows"]:
        assert (r["wall_s"] is None) == (r["gradient_error"] is None), r
        assert r["wall_s"] is None or r["wall_s"] >= 0, r
    rows = [{k: v for k, v in r.items() if k != "wall_s"} for r in doc["rows"]]
    assert doc["wall_resolution_s"] > 0  # the clock behind the wall times
    return {**{k: v for k, v in doc.items() if k != "wall_resolution_s"}, "rows": rows}


def refusal(call) -> tuple[str, str]:
    with pytest.raises(fm.FerroError) as e:
        call()
    return type(e.value).__name__, str(e.value)


# ---- the tolerance route's options ------------------------------------------------------------

# Python keyword arguments; the wasm export routeTolerance(drop, k, options) gets the same ones
# as its options object (the core's ToleranceOptions, missing keys its defaults).
BAD_TOLERANCE = {
    "rtol NaN": {"rtol": math.nan},
    "rtol -1": {"rtol": -1.0},
    "rtol inf": {"rtol": math.inf},
    "min_step -1": {"min_step": -1.0},
    "min_step above T": {"rtol": 1e-6, "events": True, "jacobian": "forward", "min_step": 1.0},
    "max_steps 0": {"max_steps": 0},
    "forward without events": {"jacobian": "forward"},
    "jacobian bogus": {"jacobian": "bogus", "events": True},
}


def js_object(kwargs: dict) -> str:
    """Python keyword arguments as a JS object literal (NaN and the infinities included)."""
    def value(v: object) -> str:
        if isinstance(v, float) and not math.isfinite(v):
            return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
        return json.dumps(v)
    return "{" + ", ".join(f"{json.dumps(k)}: {value(v)}" for k, v in kwargs.items()) + "}"


def test_bad_tolerance_options_are_the_same_typed_refusal_in_python_and_in_wasm() -> None:
    js = node([f"m.routeTolerance(drop, 1e6, {js_object(kw)})" for kw in BAD_TOLERANCE.values()])
    for (name, kwargs), got in zip(BAD_TOLERANCE.items(), js):
        kind, message = refusal(lambda: fm.tolerance(DROP, 1e6, **kwargs))
        assert "kind" in got, f"{name}: wasm answered {got}"
        # Python's ScenarioError is the core's Scenario variant.
        assert (kind.replace("Error", "") if kind == "ScenarioError" else kind) == got["kind"], name
        assert message == got["message"], name


def test_a_wrong_option_type_is_refused_by_wasm_naming_the_key() -> None:
    # The options object is read as the core's own struct; a value of the wrong type is the
    # core's Scenario error naming the key, not a silent default or a panic.
    got = node(["m.routeFixed(drop, 1e6, 1e-4, {max_steps: 'many'})",
                "m.routeTolerance(drop, 1e6, {rtol: 1e-6, events: 'yes'})",
                "m.routeFlow(drop, 1e6, {max_event: 3})"])
    assert [g["kind"] for g in got] == ["Scenario"] * 3, got
    assert got[0]["message"].startswith("invalid scenario: `max_steps` must be a whole number"), got[0]
    assert got[1]["message"].startswith("invalid scenario: `events` must be true or false"), got[1]
    # The native binding refuses the same values in the same words (it once read any object as
    # a bool by its truth: events="yes" ran as True).
    assert refusal(lambda: fm.fixed(DROP, 1e6, 1e-4, max_steps="many"))[1] == got[0]["message"]
    assert refusal(lambda: fm.tolerance(DROP, 1e6, rtol=1e-6, events="yes"))[1] == got[1]["message"]
    # An unknown key is refused with serde's own message, the native binding's text too.
    with pytest.raises(fm.ScenarioError) as native:
        _core.flow(DROP, 1e6, {"max_event": 3})
    assert got[2]["message"] == str(native.value), got[2]


def test_a_min_step_above_every_step_is_refused_as_too_small_with_the_step_it_met() -> None:
    # The controller's steps on this drop are all below T = 0.8 s, so a floor of 1 s refuses the
    # first one; the refusal names that step and the floor.
    with pytest.raises(fm.StepTooSmall, match=r"below min_step = 1e0 s"):
        fm.tolerance(DROP, 1e6, rtol=1e-6, events=True, jacobian="forward", min_step=1.0)
    # A floor below every step the controller takes changes nothing.
    free = fm.tolerance(DROP, 1e6, rtol=1e-6, events=True, jacobian="forward")
    floored = fm.tolerance(DROP, 1e6, rtol=1e-6, events=True, jacobian="forward", min_step=1e-12)
    assert (free.jacobian == floored.jacobian).all() and free.force_evals == floored.force_evals


def test_the_step_cap_message_says_the_cap_and_what_was_reached() -> None:
    # Not an invented estimate: the steps taken (the cap) and a time short of T.
    with pytest.raises(fm.TooManySteps) as e:
        fm.tolerance(DROP, 1e6, max_steps=10)
    text = str(e.value)
    assert "its cap of 10 steps (`max_steps`)" in text and "10 steps (" in text and "of T = 0.8 s" in text
    assert "would need" not in text


# ---- the equal-budget table -------------------------------------------------------------------

def test_a_budget_no_tolerance_fits_is_printed_not_a_traceback() -> None:
    # The tolerance route's cheapest setting on the table's grid (rtol 1e-2) already spends more
    # than 8 force evaluations, by either method, with and without events, so no adaptive row
    # can fit 8.
    cheapest = [fm.tolerance(DROP, 1e6, rtol=1e-2, events=False), fm.tolerance(DROP, 1e6, rtol=1e-2, events=True),
                fm.tolerance(DROP, 1e6, rtol=1e-2, events=True, jacobian="forward")]
    assert all(r.force_evals > 8 for r in cheapest)
    rows = {r["route"]: r for r in fm.equal_budget(k=1e6, budget=8)["rows"]}
    adaptive = [name for name in rows if name.startswith("adaptive")]
    assert len(adaptive) >= 2
    for name in adaptive:
        assert rows[name]["gradient_error"] is None and "no rtol" in rows[name]["setting"]
    p = run_cli("audit", "--quiet", "--k-min", "1e6", "--k-max", "1e6", "--budget", "8")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    printed = [line for line in p.stdout.splitlines() if line.strip().startswith("adaptive")]
    assert len(printed) == len(adaptive) and all(rows["adaptive"]["setting"] in line for line in printed)
    js = node(["m.equalBudget(drop, 1e6, 8)"])[0]["value"]
    assert [r["route"] for r in js["rows"]] == list(rows)


def test_a_budget_the_core_refuses_stops_the_audit_before_its_sweep() -> None:
    kind, message = refusal(lambda: fm.equal_budget(k=1e6, budget=10))
    p = run_cli("audit", "--quiet", "--budget", "10")
    # The CLI tells the core's limit with the flag and the value as typed.
    limit = message.split(": ", 1)[1]
    assert p.returncode == 1 and p.stdout == "" and f"--budget 10: {limit}" in p.stderr
    js = node(["m.equalBudget(drop, 1e6, 10)"])[0]
    assert (js["kind"], js["message"]) == (kind, message)


def test_an_empty_probe_list_is_refused() -> None:
    # With no probe size the trap has no rows, and its spread would be -inf - inf.
    # (The wasm door takes no probe list: it always runs the core's default probes.)
    kind, message = refusal(lambda: _core.equal_budget(DROP, {"probes": []}))
    assert kind == "InvalidParameter" and "`probes`" in message


@pytest.mark.parametrize("k, budget", [(1e5, 16_000), (1e6, 8_000), (1e6, 32_000), (1e8, 32_000), (1e6, 400)])
def test_the_wasm_table_is_the_native_one(k: float, budget: int) -> None:
    # The same core, compiled twice, gives the same bits (docs/model.md §11): every row and
    # probe row equal, a row that fits no tolerance null on both sides. (At k = 1e6 and 8,000
    # evaluations the adaptive rows' rtol grid once came from the platform's pow, an ulp apart
    # in wasm, which moved the event-located row's Jacobian in its eighth digit.)
    native = fm.equal_budget(k=k, budget=budget)
    js = node([f"m.equalBudget(drop, {k!r}, {budget})"])[0]["value"]
    assert untimed(js) == untimed(native)


# ---- the rk4 route ----------------------------------------------------------------------------

def rk4_by_hand(drop: fm.Drop, k: float, dt: float, x0: tuple[float, float] | None = None) -> tuple[float, float]:
    """Classical RK4 of the push-only penalty drop written out here (from ``x0``, default the
    drop's own start), the oracle of fm.rk4's state and, by central differences, its Jacobian."""
    m, g = drop.mass, drop.gravity
    c = 2.0 * drop.zeta * math.sqrt(k * m)

    def f(y: float, v: float) -> tuple[float, float]:
        force = max(0.0, -k * y - c * v) if y < 0.0 else 0.0
        return v, force / m - g

    y, v = (drop.height, drop.velocity) if x0 is None else x0
    for _ in range(round(drop.t_final / dt)):
        a1 = f(y, v)
        a2 = f(y + 0.5 * dt * a1[0], v + 0.5 * dt * a1[1])
        a3 = f(y + 0.5 * dt * a2[0], v + 0.5 * dt * a2[1])
        a4 = f(y + dt * a3[0], v + dt * a3[1])
        y += dt / 6.0 * (a1[0] + 2.0 * a2[0] + 2.0 * a3[0] + a4[0])
        v += dt / 6.0 * (a1[1] + 2.0 * a2[1] + 2.0 * a3[1] + a4[1])
    return y, v


@pytest.mark.parametrize("k", [1e4, 1e6])
def test_the_rk4_route_is_classical_rk4_of_the_drop(k: float) -> None:
    r = fm.rk4(DROP, k, 1e-4)
    y, v = rk4_by_hand(DROP, k, 1e-4)
    assert abs(r.state[0] - y) <= 1e-12 * max(1.0, abs(y)) and abs(r.state[1] - v) <= 1e-12 * max(1.0, abs(v))
    assert (r.steps, r.force_evals, r.rollouts) == (8000, 32_000, 1)
    # The equal-budget table's "RK4 uniform" row at 32,000 evaluations is this very route.
    row = next(w for w in fm.equal_budget(k=k, budget=32_000)["rows"] if w["route"] == "RK4 uniform")
    assert row["dv_dy0"] == r.jacobian[1, 0]


def test_the_rk4_tangent_is_the_derivative_of_that_map() -> None:
    # Central differences of the hand-written RK4 map at a step that resolves the contact.
    k, dt, h = 1e5, 4e-4, 1e-7
    r = fm.rk4(DROP, k, dt)
    x0 = (DROP.height, DROP.velocity)
    for j in range(2):
        up = rk4_by_hand(DROP, k, dt, tuple(x + (h if i == j else 0.0) for i, x in enumerate(x0)))
        down = rk4_by_hand(DROP, k, dt, tuple(x - (h if i == j else 0.0) for i, x in enumerate(x0)))
        for i in range(2):
            assert r.jacobian[i, j] == pytest.approx((up[i] - down[i]) / (2 * h), rel=1e-5), (i, j)
    assert r.force_evals == 4 * r.steps == 4 * round(DROP.t_final / dt) and r.step_stable is True


def test_the_rk4_route_refuses_like_the_fixed_route_and_flags_an_unstable_step() -> None:
    for dt in (0.0, -1e-4, math.nan, 1.0, 3e-4):
        kind, message = refusal(lambda: fm.fixed(DROP, 1e6, dt))
        assert refusal(lambda: fm.rk4(DROP, 1e6, dt)) == (kind, message), dt
    with pytest.raises(fm.TooManySteps, match="the rk4 route goes past its cap of 100 steps"):
        fm.rk4(DROP, 1e6, 1e-4, max_steps=100)
    # omega*dt = 100 at k = 1e12: blown up, and said so; omega*dt = 0.1 at k = 1e6: not.
    blown = fm.rk4(DROP, 1e12, 1e-4)
    assert blown.step_stable is False and abs(blown.state[1]) > DROP.impact_speed()
    assert "UNSTABLE STEP" in repr(blown) and "RK4" in repr(blown)
    # omega*dt = 10 at k = 1e10: finite, but the 1 m drop ends higher than it started.
    thrown = fm.rk4(DROP, 1e10, 1e-4)
    assert thrown.step_stable is False and thrown.omega_dt == pytest.approx(10.0) and thrown.state[0] > DROP.height
    with pytest.raises(fm.InvalidParameter):
        fm.rk4(DROP, math.nan, 1e-4)
    assert fm.rk4(DROP, 1e6, 1e-4).step_stable is True


# ---- huge stiffness ---------------------------------------------------------------------------

def test_a_stiffness_f64_cannot_hold_is_refused_alike_in_python_and_in_wasm() -> None:
    # At k = 1e40 the flow's dv(T)/dv0 used to read thousands (the rigid limit says 1); its own
    # error bound says so, and the route now refuses instead of answering.
    kind, message = refusal(lambda: fm.flow(DROP, 1e40))
    assert kind == "InvalidParameter" and "`k`" in message
    js = node(["m.routeFlow(drop, 1e40, {})"])[0]
    assert (js["kind"], js["message"]) == (kind, message)
    # Well inside f64's reach the flow answers, and matches the stiff limit.
    r = fm.flow(DROP, 1e16)
    assert abs(r.jacobian - fm.exact(DROP).jacobian).max() < 1e-6


def test_an_unstable_corrected_step_is_flagged_in_python() -> None:
    # omega*dt = 3.16 at k = 1e9, dt = 1e-4: past semi-implicit Euler's limit, and the corrected
    # route (the same step in contact) ends below the ground; its readout says why.
    r = fm.corrected(DROP, 1e9, 1e-4)
    assert r.step_stable is False and r.state[0] < 0 and "UNSTABLE STEP" in repr(r)
    assert r.step_stable == fm.fixed(DROP, 1e9, 1e-4).step_stable
    assert fm.corrected(DROP, 1e6, 1e-4).step_stable is True


# ---- min_step at every door that runs the tolerance route -----------------------------------

FWD = {"tolerance": 1e-6, "events": True, "jacobian": "forward"}


def test_min_step_reaches_the_tolerance_route_from_every_door() -> None:
    # The reference refusal: the route itself. The event-located controller's smallest
    # unforced step on this drop is above 1e-4 s and below 1e-3 s, so a floor of 1e-3 s refuses.
    kind, message = refusal(lambda: fm.tolerance(DROP, 1e6, rtol=1e-6, events=True, jacobian="forward",
                                                 min_step=1e-3))
    assert kind == "StepTooSmall"
    doors = {
        "sweep": lambda: fm.sweep(DROP, [1e6], min_step=1e-3, **FWD),
        "Workbench": lambda: fm.Workbench(k=1e6, min_step=1e-3, **FWD).readout(),
    }
    for name, call in doors.items():
        assert refusal(call) == (kind, message), name
    # set_tolerance keeps the floor it was built with.
    bench = fm.Workbench(k=1e6, tolerance=1e-6, events=True, min_step=1e-3)
    bench.set_tolerance(True, rtol=1e-6, events=True, jacobian="forward")
    assert refusal(bench.readout) == (kind, message)
    p = run_cli("audit", "--quiet", "--k-min", "1e6", "--k-max", "1e6", "--rtol", "1e-6", "--events",
            "--jacobian", "forward", "--min-step", "1e-3")
    assert p.returncode == 1 and message in p.stderr and "Traceback" not in p.stderr
    js = node(["m.sweep(drop, Float64Array.of(1e6), {dt: 1e-4, tolerance: {rtol: 1e-6, events: true, jacobian: 'forward', min_step: 1e-3}})"])[0]
    assert (js["kind"], js["message"]) == (kind, message)
    # A floor below every step changes nothing, at each door.
    free = fm.sweep(DROP, [1e6], **FWD)
    floored = fm.sweep(DROP, [1e6], min_step=1e-4, **FWD)
    assert (free.tolerance.jacobian == floored.tolerance.jacobian).all()


def test_a_bad_min_step_is_the_same_refusal_at_every_door() -> None:
    kind, message = refusal(lambda: fm.tolerance(DROP, 1e6, min_step=-1.0))
    for call in (lambda: fm.sweep(DROP, [1e6], tolerance=1e-6, min_step=-1.0),
                 lambda: fm.Workbench(k=1e6, tolerance=1e-6, min_step=-1.0)):
        assert refusal(call) == (kind, message)
    p = run_cli("audit", "--quiet", "--min-step", "-1")
    # The CLI tells the core's limit with the flag and the value as typed.
    assert p.returncode == 1 and f"--min-step -1: {message.split(': ', 1)[1]}" in p.stderr
    js = node(["m.sweep(drop, Float64Array.of(1e6), {dt: 1e-4, tolerance: {rtol: 1e-6, min_step: -1}})"])[0]
    assert (js["kind"], js["message"]) == (kind, message)


def test_the_budget_table_never_lands_inside_csv() -> None:
    # --csv promises one CSV row per stiffness; the budget's text table would break it.
    p = run_cli("audit", "--quiet", "--csv", "--k-min", "1e6", "--k-max", "1e6", "--budget", "8000")
    assert p.returncode == 2 and p.stdout == "" and "--budget" in p.stderr
    # Nor is it dropped without a word beside --engine (which audits another simulator).
    engine = run_cli("audit", "--engine", "jax", "--budget", "8000")
    assert engine.returncode == 2 and engine.stdout == "" and "--budget" in engine.stderr
    # Without --budget the CSV is unchanged: a header and one row.
    plain = run_cli("audit", "--quiet", "--csv", "--k-min", "1e6", "--k-max", "1e6")
    assert plain.returncode == 0 and len(plain.stdout.strip().splitlines()) == 2


def test_a_wrong_python_type_in_an_option_names_the_option() -> None:
    # pythonize reports these with the Python exception alone ("OverflowError: can't convert
    # negative int to unsigned"); the binding adds which option it was.
    for kwargs, key in [({"max_steps": -1}, "max_steps"), ({"max_steps": 1.5}, "max_steps"),
                        ({"rtol": "1e-6"}, "rtol"), ({"min_step": None}, "min_step")]:
        with pytest.raises(fm.ScenarioError, match=f"`{key}`"):
            fm.tolerance(DROP, 1e6, **kwargs)
    with pytest.raises(fm.ScenarioError, match="`budget`"):
        fm.equal_budget(budget=-4)
    # serde's unknown variant in the user's words: the option, the value, the choices (the wasm door's text).
    assert refusal(lambda: fm.tolerance(DROP, 1e6, events=True, jacobian="bogus"))[1] == (
        'invalid scenario: `jacobian` = "bogus" is not one of its choices: richardson, forward')
