"""The browser lab's controls from Python (core: ``lab/workbench.rs``)."""

from __future__ import annotations

from typing import Any, Dict, Optional, Union

import numpy as np

from . import _core
from ._common import DEFAULTS, DT, TOL, tolerance_rtol
from .routes import Drop
from .sweep import Sweep


# The bench


class Workbench:
    """The browser lab's bench from Python: controls, and every readout for them.

    The core caches the readouts that do not depend on k, so moving k is cheap.

    Parameters
    ----------
    drop : Drop, optional
        The drop; default ``Drop()``.
    k : float
        Penalty stiffness, N/m.
    dt : float
        The base fixed step, s (the lab's "dt" button).
    dt_divisor : int
        1, 10 or 100: the current step is dt / dt_divisor.
    tolerance : None, bool or float
        Run the tolerance route too: True for the default rtol, a number for that rtol.
    events : bool
        The tolerance route stops at the contact switches.
    jacobian : {"richardson", "forward"}
        How the tolerance route gets J: central differences of 8 rollouts, or forward
        sensitivities along one event-located rollout (needs ``events=True``; without it
        the core refuses with :class:`InvalidParameter`).
    min_step : float
        Smallest step the tolerance route's controller may ask for, s (0: no floor); a readout
        whose tolerance route needs less is refused (:class:`StepTooSmall`). ``set_tolerance``
        keeps it.

    Every route's row in the readout carries ``wall_s``: the wall time its Jacobian took on
    this machine, s (one measurement, for reading, never for asserting);
    ``wall_resolution_s`` is the clock's resolution.

    Examples
    --------
    >>> import ferromotion as fm
    >>> bench = fm.Workbench(k=1e6)
    >>> r = bench.readout()
    >>> r["fixed"]["errors"]["right_sign"]
    False
    >>> r["fixed"]["wall_s"] > 0
    True
    >>> bench.set_k(1e2)
    >>> bench.readout()["fixed"]["errors"]["right_sign"]
    True
    >>> bench.set_tolerance(True, rtol=1e-6, events=True, jacobian="forward")
    >>> bench.readout()["tolerance"]["cost"]["rollouts"]
    1
    """

    def __init__(self, drop: Optional[Drop] = None, *, k: float = DEFAULTS["k"], dt: float = DT,
                 dt_divisor: int = 1, tolerance: Union[None, bool, float] = None,
                 events: bool = False, jacobian: str = TOL["jacobian"],
                 min_step: float = TOL["min_step"]) -> None:
        self.drop = Drop() if drop is None else drop
        rtol = tolerance_rtol(tolerance)
        tol: Dict[str, Any] = {"events": events, "jacobian": jacobian, "min_step": min_step}
        if rtol is not None:
            tol["rtol"] = rtol
        self._workbench = _core.Workbench(self.drop, {"k": k, "base_dt": dt, "dt_divisor": dt_divisor,
                                                      "tolerance": rtol is not None, "tolerance_options": tol})

    def config(self) -> Dict[str, Any]:
        """The current controls: ``k``, ``dt`` (current), ``base_dt``, ``dt_divisor``,
        ``tolerance``, ``rtol``, ``events`` and ``jacobian``.

        Examples
        --------
        >>> import ferromotion as fm
        >>> c = fm.Workbench(k=1e6, dt_divisor=10).config()
        >>> c["k"], c["dt"], c["dt_divisor"], c["tolerance"]
        (1000000.0, 1e-05, 10, False)
        """
        c = self._workbench.config()
        t = c["tolerance_options"]
        return {"k": c["k"], "dt": self._workbench.dt(), "base_dt": c["base_dt"], "dt_divisor": c["dt_divisor"],
                "tolerance": c["tolerance"], "rtol": t["rtol"], "events": t["events"], "jacobian": t["jacobian"]}

    @property
    def k(self) -> float:
        """Penalty stiffness, N/m."""
        return float(self._workbench.config()["k"])

    @property
    def dt(self) -> float:
        """The current fixed step, s (base dt / divisor)."""
        return self._workbench.dt()

    @property
    def base_dt(self) -> float:
        """The base fixed step, s."""
        return float(self._workbench.config()["base_dt"])

    @property
    def dt_divisor(self) -> int:
        """1, 10 or 100."""
        return int(self._workbench.config()["dt_divisor"])

    @property
    def tolerance(self) -> bool:
        """Whether the tolerance route runs."""
        return bool(self._workbench.config()["tolerance"])

    def set_k(self, k: float) -> None:
        """Set the stiffness, N/m."""
        self._workbench.set_k(k)

    def set_log10_k(self, log10_k: float) -> None:
        """Set the stiffness from the slider's log10 k."""
        self._workbench.set_log10_k(log10_k)

    def set_dt_divisor(self, divisor: int) -> None:
        """Choose the current step: base dt / divisor with divisor 1, 10 or 100."""
        self._workbench.set_dt_divisor(divisor)

    def set_tolerance(self, on: bool, rtol: Optional[float] = None, events: Optional[bool] = None,
                      jacobian: Optional[str] = None) -> None:
        """Switch the tolerance route; ``None`` keeps the current rtol, events flag or Jacobian
        method (``"richardson"`` or ``"forward"``; ``"forward"`` without events is refused)."""
        self._workbench.set_tolerance(on, rtol, events, jacobian)

    def readout(self) -> Dict[str, Any]:
        """Every readout for the current controls, as the core serialises it."""
        readout: Dict[str, Any] = self._workbench.readout()
        return readout

    def curve(self, k: Any) -> Sweep:
        """The fixed (and tolerance, when on) route's readouts against k at the current step."""
        ks = np.asarray(k, dtype=np.float64)
        return Sweep(self._workbench.curve(ks), self.drop)

    def __repr__(self) -> str:
        c = self.config()
        tol = f", tolerance rtol = {c['rtol']:g}, jacobian = {c['jacobian']}" if c["tolerance"] else ""
        return f"Workbench(k = {self.k:g} N/m, dt = {self.dt:g} s{tol})"
