"""The bench as a Panel app: the browser lab's controls and readouts, driven from Python.

A stiffness slider (k from 1e2 to 1e8 N/m, moving in tenths of a decade), the log-log plot right
under it (so that on a phone both fit on the first screen), the three step buttons (dt, dt/10,
dt/100), a switch for the tolerance route (with its rtol, event location and Jacobian method:
Richardson central differences or forward sensitivities, which switch event location on), every readout of
the core's bench and the blame split. The plot shows error against k with the current k marked
and the wrong-sign band shaded. Everything stretches to the window's width (up to 1000 px).
Every number comes from :class:`ferromotion.Workbench`; this module only lays them out.

Serve it with ``ferromotion app`` (127.0.0.1, offline: Panel and Bokeh send their own
JavaScript and CSS from the local server, nothing from a CDN; ``--prefix /course/ferromotion/``
serves it under a path, for a reverse proxy), or build it in a notebook::

    from ferromotion.app import create_app
    create_app().servable()

Needs panel and bokeh (``pip install 'ferromotion[app]'``).
"""

from __future__ import annotations

import html
import math
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any, Dict, List, Optional, Sequence, Tuple

import ferromotion as fm

from .plot import MARK_NAME

# Every default shown comes from the core (`fm.defaults()`).
DEFAULTS = fm.defaults()

# The lab's slider range, log10 of N/m, and its resolution. The slider moves log10 k but shows k.
LOG10_K_RANGE = (2.0, 8.0)
LOG10_K_STEP = 0.1
# The slider's value as the learner reads it: k in N/m (Bokeh formats it in the browser).
K_FORMAT_JS = "return Math.pow(10, tick).toExponential(1).replace('e+', 'e') + ' N/m';"
# The plot's height in px; its width follows the window.
PLOT_HEIGHT = 380
# Stiffnesses of the plot's curve: 4 per decade over the slider's range.
CURVE_PER_DECADE = 4
# The tolerance route's rtol choices, as the lab's select; the default is the core's (1e-12).
RTOL_CHOICES = [1e-4, 1e-6, 1e-8, 1e-11, 1e-12]
DIVISORS = (1, 10, 100)
# The tolerance route's Jacobian methods (the core's names) as the select shows them.
JACOBIAN_CHOICES = {"Richardson: central differences of 8 rollouts": "richardson",
                    "forward sensitivities: 1 rollout (needs events)": "forward"}


def require_panel() -> Any:
    """The ``panel`` module, or an ImportError naming the extra that brings it."""
    try:
        import panel as pn
    except ImportError as e:  # panel is optional (the `app` extra)
        raise ImportError("the app needs panel and bokeh: pip install 'ferromotion[app]'") from e
    return pn


def _label(pn: Any, text: str) -> Dict[str, str]:
    """A widget's caption: ``label`` in Panel >= 1.8 (``name`` is deprecated there), else ``name``."""
    return {"label": text} if "label" in pn.widgets.Widget.param else {"name": text}


# Numbers as the lab prints them (web/js/format.js, whose functions these mirror): JavaScript's
# toExponential, toPrecision and toFixed round the exact binary value half away from zero.


def _js(x: float, spec: str) -> str:
    """``x`` formatted by ``spec`` ("e" or "f") from its exact binary value, rounding half away
    from zero (as JavaScript's toExponential and toFixed do)."""
    with localcontext() as c:
        c.rounding = ROUND_HALF_UP
        return format(Decimal(x), spec)


def _precision(x: float, figures: int) -> str:
    """JavaScript's ``toPrecision`` for a number it prints without an exponent (1e-6 <= |x| <
    10**figures): ``figures`` significant figures, trailing zeros kept (1.50)."""
    mantissa, e = _js(x, f".{figures - 1}e").split("e")
    sign, digits, exp = ("-" if mantissa.startswith("-") else ""), mantissa.lstrip("-").replace(".", ""), int(e)
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    whole, fraction = digits[: exp + 1], digits[exp + 1:]
    return f"{sign}{whole}.{fraction}" if fraction else f"{sign}{whole}"


def _exp(x: float, digits: int) -> str:
    """format.js ``exp``: 1.0e6, 2.90e-3 (no "+", no leading zeros in the exponent)."""
    if x == 0:
        return f"{0:.{digits}f}e0"
    mantissa, e = _js(x, f".{digits}e").split("e")
    return f"{mantissa}e{int(e)}"


def _num(x: Optional[float]) -> str:
    """format.js ``num``: about three figures, 0.0103, 45.5, 1,601; exponential outside
    [0.01, 1e4); "n/a" for none, "not a number", "∞"; a minus sign, not a hyphen.

    >>> _num(0.010349), _num(45.49), _num(1600.5), _num(15912.3), _num(-2.87e-5), _num(None)
    ('0.0103', '45.5', '1,601', '1.59e4', '−2.87e-5', 'n/a')
    """
    if x is None:
        return "n/a"
    if x == 0:
        return "0"
    if math.isnan(x):
        return "not a number"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    a = abs(x)
    if 100 <= a < 1e4:
        text = f"{int(Decimal(x).quantize(Decimal(1), rounding=ROUND_HALF_UP)):,}"
    elif 1e-2 <= a < 100:
        text = _precision(x, 3)
    else:
        text = _exp(x, 2)
    return text.replace("-", "−", 1) if text.startswith("-") else text


def _int(n: int) -> str:
    """format.js ``int``: thousands separators."""
    return f"{n:,}"


def _times(x: float) -> str:
    """format.js ``times``: a ratio, 0.971×."""
    return f"{_num(x)}×"


def _slope(x: float) -> str:
    """format.js ``slope``: three decimals."""
    return _js(x, ".3f").replace("-", "−")


def _k_text(k: float) -> str:
    """format.js ``kText``: k = 1.0e6 N/m."""
    return f"k = {_exp(k, 1)} N/m"


def _dt_text(dt: float) -> str:
    """format.js ``dtText``: dt = 1e-4 s."""
    return f"dt = {_exp(dt, 0)} s"


def _wall(seconds: Optional[float], resolution: Optional[float]) -> str:
    """A wall time per Jacobian, two figures (the lab's format); under one clock tick it says so."""
    if seconds is None:
        return "not timed"
    if resolution is not None and seconds < resolution:
        return f"< {_duration(resolution)}"
    return _duration(seconds)


def _duration(seconds: float) -> str:
    """Two figures in the unit that reads best, as the lab prints it: 3.1 µs, 0.31 ms, 12 ms, 1.2 s."""
    ms = seconds * 1e3
    # format.js `duration`: below 99.5 µs in µs (two figures never round up to 1.0e2 there).
    if ms * 1e3 < 99.5:
        return f"{_precision(ms * 1e3, 2)} µs"
    if ms < 10:
        return f"{_precision(ms, 2)} ms"
    return f"{_js(ms, '.0f')} ms" if ms < 1000 else f"{_precision(seconds, 2)} s"


def _cost(row: Dict[str, Any], resolution: Optional[float]) -> str:
    """Force evaluations and wall time per Jacobian: "8,001 evals · 1.9 ms"."""
    evals = row["cost"]["force_evals"]
    what = f"{_int(evals)} evals" if evals else "closed form"
    return f"{what} · {_wall(row['wall_s'], resolution)}"


def _rows(rows: List[Tuple[str, str]]) -> str:
    body = "".join(f"<tr><th scope='row'>{html.escape(k)}</th><td>{v}</td></tr>" for k, v in rows)
    # A live region: screen readers announce the readouts when they change.
    return f"<div role='status' aria-live='polite'><table class='fm-readouts'>{body}</table></div>"


# The core's three sign states (readout.rs `Sign`).
_SIGN = {"right": "RIGHT SIGN", "wrong": "<strong>WRONG SIGN</strong>",
         "right_far_off": "RIGHT SIGN, FAR OFF (gradient error at least the exact answer's size)"}


def _route_line(name: str, row: Dict[str, Any]) -> str:
    e = row["errors"]
    sign = _SIGN[e["sign"]]
    text = (f"gradient error {_num(e['gradient'])}; forward error |dy| {_num(e['dy'])} m; "
            f"dv(T)/dy0 = {_num(e['dv_dy0'])}: {sign}")
    return f"<span class='fm-{name}'>{text}</span>"


def readouts_html(r: Dict[str, Any]) -> str:
    """The bench's readouts (a ``Workbench.readout()`` dict) as an HTML table."""
    ex, fx, co = r["exact"], r["fixed"], r["corrected"]
    fe = fx["errors"]
    tick = r["wall_resolution_s"]
    rows = [
        ("setting", f"{_k_text(r['k'])}, {_dt_text(r['dt'])}, k·dt²/m = {_num(r['k_dt2'])}"),
        ("forward error (fixed)", f"|dy| = {_num(fe['dy'])} m (beside it |dv| = {_num(fe['dv'])} m/s)"),
        ("gradient error (fixed)", f"{_num(fe['gradient'])} (max|J - J_exact| / max|J_exact|)"),
        ("sign line", f"dv(T)/dy0: fixed {_num(fe['dv_dy0'])} vs exact {_num(fe['dv_dy0_exact'])}: "
                      + _SIGN[fe["sign"]]),
        ("divergence exponent", f"{_slope(r['exponent']['slope'])} (R² = {_slope(r['exponent']['r2'])}, "
                                f"{r['exponent']['points']} points, k = 1e4..1e8 at {_dt_text(r['dt'])})"),
        ("dt refinement", f"{_times(r['refinement']['ratio_10'])} at dt ÷ 10, {_times(r['refinement']['ratio_100'])} "
                          f"at dt ÷ 100 (against {_dt_text(r['refinement']['base_dt'])})"),
        ("cost (fixed)", f"{_int(fx['cost']['steps'])} steps, {_cost(fx, tick)} per Jacobian, "
                         f"{fx['cost']['rollouts']} rollout"),
        ("corrected route", _route_line("corrected", co) + f"; {_cost(co, tick)}"),
        ("flow (continuous penalty)", _route_line("flow", r["flow"]) + f"; {_cost(r['flow'], tick)}"),
    ]
    t = r["tolerance"]
    if t is None:
        rows.append(("tolerance route", "off"))
    else:
        flags = []
        if t["probe_dependent"]:
            flags.append("<strong>PROBE-DEPENDENT</strong>")
        flags.append("lands on the exact answer" if t["lands"] else "does not land on the exact answer")
        rows.append(("tolerance route", _route_line("tolerance", t)))
        method = ("forward sensitivities" if t["jacobian_method"] == "forward"
                  else "Richardson central differences")
        rollouts = t["cost"]["rollouts"]
        rows.append(("tolerance cost", f"{_cost(t, tick)} per Jacobian over {rollouts} "
                                       f"rollout{'s' if rollouts != 1 else ''} = {_times(t['cost_ratio'])} the fixed "
                                       f"route's evaluations at the base dt "
                                       f"(rtol = {_exp(t['rtol'], 0)}, events {'on' if t['events'] else 'off'}, {method}); "
                                       + "; ".join(flags)))
    e_k = r["restitution_at_k"]
    rows += [
        ("restitution", f"limit {_num(ex['restitution'])}; at this k {_num(e_k) if e_k is not None else 'no rebound'}"),
        ("time-of-impact term", f"(1+e)·g/|v| = {_num(ex['time_of_impact_term'])} 1/s at "
                                f"{_num(ex['impact_speed'])} m/s"),
    ]
    return _rows(rows)


def blame_html(r: Dict[str, Any]) -> str:
    """The blame split of a ``Workbench.readout()`` dict as an HTML table."""
    b = r["blame"]

    def share(value: float, below: bool) -> str:
        return f"&lt; floor ({_num(b['noise_floor'])})" if below else _num(value)

    c = r["contact_exponent"]
    return _rows([
        ("integrator share", share(b["integrator_share"], b["integrator_below_floor"])
         + " = max|J_fixed - J_flow|"),
        ("contact-model share", share(b["contact_share"], b["contact_below_floor"]) + " = max|J_flow - J_exact|"),
        ("ratio", _num(b["ratio"])),
        ("noise floor", f"{_num(b['noise_floor'])} (the flow's own error bound: round-off of its products and switch times)"),
        ("contact share exponent", f"{_slope(c['slope'])} (R² = {_slope(c['r2'])}, k = 1e4..1e8)"),
    ])


_CSS = """
.fm-readouts { border-collapse: collapse; font-size: 14px; }
.fm-readouts th { text-align: left; padding: 3px 12px 3px 0; font-weight: 600; vertical-align: top; white-space: nowrap; }
.fm-readouts td { padding: 3px 0; overflow-wrap: anywhere; }
@media (max-width: 600px) {
  .fm-readouts { font-size: 13px; }
  .fm-readouts th { white-space: normal; min-width: 6em; padding-right: 8px; }
}
"""


class BenchApp:
    """The app's state: a core :class:`ferromotion.Workbench`, the widgets and the panes.

    Build it with :func:`create_app`; ``layout`` is the Panel object to serve.
    """

    def __init__(self, drop: Optional[fm.Drop] = None, *, k: float = 1e6, dt: float = DEFAULTS["dt"]) -> None:
        pn = require_panel()
        self.workbench = fm.Workbench(drop, k=k, dt=dt)
        self._curves: Dict[Tuple[Any, ...], Any] = {}
        base = self.workbench.base_dt
        from bokeh.models import CustomJSTickFormatter

        self.slider = pn.widgets.FloatSlider(
            **_label(pn, "stiffness k"), start=LOG10_K_RANGE[0], end=LOG10_K_RANGE[1],
            step=LOG10_K_STEP, value=round(math.log10(k), 1), sizing_mode="stretch_width",
            format=CustomJSTickFormatter(code=K_FORMAT_JS),
        )
        self._dt_labels = {_dt_text(base): 1, f"dt ÷ 10 = {_exp(base / 10, 0)} s": 10,
                           f"dt ÷ 100 = {_exp(base / 100, 0)} s": 100}
        self.dt_buttons = pn.widgets.RadioButtonGroup(
            **_label(pn, "fixed step"), options=list(self._dt_labels), value=next(iter(self._dt_labels)),
        )
        self.tolerance_switch = pn.widgets.Switch(**_label(pn, "tolerance route"), value=False)
        self.rtol = pn.widgets.Select(**_label(pn, "rtol"), options={_exp(x, 0): x for x in RTOL_CHOICES},
                                      value=DEFAULTS["tolerance"]["rtol"], width=110)
        self.events = pn.widgets.Checkbox(**_label(pn, "stop at the contact switches (events)"), value=False)
        self.jacobian = pn.widgets.Select(**_label(pn, "Jacobian"), options=JACOBIAN_CHOICES,
                                          value=DEFAULTS["tolerance"]["jacobian"], width=300)
        # Forward sensitivities need located switches: choosing them switches events on and
        # holds the checkbox there (the core refuses forward without events).
        self.jacobian_note = pn.pane.Markdown("", sizing_mode="stretch_width", margin=(0, 10))
        self.status = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.readouts = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[_CSS])
        self.blame = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[_CSS])
        self.plot = pn.pane.Bokeh(None, sizing_mode="stretch_width")
        self.slider.param.watch(self._on_k, "value")
        self.dt_buttons.param.watch(self._on_controls, "value")
        self.tolerance_switch.param.watch(self._on_controls, "value")
        self.rtol.param.watch(self._on_controls, "value")
        self.events.param.watch(self._on_controls, "value")
        self.jacobian.param.watch(self._on_jacobian, "value")
        # Slider, then the plot it moves, then the other controls: on a 375 px phone the plot's
        # top half is on the first screen with the slider. Rows wrap instead of overflowing.
        self.layout = pn.Column(
            pn.pane.Markdown(
                "## Ferromotion bench\n"
                "A point mass dropped from 1 m bounces once before T = 0.8 s. Move the stiffness and watch "
                "what a fixed-step simulator's gradient does against the exact answer.",
                sizing_mode="stretch_width", margin=(0, 10),
            ),
            self.slider,
            self.plot,
            pn.FlexBox(pn.pane.Markdown("**fixed step**", width=90), self.dt_buttons,
                       flex_wrap="wrap", align_items="center", sizing_mode="stretch_width"),
            pn.FlexBox(self.tolerance_switch, self.rtol, self.jacobian, self.events,
                       flex_wrap="wrap", align_items="center", sizing_mode="stretch_width"),
            self.jacobian_note,
            self.status,
            pn.pane.Markdown("### Readouts"),
            self.readouts,
            pn.pane.Markdown("### Blame split"),
            self.blame,
            sizing_mode="stretch_width",
            max_width=1000,
        )
        self._apply_controls()

    # ------------------------------------------------------------------ updates

    def _show_error(self, e: Exception) -> None:
        self.status.object = f"**status: error:** {html.escape(str(e))}"

    def _curve_figure(self) -> Any:
        """The plot at the current step and tolerance setting (cached: it does not depend on k)."""
        c = self.workbench.config()
        key = (c["dt"], c["tolerance"], c["rtol"], c["events"], c["jacobian"])
        if key not in self._curves:
            s = self.workbench.curve(fm.log_grid(*LOG10_K_RANGE, CURVE_PER_DECADE))
            fig = s.plot(mark_k=self.workbench.k, height=PLOT_HEIGHT,
                         title=f"Errors against the exact answer, {_dt_text(c['dt'])}")
            fig.sizing_mode = "stretch_width"  # the window's width, not a fixed 720 px
            fig.min_width = 280
            fig.legend[0].ncols = 1  # one entry per line: two side by side overflow a phone's width
            self._curves[key] = fig
        return self._curves[key]

    def _refresh(self, new_plot: bool) -> None:
        r = self.workbench.readout()
        self.readouts.object = readouts_html(r)
        self.blame.object = blame_html(r)
        fig = self._curve_figure()
        span = fig.select_one({"name": MARK_NAME})
        span.location = self.workbench.k
        span.visible = True
        if new_plot or self.plot.object is not fig:
            self.plot.object = fig
        self.status.object = "status: ok"

    def _apply_controls(self) -> None:
        try:
            self.workbench.set_log10_k(self.slider.value)
            self.workbench.set_dt_divisor(self._dt_labels[self.dt_buttons.value])
            self.workbench.set_tolerance(self.tolerance_switch.value, rtol=self.rtol.value, events=self.events.value,
                                         jacobian=self.jacobian.value)
            self._refresh(new_plot=True)
        except fm.FerroError as e:
            self._show_error(e)

    def _on_k(self, event: Any) -> None:
        try:
            self.workbench.set_log10_k(event.new)
            self._refresh(new_plot=False)
        except fm.FerroError as e:
            self._show_error(e)

    def _on_controls(self, event: Any) -> None:
        self._apply_controls()

    def _on_jacobian(self, event: Any) -> None:
        forward = event.new == "forward"
        self.events.disabled = forward
        self.jacobian_note.object = ("Forward sensitivities need the contact switches located: event location is "
                                     "on while they are chosen." if forward else "")
        if forward and not self.events.value:
            self.events.value = True  # applies the controls through its own watcher
        else:
            self._apply_controls()


def create_app(drop: Optional[fm.Drop] = None, *, k: float = 1e6, dt: float = DEFAULTS["dt"]) -> Any:
    """The bench as a Panel layout (a ``panel.Column``), ready to serve or show.

    Parameters
    ----------
    drop : Drop, optional
        The drop; default ``Drop()``.
    k : float
        Initial stiffness, N/m (the slider moves it in steps of 0.1 in log10 k).
    dt : float
        The base fixed step, s; the buttons offer dt, dt/10 and dt/100.

    Examples
    --------
    >>> from ferromotion.app import create_app
    >>> app = create_app(k=1e6)
    >>> type(app).__name__
    'Column'
    """
    return BenchApp(drop, k=k, dt=dt).layout


def url_prefix(prefix: Optional[str]) -> str:
    """A URL path prefix as Bokeh's server takes it: "" for none, else "/a/b" (slashes at either
    end dropped, so "/course/ferromotion/" and "course/ferromotion" are the same prefix).

    >>> url_prefix("/course/ferromotion/"), url_prefix(None), url_prefix("/")
    ('/course/ferromotion', '', '')
    """
    parts = [p for p in (prefix or "").split("/") if p]
    return "/" + "/".join(parts) if parts else ""


def serve(port: int = 5006, *, show: bool = False, on_ready: Any = None, prefix: Optional[str] = None,
          origins: Sequence[str] = ()) -> None:
    """Serve :func:`create_app` on 127.0.0.1 until interrupted (``ferromotion app``).

    ``port`` 0 picks a free port. ``on_ready(url)`` is called once the server listens.
    Panel's JavaScript and CSS come from this server (resources mode "server"), so the
    page needs no network.

    ``prefix`` serves the app, its resources and its websocket under a URL path
    (``"/course/ferromotion/"`` gives ``http://127.0.0.1:5006/course/ferromotion/``), as a
    reverse proxy that forwards that path unchanged expects. ``origins`` adds the hosts
    (``host[:port]``) whose pages may open the app's websocket: the public host of such a
    proxy (127.0.0.1 and localhost always may).
    """
    pn = require_panel()
    from bokeh.settings import settings

    # Panel and Bokeh's JavaScript and CSS from this server, whatever BOKEH_RESOURCES says.
    settings.resources.set_value("server")
    path = url_prefix(prefix)
    extra: Dict[str, Any] = {}
    if path:
        # Bokeh answers /favicon.ico at the root only, but the page asks for ./favicon.ico: under
        # the prefix too (a proxy forwards only the prefix), Panel's own icon.
        from panel.io.resources import DIST_DIR
        from tornado.web import StaticFileHandler

        extra["extra_patterns"] = [(r"/(favicon\.ico)", StaticFileHandler, {"path": str(DIST_DIR / "images")})]
    server = pn.serve(
        {"/": create_app},
        address="127.0.0.1",
        port=port,
        prefix=path,
        show=False,
        start=False,
        title="Ferromotion bench",
        # Any port of the local host: the server binds 127.0.0.1 only.
        websocket_origin=["127.0.0.1", "localhost", *origins],
        threaded=False,
        **extra,
    )
    url = f"http://127.0.0.1:{server.port}{path}/"
    if on_ready is not None:
        on_ready(url)
    if show:
        import webbrowser

        webbrowser.open(url)
    server.start()
    try:
        server.io_loop.start()
    finally:
        server.stop()
