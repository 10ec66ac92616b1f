"""The browser lab in Debian's Chromium: loading, the lock, keyboard operation, URL state,
errors as sentences, layout at 375 px, focus, network locality and screenshots.

Fixtures and helpers: tests/labkit.py. The learner's checklist: test_browser_checklist.py.
Readouts against the core and the panels: test_browser_readouts.py.
"""

from __future__ import annotations

import re

from labkit import (
    SCREENSHOTS, assert_stayed_local, click_and_wait, commit_prediction, dt_button, new_page,
    open_lab, press, readout, settle, slide_to, status, updates,
)
from playwright.sync_api import Page, expect


def untimed(text: str) -> str:
    """A readout with its wall times blanked: they are measured anew on every load."""
    return re.sub(r"(?:<\s)?\d[\d.]*\s(?:µs|ms|s)\b", "<wall>", text)


def test_page_loads_locked_until_a_prediction_is_committed(page: Page, lab: str) -> None:
    open_lab(page, lab)
    kind, text = status(page)
    assert kind == "ok" and text.startswith("Ready"), text
    # Readouts are covered and the controls locked until the learner predicts.
    expect(page.locator("#workbench-output")).to_be_hidden()
    expect(page.locator("#lock-note")).to_be_visible()
    expect(page.locator("#stiffness")).to_be_disabled()
    expect(page.locator("#predict-commit")).to_be_disabled()

    commit_prediction(page, "falls-fast")
    expect(page.locator("#lock-note")).to_be_hidden()
    expect(page.locator("#stiffness")).to_be_enabled()
    expect(page.locator("#predict-committed")).to_contain_text("it falls about tenfold each time")
    # The prediction waits for the measurement: nothing is set beside it before dt ÷ 10 and ÷ 100.
    assert readout(page, "refine-prediction") == ""
    assert readout(page, "refine") == "not measured yet"
    click_and_wait(page, dt_button(10))
    click_and_wait(page, dt_button(100))
    echo = readout(page, "refine-prediction")
    assert echo.startswith("You predicted it falls about tenfold each time") and "Not what you predicted" in echo, echo
    click_and_wait(page, dt_button(1))
    assert page.locator("#k-label").inner_text() == "k = 1.0e6 N/m"
    assert readout(page, "sign") == "WRONG SIGN"
    for name in ("forward", "gradient", "exponent", "refine", "blame-integrator", "blame-contact", "impact-term"):
        assert readout(page, name) not in ("", "…"), name
    assert page.locator("#announce").get_attribute("aria-live") == "polite"
    settle(page)
    assert page.console_errors == []
    # The background worker loaded the same core, and its requests were recorded too.
    assert sum(u.endswith("/pkg/ferromotion_wasm_bg.wasm") for u in page.requests) >= 2
    assert any(u.endswith("/js/worker.js") for u in page.requests)
    assert_stayed_local(page, lab)


def test_every_control_works_from_the_keyboard(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    slider = page.locator("#stiffness")
    start = readout(page, "gradient")

    slider.focus()
    press(page, "ArrowRight")
    expect(page.locator("#k-label")).to_have_text("k = 1.3e6 N/m")
    assert readout(page, "gradient") != start
    assert slider.get_attribute("aria-valuetext") == "k = 1.3e6 N/m, WRONG SIGN"
    press(page, "ArrowLeft")
    assert readout(page, "gradient") == start
    press(page, "End")
    expect(page.locator("#k-label")).to_have_text("k = 1.0e8 N/m")
    press(page, "Home")
    expect(page.locator("#k-label")).to_have_text("k = 1.0e2 N/m")
    assert readout(page, "sign") == "RIGHT SIGN"

    # dt buttons: Tab from the slider reaches the first one; Enter and Space press them.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.divisor") == "1"
    page.keyboard.press("Tab")
    press(page, "Enter")
    expect(page.locator(dt_button(10))).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#dt-label")).to_have_text("dt = 1e-5 s")
    page.keyboard.press("Tab")
    press(page, "Space")
    expect(page.locator("#dt-label")).to_have_text("dt = 1e-6 s")

    # Tolerance switch, rtol and events, corrected switch.
    page.locator("#tolerance").focus()
    press(page, "Space")
    expect(page.locator("#tolerance")).to_be_checked()
    assert "rollouts" in readout(page, "cost-tolerance")
    page.locator("#rtol").focus()
    press(page, "ArrowUp", 2)  # the default 1e-12 -> 1e-11 -> 1e-8
    assert page.locator("#rtol").input_value() == "1e-8"
    assert "rtol = 1e-8" in readout(page, "tolerance-detail")
    page.locator("#events").focus()
    press(page, "Space")
    assert "event location on" in readout(page, "tolerance-detail")
    page.locator("#corrected").focus()
    press(page, "Space")
    assert "Corrected route:" in readout(page, "cost-corrected")
    assert "corrected" in page.locator("#route-rows").inner_text()

    # The go-further panels open from the keyboard too.
    page.locator("#impact > summary").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#impact-hybrid")).to_contain_text("hybrid_jacobian")
    kind, _ = status(page)
    assert kind == "ok"
    settle(page)
    assert page.console_errors == []


def test_url_carries_the_view_and_a_link_reproduces_it(browser, lab: str) -> None:
    first = new_page(browser, lab)
    try:
        open_lab(first, lab)
        commit_prediction(first)
        slide_to(first, 5.3)
        click_and_wait(first, dt_button(10))
        n = updates(first)
        first.locator("#rtol").select_option("1e-8")
        first.wait_for_function(f"window.ferromotionLab.updates > {n}")
        click_and_wait(first, "#tolerance")
        click_and_wait(first, "#events")
        click_and_wait(first, "#corrected")
        first.wait_for_url(re.compile(r"\?k=2e5&dt=1e-5&tol=1e-8&ev=1&jac=richardson&cor=1$"))
        url = first.url
        names = [n.get_attribute("data-r") for n in first.locator("[data-r]").all()]
        shown = {name: untimed(readout(first, name)) for name in names}
        rows = untimed(first.locator("#route-rows").inner_text())
    finally:
        first.context.close()

    second = new_page(browser, lab)
    try:
        second.goto(url)
        second.wait_for_function("window.ferromotionLab && window.ferromotionLab.ready")
        commit_prediction(second)
        assert second.locator("#k-label").inner_text() == "k = 2.0e5 N/m"
        assert second.locator("#rtol").input_value() == "1e-8"
        expect(second.locator("#events")).to_be_checked()
        expect(second.locator("#corrected")).to_be_checked()
        again = {name: untimed(readout(second, name)) for name in names}
        # The prediction echo is the only text that depends on who is looking.
        shown.pop("refine-prediction")
        again.pop("refine-prediction")
        assert again == shown
        assert untimed(second.locator("#route-rows").inner_text()) == rows
        assert second.url == url
    finally:
        second.context.close()


def test_refused_input_is_a_sentence_in_the_status_line(page: Page, lab: str) -> None:
    lead = "This link could not be followed entirely: "
    cases = {
        "?k=abc": "the stiffness k = “abc” is not a number of N/m",
        "?k=-5": "the stiffness k = “-5” N/m must be positive",
        "?dt=3e-5": "the time step dt = “3e-5” s is not one of this workbench's three (1e-4, 1e-5, 1e-6 s)",
        "?tol=-1": "the tolerance rtol = “-1” is outside what the tolerance route can run here (1e-14 to 1e-2), so that route stays off",
    }
    for query, sentence in cases.items():
        open_lab(page, lab, query)
        kind, text = status(page)
        assert kind == "error" and text.startswith(lead + sentence + "."), (query, text)
        # The same sentence at the top of the page, in the first screen a learner sees.
        notice = page.locator("#link-notice")
        expect(notice).to_be_visible()
        assert notice.inner_text() == text
        assert notice.bounding_box()["y"] < 200
        # The workbench stays usable at its previous (default) setting.
        assert page.locator("#k-label").inner_text() == "k = 1.0e6 N/m"
    commit_prediction(page)
    assert readout(page, "sign") == "WRONG SIGN"
    # The next accepted change clears the error.
    page.locator("#stiffness").focus()
    press(page, "ArrowLeft")
    assert status(page)[0] == "ok"
    assert page.console_errors == []


def test_layout_fits_375px_with_visible_focus(phone: Page, lab: str) -> None:
    open_lab(phone, lab)
    commit_prediction(phone)
    for d in ("audit", "blame-panel", "impact", "descent"):
        phone.locator(f"#{d} > summary").click()
    settle(phone)
    assert phone.evaluate("document.documentElement.scrollWidth") <= 375
    phone.locator("#stiffness").focus()
    phone.keyboard.press("Tab")
    assert phone.evaluate("document.activeElement.dataset.divisor") == "1"
    outline = phone.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    width = phone.evaluate("parseFloat(getComputedStyle(document.activeElement).outlineWidth)")
    assert outline not in ("", "none") and width >= 2, (outline, width)
    # The plots draw at the phone's width.
    svg_width = phone.evaluate("document.querySelector('#error-plot svg').getBoundingClientRect().width")
    assert 250 < svg_width <= 375


#: Each stiffness plot's marker label and the frame it must stay inside, in screen pixels.
MARKER_LABELS = """() => ['#error-plot', '#forward-plot'].map((id) => {
  const svg = document.querySelector(`${id} svg`);
  const label = svg.querySelector('.marker-label').getBoundingClientRect();
  const frame = svg.querySelector('rect.frame').getBoundingClientRect();
  return [id, svg.querySelector('.marker-label').textContent, label.left - frame.left, frame.right - label.right];
})"""


def test_marker_labels_stay_inside_the_plots_at_every_k(browser, lab: str) -> None:
    """The k marker's label ("k = 1.0e8 N/m") keeps clear of both sides of each stiffness
    plot's frame at every slider position, on a desktop and on a 375 px phone."""
    for viewport in ({"width": 1280, "height": 900}, {"width": 375, "height": 800}):
        pg = new_page(browser, lab, viewport)
        try:
            open_lab(pg, lab, "?k=1e2&dt=1e-4&tol=1e-12&ev=0&cor=0")
            commit_prediction(pg)
            settle(pg)
            # On a phone the plots draw when they scroll near; then the slider, without scrolling.
            pg.locator("#forward-plot").scroll_into_view_if_needed()
            pg.wait_for_function("document.querySelectorAll('#error-plot .marker-label, #forward-plot .marker-label')"
                                 ".length === 2")
            pg.evaluate("document.getElementById('stiffness').focus({ preventScroll: true })")
            seen = set()
            for step in range(61):
                if step:
                    press(pg, "ArrowRight")
                for plot, text, left, right in pg.evaluate(MARKER_LABELS):
                    seen.add(text)
                    assert left >= 1 and right >= 1, (viewport["width"], plot, text, left, right)
            assert {"k = 1.0e2 N/m", "k = 1.0e8 N/m"} <= seen, seen
            assert pg.console_errors == []
        finally:
            pg.context.close()


def test_screenshots_at_desktop_and_375px(browser, lab: str) -> None:
    """Full-page screenshots with every panel open, for a person to look at."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for name, viewport in (("desktop", {"width": 1280, "height": 900}), ("375px", {"width": 375, "height": 800})):
        pg = new_page(browser, lab, viewport)
        try:
            open_lab(pg, lab, "?k=1e6&dt=1e-4&tol=1e-11&ev=0&cor=1")
            commit_prediction(pg)
            pg.locator("#workbench").screenshot(path=str(SCREENSHOTS / f"lab-{name}-workbench.png"))
            for d in ("audit", "blame-panel", "descent", "impact"):
                pg.locator(f"#{d} > summary").click()
            pg.locator("#descent-run").click()
            expect(pg.locator("#descent-rows tr")).to_have_count(7, timeout=60_000)
            settle(pg)
            pg.wait_for_timeout(200)  # one frame for the resize-driven redraws
            pg.screenshot(path=str(SCREENSHOTS / f"lab-{name}.png"), full_page=True)
            pg.locator("#descent").screenshot(path=str(SCREENSHOTS / f"lab-{name}-descent.png"))
            pg.locator('#speed-presets button[data-speed="0.0005"]').click()
            expect(pg.locator("#impact-hybrid")).to_have_attribute("data-kind", "refused")
            pg.locator("#impact").screenshot(path=str(SCREENSHOTS / f"lab-{name}-grazing.png"))
            assert pg.console_errors == []
            assert_stayed_local(pg, lab)
        finally:
            pg.context.close()
        assert (SCREENSHOTS / f"lab-{name}.png").stat().st_size > 50_000
