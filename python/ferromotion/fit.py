"""Forward matching through contact: fit the drop to measured kinematics (core: ``fit/``).

:func:`fit` estimates any of the drop's parameters (``zeta`` or the ``restitution`` it implies,
``k``, ``height``, ``velocity``, ``gravity``, ``mass``) from heights and/or velocities at sample
times, by Levenberg–Marquardt on the whitened residuals with the Jacobian of the route you name,
and reports the estimate with its 95% intervals, the identifiability of the design (singular
values, condition number, weak directions) and a receipt: the gradient check of the objective at
the start and at the solution (the checker's verdicts) with the reporting template of a
differentiable fit, one JSON document described by ``fit.schema.json`` (:func:`fit_schema`).

Observations: ``y=`` heights (m) and/or ``v=`` velocities (m/s), each an array with one entry per
sample time ``t`` (s, strictly increasing; the last one is the horizon); ``sigma_y`` and
``sigma_v`` their standard deviations (``sigma=`` is shorthand for the one channel given);
``mask_y``/``mask_v`` mark entries that count (False: missing; a missing entry may be NaN).

:func:`fit_demo` is the experiment behind ``ferromotion fit --demo`` and notebook 07: which routes'
Jacobians recover a bounce's parameters, how often, at what cost, beside derivative-free baselines.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._core import InvalidParameter
from ._common import ArrayLike, DEFAULTS, DT, float_array
from .routes import Drop, flow

_FIT: Dict[str, Any] = DEFAULTS["fit"]
#: The ``schema`` field of every fit report; ``fit.schema.json`` describes the document.
FIT_SCHEMA: str = _core.FIT_SCHEMA
#: The parameters :func:`fit` can estimate.
PARAMS: Tuple[str, ...] = ("zeta", "restitution", "k", "height", "velocity", "gravity", "mass")
#: The routes whose Jacobian :func:`fit` can step with.
ROUTES: Tuple[str, ...] = ("fixed", "corrected", "tolerance", "flow", "exact")


def fit_schema() -> Dict[str, Any]:
    """The JSON Schema of the fit report (``fit.schema.json``, shipped in the package).

    Examples
    --------
    >>> import ferromotion as fm
    >>> fm.fit_schema()["properties"]["schema"]["const"] == fm.FIT_SCHEMA
    True
    """
    return json.loads((Path(__file__).parent / "fit.schema.json").read_text())


@dataclasses.dataclass(frozen=True)
class WeakDirection:
    """A combination of the fit's coordinates the data inform weakly or not at all.

    Attributes
    ----------
    label : str
        The combination, e.g. ``"log k − 0.98·log zeta"`` (log: the fit works with ln θ).
    coefficients : tuple of float
        Unit vector on the fit's coordinates, in ``params`` order.
    singular_value : float
        Its singular value of the whitened sensitivity matrix S.
    half_width : float
        95% half-width along it, 1.96/σ (inf when σ = 0).
    kind : str
        ``"unidentifiable"`` or ``"weakly informed"``.
    """

    label: str
    coefficients: Tuple[float, ...]
    singular_value: float
    half_width: float
    kind: str


class FitResult:
    """One fit: estimates, intervals, identifiability, the iteration record and the receipt.

    Attributes
    ----------
    params : list of str
        The fitted parameters, in order.
    estimate : dict
        Fitted value per parameter (SI units).
    interval : dict
        95% interval ``(lo, hi)`` per parameter: profile likelihood (where χ² minimised over the
        other parameters rises by Δχ² above its minimum: by default the larger of 3.8415, σ as
        stated, and s²·t², σ's scale from the residuals; ``receipt["intervals"]`` gives it and
        the rule, docs/fit.md its measured coverage), the Wald interval where the profile
        cannot be bracketed (``interval_method`` and ``receipt["intervals"]["notes"]`` say where);
        an unbounded side is inf, or 0 for a log parameter's lower side.
    interval_method : dict
        How each side of ``interval`` was found: ``("profile", "profile")``, ``"profile-unbounded"``
        or ``"wald"`` per side.
    wald_interval : dict
        The Wald interval z ± sqrt(Δχ²)·sqrt((F⁻¹)_jj) from F = SᵀS (in log space for log parameters),
        for comparison.
    start : dict
        The start of each parameter.
    singular_values : numpy.ndarray
        Singular values of the whitened sensitivity matrix at the solution, descending.
    condition : float
        Largest over smallest singular value (inf when singular).
    weak_directions : list of WeakDirection
        Weakly informed or unidentifiable combinations (empty when identifiable).
    identifiable : bool
        No weak direction.
    status : str
        ``"converged"``, ``"stalled"`` (no step along the route's direction lowered the objective)
        or ``"max-iterations"``.
    cost, cost_start : float
        The objective ½Σ r² at the solution and the start (r: whitened residuals).
    chi2, chi2_limit : float
        χ² = 2·cost and its 99.9% quantile for the fit's degrees of freedom.
    consistent : bool
        χ² within its limit: the model explains the data to the stated noise (False: a misfit, whatever
        the status says).
    iterations : list of dict
        The record: per iteration ``cost``, ``lambda``, ``theta``, ``gradient_norm``, ``step_norm``,
        ``accepted``, ``evaluations`` (model evaluations so far), ``wall_s``.
    evaluations : int
        Model evaluations by the optimiser (one: predictions at every sample time).
    wall_s : float
        Wall time of the fit, s (checks included).
    t, y_fit, v_fit, residual_y, residual_v : numpy.ndarray
        Sample times, fitted states and whitened residuals (NaN where masked or not measured).
    drop : Drop
        The fitted drop (``t_final`` is the horizon).
    k : float
        Stiffness at the solution, N/m.
    verdicts : tuple of str
        The checker's verdicts on the objective's gradient at the start and at the solution
        (``"verified"``, ``"verified-within-noise"``, ``"verified-absolute"``, ``"not-verified"``,
        ``"refused"`` or ``"not-run"``; docs/checking.md).
    receipt : dict
        The gradient checks and the filled-in reporting template (``document["receipt"]``).
    document : dict
        The whole report as JSON-ready data (:meth:`to_json`); described by :func:`fit_schema`.
    """

    def __init__(self, report: Any) -> None:
        self._report = report
        # The core's document as Python data: ∞ and NaN stay what the core computed.
        doc: Dict[str, Any] = report.document()
        self.document = doc
        self.route: str = doc["route"]
        ps = doc["params"]
        self.params: List[str] = [p["name"] for p in ps]
        self.estimate: Dict[str, float] = {p["name"]: p["estimate"] for p in ps}
        self.start: Dict[str, float] = {p["name"]: p["start"] for p in ps}
        self.interval: Dict[str, Tuple[float, float]] = {p["name"]: tuple(p["interval"]) for p in ps}  # type: ignore[misc]
        self.wald_interval: Dict[str, Tuple[float, float]] = {p["name"]: tuple(p["wald_interval"])  # type: ignore[misc]
                                                              for p in ps}
        self.interval_method: Dict[str, Tuple[str, str]] = {p["name"]: tuple(p["interval_method"])  # type: ignore[misc]
                                                            for p in ps}
        self.singular_values = np.array(doc["singular_values"], dtype=np.float64)
        self.condition: float = doc["condition"]
        self.weak_directions: List[WeakDirection] = [
            WeakDirection(w["label"], tuple(w["coefficients"]), w["singular_value"], w["half_width"], w["kind"])
            for w in doc["weak_directions"]]
        self.identifiable: bool = doc["identifiable"]
        self.status: str = doc["status"]
        self.cost: float = doc["cost"]
        self.chi2: float = doc["chi2"]
        self.chi2_limit: float = doc["chi2_limit"]
        self.consistent: bool = doc["consistent"]
        self.cost_start: float = doc["cost_start"]
        self.iterations: List[Dict[str, Any]] = doc["iterations"]
        self.evaluations: int = doc["evaluations"]
        self.check_evaluations: int = doc["check_evaluations"]
        self.wall_s: Optional[float] = doc.get("wall_s")
        for key in ("t", "y_fit", "v_fit", "residual_y", "residual_v"):
            setattr(self, key, np.array(doc[key], dtype=np.float64))
        self.drop = Drop(**{f: doc["drop"][f] for f in ("height", "velocity", "t_final", "zeta", "gravity", "mass")})
        self.k: float = doc["k"]
        self.receipt: Dict[str, Any] = doc["receipt"]
        self.verdicts: Tuple[str, str] = tuple(doc["receipt"]["verdicts"])  # type: ignore[assignment]

    @property
    def record(self) -> Dict[str, np.ndarray]:
        """The iteration record as columns: ``cost``, ``lambda``, ``evaluations``, ``accepted`` and one
        column per parameter."""
        cols: Dict[str, np.ndarray] = {
            key: np.array([it[key] for it in self.iterations]) for key in ("cost", "lambda", "evaluations", "accepted")}
        for j, name in enumerate(self.params):
            cols[name] = np.array([it["theta"][j] for it in self.iterations], dtype=np.float64)
        return cols

    def contains(self, truth: Mapping[str, float]) -> Dict[str, bool]:
        """Whether each parameter's 95% interval contains the value ``truth`` gives for it."""
        return {n: bool(self.interval[n][0] <= truth[n] <= self.interval[n][1]) for n in self.params if n in truth}

    def to_json(self, indent: Optional[int] = None) -> str:
        """The whole report as JSON (the core's own text; non-finite numbers are null)."""
        text: str = self._report.to_json()
        return text if indent is None else json.dumps(json.loads(text), indent=indent, ensure_ascii=False)

    def summary(self) -> str:
        """A few lines: status, estimates with intervals, identifiability and the check verdicts."""
        lines = [f"fit ({self.route} route): {self.status} after {len(self.iterations) - 1} iterations, "
                 f"{self.evaluations} model evaluations; cost {self.cost_start:.4g} -> {self.cost:.4g}"]
        if self.status != "converged":
            lines.append(f"  NOT CONVERGED ({self.status}): the estimates are the last iterate, not a minimum; "
                         "the intervals below are Wald intervals there and are not to be trusted")
        for n in self.params:
            lo, hi = self.interval[n]
            lines.append(f"  {n:<12} {self.estimate[n]:<14.6g} 95% [{lo:.6g}, {hi:.6g}]")
        cont = self.receipt.get("continuation")
        if cont is not None:
            lines.append(f"  continuation over the horizon ({' then '.join(map(str, cont['samples']))} samples): "
                         f"{cont['note']}")
        lines.append(f"  chi2 {self.chi2:.4g} for {self.document['dof']} degrees of freedom (99.9% limit "
                     f"{self.chi2_limit:.4g}): " + ("consistent with the stated noise" if self.consistent
                                                   else "MISFIT: the model does not explain the data to the stated noise"))
        sv = ", ".join(f"{s:.3g}" for s in self.singular_values)
        lines.append(f"  singular values {sv}; condition {self.condition:.3g}")
        for w in self.weak_directions:
            lines.append(f"  WEAK ({w.kind}): {w.label}  (95% half-width {w.half_width:.3g})")
        lines.append(f"  gradient check: {self.verdicts[0]} at the start, {self.verdicts[1]} at the solution")
        return "\n".join(lines)

    def __repr__(self) -> str:
        est = ", ".join(f"{n}={self.estimate[n]:.6g}" for n in self.params)
        return (f"FitResult({self.route}, {self.status}, {est}, consistent={self.consistent}, "
                f"condition={self.condition:.3g}, "
                f"identifiable={self.identifiable}, checks={self.verdicts[0]}/{self.verdicts[1]})")


def _channels(y: Optional[ArrayLike], v: Optional[ArrayLike], sigma: Optional[float],
              sigma_y: Optional[float], sigma_v: Optional[float]) -> Tuple[Optional[float], Optional[float]]:
    """Per-channel σ from ``sigma`` (the one channel given) or the explicit ones."""
    if sigma is not None:
        if y is not None and v is not None:
            raise InvalidParameter("invalid parameter `sigma`: heights and velocities are both given; "
                                   "pass sigma_y (m) and sigma_v (m/s)")
        if y is not None:
            sigma_y = sigma if sigma_y is None else sigma_y
        else:
            sigma_v = sigma if sigma_v is None else sigma_v
    return sigma_y, sigma_v


def _options(params: Union[str, Sequence[str]], route: str, k: Optional[float], dt: float,
             extra: Mapping[str, Any]) -> Dict[str, Any]:
    names = [p.strip() for p in params.split(",")] if isinstance(params, str) else list(params)
    opts: Dict[str, Any] = {"params": names, "route": route, "dt": float(dt)}
    if k is not None:
        opts["k"] = float(k)
    opts.update(extra)
    return opts


def _column(values: Optional[ArrayLike], name: str) -> Optional[List[float]]:
    """One channel as the list of floats the core's ``Observations`` reads (shape (n,))."""
    if values is None:
        return None
    a = float_array(values, name)
    if a.ndim != 1:
        raise InvalidParameter(f"invalid parameter `{name}`: expected an array of shape (n,), got shape {a.shape}")
    return a.tolist()


def _observations(t: ArrayLike, y: Optional[ArrayLike], v: Optional[ArrayLike], sigma: Optional[float],
                  sigma_y: Optional[float], sigma_v: Optional[float], mask_y: Optional[ArrayLike],
                  mask_v: Optional[ArrayLike]) -> Dict[str, Any]:
    """The observations as the core reads them (one dict)."""
    sy, sv = _channels(y, v, sigma, sigma_y, sigma_v)
    mask = lambda m: None if m is None else [bool(x) for x in np.asarray(m).ravel()]  # noqa: E731
    return {"t": _column(t, "t"), "y": _column(y, "y"), "v": _column(v, "v"), "sigma_y": sy, "sigma_v": sv,
            "mask_y": mask(mask_y), "mask_v": mask(mask_v)}


def fit(guess: Drop, t: ArrayLike, y: Optional[ArrayLike] = None, *, v: Optional[ArrayLike] = None,
        sigma: Optional[float] = None, sigma_y: Optional[float] = None, sigma_v: Optional[float] = None,
        mask_y: Optional[ArrayLike] = None, mask_v: Optional[ArrayLike] = None,
        params: Union[str, Sequence[str]] = tuple(_FIT["params"]), route: str = _FIT["route"],
        k: Optional[float] = None, dt: float = DT, **options: Any) -> FitResult:
    """Fit the drop's parameters to heights and/or velocities at sample times.

    Parameters
    ----------
    guess : Drop
        The start of the fitted parameters and the value of the others (its ``t_final`` is
        replaced by the last sample time).
    t : array_like, shape (n,)
        Sample times, s, strictly increasing and >= 0; the last is the horizon.
    y, v : array_like, shape (n,), optional
        Measured heights (m) and velocities (m/s); at least one.
    sigma : float, optional
        Standard deviation of the one channel given (m or m/s).
    sigma_y, sigma_v : float, optional
        Standard deviation per channel (> 0).
    mask_y, mask_v : array_like of bool, optional
        Which entries count (False: missing; such an entry may be NaN).
    params : sequence of str or "a,b"
        Parameters to estimate: ``zeta`` or ``restitution``, ``k``, ``height``, ``velocity``,
        ``gravity``, ``mass`` (default: zeta and k).
    route : str
        Whose Jacobian steps: ``"fixed"`` (semi-implicit Euler, autodiff tangent), ``"corrected"``,
        ``"tolerance"`` (Dormand–Prince, forward sensitivities), ``"flow"`` (the penalty ODE's closed
        form) or ``"exact"`` (the rigid model).
    k : float, optional
        Penalty stiffness, N/m (the start when ``k`` is fitted); default the core's.
    dt : float
        Step of the grid routes, s; every sample time must be a multiple of it.
    **options
        The core's other ``FitOptions``: ``restitution``, ``tolerance`` (dict), ``probe``,
        ``max_iterations``, ``max_step`` (largest change of a log parameter in one step; 1, a
        factor e), ``continuation`` (bool, default True: a converged fit whose χ² is inconsistent with
        the noise retries from the start on the first half of the samples, then all of them, and
        keeps the lower minimum; the receipt's ``continuation`` says what happened), ``ftol``, ``xtol``, ``weak_rel``, ``weak_width``, ``interval``
        (``"profile"``, the default, or ``"wald"``), ``sigma_scale`` (what the intervals take σ
        for: ``"stated"``, the noise's standard deviation, Δχ² = 3.8415; ``"residual"``, weights
        whose scale the residuals estimate, Δχ² = s²·t² with Student's t at n − p degrees of
        freedom; ``"either"``, the default, the larger of the two: a 95% interval whether σ is
        right or only its ratios are; docs/fit.md), ``check`` (bool: run the gradient checks),
        ``check_options`` (dict).

    Returns
    -------
    FitResult

    Raises
    ------
    InvalidParameter
        Times not increasing, a NaN that is not masked, σ <= 0, too few samples, an unknown
        parameter or route, a length that does not match ``t``.
    NoImpact
        The guess does not reach the ground before the last sample time.

    Examples
    --------
    >>> import numpy as np, ferromotion as fm
    >>> truth = fm.Drop(height=1.0, zeta=0.2)
    >>> t = np.linspace(0.05, 0.8, 16)
    >>> y = fm.fit_predict(truth, t, route="flow", k=1e4)["y"]
    >>> r = fm.fit(fm.Drop(height=1.0, zeta=0.1), t, y, sigma=1e-3, params=["zeta"], route="flow", k=1e4,
    ...            check=False)
    >>> round(r.estimate["zeta"], 6), r.status
    (0.2, 'converged')
    """
    obs = _observations(t, y, v, sigma, sigma_y, sigma_v, mask_y, mask_v)
    return FitResult(_core.fit(guess, obs, _options(params, route, k, dt, options)))


def fit_predict(drop: Drop, t: ArrayLike, *, route: str = "flow", k: Optional[float] = None, dt: float = DT,
                restitution: Optional[float] = None) -> Dict[str, np.ndarray]:
    """The route's predicted heights and velocities at sample times ``t`` (no fit): the
    same predictions :func:`fit` compares with the data. Returns ``{"y": ..., "v": ...}``.

    Examples
    --------
    >>> import ferromotion as fm
    >>> p = fm.fit_predict(fm.Drop(), [0.1, 0.8], route="exact")
    >>> round(float(p["y"][0]), 5)   # 1 - g t^2 / 2 before the impact
    0.95095
    """
    opts: Dict[str, Any] = {"route": route, "dt": float(dt)}
    if k is not None:
        opts["k"] = float(k)
    if restitution is not None:
        opts["restitution"] = float(restitution)
    doc = _core.fit_predict(drop, float_array(t, "t"), opts)
    return {"y": np.asarray(doc["y"], dtype=np.float64), "v": np.asarray(doc["v"], dtype=np.float64)}


class FitObjective:
    """The fit's objective Φ(z) = ½Σ r² as a plain function of the fit's coordinates z (ln θ for
    positive parameters), for derivative-free optimisers (CMA-ES, Nelder–Mead). Same arguments as
    :func:`fit`. Returns inf outside the model's domain. ``evaluations`` counts the model
    evaluations, ``history`` records (evaluation count, wall time since construction, Φ)."""

    def __init__(self, guess: Drop, t: ArrayLike, y: Optional[ArrayLike] = None, *, v: Optional[ArrayLike] = None,
                 sigma: Optional[float] = None, sigma_y: Optional[float] = None, sigma_v: Optional[float] = None,
                 mask_y: Optional[ArrayLike] = None, mask_v: Optional[ArrayLike] = None,
                 params: Union[str, Sequence[str]] = tuple(_FIT["params"]), route: str = _FIT["route"],
                 k: Optional[float] = None, dt: float = DT, **options: Any) -> None:
        obs = _observations(t, y, v, sigma, sigma_y, sigma_v, mask_y, mask_v)
        self._core = _core.FitObjective(guess, obs, _options(params, route, k, dt, options))
        self.names: List[str] = list(self._core.names)
        self.start: np.ndarray = np.array(self._core.start())
        self._t0 = time.perf_counter()
        self.history: List[Tuple[int, float, float]] = []

    def __call__(self, z: ArrayLike) -> float:
        c = self._core(np.asarray(z, dtype=np.float64))
        value = float("inf") if c is None else float(c)
        self.history.append((self.evaluations, time.perf_counter() - self._t0, value))
        return value

    @property
    def evaluations(self) -> int:
        """Model evaluations so far."""
        return int(self._core.evaluations)

    def theta(self, z: ArrayLike) -> Dict[str, float]:
        """The parameters at coordinates z."""
        return dict(zip(self.names, self._core.theta([float(x) for x in z])))

    def coordinates(self, theta: Mapping[str, float]) -> np.ndarray:
        """The coordinates of parameter values."""
        return np.array(self._core.coordinates([float(theta[n]) for n in self.names]))

    def reached(self, target: float) -> Optional[Tuple[int, float]]:
        """(evaluations, wall s) when Φ first fell to ``target`` or below; None if it never did."""
        for n, w, c in self.history:
            if c <= target:
                return n, w
        return None


# ---------------------------------------------------------------------------------------------
# The experiment: who recovers a bounce's parameters, how often, at what cost


#: The demo's settings, from the core (``FitDemo``; the lab's panel reads the same): truth, k, dt,
#: noise, sampling step, fitted parameters and horizons.
DEMO: Dict[str, Any] = _core.FIT_DEMO
#: The demo's truth: the default drop at k = DEMO_K.
DEMO_TRUTH: Dict[str, float] = {"height": DEMO["height"], "zeta": DEMO["zeta"]}
DEMO_K: float = DEMO["k"]
DEMO_DT: float = DEMO["dt"]


def demo_data(horizon: float, *, sigma_y: float = DEMO["sigma_y"], sigma_v: float = DEMO["sigma_v"],
              step: float = DEMO["step"],
              seed: int = 0, truth: Optional[Mapping[str, float]] = None) -> Dict[str, Any]:
    """Synthetic measurements of the demo's drop (:data:`DEMO`): the flow route's closed form (the penalty
    ODE at k = 1e6 N/m) at every ``step`` s up to ``horizon`` s, plus Gaussian noise of
    ``sigma_y`` m on heights and ``sigma_v`` m/s on velocities (seeded)."""
    truth = dict(DEMO_TRUTH, **(truth or {}))
    n = int(round(horizon / step))
    t = np.round(np.arange(1, n + 1) * step, 10)
    drop = Drop(height=truth["height"], zeta=truth["zeta"], t_final=horizon)
    p = fit_predict(drop, t, route="flow", k=DEMO_K)
    rng = np.random.default_rng(seed)
    return {"t": t, "y": p["y"] + sigma_y * rng.standard_normal(n), "v": p["v"] + sigma_v * rng.standard_normal(n),
            "sigma_y": sigma_y, "sigma_v": sigma_v, "truth": truth, "y_true": p["y"], "v_true": p["v"]}


def _starts(count: int, seed: int) -> List[Dict[str, float]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        out.append({"height": DEMO_TRUTH["height"] * float(np.exp(0.12 * rng.standard_normal())),
                    "zeta": min(0.9, DEMO_TRUTH["zeta"] * float(np.exp(0.5 * rng.standard_normal())))})
    return out


def fit_demo(*, horizons: Sequence[float] = tuple(DEMO["horizons"]), starts: int = 5, seed: int = 1,
             baselines: bool = True, mass_shift: float = 0.2, progress: Optional[Callable[[str], None]] = None
             ) -> Dict[str, Any]:
    """The experiment of ``ferromotion fit --demo`` and notebook 07.

    Data: :func:`demo_data` over one bounce (T = 0.8 s) and over two to three (T = 1.5 s). Fitted
    parameters: height and zeta (k = 1e6 N/m, dt = 1e-4 s held). Each route's Levenberg–Marquardt
    runs from the same seeded starts; CMA-ES (the ``cma`` package) and scipy's Nelder–Mead minimise
    the flow route's objective from the same starts. Per method: how many starts recover the truth
    (its 95% interval, from the flow route's best fit, contains the estimate), the model evaluations
    and wall time to reach the same fit quality (Φ within 0.5 of the best flow fit: Δχ² = 1), and
    the checker's verdicts. The robustness check of seed 002: refit with the mass 20% off and say
    how far the optimum moves, in units of its 95% half-width.

    Returns a dict: ``rows`` (one per scenario and method), ``scenarios`` (data, best fit, the
    fixed route's dv(T)/dy0 against the exact one), ``robustness``.

    Examples
    --------
    >>> import ferromotion as fm
    >>> demo = fm.fit_demo(horizons=(0.8,), starts=1, baselines=False)
    >>> [(row["method"], row["recovered"]) for row in demo["rows"]][:2]
    [('LM + fixed Jacobian', 0), ('LM + corrected Jacobian', 0)]
    >>> next(row["recovered"] for row in demo["rows"] if row["method"] == "LM + flow Jacobian")
    1
    """
    say = progress or (lambda s: None)
    names = list(DEMO["params"])
    out: Dict[str, Any] = {"rows": [], "scenarios": [], "robustness": []}
    for horizon in horizons:
        data = demo_data(horizon, seed=seed)
        truth = data["truth"]
        kw = dict(v=data["v"], sigma_y=data["sigma_y"], sigma_v=data["sigma_v"], params=names, k=DEMO_K, dt=DEMO_DT)
        drop_truth = Drop(height=truth["height"], zeta=truth["zeta"], t_final=horizon)
        from .routes import exact, fixed
        grad = {"fixed": float(fixed(drop_truth, DEMO_K, DEMO_DT).jacobian[1, 0]),
                "flow": float(flow(drop_truth, DEMO_K).jacobian[1, 0]),
                "exact": float(exact(drop_truth).jacobian[1, 0])}
        say(f"T = {horizon} s: reference fit (flow route from the truth)")
        best = fit(Drop(height=truth["height"], zeta=truth["zeta"]), data["t"], data["y"], route="flow", **kw)
        target = best.cost + 0.5
        scen = {"horizon": horizon, "samples": int(len(data["t"])), "best": best, "target_cost": target,
                "dv_dy0": grad, "truth": truth, "data": data}
        out["scenarios"].append(scen)
        starts_list = _starts(starts, seed)

        def recovered(est: Mapping[str, float]) -> bool:
            return all(best.interval[n][0] <= est[n] <= best.interval[n][1] for n in names)

        for route in ROUTES:
            say(f"T = {horizon} s: {route} route from {starts} starts")
            rec, evals, walls, finals, statuses = 0, [], [], [], []
            outcomes: List[str] = []
            verdicts: List[str] = []
            for i, s in enumerate(starts_list):
                guess = Drop(height=s["height"], zeta=s["zeta"])
                try:
                    r = fit(guess, data["t"], data["y"], route=route, check=not verdicts, **kw)
                except _core.FerroError as e:  # a start the route refuses (e.g. a grazing impact)
                    statuses.append(type(e).__name__)
                    outcomes.append("refused")
                    continue
                statuses.append(r.status if r.consistent else f"{r.status} (misfit)")
                if not verdicts:
                    verdicts = list(r.verdicts)
                # Judged on the flow objective, the one the data came from.
                phi = FitObjective(r.drop, data["t"], data["y"], route="flow", **kw)
                final = phi(phi.coordinates(r.estimate))
                finals.append(final)
                ok = recovered(r.estimate) and final <= target
                rec += ok
                outcomes.append(_outcome(ok, r.consistent, r.status == "converged"))
                reach = next((it for it in r.iterations if it["cost"] <= target), None) if route != "exact" else None
                if ok:
                    evals.append(r.evaluations if reach is None else reach["evaluations"])
                    walls.append(r.iterations[-1].get("wall_s", r.wall_s) if reach is None or reach.get("wall_s") is None
                                 else reach["wall_s"])
            out["rows"].append(_row(horizon, f"LM + {route} Jacobian", rec, len(starts_list), evals, walls, finals,
                                    verdicts, statuses, outcomes))
        if baselines:
            for method in ("CMA-ES", "Nelder-Mead"):
                say(f"T = {horizon} s: {method} from {starts} starts")
                rec, evals, walls, finals, statuses = 0, [], [], [], []
                outcomes = []
                for s in starts_list:
                    phi = FitObjective(Drop(height=s["height"], zeta=s["zeta"]), data["t"], data["y"], route="flow",
                                       **kw)
                    z = _minimise(method, phi, seed)
                    est = phi.theta(z)
                    final = min(c for _, _, c in phi.history)
                    finals.append(final)
                    hit = phi.reached(target)
                    ok = hit is not None and recovered(est)
                    statuses.append("reached" if hit is not None else "not reached")
                    outcomes.append("recovered" if ok else "elsewhere")
                    rec += ok
                    if ok and hit is not None:
                        evals.append(hit[0])
                        walls.append(hit[1])
                out["rows"].append(_row(horizon, method + " (flow objective)", rec, len(starts_list), evals, walls,
                                        finals, ["derivative-free", "derivative-free"], statuses, outcomes))
        # Seed 002's robustness: the mass 20% off, refit, compare.
        for route in ("flow", "fixed"):
            shifted = Drop(height=truth["height"], zeta=truth["zeta"], mass=1.0 + mass_shift)
            try:
                r0 = best if route == "flow" else fit(Drop(height=truth["height"], zeta=truth["zeta"]), data["t"],
                                                      data["y"], route=route, check=False, **kw)
                r1 = fit(shifted, data["t"], data["y"], route=route, check=False, **kw)
            except _core.FerroError as e:
                out["robustness"].append({"horizon": horizon, "route": route, "error": str(e)})
                continue
            moved = {n: abs(r1.estimate[n] - r0.estimate[n]) / max(1e-300, 0.5 * (r0.interval[n][1] - r0.interval[n][0]))
                     for n in names}
            out["robustness"].append({"horizon": horizon, "route": route, "mass": 1.0 + mass_shift,
                                      "estimate": r0.estimate, "estimate_shifted": r1.estimate,
                                      "moved_half_widths": moved, "cost": r0.cost, "cost_shifted": r1.cost,
                                      "survives": all(m <= 1.0 for m in moved.values())})
    return out


def _import_cma() -> Any:
    """The ``cma`` package (pip install cma), without its warning that matplotlib is missing
    (the demo draws nothing with it)."""
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*matplotlib.*")
        import cma
    return cma


def _minimise(method: str, phi: FitObjective, seed: int) -> np.ndarray:
    """Minimise Φ from its start with a derivative-free method; returns the best point."""
    z0 = phi.start
    if method == "CMA-ES":
        cma = _import_cma()
        es = cma.CMAEvolutionStrategy(list(z0), 0.2, {"seed": seed + 1, "verbose": -9, "maxfevals": 3000,
                                                      "tolfun": 1e-10, "tolx": 1e-10})
        es.optimize(phi)
        return np.asarray(es.result.xbest)
    from scipy.optimize import minimize  # scipy's Nelder–Mead
    res = minimize(phi, z0, method="Nelder-Mead", options={"maxfev": 3000, "xatol": 1e-10, "fatol": 1e-10})
    return np.asarray(res.x)


#: What became of one start, each start in exactly one: the demo table's columns.
OUTCOMES: Tuple[str, ...] = ("recovered", "misfit", "stalled", "elsewhere", "refused")


def _outcome(recovered: bool, consistent: bool, converged: bool) -> str:
    """One start's column: recovered the truth; a misfit on the route's own model; stopped without
    converging; converged consistently on the route's own model but away from the flow fit."""
    if recovered:
        return "recovered"
    if not consistent:
        return "misfit"
    return "elsewhere" if converged else "stalled"


def _row(horizon: float, method: str, rec: int, n: int, evals: List[int], walls: List[Optional[float]],
         finals: List[float], verdicts: List[str], statuses: List[str], outcomes: List[str]) -> Dict[str, Any]:
    w = [x for x in walls if x is not None]
    return {"horizon": horizon, "method": method, "recovered": rec, "starts": n,
            "median_evaluations": float(np.median(evals)) if evals else None,
            "median_wall_s": float(np.median(w)) if w else None,
            "best_cost": float(min(finals)) if finals else None,
            "check_start": verdicts[0] if verdicts else None, "check_solution": verdicts[1] if verdicts else None,
            "statuses": statuses, "outcomes": {o: outcomes.count(o) for o in OUTCOMES},
            "misfits": outcomes.count("misfit"), "refused": outcomes.count("refused")}


def demo_table(demo: Mapping[str, Any]) -> str:
    """The demo as text: per scenario, the gradients, then one line per method, then robustness."""
    lines = []
    for scen in demo["scenarios"]:
        h = scen["horizon"]
        g = scen["dv_dy0"]
        best: FitResult = scen["best"]
        lines.append(f"T = {h} s, {scen['samples']} samples of heights (σ 1 mm) and velocities (σ 1 cm/s); "
                     f"truth height {scen['truth']['height']}, zeta {scen['truth']['zeta']} (k = 1e6 N/m)")
        lines.append(f"  dv(T)/dy0 at the truth: fixed {g['fixed']:+.4g}, flow {g['flow']:+.4g}, exact {g['exact']:+.4g}")
        iv = ", ".join(f"{n} [{best.interval[n][0]:.5g}, {best.interval[n][1]:.5g}]" for n in best.params)
        lines.append(f"  best flow fit: cost {best.cost:.2f}; 95% {iv}; target cost {scen['target_cost']:.2f}")
        lines.append(f"  {'method':<30} {'recovered':>9} {'misfit':>6} {'stalled':>7} {'elsewhere':>9} {'refused':>7} "
                     f"{'evals':>6} {'wall s':>8} {'best cost':>10}  checks (start/solution)")
        for row in demo["rows"]:
            if row["horizon"] != h:
                continue
            ev = "-" if row["median_evaluations"] is None else f"{row['median_evaluations']:.0f}"
            wall = "-" if row["median_wall_s"] is None else f"{row['median_wall_s']:.3f}"
            bc = "-" if row["best_cost"] is None else f"{row['best_cost']:.4g}"
            o = row["outcomes"]
            lines.append(f"  {row['method']:<30} {row['recovered']:>4}/{row['starts']:<4} {o['misfit']:>6} "
                         f"{o['stalled']:>7} {o['elsewhere']:>9} {o['refused']:>7} {ev:>6} {wall:>8} {bc:>10}  "
                         f"{row['check_start']}/{row['check_solution']}")
        for rb in demo["robustness"]:
            if rb["horizon"] != h:
                continue
            if "error" in rb:
                lines.append(f"  mass +20% ({rb['route']}): refused: {rb['error']}")
                continue
            moved = ", ".join(f"{n} {m:.2f}" for n, m in rb["moved_half_widths"].items())
            lines.append(f"  mass +20% ({rb['route']} route): optimum moved by {moved} half-widths; "
                         f"{'survives' if rb['survives'] else 'DOES NOT SURVIVE'}")
        lines.append("")
    lines.append("recovered: the estimate lies in the best flow fit's 95% interval and its flow-objective cost is "
                 "within 0.5 of the best (Δχ² = 1); misfit: starts that ended with chi2 beyond its 99.9% limit on "
                 "the route's own model (a local minimum, or a model or Jacobian that cannot reach the data); "
                 "stalled: starts that stopped without converging; elsewhere: starts that converged consistently "
                 "on the route's own model (or, for the baselines, ended) away from the best flow fit; "
                 "refused: starts the route refused (e.g. a grazing impact); each start is in exactly one column; evals and wall: median model "
                 "evaluations and seconds to that quality over the recovering starts; best cost: on the flow objective")
    return "\n".join(lines)
