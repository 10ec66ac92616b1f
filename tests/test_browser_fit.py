"""The "Fit a bounce" panel under Go further: the lab's WebAssembly core fits a bouncing ball's
height and damping ratio to noisy measurements with the fixed-step gradient and with the right
one, in the panel's own worker. Facts checked independently of the page: the right gradient's
95% intervals contain the truth the data were made from (h0 = 1 m, zeta = 0.1606), and the
fixed-step fit is flagged as a misfit (its chi2 above the printed limit). The panel must be
reachable by keyboard, fit a 375 px screen and pass axe. Fixtures: tests/conftest.py; helpers: tests/labkit.py."""

from __future__ import annotations

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
    for text, truth in ((right[2], 1.0), (right[3], 0.1606)):
        est, lo, hi = (value(x) for x in numbers(text))
        assert lo <= truth <= hi, text
    chi2, limit = (value(x) for x in numbers(fixed[4])[:2])
    assert chi2 > limit and fixed[4].endswith("misfit")
    chi2, limit = (value(x) for x in numbers(right[4])[:2])
    assert chi2 <= limit and "misfit" not in right[4]
    assert "recovers the truth" in page.locator("#fit-summary").text_content()
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


def test_a_refused_guess_reads_as_the_cores_sentence(page: Page, lab: str) -> None:
    open_lab(page, lab)
    page.locator("#fit-panel > summary").click()
    page.locator("#fit-zeta").fill("1.5")
    page.locator("#fit-run").click()
    expect(page.locator("#fit-note")).to_contain_text("The core refused this fit", timeout=RUN_TIMEOUT_MS)
    assert "zeta" in page.locator("#fit-note").text_content()
