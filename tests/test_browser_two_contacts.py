"""The "two contacts at once" panel under Go further: a ball dropped into a V-groove from a
sideways offset through zero, the rigid groove's exact answer beside a fixed-step soft-contact
simulator's.

The page computes everything with its WebAssembly core in the lab's worker. Each readout is
held against answers computed here without the page:
- the rigid groove by the native Python package (``fm.systems.VGroove(...).exact``: the same core
  built natively and called through PyO3), its verdict word the exception Python raises
  (``SetValued``) or ``Jacobian`` when ``.jacobian`` exists;
- the soft walls by a NumPy re-implementation of the penalty groove written here from its
  equations (push-only spring-damper per wall, semi-implicit Euler, forward tangent), with the
  damping ratio solved here from the stiff-limit restitution formula.
The sliders are driven by keyboard and clicks; axe must find nothing at 1280 and 375 px.
Fixtures and helpers: tests/labkit.py.
"""

from __future__ import annotations

import math
import re

import ferromotion as fm
import numpy as np
import pytest
from labkit import SCREENSHOTS, agrees, axe_violations, open_lab
from playwright.sync_api import Page, expect
from scipy.optimize import brentq

H, T, E, G = 1.0, 0.8, 0.5, 9.81
K, DT = 1e5, 1e-4
STATE = re.compile(r"p\(T\) = \((\S+), (\S+)\) m, v\(T\) = \((\S+), (\S+)\) m/s; dp_x\(T\)/dp_x\(0\) = (\S+?)\.(?:\s|$)")


def zeta_for(e: float) -> float:
    """The damping ratio whose push-only contact restitutes e as k grows without bound: the
    oscillator's force returns to zero at omega_d t = pi - 2 asin(zeta), leaving at
    exp(-zeta (pi - 2 asin zeta) / sqrt(1 - zeta^2)) of the entry speed."""
    return brentq(lambda z: math.exp(-z * (math.pi - 2 * math.asin(z)) / math.sqrt(1 - z * z)) - e, 0.0, 0.99, xtol=1e-15)


def soft_groove(angle: float, offset: float) -> tuple[np.ndarray, np.ndarray]:
    """x(T) and the forward tangent of the penalty V-groove, stepped here."""
    b = 0.5 * angle
    normals = [np.array([math.cos(b), math.sin(b)]), np.array([-math.cos(b), math.sin(b)])]
    zeta = zeta_for(E)
    c = 2 * zeta * math.sqrt(K)
    p, v = np.array([offset, H]), np.zeros(2)
    jp, jv = np.eye(4)[:2].copy(), np.eye(4)[2:].copy()
    for _ in range(round(T / DT)):
        a, a_p, a_v = np.array([0.0, -G]), np.zeros((2, 2)), np.zeros((2, 2))
        for n in normals:
            gap, rate = n @ p, n @ v
            f = -K * gap - c * rate
            if gap < 0 and f > 0:
                a += f * n
                a_p -= K * np.outer(n, n)
                a_v -= c * np.outer(n, n)
        jv = jv + DT * (a_p @ jp + a_v @ jv)
        v = v + DT * a
        jp = jp + DT * jv
        p = p + DT * v
    return np.concatenate([p, v]), np.vstack([jp, jv])


def rigid(angle: float, offset: float):
    """The native core's exact answer: (verdict, solution or the SetValued exception)."""
    g = fm.systems.VGroove(angle=angle, restitution=E)
    try:
        s = g.exact([offset, H, 0.0, 0.0], 0.0, T)
    except fm.SetValued as err:
        return "SetValued", err
    _ = s.jacobian  # raises NotDifferentiable where the pieces differ
    return "Jacobian", s


def open_panel(page: Page) -> None:
    page.locator("#contacts > summary").click()
    wait_for_angle(page, "90°")


def wait_for_angle(page: Page, angle: str) -> None:
    page.wait_for_function(
        "(a) => !document.querySelector('#contacts-result').hidden"
        " && document.querySelector('#contacts-summary').textContent.startsWith('At ' + a + ',')",
        arg=angle, timeout=30_000)


def offset_by_keys(page: Page, mm: int) -> None:
    slider = page.locator("#contacts-offset")
    slider.focus()
    now = int(slider.input_value())
    for _ in range(abs(mm - now)):
        page.keyboard.press("ArrowRight" if mm > now else "ArrowLeft")
    expect(page.locator("#contacts-offset-label")).to_have_text(
        "0\u00a0mm" if mm == 0 else f"{'+' if mm > 0 else '−'}{abs(mm)}\u00a0mm")


def printed_state(text: str) -> list[str]:
    m = STATE.search(text)
    assert m, text
    return list(m.groups())


def assert_state(text: str, x: np.ndarray, j00: float) -> None:
    shown = printed_state(text)
    for s, want in zip(shown, [*x, j00]):
        assert agrees(s.lstrip("+"), want), f"{s} is not {want} in {text!r}"


def assert_offset(page: Page, degrees: float, mm: int) -> None:
    """The two readouts at one offset against the independent answers."""
    angle, offset = math.radians(degrees), mm * 1e-3
    verdict, answer = rigid(angle, offset)
    text = page.locator("#contacts-rigid").inner_text()
    assert text.startswith(f"Rigid, exact: {verdict}"), (text, verdict)
    if verdict == "Jacobian":
        assert_state(text, answer.x, answer.jacobian[0, 0])
    else:
        outcomes = answer.fields["outcomes"]
        shown = re.findall(r"gives p_x\(T\) = (\S+) m", text)
        assert len(shown) == len(outcomes) == 2
        for s, o in zip(shown, outcomes):
            assert agrees(s.lstrip("+"), o[0]), (s, o)
        assert "No derivative exists" in text
    x, jac = soft_groove(angle, offset)
    assert_state(page.locator("#contacts-soft").inner_text(), x, jac[0, 0])


def test_readouts_equal_python_and_an_independent_soft_simulator_as_the_sliders_move(page: Page, lab: str) -> None:
    open_lab(page, lab)
    open_panel(page)
    # 90°: the core's word at zero offset is Python's: a Jacobian, and the switches commuted.
    summary = page.locator("#contacts-summary").inner_text()
    verdict, sol = rigid(math.radians(90), 0.0)
    assert verdict == "Jacobian" and sol.commuted
    assert "Jacobian, dp_x(T)/dp_x(0)" in summary and "Nothing jumps" in summary, summary
    assert agrees(re.search(r"dp_x\(T\)/dp_x\(0\) = \+(\S+?)\.\s", summary).group(1), sol.jacobian[0, 0])
    legend = page.locator("#contacts-state-plot .legend").inner_text()
    assert agrees(re.search(r"ζ = ([\d.]+)\)", legend).group(1), zeta_for(E)), legend
    assert_offset(page, 90, 0)
    offset_by_keys(page, 3)
    assert_offset(page, 90, 3)
    offset_by_keys(page, -7)
    assert_offset(page, 90, -7)

    # The angle by keyboard: one step right is 90.5°, where Python raises SetValued on the axis.
    page.locator("#contacts-angle").focus()
    page.keyboard.press("ArrowRight")
    wait_for_angle(page, "90.5°")
    assert "SetValued" in page.locator("#contacts-summary").inner_text()
    assert_offset(page, 90.5, -7)
    offset_by_keys(page, 0)
    assert_offset(page, 90.5, 0)

    # A preset: 100°, the mirror-image outcomes.
    page.locator('#contacts-presets button[data-angle="100"]').click()
    wait_for_angle(page, "100°")
    summary = page.locator("#contacts-summary").inner_text()
    verdict, err = rigid(math.radians(100), 0.0)
    assert verdict == "SetValued" and "SetValued" in summary and "no derivative exists" in summary, summary
    left = rigid(math.radians(100), -1e-3)[1].x[0]
    right = rigid(math.radians(100), 1e-3)[1].x[0]
    jump = re.search(r"jumps from (\S+) m at −1\u00a0mm to (\S+) m at \+1\u00a0mm", summary)
    assert agrees(jump.group(1).lstrip("+"), left) and agrees(jump.group(2).replace("−", "-"), right), summary
    assert_offset(page, 100, 0)
    # The soft simulator lands on neither outcome: p_x(T) = 0 on the axis, by symmetry.
    assert printed_state(page.locator("#contacts-soft").inner_text())[0] == "0"
    note = page.locator("#contacts-state-plot .plot-note").inner_text()
    assert "p_x(T) = 0 m, neither order's outcome" in note, note
    assert page.console_errors == []


def test_every_offset_has_pythons_verdict_and_the_plots_break_where_no_answer_exists(page: Page, lab: str) -> None:
    open_lab(page, lab)
    open_panel(page)
    # 110° by twenty quick key presses from 100°: the panel asks the core for the last angle.
    page.locator('#contacts-presets button[data-angle="100"]').click()
    wait_for_angle(page, "100°")
    page.locator("#contacts-angle").focus()
    for _ in range(20):
        page.keyboard.press("ArrowRight")
    wait_for_angle(page, "110°")
    offset_by_keys(page, -20)
    slider = page.locator("#contacts-offset")
    for mm in range(-20, 21):
        verdict, answer = rigid(math.radians(110), mm * 1e-3)
        text = page.locator("#contacts-rigid").inner_text()
        assert text.startswith(f"Rigid, exact: {verdict}"), (mm, text)
        if verdict == "Jacobian":
            j = re.search(r"dp_x\(T\)/dp_x\(0\) = (\S+?)\.$", text).group(1)
            assert agrees(j.lstrip("+").replace("−", "-"), answer.jacobian[0, 0]), (mm, text)
        if mm < 20:
            slider.press("ArrowRight")
    # The rigid line breaks at zero (two polylines), the soft line does not; two order dots.
    assert page.locator("#contacts-state-plot polyline.s-rigid").count() == 2
    assert page.locator("#contacts-state-plot polyline.s-euler").count() == 1
    assert page.locator("#contacts-state-plot circle.dot.s-orders").count() == 2
    assert page.locator("#contacts-gradient-plot polyline.s-rigid").count() == 2
    page.locator('#contacts-presets button[data-angle="90"]').click()
    wait_for_angle(page, "90°")
    assert page.locator("#contacts-state-plot polyline.s-rigid").count() == 1
    assert page.locator("#contacts-state-plot circle.dot.s-orders").count() == 0


def test_a_bad_angle_is_refused_naming_it_and_the_panel_says_so(page: Page, lab: str) -> None:
    open_lab(page, lab)
    open_panel(page)
    # The core through the page's own module, as the worker calls it.
    refusal = page.evaluate("""async () => {
        const sim = await import('./js/sim.js');
        const pkg = await sim.loadCore();
        try { sim.jobs.twoContacts(pkg, { options: { angle_degrees: 185 } }); return null; }
        catch (e) { return { name: e.name, message: e.message, field: e.fields && e.fields.name }; }
    }""")
    assert refusal == {"name": "InvalidParameter", "field": "angle_degrees",
                       "message": "invalid parameter `angle_degrees` = 185: must be in (0, 180) (degrees)"}
    # A slider pushed past its range (by script: the page's own slider cannot) gets the core's
    # sentence in the panel's note, and the panel stays usable.
    page.evaluate("""() => { const s = document.querySelector('#contacts-angle');
        s.max = '190'; s.value = '185'; s.dispatchEvent(new Event('input')); }""")
    note = page.locator("#contacts-note")
    expect(note).to_have_attribute("data-kind", "error")
    expect(note).to_contain_text("No answer at 185°: Invalid parameter `angle_degrees` = 185: must be in (0, 180) (degrees).")
    expect(page.locator("#contacts-result")).to_be_hidden()
    page.locator('#contacts-presets button[data-angle="100"]').click()
    wait_for_angle(page, "100°")
    assert page.console_errors == []


@pytest.mark.parametrize("width", [1280, 375])
def test_panel_fits_the_screen_and_passes_axe(browser, lab: str, width: int) -> None:
    from labkit import DESKTOP, PHONE, new_page

    page = new_page(browser, lab, DESKTOP if width == 1280 else PHONE)
    try:
        open_lab(page, lab)
        open_panel(page)
        page.locator('#contacts-presets button[data-angle="100"]').click()
        wait_for_angle(page, "100°")
        offset_by_keys(page, 2)
        page.locator("#contacts > details.more > summary").click()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert axe_violations(page) == []
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("#contacts").screenshot(path=str(SCREENSHOTS / f"lab-{width}px-two-contacts.png"))
        assert page.console_errors == []
    finally:
        page.context.close()
