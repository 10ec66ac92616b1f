"""The class report against the real lab in Chromium: a learner's name goes into the export and
its file name, every checklist item records the readings the page printed, the report re-derives
them with the core, and the report's HTML page renders at 1280 and 375 px with 0 axe violations
and a hostile name inert. Fixtures and helpers: tests/labkit.py; exports from the core:
tests/classkit.py.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import json
import time
from pathlib import Path

import jsonschema
import pytest
from support import run_cli
from classkit import ITEMS, CoreBench, build_class, core_export, readings, write
from ferromotion import classreport
from ferromotion.classreport import MISMATCH, NOT_DONE, RE_DERIVED, class_report
from labkit import (
    AXE, SCREENSHOTS, click_and_wait, commit_prediction, dt_button, item_done, new_page, numbers,
    open_lab, press, readout, slide_to,
)
from playwright.sync_api import Page, expect

HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'


def name_and_export(page: Page, name: str | None, folder: Path, learner_id: str | None = None) -> Path:
    for field, text in (("#learner-name", name), ("#learner-id", learner_id)):
        if text is not None:
            box = page.locator(field)
            box.fill(text)
            box.press("Tab")
    with page.expect_download() as info:
        page.locator("#export-progress").click()
    target = folder / info.value.suggested_filename
    info.value.save_as(target)
    return target


def type_exponent(page: Page) -> None:
    box = page.locator("#exponent-answer")
    box.fill(numbers(readout(page, "exponent"))[0])
    box.press("Enter")


@contextlib.contextmanager
def learner(browser, lab: str, prediction: str):
    """A fresh learner (empty storage) on the lab with a committed prediction."""
    pg = new_page(browser, lab)
    try:
        open_lab(pg, lab)
        commit_prediction(pg, prediction)  # the opening k = 1e6 reads WRONG SIGN: item 1
        yield pg
        assert pg.console_errors == []
    finally:
        pg.context.close()


@pytest.fixture(scope="module")
def exports(browser, lab, tmp_path_factory) -> dict[str, Path]:
    """Three learners in the real lab: one passes, one stops after refining at 1e5, one only
    had the opening wrong sign and gave no name."""
    folder = tmp_path_factory.mktemp("browser-class")
    out = {}
    with learner(browser, lab, "flat") as pg:
        click_and_wait(pg, dt_button(10))
        click_and_wait(pg, dt_button(100))
        type_exponent(pg)
        click_and_wait(pg, dt_button(1))
        pg.locator("#tolerance").focus()
        press(pg, "Space")
        assert all(item_done(pg, i) for i in ITEMS)
        out["ada"] = name_and_export(pg, "Ada Lovelace", folder, learner_id=" s1234567 ")
        # The name and the ID stay in this browser across a reload.
        pg.reload()
        pg.wait_for_function("window.ferromotionLab && window.ferromotionLab.ready")
        expect(pg.locator("#learner-name")).to_have_value("Ada Lovelace")
        expect(pg.locator("#learner-id")).to_have_value("s1234567")
    with learner(browser, lab, "grows") as pg:
        slide_to(pg, 5.0)
        click_and_wait(pg, dt_button(10))
        click_and_wait(pg, dt_button(100))
        assert item_done(pg, "refined") and not item_done(pg, "exponent")
        out["emile"] = name_and_export(pg, "  Émile Zoë / 7  ", folder)
    with learner(browser, lab, "falls-fast") as pg:
        out["anon"] = name_and_export(pg, None, folder)
    return out


def test_the_name_goes_into_the_export_and_its_file_name(exports) -> None:
    assert exports["ada"].name == "ferromotion-lab-progress-Ada-Lovelace.json"
    assert exports["emile"].name == "ferromotion-lab-progress-Emile-Zoe-7.json"
    assert exports["anon"].name == "ferromotion-lab-progress.json"
    assert json.loads(exports["emile"].read_text())["learner"] == "Émile Zoë / 7"
    assert json.loads(exports["anon"].read_text())["learner"] is None
    assert json.loads(exports["ada"].read_text())["learner_id"] == "s1234567"
    assert json.loads(exports["anon"].read_text())["learner_id"] is None


def test_the_export_records_the_first_wrong_sign_stiffness_the_learner_chose(exports) -> None:
    # Ada and the anonymous learner ticked item 1 on the opening view (k = 1e6) and never moved
    # the slider; Émile stepped it down by arrow keys from 1e6 towards 1e5, and every key step is a
    # choice: the first, 10^5.9 N/m, where the sign is already wrong, is where Émile looked first.
    for who in ("ada", "anon"):
        record = json.loads(exports[who].read_text())
        assert record["checklist"]["wrongSign"]["done"] and record["wrong_sign_chosen"] is None, who
    chosen = json.loads(exports["emile"].read_text())["wrong_sign_chosen"]
    assert CoreBench().readout(5.9)["fixed"]["errors"]["sign"] == "wrong"
    assert chosen["k"] == fm_k(5.9) and chosen["readings"]["shown"]["fixed.errors.sign"] == "wrong"
    # The report plots Émile's choice only, and re-derives it.
    r = class_report(exports.values())
    assert r.wrong_sign_ks() == [(chosen["k"], RE_DERIVED)]


def fm_k(log10k: float) -> float:
    """k as the lab's slider sets it (the core's pow, through the Python package)."""
    return CoreBench().readout(log10k)["k"]


def test_every_export_follows_the_schema_and_records_what_the_page_printed(exports) -> None:
    schema = classreport.schema()
    core = classreport._Core()
    for path in exports.values():
        record = json.loads(path.read_text())
        assert record["schema"] == "ferromotion-lab-progress/3"
        jsonschema.validate(record, schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
        for item in ITEMS:
            entry = record["checklist"][item]
            if not entry["done"]:
                assert entry == {"done": False}
                continue
            seen = entry["readings"]
            # tests/classkit.py writes, from the Python core, exactly what the page recorded.
            assert readings(item, core.readout(seen["config"])) == seen, (path.name, item)
        chosen = record["wrong_sign_chosen"]
        if chosen is not None:
            assert readings("wrongSign", core.readout(chosen["readings"]["config"])) == chosen["readings"]
    ada = json.loads(exports["ada"].read_text())["checklist"]
    assert ada["wrongSign"]["readings"]["shown"]["fixed.errors.sign"] == "wrong"
    assert ada["tolerance"]["readings"]["shown"]["tolerance.lands"] is True
    assert ada["tolerance"]["readings"]["route"] == "tolerance"


def test_the_report_re_derives_every_reading_of_the_real_lab(exports) -> None:
    r = class_report(exports.values())
    assert r.problems == []
    states = {Path(x.file).name: {i: x.items[i].state for i in ITEMS} for x in r.learners}
    assert states[exports["ada"].name] == dict.fromkeys(ITEMS, RE_DERIVED)
    assert states[exports["emile"].name] == {"wrongSign": RE_DERIVED, "refined": RE_DERIVED,
                                             "exponent": NOT_DONE, "tolerance": NOT_DONE}
    assert states[exports["anon"].name] == {**dict.fromkeys(ITEMS, NOT_DONE), "wrongSign": RE_DERIVED}


@pytest.fixture(scope="module")
def report_page(exports, tmp_path_factory) -> Path:
    """The HTML report of the browser learners plus one hostile name, one edited file and one
    malformed file."""
    folder = tmp_path_factory.mktemp("report")
    core = CoreBench()
    t0 = datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.timezone.utc)
    write(folder / "hostile.json", core_export(core, HOSTILE, {"wrongSign": {"log10k": 4.0}}, t0))
    edited = json.loads(exports["emile"].read_text())
    edited["learner"] = "Edited E"
    edited["checklist"]["refined"]["readings"]["shown"]["refinement.ratio_100"] = "0.0100"
    write(folder / "edited.json", edited)
    (folder / "broken.json").write_text('{"schema": "ferromotion-lab-progress/2",')
    r = class_report([*exports.values(), folder])
    assert [x.items["refined"].state for x in r.learners if x.name == "Edited E"] == [MISMATCH]
    page = folder / "class.html"
    page.write_text(r.to_html(), encoding="utf-8")
    return page


@pytest.mark.parametrize("width", [1280, 375])
def test_the_html_report_renders_inert_and_accessible(browser, report_page: Path, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(report_page.as_uri())
        expect(page.get_by_role("heading", name="Ferromotion lab: class report")).to_be_visible()
        assert page.evaluate("window.pwned") is None and dialogs == [] and errors == []
        assert HOSTILE in page.locator("table").inner_text()  # shown as text
        assert page.locator("table img, table script").count() == 0
        assert page.evaluate("document.documentElement.scrollWidth") <= width, "no sideways scroll of the page"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"class-report-{width}.png"), full_page=True)
    finally:
        context.close()
    # axe needs its script on the page, which the report's policy forbids: a context that bypasses it.
    context = browser.new_context(viewport={"width": width, "height": 900}, bypass_csp=True)
    page = context.new_page()
    try:
        page.goto(report_page.as_uri())
        page.add_script_tag(path=str(AXE))
        found = page.evaluate("async () => (await axe.run(document, { resultTypes: ['violations'] })).violations")
        assert [(v["id"], [n["target"] for n in v["nodes"]]) for v in found] == []
    finally:
        context.close()


def test_the_policy_blocks_a_script_even_if_escaping_failed(browser, report_page: Path, tmp_path: Path) -> None:
    escaped = report_page.read_text()
    broken = tmp_path / "unescaped.html"
    # What an escaping bug would write: the raw name in the page.
    broken.write_text(escaped.replace("&lt;script&gt;window.pwned = 1&lt;/script&gt;", "<script>window.pwned = 1</script>"))
    assert "<script>window.pwned = 1</script>" in broken.read_text()
    context = browser.new_context()
    page = context.new_page()
    blocked: list[str] = []
    page.on("console", lambda m: blocked.append(m.text))
    try:
        page.goto(broken.as_uri())
        page.wait_for_load_state("load")
        assert page.evaluate("window.pwned") is None
        assert any("Content Security Policy" in m for m in blocked), blocked
    finally:
        context.close()


def test_a_class_of_30_with_the_real_labs_exports_takes_under_five_seconds(exports, tmp_path: Path) -> None:
    made = build_class(tmp_path, browser=list(exports.values()))
    out_html = tmp_path / "report" / "class.html"
    out_html.parent.mkdir()
    t0 = time.perf_counter()
    run = run_cli("class", "report", str(tmp_path), "--csv", str(out_html.with_suffix(".csv")), "--html",
                  str(out_html), timeout=120)
    seconds = time.perf_counter() - t0
    print(f"ferromotion class report on {len(made['files'])} files (3 from the real lab): {seconds:.2f} s wall")
    assert run.returncode == 0 and "Traceback" not in run.stderr + run.stdout, run.stderr
    assert seconds < 5.0
    assert "26 learners counted, 5 files set aside" in run.stdout
    rows = {Path(r["file"]).name: r for r in csv.DictReader(out_html.with_suffix(".csv").open(encoding="utf-8"))}
    for path in exports.values():
        record = json.loads(path.read_text())
        row = rows[f"lab-{path.name}"]
        for item in ITEMS:
            assert row[item] == (RE_DERIVED if record["checklist"][item]["done"] else NOT_DONE), (path.name, item)
