"""The Panel app under a URL prefix (`ferromotion app --prefix /course/ferromotion/`), in Chromium.

An instructor who hosts the app behind a reverse proxy at https://host/course/ferromotion/
needs the page, Panel's and Bokeh's JavaScript and CSS, and the websocket all under that
path. The server is the real command line; every request the page makes is recorded with its
status, and each must stay under the prefix on 127.0.0.1 and succeed (no 404 from a resource
that forgot the prefix). Playwright only drives /usr/bin/chromium: never `playwright install`.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Iterator, List, Tuple
from urllib.parse import urlsplit

import pytest

pytest.importorskip("panel", reason="the app needs panel (requirements-dev.txt installs it)")
from support import launch_chromium  # noqa: E402
from labkit import SCREENSHOTS, serve_app  # noqa: E402
from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

TIMEOUT_MS = 30_000  # Panel's first render on a busy machine
PREFIX = "/course/ferromotion"


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    yield from serve_app("--prefix", PREFIX + "/")


def test_the_printed_url_carries_the_prefix(app_url: str) -> None:
    assert urlsplit(app_url).path == PREFIX + "/", app_url
    # The page's icon (./favicon.ico; browsers fetch it outside the page's network log).
    with urllib.request.urlopen(app_url + "favicon.ico", timeout=20) as r:
        assert r.status == 200 and r.read(4) == b"\x00\x00\x01\x00"  # an .ico file
    # The root is not the app: only the prefix is served.
    root = f"http://127.0.0.1:{urlsplit(app_url).port}/"
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(root, timeout=20)
    assert e.value.code == 404


def test_the_app_loads_and_moves_under_the_prefix(app_url: str) -> None:
    requests: List[str] = []
    failed: List[Tuple[str, str]] = []
    errors: List[str] = []
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page: Page = browser.new_context(viewport={"width": 1280, "height": 1400}).new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.on("request", lambda r: requests.append(r.url))
            page.on("websocket", lambda ws: requests.append(ws.url))
            page.on("response", lambda r: r.status >= 400 and failed.append((r.url, str(r.status))))
            page.on("requestfailed", lambda r: failed.append((r.url, r.failure or "failed")))
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(app_url)
            setting = page.locator("tr", has=page.locator("th", has_text="setting")).first
            expect(setting).to_contain_text("k = 1.0e6 N/m", timeout=TIMEOUT_MS)
            expect(page.get_by_text("status: ok")).to_be_visible(timeout=TIMEOUT_MS)
            before = page.locator("tr", has=page.locator("th", has_text="gradient error (fixed)")).first.inner_text()

            handle = page.locator(".noUi-handle").first
            handle.focus()
            for _ in range(10):  # log10 k from 6 to 7 in steps of 0.1, by keyboard
                page.keyboard.press("ArrowRight")
            expect(setting).to_contain_text("k = 1.0e7 N/m", timeout=TIMEOUT_MS)
            after = page.locator("tr", has=page.locator("th", has_text="gradient error (fixed)")).first.inner_text()
            assert after != before, "the readout did not follow the slider"
            assert page.locator(".bk-Canvas, canvas").count() > 0, "the Bokeh plot renders"
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "panel_app_prefix.png"), full_page=True)
        finally:
            browser.close()

    assert not failed, f"requests that failed under the prefix: {failed}"
    assert not errors, errors
    http = [u for u in requests if urlsplit(u).scheme in ("http", "https", "ws", "wss")]
    assert http, "no request was recorded"
    outside = [u for u in http if urlsplit(u).hostname != "127.0.0.1" or not urlsplit(u).path.startswith(PREFIX + "/")]
    assert not outside, f"requests outside {PREFIX}/ on 127.0.0.1: {outside}"
    assert any(urlsplit(u).scheme == "ws" and urlsplit(u).path.startswith(PREFIX + "/") for u in http), (
        "the app's websocket is under the prefix")
    assert any("/static/" in u for u in http), "Bokeh's resources came from this server, under the prefix"
