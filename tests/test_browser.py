"""Headless-browser smoke tests of the web bench (web/index.html) in Debian's Chromium.

The page is served from web/ on 127.0.0.1 by an in-process server and driven with the
keyboard only. The WebAssembly build must exist (web/pkg/, made by `make wasm`); without
it these tests fail rather than skip, because the lab is a product, not an extra.
Playwright only drives /usr/bin/chromium: never run `playwright install`.
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

WEB = Path(__file__).resolve().parent.parent / "web"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 20_000


class _Handler(http.server.SimpleHTTPRequestHandler):
    # instantiateStreaming needs the right type; don't rely on the host's mime.types.
    extensions_map = {".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript"}

    def log_message(self, format: str, *args: object) -> None:  # keep pytest output clean
        pass


@pytest.fixture(scope="module")
def base_url() -> str:
    if not (WEB / "pkg" / "ferromotion_wasm_bg.wasm").is_file():
        pytest.fail("web/pkg/ is missing: run `make wasm` to build the WebAssembly core first")
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(WEB))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser() -> Browser:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser, base_url: str):
    """A fresh page that records every request and every console error."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    pg.requests = []  # type: ignore[attr-defined]
    pg.console_errors = []  # type: ignore[attr-defined]
    pg.on("request", lambda req: pg.requests.append(req.url))
    pg.on("console", lambda msg: msg.type == "error" and pg.console_errors.append(msg.text))
    pg.on("pageerror", lambda exc: pg.console_errors.append(str(exc)))
    yield pg
    context.close()


def open_bench(page: Page, base_url: str, query: str = "") -> None:
    page.goto(f"{base_url}/index.html{query}")
    expect(page.locator("#readouts")).to_have_attribute("aria-busy", "false")


def readout(page: Page, name: str) -> str:
    return page.locator(f'[data-r="{name}"]').inner_text()


def assert_stayed_local(page: Page) -> None:
    assert page.requests, "no request was recorded"
    for url in page.requests:
        parts = urlsplit(url)
        assert parts.scheme == "data" or parts.hostname == "127.0.0.1", f"request left 127.0.0.1: {url}"


def test_page_loads_with_readouts_and_no_error(page: Page, base_url: str) -> None:
    open_bench(page, base_url)
    status = page.locator("#status")
    expect(status).to_have_attribute("data-kind", "ok")
    assert "Ready" in status.inner_text()
    assert page.locator("#k-label").inner_text() == "k = 1.0e6 N/m"
    assert readout(page, "sign") == "WRONG SIGN"
    assert readout(page, "forward").endswith((" m", " m/s"))
    for name in ("gradient", "exponent", "refine", "blame-integrator", "blame-contact", "impact", "restitution"):
        assert readout(page, name) not in ("", "…"), name
    assert page.locator("#readouts").get_attribute("aria-live") == "polite"
    assert page.console_errors == []
    assert_stayed_local(page)


def test_slider_by_keyboard_changes_the_readouts(page: Page, base_url: str) -> None:
    open_bench(page, base_url)
    slider = page.locator("#stiffness")
    k_label = page.locator("#k-label")
    start_gradient = readout(page, "gradient")

    slider.focus()
    page.keyboard.press("ArrowRight")
    expect(k_label).to_have_text("k = 1.3e6 N/m")
    assert readout(page, "gradient") != start_gradient
    assert slider.get_attribute("aria-valuetext") == "k = 1.3e6 N/m"

    page.keyboard.press("ArrowLeft")
    expect(k_label).to_have_text("k = 1.0e6 N/m")
    assert readout(page, "gradient") == start_gradient
    assert readout(page, "sign") == "WRONG SIGN"

    page.keyboard.press("End")
    expect(k_label).to_have_text("k = 1.0e8 N/m")

    page.keyboard.press("Home")
    expect(k_label).to_have_text("k = 1.0e2 N/m")
    assert readout(page, "sign") == "RIGHT SIGN"
    assert "log10k=2&" in page.url  # the state lives in the URL

    expect(page.locator("#status")).to_have_attribute("data-kind", "ok")
    assert page.console_errors == []
    assert_stayed_local(page)


def test_dt_buttons_and_tolerance_by_keyboard(page: Page, base_url: str) -> None:
    open_bench(page, base_url)
    refine_before = readout(page, "exponent-detail")

    tenth = page.locator('#dt-buttons button[data-divisor="10"]')
    tenth.focus()
    page.keyboard.press("Enter")
    expect(tenth).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#dt-label")).to_have_text("dt = 1e-5 s")
    assert readout(page, "exponent-detail") != refine_before

    page.locator("#tolerance").focus()
    page.keyboard.press("Space")
    expect(page.locator("#tolerance")).to_be_checked()
    assert readout(page, "tolerance").startswith(("Lands", "Does not land"))
    assert "rollouts" in readout(page, "cost-tolerance")
    expect(page.locator("#status")).to_have_attribute("data-kind", "ok")
    assert page.console_errors == []


def test_refused_input_is_a_sentence_in_the_status_line(page: Page, base_url: str) -> None:
    open_bench(page, base_url, "?log10k=abc")
    status = page.locator("#status")
    expect(status).to_have_attribute("data-kind", "error")
    text = status.inner_text()
    assert text.startswith("Invalid parameter `log10_k`") and text.endswith("."), text
    # The bench stays usable at its previous (default) setting.
    assert page.locator("#k-label").inner_text() == "k = 1.0e6 N/m"
    assert readout(page, "sign") == "WRONG SIGN"


def test_focus_is_visible_and_page_fits_375px(browser: Browser, base_url: str) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 800})
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    try:
        open_bench(pg, base_url)
        assert pg.evaluate("document.documentElement.scrollWidth") <= 375
        pg.keyboard.press("Tab")  # the first focusable control is the slider
        assert pg.evaluate("document.activeElement.id") == "stiffness"
        outline = pg.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline not in ("", "none"), outline
    finally:
        context.close()
