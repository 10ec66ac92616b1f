"""The Panel app served by `ferromotion app` and driven in Debian's Chromium (headless).

The server is the real command line (`ferromotion app --port 0`, which prints its URL).
Panel renders into shadow DOM; Playwright's locators pierce open shadow roots, so the
controls and readouts are found by their text. Every request the page makes is recorded
and must go to 127.0.0.1: the app works offline. A screenshot is saved under
target/screenshots/. Playwright only drives /usr/bin/chromium: never `playwright install`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, List
from urllib.parse import urlsplit

import pytest

pytest.importorskip("panel", reason="the app needs panel (requirements-dev.txt installs it)")
from support import launch_chromium  # noqa: E402
from labkit import serve_app  # noqa: E402
from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "target" / "screenshots"
TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    yield from serve_app()


@pytest.fixture(scope="module")
def page(app_url: str) -> Iterator[Page]:
    with sync_playwright() as p:
        browser = launch_chromium(p)
        context = browser.new_context(viewport={"width": 1280, "height": 1400})
        pg = context.new_page()
        pg.set_default_timeout(TIMEOUT_MS)
        pg.requests = []  # type: ignore[attr-defined]
        pg.errors = []  # type: ignore[attr-defined]
        pg.on("request", lambda req: pg.requests.append(req.url))  # type: ignore[attr-defined]
        pg.on("websocket", lambda ws: pg.requests.append(ws.url))  # type: ignore[attr-defined]
        pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))  # type: ignore[attr-defined]
        pg.goto(app_url)
        expect(pg.get_by_text("gradient error (fixed)")).to_be_visible(timeout=TIMEOUT_MS)
        yield pg
        context.close()
        browser.close()


def _readout(page: Page, row: str) -> str:
    """The text of one readout row, found by its heading (inside Panel's shadow DOM)."""
    return page.locator("tr", has=page.locator("th", has_text=row)).first.inner_text()


def test_the_bench_loads_with_the_cores_readouts(page: Page) -> None:
    expect(page.get_by_text("Ferromotion bench")).to_be_visible(timeout=TIMEOUT_MS)
    assert "k = 1.0e6 N/m" in _readout(page, "setting")
    assert "WRONG SIGN" in _readout(page, "sign line")
    expect(page.get_by_text("status: ok")).to_be_visible(timeout=TIMEOUT_MS)
    assert page.locator(".bk-Canvas, canvas").count() > 0, "the Bokeh plot renders"


def test_the_slider_moves_the_readouts(page: Page) -> None:
    before = _readout(page, "gradient error (fixed)")
    handle = page.locator(".noUi-handle").first
    handle.focus()
    for _ in range(40):  # log10 k from 6 to 2 in steps of 0.1, by keyboard
        page.keyboard.press("ArrowLeft")
    expect(page.locator("tr", has=page.locator("th", has_text="setting")).first).to_contain_text(
        "k = 1.0e2 N/m", timeout=TIMEOUT_MS)
    assert _readout(page, "gradient error (fixed)") != before
    assert "RIGHT SIGN" in _readout(page, "sign line")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "panel_app.png"), full_page=True)


def test_the_dt_buttons_and_the_tolerance_switch(page: Page) -> None:
    page.get_by_role("button", name="dt ÷ 10 = 1e-5 s").click()
    setting = page.locator("tr", has=page.locator("th", has_text="setting")).first
    expect(setting).to_contain_text("dt = 1e-5 s", timeout=TIMEOUT_MS)
    page.locator(".bk-Switch", has_text="tolerance route").locator(".bk-knob").click()
    expect(page.get_by_text("tolerance cost")).to_be_visible(timeout=TIMEOUT_MS)
    page.screenshot(path=str(SCREENSHOTS / "panel_app_tolerance.png"), full_page=True)


def test_every_request_stayed_on_127_0_0_1(page: Page, app_url: str) -> None:
    requests: List[str] = page.requests  # type: ignore[attr-defined]
    assert requests, "no requests recorded"
    off_host = [u for u in requests
                if urlsplit(u).scheme not in ("data", "blob") and urlsplit(u).hostname != "127.0.0.1"]
    assert not off_host, f"requests left 127.0.0.1 (the app must work offline): {off_host}"
    assert any(u.startswith("ws://127.0.0.1:") for u in requests), "the app talks to its server over a websocket"
    assert not page.errors, page.errors  # type: ignore[attr-defined]


@pytest.mark.parametrize("width, height", [(1280, 900), (375, 800)], ids=["desktop", "phone"])
def test_the_layout_follows_the_window(page: Page, app_url: str, width: int, height: int) -> None:
    """The figure takes the window's width (no fixed 900 px), nothing scrolls sideways, and the
    slider (labelled in k, not log10 k) and the whole plot are on the first screen, phone included."""
    context = page.context.browser.new_context(viewport={"width": width, "height": height})  # type: ignore[union-attr]
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    try:
        pg.goto(app_url)
        expect(pg.get_by_text("gradient error (fixed)")).to_be_visible(timeout=TIMEOUT_MS)
        canvas = pg.locator(".bk-Canvas canvas, canvas").first
        expect(canvas).to_be_visible(timeout=TIMEOUT_MS)
        pg.wait_for_timeout(500)  # let Bokeh finish sizing the figure to the window
        assert pg.evaluate("document.documentElement.scrollWidth") <= width
        plot = pg.locator(".bk-Canvas, canvas").first.bounding_box()
        assert plot is not None
        assert plot["x"] >= 0 and plot["x"] + plot["width"] <= width + 1, plot
        assert plot["width"] >= 0.6 * min(width, 1000), plot  # it fills the column, not a fixed size
        assert plot["y"] + plot["height"] <= height, f"the plot ends below the first screen: {plot}"
        slider = pg.locator(".noUi-handle").first
        box = slider.bounding_box()
        assert box is not None and box["y"] + box["height"] <= height
        expect(pg.get_by_text("1.0e6 N/m").first).to_be_visible()
        slider.focus()
        for _ in range(10):
            pg.keyboard.press("ArrowRight")
        expect(pg.get_by_text("1.0e7 N/m").first).to_be_visible(timeout=TIMEOUT_MS)
        expect(pg.locator("tr", has=pg.locator("th", has_text="setting")).first).to_contain_text(
            "k = 1.0e7 N/m", timeout=TIMEOUT_MS)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(SCREENSHOTS / f"panel_app_{width}.png"))
    finally:
        context.close()
