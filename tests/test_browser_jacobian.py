"""The lab's gradient-method control for the tolerance route (issue 13): choosing forward
sensitivities changes the cost readout to the core's, keeps the tolerance route's gradient
error on the flow reference's, switches event location on and holds it (the core refuses
forward without events, so the page never offers the pair), shows a wall time beside every
evaluation count, and round-trips through the URL.

The reference is the Python package (the same core, built natively): ``fm.Workbench`` with
the same controls, and ``fm.tolerance`` called directly. Screenshots of the controls and the
cost card at 1280 and 375 px go to target/screenshots/ for a person to look at.
"""

from __future__ import annotations

import re

import ferromotion as fm
import pytest
from labkit import (
    SCREENSHOTS, agrees, commit_prediction, new_page, numbers, open_lab, readout, settle, status,
    updates, value,
)
from playwright.sync_api import Page, expect

DROP = fm.Drop()
# A printed wall time: "1.9 ms", "0.31 ms", "12 ms", "3.1 µs", "1.2 s", or "< 0.1 ms" under a tick.
WALL = r"(?:<\s)?\d[\d.]*\s(?:µs|ms|s)"


def choose(page: Page, method: str) -> None:
    """Pick a gradient method in the select and wait for the readout it causes."""
    n = updates(page)
    page.locator("#jacobian").select_option(method)
    page.wait_for_function(f"window.ferromotionLab.updates > {n}", polling=1)


def route_cells(page: Page, name: str) -> list[str]:
    row = page.locator("#route-rows tr").filter(has=page.locator("th", has_text=re.compile(f"^{name}")))
    return [c.inner_text() for c in row.locator("th, td").all()]


def core_tolerance(jacobian: str, rtol: float = 1e-6) -> fm.Route:
    return fm.tolerance(DROP, 1e6, rtol=rtol, events=True, jacobian=jacobian)


def test_forward_changes_the_cost_and_keeps_the_gradient_on_flow(page: Page, lab: str) -> None:
    # Tolerance on at rtol 1e-6 WITHOUT events: choosing forward must switch them on.
    open_lab(page, lab, "?k=1e6&dt=1e-4&tol=1e-6&ev=0&cor=0")
    commit_prediction(page)
    assert status(page)[0] == "ok", status(page)
    before = readout(page, "cost-tolerance")
    assert before.startswith("Tolerance route (central differences)") and "over 8 rollouts" in before, before
    expect(page.locator("#events")).not_to_be_checked()

    choose(page, "forward")
    assert status(page)[0] == "ok", status(page)
    expect(page.locator("#events")).to_be_checked()
    expect(page.locator("#events")).to_be_disabled()
    expect(page.locator("#jacobian-note")).to_contain_text("need event location")
    assert "events on · forward sensitivities" in page.locator("#tolerance-setting").inner_text()

    # The cost readout is the core's for forward sensitivities, not Richardson's.
    r = core_tolerance("forward")
    after = readout(page, "cost-tolerance")
    assert after != before
    assert after.startswith("Tolerance route (forward sensitivities)") and "over 1 rollout," in after, after
    printed = numbers(after)
    assert [int(x.replace(",", "")) for x in printed[:4]] == [r.steps, r.rejected_steps, r.rollouts, r.force_evals]
    assert re.search(rf"{r.force_evals:,} force evaluations\s· {WALL}:", after), after
    bench = fm.Workbench(DROP, k=1e6, tolerance=1e-6, events=True, jacobian="forward").readout()
    assert agrees(printed[-1], bench["tolerance"]["cost_ratio"]), (printed, bench["tolerance"]["cost_ratio"])

    # Its gradient stays on the flow reference: both rows print the same error against the
    # exact bounce to their three figures (J_tol - J_flow is ~1e-7 relative, far below it).
    tol_row, flow_row = route_cells(page, "tolerance"), route_cells(page, "flow")
    e_tol, e_flow = value(numbers(tol_row[2])[0]), value(numbers(flow_row[2])[0])
    assert abs(e_tol - e_flow) <= 0.01 * e_flow, (tol_row, flow_row)
    assert agrees(numbers(tol_row[2])[0], bench["tolerance"]["errors"]["gradient"])
    assert re.fullmatch(rf"{r.force_evals:,} evals\s· {WALL}", tol_row[4]), tol_row
    assert re.fullmatch(rf"closed form\s· {WALL}", flow_row[4]), flow_row
    assert "forward sensitivities" in readout(page, "tolerance-detail")
    assert "PROBE" not in tol_row[2]

    # Back to Richardson: events stay on (the learner's choice now), the checkbox is free again.
    choose(page, "richardson")
    expect(page.locator("#events")).to_be_enabled()
    expect(page.locator("#events")).to_be_checked()
    rich = core_tolerance("richardson")
    assert numbers(readout(page, "cost-tolerance"))[3].replace(",", "") == str(rich.force_evals)
    settle(page)
    assert page.console_errors == []


def test_every_cost_line_shows_a_wall_time_beside_its_evaluations(page: Page, lab: str) -> None:
    open_lab(page, lab, "?k=1e6&dt=1e-4&tol=1e-6&ev=1&jac=forward&cor=1")
    commit_prediction(page)
    fixed = fm.fixed(DROP, 1e6, 1e-4)
    assert re.search(rf"{fixed.force_evals:,} force evaluations\s· {WALL}, 1 rollout", readout(page, "cost-fixed"))
    assert re.search(rf"force evaluations\s· {WALL}, 1 rollout", readout(page, "cost-corrected"))
    assert re.search(rf"force evaluations\s· {WALL}: ", readout(page, "cost-tolerance"))
    for name in ("fixed", "corrected", "tolerance"):
        assert re.fullmatch(rf"[\d,]+ evals\s· {WALL}", route_cells(page, name)[4]), name
    clock = readout(page, "cost-clock")
    assert clock.startswith("Wall time:") and re.search(WALL, clock), clock


def test_the_url_round_trips_the_method(browser, lab: str) -> None:
    page = new_page(browser, lab)
    try:
        open_lab(page, lab, "?k=1e6&dt=1e-4&tol=1e-6&ev=1&cor=0")
        commit_prediction(page)
        choose(page, "forward")
        page.wait_for_function("location.search.includes('jac=forward')")
        url = page.url
        assert re.search(r"[?&]ev=1(&|$)", url) and "tol=1e-6" in url, url
    finally:
        page.context.close()

    again = new_page(browser, lab)
    try:
        again.goto(url)
        again.wait_for_function("window.ferromotionLab && window.ferromotionLab.ready")
        commit_prediction(again)
        assert status(again)[0] == "ok", status(again)
        expect(again.locator("#jacobian")).to_have_value("forward")
        expect(again.locator("#events")).to_be_checked()
        expect(again.locator("#events")).to_be_disabled()
        assert "over 1 rollout," in readout(again, "cost-tolerance")
        # Written back unchanged.
        again.wait_for_function("location.search.includes('jac=forward')")
    finally:
        again.context.close()


@pytest.mark.parametrize("query, said", [
    ("?k=1e6&tol=1e-6&ev=0&jac=forward", "need event location, so ev is on"),
    ("?k=1e6&tol=1e-6&ev=1&jac=sideways", "jac must be richardson or forward"),
])
def test_a_link_asking_for_what_the_page_cannot_do_says_so(browser, lab: str, query: str, said: str) -> None:
    page = new_page(browser, lab)
    try:
        open_lab(page, lab, query)
        kind, text = status(page)
        assert kind == "error" and said in text, text
        commit_prediction(page)
        # The workbench works: the tolerance route ran with what the page could follow.
        expect(page.locator("#events")).to_be_checked()
        assert readout(page, "cost-tolerance").startswith("Tolerance route (")
        assert page.console_errors == []
    finally:
        page.context.close()


@pytest.mark.parametrize("width, height", [(1280, 900), (375, 800)])
def test_screenshots_of_the_tolerance_controls_and_the_cost_card(browser, lab: str, width: int, height: int) -> None:
    page = new_page(browser, lab, {"width": width, "height": height})
    try:
        open_lab(page, lab, "?k=1e6&dt=1e-4&tol=1e-6&ev=1&jac=forward&cor=1")
        commit_prediction(page)
        settle(page)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        controls = page.locator("#jacobian").locator("xpath=ancestor::fieldset[1]")
        controls.scroll_into_view_if_needed()
        controls.screenshot(path=str(SCREENSHOTS / f"lab_tolerance_controls_{width}.png"))
        card = page.locator("#h-cost").locator("xpath=ancestor::article[1]")
        card.scroll_into_view_if_needed()
        card.screenshot(path=str(SCREENSHOTS / f"lab_cost_card_{width}.png"))
        table = page.locator("#h-routes").locator("xpath=ancestor::article[1]")
        table.scroll_into_view_if_needed()
        table.screenshot(path=str(SCREENSHOTS / f"lab_routes_table_{width}.png"))
        # Nothing in the controls overflows the phone's width.
        box = controls.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 1, box
        assert page.console_errors == []
    finally:
        page.context.close()
