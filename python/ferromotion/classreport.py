"""A class's lab exports read together: ``ferromotion class report EXPORTS... [--csv FILE [--gradebook
canvas|moodle|plain]] [--html FILE]``.

Each learner's "Export my progress (JSON)" file (``web/progress.schema.json``) is read as
untrusted input: refused by size and by nesting depth before it is parsed, parsed strictly
(no NaN, no repeated keys), checked against the schema, and set aside when it is a duplicate
or comes from a newer lab. A version 2 export records, for every checklist item, the readings
the learner saw when it ticked: the controls as the core's ``WorkbenchConfig`` and each value
as the page printed it. The report runs the core's workbench (:class:`ferromotion.Workbench`,
the bench the lab calls through WebAssembly) at those controls and compares:

- **re-derived**: every printed value is the core's, at the printed digits, and the core's own
  verdict agrees with the item (the sign is wrong for "wrong sign", the tolerance route lands
  for "tolerance");
- **does not match the core**: something does not (an edited file shows up here), with why;
- **no readings**: the item was ticked by a lab that did not record readings (a version 1
  export, or progress made before the lab recorded them): nothing to re-derive;
- **not done**.

The rule for "the same to the printed digits" is one definition, :func:`printed_matches`:
the core's value, rounded half away from zero at the last digit the text shows (what
JavaScript's ``toPrecision``, ``toFixed`` and ``toExponential`` do), must equal the printed
number. The page decides how many digits to print (``web/js/format.js``); the report reads
the precision off the text itself, so the two cannot drift apart.

The thresholds the lab grades with (a refinement ratio that "did not fall", the exponent's
typing tolerance) stay the lab's; the report checks what the core computes.

Exports are not signed. Two learners' files with the same readings and the same tick times (to
the millisecond) are flagged as possible copies, naming both files: a copy with only the name
changed shows up here. A learner who edits the numbers so that they are still the core's at
other controls, or who copies the readings and waits before ticking, is not caught.

The gradebook (:meth:`ClassReport.write_gradebook`, ``--csv FILE --gradebook FORMAT``) has one
row per learner, sorted by name then ID: the name, the student ID (the export's own field; an
older export's ``"Name (id)"`` is split), the checklist items re-derived out of 4 and the quiz
answers right out of the lab's questions; :data:`GRADEBOOK_COLUMNS` lists each format's columns.

Examples
--------
>>> import ferromotion as fm
>>> from ferromotion.classreport import printed_matches
>>> printed_matches("1.59e4", 15912.3), printed_matches("1.60e4", 15912.3)
(True, False)
"""

from __future__ import annotations

import argparse
import base64
import csv
import dataclasses
import datetime
import hashlib
import html
import json
import math
import re
import sys
import time
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import labserver
from ._common import DT
from ._core import FerroError
from .routes import Drop
from .workbench import Workbench

#: The schema name every export carries, with its version: ``ferromotion-lab-progress/2``.
SCHEMA_NAME = "ferromotion-lab-progress"
#: The versions this report reads (the lab writes the last).
VERSIONS = (1, 2, 3)
#: A file larger than this is refused unread, bytes (a real export is a few kB).
MAX_BYTES = 1_000_000
#: A file nesting arrays and objects deeper than this is refused unparsed (an export nests 6).
MAX_DEPTH = 32

ITEMS = ("wrongSign", "refined", "exponent", "tolerance")
#: Column titles of the items.
ITEM_TITLES = {"wrongSign": "wrong sign", "refined": "refined dt", "exponent": "exponent", "tolerance": "tolerance"}
#: The route each item is about, and the readout path and core verdict it claims (None: any value).
CLAIMS: Dict[str, Tuple[str, str, Any]] = {
    "wrongSign": ("fixed", "fixed.errors.sign", "wrong"),
    # item 2 ticks on the wrong sign at the base dt (the refinement's first sign), whatever dt is pressed
    "refined": ("fixed", "refinement.signs.0", "wrong"),
    "exponent": ("fixed", "exponent.slope", None),
    "tolerance": ("tolerance", "tolerance.lands", True),
}

RE_DERIVED = "re-derived"
MISMATCH = "does not match the core"
NO_READINGS = "no readings"
NOT_DONE = "not done"
STATES = (RE_DERIVED, MISMATCH, NO_READINGS, NOT_DONE)

_NUMBER = re.compile(r"(-?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:e([+-]?\d+))?")
_EXACT = Context(prec=200)


# ---- the comparison rule ------------------------------------------------------------------


def printed_matches(text: Any, value: Any) -> bool:
    """Whether ``text``, a number as the lab printed it, is ``value`` to the printed digits.

    The printed forms are those of ``web/js/format.js``: ``"1.59e4"``, ``"0.0103"``,
    ``"−2.87"`` (a minus sign or a hyphen), ``"1,601"``, ``"0.476"``; ``"n/a"`` for the core's
    none, ``"not a number"`` and ``"∞"``/``"−∞"``. ``value`` (the core's) is rounded half away
    from zero at the printed text's last digit, from its exact binary value, and must equal it.

    >>> printed_matches("0.0103", 0.010349), printed_matches("0.0103", 0.010351)
    (True, False)
    >>> printed_matches("1,601", 1600.5), printed_matches("−2.87", -2.8749), printed_matches("n/a", None)
    (True, True, True)
    """
    if not isinstance(text, str):
        return False
    if value is None:
        return text == "n/a"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and math.isnan(value):
        return text == "not a number"
    if isinstance(value, float) and math.isinf(value):
        return text == ("∞" if value > 0 else "−∞")
    m = _NUMBER.fullmatch(text.replace("−", "-"))
    if m is None:
        return False
    sign, whole, fraction, exponent = m.groups()
    fraction = fraction or ""
    try:
        printed = Decimal(f"{sign}{whole.replace(',', '')}.{fraction or '0'}e{exponent or 0}")
        quantum = Decimal(1).scaleb(int(exponent or 0) - len(fraction))
        rounded = Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP, context=_EXACT)
    except (InvalidOperation, ValueError, OverflowError):
        return False
    return rounded == printed


# ---- reading one file ---------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Problem:
    """A file the report could not count, and why (a sentence)."""

    file: str
    reason: str


class _Refused(Exception):
    """A file refused, with the reason a person reads."""


def nesting_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """How deep arrays and objects nest in JSON ``text``, counted on the raw text before any
    parsing (brackets inside strings do not count); stops counting once past ``limit``.

    >>> nesting_depth('{"a": [1, {"b": "[[["}]}'), nesting_depth("[" * 100 + "]" * 100, limit=10)
    (3, 11)
    """
    depth = deepest = 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif c in "]}":
            depth -= 1
    return deepest


def _strict_object(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    obj: Dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _Refused(f"not a valid export: the key {key!r} appears twice in one object")
        obj[key] = value
    return obj


def _no_constants(name: str) -> Any:
    raise _Refused(f"not valid JSON: {name} is not a JSON number")


def _load(path: Path) -> Tuple[bytes, Dict[str, Any]]:
    """Read, size-check, depth-check and parse one export; raises _Refused."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise _Refused(f"too large: {size:,} bytes (an export is a few kB; the limit is {MAX_BYTES:,})")
        with path.open("rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise _Refused(f"cannot be read: {e.strerror or e}") from None
    if len(data) > MAX_BYTES:
        raise _Refused(f"too large: over {MAX_BYTES:,} bytes (an export is a few kB)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _Refused("not UTF-8 text: not an export") from None
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise _Refused(f"nested deeper than {MAX_DEPTH} levels (an export nests 6): refused unparsed")
    try:
        record = json.loads(text, object_pairs_hook=_strict_object, parse_constant=_no_constants)
    except json.JSONDecodeError as e:
        raise _Refused(f"not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    if not isinstance(record, dict):
        raise _Refused("not an export: the file holds no JSON object")
    return data, record


def schema() -> Dict[str, Any]:
    """The exports' JSON Schema: the lab's own ``progress.schema.json`` (a checkout's ``web/``,
    else the lab shipped in the package)."""
    path = labserver.default_root() / "progress.schema.json"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise FileNotFoundError(f"the export schema {path} cannot be read ({e.strerror or e}): "
                                "this installation has no lab") from None
    loaded: Dict[str, Any] = json.loads(text)
    return loaded


def _validator() -> Any:
    try:
        import jsonschema  # type: ignore[import-untyped]
    except ImportError as e:
        raise ImportError("the class report needs jsonschema: pip install 'ferromotion[schema]'") from e
    cls = jsonschema.Draft202012Validator
    return cls(schema(), format_checker=cls.FORMAT_CHECKER)


def _version(record: Dict[str, Any]) -> int:
    name = record.get("schema")
    m = re.fullmatch(rf"{SCHEMA_NAME}/(\d{{1,6}})", name) if isinstance(name, str) else None
    if m is None:
        raise _Refused("not a ferromotion lab export (its \"schema\" is not ferromotion-lab-progress/N)")
    version = int(m.group(1))
    if version > VERSIONS[-1]:
        raise _Refused(f"made by a newer lab (export version {version}); this ferromotion reads versions "
                       f"{', '.join(map(str, VERSIONS))}: upgrade the package (pip install -U ferromotion)")
    if version not in VERSIONS:
        raise _Refused(f"export version {version} is not one this report reads")
    return version


def _schema_error(validator: Any, record: Dict[str, Any]) -> Optional[str]:
    import jsonschema  # type: ignore[import-untyped]

    error = jsonschema.exceptions.best_match(validator.iter_errors(record))
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path) or "the top level"
    message = error.message if len(error.message) <= 160 else error.message[:157] + "..."
    return f"does not follow the export schema at {where}: {message}"


# ---- re-deriving --------------------------------------------------------------------------


class _Core:
    """The core's workbench at each recorded setting, one readout per distinct setting
    (benches kept per drop and base step, so the core's own caches are shared)."""

    def __init__(self) -> None:
        self._benches: Dict[str, Workbench] = {}
        self._readouts: Dict[str, Union[Dict[str, Any], FerroError]] = {}
        self.readouts_computed = 0

    def readout(self, config: Dict[str, Any]) -> Dict[str, Any]:
        key = json.dumps(config, sort_keys=True)
        if key not in self._readouts:
            try:
                self._readouts[key] = self._compute(config)
                self.readouts_computed += 1
            except FerroError as e:
                self._readouts[key] = e
        got = self._readouts[key]
        if isinstance(got, FerroError):
            raise got
        return got

    def _compute(self, config: Dict[str, Any]) -> Dict[str, Any]:
        tol = config.get("tolerance_options") or {}
        place = json.dumps([config["drop"], config["base_dt"]], sort_keys=True)
        bench = self._benches.get(place)
        if bench is None:
            bench = Workbench(Drop(**config["drop"]), k=config["k"], dt=config["base_dt"],
                              dt_divisor=config["dt_divisor"])
            self._benches[place] = bench
        bench.set_k(config["k"])
        bench.set_dt_divisor(config["dt_divisor"])
        bench.set_tolerance(bool(config["tolerance"]), tol.get("rtol"), tol.get("events"), tol.get("jacobian"))
        return bench.readout()


def _at(readout: Any, path: str) -> Any:
    """The readout's value at a dotted path (list entries by index); KeyError when absent."""
    node = readout
    for key in path.split("."):
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            raise KeyError(path)
    return node


def _plain(x: Any) -> str:
    """A recorded value for a sentence (quoted if text, cut short; a float to 6 figures)."""
    if isinstance(x, float) and math.isfinite(x):
        return f"{x:.6g}"
    s = json.dumps(x, ensure_ascii=False)
    return s if len(s) <= 40 else s[:37] + "..."


@dataclasses.dataclass
class ItemResult:
    """One checklist item of one learner: its state, why, and where (k, N/m) it was read."""

    state: str
    why: str = ""
    k: Optional[float] = None


def _judge(item: str, entry: Dict[str, Any], version: int, core: _Core) -> ItemResult:
    if not entry.get("done"):
        return ItemResult(NOT_DONE)
    readings = entry.get("readings")
    if version < 2 or readings is None:
        why = ("a version 1 export records no readings" if version < 2
               else "ticked before the lab recorded readings")
        k = entry.get("detail", {}).get("k")
        return ItemResult(NO_READINGS, why, k if isinstance(k, (int, float)) else None)
    route, claim_path, claim = CLAIMS[item]
    k = readings["k"]
    config = readings["config"]
    shown = readings["shown"]
    problems: List[str] = []
    if readings["route"] != route:
        problems.append(f"records the {readings['route']} route; this item is about the {route} route")
    if claim_path not in shown:
        problems.append(f"records no {claim_path}")
    try:
        r = core.readout(config)
    except FerroError as e:
        return ItemResult(MISMATCH, f"the core refuses the recorded controls: {e}", k)
    for name, recorded in (("k", k), ("dt", readings["dt"])):
        if recorded != r[name]:
            problems.append(f"{name} = {_plain(recorded)} is not the controls' {name} = {_plain(r[name])}")
    for path, printed in shown.items():
        try:
            value = _at(r, path)
        except KeyError:
            problems.append(f"{path} is not in the core's readout at these controls")
            continue
        if isinstance(value, (bool, str)):
            ok = type(printed) is type(value) and printed == value
        elif value is None:
            ok = printed is None or printed == "n/a"
        elif isinstance(value, (int, float)):
            ok = printed_matches(printed, value)
        else:
            ok = False
        if not ok:
            problems.append(f"{path} printed {_plain(printed)}, the core gives {_plain(value)}")
    if claim is not None and not problems and _at(r, claim_path) != claim:
        # (no problems: the path is in the readout, since the readings record it)
        problems.append(f"the core's {claim_path} here is {_plain(_at(r, claim_path))}, not {_plain(claim)}")
    if problems:
        return ItemResult(MISMATCH, "; ".join(problems), k)
    return ItemResult(RE_DERIVED, f"{len(shown)} readings at k = {k:g} N/m, dt = {readings['dt']:g} s", k)


# ---- the class ----------------------------------------------------------------------------

#: The gradebook formats of ``--gradebook``, and what each is for.
GRADEBOOK_FORMATS = ("plain", "canvas", "moodle")
#: Column titles of the two scores in the LMS formats (each becomes an assignment or grade item).
SCORE_TITLES = ("Ferromotion lab checklist", "Ferromotion lab quiz")


def quiz_questions() -> Tuple[str, ...]:
    """The lab's quiz questions (the export schema's names for them): the quiz is scored out of
    their number, for older exports too."""
    names = schema()["$defs"][f"v{VERSIONS[-1]}"]["properties"]["quiz"]["propertyNames"]["enum"]
    return tuple(names)


_NAME_ID = re.compile(r"(.*?\S)\s*\(\s*([^()]*?\S)\s*\)")


def split_name_id(learner: Optional[str], learner_id: Optional[str] = None) -> Tuple[str, str]:
    """(name, ID) of an export: the version 3 fields as typed; an older export's one field split
    as ``"Name (id)"``; a lone word with a digit in it (``"s1234567"``) is an ID.

    >>> split_name_id("Ada Lovelace (s1234567)"), split_name_id("s1234567"), split_name_id("Ada", "s1")
    (('Ada Lovelace', 's1234567'), ('', 's1234567'), ('Ada', 's1'))
    """
    name, given = (learner or "").strip(), (learner_id or "").strip()
    if given or learner_id is not None:
        return name, given
    m = _NAME_ID.fullmatch(name)
    if m:
        return m.group(1), m.group(2)
    if name and not any(c.isspace() for c in name) and any(c.isdigit() for c in name):
        return "", name
    return name, ""


def fingerprint(record: Dict[str, Any]) -> Optional[str]:
    """What a copy of another learner's export keeps when only the name changes: every ticked
    item's tick time and readings (or detail, in a version 1 export) and the chosen wrong-sign
    stiffness; None when nothing was ticked (there is nothing to copy)."""
    done = {i: [e.get("at"), e.get("readings") if e.get("readings") is not None else e.get("detail")]
            for i, e in record["checklist"].items() if e.get("done")}
    if not done:
        return None
    chosen = record.get("wrong_sign_chosen")
    text = json.dumps([done, chosen], sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclasses.dataclass
class Learner:
    """One export counted in the report."""

    file: str
    name: Optional[str]
    version: int
    exported_at: str
    items: Dict[str, ItemResult]
    passed_claimed: bool
    #: The student ID (the export's field, or split from an older export's "Name (id)"), "" if none.
    learner_id: str = ""
    #: The first wrong-sign stiffness the learner chose, re-derived; None when the export has none.
    chosen: Optional[ItemResult] = None
    #: Quiz questions answered right (the last answer of each).
    quiz_right: int = 0
    #: What a copy keeps (:func:`fingerprint`); None when nothing was ticked.
    fingerprint: Optional[str] = None
    #: Other files with the same readings and tick times: possible copies, either way.
    same_as: List[str] = dataclasses.field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Every item re-derived."""
        return all(self.items[i].state == RE_DERIVED for i in ITEMS)

    @property
    def score(self) -> int:
        """Checklist items re-derived by the core, out of 4."""
        return sum(self.items[i].state == RE_DERIVED for i in ITEMS)

    @property
    def label(self) -> str:
        """The learner's name, else the ID, else "(no name)"."""
        return self.name or self.learner_id or "(no name)"

    def sort_key(self) -> Tuple[Any, ...]:
        """By name (unnamed last), then ID, then file."""
        return (not self.name, (self.name or "").casefold(), self.learner_id.casefold(), self.file)


@dataclasses.dataclass
class ClassReport:
    """Every learner counted (one row each, sorted by name then ID), every file set aside (with
    why), and how long it took."""

    learners: List[Learner]
    problems: List[Problem]
    seconds: float = 0.0
    readouts: int = 0
    #: The lab's quiz questions; the quiz is scored out of their number.
    questions: Tuple[str, ...] = ()

    def counts(self) -> Dict[str, Dict[str, int]]:
        """Per item, how many learners are in each state."""
        return {i: {s: sum(1 for x in self.learners if x.items[i].state == s) for s in STATES} for i in ITEMS}

    def wrong_sign_ks(self) -> List[Tuple[float, str]]:
        """(k, state) of the first wrong-sign stiffness each learner chose (not the opening view,
        which ticks the item without a choice); exports before version 3 record none."""
        return [(x.chosen.k, x.chosen.state) for x in self.learners if x.chosen is not None and x.chosen.k is not None]

    def copies(self) -> List[List[Learner]]:
        """Groups of learners whose exports have the same readings and tick times."""
        return _same_fingerprint(self.learners)

    def summary(self) -> str:
        """The class in a few lines."""
        n = len(self.learners)
        passed = sum(x.passed for x in self.learners)
        lines = [f"{n} learner{'s' if n != 1 else ''} counted, {len(self.problems)} file"
                 f"{'s' if len(self.problems) != 1 else ''} set aside; {passed} of {n} passed with every item "
                 "re-derived by the core."]
        for item, c in self.counts().items():
            lines.append(f"  {ITEM_TITLES[item]:<11} " + ", ".join(f"{c[s]} {s}" for s in STATES if c[s]))
        old = sum(1 for x in self.learners if x.version == 1)
        if old:
            lines.append(f"  {old} older export{'s' if old != 1 else ''} (version 1): no readings to re-derive.")
        copies = self.copies()
        if copies:
            files = sum(len(g) for g in copies)
            lines.append(f"  {files} files in {len(copies)} group{'s' if len(copies) != 1 else ''} with the same "
                         "readings and tick times: possible copies (listed below).")
        return "\n".join(lines)

    def format_table(self) -> str:
        """One line per learner (by name), then the summary, the mismatches, the possible copies
        and the files set aside (text from files made printable)."""
        quiz = len(self.questions)
        rows = [["learner", "ID", "file", *(ITEM_TITLES[i] for i in ITEMS), "items", "quiz", "passed"]]
        for x in self.learners:
            old = f" (v{x.version})" if x.version < VERSIONS[-1] else ""
            rows.append([_short(_printable(x.name or "(no name)")), _short(_printable(x.learner_id)),
                         _printable(Path(x.file).name) + old, *(x.items[i].state for i in ITEMS),
                         f"{x.score}/4", f"{x.quiz_right}/{quiz}", "yes" if x.passed else "no"])
        widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
        out = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
        out += ["", self.summary()]
        notes = [(x, i) for x in self.learners for i in ITEMS if x.items[i].state == MISMATCH]
        if notes:
            out += ["", "Not matching the core:"]
            out += [f"  {_printable(x.file)}, {ITEM_TITLES[i]}: {_printable(x.items[i].why)}" for x, i in notes]
        if self.copies():
            out += ["", "Possible copies (the same readings and tick times, to the millisecond):"]
            out += ["  " + " and ".join(f"{_printable(x.file)} ({_printable(x.label)})" for x in g)
                    for g in self.copies()]
        if self.problems:
            out += ["", "Files set aside:"]
            out += [f"  {_printable(p.file)}: {_printable(p.reason)}" for p in self.problems]
        return "\n".join(out)

    def gradebook_rows(self, fmt: str = "plain") -> Tuple[List[str], List[List[Any]], List[Problem]]:
        """(header, one row per learner, rows left out) of the gradebook ``fmt``
        (:data:`GRADEBOOK_COLUMNS`). In the LMS formats a learner with neither name nor ID
        cannot be placed: it is left out, with why."""
        if fmt not in GRADEBOOK_FORMATS:
            raise ValueError(f"unknown gradebook format {fmt!r}: the formats are {', '.join(GRADEBOOK_FORMATS)}")
        quiz = len(self.questions)
        header = [c.replace("{quiz}", str(quiz)) for c in GRADEBOOK_COLUMNS[fmt]]
        rows: List[List[Any]] = []
        left_out: List[Problem] = []
        for x in self.learners:
            name, sid = _cell(x.name or ""), _cell(x.learner_id)
            if fmt != "plain" and not (name or sid):
                left_out.append(Problem(x.file, "no name and no student ID: a gradebook cannot place this row "
                                                "(its details are in the plain gradebook)"))
                continue
            if fmt == "canvas":
                rows.append([name, "", sid, "", "", x.score, x.quiz_right])
            elif fmt == "moodle":
                rows.append([sid, name, x.score, x.quiz_right])
            else:
                rows.append(_detail_row(x, name, sid, quiz))
        return header, rows, left_out

    def write_gradebook(self, path: Path, fmt: str = "plain") -> List[Path]:
        """Write the gradebook ``fmt`` to ``path`` (UTF-8, comma-separated, one header row), and
        beside it ``STEM-set-aside.csv`` (file, reason: every file set aside, and any learner the
        format cannot place); for canvas and moodle also ``STEM-details.csv`` (the plain format,
        per-item details). Returns the paths written."""
        header, rows, left_out = self.gradebook_rows(fmt)
        written = [path]
        _write_csv(path, header, rows)
        if fmt != "plain":
            details = path.with_name(f"{path.stem}-details.csv")
            h, r, _ = self.gradebook_rows("plain")
            _write_csv(details, h, r)
            written.append(details)
        aside = path.with_name(f"{path.stem}-set-aside.csv")
        _write_csv(aside, ["file", "reason"], [[_cell(p.file), _cell(p.reason)] for p in self.problems + left_out])
        written.append(aside)
        return written

    def write_csv(self, path: Path) -> None:
        """The plain gradebook (:meth:`write_gradebook` with ``fmt="plain"``)."""
        self.write_gradebook(path, "plain")

    def to_html(self) -> str:
        """A self-contained HTML page: summary, one row per learner, the wrong-sign plot, the
        possible copies, the files set aside. Every text from a file is escaped, and the page's
        Content-Security-Policy allows no script at all and only its own stylesheet."""
        return _html(self)


#: The columns of each gradebook format, in order ("{quiz}": the number of quiz questions).
#: plain: everything, one learner per row; canvas: Canvas's gradebook import (Student, ID, SIS User
#: ID, SIS Login ID, Section, then one column per assignment; the student ID goes to SIS User ID,
#: Canvas's own ID is left empty); moodle: Moodle's "Import grades from CSV" (map "ID number" to the
#: user's ID number, or "Full name"; each score column to a grade item).
GRADEBOOK_COLUMNS: Dict[str, List[str]] = {
    "plain": ["name", "id", "items_rederived", "items_max", "quiz_right", "quiz_max",
              *ITEMS, *(f"{i}_why" for i in ITEMS), "wrong_sign_k", "passed_rederived", "passed_claimed",
              "possible_copy_of", "version", "exported_at", "file"],
    "canvas": ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
               f"{SCORE_TITLES[0]} (of 4)", f"{SCORE_TITLES[1]} (of {{quiz}})"],
    "moodle": ["ID number", "Full name", f"{SCORE_TITLES[0]} (of 4)", f"{SCORE_TITLES[1]} (of {{quiz}})"],
}


def _detail_row(x: Learner, name: str, sid: str, quiz: int) -> List[Any]:
    k = x.chosen.k if x.chosen is not None else None
    return [name, sid, x.score, 4, x.quiz_right, quiz, *(x.items[i].state for i in ITEMS),
            *(_cell(x.items[i].why) for i in ITEMS), "" if k is None else f"{k:.6g}",
            "yes" if x.passed else "no", "yes" if x.passed_claimed else "no",
            _cell("; ".join(x.same_as)), x.version, _cell(x.exported_at), _cell(x.file)]


def _write_csv(path: Path, header: List[str], rows: List[List[Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def _short(text: str, width: int = 28) -> str:
    """Text cut to ``width`` characters with an ellipsis (never silently)."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _printable(text: str) -> str:
    """Text from a file made safe for a terminal: control characters shown as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def _cell(text: str) -> str:
    """Text from a file made safe for a spreadsheet: a leading = + - @ cannot start a formula."""
    text = _printable(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


class NoExports(FileNotFoundError):
    """A path named on the command line is missing, or a folder holds no export: a sentence."""


def _exports(paths: Iterable[Union[str, Path]]) -> List[Path]:
    """The files named, with a directory standing for the *.json files in it (sorted); a missing
    path or a folder without *.json files raises :class:`NoExports`."""
    out: List[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(q for q in p.glob("*.json") if q.is_file())
            if not found:
                raise NoExports(f"the folder {p} holds no .json files: no exports to read (is it the right folder?)")
            out.extend(found)
        elif p.exists():
            out.append(p)
        else:
            raise NoExports(f"{p} does not exist: name an export file or a folder of them")
    return out


def _learner(name: str, record: Dict[str, Any], version: int, core: _Core, questions: Sequence[str]) -> Learner:
    # Version 3 has the two fields apart (taken as typed); older ones one field, maybe "Name (ID)".
    who, sid = split_name_id(record.get("learner"), (record.get("learner_id") or "") if version >= 3 else None)
    chosen = record.get("wrong_sign_chosen")
    quiz = record.get("quiz") or {}
    return Learner(
        file=name, name=who or None, version=version, exported_at=record["exported_at"],
        items={i: _judge(i, record["checklist"][i], version, core) for i in ITEMS},
        passed_claimed=bool(record["passed"]), learner_id=sid,
        chosen=None if chosen is None else _judge("wrongSign", {"done": True, **chosen}, version, core),
        quiz_right=sum(1 for q, a in quiz.items() if q in questions and a.get("correct") is True),
        fingerprint=fingerprint(record),
    )


def class_report(paths: Iterable[Union[str, Path]]) -> ClassReport:
    """Read every export (a directory stands for its *.json files) and re-derive every recorded
    reading with the core.

    Returns
    -------
    ClassReport
        One :class:`Learner` per export counted, sorted by name then ID; a :class:`Problem` per
        file set aside (too large, too deep, not JSON, not an export, against the schema, from a
        newer lab, or a duplicate: the same bytes as an earlier file, or the same learner as a
        later export). Exports with the same readings and tick times are counted and flagged
        (:meth:`ClassReport.copies`).

    Raises
    ------
    NoExports
        A path does not exist, or a folder holds no .json file.
    ImportError
        jsonschema is not installed (``pip install 'ferromotion[schema]'``).
    """
    t0 = time.perf_counter()
    files = _exports(paths)
    validator = _validator()
    questions = quiz_questions()
    core = _Core()
    seen: Dict[str, str] = {}
    learners: List[Learner] = []
    problems: List[Problem] = []
    for path in files:
        name = str(path)
        try:
            data, record = _load(path)
            digest = hashlib.sha256(data).hexdigest()
            if digest in seen:
                raise _Refused(f"duplicate: the same file as {seen[digest]}")
            version = _version(record)
            error = _schema_error(validator, record)
            if error:
                raise _Refused(error)
        except _Refused as e:
            problems.append(Problem(name, str(e)))
            continue
        seen[digest] = name
        learners.append(_learner(name, record, version, core, questions))
    kept = _latest_per_learner(learners, problems)
    _flag_copies(kept)
    kept.sort(key=Learner.sort_key)
    return ClassReport(kept, problems, time.perf_counter() - t0, core.readouts_computed, questions)


def _latest_per_learner(learners: List[Learner], problems: List[Problem]) -> List[Learner]:
    """One row per learner (the same ID, else the same name, case aside): the latest export
    counts, earlier ones are set aside."""
    def key(x: Learner) -> str:
        return f"id:{x.learner_id.casefold()}" if x.learner_id else (x.name or "").strip().casefold()

    latest: Dict[str, Learner] = {}
    for x in learners:
        if key(x) and (key(x) not in latest or _when(x) >= _when(latest[key(x)])):
            latest[key(x)] = x
    kept = []
    for x in learners:
        if key(x) and latest[key(x)] is not x:
            problems.append(Problem(x.file, f"duplicate: an earlier export of the same learner as "
                                            f"{latest[key(x)].file}"))
        else:
            kept.append(x)
    return kept


def _same_fingerprint(learners: List[Learner]) -> List[List[Learner]]:
    """The groups of two or more learners with one fingerprint (possible copies)."""
    groups: Dict[str, List[Learner]] = {}
    for x in learners:
        if x.fingerprint is not None:
            groups.setdefault(x.fingerprint, []).append(x)
    return [g for g in groups.values() if len(g) > 1]


def _flag_copies(learners: List[Learner]) -> None:
    for g in _same_fingerprint(learners):
        for x in g:
            x.same_as = [y.file for y in g if y is not x]


def _when(x: Learner) -> datetime.datetime:
    utc = datetime.timezone.utc
    try:
        t = datetime.datetime.fromisoformat(x.exported_at.replace("Z", "+00:00"))
    except ValueError:
        return datetime.datetime.min.replace(tzinfo=utc)
    return t if t.tzinfo is not None else t.replace(tzinfo=utc)


# ---- the HTML page ------------------------------------------------------------------------

_CSS = """
body { font: 16px/1.45 system-ui, sans-serif; color: #1b1f24; background: #fff; margin: 0 auto; max-width: 72rem; padding: 1rem; }
h1 { font-size: 1.5rem; margin: 0 0 0.5rem; } h2 { font-size: 1.2rem; margin: 1.5rem 0 0.5rem; }
.scroll { overflow-x: auto; border: 1px solid #c9ced6; border-radius: 0.3rem; }
.scroll:focus { outline: 3px solid #1d4ed8; outline-offset: 2px; }
table { border-collapse: collapse; width: 100%; font-size: 0.95rem; }
th, td { text-align: left; padding: 0.35rem 0.5rem; border-bottom: 1px solid #e1e4e8; vertical-align: top; }
th { background: #f3f4f6; }
td.name { font-weight: 600; overflow-wrap: anywhere; min-width: 8rem; }
td.file { overflow-wrap: break-word; font-size: 0.85rem; color: #3d4450; }
.s { display: inline-block; padding: 0 0.35rem; border-radius: 0.25rem; }
.s-re-derived { background: #dcf2e3; color: #0b4a22; }
.s-does-not-match-the-core { background: #fde2e1; color: #8a1010; font-weight: 700; }
.s-no-readings { background: #fff3c4; color: #5a4300; }
.s-not-done { background: #eef0f3; color: #3d4450; }
ul.why li, ul.aside li { margin: 0.2rem 0; overflow-wrap: anywhere; }
figure { margin: 0; } figcaption { font-size: 0.9rem; color: #3d4450; }
svg { width: 100%; max-width: 44rem; height: auto; display: block; }
svg text { font: 15px system-ui, sans-serif; fill: #1b1f24; }
.key::before { content: ""; display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.25em; vertical-align: -0.05em; }
.key-re::before { background: #1d4ed8; } .key-mis::before { background: #a11010; } .key-no::before { background: #8a6d00; }
@media (max-width: 40rem) {
  thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table, tbody, tr, td { display: block; }
  tr { border-bottom: 2px solid #c9ced6; padding: 0.3rem 0; }
  td { border: 0; padding: 0.15rem 0.5rem; }
  td[data-label]::before { content: attr(data-label) ": "; display: inline-block; min-width: 7.5rem; color: #3d4450; }
}
.summary { white-space: pre-wrap; font: 0.95rem/1.4 ui-monospace, monospace; background: #f6f8fa; padding: 0.6rem; overflow-wrap: anywhere; }
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


#: A hyphen the browser does not break a line at ("re-derived" stays on one line).
NB_HYPHEN = "\u2011"

_MARK = {RE_DERIVED: "#1d4ed8", MISMATCH: "#a11010", NO_READINGS: "#8a6d00"}


def _plot(report: ClassReport) -> str:
    """An inline SVG: how many learners found the wrong sign at each stiffness (a bar per tenth
    of a decade of k, 1e2..1e8 N/m, split by the item's state), over the core's own wrong-sign
    band at the lab's base step."""
    from .plot import wrong_sign_spans
    from .sweep import sweep

    lo, hi = 2.0, 8.0
    ks = [10 ** (lo + i * 0.1) for i in range(61)]
    base = sweep(Drop(), ks, DT)
    bands = wrong_sign_spans(base.k, base.right_sign)
    w, h, left, right, top, bottom = 480, 230, 16, 16, 24, 52
    base_y = h - bottom

    def x(k: float) -> float:
        return left + (min(max(math.log10(k), lo), hi) - lo) / (hi - lo) * (w - left - right)

    marks = report.wrong_sign_ks()
    columns: Dict[float, Dict[str, int]] = {}
    for k, state in marks:
        col = columns.setdefault(round(math.log10(k), 1), {})
        col[state] = col.get(state, 0) + 1
    tallest = max((sum(c.values()) for c in columns.values()), default=1)
    unit = (base_y - top - 16) / tallest
    found = "; ".join(f"{sum(c.values())} at k = 1e{d:.1f} N/m ("
                      + ", ".join(f"{n} {s}" for s, n in c.items()) + ")" for d, c in sorted(columns.items()))
    parts = [f'<svg viewBox="0 0 {w} {h}" role="img" aria-labelledby="plot-title plot-desc">',
             '<title id="plot-title">Where along k the class found the wrong sign</title>',
             f'<desc id="plot-desc">{_e(found or "No learner recorded where.")}</desc>']
    for a, b in bands:
        parts.append(f'<rect x="{x(a):.1f}" y="{top}" width="{x(b) - x(a):.1f}" height="{base_y - top}" '
                     'fill="#fbe3e1"/>')
    bar = (w - left - right) / 60 * 0.8
    for d, c in sorted(columns.items()):
        cx, y = x(10 ** d), float(base_y)
        for state in (RE_DERIVED, MISMATCH, NO_READINGS):
            n = c.get(state, 0)
            if n:
                parts.append(f'<rect x="{cx - bar / 2:.1f}" y="{y - n * unit:.1f}" width="{bar:.1f}" '
                             f'height="{n * unit:.1f}" fill="{_MARK[state]}"/>')
                y -= n * unit
        parts.append(f'<text x="{cx:.1f}" y="{y - 4:.1f}" text-anchor="middle">{sum(c.values())}</text>')
    parts.append(f'<line x1="{left}" y1="{base_y}" x2="{w - right}" y2="{base_y}" stroke="#1b1f24"/>')
    for d in range(int(lo), int(hi) + 1):
        xd = x(10.0 ** d)
        parts.append(f'<line x1="{xd:.1f}" y1="{base_y}" x2="{xd:.1f}" y2="{base_y + 5}" stroke="#1b1f24"/>')
        parts.append(f'<text x="{xd:.1f}" y="{base_y + 20}" text-anchor="middle">1e{d}</text>')
    parts.append(f'<text x="{w / 2:.0f}" y="{h - 8}" text-anchor="middle">stiffness k, N/m</text>')
    parts.append("</svg>")
    return "".join(parts)


def _html(report: ClassReport) -> str:
    head = ["learner", "ID", "file", *(ITEM_TITLES[i] for i in ITEMS), "items (of 4)",
            f"quiz (of {len(report.questions)})", "passed"]
    rows = []
    for x in report.learners:
        old = f' <span class="s s-no-readings">version {x.version}</span>' if x.version < VERSIONS[-1] else ""
        cells = [f'<td class="name">{_e(x.name or "(no name)")}</td>',
                 f'<td data-label="ID">{_e(x.learner_id)}</td>',
                 f'<td class="file" data-label="file">{_e(Path(x.file).name)}{old}</td>']
        for i in ITEMS:
            s = x.items[i].state
            cells.append(f'<td data-label="{_e(ITEM_TITLES[i])}"><span class="s s-{s.replace(" ", "-")}">{_e(s).replace("-", NB_HYPHEN)}</span></td>')
        cells.append(f'<td data-label="items (of 4)">{x.score}</td>')
        cells.append(f'<td data-label="quiz (of {len(report.questions)})">{x.quiz_right}</td>')
        cells.append(f'<td data-label="passed">{"yes" if x.passed else "no"}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    why = [f"<li><strong>{_e(x.label)}</strong> ({_e(Path(x.file).name)}), {_e(ITEM_TITLES[i])}: {_e(x.items[i].why)}</li>"
           for x in report.learners for i in ITEMS if x.items[i].state in (MISMATCH, NO_READINGS)]
    aside = [f"<li><strong>{_e(Path(p.file).name)}</strong>: {_e(p.reason)}</li>" for p in report.problems]
    copies = ["<li>" + " and ".join(f"<strong>{_e(Path(x.file).name)}</strong> ({_e(x.label)})" for x in g) + "</li>"
              for g in report.copies()]
    unplotted = sum(1 for x in report.learners if x.chosen is None)
    style_hash = hashlib.sha256(_CSS.encode()).digest()
    csp = (f"default-src 'none'; style-src 'sha256-{base64.b64encode(style_hash).decode()}'; script-src 'none'; "
           "img-src 'none'; base-uri 'none'; form-action 'none'")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join([
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Ferromotion lab: class report</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<main>",
        "<h1>Ferromotion lab: class report</h1>",
        f"<p>Made {now} from {len(report.learners) + len(report.problems)} files in {report.seconds:.2f} s. "
        "Every reading a learner's export records was computed again by the ferromotion core at the same "
        "controls and compared at the digits the lab printed: <strong>re-derived</strong> means the core gives "
        "the same numbers; <strong>does not match the core</strong> means it does not (an edited file shows up "
        "here).</p>",
        '<h2 id="summary-title">Summary</h2>',
        f'<p class="summary">{_e(report.summary())}</p>',
        '<h2 id="learners-title">Learners</h2>',
        '<div class="scroll" role="region" aria-labelledby="learners-title" tabindex="0">',
        "<table>",
        "<thead><tr>" + "".join(f'<th scope="col">{_e(c)}</th>' for c in head) + "</tr></thead>",
        "<tbody>" + "".join(rows) + "</tbody>",
        "</table>",
        "</div>",
        '<h2 id="plot-title-h">Where the class found the wrong sign</h2>',
        "<figure>",
        _plot(report),
        "<figcaption>Where each learner first chose a stiffness with the wrong sign on the slider (the opening "
        "view, k = 1e6 N/m, ticks the wrong-sign item but is not a choice), a bar per tenth of a decade, the count "
        'above it: <span class="key key-re">blue</span>: re-derived; '
        '<span class="key key-mis">dark red</span>: does not match the core; '
        '<span class="key key-no">olive</span>: no readings. '
        "The shaded band is where the core's fixed-step sign is wrong at the lab's base step "
        f"(dt = {DT:g} s, default drop). Not plotted: {unplotted} learner{'s' if unplotted != 1 else ''} who chose "
        "no wrong-sign stiffness or whose lab did not record it (exports before version 3).</figcaption>",
        "</figure>",
        '<h2 id="why-title">Items not re-derived, and why</h2>',
        f'<ul class="why">{"".join(why)}</ul>' if why else "<p>None.</p>",
        '<h2 id="copies-title">Possible copies: the same readings and tick times</h2>',
        f'<ul class="aside">{"".join(copies)}</ul>' if copies else "<p>None.</p>",
        '<h2 id="aside-title">Files set aside</h2>',
        f'<ul class="aside">{"".join(aside)}</ul>' if aside else "<p>None.</p>",
        "</main>",
        "</body>",
        "</html>",
        "",
    ])


# ---- the command line ---------------------------------------------------------------------


def add_parser(sub: Any) -> None:
    """Register ``ferromotion class report`` on the CLI's subparsers."""
    group = sub.add_parser("class", help="read a class's lab exports",
                           description="Read a class's lab exports (web/progress.schema.json).")
    inner = group.add_subparsers(dest="class_command", metavar="COMMAND", required=True)
    p = inner.add_parser(
        "report",
        help="re-derive every recorded reading with the core; one row per learner",
        description=(
            "Read each learner's \"Export my progress (JSON)\" file (a directory stands for the *.json files in it), "
            "check it against the export schema, and compute every reading it records again with the core at the "
            "same controls: each checklist item is re-derived, does not match the core (an edited file), has no "
            "readings (an older lab) or is not done. Prints one row per learner and a class summary; files that are "
            "too large, too deep, not JSON, against the schema, from a newer lab or duplicates are listed with why. "
            "Needs jsonschema (pip install 'ferromotion[schema]')."
        ),
    )
    p.add_argument("exports", nargs="+", type=Path, metavar="EXPORT", help="an export file, or a directory of them")
    p.add_argument("--csv", type=Path, default=None, metavar="FILE",
                   help="also write the gradebook: one row per learner (sorted by name) with name, student ID and "
                        "numeric scores; the files set aside go to FILE's stem + -set-aside.csv")
    p.add_argument("--gradebook", choices=GRADEBOOK_FORMATS, default=None,
                   help="the gradebook's columns (with --csv): plain (every detail; the default), canvas or moodle "
                        "(their CSV grade imports: identity and the two scores only; the details go to "
                        "STEM-details.csv)")
    p.add_argument("--html", type=Path, default=None, metavar="FILE",
                   help="also write an HTML page (table, summary, the wrong-sign plot); it runs no script")
    p.set_defaults(func=_cli, subparser=p)


def _cli(args: argparse.Namespace) -> int:
    if args.gradebook is not None and args.csv is None:
        args.subparser.error("--gradebook needs --csv FILE: the file to write it to")  # exits with status 2
    try:
        report = class_report(args.exports)
    except (ImportError, FileNotFoundError) as e:
        print(f"ferromotion class report: error: {e}", file=sys.stderr)
        return 1
    print(report.format_table())
    print(f"\n{report.readouts} readouts computed by the core in {report.seconds:.2f} s.")
    try:
        if args.csv is not None:
            fmt = args.gradebook or "plain"
            paths = report.write_gradebook(args.csv, fmt)
            print(f"Gradebook ({fmt}): " + ", ".join(map(str, paths)))
        if args.html is not None:
            args.html.write_text(report.to_html(), encoding="utf-8")
            print(f"HTML: {args.html}")
    except OSError as e:
        print(f"ferromotion class report: error: cannot write {e.filename}: {e.strerror}", file=sys.stderr)
        return 1
    return 0
