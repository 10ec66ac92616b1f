"""Lab exports for the class-report tests (tests/test_class_report*.py), made two honest ways.

- :func:`browser_export`: the real lab in Chromium, driven by keyboard and clicks (tests/labkit.py),
  with the learner's name typed into the export area; the file is the one the page downloads.
- :func:`core_export`: written here from the core's own readings: the Python package's
  :class:`ferromotion.Workbench` (the bench the lab calls through WebAssembly) at the item's
  controls, each value printed by the lab's own ``web/js/format.js`` run in Node. The paths
  recorded per item and the formatter of each are the lab's (``READINGS`` in
  ``web/js/progress.js``); ``test_class_report_browser.py`` checks that a browser export and
  this function record the same text for the same controls.
"""

from __future__ import annotations

import copy
import datetime
import json
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import ferromotion as fm

ROOT = Path(__file__).resolve().parent.parent
FORMAT_JS = ROOT / "web" / "js" / "format.js"
ITEMS = ("wrongSign", "refined", "exponent", "tolerance")

# What the lab records per item: the route, and (readout path, format.js function or None).
READINGS: Dict[str, Tuple[str, List[Tuple[str, Optional[str]]]]] = {
    "wrongSign": ("fixed", [("fixed.errors.sign", None), ("fixed.errors.gradient", "num"), ("fixed.errors.dy", "num"),
                            ("fixed.errors.dv_dy0", "num"), ("fixed.errors.dv_dy0_exact", "num")]),
    "refined": ("fixed", [("refinement.signs.0", None), ("fixed.errors.sign", None), ("refinement.ratio_10", "num"),
                          ("refinement.ratio_100", "num")]),
    "exponent": ("fixed", [("exponent.slope", "slope"), ("exponent.r2", "fixed3")]),
    "tolerance": ("tolerance", [("tolerance.errors.sign", None), ("tolerance.lands", None),
                                ("tolerance.errors.gradient", "num"), ("tolerance.cost.force_evals", "int")]),
}

_NODE = """
import * as f from %s;
const input = JSON.parse(process.argv[1]);  // node -e SCRIPT ARG: ARG is argv[1]
const fmt = { num: f.num, slope: f.slope, int: f.int, fixed3: (x) => x.toFixed(3), exp: (x, d) => f.exp(x, d),
              precision: (x, d) => x.toPrecision(d), fixed: (x, d) => x.toFixed(d) };
console.log(JSON.stringify(input.map(([name, x, d]) => fmt[name](x, d))));
"""


def js_format(calls: Sequence[Tuple[Any, ...]]) -> List[str]:
    """Run format.js in Node: each call is (function name, value[, digits]); returns the printed texts."""
    script = _NODE % json.dumps(FORMAT_JS.as_uri())
    out = subprocess.run(["node", "--input-type=module", "-e", script, json.dumps([list(c) for c in calls])],
                         capture_output=True, text=True, check=True, timeout=60)
    printed: List[str] = json.loads(out.stdout)
    return printed


def _at(r: Any, path: str) -> Any:
    for key in path.split("."):
        r = r[int(key)] if isinstance(r, list) else r[key]
    return r


class CoreBench:
    """Readouts from the Python package, at the controls a learner's page would have."""

    def __init__(self) -> None:
        self.bench = fm.Workbench()

    def readout(self, log10k: float, divisor: int = 1, tolerance: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        b = self.bench
        b.set_log10_k(log10k)  # the slider's route to k (the core's pow), so k is the lab's to the bit
        b.set_dt_divisor(divisor)
        if tolerance:
            b.set_tolerance(True, tolerance["rtol"], tolerance["events"], tolerance["jacobian"])
        else:
            b.set_tolerance(False)
        return b.readout()


class Unprinted:
    """A number waiting for format.js (see :func:`print_numbers`)."""

    def __init__(self, fmt: str, value: float) -> None:
        self.call = (fmt, value)


def print_numbers(records: Sequence[Any]) -> None:
    """Replace every :class:`Unprinted` in the records' readings by format.js's text (one Node run)."""
    holes = [(shown, key) for rec in records
             for entry in [*rec["checklist"].values(), rec.get("wrong_sign_chosen") or {}]
             for shown in [(entry.get("readings") or {}).get("shown", {})]
             for key, v in shown.items() if isinstance(v, Unprinted)]
    texts = js_format([shown[key].call for shown, key in holes]) if holes else []
    for (shown, key), text in zip(holes, texts):
        shown[key] = text


def readings(item: str, r: Dict[str, Any], printed: bool = True) -> Dict[str, Any]:
    """What the lab records for ``item`` from readout ``r`` (numbers printed by format.js; with
    ``printed=False`` left as :class:`Unprinted` for one :func:`print_numbers` over many records)."""
    route, paths = READINGS[item]
    shown: Dict[str, Any] = {}
    for path, fmt in paths:
        v = _at(r, path)
        shown[path] = Unprinted(fmt, v) if fmt and isinstance(v, (int, float)) and not isinstance(v, bool) else v
    if printed:
        print_numbers([{"checklist": {item: {"readings": {"shown": shown}}}}])
    t = r["tolerance"]
    config: Dict[str, Any] = {"drop": r["drop"], "k": r["k"], "base_dt": r["refinement"]["base_dt"],
                              "dt_divisor": r["dt_divisor"], "tolerance": t is not None}
    if t is not None:
        config["tolerance_options"] = {"rtol": t["rtol"], "events": t["events"], "jacobian": t["jacobian_method"]}
    return {"route": route, "k": r["k"], "dt": r["dt"], "config": config, "shown": shown}


def _iso(t: datetime.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def core_export(core: CoreBench, learner: Optional[str], plan: Dict[str, Dict[str, Any]],
                when: datetime.datetime, version: int = 3, printed: bool = True, learner_id: Optional[str] = None,
                chosen: Optional[float] = None, quiz: Optional[Dict[str, bool]] = None) -> Dict[str, Any]:
    """An export as the lab writes it, for a learner who ticked the items in ``plan``:
    item -> {"log10k", "divisor", "tolerance" (rtol, events, jacobian), "typed" (exponent)};
    ``chosen``: log10 of the first wrong-sign stiffness chosen on the slider (version 3);
    ``quiz``: question -> answered right. ``printed=False``: numbers left for one
    :func:`print_numbers` over the whole class."""
    checklist: Dict[str, Any] = {}
    for n, item in enumerate(ITEMS):
        if item not in plan:
            checklist[item] = {"done": False}
            continue
        p = plan[item]
        r = core.readout(p["log10k"], p.get("divisor", 1), p.get("tolerance"))
        e = r["fixed"]["errors"]
        detail: Dict[str, Any] = {
            "wrongSign": lambda: {"k": r["k"], "dt": r["dt"]},
            "refined": lambda: {"k": r["k"], "ratio_10": r["refinement"]["ratio_10"],
                                "ratio_100": r["refinement"]["ratio_100"]},
            "exponent": lambda: {"value": p.get("typed", round(r["exponent"]["slope"], 3)),
                                 "slope": r["exponent"]["slope"], "dt": r["dt"]},
            "tolerance": lambda: {"k": r["k"], "rtol": r["tolerance"]["rtol"], "events": r["tolerance"]["events"],
                                  "gradient": r["tolerance"]["errors"]["gradient"]},
        }[item]()
        assert e is not None
        entry: Dict[str, Any] = {"done": True, "at": _iso(when + datetime.timedelta(minutes=n + 1)), "detail": detail}
        if version >= 2:
            entry["readings"] = readings(item, r, printed=False)
        checklist[item] = entry
    done = [i for i in ITEMS if i in plan]
    chosen_entry = None
    if chosen is not None:
        r = core.readout(chosen)
        chosen_entry = {"at": _iso(when + datetime.timedelta(seconds=30)), "k": r["k"], "dt": r["dt"],
                        "readings": readings("wrongSign", r, printed=False)}
    record: Dict[str, Any] = {
        "schema": f"ferromotion-lab-progress/{version}",
        "exported_at": _iso(when + datetime.timedelta(minutes=10)),
        "learner": learner,
        "lab": {"page": "http://127.0.0.1:8000/index.html", "storage_key": "ferromotion-lab/v1:/",
                "core_version": fm.__version__},
        "prediction": {"choice": "flat", "text": "it stays roughly where it was", "committed_at": _iso(when)},
        "checklist": checklist,
        "passed": len(done) == len(ITEMS),
        "steps": {s: (_iso(when + datetime.timedelta(minutes=2)) if i < len(done) else None)
                  for i, s in enumerate("ABCDEF")},
        "quiz": {q: {"correct": right, "at": _iso(when + datetime.timedelta(minutes=8))}
                 for q, right in (quiz or {}).items()},
    }
    if version >= 3:
        record["learner_id"] = learner_id
        record["wrong_sign_chosen"] = chosen_entry
    if version < 2:
        del record["learner"]
    if printed:
        print_numbers([record])
    return record


def write(path: Path, record: Any) -> Path:
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


# ---- a class of 30 -------------------------------------------------------------------------

T0 = datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.timezone.utc)
TOL = {"rtol": 1e-12, "events": False, "jacobian": "richardson"}
FORWARD = {"rtol": 1e-8, "events": True, "jacobian": "forward"}
HOSTILE_NAME = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">"Bobby"'


def plan(i: int, core: CoreBench) -> Dict[str, Dict[str, Any]]:
    """Learner i's checklist: where along k each found the wrong sign, how far each got."""
    log10k = [3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.4][i % 9]
    assert core.readout(log10k)["fixed"]["errors"]["sign"] == "wrong", log10k
    items: Dict[str, Dict[str, Any]] = {"wrongSign": {"log10k": log10k}}
    if i % 4 != 3:
        items["refined"] = {"log10k": log10k, "divisor": (10, 100)[i % 2]}
    if i % 3 != 2:
        items["exponent"] = {"log10k": log10k, "divisor": (1, 10)[i % 2]}
    if i % 5 not in (3, 4):
        items["tolerance"] = {"log10k": max(log10k, 5.0), "tolerance": (TOL, FORWARD)[i % 2]}
    return items


def honest_export(core: CoreBench, i: int) -> Dict[str, Any]:
    """Learner i's export (numbers left unprinted): version 3 with the student ID in its own field
    when i % 3 == 0; version 2 with "Name (ID)" in the one field when i % 6 == 1; no name at i = 7;
    a chosen wrong-sign stiffness (version 3) unless i % 4 == 1; some quiz answers when i is even."""
    when = T0 + datetime.timedelta(hours=i)
    p = plan(i, core)
    version = 2 if i % 6 == 1 else 3
    name: Optional[str] = None if i == 7 else f"Learner {i:02d}"
    sid = f"s{1000 + i}" if i % 3 in (0, 1) and i != 7 else None
    if version == 2 and name and sid:
        name, sid = f"{name} ({sid})", None
    quiz = {"directions": True, "exponent": i % 4 == 0, "term": True} if i % 2 == 0 else None
    chosen = p["wrongSign"]["log10k"] if version == 3 and i % 4 != 1 else None
    return core_export(core, name, p, when, version=version, printed=False, learner_id=sid, chosen=chosen, quiz=quiz)


def build_class(d: Path, browser: Sequence[Path] = ()) -> Dict[str, Any]:
    """31 exports in folder ``d``: 19 honest version 3 and 2 (the real lab's ``browser`` exports among
    them, the rest from the core; see :func:`honest_export`), 2 honest version 1, 3 edited by hand,
    3 malformed, 1 duplicate, 1 copy of another learner's file with only the name and export time
    changed, and 2 hostile (HTML and script in a name, otherwise honest; a file nested 10,000 deep).
    Returns {"honest": records by file name, "files": the 31 paths}."""
    core = CoreBench()
    honest = {}
    for i in range(19 - len(browser)):
        honest[f"learner-{i:02d}.json"] = honest_export(core, i)
    print_numbers(list(honest.values()))
    for path in browser:
        honest[f"lab-{path.name}"] = json.loads(path.read_text(encoding="utf-8"))
    for name, rec in honest.items():
        write(d / name, rec)
    old = {f"old-{i}.json": core_export(core, None, plan(i, core), T0, version=1) for i in range(2)}
    for name, rec in old.items():
        write(d / name, rec)

    # Edited by hand: a printed number changed; k moved to where the sign is right; a claim flipped.
    a = copy.deepcopy(honest["learner-00.json"])
    a["learner"], a["learner_id"] = "Edited A", None
    a["checklist"]["wrongSign"]["readings"]["shown"]["fixed.errors.gradient"] = "0.0100"
    write(d / "edited-number.json", a)
    b = copy.deepcopy(honest["learner-01.json"])
    b["learner"] = "Edited B"
    rb = b["checklist"]["wrongSign"]["readings"]
    rb["k"] = rb["config"]["k"] = 100.0
    write(d / "edited-k.json", b)
    c = core_export(core, "Edited C", {"wrongSign": {"log10k": 6.0},
                                       "tolerance": {"log10k": 6.0, "tolerance": {**TOL, "rtol": 1e-3}}}, T0)
    assert c["checklist"]["tolerance"]["readings"]["shown"]["tolerance.lands"] is False
    c["checklist"]["tolerance"]["readings"]["shown"]["tolerance.lands"] = True
    write(d / "edited-claim.json", c)

    # Malformed: cut short; against the schema; from a newer lab.
    text = (d / "learner-02.json").read_text()
    (d / "truncated.json").write_text(text[: len(text) // 2])
    bad = copy.deepcopy(honest["learner-03.json"])
    bad["learner"] = "Schema breaker"
    del bad["checklist"]["refined"]
    write(d / "no-refined.json", bad)
    future = copy.deepcopy(honest["learner-04.json"])
    future["schema"] = "ferromotion-lab-progress/4"
    future["learner"] = "From the future"
    write(d / "future.json", future)
    (d / "resent-05.json").write_bytes((d / "learner-05.json").read_bytes())
    # A copy of learner 00's file with only the name and the export time changed.
    cp = copy.deepcopy(honest["learner-00.json"])
    cp["learner"], cp["learner_id"] = "Chen Copycat", "s9999"
    cp["exported_at"] = _iso(T0 + datetime.timedelta(days=1))
    write(d / "copycat.json", cp)

    # Hostile: markup and script in the name; a file nested 10,000 deep.
    h = core_export(core, HOSTILE_NAME, plan(8, core), T0)
    write(d / "hostile-name.json", h)
    (d / "deep.json").write_text('{"schema": "ferromotion-lab-progress/2", "x": ' + "[" * 10_000 + "]" * 10_000 + "}")
    files = sorted(d.glob("*.json"))
    assert len(files) == 31
    return {"honest": honest, "files": files}


