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

    The display, not the data, reads missing values as words: NaN and a column's sentinel
    (``missing``: column name -> the value that means "not computed", such as -1) print as
    ``n/a``; a column with no value at all is named below the table instead of printed; and
    the text wraps into blocks at most ``WIDTH`` characters wide, each repeating the first
    column. The columns themselves keep their NaN and sentinels.

    Examples
    --------
    >>> import numpy as np
    >>> from ferromotion._common import Table
    >>> print(Table(law=np.array(["rigid", "penalty"], dtype=object), error=np.array([0.5, np.nan])))
    law      error
    rigid      0.5
    penalty    n/a
    """

    #: The text display's widest line, characters.
    WIDTH = 120

    def __init__(self, *args: Any, missing: Optional[Dict[str, Any]] = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Column name -> the value that means "not computed" in that column.
        self.missing: Dict[str, Any] = dict(missing or {})

    def _cell(self, name: str, v: Any) -> str:
        if name in self.missing and v == self.missing[name]:
            return "n/a"
        if isinstance(v, (float, np.floating)):
            return "n/a" if np.isnan(v) else f"{float(v):.4g}"
        if isinstance(v, (bool, np.bool_)):
            return "yes" if v else "no"
        return str(v)

    def _shown(self) -> Dict[str, List[str]]:
        """Each column with at least one value, as text cells."""
        cols = {name: [self._cell(name, v) for v in col] for name, col in self.items()}
        return {name: cells for name, cells in cols.items() if not cells or any(c != "n/a" for c in cells)}

    def _rows(self) -> List[List[str]]:
        cols = [[self._cell(name, v) for v in col] for name, col in self.items()]
        n = max((len(c) for c in cols), default=0)
        return [[c[i] for c in cols] for i in range(n)]

    def __str__(self) -> str:
        shown = self._shown()
        names = list(shown)
        widths = {name: max([len(name)] + [len(c) for c in shown[name]]) for name in names}

        def block(cols: List[str]) -> List[str]:
            def line(cells: List[str]) -> str:
                parts = []
                for j, (name, c) in enumerate(zip(cols, cells)):
                    left = j == 0 or not _numeric(shown[name])
                    parts.append(c.ljust(widths[name]) if left else c.rjust(widths[name]))
                return "  ".join(parts).rstrip()

            n = len(shown[cols[0]]) if cols else 0
            return [line(cols)] + [line([shown[name][i] for name in cols]) for i in range(n)]

        lines: List[str] = []
        rest = names[1:]
        while True:
            cols = names[:1]
            used = widths[names[0]] if names else 0
            while rest and (len(cols) == 1 or used + 2 + widths[rest[0]] <= self.WIDTH):
                used += 2 + widths[rest[0]]
                cols.append(rest.pop(0))
            if lines:
                lines.append("")
            lines += block(cols)
            if not rest:
                break
        gone = [name for name in self if name not in shown]
        if gone:
            lines.append("")
            lines += _wrapped("not computed (n/a in every row): " + ", ".join(gone), self.WIDTH)
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.keys())
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in self._rows())
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _wrapped(text: str, width: int) -> List[str]:
    """``text`` broken at spaces into lines at most ``width`` wide."""
    import textwrap

    return textwrap.wrap(text, width=width, break_on_hyphens=False)


def _numeric(cells: List[str]) -> bool:
    """Whether a column's cells read as numbers (right-aligned); ``n/a`` counts as one."""
    for c in cells:
        try:
            float(c)
        except ValueError:
            if c != "n/a":
                return False
    return True
