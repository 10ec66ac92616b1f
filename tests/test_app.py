"""The Panel app without a server: it builds, renders to Bokeh models, and its widgets drive
the core's bench. (tests/test_app_in_chromium.py serves it and drives it in a browser.)"""

from __future__ import annotations

import re

import pytest
from support import run_cli

pn = pytest.importorskip("panel", reason="the app needs panel (requirements-dev.txt installs it)")

from bokeh.document import Document  # noqa: E402

import ferromotion as fm  # noqa: E402
from ferromotion.app import BenchApp, blame_html, create_app, readouts_html  # noqa: E402
from ferromotion.plot import BAND_NAME, MARK_NAME  # noqa: E402


def untimed(html: str) -> str:
    """Readouts with their wall times blanked (measured anew by every bench)."""
    return re.sub(r"(?:&lt; |< )?\d[\d.,]* (?:µs|ms|s)\b", "<wall>", html)


def test_create_app_builds_without_a_server() -> None:
    app = create_app()
    assert isinstance(app, pn.Column)
    root = app.get_root(Document())  # the Bokeh models a server would send
    assert root is not None
    assert "Ferromotion bench" in app[0].object
    assert any(isinstance(obj, pn.pane.Bokeh) for obj in app)


def test_initial_readouts_come_from_the_bench() -> None:
    a = BenchApp(k=1e6)
    r = fm.Workbench(k=1e6).readout()
    # The same readouts, except the wall times: each bench measures its own.
    assert untimed(a.readouts.object) == untimed(readouts_html(r))
    assert "evals · " in a.readouts.object
    assert a.blame.object == blame_html(r)
    assert "WRONG SIGN" in a.readouts.object and "k = 1.0e6 N/m" in a.readouts.object
    assert a.status.object == "status: ok"


def test_slider_moves_k_and_the_marker() -> None:
    a = BenchApp(k=1e6)
    fig = a.plot.object
    a.slider.value = 2.0
    assert a.workbench.k == pytest.approx(1e2)
    assert "k = 1.0e2 N/m" in a.readouts.object
    assert "RIGHT SIGN" in a.readouts.object.split("sign line")[1].split("</tr>")[0]
    assert a.plot.object is fig, "moving k must not rebuild the plot"
    assert fig.select_one({"name": MARK_NAME}).location == pytest.approx(1e2)
    assert list(fig.select({"name": BAND_NAME})), "the wrong-sign band is drawn"


def test_dt_buttons_and_tolerance_switch_reach_the_core() -> None:
    a = BenchApp(k=1e6)
    labels = list(a.dt_buttons.options)
    a.dt_buttons.value = labels[1]
    assert a.workbench.dt == pytest.approx(1e-5)
    assert "dt = 1e-5 s" in a.readouts.object
    a.tolerance_switch.value = True
    assert a.workbench.tolerance
    assert "tolerance cost" in a.readouts.object and "rtol = 1e-12" in a.readouts.object
    a.rtol.value = 1e-6
    a.events.value = True
    assert "rtol = 1e-6, events on" in a.readouts.object
    a.tolerance_switch.value = False
    assert "<td>off</td>" in a.readouts.object


def test_the_jacobian_select_switches_events_on_and_reaches_the_core() -> None:
    a = BenchApp(k=1e6)
    a.tolerance_switch.value = True
    a.rtol.value = 1e-6
    assert not a.events.value
    a.jacobian.value = "forward"
    # Forward needs events: the app switches them on and holds the checkbox, never a refusal.
    assert a.events.value and a.events.disabled and "need the contact switches located" in a.jacobian_note.object
    assert a.status.object == "status: ok"
    c = a.workbench.config()
    assert (c["jacobian"], c["events"]) == ("forward", True)
    r = fm.tolerance(fm.Drop(), 1e6, rtol=1e-6, events=True, jacobian="forward")
    assert f"{r.force_evals:,} evals · " in a.readouts.object and "over 1 rollout " in a.readouts.object
    assert "forward sensitivities" in a.readouts.object
    a.jacobian.value = "richardson"
    assert not a.events.disabled and a.workbench.config()["jacobian"] == "richardson"


def test_a_refused_setting_shows_in_the_status_line() -> None:
    a = BenchApp(k=1e6, dt=1e-4)
    a.slider.value = 8.0
    assert a.status.object == "status: ok"
    a._show_error(fm.InvalidParameter("invalid parameter `k` = -1: must be finite and > 0"))
    assert a.status.object.startswith("**status: error:**") and "`k`" in a.status.object


def test_create_app_validates_its_arguments() -> None:
    with pytest.raises(fm.InvalidParameter):
        create_app(k=-1.0)


def test_the_app_command_on_a_busy_port_is_a_clear_error() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        p = run_cli("app", "--port", str(port), timeout=120)
    assert p.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in p.stderr
    assert "Traceback" not in p.stderr


def test_the_plot_draws_the_forward_error_as_dy_in_metres() -> None:
    """The lab's plot and `ferromotion audit` show |dy| in m; max(|dy|, |dv|) mixes m and m/s."""
    import numpy as np

    a = BenchApp(k=1e6)
    fig = a.plot.object
    dashed = [r for r in fig.renderers if type(r.glyph).__name__ == "Line" and list(r.glyph.line_dash)]
    assert len(dashed) == 1
    legend = [item.label.value for item in fig.legend[0].items if dashed[0] in item.renderers]
    assert legend == ["fixed: forward error |dy| at T (m)"]
    s = a.workbench.curve(fm.log_grid(2.0, 8.0, 4))
    order = np.argsort(s.k)
    plotted = np.asarray(dashed[0].data_source.data["y"], dtype=float)
    assert np.array_equal(plotted, np.asarray(s.dy)[order])
    # Where the plotted curve bottoms out is where the core's |dy| does, not the velocity's.
    k = np.asarray(s.k)[order]
    assert k[np.argmin(plotted)] == k[np.argmin(np.abs(np.asarray(s.dy)[order]))]
    assert k[np.argmin(plotted)] < 1e5 < k[np.argmin(np.asarray(s.forward_error)[order])]


def test_numbers_print_as_the_labs_format_js_prints_them() -> None:
    """The app's formatters against web/js/format.js run in Node on the same values."""
    import random

    from classkit import js_format
    from ferromotion import app

    rng = random.Random(7)
    values = [rng.choice([-1, 1]) * 10 ** rng.uniform(-7, 9) for _ in range(200)]
    values += [0.0, 0.125, 2.5, 99.95, 100.0, 1600.5, 9999.5, 1e4, 0.01, 0.0099999, 45.49, -2.87e-5]
    got = [app._num(x) for x in values] + [app._slope(x) for x in values] + [app._exp(x, 1) for x in values]
    want = js_format([("num", x) for x in values] + [("slope", x) for x in values]
                     + [("exp", x, 1) for x in values])
    assert got == want
    assert app._k_text(1e6) == "k = 1.0e6 N/m" and app._dt_text(1e-5) == "dt = 1e-5 s"
    assert app._int(8000) == "8,000" and app._times(0.9714) == "0.971×"
