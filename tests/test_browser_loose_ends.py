"""The lab's loose ends, as a learner meets them: the exponent item reads the card (not the
law), the pass list keeps the answer to itself, refining where it does not count says why on
the spot, the quiz takes the time-of-impact term by its formula, the descent panel's count
and its force evaluations, the phone's next step and checklist one tap from the slider, the
phone's route table inside its card, the cost card without a ratio of a run to itself, the
tolerance marker that no longer hides the corrected one, and ASCII export file names.

Every fact is computed independently: the exponents, signs and costs by the native core
(`import ferromotion as fm`), the geometry by the browser's own layout. Fixtures and helpers:
tests/labkit.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from labkit import (
    PHONE,
    SCREENSHOTS,
    axe_violations,
    click_and_wait,
    commit_prediction,
    dt_button,
    item_done,
    new_page,
    numbers,
    open_lab,
    press,
    readout,
    slide_to,
)
from playwright.sync_api import Page, expect

import ferromotion as fm

DROP = fm.Drop()
#: The exponent card's nine stiffnesses, 1e4 .. 1e8 N/m (the lab's own fit).
NINE = np.logspace(4, 8, 9)


def printed_exponent(dt: float) -> str:
    """The exponent as the card prints it (three decimals), from the native core's sweep."""
    return f"{fm.sweep(DROP, k=NINE, dt=dt).exponent().slope:.3f}"


def type_exponent(page: Page, text: str) -> str:
    box = page.locator("#exponent-answer")
    box.fill(text)
    box.press("Enter")
    return page.locator("#exponent-feedback").inner_text()


def shoot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"loose-ends-{name}.png"), full_page=False)


# ---- the exponent item ------------------------------------------------------------------------


def test_the_exponent_item_takes_the_cards_number_as_printed_and_refuses_the_law_to_two_decimals(
        page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    click_and_wait(page, dt_button(100))
    card = printed_exponent(1e-6)
    assert numbers(readout(page, "exponent"))[0] == card
    assert card != "0.500", "the law and the readout coincide: this test needs them apart"
    # The law, to two decimals, is what the old rule let through at dt ÷ 100.
    assert "the law" in type_exponent(page, "0.50")
    assert "the law" in type_exponent(page, "0.5")
    assert not item_done(page, "exponent")
    # The card's number rounded to fewer decimals than it prints is not read off the card.
    assert "rounded" in type_exponent(page, f"{float(card):.2f}") or f"{float(card):.2f}" == "0.50"
    assert not item_done(page, "exponent")
    assert type_exponent(page, card).startswith("Yes")
    assert item_done(page, "exponent")


def test_at_the_base_dt_two_decimals_of_the_card_are_refused_and_all_three_accepted(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    card = printed_exponent(1e-4)
    rounded = f"{float(card):.2f}"
    assert rounded != card
    assert "rounded" in type_exponent(page, rounded)
    assert not item_done(page, "exponent")
    # Trailing zeros change nothing: the number is the card's, to at least its precision.
    assert type_exponent(page, card + "0").startswith("Yes")
    assert item_done(page, "exponent")


def test_the_pass_list_does_not_print_the_exponent_at_any_dt(page: Page, lab: str) -> None:
    open_lab(page, lab)
    expect(page.locator('#practice [data-fact="exp1.points"]').first).not_to_have_text("…")
    listed = page.locator(".pass-list").inner_text()
    for dt in (1e-4, 1e-5, 1e-6):
        assert printed_exponent(dt) not in listed, dt


# ---- refining where it does not count ----------------------------------------------------------


def sign_at(k: float, dt: float) -> str:
    """The three-state sign of dv(T)/dy0, from the native fixed and exact routes."""
    f = fm.fixed(DROP, k=k, dt=dt)
    e = fm.exact(DROP)
    a, b = f.jacobian[1, 0], e.jacobian[1, 0]
    if a * b < 0:
        return "WRONG SIGN"
    err = np.abs(f.jacobian - e.jacobian).max() / np.abs(e.jacobian).max()
    return "RIGHT SIGN, FAR OFF" if err >= 1 else "RIGHT SIGN"


def test_refining_at_a_right_sign_says_why_it_does_not_count_in_the_card(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    page.locator("#stiffness").focus()
    press(page, "Home")  # 1e2
    assert sign_at(1e2, 1e-4) == "RIGHT SIGN"
    for divisor in (10, 100):
        click_and_wait(page, dt_button(divisor))
        why = readout(page, "refine-why")
        assert "does not count" in why and "RIGHT SIGN" in why, why
    assert not item_done(page, "refined")
    shoot(page, "desk-refine-at-1e2")


def test_at_1e8_the_card_names_the_base_sign_and_the_next_step_does_not_invite_refining(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    # Steps A, B and C done by the learner's hand, so the next step would be D.
    page.locator("#stiffness").focus()
    press(page, "Home")
    slide_to(page, 6.0)
    press(page, "End")  # 1e8
    base = sign_at(1e8, 1e-4)
    assert base == "RIGHT SIGN, FAR OFF"
    now = page.locator("#now-step").inner_text()
    assert "does not count" in now and base in now, now
    assert "At that stiffness press" not in now
    click_and_wait(page, dt_button(100))
    assert readout(page, "sign") == sign_at(1e8, 1e-6) == "WRONG SIGN"
    why = readout(page, "refine-why")
    assert base in why and "does not count" in why, why
    click_and_wait(page, dt_button(10))
    assert not item_done(page, "refined")
    shoot(page, "desk-refine-at-1e8")
    # Back at a wrong sign, the card has nothing to object to and step D is offered as written.
    slide_to(page, 6.0)
    assert sign_at(1e6, 1e-4) == "WRONG SIGN"
    assert readout(page, "refine-why") == ""
    expect(page.locator("#now-step")).to_contain_text("At that stiffness press")


# ---- the quiz's missing entry ------------------------------------------------------------------


@pytest.mark.parametrize("answer", ["(1+e)g/|v|", "(1 + e)·g / |v|", "g(1+e)/|v|", "(e+1)*g/abs(v)",
                                    "impact timing", "time-of-impact term", "the time of impact"])
def test_the_missing_entry_takes_the_formula_and_its_names(page: Page, lab: str, answer: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    form = page.locator('.quiz-q[data-q="term"]')
    form.locator("input").fill(answer)
    form.locator("button").click()
    assert form.locator(".feedback").inner_text().startswith("Right"), answer


@pytest.mark.parametrize("answer", ["(1-e)g/|v|", "g/|v|", "the restitution", "stiffness"])
def test_the_missing_entry_refuses_other_quantities(page: Page, lab: str, answer: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    form = page.locator('.quiz-q[data-q="term"]')
    form.locator("input").fill(answer)
    form.locator("button").click()
    assert form.locator(".feedback").inner_text().startswith("Not quite"), answer


# ---- the descent panel ------------------------------------------------------------------------


def test_the_descent_panel_counts_its_rows_and_says_why_two_arms_spend_no_force_evaluations(
        page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    page.locator("#descent > summary").click()
    page.locator("#descent-run").click()
    expect(page.locator("#descent-result")).to_be_visible(timeout=120_000)
    rows = page.locator("#descent-rows tr")
    n = rows.count()
    lead = page.locator("#descent .lead").inner_text()
    assert not any(w in lead.lower() for w in ("four gradients", "three gradients", "five gradients")), lead
    assert f"{n} gradients" in page.locator("#descent-note").inner_text()
    # The exact route evaluates no contact force (closed form), natively too.
    assert fm.exact(DROP).force_evals == 0
    labels = [rows.nth(i).locator("td").nth(0).inner_text() for i in range(n)]
    evals = [rows.nth(i).locator("td").nth(4).inner_text() for i in range(n)]
    for label, ev in zip(labels, evals):
        assert ev != "0", (label, ev)
        if label in ("exact", "central differences"):
            assert "closed form" in ev, (label, ev)
        else:
            assert int(ev.replace(",", "")) > 0, (label, ev)
    shoot(page, "desk-descent")


# ---- the cost card ----------------------------------------------------------------------------


def test_the_cost_card_prints_no_ratio_of_the_yardstick_to_itself(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    text = readout(page, "cost-fixed")
    assert "×" not in text and "yardstick" in text, text
    click_and_wait(page, dt_button(10))
    text = readout(page, "cost-fixed")
    want = fm.fixed(DROP, k=1e6, dt=1e-5).force_evals / fm.fixed(DROP, k=1e6, dt=1e-4).force_evals
    ratio = [x for x in numbers(text.split("×")[0])][-1]
    assert abs(float(ratio) - want) <= 0.05 * want, (ratio, want, text)


# ---- the plot's markers -----------------------------------------------------------------------


def test_the_tolerance_marker_leaves_the_corrected_marker_visible(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    slide_to(page, 5.0)
    click_and_wait(page, "#corrected")
    click_and_wait(page, "#tolerance")
    dots = page.locator("#error-plot .marker-dot")
    tol = page.locator("#error-plot .marker-dot.s-tolerance")
    cor = page.locator("#error-plot .marker-dot.s-corrected")
    assert dots.count() == 3 and tol.count() == 1 and cor.count() == 1
    page.locator("#error-plot").scroll_into_view_if_needed()
    # What the eye and the pointer find at the corrected dot's centre is the corrected dot.
    hit = page.evaluate("""() => {
        const c = document.querySelector('#error-plot .marker-dot.s-corrected').getBoundingClientRect();
        const n = document.elementFromPoint(c.x + c.width / 2, c.y + c.height / 2);
        return n && n.classList.contains('s-corrected');
    }""")
    assert hit
    shoot(page, "desk-markers-1e5")


# ---- the export's file name -------------------------------------------------------------------


def test_the_export_file_name_is_ascii(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    name = page.locator("#learner-name")
    name.fill("Zoë Ørsted-Groß")
    name.press("Tab")
    with page.expect_download() as d:
        page.locator("#export-progress").click()
    file = d.value.suggested_filename
    assert file == "ferromotion-lab-progress-Zoe-Orsted-Gross.json", file
    assert file.isascii()


# ---- the phone --------------------------------------------------------------------------------


def in_view(page: Page, selector: str) -> bool:
    return page.evaluate(
        """(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
                      return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; }""",
        selector,
    )


def test_on_a_phone_the_next_step_and_the_checklist_are_one_tap_from_the_slider(phone: Page, lab: str) -> None:
    open_lab(phone, lab)
    commit_prediction(phone)
    slider = phone.locator("#stiffness")
    slider.scroll_into_view_if_needed()
    assert in_view(phone, "#stiffness")
    for link in ("#strip-next", "#strip-checklist"):
        assert in_view(phone, link), link
    # The strip names the step the panel shows, and counts the checklist's ticks.
    step = phone.locator("#now-step strong").first.inner_text().split("(")[0].strip().rstrip(".")
    assert step in phone.locator("#strip-next").inner_text()
    done = phone.locator('#checklist li[data-done="true"]').count()
    assert f"{done} of 4" in phone.locator("#strip-checklist").inner_text()
    shoot(phone, "phone-strip")
    phone.locator("#strip-checklist").click()
    expect(phone.locator("#checklist-title")).to_be_in_viewport()
    shoot(phone, "phone-checklist")
    phone.locator("#strip-next").click()
    expect(phone.locator("#now-step")).to_be_in_viewport()


def test_on_a_phone_the_route_table_fits_its_card(phone: Page, lab: str) -> None:
    open_lab(phone, lab)
    commit_prediction(phone)
    click_and_wait(phone, "#corrected")
    click_and_wait(phone, "#tolerance")
    card = phone.locator("#h-routes").locator("xpath=ancestor::article[1]")
    card.scroll_into_view_if_needed()
    box = card.bounding_box()
    wrap = phone.locator("#h-routes ~ .table-wrap")
    assert phone.evaluate("(w) => w.scrollWidth <= w.clientWidth", wrap.element_handle())
    # Every sign cell lies inside the card, and reads whole.
    signs = phone.locator("#route-rows td.wrong, #route-rows td.right, #route-rows td.right_far_off")
    assert signs.count() == 4
    for i in range(signs.count()):
        b = signs.nth(i).bounding_box()
        assert b["x"] >= box["x"] and b["x"] + b["width"] <= box["x"] + box["width"] + 0.5
        assert "SIGN" in signs.nth(i).inner_text()
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shoot(phone, "phone-routes")


# ---- every state above: axe at both widths ----------------------------------------------------


@pytest.mark.parametrize("width", [1280, 375])
def test_the_changed_states_have_no_axe_violations(browser, lab: str, width: int) -> None:
    pg = new_page(browser, lab, {"width": width, "height": 800})
    try:
        open_lab(pg, lab)
        commit_prediction(pg)
        pg.locator("#stiffness").focus()
        press(pg, "End")
        click_and_wait(pg, dt_button(100))  # the card's why, the next step's detour
        click_and_wait(pg, "#corrected")
        click_and_wait(pg, "#tolerance")
        type_exponent(pg, "0.50")
        form = pg.locator('.quiz-q[data-q="term"]')
        form.locator("input").fill("(1+e)g/|v|")
        form.locator("button").click()
        assert axe_violations(pg) == []
        shoot(pg, f"{width}-axe-state")
    finally:
        pg.context.close()
