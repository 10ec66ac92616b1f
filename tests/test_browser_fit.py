"""The "Fit a bounce" panel under Go further: the lab's WebAssembly core fits a bouncing ball's
height and damping ratio to noisy measurements with the fixed-step gradient and with the right
one, in the panel's own worker. Facts checked independently of the page: the right gradient's
95% intervals contain the truth the data were made from (h0 = 1 m, zeta = 0.1606), and the
fixed-step fit is flagged as a misfit (its chi2 above the printed limit). The panel must be
reachable by keyboard, fit a 375 px screen and pass axe. Fixtures: tests/conftest.py; helpers: tests/labkit.py."""

from __future__ import annotations

import re

from labkit import SCREENSHOTS, axe_violations, numbers, open_lab, value
from playwright.sync_api import Page, expect

RUN_TIMEOUT_MS = 60_000


def fit_by_keyboard(page: Page) -> list[list[str]]:
    summary = page.locator("#fit-panel > summary")
    summary.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#fit-run")).to_be_visible()
    page.locator("#fit-run").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#fit-result")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    return page.evaluate(
        "() => [...document.querySelectorAll('#fit-rows tr')].map((tr) => [...tr.children].map((c) => c.textContent))")


def test_right_gradient_recovers_the_truth_and_the_fixed_step_fit_is_a_misfit(page: Page, lab: str) -> None:
    open_lab(page, lab)
    rows = fit_by_keyboard(page)
    assert [r[0] for r in rows] == ["fixed-step gradient (autodiff tangent)", "right gradient (the flow's)"]
    fixed, right = rows
    for text, truth in ((right[1], 1.0), (right[2], 0.1606)):
        est, lo, hi = (value(x) for x in numbers(text))
        assert lo <= truth <= hi, text
    # The result column: "misfit (…): χ² 8.91e5 > 207" or "fits the data: χ² 21.3 ≤ 207".
    chi2, limit = (value(x) for x in numbers(fixed[3].split(":")[-1]))
    assert chi2 > limit and fixed[3].startswith("misfit") and "converged" not in fixed[3].split(":")[0].replace(
        "converged to a wrong minimum", ""), fixed[3]
    chi2, limit = (value(x) for x in numbers(right[3].split(":")[-1]))
    assert chi2 <= limit and "misfit" not in right[3]
    # No number printed with JavaScript's "e+" or a 16-digit float.
    for row in rows:
        for text in row[1:4]:
            assert "e+" not in text and not re.search(r"\d{9,}", text.replace(",", "")), text
    assert "recovers the truth" in page.locator("#fit-summary").text_content()
    # At 1280 px the five columns fit their box: no sideways scroll (the phone keeps its scroll cue).
    box = page.evaluate("(() => { const w = document.querySelector('#fit-panel .table-wrap');"
                        " return [w.scrollWidth, w.clientWidth]; })()")
    assert box[0] <= box[1] + 1, box
    assert page.console_errors == []
    assert axe_violations(page) == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#fit-panel").screenshot(path=str(SCREENSHOTS / "lab-1280px-fit.png"))


def test_panel_fits_375px_and_passes_axe(phone: Page, lab: str) -> None:
    open_lab(phone, lab)
    fit_by_keyboard(phone)
    assert phone.evaluate("document.documentElement.scrollWidth") <= 375
    assert axe_violations(phone) == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    phone.locator("#fit-panel").screenshot(path=str(SCREENSHOTS / "lab-375px-fit.png"))


def test_a_refused_guess_reads_as_the_cores_sentence_in_the_red_note(page: Page, lab: str) -> None:
    open_lab(page, lab)
    page.locator("#fit-panel > summary").click()
    page.locator("#fit-zeta").fill("1.5")
    page.locator("#fit-run").click()
    note = page.locator("#fit-note")
    expect(note).to_contain_text("No fit from", timeout=RUN_TIMEOUT_MS)
    assert "zeta" in note.text_content() and note.get_attribute("data-kind") == "error"


def test_a_zero_damping_guess_names_zeta_not_the_checkers_x(page: Page, lab: str) -> None:
    open_lab(page, lab)
    page.locator("#fit-panel > summary").click()
    page.locator("#fit-zeta").fill("0")
    page.locator("#fit-run").click()
    note = page.locator("#fit-note")
    expect(note).to_contain_text("No fit from", timeout=RUN_TIMEOUT_MS)
    text = note.text_content()
    assert "`zeta`" in text and "`x`" not in text and "inf" not in text, text


def test_an_empty_height_is_asked_for_in_the_learners_words(page: Page, lab: str) -> None:
    open_lab(page, lab)
    page.locator("#fit-panel > summary").click()
    page.locator("#fit-height").fill("")
    page.locator("#fit-run").click()
    note = page.locator("#fit-note")
    expect(note).to_contain_text("Type a guess of the drop height")
    assert "`height`" not in note.text_content() and note.get_attribute("data-kind") == "error"
    assert axe_violations(page) == []


def test_a_guess_that_lands_after_the_horizon_prints_the_impact_time_to_the_microsecond(page: Page, lab: str) -> None:
    # From h0 = 5 m the ball first lands at sqrt(2 h0 / g), after the one-bounce horizon T = 0.8 s.
    import math

    t_impact = math.sqrt(2 * 5.0 / 9.81)
    assert t_impact > 0.8
    open_lab(page, lab)
    page.locator("#fit-panel > summary").click()
    page.locator("#fit-height").fill("5")
    page.locator("#fit-horizon").select_option("0.8")
    page.locator("#fit-run").click()
    note = page.locator("#fit-note")
    expect(note).to_contain_text("No fit from", timeout=RUN_TIMEOUT_MS)
    text = note.text_content()
    assert f"{t_impact:.6f} s" in text and note.get_attribute("data-kind") == "error", text
    assert not re.search(r"\d\.\d{9,}", text), text
