"""Bokeh figures of sweeps (error against stiffness, log-log, with the wrong-sign band) and of
gradient-check receipts (error against probe size, per direction).

Presentation only: every number drawn comes from the core through :func:`ferromotion.sweep`
and :func:`ferromotion.check_gradient`. Used by ``Sweep.plot()``, ``SweepGrid.plot()``,
``Receipt.plot()``, the Panel app and the notebooks. Needs bokeh
(``pip install 'ferromotion[plot]'``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

import numpy as np

from . import _core

if TYPE_CHECKING:  # pragma: no cover
    from . import Receipt, Sweep, SweepGrid

# One colour per route, the same in every figure.
COLORS = {
    "fixed": "#1f5fa8",
    "tolerance": "#d9822b",
    "corrected": "#2e8b57",
    "band": "#c0392b",
    "mark": "#444444",
}
# Lines for the steps of a SweepGrid, coarse to fine.
GRID_COLORS = ["#1f5fa8", "#7b3fa0", "#2e8b57", "#d9822b", "#8c564b", "#17becf"]
BAND_NAME = "wrong_sign"
MARK_NAME = "current_k"


def _bokeh() -> Any:
    try:
        import bokeh.plotting
    except ImportError as e:  # bokeh is optional (the `plot` and `app` extras)
        raise ImportError("plots need bokeh: pip install 'ferromotion[plot]'") from e
    return bokeh.plotting


def wrong_sign_spans(k: Any, right_sign: Any) -> List[Tuple[float, float]]:
    """The k ranges (N/m) to shade: each run of neighbouring stiffnesses whose sign is
    wrong, widened to the geometric midpoints between it and its right-sign neighbours
    (to the outermost stiffness at either end). Stiffnesses may come in any order.

    >>> wrong_sign_spans([1e2, 1e4, 1e6, 1e8], [True, False, False, True])
    [(1000.0, 10000000.0)]
    """
    ks = np.asarray(k, dtype=np.float64).ravel()
    signs = np.asarray(right_sign, dtype=bool).ravel()
    # One definition, in the core (the lab's plot shades the same bands).
    return [(float(a), float(b)) for a, b in _core.wrong_sign_bands(ks.tolist(), signs.tolist())]


def _positive(y: np.ndarray) -> np.ndarray:
    """A log axis cannot show zeros: they become gaps (NaN)."""
    y = np.asarray(y, dtype=np.float64)
    return np.where(y > 0, y, np.nan)


def _figure(title: str, width: int, height: int) -> Any:
    plotting = _bokeh()
    p = plotting.figure(
        title=title,
        x_axis_type="log",
        y_axis_type="log",
        width=width,
        height=height,
        x_axis_label="stiffness k (N/m)",
        y_axis_label="error against the exact answer",
        tools="pan,wheel_zoom,box_zoom,reset,save,hover",
        tooltips=[("k", "@x{0.00e}"), ("error", "@y{0.000e}")],
    )
    p.toolbar.logo = None
    return p


def _band(p: Any, k: Any, right_sign: Any, label: str) -> None:
    from bokeh.models import BoxAnnotation

    for left, right in wrong_sign_spans(k, right_sign):
        p.add_layout(BoxAnnotation(left=left, right=right, fill_color=COLORS["band"], fill_alpha=0.12,
                                   line_alpha=0, name=BAND_NAME))
    # A legend entry for the band (annotations have none).
    # One NaN row: nothing is drawn in the plot, but the legend gets its swatch.
    nan = [math.nan]
    p.quad(left=nan, right=nan, top=nan, bottom=nan, fill_color=COLORS["band"], fill_alpha=0.25,
           line_color=COLORS["band"], line_alpha=0.4, legend_label=label)


def _mark(p: Any, mark_k: Optional[float]) -> None:
    from bokeh.models import Span

    # Always present so that an app can move it; invisible without a k to mark.
    p.add_layout(Span(location=mark_k if mark_k is not None else 1.0, dimension="height",
                      line_color=COLORS["mark"], line_dash="dotted", line_width=2, name=MARK_NAME,
                      visible=mark_k is not None))


def _finish(p: Any) -> Any:
    # The legend sits below the plot, where it hides no data.
    legend = p.legend[0]
    legend.click_policy = "hide"
    legend.orientation = "vertical"
    legend.ncols = 2
    legend.label_text_font_size = "11px"
    p.add_layout(legend, "below")
    return p


def sweep_figure(s: "Sweep", *, mark_k: Optional[float] = None, title: Optional[str] = None, width: int = 720,
                 height: int = 480) -> Any:
    """Forward and gradient error of a sweep against k (see ``Sweep.plot``)."""
    p = _figure(title or f"Errors against the exact answer, dt = {s.dt:g} s", width, height)
    k = np.asarray(s.k)
    order = np.argsort(k, kind="stable")
    k = k[order]
    _band(p, s.k, s.right_sign, "fixed route: wrong sign of dv(T)/dy0")
    p.line(k, _positive(s.gradient_error[order]), line_width=2.5, color=COLORS["fixed"],
           legend_label="fixed: gradient error (relative)")
    p.scatter(k, _positive(s.gradient_error[order]), size=4, color=COLORS["fixed"],
              legend_label="fixed: gradient error (relative)")
    # |dy| in m, as the lab's plot and `ferromotion audit` show it (max(|dy|, |dv|) would mix m and m/s).
    p.line(k, _positive(np.asarray(s.dy)[order]), line_width=2, line_dash="dashed", color=COLORS["fixed"],
           legend_label="fixed: forward error |dy| at T (m)")
    if s.tolerance is not None:
        p.line(k, _positive(s.tolerance.gradient_error[order]), line_width=2.5, color=COLORS["tolerance"],
               legend_label="tolerance: gradient error")
    if s.corrected is not None:
        p.line(k, _positive(s.corrected.gradient_error[order]), line_width=2.5, color=COLORS["corrected"],
               legend_label="corrected: gradient error")
    _mark(p, mark_k)
    return _finish(p)


def grid_figure(g: "SweepGrid", *, mark_k: Optional[float] = None, title: Optional[str] = None,
                width: int = 720, height: int = 480) -> Any:
    """The fixed route's gradient error against k, one line per step (see ``SweepGrid.plot``)."""
    p = _figure(title or "Gradient error of the fixed route at several steps", width, height)
    k = np.asarray(g.k)
    order = np.argsort(k, kind="stable")
    if len(g):
        _band(p, g.k, g[0].right_sign, f"wrong sign at dt = {g.dt[0]:g} s")
    for i, s in enumerate(g):
        color = GRID_COLORS[i % len(GRID_COLORS)]
        label = f"dt = {s.dt:g} s"
        p.line(k[order], _positive(s.gradient_error[order]), line_width=2.5, color=color, legend_label=label)
        p.scatter(k[order], _positive(s.gradient_error[order]), size=4, color=color, legend_label=label)
    p.yaxis.axis_label = "gradient error (relative)"
    _mark(p, mark_k)
    return _finish(p)


def receipt_figure(r: "Receipt", *, title: Optional[str] = None, width: int = 720, height: int = 480) -> Any:
    """Relative error against probe size, one line per direction (see ``Receipt.plot``;
    a version-1 receipt's normalized error).

    Probes measured smooth are joined by the line; probes that straddle a kink, a jump or an
    event (or graze) are drawn as crosses and certify nothing. The tolerance is the
    dotted horizontal line.
    """
    plotting = _bokeh()
    from bokeh.models import Span

    p = plotting.figure(
        title=title or f"{r.objective['name'] or 'objective'}: {r.verdict}",
        x_axis_type="log",
        y_axis_type="log",
        width=width,
        height=height,
        x_axis_label="probe size eps",
        y_axis_label=("relative error |g.p - fd| / |fd|" if r.schema.endswith("/2")
                      else "normalized error |g.d - fd| / max(1, |g.d|, |fd|)"),
        tools="pan,wheel_zoom,box_zoom,reset,save,hover",
        tooltips=[("eps", "@x{0.0e}"), ("error", "@y{0.00e}")],
    )
    p.toolbar.logo = None
    for i, d in enumerate(r.directions):
        color = GRID_COLORS[i % len(GRID_COLORS)]
        smooth = np.array([c == "smooth" for c in d.probe_classification], dtype=bool)
        error = _positive(d.error)
        label = f"{d.label}: {d.classification}" + (", certified" if d.certified else "")
        p.line(d.eps, np.where(smooth, error, np.nan), line_width=2, color=color, legend_label=label)
        p.scatter(d.eps[smooth], error[smooth], size=4, color=color, legend_label=label)
        if (~smooth).any():
            p.scatter(d.eps[~smooth], error[~smooth], size=9, marker="x", line_width=2, color=color,
                      legend_label=label)
    p.add_layout(Span(location=r.options["tol"], dimension="width", line_color=COLORS["mark"], line_dash="dotted",
                      line_width=2, name="tolerance"))
    return _finish(p)
