"""The sweep is one core call that reports its progress: ``fm.sweep(progress=...)`` hears
``(done, total)`` from the core between chunks of rows, an exception the callable raises stops
the sweep and reaches the caller unchanged, watching changes no number, and the result carries
the options the core ran with."""

from __future__ import annotations

from typing import List, Tuple

import ferromotion as fm
import numpy as np
import pytest

KS = np.logspace(2, 8, 49)


def test_progress_is_heard_from_the_core_and_changes_no_number() -> None:
    heard: List[Tuple[int, int]] = []
    s = fm.sweep(fm.Drop(), KS, progress=lambda done, total: heard.append((done, total)))
    assert len(heard) > 1 and heard[-1] == (len(KS), len(KS))
    assert all(a[0] < b[0] for a, b in zip(heard, heard[1:]))
    quiet = fm.sweep(fm.Drop(), KS, quiet=True)
    assert s.gradient_error.tobytes() == quiet.gradient_error.tobytes()
    assert s.jacobian.tobytes() == quiet.jacobian.tobytes()


def test_a_grid_reports_over_all_its_steps() -> None:
    heard: List[Tuple[int, int]] = []
    fm.sweep(fm.Drop(), KS, dt=[1e-4, 1e-5], progress=lambda done, total: heard.append((done, total)))
    assert heard[-1] == (2 * len(KS), 2 * len(KS))
    assert all(a[0] < b[0] for a, b in zip(heard, heard[1:]))


def test_an_exception_in_the_callback_stops_the_sweep_and_is_raised_unchanged() -> None:
    calls = []

    def stop(done: int, total: int) -> None:
        calls.append(done)
        raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        fm.sweep(fm.Drop(), KS, progress=stop)
    assert len(calls) == 1


def test_the_result_carries_the_options_the_core_ran_with() -> None:
    s = fm.sweep(fm.Drop(), [1e6], dt=1e-5, tolerance=1e-6, events=True, min_step=1e-9, corrected=True)
    tol = {**fm.defaults()["tolerance"], "rtol": 1e-6, "events": True, "min_step": 1e-9}
    assert s.options == {"dt": 1e-5, "tolerance": tol, "corrected": True, "blame": False}
    assert s.to_dict()["tolerance"] == tol
    plain = fm.sweep(fm.Drop(), [1e6])
    assert plain.options["tolerance"] is None and plain.options["dt"] == fm.defaults()["dt"]
    bench = fm.Workbench(k=1e6, tolerance=1e-6, events=True)
    curve = bench.curve([1e4, 1e6])
    assert curve.options["dt"] == bench.dt and curve.options["tolerance"]["rtol"] == 1e-6


def test_the_wasm_sweep_reports_every_stiffness_and_changes_no_number() -> None:
    from test_refusals_at_every_door import node

    ks = [1e2, 1e3, 1e4, 1e5, 1e6]
    arr = f"Float64Array.from({ks})"
    heard, watched, plain, bench, stopped = node([
        f"(() => {{ const h = []; m.sweep(drop, {arr}, {{}}, (d, t) => h.push([d, t])); return h; }})()",
        f"m.sweep(drop, {arr}, {{corrected: true}}, () => {{}}).sweep.rows.map((r) => r.fixed.jacobian)",
        f"m.sweep(drop, {arr}, {{corrected: true}}).sweep",
        f"(() => {{ const h = []; const b = new m.Workbench(); b.curve({arr}, {{}}, (d) => h.push(d)); return h; }})()",
        f"m.sweep(drop, {arr}, {{}}, () => {{ throw new Error('stop here'); }})",
    ])
    # No threads in the browser's core: one stiffness per chunk, each reported.
    assert heard["value"] == [[i, len(ks)] for i in range(1, len(ks) + 1)]
    assert bench["value"] == list(range(1, len(ks) + 1))
    assert watched["value"] == [r["fixed"]["jacobian"] for r in plain["value"]["rows"]]
    # The same numbers as the native core's, and the options the core ran with.
    native = fm.sweep(fm.Drop(), ks, corrected=True)
    assert watched["value"] == [j.ravel().tolist() for j in native.jacobian]
    assert {key: plain["value"][key] for key in native.options} == native.options
    assert stopped["kind"] == "Scenario" and "stop here" in stopped["message"]
