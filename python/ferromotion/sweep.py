"""Sweeps over stiffness, one numpy array per readout (core: ``lab/sweep.rs``)."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union, overload

import numpy as np

from . import _core
from ._core import FerroError, InvalidParameter
from ._common import ArrayLike, DT, TOL, Json, float_array, frozen, tolerance_rtol
from ._results import SweepBlame, SweepResult, SweepRoute, sweep_options
from .routes import Drop, Route
from .readouts import ExponentFit


# Sweeps

# Seconds before a sweep's progress bar appears: sweeps that finish sooner print nothing.
_PROGRESS_DELAY = 0.5
# Stiffnesses at or below which no bar is shown (the core runs them in one go).
_SHORT = 16


class Sweep(SweepResult):
    """Every readout of a sweep over stiffness, as numpy arrays.

    Made by :func:`sweep`. The fixed route is the sweep's subject: its readouts are
    also available at the top level (``s.gradient_error`` is ``s.fixed.gradient_error``).
    Presentation (``repr``, ``exponent``, ``to_dict``) is shared with the lab's in-browser
    package (``ferromotion._results``).

    Attributes
    ----------
    drop : Drop
        The drop.
    options : dict
        The core's options the sweep ran with: ``dt``, ``tolerance`` (the tolerance route's
        options, or None), ``corrected``, ``blame``.
    dt : float
        Fixed step, s.
    k : numpy.ndarray
        Stiffnesses, N/m, shape (n,), in the order given.
    exact : Route
        The rigid reference every row is compared with.
    fixed : SweepRoute
        The fixed route's readouts.
    tolerance : SweepRoute or None
        The tolerance route's readouts, when asked for.
    corrected : SweepRoute or None
        The corrected route's readouts (same dt), when asked for.
    blame : SweepBlame or None
        The blame split, when asked for.
    tolerance_cost_ratio : numpy.ndarray or None
        Force evaluations of the tolerance route's Jacobian over the fixed route's, per k,
        when the tolerance route ran.
    """

    _errors = (FerroError, InvalidParameter)
    _error_module = _core

    def __init__(self, answer: Dict[str, Any], drop: Drop) -> None:
        self._answer = answer
        self.drop = drop
        self.options = answer["options"]
        self.dt = answer["dt"]
        self.k = frozen(answer["k"])
        self.exact = Route._from_core("exact", answer["exact"])
        self.fixed = SweepRoute(answer["fixed"])
        self.tolerance = None if answer["tolerance"] is None else SweepRoute(answer["tolerance"])
        self.corrected = None if answer["corrected"] is None else SweepRoute(answer["corrected"])
        self.blame = None if answer["blame"] is None else SweepBlame(answer["blame"])
        ratio = answer["tolerance_cost_ratio"]
        self.tolerance_cost_ratio = None if ratio is None else frozen(ratio)

    def _core_document(self) -> Dict[str, Any]:
        d: Dict[str, Any] = json.loads(self._answer["json"])
        return d

    def _fit_lab(self) -> Mapping[str, Any]:
        return _core.divergence_exponent(self.drop, self.dt)

    def _log_grid(self, lo: float, hi: float, per_decade: int) -> Any:
        return _core.log_grid(lo, hi, per_decade)

    def plot(self, *, mark_k: Optional[float] = None, title: Optional[str] = None, width: int = 720,
             height: int = 480) -> Any:
        """A Bokeh figure: forward and gradient error against k, log-log.

        The fixed route's two errors, the tolerance and corrected routes' gradient errors
        when the sweep ran them, the k ranges where the fixed route's dv(T)/dy0 has the
        wrong sign shaded, and ``mark_k`` (N/m) marked with a vertical line. Show it with
        ``bokeh.plotting.show(fig)`` or put it in a Panel app.

        Needs bokeh (``pip install 'ferromotion[plot]'``).

        Examples
        --------
        >>> import numpy as np, ferromotion as fm
        >>> fig = fm.sweep(fm.Drop(), k=np.logspace(2, 8, 25)).plot(mark_k=1e6)
        >>> fig.x_scale.__class__.__name__, fig.y_scale.__class__.__name__
        ('LogScale', 'LogScale')
        """
        from .plot import sweep_figure

        return sweep_figure(self, mark_k=mark_k, title=title, width=width, height=height)


Progress = Callable[[int, int], Any]


def _progress_bar(total: int, quiet: bool) -> Any:
    """A tqdm bar on a terminal, or None (quiet, not a TTY, tqdm missing, or a short sweep)."""
    if quiet or total <= _SHORT or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm  # type: ignore[import-untyped,unused-ignore]
    except ImportError:  # tqdm is optional (the `progress` extra)
        return None
    return tqdm(total=total, unit="k", desc="sweep", delay=_PROGRESS_DELAY, file=sys.stderr)


@overload
def sweep(drop: Drop, k: Any, dt: float = ..., *, tolerance: Union[None, bool, float] = ...,
          events: bool = ..., jacobian: str = ..., min_step: float = ..., corrected: bool = ...,
          blame: bool = ..., quiet: bool = ..., progress: Optional[Progress] = ...) -> Sweep: ...


@overload
def sweep(drop: Drop, k: Any, dt: ArrayLike, *, tolerance: Union[None, bool, float] = ...,
          events: bool = ..., jacobian: str = ..., min_step: float = ..., corrected: bool = ...,
          blame: bool = ..., quiet: bool = ..., progress: Optional[Progress] = ...) -> "SweepGrid": ...


def sweep(drop: Drop, k: Any, dt: Union[float, ArrayLike] = DT, *, tolerance: Union[None, bool, float] = None,
          events: bool = False, jacobian: str = TOL["jacobian"], min_step: float = TOL["min_step"],
          corrected: bool = False, blame: bool = False, quiet: bool = False,
          progress: Optional[Progress] = None) -> Union[Sweep, "SweepGrid"]:
    """Run the routes at many stiffnesses; every readout comes back as a numpy array.

    The core computes the rows on all cores with the GIL released, and reports its progress
    between chunks of rows: to ``progress`` when given, else to a bar on a terminal (needs
    tqdm) for sweeps that take longer than about half a second, unless ``quiet``; nothing is
    printed when stderr is not a terminal. Ctrl-C stops a sweep that reports progress.

    Parameters
    ----------
    drop : Drop
        The drop.
    k : array_like
        Stiffnesses, N/m, shape (n,), in any order (the rows keep it).
    dt : float or array_like
        Fixed step, s. A number gives a :class:`Sweep`. An array of steps, shape (m,),
        gives a :class:`SweepGrid`: one sweep per step, its readouts stacked with the step
        first, shape (m, n).
    tolerance : None, bool or float
        Also run the tolerance route: True for the default rtol, a number for that rtol.
        (It has no fixed step, so in a grid it is the same at every dt.)
    events : bool
        The tolerance route stops its rollouts at the contact switches.
    jacobian : {"richardson", "forward"}
        How the tolerance route gets J (see :func:`tolerance`): central differences of 8
        rollouts, or forward sensitivities along one rollout, which needs ``events=True``
        (refused with :class:`InvalidParameter` otherwise, before any row runs).
    min_step : float
        Smallest step the tolerance route's controller may ask for, s (0: no floor); below
        it the row is refused (:class:`StepTooSmall`), as :func:`tolerance` refuses.
    corrected : bool
        Also run the corrected route at the same dt.
    blame : bool
        Also compute the blame split at every k.
    quiet : bool
        Never show a progress bar.
    progress : callable, optional
        Called as ``progress(done, total)`` (stiffnesses computed so far, of all the
        sweep's, over every step of a grid) as the core goes; an exception it raises stops the
        sweep and is raised here. Replaces the bar.

    Returns
    -------
    Sweep or SweepGrid

    Raises
    ------
    InvalidParameter
        ``k`` (or ``dt``) is not one-dimensional or not numeric, or a value is out of range.
    StepDoesNotDivide, TooManySteps
        A step does not suit the drop's final time.

    Examples
    --------
    >>> import numpy as np, ferromotion as fm
    >>> s = fm.sweep(fm.Drop(), k=np.logspace(2, 8, 61), dt=1e-4)
    >>> s.gradient_error.shape, s.jacobian.shape, s.right_sign.dtype
    ((61,), (61, 2, 2), dtype('bool'))
    >>> s.exponent().points   # the lab's nine (points="all": the 41 of the 61 in [1e4, 1e8])
    9
    >>> g = fm.sweep(fm.Drop(), k=np.logspace(4, 8, 9), dt=[1e-4, 1e-5, 1e-6])
    >>> g.gradient_error.shape   # (dt, k)
    (3, 9)
    >>> [round(f.slope, 2) for f in g.exponent()]
    [0.48, 0.48, 0.5]
    >>> f = fm.sweep(fm.Drop(), k=[1e6], tolerance=1e-6, events=True, jacobian="forward")
    >>> int(f.tolerance.rollouts[0]), bool(f.tolerance.right_sign[0])
    (1, True)
    """
    ks = float_array(k, "k")
    dts = float_array(dt, "dt")
    rtol = tolerance_rtol(tolerance)
    if dts.ndim > 1:
        raise InvalidParameter(
            f"invalid parameter `dt`: expected a number or an array of shape (m,), got {dts.shape}")
    if ks.ndim != 1:
        raise InvalidParameter(f"invalid parameter `k`: expected array of shape (n,), got {ks.shape}")
    steps = [float(dts)] if dts.ndim == 0 else [float(x) for x in dts]
    total = len(ks) * len(steps)
    bar = None if progress is not None else _progress_bar(total, quiet)
    tell = progress if bar is None else (lambda done, _total: bar.update(done - bar.n))
    sweeps = []
    try:
        for i, step in enumerate(steps):
            options = sweep_options(step, rtol, events, jacobian, min_step, corrected, blame)
            told = None if tell is None else (lambda done, _n, before=i * len(ks): tell(before + done, total))
            sweeps.append(Sweep(_core.sweep(drop, ks, options, told), drop))
    finally:
        if bar is not None:
            bar.close()
    if dts.ndim == 0:
        return sweeps[0]
    return SweepGrid(drop, dts, ks, sweeps)


class SweepGrid(Json):
    """Sweeps over stiffness at several fixed steps: one :class:`Sweep` per dt.

    Made by :func:`sweep` with an array of steps. The fixed route's readouts are stacked
    with the step first: ``g.gradient_error[i, j]`` is at ``dt[i]`` and ``k[j]``. Other
    routes' readouts: ``g.stack("gradient_error", route="corrected")``; one step's whole
    sweep: ``g[i]``.

    Attributes
    ----------
    drop : Drop
        The drop.
    dt : numpy.ndarray
        Fixed steps, s, shape (m,).
    k : numpy.ndarray
        Stiffnesses, N/m, shape (n,).
    sweeps : tuple of Sweep
        One sweep per step, in the order of ``dt``.

    Examples
    --------
    >>> import ferromotion as fm
    >>> g = fm.sweep(fm.Drop(), k=[1e4, 1e6], dt=[1e-4, 1e-5], corrected=True)
    >>> g.jacobian.shape, g.stack("gradient_error", route="corrected").shape
    ((2, 2, 2, 2), (2, 2))
    >>> g[1].dt
    1e-05
    """

    def __init__(self, drop: Drop, dt: np.ndarray, k: np.ndarray, sweeps: Sequence[Sweep]) -> None:
        self.drop = drop
        self.dt: np.ndarray = frozen(dt.copy())
        self.k: np.ndarray = frozen(k.copy())
        self.sweeps: Tuple[Sweep, ...] = tuple(sweeps)

    def __len__(self) -> int:
        return len(self.sweeps)

    def __getitem__(self, i: int) -> Sweep:
        return self.sweeps[i]

    def __iter__(self) -> Iterator[Sweep]:
        return iter(self.sweeps)

    def stack(self, name: str, route: str = "fixed") -> np.ndarray:
        """One readout of one route (``"fixed"``, ``"tolerance"``, ``"corrected"`` or
        ``"blame"``) stacked over the steps: shape (m, n, ...)."""
        parts = []
        for s in self.sweeps:
            part = getattr(s, route)
            if part is None:
                raise InvalidParameter(f"invalid parameter `route`: the sweep did not run {route!r}")
            parts.append(getattr(part, name))
        if not parts:
            return frozen(np.empty((0, len(self.k))))
        return frozen(np.stack(parts))

    @property
    def state(self) -> np.ndarray:
        """x(T) of the fixed route, shape (m, n, 2)."""
        return self.stack("state")

    @property
    def jacobian(self) -> np.ndarray:
        """J of the fixed route, shape (m, n, 2, 2), row-major."""
        return self.stack("jacobian")

    @property
    def forward_error(self) -> np.ndarray:
        """The fixed route's forward error, shape (m, n); units in ``forward_unit``."""
        return self.stack("forward_error")

    @property
    def forward_unit(self) -> np.ndarray:
        """"m" or "m/s" per entry, shape (m, n)."""
        return self.stack("forward_unit")

    @property
    def gradient_error(self) -> np.ndarray:
        """The fixed route's gradient error, shape (m, n)."""
        return self.stack("gradient_error")

    @property
    def dv_dy0(self) -> np.ndarray:
        """The fixed route's dv(T)/dy0, shape (m, n)."""
        return self.stack("dv_dy0")

    @property
    def right_sign(self) -> np.ndarray:
        """bool, shape (m, n): the fixed route's dv(T)/dy0 has the exact answer's sign."""
        return self.stack("right_sign")

    def exponent(self) -> List[ExponentFit]:
        """The divergence exponent at each step (see :meth:`Sweep.exponent`)."""
        return [s.exponent() for s in self.sweeps]

    def plot(self, *, mark_k: Optional[float] = None, title: Optional[str] = None, width: int = 720,
             height: int = 480) -> Any:
        """A Bokeh figure: the fixed route's gradient error against k, one line per step,
        log-log, with the k ranges where it has the wrong sign at the first step shaded.

        Needs bokeh (``pip install 'ferromotion[plot]'``)."""
        from .plot import grid_figure

        return grid_figure(self, mark_k=mark_k, title=title, width=width, height=height)

    def to_dict(self) -> Dict[str, Any]:
        """``dt``, ``k`` and one :meth:`Sweep.to_dict` per step."""
        return {"dt": self.dt.tolist(), "k": self.k.tolist(), "sweeps": [s.to_dict() for s in self.sweeps]}

    def __repr__(self) -> str:
        steps = ", ".join(f"{d:g}" for d in self.dt)
        return f"SweepGrid({len(self.k)} stiffnesses x {len(self)} steps dt = [{steps}] s)"
