"""What the topic modules share: the core's defaults, array helpers and ``to_json``.

Private to the package: the names are public so that sibling modules may import them.
"""

from __future__ import annotations

import copy
import html
import json
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _core
from ._core import InvalidParameter

# The core's defaults, read once so that signatures show them without restating them.
DEFAULTS: Dict[str, Any] = _core.DEFAULTS
DROP: Dict[str, float] = DEFAULTS["drop"]
TOL: Dict[str, Any] = DEFAULTS["tolerance"]
DT: float = DEFAULTS["dt"]


def defaults() -> Dict[str, Any]:
    """The core's defaults, one place: every default the package's signatures, the CLI and
    the Panel app show (a copy; changing it changes nothing).

    Keys: ``drop`` (the six fields of :class:`Drop`), ``dt``, ``k``, ``tolerance`` (rtol,
    atol, events, eps, max_steps), ``max_steps``, ``locate``, ``graze_speed``, ``root_rtol``,
    ``max_events``, ``exponent_range``, ``lands_below``, ``descent``, ``check``, ``hybrid``,
    ``hybrid_step`` (:class:`StepFunction`'s options) and ``quadruped`` (the experiment's configuration, ``robot`` included).

    Examples
    --------
    >>> import ferromotion as fm
    >>> fm.defaults()["dt"], fm.defaults()["drop"]["height"]
    (0.0001, 1.0)
    """
    return copy.deepcopy(DEFAULTS)


def frozen(a: Any) -> np.ndarray:
    """A read-only view of an array returned by the core (results are immutable)."""
    arr = np.asarray(a)
    arr.setflags(write=False)
    return arr


class Json:
    """``to_json`` for result objects that have a ``to_dict``."""

    def to_dict(self) -> Dict[str, Any]:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def to_json(self, indent: Optional[int] = None) -> str:
        """:meth:`to_dict` as JSON text (non-finite numbers become null)."""
        return json.dumps(json_ready(self.to_dict()), indent=indent, allow_nan=False)


def json_ready(x: Any) -> Any:
    """NaN and infinities as None (JSON has no such numbers), numpy scalars and arrays as
    Python numbers and lists."""
    if isinstance(x, dict):
        return {k: json_ready(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_ready(v) for v in x]
    if isinstance(x, np.ndarray):
        return json_ready(x.tolist())
    if isinstance(x, np.generic):
        return json_ready(x.item())
    if isinstance(x, float) and not np.isfinite(x):
        return None
    return x


def float_array(value: Any, name: str) -> np.ndarray:
    """float64 numbers from a number, list or array; InvalidParameter otherwise."""
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InvalidParameter(f"invalid parameter `{name}`: expected an array of numbers of shape (n,): {e}") from e


ArrayLike = Union[Sequence[float], np.ndarray]


def fmt_matrix(j: np.ndarray) -> str:
    return "[[" + ", ".join(f"{x:.4g}" for x in j[0]) + "], [" + ", ".join(f"{x:.4g}" for x in j[1]) + "]]"


def tolerance_rtol(tolerance: Union[None, bool, float]) -> Optional[float]:
    """None/False: off; True: the core's default rtol; a number: that rtol."""
    if tolerance is None or tolerance is False:
        return None
    if tolerance is True:
        return float(TOL["rtol"])
    return float(tolerance)


class Table(Dict[str, np.ndarray]):
    """Numpy columns of equal length, by name (a dict), that display as a table: an HTML
    table in a notebook (``_repr_html_``) and aligned text in a terminal (``str``).

    Examples
    --------
    >>> import numpy as np
    >>> from ferromotion._common import Table
    >>> print(Table(law=np.array(["rigid", "penalty"], dtype=object), error=np.array([0.5, np.nan])))
    law      error
    rigid      0.5
    penalty    nan
    """

    @staticmethod
    def _cell(v: Any) -> str:
        if isinstance(v, (float, np.floating)):
            return f"{float(v):.4g}"
        if isinstance(v, (bool, np.bool_)):
            return "yes" if v else "no"
        return str(v)

    def _rows(self) -> List[List[str]]:
        n = max((len(c) for c in self.values()), default=0)
        return [[self._cell(c[i]) for c in self.values()] for i in range(n)]

    def __str__(self) -> str:
        head = list(self.keys())
        rows = self._rows()
        widths = [max([len(h)] + [len(r[j]) for r in rows]) for j, h in enumerate(head)]

        def line(cells: List[str], header: bool) -> str:
            parts = []
            for j, (c, w) in enumerate(zip(cells, widths)):
                text_col = not header and rows and not _numeric(rows, j)
                parts.append(c.ljust(w) if (header and j == 0) or text_col else c.rjust(w))
            return "  ".join(parts).rstrip()

        return "\n".join([line(head, True)] + [line(r, False) for r in rows])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.keys())
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in self._rows())
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _numeric(rows: List[List[str]], j: int) -> bool:
    """Whether column j reads as numbers (right-aligned)."""
    for r in rows:
        try:
            float(r[j])
        except ValueError:
            return False
    return True
