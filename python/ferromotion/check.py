"""Gradient checks and their receipts (core: ``check/``)."""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from . import _core
from ._core import InvalidParameter
from ._common import ArrayLike, DEFAULTS, Json, float_array, frozen, json_ready


# Gradient checks and receipts

_CHECK: Dict[str, Any] = DEFAULTS["check"]
#: The fixtures :func:`check_fixture` knows, by name.
FIXTURES: Tuple[str, ...] = tuple(_core.FIXTURES)
#: The ``schema`` field of every receipt; ``receipt.schema.json`` describes the document.
RECEIPT_SCHEMA: str = _core.RECEIPT_SCHEMA


@functools.lru_cache(maxsize=1)
def _git_identity() -> Tuple[str, str]:
    """(commit, dirty) of the ferromotion checkout this package is imported from, or
    ("unknown", "unknown") when it is not one (an installed wheel; a package that merely sits
    inside someone else's repository; no git)."""
    here = Path(__file__).resolve().parent
    try:
        top = subprocess.run(["git", "-C", str(here), "rev-parse", "--show-toplevel", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=True).stdout.splitlines()
        root, commit = Path(top[0]), top[1]
        if not (root / "python" / "ferromotion" / "__init__.py").resolve() == Path(__file__).resolve():
            return "unknown", "unknown"
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10, check=True).stdout
        return commit, "true" if status.strip() else "false"
    except (OSError, subprocess.SubprocessError, IndexError, ValueError):
        return "unknown", "unknown"


def environment() -> Dict[str, str]:
    """Who is checking: the identity every receipt written from Python carries in
    ``environment.extra`` (next to the core's own version and target).

    Keys: ``package`` and ``package_version``, ``git_commit`` and ``git_dirty`` of the
    ferromotion checkout the package is imported from ("unknown" when it is not one),
    ``platform``, ``python``, ``python_implementation`` and ``numpy``.

    Examples
    --------
    >>> import ferromotion as fm
    >>> sorted(fm.environment())
    ['git_commit', 'git_dirty', 'numpy', 'package', 'package_version', 'platform', 'python', 'python_implementation']
    """
    commit, dirty = _git_identity()
    return {
        "package": "ferromotion",
        "package_version": _core.__version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "numpy": np.__version__,
    }


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class CheckDirection(Json):
    """The check along one direction d.

    Attributes
    ----------
    label : str
        ``"random 0"``, ``"coordinate 1"``, ...
    direction : numpy.ndarray
        The unit direction, shape (n,).
    claimed : float
        The claimed directional derivative g . d.
    eps : numpy.ndarray
        The probe sizes of the central-difference sweep, largest first, shape (m,).
    fd : numpy.ndarray
        (f(x + eps d) - f(x - eps d)) / (2 eps) per probe (NaN where an evaluation failed).
    error : numpy.ndarray
        |g . d - fd| / max(1, |g . d|, |fd|) per probe: the V of truncation and round-off.
    probe_classification : tuple of str
        Per probe: ``"smooth"``, ``"event-crossing"`` (the event sequence differs between
        +eps and -eps) or ``"grazing"``.
    best_error, best_eps : float or None
        The smallest error over smooth probes and its probe size.
    smooth_below : float or None
        The largest probe below which every probe is smooth (None: not even the smallest).
    taylor_slope : float or None
        Fitted slope of the Taylor remainder on log-log axes: ~1 for a right gradient, ~0
        for a wrong one (~2 when ``taylor_second_order``); None when the remainder is
        below round-off throughout.
    taylor_second_order : bool
        A Hessian-vector product was claimed and the second-order remainder is reported.
    classification : str
        The direction's: ``"smooth"``, ``"event-crossing"`` or ``"grazing"``.
    certified : bool
        Smooth, agrees to tolerance at its best probe, and the Taylor slope confirms it.
    """

    label: str
    direction: np.ndarray
    claimed: float
    eps: np.ndarray
    fd: np.ndarray
    error: np.ndarray
    probe_classification: Tuple[str, ...]
    best_error: Optional[float]
    best_eps: Optional[float]
    smooth_below: Optional[float]
    taylor_slope: Optional[float]
    taylor_second_order: bool
    classification: str
    certified: bool

    @classmethod
    def _from_core(cls, d: Mapping[str, Any]) -> "CheckDirection":
        def column(key: str) -> np.ndarray:
            return frozen(np.array([np.nan if p[key] is None else p[key] for p in d["probes"]], dtype=np.float64))

        return cls(label=d["label"], direction=frozen(np.array(d["direction"], dtype=np.float64)),
                   claimed=d["claimed"], eps=column("eps"), fd=column("fd"), error=column("error"),
                   probe_classification=tuple(p["classification"] for p in d["probes"]), best_error=d["best_error"],
                   best_eps=d["best_eps"], smooth_below=d["smooth_below"], taylor_slope=d["taylor_slope"],
                   taylor_second_order=d["taylor_second_order"], classification=d["classification"],
                   certified=d["certified"])

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types (arrays as lists, NaN as None)."""
        return json_ready({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    def __repr__(self) -> str:
        best = ("no smooth probe" if self.best_error is None
                else f"best error {self.best_error:.2e} at eps {self.best_eps:.1e}")
        slope = "-" if self.taylor_slope is None else f"{self.taylor_slope:.2f}"
        return (f"CheckDirection({self.label}: {self.classification}, {best}, Taylor slope {slope}, "
                f"{'certified' if self.certified else 'not certified'})")


class Receipt(Json):
    """A gradient check's receipt: everything needed to judge its verdict later.

    Made by :func:`check_gradient` and :func:`check_fixture`; the core writes it, this
    class reads it. ``to_json()`` is the document ``receipt.schema.json`` describes
    (see :func:`receipt_schema`).

    Attributes
    ----------
    verdict : str
        ``"verified"`` (every direction smooth, agreeing to tolerance, Taylor slope
        confirming), ``"not-verified"`` (some smooth direction disagrees) or ``"refused"``
        (some direction crosses an event or grazes: smooth differences cannot judge it).
    why : str
        The verdict's reason, in words.
    objective : dict
        ``name``, ``units``, ``description``, ``route``, ``integrator``, ``tolerances``
        (a list of [name, value] pairs): what was certified against, and how the gradient
        was produced.
    x, gradient : numpy.ndarray
        The point and the claimed gradient, shape (n,).
    directions : tuple of CheckDirection
        Per direction: the probe sweep, the classification and the Taylor slope.
    max_error, median_error : float
        Over the directions' best errors (NaN when no direction had a smooth probe).
    evaluations : int
        Objective evaluations spent.
    options : dict
        The check's options as the core used them.
    environment : dict
        ``core_version``, ``target`` and ``extra`` ([key, value] pairs, see
        :func:`environment`).

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.check_fixture("drop-exact")
    >>> r.verdict, r.verified, len(r.directions), r.directions[0].error.shape
    ('verified', True, 6, (19,))
    >>> r.to_dict()["schema"]
    'ferromotion.receipt/1'
    """

    def __init__(self, receipt: _core.Receipt) -> None:
        self._receipt = receipt
        d = json.loads(receipt.to_json())
        self._dict: Dict[str, Any] = d
        report = d["report"]
        self.schema: str = d["schema"]
        self.verdict: str = report["verdict"]
        self.why: str = report["why"]
        self.objective: Dict[str, Any] = d["objective"]
        self.x: np.ndarray = frozen(np.array(d["x"], dtype=np.float64))
        self.gradient: np.ndarray = frozen(np.array(d["gradient"], dtype=np.float64))
        self.directions: Tuple[CheckDirection, ...] = tuple(CheckDirection._from_core(r) for r in report["directions"])
        self.max_error: float = np.nan if report["max_error"] is None else report["max_error"]
        self.median_error: float = np.nan if report["median_error"] is None else report["median_error"]
        self.evaluations: int = report["evaluations"]
        self.options: Dict[str, Any] = report["options"]
        self.environment: Dict[str, Any] = d["environment"]

    @property
    def verified(self) -> bool:
        """The verdict is ``"verified"``."""
        return self.verdict == "verified"

    def summary(self) -> str:
        """One line: the objective, the verdict, why, and the errors (the core's text)."""
        return self._receipt.summary()

    def to_dict(self) -> Dict[str, Any]:
        """The receipt document as plain Python types (non-finite numbers as None)."""
        return copy.deepcopy(self._dict)

    def to_json(self, indent: Optional[int] = 2) -> str:
        """The receipt document as JSON text (UTF-8 characters kept as they are)."""
        return json.dumps(self._dict, indent=indent, allow_nan=False, ensure_ascii=False)

    def write(self, path: Union[str, "os.PathLike[str]"]) -> Path:
        """Write the receipt's JSON to ``path`` (UTF-8, indented); returns the path."""
        p = Path(path)
        p.write_text(self.to_json() + "\n", encoding="utf-8")
        return p

    def plot(self, *, title: Optional[str] = None, width: int = 720, height: int = 480) -> Any:
        """A Bokeh figure: each direction's normalized error against the probe size, log-log.

        A right gradient shows a V (truncation error falling with eps, round-off rising);
        probes that cross an event are drawn as crosses. Needs bokeh
        (``pip install 'ferromotion[plot]'``).
        """
        from .plot import receipt_figure

        return receipt_figure(self, title=title, width=width, height=height)

    def __repr__(self) -> str:
        name = self.objective["name"] or "unnamed objective"
        return (f"Receipt({name}: {self.verdict}, {len(self.directions)} directions, "
                f"max error {self.max_error:.2e})")


def receipt_schema() -> Dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a receipt document, shipped with the package.

    Examples
    --------
    >>> import ferromotion as fm
    >>> fm.receipt_schema()["properties"]["schema"]["const"] == fm.RECEIPT_SCHEMA
    True
    """
    text = (Path(__file__).resolve().parent / "receipt.schema.json").read_text(encoding="utf-8")
    schema: Dict[str, Any] = json.loads(text)
    return schema


def _check_options(eps: Optional[ArrayLike], taylor_h: Optional[ArrayLike], **rest: Any) -> Dict[str, Any]:
    """The core's ``CheckOptions`` as a dict (``eps`` and ``taylor_h`` left out when None)."""
    out: Dict[str, Any] = dict(rest)
    for name, value in (("eps", eps), ("taylor_h", taylor_h)):
        if value is not None:
            a = float_array(value, name)
            if a.ndim != 1:
                raise InvalidParameter(f"invalid parameter `{name}`: expected array of shape (n,), got {a.shape}")
            out[name] = [float(v) for v in a]
    return out


def _extra() -> List[Tuple[str, str]]:
    return list(environment().items())


def check_gradient(f: Callable[[np.ndarray], float], grad: ArrayLike, x: ArrayLike, *,
                   events: Optional[Callable[[np.ndarray], Any]] = None,
                   hvp: Optional[Callable[[np.ndarray], Any]] = None, eps: Optional[ArrayLike] = None,
                   taylor_h: Optional[ArrayLike] = None, directions: int = _CHECK["random_directions"],
                   coordinates: bool = _CHECK["coordinates"], seed: int = _CHECK["seed"], tol: float = _CHECK["tol"],
                   graze_speed: float = _CHECK["graze_speed"], objective: Optional[str] = None, units: str = "",
                   description: str = "", route: str = "", integrator: str = "",
                   tolerances: Optional[Mapping[str, float]] = None) -> Receipt:
    """Is this gradient real? Check a claimed gradient of any scalar function, with evidence.

    Along seeded random unit directions (and every coordinate axis) the core compares
    g . d with centered differences over a logarithmic sweep of probe sizes (the whole
    curve is kept, never one epsilon), runs the Taylor remainder test, and, when
    ``events`` is given, classifies each probe and direction: a probe whose two sides see
    different event sequences is event-crossing and never certifies anything. The numerics
    run in the core; ``f``, ``events`` and ``hvp`` are called back from it.

    Parameters
    ----------
    f : callable
        ``f(x) -> float`` for x a float64 array of shape (n,). Return NaN where the model
        is undefined (that probe then certifies nothing); an exception ``f`` raises stops
        the check and propagates unchanged.
    grad : array_like
        The claimed gradient at x, shape (n,).
    x : array_like
        The point, shape (n,).
    events : callable, optional
        ``events(x)`` -> the event sequence the evaluation went through (a sequence of
        ints, e.g. the step index of each bounce), or ``(sequence, min_event_speed)`` when
        events have a speed (slower than ``graze_speed`` is grazing).
    hvp : callable, optional
        ``hvp(d)`` -> the claimed Hessian-vector product H d at x, shape (n,): the Taylor
        test then expects slope ~2.
    eps : array_like, optional
        Probe sizes; default 19 from 1e-1 down to 1e-10, half a decade apart.
    taylor_h : array_like, optional
        Step sizes of the Taylor remainder test; default 1e-2 down to 1e-6.
    directions : int
        Seeded random unit directions (besides the coordinates).
    coordinates : bool
        Also check along every coordinate axis.
    seed : int
        Seed of the random directions (the same seed gives the same directions everywhere).
    tol : float
        Largest normalized error that certifies a direction.
    graze_speed : float
        Events slower than this make a direction grazing.
    objective, units, description, route, integrator : str
        What is certified against and how the gradient was produced, for the receipt.
        ``objective`` defaults to ``f``'s name.
    tolerances : mapping, optional
        Name -> value of the integrator's tolerances and parameters (dt, k, rtol, ...).

    Returns
    -------
    Receipt
        Its ``environment.extra`` carries :func:`environment`.

    Examples
    --------
    >>> import numpy as np, ferromotion as fm
    >>> def f(x):
    ...     return float(np.sin(x[0]) * x[1] ** 2)
    >>> x = np.array([0.3, 2.0])
    >>> right = [np.cos(0.3) * 4.0, np.sin(0.3) * 4.0]
    >>> fm.check_gradient(f, right, x, objective="sin(a) b^2").verdict
    'verified'
    >>> r = fm.check_gradient(f, [right[0], 0.0], x)   # forgot the b term
    >>> r.verdict, [d.label for d in r.directions if not d.certified][-1]
    ('not-verified', 'coordinate 1')
    """
    if objective is None:
        objective = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    info = {"name": objective, "units": units, "description": description, "route": route,
            "integrator": integrator, "tolerances": [(str(k), float(v)) for k, v in (tolerances or {}).items()]}
    options = _check_options(eps, taylor_h, random_directions=directions, coordinates=coordinates, seed=seed,
                             tol=tol, graze_speed=graze_speed)
    receipt = _core.check_gradient(f, float_array(grad, "grad"), float_array(x, "x"), info, events=events, hvp=hvp,
                                   options=options, extra=_extra())
    return Receipt(receipt)


def check_fixture(name: str, *, eps: Optional[ArrayLike] = None, taylor_h: Optional[ArrayLike] = None,
                  directions: int = _CHECK["random_directions"], coordinates: bool = _CHECK["coordinates"],
                  seed: int = _CHECK["seed"], tol: float = _CHECK["tol"],
                  graze_speed: float = _CHECK["graze_speed"]) -> Receipt:
    """The receipt of one of the core's fixtures (:data:`FIXTURES`).

    - ``scalar``: x_{k+1} = a x_k + b u, J = (x2 - 2)^2 / 2 at (a, b) = (0.5, 0.4), gradient
      (-1.61, -1.725);
    - ``projectile``: a projectile on semi-implicit Euler aimed at a landing point;
    - ``drop-exact``, ``drop-fixed``: v(T) of the rigid drop against the saltation gradient
      (verified) and against the fixed-step penalty tangent at k = 1e6, dt = 1e-4 (not
      verified: it answers another question);
    - ``drop-fixed-own-map``: the same tangent against its own discrete map (verified for
      probes below about |v| dt);
    - ``drop-across-impact``: T a hair after the impact, so every direction crosses it
      (refused);
    - ``drop-grazing``: an impact at 8.9e-4 m/s (refused).

    Options as :func:`check_gradient`.

    Raises
    ------
    InvalidParameter
        An unknown name (the message lists the known ones).

    Examples
    --------
    >>> import ferromotion as fm
    >>> [(n, fm.check_fixture(n).verdict) for n in ("scalar", "drop-fixed", "drop-across-impact")]
    [('scalar', 'verified'), ('drop-fixed', 'not-verified'), ('drop-across-impact', 'refused')]
    """
    options = _check_options(eps, taylor_h, random_directions=directions, coordinates=coordinates, seed=seed,
                             tol=tol, graze_speed=graze_speed)
    return Receipt(_core.check_fixture(name, options=options, extra=_extra()))


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Conditioning(Json):
    """How well a sensitivity matrix observes its inputs.

    Attributes
    ----------
    singular_values : numpy.ndarray
        Descending, one per input, shape (n_in,) (zeros beyond the rank).
    condition_number : float
        Largest over smallest (inf when rank-deficient).
    weak_directions : numpy.ndarray
        Unit input combinations observed at less than ``rel`` of the strongest, one per
        row, shape (m, n_in).
    """

    singular_values: np.ndarray
    condition_number: float
    weak_directions: np.ndarray

    def to_dict(self) -> Dict[str, Any]:
        """Plain Python types (inf as None)."""
        return json_ready({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    def __repr__(self) -> str:
        sv = ", ".join(f"{s:.3g}" for s in self.singular_values)
        return (f"Conditioning(singular values [{sv}], condition number {self.condition_number:.3g}, "
                f"{len(self.weak_directions)} weak)")


def conditioning(jacobian: Any, rel: float = 1e-8) -> Conditioning:
    """Singular values of a sensitivity matrix and its weakly observed input combinations.

    Parameters
    ----------
    jacobian : array_like
        Shape (n_out, n_in), row-major (``jacobian[i, j]`` = d out_i / d in_j).
    rel : float
        Combinations with a singular value below ``rel`` times the largest are weak.

    Examples
    --------
    >>> import ferromotion as fm
    >>> c = fm.conditioning([[1.0, 1.0], [1.0, 1.0 + 1e-12]])
    >>> c.weak_directions.shape, round(abs(float(c.weak_directions[0, 0])), 3)
    ((1, 2), 0.707)
    """
    jac = float_array(jacobian, "jacobian")
    d = _core.conditioning(jac, rel)
    weak = np.array(d["weak_directions"], dtype=np.float64).reshape(-1, jac.shape[-1] if jac.ndim == 2 else 0)
    return Conditioning(singular_values=frozen(np.array(d["singular_values"], dtype=np.float64)),
                        condition_number=d["condition_number"], weak_directions=frozen(weak))
