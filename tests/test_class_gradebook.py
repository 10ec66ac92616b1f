"""The class report's gradebook, its copy check, where the class chose the wrong sign, and its table.

The class is tests/classkit.py's (31 exports written from the core's own readings, numbers
printed by the lab's format.js). Each expectation below is computed from the exports as
written (who each learner is, what they ticked, what they answered), never from the report.
"""

from __future__ import annotations

import copy
import csv
import datetime
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from support import run_cli
from classkit import ITEMS, T0, CoreBench, build_class, core_export, plan, write
from ferromotion import classreport
from ferromotion.classreport import GRADEBOOK_COLUMNS, RE_DERIVED, class_report, split_name_id

QUIZ = 6  # the lab's questions: directions, exponent, refine, blame, term, cost (web/index.html)


@pytest.fixture(scope="module")
def klass(tmp_path_factory) -> Dict[str, Any]:
    d = tmp_path_factory.mktemp("class")
    return {"dir": d, **build_class(d)}


@pytest.fixture(scope="module")
def report(klass):
    return class_report([klass["dir"]])


def expected_learners(klass) -> List[Dict[str, Any]]:
    """Who each counted honest learner is and what the gradebook owes them, from the records."""
    out = []
    for name, rec in klass["honest"].items():
        who = rec.get("learner") or ""
        sid = rec.get("learner_id") or ""
        if rec["schema"].endswith("/2") and who.endswith(")"):  # "Learner 01 (s1001)": the older field
            who, sid = who[: who.rindex(" (")], who[who.rindex("(") + 1: -1]
        out.append({"file": name, "name": who, "id": sid,
                    "items": sum(1 for i in ITEMS if rec["checklist"][i]["done"]),
                    "quiz": sum(1 for a in rec["quiz"].values() if a["correct"])})
    return out


def read_csv(path: Path) -> List[Dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("fmt", ["plain", "canvas", "moodle"])
def test_the_gradebook_imports_one_row_per_learner_with_name_id_and_numeric_scores(
        klass, report, tmp_path, fmt) -> None:
    run = run_cli("class", "report", str(klass["dir"]), "--csv", str(tmp_path / "grades.csv"), "--gradebook", fmt,
                  timeout=120)
    assert run.returncode == 0, run.stderr
    with (tmp_path / "grades.csv").open(encoding="utf-8", newline="") as f:
        header = next(csv.reader(f))
    assert header == [c.replace("{quiz}", str(QUIZ)) for c in GRADEBOOK_COLUMNS[fmt]]
    rows = read_csv(tmp_path / "grades.csv")
    name_col, id_col, items_col, quiz_col = {
        "plain": ("name", "id", "items_rederived", "quiz_right"),
        "canvas": ("Student", "SIS User ID", "Ferromotion lab checklist (of 4)", f"Ferromotion lab quiz (of {QUIZ})"),
        "moodle": ("Full name", "ID number", "Ferromotion lab checklist (of 4)", f"Ferromotion lab quiz (of {QUIZ})"),
    }[fmt]
    # One row per learner a gradebook can place, none for a file set aside; each named one once.
    want = {(e["name"], e["id"]): e for e in expected_learners(klass) if e["name"] or e["id"]}
    named = [r for r in rows if r[name_col] or r[id_col]]
    got = {(r[name_col], r[id_col]): r for r in named}
    assert len(named) == len(got)
    for key, e in want.items():
        assert int(got[key][items_col]) == e["items"], key
        assert int(got[key][quiz_col]) == e["quiz"], key
    # The rest are the edited, hostile and copied learners, each with a name.
    assert {n for n, _ in set(got) - set(want)} == {"Edited A", "Edited B", "Edited C", "Chen Copycat",
                                                    '<script>window.pwned = 1</script><img src=x onerror='
                                                    '"window.pwned = 2">"Bobby"'}
    unnamed = [r for r in rows if not (r[name_col] or r[id_col])]
    # Learner 07 and the two version 1 files have neither name nor ID: a row in plain only.
    assert len(unnamed) == (3 if fmt == "plain" else 0)
    # Sorted by name (unnamed last), then ID.
    keys = [(not r[name_col], r[name_col].casefold(), r[id_col].casefold()) for r in rows]
    assert keys == sorted(keys)
    aside = read_csv(tmp_path / "grades-set-aside.csv")
    assert {Path(r["file"]).name for r in aside} >= {"truncated.json", "no-refined.json", "future.json",
                                                     "resent-05.json", "deep.json"}
    if fmt != "plain":  # the learner with neither name nor ID goes aside, with why; the details beside
        assert any("no name and no student ID" in r["reason"] for r in aside)
        details = read_csv(tmp_path / "grades-details.csv")
        # Every learner counted: the honest ones, two version 1 files, three edited, the copy, the hostile name.
        assert len(details) == len(expected_learners(klass)) + 2 + 3 + 1 + 1
    else:
        assert all(r[i] in ("re-derived", "does not match the core", "no readings", "not done")
                   for r in rows for i in ITEMS)
        assert {r["items_max"] for r in rows} == {"4"} and {r["quiz_max"] for r in rows} == {str(QUIZ)}


def test_the_gradebook_reads_in_pandas_with_numeric_score_columns(report, tmp_path) -> None:
    pd = pytest.importorskip("pandas")
    report.write_gradebook(tmp_path / "g.csv", "canvas")
    frame = pd.read_csv(tmp_path / "g.csv", dtype={"SIS User ID": str})
    assert pd.api.types.is_integer_dtype(frame[f"Ferromotion lab checklist (of 4)"])
    assert pd.api.types.is_integer_dtype(frame[f"Ferromotion lab quiz (of {QUIZ})"])
    assert frame["Student"].is_unique


def test_an_older_exports_name_and_id_are_split() -> None:
    assert split_name_id("Ada Lovelace (s1234567)") == ("Ada Lovelace", "s1234567")
    assert split_name_id("  Zoë  ( 42 ) ") == ("Zoë", "42")
    assert split_name_id("s1234567") == ("", "s1234567")
    assert split_name_id("Ada Lovelace") == ("Ada Lovelace", "")
    assert split_name_id(None) == ("", "")
    # A version 3 export's own fields are taken as typed, parentheses and all.
    assert split_name_id("Ada (the first)", "s1") == ("Ada (the first)", "s1")


def test_a_copy_with_only_the_name_changed_is_flagged_naming_both_files(report, klass) -> None:
    copycat = next(x for x in report.learners if Path(x.file).name == "copycat.json")
    original = next(x for x in report.learners if Path(x.file).name == "learner-00.json")
    assert copycat.same_as == [original.file] and original.same_as == [copycat.file]
    # Nobody else shares readings and tick times, though many ticked at the same stiffness.
    assert [sorted(Path(x.file).name for x in g) for g in report.copies()] == [["copycat.json", "learner-00.json"]]
    table = report.format_table()
    line = next(s for s in table.splitlines() if "copycat.json" in s and "learner-00.json" in s)
    assert "Chen Copycat" in line and "Learner 00" in line
    assert "copycat.json" in report.to_html() and "Possible copies" in report.to_html()


def test_the_same_item_times_with_other_readings_are_not_a_copy(tmp_path) -> None:
    core = CoreBench()
    a = core_export(core, "A", plan(0, core), T0)
    b = core_export(core, "B", plan(1, core), T0)  # the same tick times, other stiffnesses
    assert [a["checklist"][i].get("at") for i in ITEMS][:1] == [b["checklist"][i].get("at") for i in ITEMS][:1]
    write(tmp_path / "a.json", a)
    write(tmp_path / "b.json", b)
    assert class_report([tmp_path]).copies() == []


def test_the_wrong_sign_plot_reads_the_stiffness_the_learner_chose(report, klass) -> None:
    # Every counted file's own record of where its learner chose the wrong sign (the copies of
    # learner 00 chose what they copied); files without one are left off the plot.
    chosen = [json.loads(Path(x.file).read_text())["wrong_sign_chosen"] for x in report.learners if x.version == 3]
    ks = sorted(k for k, state in report.wrong_sign_ks())
    assert ks == sorted(c["k"] for c in chosen if c is not None)
    assert all(state == RE_DERIVED for _, state in report.wrong_sign_ks())
    assert len(set(ks)) > 3  # the class looked in many places, not one bar at the opening view


def test_a_learner_who_only_opened_the_lab_chose_no_wrong_sign(tmp_path) -> None:
    # Item 1 ticks on the opening view (k = 1e6), which is where the lab starts, not a choice.
    write(tmp_path / "nothing.json", core_export(CoreBench(), "Chen Nothing", {"wrongSign": {"log10k": 6.0}}, T0))
    r = class_report([tmp_path])
    assert r.learners[0].items["wrongSign"].state == RE_DERIVED
    assert r.wrong_sign_ks() == [] and r.learners[0].chosen is None
    r.write_gradebook(tmp_path / "g.csv")
    assert read_csv(tmp_path / "g.csv")[0]["wrong_sign_k"] == ""


def test_a_chosen_stiffness_whose_sign_is_right_does_not_match(tmp_path) -> None:
    rec = core_export(CoreBench(), "Soft", {"wrongSign": {"log10k": 6.0}}, T0, chosen=2.0)
    write(tmp_path / "soft.json", rec)
    x = class_report([tmp_path]).learners[0]
    assert x.chosen is not None and x.chosen.state != RE_DERIVED and x.chosen.k == pytest.approx(100.0)


def test_the_terminal_table_tells_every_file_apart_and_starts_with_the_name(report, tmp_path) -> None:
    table = report.format_table().split("\n\n")[0].splitlines()
    header, rows = table[0], table[1:]
    assert header.split()[:3] == ["learner", "ID", "file"]
    for x in report.learners:  # every file's whole name, on its learner's row only
        assert [r for r in rows if f" {Path(x.file).name}" in r] == [
            r for r in rows if r.startswith(classreport._short(x.name or "(no name)"))
            and f" {Path(x.file).name}" in r], x.file
        assert sum(f" {Path(x.file).name}" in r for r in rows) == 1, x.file
    # A long name is cut with an ellipsis, never silently; the file keeps its whole name.
    long = "Edited Eve (tolerance at 1e4 N/m, the long one)"
    write(tmp_path / "ferromotion-lab-progress-Edited-Eve-tolerance-at-1e4.json",
          core_export(CoreBench(), long, {"wrongSign": {"log10k": 6.0}}, T0, learner_id="s7"))
    row = class_report([tmp_path]).format_table().splitlines()[1]
    assert row.startswith(long[:27] + "…") and "ferromotion-lab-progress-Edited-Eve-tolerance-at-1e4.json" in row


def test_the_html_counts_the_learners_left_off_the_plot(report) -> None:
    page = report.to_html()
    unplotted = sum(1 for x in report.learners if x.chosen is None)
    assert f"Not plotted: {unplotted} learners" in page
