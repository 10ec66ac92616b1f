"""The lab tells one story: its course text, its dead ends, its layout and its accessibility.

Each test here pins a finding of the UX review (issue 12) that the page used to get wrong:
the course text's numbers are read from the core (a scan of the rendered prose against the
live readout cards), the refinement card waits until both dt buttons are pressed, the first
checklist item grades committed values only, bad link parameters are refused in the learner's
words and leave the workbench working, `file://` explains itself, the phone keeps the slider
and the sign on screen together, progress is per copy and exports to a documented JSON, and
axe-core (installed offline by scripts/bootstrap.sh from package-lock.json) finds nothing at
1280 and 375 px. Fixtures and helpers: tests/labkit.py.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import tempfile
import shutil
import threading
from pathlib import Path

import ferromotion as fm
import jsonschema
import pytest
from labkit import (
    PHONE, agrees, axe_violations, WEB, click_and_wait, commit_prediction, dt_button,
    item_done, new_page, numbers, open_lab, press, readout, settle, slide_to, status,
)
from playwright.sync_api import Page, expect

def wait_for_facts(page: Page) -> None:
    page.wait_for_function("document.body.dataset.facts === 'ready'")


def fact(page: Page, name: str) -> str:
    texts = {t.strip() for t in page.locator(f'[data-fact="{name}"]').all_text_contents()}
    assert len(texts) == 1, (name, texts)
    return texts.pop()


# ---- dead ends ---------------------------------------------------------------------------------


@pytest.mark.parametrize("tol", ["1e-20", "1e-16"])
def test_a_link_with_a_tiny_tolerance_is_refused_and_the_workbench_keeps_working(page: Page, lab: str, tol: str) -> None:
    open_lab(page, lab, f"?tol={tol}")
    kind, text = status(page)
    assert kind == "error" and "tolerance" in text and "stays off" in text, text
    commit_prediction(page)
    # Readouts are there, the tolerance controls agree with each other, the slider works.
    assert readout(page, "sign") == "WRONG SIGN"
    assert readout(page, "gradient") not in ("", "…")
    expect(page.locator("#tolerance")).not_to_be_checked()
    assert page.locator("#tolerance-setting").inner_text().startswith("Off · rtol = " + page.locator("#rtol").input_value())
    page.locator("#stiffness").focus()
    press(page, "Home")
    expect(page.locator("#k-label")).to_have_text("k = 1.0e2 N/m")
    assert readout(page, "sign") == "RIGHT SIGN"
    page.locator("#tolerance").focus()
    press(page, "Space")
    assert "rollouts" in readout(page, "cost-tolerance")
    assert page.console_errors == []


def test_refused_link_parameters_speak_the_learners_terms(page: Page, lab: str) -> None:
    cases = {
        "?dt=5e-5": "time step dt",
        "?k=-5": "stiffness k",
        "?k=abc": "stiffness k",
        "?ev=yes": "event location",
        "?cor=2": "corrected route",
        "?tol=1": "tolerance rtol",
        "?k=1e12": "off the slider's scale",
    }
    for query, words in cases.items():
        open_lab(page, lab, query)
        kind, text = status(page)
        assert kind == "error" and words in text, (query, text)
        for internal in ("`", "dt_divisor", "log10_k", "NaN", "Invalid parameter"):
            assert internal not in text, (query, text)
        # Every number in the sentence has a few digits at most.
        assert all(len(re.sub(r"\D", "", n.split("e")[0])) <= 4 for n in numbers(text)), text
    assert page.locator("#k-label").inner_text() == "k = 1.0e8 N/m"  # 1e12 starts at the slider's end
    commit_prediction(page)
    assert readout(page, "gradient") not in ("", "…")
    assert page.console_errors == []


def test_opened_from_file_the_page_says_how_to_serve_it(browser) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # no server at all
    pg = context.new_page()
    try:
        pg.goto((WEB / "index.html").as_uri())
        notice = pg.locator("#file-notice")
        expect(notice).to_be_visible()
        expect(notice).to_contain_text("python3 -m http.server")
        expect(pg.locator("#status")).to_have_attribute("data-kind", "error")
        # "Your next step" (and every locked panel) cannot ask for a commit that no script can take.
        for step in ("#now-step", "#budget-locked", "#quiz-locked", "#lock-note"):
            expect(pg.locator(step)).to_contain_text("web server")
        assert "prediction in step 2" not in pg.locator("body").text_content()
    finally:
        pg.context.close()


def test_messages_print_numbers_to_sensible_digits(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    page.locator("#impact > summary").click()
    page.locator('#speed-presets button[data-speed="0.0005"]').click()
    refusal = page.locator("#impact-hybrid")
    expect(refusal).to_have_attribute("data-kind", "refused")
    for n in numbers(refusal.inner_text()):
        assert len(re.sub(r"\D", "", n.split("e")[0])) <= 4, (n, refusal.inner_text())


# ---- predict, then measure ------------------------------------------------------------------------


def test_the_refinement_card_stays_empty_until_both_dt_buttons_are_pressed(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page, "falls-some")
    for name in ("refine", "refine-detail", "refine-prediction"):
        assert "×" not in readout(page, name), (name, readout(page, name))
    assert "Not what you predicted" not in page.locator("#workbench").inner_text()
    assert "×" not in page.locator('.steps [data-live="D"]').inner_text()
    click_and_wait(page, dt_button(10))
    assert "×" not in readout(page, "refine")
    assert page.locator('[data-hint="dt"]').count() == 0
    click_and_wait(page, dt_button(100))
    ratios = numbers(readout(page, "refine"))
    assert len(ratios) >= 2 and "×" in readout(page, "refine")
    assert readout(page, "refine-prediction").startswith("You predicted it falls somewhat")
    expect(page.locator('[data-hint="dt"]')).to_contain_text("You expected it to fall.")
    # Another stiffness is another measurement: the card empties again.
    page.locator("#stiffness").focus()
    press(page, "ArrowLeft")
    assert "×" not in readout(page, "refine")


def test_the_opening_wrong_sign_counts_and_a_value_passed_mid_drag_does_not(browser, lab: str) -> None:
    pg = new_page(browser, lab)
    try:
        open_lab(pg, lab)
        commit_prediction(pg)
        assert readout(pg, "sign") == "WRONG SIGN"
        assert item_done(pg, "wrongSign")  # k = 1e6 already reads WRONG SIGN
    finally:
        pg.context.close()

    pg = new_page(browser, lab)
    try:
        open_lab(pg, lab, "?k=1e2")  # a link: its view does not count
        commit_prediction(pg)
        assert not item_done(pg, "wrongSign")
        box = pg.locator("#stiffness").bounding_box()
        y = box["y"] + box["height"] / 2
        pg.mouse.move(box["x"] + 4, y)
        pg.mouse.down()
        seen_wrong = False
        for i in range(1, 41):
            pg.mouse.move(box["x"] + 4 + (box["width"] + 12) * i / 40, y)
            seen_wrong = seen_wrong or readout(pg, "sign") == "WRONG SIGN"
            assert not item_done(pg, "wrongSign")  # still dragging: nothing committed
        pg.mouse.up()
        assert seen_wrong, "the drag never crossed a wrong sign"
        assert pg.locator("#k-label").inner_text() == "k = 1.0e8 N/m"
        assert readout(pg, "sign") != "WRONG SIGN"
        assert not item_done(pg, "wrongSign")  # released where the sign is not wrong
        pg.locator("#stiffness").focus()
        press(pg, "ArrowLeft", 20)  # 1e6 by key steps: each one is committed
        assert item_done(pg, "wrongSign")
    finally:
        pg.context.close()


# ---- layout -------------------------------------------------------------------------------------


def in_view(page: Page, selector: str) -> bool:
    return page.evaluate(
        """(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
                      return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; }""",
        selector,
    )


def overlap(page: Page, a: str, b: str) -> bool:
    return page.evaluate(
        """([a, b]) => { const r = document.querySelector(a).getBoundingClientRect();
                         const s = document.querySelector(b).getBoundingClientRect();
                         return r.top < s.bottom && s.top < r.bottom; }""",
        [a, b],
    )


def test_on_a_phone_the_strip_keeps_k_and_sign_beside_the_slider(phone: Page, lab: str) -> None:
    open_lab(phone, lab)
    commit_prediction(phone)
    slider = phone.locator("#stiffness")
    slider.focus()
    slider.scroll_into_view_if_needed()
    for key in ("Home", "End"):
        press(phone, key)
        assert in_view(phone, "#stiffness") and in_view(phone, "#strip"), key
        assert not overlap(phone, "#stiffness", "#strip"), key
        strip = phone.locator("#strip").inner_text()
        assert phone.locator("#k-label").inner_text() in strip and readout(phone, "sign") in strip, strip
    slide_to(phone, 6.0)
    assert in_view(phone, "#stiffness") and in_view(phone, "#strip")
    strip = phone.locator("#strip").inner_text()
    assert "WRONG SIGN" in strip and readout(phone, "gradient") in strip, strip
    # The routes table fits or scrolls inside a focusable region.
    wrap = phone.locator("#h-routes ~ .table-wrap")
    assert wrap.get_attribute("tabindex") == "0" and wrap.get_attribute("role") == "region"
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    # Its cells break between words, never inside a number: no cell is taller than three lines (about 80 px).
    click_and_wait(phone, "#tolerance")
    tallest = phone.evaluate("Math.max(...[...document.querySelectorAll('#route-rows td')].map(c => c.getBoundingClientRect().height))")
    assert tallest < 80, tallest


def test_on_a_desktop_the_next_step_and_the_checklist_sit_beside_the_controls(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    controls = page.locator(".controls").bounding_box()
    for selector in ("#now-step", "#checklist"):
        box = page.locator(selector).bounding_box()
        assert box["x"] > controls["x"] + controls["width"], selector
        assert box["y"] < controls["y"] + controls["height"], selector
    # After committing, the slider, the next step and the checklist are on screen together.
    page.locator("#stiffness").scroll_into_view_if_needed()
    for selector in ("#stiffness", "#now-step", "#checklist"):
        assert in_view(page, selector), selector
    expect(page.locator("#now-step")).to_contain_text("soft end")


# ---- Go further on a phone ------------------------------------------------------------------------

GO_FURTHER = ("audit", "blame-panel", "budget", "descent", "fit-panel", "quadruped", "python", "impact", "contacts")


def open_panel_and_run(pg: Page, panel: str) -> None:
    """Open one Go-further panel and run what it runs, waiting for its result."""
    pg.locator(f"#{panel} > summary").click()
    if panel == "budget":
        pg.locator("#budget-run").click()
        expect(pg.locator("#budget-result")).to_be_visible(timeout=60_000)
    elif panel == "descent":
        pg.locator("#descent-run").click()
        expect(pg.locator("#descent-rows tr")).to_have_count(7, timeout=60_000)
    elif panel == "quadruped":
        expect(pg.locator("#quad-result")).to_be_visible(timeout=120_000)
    elif panel == "contacts":
        expect(pg.locator("#contacts-result")).to_be_visible(timeout=60_000)
    settle(pg)


def open_every_panel(pg: Page) -> None:
    """Every panel of the page open and run, with every section inside them expanded."""
    pg.locator("#if-fails > summary").click()
    for panel in GO_FURTHER:
        open_panel_and_run(pg, panel)
    for more in pg.locator("details.more").all():
        if more.get_attribute("open") is None:
            more.locator("> summary").click()
    settle(pg)


def test_on_a_phone_every_plot_axis_label_fits_inside_its_plot(phone: Page, lab: str) -> None:
    open_lab(phone, lab)
    commit_prediction(phone)
    checked = 0
    for host in ("#error-plot", "#forward-plot"):
        phone.locator(host).scroll_into_view_if_needed()
        phone.wait_for_function(f"document.querySelector('{host} svg text.axis-label') !== null")
        phone.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        for box in phone.evaluate(f"""[...document.querySelectorAll('{host} svg text.axis-label')].map(t => {{
            const s = t.ownerSVGElement.getBoundingClientRect(), r = t.getBoundingClientRect();
            return [t.textContent, r.left - s.left, s.right - r.right, r.top - s.top, s.bottom - r.bottom];
        }})"""):
            label, *margins = box
            assert label and min(margins) >= -0.5, (host, box)
            checked += 1
    assert checked >= 4


def test_the_blame_cards_numbers_never_break_inside_a_value(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    slide_to(page, 8.0)  # the widest values: 1.03e-3, 6.83e-11
    lines = page.evaluate("""[...document.querySelectorAll('#readouts .pairs dd')].map(d => {
        const r = document.createRange();
        r.selectNodeContents(d);
        return [d.textContent, new Set([...r.getClientRects()].map(x => Math.round(x.top))).size];
    })""")
    assert len(lines) >= 4 and any("e-" in text for text, _ in lines), lines
    for text, n in lines:
        assert n == 1, (text, n)


def test_the_python_editor_indents_with_tab_once_typed_and_escape_tab_moves_on(page: Page, lab: str) -> None:
    open_lab(page, lab)
    page.locator("#python > summary").click()
    editor = page.locator("#py-code")
    hint = page.locator("#" + (editor.get_attribute("aria-describedby") or "missing"))
    expect(hint).to_contain_text("Tab indents")
    expect(hint).to_contain_text("Escape")
    # Arriving by keyboard, Tab moves on at once: the editor is never a trap.
    editor.focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") != "py-code"
    # After typing, Tab indents (four spaces, focus stays) ...
    editor.fill("")
    editor.focus()
    page.keyboard.type("def f():")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    page.keyboard.type("return 1")
    assert editor.input_value() == "def f():\n    return 1"
    assert page.evaluate("document.activeElement.id") == "py-code"
    # ... and Escape, then Tab, leaves; Shift+Tab always leaves backwards.
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") != "py-code"
    editor.focus()
    page.keyboard.type("x")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.id") != "py-code"


def test_go_further_panels_open_on_a_phone_as_short_summaries(browser, lab: str) -> None:
    # At 375 x 740 each panel, opened and run, is at most two screens tall until its sections
    # are expanded; every section opens from its own summary.
    screen = {"width": 375, "height": 740}
    pg = new_page(browser, lab, screen)
    try:
        open_lab(pg, lab)
        commit_prediction(pg)
        for panel in GO_FURTHER:
            open_panel_and_run(pg, panel)
            height = pg.locator(f"#{panel}").bounding_box()["height"]
            assert height <= 2 * screen["height"], (panel, height)
            sections = pg.locator(f"#{panel} details.more")
            if panel not in ("audit", "fit-panel"):  # short enough without sections
                assert sections.count() >= 1, panel
            for more in sections.all():
                more.locator("> summary").click()
                assert more.get_attribute("open") is not None
            pg.locator(f"#{panel} > summary").click()  # closed again: the next one starts in view
        assert pg.evaluate("document.documentElement.scrollWidth") <= screen["width"]
        assert pg.console_errors == []
    finally:
        pg.context.close()


# ---- accessibility --------------------------------------------------------------------------------


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 900}, PHONE], ids=["1280", "375"])
def test_axe_finds_no_violations_locked_and_open(browser, lab: str, viewport: dict) -> None:
    pg = new_page(browser, lab, viewport)
    try:
        open_lab(pg, lab)
        assert axe_violations(pg) == []
        commit_prediction(pg)
        click_and_wait(pg, "#tolerance")
        click_and_wait(pg, "#corrected")
        open_every_panel(pg)
        assert axe_violations(pg) == []
        assert pg.evaluate("[...document.querySelectorAll('[id]')].length === new Set([...document.querySelectorAll('[id]')].map(n => n.id)).size")
    finally:
        pg.context.close()


# ---- the course text --------------------------------------------------------------------------------

# Numbers the prose may state without reading them from the core: settings of the workbench
# and the drop (its controls' values, the drop's 1 m, 1 kg and 0.8 s, the 0.1 stability
# threshold the hints use, the 1e-2 landing threshold), the law's one half, small counts and
# step numbers. A measured number (an error, a ratio, an exponent, a cost) must come from a
# [data-fact] span or a readout, never from the page's source.
SETTINGS = {0.1, 0.5, 0.8, 1.0, 2.0, 5.0, 4.0, 10.0, 100.0, 41.0}
SETTINGS |= {float(n) for n in range(0, 11)}
SETTINGS |= {10.0**e for e in range(-14, 9)}
# The fit panel's settings: the drop's default damping ratio (read from the core), the
# sampling interval (20 ms), the intervals' level (95%) and the three-bounce horizon (1.5 s).
SETTINGS |= {round(fm.Drop().zeta, 4), 20.0, 95.0, 1.5}
# The two-contacts panel's settings: its angle slider's range (81° to 114°) and right angle (90°).
SETTINGS |= {81.0, 114.0, 90.0}

PROSE = ["#challenge", "#predict", ".now", "#practice", "#handout", "#quiz", "#further", "header", "#readouts"]


def prose_numbers(page: Page) -> list[str]:
    """Every number in the page's static prose: text outside the readouts ([data-r]), the live
    lines, the facts, the plots and the tables, with 10<sup>n</sup> read as 10^n."""
    return page.evaluate(
        """(roots) => {
          const out = [];
          for (const sel of roots) for (const root of document.querySelectorAll(sel)) {
            const c = root.cloneNode(true);
            c.querySelectorAll('[data-r], [data-fact], .live, #now-live, #hints, svg, table, .plot-host, .plot-note, '
              + '#audit-fit, #audit-note, #blame-text, #descent-note, #descent-result, #quad-result, #quad-setup, '
              + '#quad-note, #impact-term, #impact-hybrid, output, #speed-presets, #quiz-score, .feedback, '
              + '#predict-committed, #error-plot-sub, .step-state, #version, #budget-presets, #budget-note, '
              + '#budget-stale, #budget-result, #contacts-presets, #contacts-note, #contacts-result').forEach((n) => n.remove());
            c.querySelectorAll('sup').forEach((n) => { n.textContent = '^' + n.textContent; });
            c.querySelectorAll('sub').forEach((n) => { n.textContent = '_' + n.textContent; });
            out.push(c.textContent);
          }
          return out.join('\\n');
        }""",
        PROSE,
    ).replace("−", "-")


def allowed(token: str) -> bool:
    m = re.fullmatch(r"10\^(-?\d+)", token)
    if m:
        return 10.0 ** int(m.group(1)) in SETTINGS
    try:
        x = float(token.replace(",", ""))
    except ValueError:
        return False
    return any(abs(x - s) <= 1e-12 * max(1.0, abs(s)) for s in SETTINGS)


def test_the_prose_quotes_no_number_the_core_did_not_just_compute(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    wait_for_facts(page)
    text = prose_numbers(page)
    tokens = re.findall(r"10\^-?\d+|(?<![\w_^.])\d[\d,]*(?:\.\d+)?(?:e-?\d+)?(?![\d/])", text)
    bad = sorted({t for t in tokens if not allowed(t)})
    assert bad == [], f"hard-coded numbers in the prose: {bad}"
    # Every fact is filled in.
    assert page.locator("[data-fact]").count() > 20
    assert all(t.strip() not in ("", "…") for t in page.locator("[data-fact]").all_text_contents())


def core(log10k: float, divisor: int = 1, rtol: float | None = None) -> dict:
    """The native core's readout at a setting (the Python package: a second build of the core)."""
    bench = fm.Workbench(fm.Drop(), dt=1e-4, dt_divisor=divisor, tolerance=rtol, events=False)
    bench.set_log10_k(log10k)
    return bench.readout()


def test_the_lessons_numbers_equal_the_core_and_the_live_cards(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    wait_for_facts(page)

    def same(name: str, exact: float) -> None:
        printed = numbers(fact(page, name))
        assert len(printed) == 1 and agrees(printed[0], exact), (name, fact(page, name), exact)

    rtol = float(page.locator("#rtol").input_value())  # the page's default: the core's
    soft, stiff, top = core(2.0, rtol=rtol), core(6.0, rtol=rtol), core(8.0)
    s, x, t, b = soft["fixed"]["errors"], stiff["fixed"]["errors"], stiff["tolerance"], stiff["blame"]
    for name, exact in {
        "soft.dy": s["dy"], "soft.dv": s["dv"], "soft.gradient": s["gradient"],
        "soft.tol_gradient": soft["tolerance"]["errors"]["gradient"],
        "stiff.dy": x["dy"], "stiff.gradient": x["gradient"], "stiff.dv_dy0": x["dv_dy0"],
        "stiff.dv_dy0_exact": x["dv_dy0_exact"], "fall": s["dy"] / x["dy"],
        "exp1.slope": stiff["exponent"]["slope"], "exp1.r2": stiff["exponent"]["r2"],
        "exp1.points": stiff["exponent"]["points"],
        "exp10.slope": core(6.0, 10)["exponent"]["slope"], "exp100.slope": core(6.0, 100)["exponent"]["slope"],
        "ref.r10": stiff["refinement"]["ratio_10"], "ref.r100": stiff["refinement"]["ratio_100"],
        "top.kdt2": top["k_dt2"], "top.gradient": top["fixed"]["errors"]["gradient"],
        "tol.gradient": t["errors"]["gradient"], "tol.steps": t["cost"]["steps"],
        "tol.rollouts": t["cost"]["rollouts"], "tol.evals": t["cost"]["force_evals"],
        "tol.fixed_evals": stiff["fixed"]["cost"]["force_evals"], "tol.ratio": t["cost_ratio"],
        "blame.integrator": b["integrator_share"], "blame.contact": b["contact_share"], "blame.ratio": b["ratio"],
    }.items():
        same(name, exact)
    sign = {"right": "RIGHT SIGN", "wrong": "WRONG SIGN", "right_far_off": "RIGHT SIGN, FAR OFF"}
    assert fact(page, "soft.sign") == sign[s["sign"]]
    assert fact(page, "top.sign") == sign[top["fixed"]["errors"]["sign"]]
    assert fact(page, "tol.lands").startswith("it lands" if t["lands"] else "it does not land")
    assert ("PROBE-DEPENDENT" in fact(page, "tol.probe")) == t["probe_dependent"]

    # The same numbers on the live cards, where the workbench shows them.
    assert fact(page, "stiff.gradient") == readout(page, "gradient")
    assert numbers(readout(page, "exponent"))[:2] == [fact(page, "exp1.slope"), fact(page, "exp1.r2")]
    assert fact(page, "blame.integrator") == readout(page, "blame-integrator")
    click_and_wait(page, dt_button(10))
    click_and_wait(page, dt_button(100))
    assert numbers(readout(page, "exponent"))[0] == fact(page, "exp100.slope")
    refine = numbers(readout(page, "refine"))
    assert [refine[0], refine[2]] == [fact(page, "ref.r10").rstrip("×"), fact(page, "ref.r100").rstrip("×")]
    click_and_wait(page, dt_button(1))
    click_and_wait(page, "#tolerance")
    cost = readout(page, "cost-tolerance")
    assert f"{fact(page, 'tol.evals')} force evaluations" in cost
    page.locator("#stiffness").focus()
    press(page, "Home")
    assert fact(page, "soft.gradient") == readout(page, "gradient")


def test_the_handout_prints_the_lesson_without_the_workbench(page: Page, lab: str) -> None:
    open_lab(page, lab)
    wait_for_facts(page)
    page.emulate_media(media="print")
    expect(page.locator("#workbench")).to_be_hidden()
    expect(page.locator("#challenge")).to_be_visible()
    expect(page.locator("#practice")).to_be_visible()
    page.evaluate("dispatchEvent(new Event('beforeprint'))")
    expect(page.locator("#if-fails li").first).to_be_visible()
    page.evaluate("dispatchEvent(new Event('afterprint'))")
    page.emulate_media(media="screen")
    expect(page.locator("#if-fails li").first).to_be_hidden()


def test_the_printed_handout_numbers_its_sections_in_order_and_prints_the_quiz(page: Page, lab: str) -> None:
    open_lab(page, lab)
    wait_for_facts(page)

    def headings() -> list[str]:
        # The sections' headings as a reader meets them (the number is CSS-generated content).
        return [h for h in re.findall(r'heading "([^"]+)" \[level=2\]', page.locator("main").aria_snapshot())]

    on_screen = headings()
    assert [h.split()[0] for h in on_screen] == ["1", "2", "3", "4", "5", "6", "7"], on_screen
    page.emulate_media(media="print")
    printed = headings()
    assert [h.split(" ", 1)[1] for h in printed] == ["The challenge", "Guided practice", "If your run fails",
                                                     "Retrieve and space"], printed
    assert [h.split()[0] for h in printed] == ["1", "2", "3", "4"], printed
    # Screen-only instructions stay off paper; the quiz's questions print, without buttons or feedback.
    expect(page.get_by_text("Each step turns green")).to_be_hidden()
    expect(page.locator("#quiz .quiz-q").first).to_be_visible()
    assert page.locator("#quiz .quiz-q").count() >= 5
    expect(page.locator("#quiz button").first).to_be_hidden()
    expect(page.locator("#quiz-locked")).to_be_hidden()
    page.emulate_media(media="screen")
    expect(page.get_by_text("Each step turns green")).to_be_visible()


# ---- instructors -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_copies():
    """The same web/ served as two course copies on one host: /course-a/lab/ and /course-b/lab/."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("course-a", "course-b"):
            shutil.copytree(WEB, Path(tmp) / name / "lab")
        # Any static host: Python's plain one, as an instructor's web server would be.
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=tmp)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()


def test_two_copies_on_one_host_keep_separate_progress_and_export_it(browser, two_copies: str) -> None:
    pg = new_page(browser, two_copies)
    try:
        open_lab(pg, f"{two_copies}/course-a/lab")
        commit_prediction(pg, "grows")
        assert item_done(pg, "wrongSign")
        with pg.expect_download() as info:
            pg.locator("#export-progress").click()
        record = json.loads(Path(info.value.path()).read_text())
        schema = json.loads((WEB / "progress.schema.json").read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema.validate(record, schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
        assert record["prediction"]["choice"] == "grows"
        assert record["checklist"]["wrongSign"]["done"] and record["checklist"]["wrongSign"]["detail"]["k"] == 1e6
        assert not record["passed"] and record["checklist"]["refined"] == {"done": False}
        assert record["lab"]["storage_key"] == "ferromotion-lab/v1:/course-a/lab/"
        assert re.fullmatch(r"\d+\.\d+\.\d+.*", record["lab"]["core_version"])

        # The other copy, same browser, same host: its own, empty progress.
        pg.goto(f"{two_copies}/course-b/lab/index.html")
        pg.wait_for_function("window.ferromotionLab && window.ferromotionLab.ready")
        expect(pg.locator("#workbench-output")).to_be_hidden()
        expect(pg.locator("#predict-commit")).to_be_disabled()
        # And back: course A still has its prediction.
        pg.goto(f"{two_copies}/course-a/lab/index.html")
        pg.wait_for_function("window.ferromotionLab && window.ferromotionLab.ready")
        expect(pg.locator("#workbench-output")).to_be_visible()
        assert pg.console_errors == []
    finally:
        pg.context.close()
