"""What the topic modules share: the core's defaults, array helpers and ``to_json`` (from ``_results``).

Private to the package: the names are public so that sibling modules may import them.
"""

from __future__ import annotations

import copy
import html
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _core, _results
from ._core import InvalidParameter
# The result classes' helpers live with them (shared with the lab's in-browser package).
from ._results import Json, fmt_matrix, frozen, json_ready  # noqa: F401  (re-exported to the topic modules)

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


def float_array(value: Any, name: str) -> np.ndarray:
    """float64 numbers from a number, list or array; InvalidParameter otherwise."""
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InvalidParameter(f"invalid parameter `{name}`: expected an array of numbers of shape (n,): {e}") from e


ArrayLike = Union[Sequence[float], np.ndarray]


def tolerance_rtol(tolerance: Union[None, bool, float]) -> Optional[float]:
    """None/False: off; True: the core's default rtol; a number: that rtol."""
    return _results.tolerance_rtol(tolerance, TOL["rtol"])


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
