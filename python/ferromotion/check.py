"""Gradient checks and their receipts (core: ``check/``)."""

from __future__ import annotations

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
from . import _results
from ._common import ArrayLike, DEFAULTS, Json, float_array, frozen, json_ready
from ._results import CheckDirection


# Gradient checks and receipts

_CHECK: Dict[str, Any] = DEFAULTS["check"]
#: The worked examples :func:`check_example` knows, by name. (A *fixture* is a conformance
#: fixture, :mod:`ferromotion.conformance`; these are examples of gradient checks.)
EXAMPLES: Tuple[str, ...] = tuple(_core.EXAMPLES)
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


class Receipt(_results.Receipt):
    """A gradient check's receipt: everything needed to judge its verdict later.

    Made by :func:`check_gradient` and :func:`check_example`; the core writes it, this
    class reads it (its attributes: ``ferromotion._results.Receipt``, shared with the lab's
    in-browser package). ``to_json()`` is the document ``receipt.schema.json`` describes
    (see :func:`receipt_schema`).

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.check_example("drop-exact")
    >>> r.verdict, r.verified, len(r.directions), r.directions[0].error.shape == r.directions[0].eps.shape
    ('verified', True, 6, True)
    >>> r.to_dict()["schema"]
    'ferromotion.receipt/3'
    """

    def __init__(self, receipt: _core.Receipt) -> None:
        super().__init__(receipt.to_json(), receipt.summary())

    @classmethod
    def _from_document(cls, text: str, doc: Dict[str, Any]) -> "Receipt":
        """A receipt read back from its JSON (the summary rebuilt from the document)."""
        r = cls.__new__(cls)
        report = doc["report"]
        summary = (f"{doc['objective']['name']}: {report['verdict']} — {report['why']} "
                   f"({report['evaluations']} evaluations; read back from {doc['schema']})")
        _results.Receipt.__init__(r, text, summary)
        return r

    def write(self, path: Union[str, "os.PathLike[str]"]) -> Path:
        """Write the receipt's JSON to ``path`` (UTF-8, indented); returns the path."""
        p = Path(path)
        p.write_text(self.to_json() + "\n", encoding="utf-8")
        return p

    def plot(self, *, title: Optional[str] = None, width: int = 720, height: int = 480) -> Any:
        """A Bokeh figure: each direction's relative error against the probe size, log-log.

        With ``full_sweep=True`` a right gradient shows a V (truncation error falling with
        eps, round-off rising); probes across a kink, jump or event are drawn as crosses. Needs bokeh
        (``pip install 'ferromotion[plot]'``).
        """
        from .plot import receipt_figure

        return receipt_figure(self, title=title, width=width, height=height)


#: The ``schema`` field of version-1 receipts, which :func:`load_receipt` still reads.
RECEIPT_SCHEMA_V1: str = "ferromotion.receipt/1"
#: The ``schema`` field of version-2 receipts (before kinks, scatter, guarantee and Jacobians),
#: which :func:`load_receipt` still reads.
RECEIPT_SCHEMA_V2: str = "ferromotion.receipt/2"


def receipt_schema(version: int = 3) -> Dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a receipt document, shipped with the package:
    ``version=3`` (what this package writes, :data:`RECEIPT_SCHEMA`), or ``version=2`` or ``1``
    (earlier receipts, still read by :func:`load_receipt`).

    Examples
    --------
    >>> import ferromotion as fm
    >>> fm.receipt_schema()["properties"]["schema"]["const"] == fm.RECEIPT_SCHEMA
    True
    >>> fm.receipt_schema(1)["properties"]["schema"]["const"]
    'ferromotion.receipt/1'
    """
    names = {1: "receipt.v1.schema.json", 2: "receipt.v2.schema.json", 3: "receipt.schema.json"}
    if version not in names:
        raise InvalidParameter(f"invalid parameter `version`: {version!r} (known receipt schema versions: 1, 2, 3)")
    text = (Path(__file__).resolve().parent / names[version]).read_text(encoding="utf-8")
    schema: Dict[str, Any] = json.loads(text)
    return schema


def load_receipt(source: Union[str, "os.PathLike[str]"]) -> Receipt:
    """A receipt read back from its JSON: a path to a file :meth:`Receipt.write` wrote, or
    the JSON text itself. Version-1 and version-2 receipts (``ferromotion.receipt/1``, ``/2``)
    load too: the fields they lack are NaN or None (see :class:`CheckDirection`).

    Raises
    ------
    InvalidParameter
        The document is not a receipt of a known schema version.

    Examples
    --------
    >>> import ferromotion as fm
    >>> r = fm.check_example("scalar", directions=1)
    >>> fm.load_receipt(r.to_json()).verdict == r.verdict
    True
    """
    text = str(source)
    if not text.lstrip().startswith("{"):
        text = Path(source).read_text(encoding="utf-8")
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise InvalidParameter(f"invalid parameter `source`: not JSON ({e})") from None
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema not in (RECEIPT_SCHEMA, RECEIPT_SCHEMA_V2, RECEIPT_SCHEMA_V1):
        raise InvalidParameter(f"invalid parameter `source`: schema {schema!r} is not a receipt "
                               f"({RECEIPT_SCHEMA}, {RECEIPT_SCHEMA_V2} or {RECEIPT_SCHEMA_V1})")
    return Receipt._from_document(text, doc)


def _check_options(eps: Optional[ArrayLike], taylor_h: Optional[ArrayLike], scale: Optional[ArrayLike] = None,
                   **rest: Any) -> Dict[str, Any]:
    """The core's ``CheckOptions`` as a dict (``eps``, ``taylor_h`` and ``scale`` left out when None)."""
    out: Dict[str, Any] = dict(rest)
    for name, value in (("eps", eps), ("taylor_h", taylor_h), ("scale", scale)):
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
                   graze_speed: float = _CHECK["graze_speed"], scale: Optional[ArrayLike] = None,
                   full_sweep: bool = _CHECK["full_sweep"], objective: Optional[str] = None, units: str = "",
                   description: str = "", route: str = "", integrator: str = "",
                   tolerances: Optional[Mapping[str, float]] = None) -> Receipt:
    """Is this gradient real? Check a claimed gradient of any scalar function, with evidence.

    The core (``docs/checking.md`` states its rules) measures f's evaluation noise, then
    along seeded random unit directions (and every coordinate axis) walks a ladder of probe
    sizes with centered differences, stopping once the verdict is resolved. It measures
    where f is smooth from the probe curve itself (a kink or jump breaks the eps^2 pattern of
    the differences), and compares g . p with the differences at the best probe measured
    smooth, absolute and relative, beside the differences' own resolution there. ``f``,
    ``events`` and ``hvp`` are called back from the core.

    Verdicts: ``"verified"`` (right to relative accuracy ``tol``), ``"verified-within-noise"``
    (as right as f's evaluation noise, e.g. float32, lets differences tell: the receipt names
    the noise, the floor and the likely cause), ``"verified-absolute"`` (the derivative is
    below what differences resolve: agreement in absolute terms only), ``"not-verified"``,
    ``"refused"`` (an event crossed or grazed, or no probe measured smooth).

    Parameters
    ----------
    f : callable
        ``f(x) -> float`` for x a float64 array of shape (n,). Return NaN where the model
        is undefined (that probe then certifies nothing); an exception ``f`` raises stops
        the check and propagates unchanged. f(x) itself must be finite.
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
        The ladder of probe sizes the walk moves on; default 19 from 1e-1 down to 1e-10,
        half a decade apart. At least three are needed to measure smoothness.
    taylor_h : array_like, optional
        Step sizes of an explicit Taylor remainder test (extra evaluations); default: the
        remainder is read on the probes themselves.
    directions : int
        Seeded random unit directions (besides the coordinates).
    coordinates : bool
        Also check along every coordinate axis.
    seed : int
        Seed of the random directions (the same seed gives the same directions everywhere).
    tol : float
        Relative accuracy a ``"verified"`` verdict certifies.
    graze_speed : float
        Events slower than this make a direction grazing.
    scale : array_like, optional
        Typical magnitude of each coordinate of x, shape (n,): probes move x_i by
        eps * scale_i * d_i (for badly scaled x). Recorded in the receipt's options.
    full_sweep : bool
        Walk the whole ladder in every direction (the full V, for plots) instead of stopping
        once the verdict is resolved.
    objective, units, description, route, integrator : str
        What is certified against and how the gradient was produced, for the receipt.
        ``objective`` defaults to ``f``'s name.
    tolerances : mapping, optional
        Name -> value of the integrator's tolerances and parameters (dt, k, rtol, ...).

    Returns
    -------
    Receipt
        Its ``environment.extra`` carries :func:`environment`.

    Raises
    ------
    InvalidParameter
        A gradient of the wrong shape or not finite, x not finite, a bad option.
    NonFinite
        f(x) is not finite.

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
    >>> def f32(x):   # the same function in float32
    ...     a, b = np.float32(x[0]), np.float32(x[1])
    ...     return float(np.sin(a) * b * b)
    >>> fm.check_gradient(f32, right, x).verdict
    'verified-within-noise'
    """
    if callable(grad) and not callable(f):
        raise InvalidParameter("invalid parameter `f`: f is not callable but grad is: the order is "
                               "check_gradient(f, grad, x), f first")
    if callable(grad):
        raise InvalidParameter("invalid parameter `grad`: got a function; pass grad(x), the gradient's value at x "
                               "(scipy.optimize.check_grad takes (func, grad_func, x0); here it is "
                               "fm.check_gradient(f, grad(x), x))")
    info = _objective_info(f, objective, units, description, route, integrator, tolerances)
    options = _check_options(eps, taylor_h, scale, random_directions=directions, coordinates=coordinates, seed=seed,
                             tol=tol, graze_speed=graze_speed, full_sweep=bool(full_sweep))
    receipt = _core.check_gradient(f, float_array(grad, "grad"), float_array(x, "x"), info, events=events, hvp=hvp,
                                   options=options, extra=_extra())
    return Receipt(receipt)


def _objective_info(f: Any, objective: Optional[str], units: str, description: str, route: str, integrator: str,
                    tolerances: Optional[Mapping[str, float]]) -> Dict[str, Any]:
    """The core's ``ObjectiveInfo`` as a dict (``objective`` defaults to f's name)."""
    if objective is None:
        objective = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    return {"name": objective, "units": units, "description": description, "route": route,
            "integrator": integrator, "tolerances": [(str(k), float(v)) for k, v in (tolerances or {}).items()]}


def check_jacobian(f: Callable[[np.ndarray], Any], J: Any, x: ArrayLike, *, mode: Optional[str] = None,
                   jvp: Optional[Callable[[np.ndarray], Any]] = None,
                   vjp: Optional[Callable[[np.ndarray], Any]] = None, eps: Optional[ArrayLike] = None,
                   directions: int = _CHECK["random_directions"], coordinates: bool = _CHECK["coordinates"],
                   seed: int = _CHECK["seed"], tol: float = _CHECK["tol"], scale: Optional[ArrayLike] = None,
                   objective: Optional[str] = None, units: str = "", description: str = "", route: str = "",
                   integrator: str = "", tolerances: Optional[Mapping[str, float]] = None) -> Receipt:
    """Is this Jacobian real? The gradient check for f: R^n -> R^m, with the same verdicts,
    rules and receipt.

    Each output weight w (every output when m <= 8, else seeded random unit weights) makes the
    scalar objective w . f, whose gradient is claimed to be J^T w; each is checked along the same
    directions as :func:`check_gradient` (f is evaluated once per point). The directions'
    labels read ``"output 2, random 0"``; the verdict is the gradient check's rule over all of
    them (``docs/checking.md``).

    Parameters
    ----------
    f : callable
        ``f(x) -> array`` of shape (m,) for x of shape (n,).
    J : array_like or callable or None
        The claimed Jacobian at x, shape (m, n) (``J[i, j]`` = d f_i / d x_j); or a callable
        with ``mode="jvp"`` (``J(p)`` = J p, shape (m,)) or ``mode="vjp"`` (``J(w)`` = J^T w,
        shape (n,)), as jax's ``check_grads`` modes ``fwd`` and ``rev``; or None with ``jvp=``
        or ``vjp=``.
    x : array_like
        The point, shape (n,).
    mode : {"jvp", "vjp"}, optional
        What a callable ``J`` computes.
    jvp, vjp : callable, optional
        The same as a callable ``J`` with ``mode``.

    Other parameters are :func:`check_gradient`'s. The receipt's ``gradient`` holds the claimed
    matrix row-major (empty for a JVP or VJP) and its ``outputs`` m.

    Examples
    --------
    >>> import numpy as np, ferromotion as fm
    >>> f = lambda x: np.array([x[0] ** 2 * x[1], np.sin(x[0]) + 3 * x[1]])
    >>> x = np.array([0.7, -1.3])
    >>> J = np.array([[2 * x[0] * x[1], x[0] ** 2], [np.cos(x[0]), 3.0]])
    >>> fm.check_jacobian(f, J, x).verdict
    'verified'
    >>> fm.check_jacobian(f, lambda p: J @ p, x, mode="jvp").verdict
    'verified'
    >>> fm.check_jacobian(f, J * [[1, 1.01], [1, 1]], x).verdict
    'not-verified'
    """
    if callable(J):
        if mode not in ("jvp", "vjp"):
            raise InvalidParameter(f"invalid parameter `mode`: {mode!r}; a callable J needs mode=\"jvp\" (J(p) = J p) "
                                   f"or mode=\"vjp\" (J(w) = J^T w)")
        jvp, vjp, J = (J, None, None) if mode == "jvp" else (None, J, None)
    elif mode is not None:
        raise InvalidParameter(f"invalid parameter `mode`: {mode!r} applies only to a callable J")
    info = _objective_info(f, objective, units, description, route, integrator, tolerances)
    options = _check_options(eps, None, scale, random_directions=directions, coordinates=coordinates, seed=seed,
                             tol=tol)
    jac = None if J is None else float_array(J, "J")
    receipt = _core.check_jacobian(f, float_array(x, "x"), info, jacobian=jac, jvp=jvp, vjp=vjp, options=options,
                                   extra=_extra())
    return Receipt(receipt)


def check_example(name: str, *, eps: Optional[ArrayLike] = None, taylor_h: Optional[ArrayLike] = None,
                  directions: int = _CHECK["random_directions"], coordinates: bool = _CHECK["coordinates"],
                  seed: int = _CHECK["seed"], tol: float = _CHECK["tol"],
                  graze_speed: float = _CHECK["graze_speed"]) -> Receipt:
    """The receipt of one of the core's worked examples (:data:`EXAMPLES`).

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
    >>> [(n, fm.check_example(n).verdict) for n in ("scalar", "drop-fixed", "drop-across-impact")]
    [('scalar', 'verified'), ('drop-fixed', 'not-verified'), ('drop-across-impact', 'refused')]
    """
    options = _check_options(eps, taylor_h, random_directions=directions, coordinates=coordinates, seed=seed,
                             tol=tol, graze_speed=graze_speed)
    return Receipt(_core.check_example(name, options=options, extra=_extra()))


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
