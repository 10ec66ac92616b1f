"""`ferromotion class report` on a class of 30 exports, and the rule it compares printed numbers by.

The class (fixture `klass`): exports written from the core's own readings (tests/classkit.py,
numbers printed by the lab's format.js in Node), among them version 1 files from an older lab,
three edited by hand, three malformed ones, a duplicate and two hostile ones (HTML and script
in the name; 10,000-deep nesting). The exports the real lab downloads in Chromium are read in
tests/test_class_report_browser.py, which also renders the HTML report.
"""

from __future__ import annotations

import csv
import datetime
import doctest
import json
import math
import random
import re
import time
from pathlib import Path

import pytest
from support import run_cli
from classkit import HOSTILE_NAME, ITEMS, ROOT, T0, CoreBench, build_class, plan, core_export, js_format, write
from ferromotion import classreport
from ferromotion.classreport import MISMATCH, NO_READINGS, NOT_DONE, RE_DERIVED, class_report, printed_matches



@pytest.fixture(scope="module")
def klass(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("class")
    return {"dir": d, **build_class(d)}


@pytest.fixture(scope="module")
def report(klass):
    return class_report([klass["dir"]])


def by_file(report, name: str):
    return next(x for x in report.learners if Path(x.file).name == name)


def test_every_honest_reading_is_re_derived_by_the_core(klass, report) -> None:
    for name, rec in klass["honest"].items():
        x = by_file(report, name)
        for item in ITEMS:
            expected = RE_DERIVED if rec["checklist"][item]["done"] else NOT_DONE
            assert x.items[item].state == expected, (name, item, x.items[item].why)
        assert x.passed == rec["passed"]
    assert by_file(report, "learner-07.json").label == "(no name)"


def test_hand_edited_exports_do_not_match_the_core(report) -> None:
    a = by_file(report, "edited-number.json").items["wrongSign"]
    assert a.state == MISMATCH and "fixed.errors.gradient printed \"0.0100\"" in a.why
    b = by_file(report, "edited-k.json").items["wrongSign"]
    assert b.state == MISMATCH and "fixed.errors.sign printed \"wrong\", the core gives \"right\"" in b.why
    c = by_file(report, "edited-claim.json")
    assert c.items["tolerance"].state == MISMATCH and "tolerance.lands printed true, the core gives false" in c.items[
        "tolerance"].why
    assert c.items["wrongSign"].state == RE_DERIVED  # the untouched item still re-derives
    for name in ("edited-number.json", "edited-k.json", "edited-claim.json"):
        assert not by_file(report, name).passed


def test_an_item_whose_readings_are_true_but_do_not_show_its_claim_does_not_match(tmp_path) -> None:
    # Readings honestly taken at k = 1e2, where the core's sign is right, filed as "found the wrong sign".
    write(tmp_path / "soft.json", core_export(CoreBench(), "Soft", {"wrongSign": {"log10k": 2.0}}, T0))
    x = class_report([tmp_path]).learners[0].items["wrongSign"]
    assert x.state == MISMATCH and x.why == 'the core\'s fixed.errors.sign here is "right", not "wrong"'


def test_an_item_ticked_before_the_lab_recorded_readings_has_none_to_re_derive(tmp_path) -> None:
    record = core_export(CoreBench(), "Early", {"wrongSign": {"log10k": 6.0}}, T0)
    record["checklist"]["wrongSign"]["readings"] = None  # what the lab exports for such an item
    write(tmp_path / "early.json", record)
    r = class_report([tmp_path])
    assert r.problems == []
    x = r.learners[0].items["wrongSign"]
    assert (x.state, x.why, x.k) == (NO_READINGS, "ticked before the lab recorded readings", 1e6)


def test_older_exports_are_read_and_flagged_with_nothing_to_re_derive(report) -> None:
    x = by_file(report, "old-0.json")
    assert x.version == 1
    assert {x.items[i].state for i in ITEMS} <= {NO_READINGS, NOT_DONE}
    assert x.items["wrongSign"].state == NO_READINGS and "version 1" in x.items["wrongSign"].why
    assert "older export" in report.summary()


def test_malformed_duplicate_future_and_hostile_files_are_listed_with_name_and_reason(report) -> None:
    reasons = {Path(p.file).name: p.reason for p in report.problems}
    assert set(reasons) == {"truncated.json", "no-refined.json", "future.json", "resent-05.json", "deep.json"}
    assert reasons["truncated.json"].startswith("not valid JSON")
    assert "checklist" in reasons["no-refined.json"] and "'refined' is a required property" in reasons["no-refined.json"]
    assert "newer lab (export version 4)" in reasons["future.json"]
    assert reasons["resent-05.json"].startswith("duplicate") and "learner-05.json" in reasons["resent-05.json"]
    assert "nested deeper than" in reasons["deep.json"]
    assert len(report.learners) == 26


def test_a_deep_file_is_refused_before_it_is_parsed(tmp_path, monkeypatch) -> None:
    deep = "[" * 10_000 + "]" * 10_000
    with pytest.raises(RecursionError):
        json.loads(deep)  # what parsing it first would do
    write(tmp_path / "ok.json", {"schema": "x"})
    (tmp_path / "deep.json").write_text(deep)
    parsed = []
    real = json.loads
    monkeypatch.setattr(json, "loads", lambda text, *a, **kw: parsed.append(text[:3]) or real(text, *a, **kw))
    r = class_report([tmp_path])
    assert [Path(p.file).name for p in r.problems] == ["deep.json", "ok.json"]
    assert "[[[" not in parsed and '{\n ' in parsed, "only the shallow file reached the parser"


def test_a_huge_file_is_refused_by_its_size_unread(tmp_path, monkeypatch) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as f:
        f.truncate(50 * 1024 * 1024)  # 50 MB (sparse: nothing written)
    opened = []
    real_open = Path.open
    monkeypatch.setattr(Path, "open", lambda self, *a, **kw: opened.append(self.name) or real_open(self, *a, **kw))
    r = class_report([huge])
    assert [p.reason for p in r.problems] == ["too large: 52,428,800 bytes (an export is a few kB; the limit is 1,000,000)"]
    assert "huge.json" not in opened


def test_repeated_keys_and_nan_are_refused_as_not_valid(tmp_path) -> None:
    (tmp_path / "twice.json").write_text('{"schema": "ferromotion-lab-progress/2", "schema": "x"}')
    (tmp_path / "nan.json").write_text('{"schema": "ferromotion-lab-progress/2", "passed": NaN}')
    reasons = {Path(p.file).name: p.reason for p in class_report([tmp_path]).problems}
    assert "appears twice" in reasons["twice.json"]
    assert "NaN is not a JSON number" in reasons["nan.json"]


def test_a_later_export_of_the_same_name_replaces_the_earlier(tmp_path) -> None:
    core = CoreBench()
    early = core_export(core, "Ada", {"wrongSign": {"log10k": 6.0}}, T0)
    late = core_export(core, " ada ", plan(0, core), T0 + datetime.timedelta(days=1))
    write(tmp_path / "a1.json", early)
    write(tmp_path / "a2.json", late)
    r = class_report([tmp_path])
    assert [Path(x.file).name for x in r.learners] == ["a2.json"]
    assert r.problems[0].file.endswith("a1.json") and "earlier export of the same learner" in r.problems[0].reason


def test_the_html_report_is_inert_and_escapes_every_name(report) -> None:
    page = report.to_html()
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page).group(1)
    assert "script-src 'none'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert html_escaped(HOSTILE_NAME) in page
    assert "<svg" in page and "Where along k the class found the wrong sign" in page


def html_escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def test_the_cli_reports_the_class_in_under_five_seconds_with_csv_and_html(klass, tmp_path) -> None:
    out_csv, out_html = tmp_path / "class.csv", tmp_path / "class.html"
    t0 = time.perf_counter()
    run = run_cli("class", "report", *map(str, klass["files"]), "--csv", str(out_csv), "--html", str(out_html),
                  timeout=120)
    seconds = time.perf_counter() - t0
    print(f"ferromotion class report on {len(klass['files'])} files: {seconds:.2f} s wall, whole process")
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    assert seconds < 5.0
    assert "26 learners counted, 5 files set aside" in run.stdout
    rows = list(csv.DictReader(out_csv.open(encoding="utf-8")))
    assert len(rows) == 26  # one per learner; the five set aside are in their own file
    assert {r["wrongSign"] for r in rows} == {RE_DERIVED, MISMATCH, NO_READINGS}
    aside = list(csv.DictReader((tmp_path / "class-set-aside.csv").open(encoding="utf-8")))
    assert len(aside) == 5 and all(r["file"] and r["reason"] for r in aside)
    assert out_html.read_text().startswith("<!doctype html>")


def test_csv_cells_from_a_file_cannot_start_a_formula(tmp_path) -> None:
    core = CoreBench()
    write(tmp_path / "f.json", core_export(core, "=HYPERLINK(\"http://x\")", {"wrongSign": {"log10k": 6.0}}, T0))
    r = class_report([tmp_path])
    r.write_csv(tmp_path / "out.csv")
    row = next(csv.DictReader((tmp_path / "out.csv").open(encoding="utf-8")))
    assert row["name"] == "'=HYPERLINK(\"http://x\")"


def test_a_missing_path_or_an_empty_folder_exits_non_zero_with_a_sentence(tmp_path) -> None:
    write(tmp_path / "one.json", core_export(CoreBench(), "One", {"wrongSign": {"log10k": 6.0}}, T0))
    run = run_cli("class", "report", str(tmp_path), str(tmp_path / "nope.json"), timeout=60)
    assert run.returncode == 1 and run.stdout == "" and "Traceback" not in run.stderr
    assert f"{tmp_path / 'nope.json'} does not exist" in run.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("not an export")
    run = run_cli("class", "report", str(empty), timeout=60)
    assert run.returncode == 1 and run.stdout == "" and f"the folder {empty} holds no .json files" in run.stderr
    run = run_cli("class", "report", timeout=60)
    assert run.returncode == 2 and "EXPORT" in run.stderr
    run = run_cli("class", "report", str(tmp_path), "--gradebook", "canvas", timeout=60)
    assert run.returncode == 2 and "--gradebook needs --csv" in run.stderr


# ---- the comparison rule against JavaScript's own printing --------------------------------


def test_printed_matches_agrees_with_javascripts_rounding_on_both_sides_of_each_tie() -> None:
    rng = random.Random(25)
    values = [rng.choice([-1, 1]) * 10 ** rng.uniform(-6, 9) for _ in range(300)]
    # Exact binary ties, where half-even and half-away-from-zero part ways.
    values += [0.125, 2.5, -2.5, 1600.5, 0.0625, 123.45, 0.5]
    forms = [("num",), ("precision", 3), ("precision", 1), ("exp", 2), ("fixed", 3), ("fixed", 2)]
    printed = js_format([(f[0], x, *f[1:]) for x in values for f in forms])
    assert js_format([("num", 1600.5), ("fixed", 0.125, 2), ("precision", 2.5, 1)]) == ["1,601", "0.13", "3"]
    n = len(forms)
    for i, x in enumerate(values):
        for text in printed[n * i: n * i + n]:
            assert printed_matches(text, x), (text, x)
            # The neighbouring printed value (one unit in the last digit) does not match.
            assert not printed_matches(bump(text), x), (bump(text), x)


def bump(text: str) -> str:
    """The printed number with its last digit moved by one."""
    m = re.fullmatch(r"([−-]?[\d,]*\d)(\.\d+)?(e[+-]?\d+)?", text)
    assert m, text
    digits = (m.group(1) + (m.group(2) or "")).replace("−", "-").replace(",", "")
    unit = 10.0 ** -len((m.group(2) or ".")[1:])
    value = float(digits) + unit if not digits.startswith("-") else float(digits) - unit
    fmt = f"{{:.{len((m.group(2) or '.')[1:])}f}}"
    return fmt.format(value) + (m.group(3) or "")


def test_printed_matches_reads_the_labs_special_texts() -> None:
    assert printed_matches("not a number", math.nan) and printed_matches("∞", math.inf)
    assert printed_matches("−∞", -math.inf) and not printed_matches("∞", -math.inf)
    assert printed_matches("n/a", None) and not printed_matches("0", None)
    assert not printed_matches("0.1O3", 0.103) and not printed_matches(0.103, 0.103)
    assert not printed_matches("true", True)


def test_the_schema_takes_every_version_and_the_lab_version_is_the_newest() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = classreport.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"] == f"{classreport.SCHEMA_NAME}/{classreport.VERSIONS[-1]}"
    lab = (ROOT / "web" / "js" / "progress.js").read_text()
    assert f'"{schema["$id"]}"' in lab
    # The quiz is scored out of the lab's questions: the schema names exactly the page's.
    page = (ROOT / "web" / "index.html").read_text()
    assert set(classreport.quiz_questions()) == set(re.findall(r'class="quiz-q" data-q="([^"]+)"', page))


def test_the_modules_examples_run() -> None:
    result = doctest.testmod(classreport, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 4
