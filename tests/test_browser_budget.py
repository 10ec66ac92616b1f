"""The equal-budget panel under Go further (issue 13, item 4): every route at one
force-evaluation budget for one Jacobian, scored against the flow, and the probe-size trap.

The lab computes the table with its WebAssembly core in a Web Worker, at the workbench's drop
and stiffness, when asked. The independent door is the native Python package
(`fm.equal_budget`: the same core built natively and called through PyO3, not through the
page): every number the panel prints must equal it to the printed digits, except the wall
times, which are measurements of one call and are only checked to be there. A refused budget
must read as the core's own sentence (the same message the native binding raises), never a
dead panel; the panel must stay closed until a prediction is committed, fit a 375 px screen
(its tables scroll inside their own boxes) and be reachable by keyboard.
Fixtures and helpers: tests/labkit.py.
"""

from __future__ import annotations

import math
import re

import ferromotion as fm
import pytest
from labkit import (
    SCREENSHOTS, agrees, assert_stayed_local, axe_violations, commit_prediction, numbers,
    open_lab, slide_to, start_over, status,
)
from playwright.sync_api import Page, expect

RUN_TIMEOUT_MS = 60_000
# A printed wall time: "0.31 ms", "12 ms", "1.2 s", "3.1 µs", or under one clock tick "< 0.10 ms".
WALL = re.compile(r"^(<\s)?\d+(\.\d+)?\s(µs|ms|s)$")


def open_panel(page: Page) -> None:
    page.locator("#budget > summary").click()
    expect(page.locator("#budget-run")).to_be_enabled()


def run(page: Page, budget: str | None = None, *, keyboard: bool = False) -> None:
    """Type a budget (or keep the field's) and run the table, by Enter in the field or by the button."""
    field = page.locator("#budget-evals")
    if budget is not None:
        field.fill(budget)
    if keyboard:
        field.focus()
        page.keyboard.press("Enter")
    else:
        page.locator("#budget-run").click()
    done = "!document.querySelector('#budget-run').disabled && !document.querySelector('#budget-note').textContent.startsWith('Computing')"
    page.wait_for_function(done, timeout=RUN_TIMEOUT_MS)


def cells(page: Page, tbody: str) -> list[list[str]]:
    return page.evaluate(
        "(sel) => [...document.querySelectorAll(sel + ' tr')].map((tr) => [...tr.children].map((c) => c.textContent))",
        tbody,
    )


def printed(text: str, exact: float) -> bool:
    """A printed number (with an explicit + or the page's − sign) equals `exact` to its digits."""
    found = numbers(text)
    return len(found) == 1 and agrees(found[0], exact) and (exact >= 0) == (not text.startswith("−"))


def assert_panel_equals_native(page: Page, k: float, budget: int) -> dict:
    """Every number of the table and the probe table against the native core at (k, budget)."""
    native = fm.equal_budget(fm.Drop(), k=k, budget=budget)
    flow = native["flow_jacobian"][2]
    # The probe table sits in a section of its own: open it, as a reader would.
    for more in page.locator("#budget-result details.more").all():
        if more.get_attribute("open") is None:
            more.locator("> summary").click()
    caption = page.locator("#budget-caption").inner_text()
    assert f"{budget:,}" in caption and f"{k:.1e}".replace("e+0", "e").replace("e+", "e") in caption, caption

    rows = cells(page, "#budget-rows")
    assert len(rows) == len(native["rows"]) + 1, rows
    for shown, want in zip(rows, native["rows"]):
        route, setting, evals, wall, error, dv, sign = shown
        assert (route, setting) == (want["route"], want["setting"])
        if want["gradient_error"] is None:  # no setting within the budget: NaN in the core
            assert (evals, wall, error, dv, sign) == ("—", "—", "—", "—", "no answer"), shown
            continue
        assert int(evals.replace(",", "")) == want["force_evals"], (shown, want)
        assert WALL.match(wall.replace("\u00a0", " ")), f"wall time {wall!r} of {route}"
        assert agrees(numbers(error)[0], want["gradient_error"]), (shown, want)
        assert printed(dv, want["dv_dy0"]), (shown, want)
        # The workbench's three states: a right sign with a gradient error of 1 or more is far off.
        expected = ("WRONG SIGN" if not want["right_sign"] else
                    "RIGHT SIGN, FAR OFF" if want["gradient_error"] >= 1.0 else "RIGHT SIGN")
        assert sign == expected, (shown, want)
    reference = rows[-1]
    assert reference[0] == "flow (the reference)" and printed(reference[5], flow), reference

    # The wrong-sign rows are marked the way the lab marks a wrong sign everywhere (td.wrong).
    marked = page.evaluate("[...document.querySelectorAll('#budget-rows td.wrong')].map((td) => td.parentElement.firstChild.textContent)")
    assert marked == [r["route"] for r in native["rows"] if r["gradient_error"] is not None and not r["right_sign"]]

    trap = cells(page, "#budget-trap-rows")
    assert len(trap) == len(native["probe_trap"])
    for shown, want in zip(trap, native["probe_trap"]):
        assert math.isclose(float(shown[0]), want["probe"], rel_tol=1e-12), shown
        assert printed(shown[1], want["euler_dv_dy0"]) and printed(shown[3], want["rk4_dv_dy0"]), (shown, want)
        assert agrees(numbers(shown[2])[0], want["euler_error"]), (shown, want)
        assert agrees(numbers(shown[4])[0], want["rk4_error"]), (shown, want)

    # The prose states only numbers the tables print (and how many probes there are).
    shown_numbers = set()
    for sel in ("#budget-caption", "#budget-rows", "#budget-trap-rows"):
        shown_numbers |= {n.lstrip("+−-").rstrip(",") for n in numbers(page.locator(sel).inner_text())}
    for sel in ("#budget-summary", "#budget-trap-text"):
        text = page.locator(sel).inner_text()
        for n in (m.lstrip("+−-").rstrip(",") for m in numbers(text)):
            assert n in shown_numbers or n == str(len(trap)), f"{n!r} in {text!r} is not on the tables"
    # The plot has an accessible name and a description, and draws three series.
    svg = page.locator("#budget-plot svg")
    assert svg.get_attribute("role") == "img"
    assert "probe-size trap" in page.evaluate("(id) => document.getElementById(id).textContent", svg.get_attribute("aria-labelledby").split()[0])
    assert page.locator("#budget-plot polyline.series").count() >= 3
    return native


def test_panel_stays_closed_until_a_prediction_is_committed_and_after_a_reset(page: Page, lab: str) -> None:
    open_lab(page, lab)
    page.locator("#budget > summary").click()
    expect(page.locator("#budget-locked")).to_be_visible()
    expect(page.locator("#budget-run")).to_be_disabled()
    expect(page.locator("#budget-evals")).to_be_disabled()
    commit_prediction(page)
    expect(page.locator("#budget-locked")).to_be_hidden()
    expect(page.locator("#budget-run")).to_be_enabled()
    run(page, "8000")
    expect(page.locator("#budget-result")).to_be_visible()
    # Resetting the progress locks the workbench again: the table is covered with it.
    start_over(page)
    expect(page.locator("#budget-result")).to_be_hidden()
    expect(page.locator("#budget-run")).to_be_disabled()
    assert page.console_errors == []


def test_panel_equals_the_native_core_at_the_workbench_k_and_budget(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    open_panel(page)
    updates = page.evaluate("window.ferromotionLab.updates")
    run(page, keyboard=True)  # the default budget, by Enter in the field
    assert page.evaluate("window.ferromotionLab.updates") == updates, "running the table must not move the workbench"
    assert_panel_equals_native(page, 1e6, 32_000)

    # Move the workbench: the table says it is stale until it is run again at the new k.
    slide_to(page, 4.0)
    expect(page.locator("#budget-stale")).to_contain_text("1.0e4")
    page.locator('#budget-presets button[data-budget="8000"]').click()
    page.wait_for_function("document.querySelector('#budget-caption').textContent.includes('8,000')", timeout=RUN_TIMEOUT_MS)
    expect(page.locator("#budget-stale")).to_have_text("")
    assert_panel_equals_native(page, 1e4, 8_000)

    # A budget too small for any adaptive tolerance: those rows say so instead of a number.
    slide_to(page, 8.0)
    run(page, "8")
    native = assert_panel_equals_native(page, 1e8, 8)
    assert any(r["gradient_error"] is None for r in native["rows"])
    # At k = 1e8 and 8,000 evaluations the Euler row's sign agrees by accident (its step is past
    # the stability limit, error ~600): the panel says "far off", as the workbench does.
    run(page, "8000")
    native = assert_panel_equals_native(page, 1e8, 8_000)
    assert any(r["right_sign"] and r["gradient_error"] >= 1.0 for r in native["rows"])
    assert page.console_errors == []
    assert_stayed_local(page, lab)


@pytest.mark.parametrize("typed", ["1001", "0", "", "1000000000"])
def test_a_refused_budget_is_the_cores_sentence_and_the_panel_recovers(page: Page, lab: str, typed: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    open_panel(page)
    run(page, "32000")
    expect(page.locator("#budget-result")).to_be_visible()
    run(page, typed)
    note = page.locator("#budget-note")
    assert note.get_attribute("data-kind") == "error"
    text = note.inner_text()
    assert "force evaluations" in text.lower(), text
    if not typed:  # an empty field is asked for in the learner's words, before the core
        assert "a multiple of 4, at least 8" in text and "NaN" not in text, text
    if typed:  # the native binding refuses the same number in the same words
        with pytest.raises(fm.FerroError) as refused:
            fm.equal_budget(fm.Drop(), k=1e6, budget=int(typed))
        # The field is named above it: the panel shows the core's limit after "No table at N …".
        limit = str(refused.value).split(": ", 1)[1]
        assert limit.lower() in text.lower() and "`budget`" not in text, (text, str(refused.value))
        # A budget past the cap is refused by its range, not by a route's step cap the learner never set.
        assert "max_steps" not in text and "hit the cap" not in text, text
    expect(page.locator("#budget-result")).to_be_hidden()
    # The panel's refusal stays in the panel: the workbench's status line still reads Ready.
    assert status(page)[0] == "ok", status(page)
    # Not a dead panel: a good budget runs again.
    run(page, "8000")
    expect(page.locator("#budget-result")).to_be_visible()
    assert page.locator("#budget-note").get_attribute("data-kind") == ""
    assert page.console_errors == []


def test_panel_fits_375px_is_keyboard_reachable_and_passes_axe(phone: Page, lab: str) -> None:
    open_lab(phone, lab)
    commit_prediction(phone)
    open_panel(phone)
    run(phone)
    phone.wait_for_timeout(200)  # one frame for the plot's resize-driven redraw
    assert phone.evaluate("document.documentElement.scrollWidth") <= 375
    # The tables scroll inside their own boxes, which take the keyboard focus.
    for region in ("#budget-result .table-wrap >> nth=0", "#budget-result .table-wrap >> nth=1"):
        box = phone.locator(region)
        assert box.get_attribute("tabindex") == "0" and box.get_attribute("role") == "region"
    # Tab from the budget field reaches the run button and the presets.
    phone.locator("#budget-evals").focus()
    reached = []
    for _ in range(4):
        phone.keyboard.press("Tab")
        reached.append(phone.evaluate("document.activeElement.id || document.activeElement.dataset.budget"))
    assert reached == ["budget-run", "8000", "32000", "128000"], reached
    svg_width = phone.evaluate("document.querySelector('#budget-plot svg').getBoundingClientRect().width")
    assert 250 < svg_width <= 375
    assert axe_violations(phone) == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    phone.locator("#budget").screenshot(path=str(SCREENSHOTS / "lab-375px-budget.png"))
    assert phone.console_errors == []
