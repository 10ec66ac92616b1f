"""What the lab prints equals what the core computes, to the printed digits.

The reference is the Python package (`import ferromotion as fm`, the same Rust core built
natively): the page's numbers come from the WebAssembly build through JS formatting, so
agreement checks the binding, the worker and the formatting together. Also covered: the
go-further panels (audit, blame, descent, time-of-impact with hybrid_jacobian's refusal),
the hints and the quiz. Fixtures and helpers: tests/labkit.py.
"""

from __future__ import annotations

import math
import re

import ferromotion as fm
import numpy as np
import pytest
from labkit import (
    agrees, assert_printed, assert_stayed_local, click_and_wait, commit_prediction, dt_button,
    new_page, numbers, open_lab, press, readout, settle, slide_to, status,
)
from playwright.sync_api import Page, expect

DROP = fm.Drop()
SIGN_TEXT = {"right": "RIGHT SIGN", "wrong": "WRONG SIGN", "right_far_off": "RIGHT SIGN, FAR OFF"}

STATES = [
    pytest.param(6.0, 1, None, False, False, id="k=1e6,dt"),
    pytest.param(3.5, 10, 1e-11, False, False, id="k=3.2e3,dt/10,tol"),
    pytest.param(2.0, 1, None, False, True, id="k=1e2,dt,corrected"),
    pytest.param(7.7, 100, 1e-6, True, True, id="k=5e7,dt/100,tol-events,corrected"),
]


def core_readout(log10k: float, divisor: int, rtol: float | None, events: bool) -> dict:
    bench = fm.Workbench(DROP, dt=1e-4, dt_divisor=divisor, tolerance=rtol, events=events)
    bench.set_log10_k(log10k)
    return bench.readout()


def route_row(page: Page, name: str) -> list[str]:
    row = page.locator("#route-rows tr").filter(has=page.locator("th", has_text=re.compile(f"^{name}")))
    return [c.inner_text() for c in row.locator("th, td").all()]


@pytest.mark.parametrize("log10k,divisor,rtol,events,corrected", STATES)
def test_readouts_equal_the_core(page: Page, lab: str, log10k, divisor, rtol, events, corrected) -> None:
    k = f"{10 ** log10k:.2e}".replace("e+0", "e")
    query = f"?k={k}&dt={1e-4 / divisor:.0e}&tol={'off' if rtol is None else f'{rtol:.0e}'}&ev={int(events)}&cor={int(corrected)}"
    open_lab(page, lab, query.replace("e-0", "e-"))
    commit_prediction(page)
    assert status(page)[0] == "ok", status(page)
    r = core_readout(log10k, divisor, rtol, events)
    e = r["fixed"]["errors"]

    # One quantity in one unit: |dy| in m, with |dv| in m/s beside it.
    assert_printed(readout(page, "forward"), e["dy"])
    assert readout(page, "forward").endswith(" m")
    assert_printed(readout(page, "forward-parts"), e["dv"], 0)
    assert_printed(readout(page, "gradient"), e["gradient"])
    assert readout(page, "sign") == SIGN_TEXT[e["sign"]]
    signs = readout(page, "sign-values")
    assert_printed(signs, e["dv_dy0"], 0)
    assert_printed(signs, e["dv_dy0_exact"], 1)
    # The same entries straight from the routes, not through the bench.
    dt = 1e-4 / divisor
    assert fm.fixed(DROP, r["k"], dt).jacobian[1, 0] == e["dv_dy0"]
    assert fm.exact(DROP).jacobian[1, 0] == e["dv_dy0_exact"]

    assert_printed(readout(page, "exponent"), r["exponent"]["slope"], 0)
    assert_printed(readout(page, "exponent"), r["exponent"]["r2"], 1)
    ref = r["refinement"]
    # The refinement card waits until both dt ÷ 10 and dt ÷ 100 are pressed at this k.
    assert readout(page, "refine") == "not measured yet"
    for d in (10, 100, divisor):
        click_and_wait(page, dt_button(d))
    refine = readout(page, "refine")
    assert_printed(refine, ref["ratio_10"], 0)
    assert_printed(refine, ref["ratio_100"], 2)
    detail = numbers(readout(page, "refine-detail"))
    assert all(agrees(detail[i], ref["errors"][i]) for i in range(3)), detail

    cost = numbers(readout(page, "cost-fixed"))
    c = r["fixed"]["cost"]
    assert [int(cost[0].replace(",", "")), int(cost[1].replace(",", ""))] == [c["steps"], c["force_evals"]]
    # Beside the evaluations, the wall time (measured in the page: not compared with Python's).
    assert re.search(r"force evaluations\s· (?:<\s)?\d[\d.]*\s(?:µs|ms|s), 1 rollout", readout(page, "cost-fixed"))
    assert agrees(cost[4], r["k_dt2"])

    b = r["blame"]
    for name, key, below in (("blame-integrator", "integrator_share", "integrator_below_floor"),
                             ("blame-contact", "contact_share", "contact_below_floor")):
        text = readout(page, name)
        assert text.startswith("< floor") == b[below], text
        assert_printed(text, b[key])
    assert_printed(readout(page, "blame-ratio"), b["ratio"])
    assert readout(page, "blame-floor") == "0" if b["noise_floor"] == 0 else agrees(readout(page, "blame-floor"), b["noise_floor"])
    assert_printed(readout(page, "blame-detail"), r["contact_exponent"]["slope"])

    x = r["exact"]
    assert_printed(readout(page, "impact-term"), x["time_of_impact_term"])
    assert_printed(readout(page, "impact"), x["impact_speed"], 1)  # after the "1" of (1+e)
    rest = readout(page, "restitution")
    assert_printed(rest, x["restitution"], 0)
    if r["restitution_at_k"] is not None:
        assert_printed(rest, r["restitution_at_k"], 1)

    fixed_row = route_row(page, "fixed")
    assert agrees(numbers(fixed_row[2])[0], e["gradient"])
    if corrected:
        row = route_row(page, "corrected")
        ce = r["corrected"]["errors"]
        assert agrees(numbers(row[2])[0], ce["gradient"])
        assert row[3] == SIGN_TEXT[ce["sign"]]
        assert int(row[4].split(" evals")[0].replace(",", "")) == r["corrected"]["cost"]["force_evals"]
    else:
        assert not route_row(page, "corrected")
    t = r["tolerance"]
    if rtol is None:
        assert t is None and readout(page, "cost-tolerance") == "Tolerance route off."
    else:
        row = route_row(page, "tolerance")
        assert agrees(numbers(row[2])[0], t["errors"]["gradient"])
        assert ("PROBE-DEPENDENT" in row[2]) == t["probe_dependent"]
        assert row[0].endswith("(lands)") == t["lands"]
        tc = numbers(readout(page, "cost-tolerance"))
        assert [int(n.replace(",", "")) for n in tc[:4]] == [
            t["cost"]["steps"], t["cost"]["rejected_steps"], t["cost"]["rollouts"], t["cost"]["force_evals"]]
        assert agrees(tc[5], t["cost_ratio"])  # tc[4] is the wall time
    flow_row = route_row(page, "flow")
    assert agrees(numbers(flow_row[2])[0], r["flow"]["errors"]["gradient"])
    settle(page)
    assert page.console_errors == []
    assert_stayed_local(page, lab)


def test_audit_and_blame_panels_match_the_core(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    page.locator("#audit > summary").click()
    rows = page.locator("#audit-rows tr")
    expect(rows).to_have_count(13)
    ks = 10.0 ** np.arange(2, 8.01, 0.5)
    s = fm.sweep(DROP, k=ks, dt=1e-4, corrected=True, blame=True, quiet=True)
    for i in range(13):
        cells = [c.inner_text() for c in rows.nth(i).locator("td").all()]
        assert agrees(numbers(cells[2])[0], s.gradient_error[i]), (i, cells)
        assert agrees(numbers(cells[3])[0], s.dv_dy0[i]), (i, cells)
        far_off = s.right_sign[i] and s.gradient_error[i] >= 1.0  # the core's FAR_OFF
        assert cells[5] == ("RIGHT SIGN, FAR OFF" if far_off else "RIGHT SIGN" if s.right_sign[i] else "WRONG SIGN")
        assert agrees(numbers(cells[6])[0], s.corrected.gradient_error[i]), (i, cells)
        assert agrees(numbers(cells[7])[0], s.blame.integrator_share[i]), (i, cells)
        assert agrees(numbers(cells[8])[0], s.blame.contact_share[i]), (i, cells)
    fit = s.exponent()
    text = page.locator("#audit-fit").inner_text()
    assert_printed(text, fit.slope, 1)  # the first number is the step, 1e-4
    assert_printed(text, fit.r2, 2)
    assert f"{fit.points} points" in text
    assert f"Wrong sign at {int((~np.asarray(s.right_sign)).sum())} of 13" in text

    page.locator("#blame-panel > summary").click()
    blame = fm.blame(DROP, 1e6, 1e-4)
    text = page.locator("#blame-text").inner_text()
    assert_printed(text, blame.integrator_share, 2)  # after k = 1.0e6 and dt = 1e-4
    assert_printed(text, blame.contact_share, 3)
    expect(page.locator("#blame-plot polyline.s-integrator")).to_have_count(1)
    expect(page.locator("#blame-plot polyline.s-contact")).to_have_count(1)


def test_the_audit_reports_the_cores_progress_while_it_runs(page: Page, lab: str) -> None:
    # The worker forwards the core's sweep progress: the note counts the stiffnesses done
    # (one per chunk in the browser's core), then the table replaces it.
    open_lab(page, lab)
    commit_prediction(page)
    click_and_wait(page, dt_button(10))
    page.evaluate("""() => {
        window.auditNotes = [];
        const note = document.getElementById("audit-note");
        new MutationObserver(() => window.auditNotes.push(note.textContent))
            .observe(note, {childList: true, characterData: true, subtree: true});
    }""")
    page.locator("#audit > summary").click()
    expect(page.locator("#audit-rows tr")).to_have_count(13)
    notes = page.evaluate("window.auditNotes")
    counted = [int(m.group(1)) for n in notes if (m := re.search(r"(\d+) of 13 stiffnesses done", n))]
    assert counted and counted == sorted(counted) and counted[-1] == 13, notes
    assert "Each row" in notes[-1]
    assert page.console_errors == []


def test_descent_panel_runs_in_the_background_and_shows_every_arm(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    page.locator("#descent > summary").click()
    page.locator("#descent-run").click()
    rows = page.locator("#descent-rows tr")
    expect(rows).to_have_count(7, timeout=60_000)
    table = {r.locator("td").first.inner_text(): [c.inner_text() for c in r.locator("td").all()] for r in rows.all()}
    # The arms are the core's Arm::standard(); the exact gradient and the control converge.
    assert table["exact"][1] == "4 of 4"
    assert table["central differences"][1] == "4 of 4"
    assert table["fixed k=1e6 dt=1e-4"][1] == "0 of 4"
    assert table["corrected k=1e6 dt=1e-4"][1] == "4 of 4"
    # The heat map has one cell per grid point and the selected arm's four paths.
    assert page.locator("#descent-map rect:not(.frame)").count() >= 41 * 41
    expect(page.locator("#descent-map polyline.path")).to_have_count(4)
    page.locator("#descent summary", has_text="Choose the paths").click()  # the path picker opens on demand
    page.locator('#descent-arms input[value="0"]').check()
    expect(page.locator("#descent-map polyline.converged")).to_have_count(4)
    assert status(page)[0] == "ok"
    assert page.console_errors == []


def term_in(text: str) -> str:
    m = re.search(r"= ([\d,.]+(?:e[−-]?\d+)?) 1/s", text)
    assert m, text
    return m.group(1)


def test_time_of_impact_panel_and_hybrid_jacobian_refusing_a_graze(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    page.locator("#impact > summary").click()
    hybrid = page.locator("#impact-hybrid")
    expect(hybrid).to_contain_text("hybrid_jacobian answers")
    assert agrees(term_in(page.locator("#impact-term").inner_text()), fm.time_of_impact_term(DROP))

    for preset, speed in (("0.01", 0.01), ("0.002", 0.002)):
        page.locator(f'#speed-presets button[data-speed="{preset}"]').click()
        term = fm.time_of_impact_term(DROP, speed)
        assert agrees(term_in(page.locator("#impact-term").inner_text()), term)
        text = hybrid.inner_text()
        assert text.startswith("hybrid_jacobian answers"), text
        dvdy0 = re.search(r"dv/dy₀ = ([\d,.]+) 1/s", text).group(1)
        assert abs(float(dvdy0.replace(",", "")) - term) <= 0.5 * 10 ** -len(dvdy0.partition(".")[2]) + 1e-6 * term

    page.locator('#speed-presets button[data-speed="0.0005"]').click()
    expect(hybrid).to_have_attribute("data-kind", "refused")
    text = hybrid.inner_text()
    assert text.startswith("hybrid_jacobian refuses (Grazing): Grazing impact at t = "), text
    assert "below the threshold 1e-3 m/s" in text
    would = re.search(r"would be ([\de.+-]+) 1/s", text).group(1)
    # Printed to three figures (the core's sentence, its numbers tidied by the page).
    assert agrees(would, fm.time_of_impact_term(DROP, 5e-4)), would
    # Dragging the speed down by keyboard: the term keeps growing as 1/speed; still refused at the bottom.
    page.locator("#speed-log").focus()
    page.keyboard.press("Home")
    expect(page.locator("#speed-label")).to_have_text("1.00e-4 m/s")
    assert agrees(term_in(page.locator("#impact-term").inner_text()), fm.time_of_impact_term(DROP, 1e-4))
    expect(hybrid).to_have_attribute("data-kind", "refused")
    # A refusal is the panel's answer, not a page error.
    assert status(page)[0] == "ok"
    expect(page.locator("#impact-plot .marker-dot.refused")).to_have_count(1)
    assert page.console_errors == []


def test_hints_show_up_for_the_three_confusions(page: Page, lab: str) -> None:
    open_lab(page, lab)
    commit_prediction(page, "falls-some")
    page.locator("#stiffness").focus()
    press(page, "Home")
    expect(page.locator('[data-hint="soft"]')).to_contain_text("sign happens to agree")
    slide_to(page, 4.0)
    expect(page.locator('[data-hint="soft"]')).to_have_count(0)
    click_and_wait(page, dt_button(10))
    click_and_wait(page, dt_button(100))
    expect(page.locator('[data-hint="dt"]')).to_contain_text("You expected it to fall.")
    click_and_wait(page, dt_button(1))
    click_and_wait(page, "#tolerance")
    cost = page.locator('[data-hint="cost"]')
    expect(cost).to_contain_text("accuracy, not thrift")
    r = core_readout(4.0, 1, float(page.locator("#rtol").input_value()), False)
    assert_printed(cost.inner_text(), r["tolerance"]["cost_ratio"], 5)  # after the yardstick's dt = 1e-4
    press_end = page.locator("#stiffness")
    press_end.focus()
    press(page, "End")
    expect(page.locator('[data-hint="unstable"]')).to_contain_text("k·dt²/m = 1.00")


def test_the_quiz_grades_typed_and_multiple_choice_answers(page: Page, lab: str) -> None:
    open_lab(page, lab)
    # The quiz would give the prediction away: it opens with the workbench.
    expect(page.locator("#quiz-grid")).to_be_hidden()
    expect(page.locator("#quiz-locked")).to_be_visible()
    commit_prediction(page)
    expect(page.locator("#quiz-locked")).to_be_hidden()

    def check(q: str) -> str:
        form = page.locator(f'.quiz-q[data-q="{q}"]')
        form.locator('button[type="submit"]').click()
        return form.locator(".feedback").inner_text()

    page.locator("#q-directions-1").fill("falls")
    page.locator("#q-directions-2").fill("rises")
    assert check("directions").startswith("Right.")
    page.locator("#q-exponent").fill("2")
    assert check("exponent").startswith("Not quite: the answer is one half.")
    page.locator("#q-exponent").fill("1/2")
    assert check("exponent").startswith("Right.")
    page.locator('.quiz-q[data-q="refine"] input[value="a"]').check()
    assert check("refine").startswith("Not quite")
    page.locator('.quiz-q[data-q="blame"] input[value="b"]').check()
    assert check("blame").startswith("Right.")
    page.locator("#q-term").fill("the time of impact term")
    assert check("term").startswith("Right.")
    assert check("cost") == "Answer first, then check."
    page.locator('.quiz-q[data-q="cost"] input[value="b"]').check()
    assert check("cost").startswith("Right.")
    assert page.locator("#quiz-score").inner_text() == "So far: 5 of 6 right."
    page.reload()
    page.wait_for_function("window.ferromotionLab && window.ferromotionLab.ready")
    expect(page.locator('.quiz-q[data-q="blame"] .feedback')).to_have_text("You got this one right; it comes back tomorrow.")
    expect(page.locator('.quiz-q[data-q="refine"] .feedback')).to_have_text("Last time this one was wrong: try it again.")


def same_number(lab_printed: str, cli_printed: str) -> bool:
    """Two printings of one number: equal within half a unit in the last digit of each."""
    def half_ulp(s: str) -> float:
        s = s.replace(",", "").replace("−", "-")
        mantissa, _, exponent = s.partition("e")
        return 0.5 * 10.0 ** (-len(mantissa.partition(".")[2]) + (int(exponent) if exponent else 0))
    a, b = (float(x.replace(",", "").replace("−", "-")) for x in (lab_printed, cli_printed))
    return abs(a - b) <= (half_ulp(lab_printed) + half_ulp(cli_printed)) * (1 + 1e-9)


def test_the_lab_and_the_cli_print_the_same_readouts_at_the_same_settings(page: Page, lab: str) -> None:
    # `ferromotion audit` and the workbench, each at its own defaults, then the same stiffnesses:
    # one rtol, one three-state sign, |dy| in metres and the gradient errors agree to the digits shown.
    from support import run_cli
    from test_cli import audit_rows

    open_lab(page, lab)
    commit_prediction(page)
    click_and_wait(page, "#tolerance")
    header = run_cli("audit", "--k-min", "1e2", "--k-max", "1e2").stdout
    assert f"tolerance route rtol = {float(page.locator('#rtol').input_value()):g} without" in header
    rows = {round(math.log10(float(r["k"])), 1): r for r in audit_rows()}
    for log10k in (2.0, 4.0, 6.0, 8.0):
        slide_to(page, log10k)
        cli = rows[log10k]
        lab_dy = numbers(readout(page, "forward"))[0]
        assert same_number(lab_dy, cli["dy"]), (log10k, lab_dy, cli["dy"])
        assert same_number(numbers(readout(page, "forward-parts"))[0], cli["dv"])
        assert same_number(readout(page, "gradient"), cli["grad"]), (log10k, readout(page, "gradient"), cli["grad"])
        assert readout(page, "sign") == cli["sign"], log10k
        tol = route_row(page, "tolerance")
        assert same_number(numbers(tol[2])[0], cli["tol"]), (log10k, tol[2], cli["tol"])
        assert ("PROBE-DEPENDENT" in tol[2]) == (cli["probe"] is not None)
        lab_ratio = numbers(tol[5])[0]
        assert same_number(lab_ratio, cli["ratio"]), (log10k, lab_ratio, cli["ratio"])


MULTIPLE_CHOICE = ("refine", "blame", "cost")


def option_order(page: Page) -> dict[str, list[str]]:
    return {q: page.locator(f'.quiz-q[data-q="{q}"] input[type=radio]').evaluate_all("els => els.map(e => e.value)")
            for q in MULTIPLE_CHOICE}


def test_the_quiz_options_are_alike_in_a_per_learner_order_and_every_key_is_what_the_lab_shows(
        page: Page, lab: str, browser) -> None:
    open_lab(page, lab)
    commit_prediction(page)
    keys = {"refine": "b", "blame": "b", "cost": "b"}
    for q in MULTIPLE_CHOICE:
        texts = {v: page.locator(f'.quiz-q[data-q="{q}"] input[value="{v}"]').locator("xpath=..").inner_text().strip()
                 for v in "abc"}
        lengths = sorted(len(t) for t in texts.values())
        # No option stands out by its length: the right one is never the single longest, and
        # the longest is at most a third longer than the shortest.
        assert lengths[-1] <= 1.34 * lengths[0], texts
        assert len(texts[keys[q]]) < lengths[-1] or lengths.count(lengths[-1]) > 1 or \
            lengths[-1] - lengths[0] <= 6, texts
    # The order is this learner's: kept across a reload, another learner (a fresh browser
    # profile) gets another one at least once in a few tries.
    mine = option_order(page)
    page.reload()
    page.wait_for_function("window.ferromotionLab && window.ferromotionLab.ready")
    assert option_order(page) == mine
    others = []
    for _ in range(4):
        other = new_page(browser, lab)
        try:
            open_lab(other, lab)
            commit_prediction(other)
            others.append(option_order(other))
        finally:
            other.context.close()
    assert any(o != mine for o in others), (mine, others)

    # Each key is what the workbench shows. "Two directions": from 1e2 to 1e4 N/m at dt = 1e-4 s
    # |dy| falls and the gradient error rises (and |dy| then turns: it is larger at 1e6 than at
    # its smallest, which step B names from the core).
    soft, mid, stiff = (core_readout(lk, 1, None, False)["fixed"]["errors"] for lk in (2.0, 4.0, 6.0))
    assert mid["dy"] < soft["dy"] and mid["gradient"] > soft["gradient"]
    step_b = page.locator('.steps li[data-step="B"]').inner_text()
    grid = [core_readout(lk, 1, None, False) for lk in (2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6)]
    best = min(grid, key=lambda r: r["fixed"]["errors"]["dy"])
    assert best["k"] < 1e6 and stiff["dy"] > best["fixed"]["errors"]["dy"]
    assert f"smallest near k = {best['k']:.1e}".replace("e+0", "e") in step_b, step_b
    # "Whose fault": the integrator, by about four orders of magnitude at 1e6.
    blame = fm.blame(DROP, 1e6, 1e-4)
    assert 10 ** 3.5 < blame.integrator_share / blame.contact_share < 10 ** 4.5
    # "The price": at the page's default rtol, central differences, no events, at 1e6: more
    # force evaluations than the fixed route at dt.
    rtol = float(page.locator("#rtol").input_value())
    assert core_readout(6.0, 1, rtol, False)["tolerance"]["cost_ratio"] > 1
    assert f"rtol = {rtol:.0e}" in page.locator('.quiz-q[data-q="cost"]').inner_text()
