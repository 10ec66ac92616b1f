"""Shared helpers of the browser-lab tests (tests/test_browser*.py), a plain module.

The lab (web/) is served from an in-process server on 127.0.0.1 and driven in Debian's
Chromium through Playwright, keyboard and clicks only. The WebAssembly build must exist
(web/pkg/, made by `make wasm`); without it the tests fail rather than skip, because the lab
is a product, not an extra. Never run `playwright install`: the tests use /usr/bin/chromium.

The fixtures (`lab`, `browser`, `page`, `phone`) are pytest's, in tests/conftest.py, used by
name; test modules import the helpers here (`from labkit import open_lab, settle, ...`).
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from ferromotion.labserver import lab_server
from playwright.sync_api import Browser, BrowserContext, Page, expect
from support import FERROMOTION

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "web"
SCREENSHOTS = ROOT / "target" / "screenshots"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
TIMEOUT_MS = 20_000
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 800}


def serve(root: Path):
    """Serve ``root`` on 127.0.0.1 (an ephemeral port) with the lab's own server (the one behind
    `ferromotion lab` and `make lab`) in a thread; yields the base URL."""
    server = lab_server(root, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def serve_app(*args: str):
    """Run the real `ferromotion app --port 0 ARGS...` (with BOKEH_RESOURCES=cdn, which the app
    must override: it serves its own JavaScript); yields the URL it prints, then stops it with
    SIGTERM, which must end it like Ctrl-C, with status 0."""
    env = dict(os.environ, BOKEH_RESOURCES="cdn")
    proc = subprocess.Popen([*FERROMOTION, "app", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lines: "queue.Queue[str]" = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    url = None
    try:
        while url is None:
            try:
                line = lines.get(timeout=60)
            except queue.Empty:
                pytest.fail("`ferromotion app` printed no URL within 60 s")
            if line.startswith("ferromotion app: serving"):
                url = next(w for w in line.split() if w.startswith("http://127.0.0.1:"))
        yield url
    finally:
        proc.terminate()
        try:
            status = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert status == 0, "SIGTERM stops the server like Ctrl-C, with status 0"


def new_page(browser: Browser, lab: str, viewport: dict = DESKTOP) -> Page:
    """A page in a fresh context (empty localStorage) that records every request the page
    and its worker make, and every console error. Requests off the lab's origin are
    recorded and aborted."""
    context: BrowserContext = browser.new_context(viewport=viewport)
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    pg.requests = []  # type: ignore[attr-defined]
    pg.console_errors = []  # type: ignore[attr-defined]
    origin = urlsplit(lab)

    def route(r):
        url = r.request.url
        pg.requests.append(url)
        parts = urlsplit(url)
        if parts.scheme == "data" or (parts.hostname, parts.port) == (origin.hostname, origin.port):
            r.continue_()
        else:
            r.abort()

    context.route("**/*", route)
    context.on("request", lambda req: pg.requests.append(req.url))
    pg.on("console", lambda msg: msg.type == "error" and pg.console_errors.append(msg.text))
    pg.on("pageerror", lambda exc: pg.console_errors.append(str(exc)))
    return pg


# ---- driving the lab ------------------------------------------------------------------------


def open_lab(page: Page, lab: str, query: str = "") -> None:
    """Load the lab and wait until the core has produced its first readout."""
    page.goto(f"{lab}/index.html{query}")
    page.wait_for_function("window.ferromotionLab && window.ferromotionLab.ready")


def commit_prediction(page: Page, choice: str = "flat") -> None:
    """Pick a prediction and commit it, by clicks."""
    page.locator(f'#predict-form input[value="{choice}"]').click()
    page.locator("#predict-commit").click()
    expect(page.locator("#workbench-output")).to_be_visible()


def start_over(page: Page) -> None:
    """Erase the progress by clicks: "Start over…", then the confirmation."""
    page.locator("#reset-progress").click()
    page.locator("#reset-yes").click()


def settle(page: Page) -> None:
    """Wait until the background worker has finished its jobs."""
    page.wait_for_function("document.body.dataset.background !== 'busy'")


def updates(page: Page) -> int:
    return page.evaluate("window.ferromotionLab.updates")


def press(page: Page, key: str, times: int = 1) -> None:
    """Press a key on the focused control, waiting for each workbench update it causes."""
    for _ in range(times):
        n = updates(page)
        page.keyboard.press(key)
        page.wait_for_function(f"window.ferromotionLab.updates > {n}", polling=1)


def slide_to(page: Page, log10k: float) -> None:
    """Move the stiffness slider to log10 k by keyboard arrows."""
    slider = page.locator("#stiffness")
    slider.focus()
    now = float(slider.input_value())
    steps = round((log10k - now) * 10)
    if steps:
        press(page, "ArrowRight" if steps > 0 else "ArrowLeft", abs(steps))
    assert abs(float(slider.input_value()) - log10k) < 1e-9


def click_and_wait(page: Page, selector: str) -> None:
    """Click a workbench control and wait for the readout it causes."""
    n = updates(page)
    page.locator(selector).click()
    page.wait_for_function(f"window.ferromotionLab.updates > {n}", polling=1)


def dt_button(divisor: int) -> str:
    return f'#dt-buttons button[data-divisor="{divisor}"]'


def readout(page: Page, name: str) -> str:
    """A readout's text (its DOM text: on a phone, a card off screen is not laid out, and
    innerText would read it as empty)."""
    return (page.locator(f'[data-r="{name}"]').text_content() or "").strip()


def item_done(page: Page, item: str) -> bool:
    return page.locator(f'#checklist li[data-item="{item}"]').get_attribute("data-done") == "true"


def assert_stayed_local(page: Page, lab: str) -> None:
    assert page.requests, "no request was recorded"
    origin = urlsplit(lab)
    for url in page.requests:
        parts = urlsplit(url)
        assert parts.scheme == "data" or (parts.hostname, parts.port) == (origin.hostname, origin.port), (
            f"request left the lab's origin: {url}"
        )


def axe_violations(page: Page) -> list[dict]:
    """What axe-core (installed offline from package-lock.json by scripts/bootstrap.sh) finds
    wrong on the page as it stands, as [{id, nodes}]."""
    if not AXE.is_file():
        pytest.fail("node_modules/axe-core is missing: run scripts/bootstrap.sh (it installs package-lock.json)")
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => (await axe.run(document, { resultTypes: ['violations'] })).violations")
    return [{"id": v["id"], "nodes": [n["target"] for n in v["nodes"]]} for v in result]


def status(page: Page) -> tuple[str, str]:
    s = page.locator("#status")
    return s.get_attribute("data-kind") or "", s.inner_text()


# ---- numbers as printed -----------------------------------------------------------------------

# A number, not the "1" of a unit such as 1/s.
_NUMBER = re.compile(r"[−-]?\d[\d,]*(?:\.\d+)?(?:e[−+-]?\d+)?(?![\d/])")


def numbers(text: str) -> list[str]:
    """Every number printed in a text, as written."""
    return _NUMBER.findall(text)


def value(printed: str) -> float:
    return float(printed.replace(",", "").replace("−", "-"))


def agrees(printed: str, exact: float) -> bool:
    """Whether a printed number is `exact` rounded to the digits it shows."""
    s = printed.replace(",", "").replace("−", "-")
    mantissa, _, exponent = s.partition("e")
    decimals = len(mantissa.partition(".")[2])
    ulp = 10.0 ** (-decimals + (int(exponent) if exponent else 0))
    return abs(float(s) - exact) <= 0.5 * ulp * (1 + 1e-9) + 1e-300


def assert_printed(text: str, exact: float, index: int = 0) -> None:
    """The index-th number in `text` equals `exact` to its printed precision."""
    found = numbers(text)
    assert len(found) > index, f"no number #{index} in {text!r}"
    assert agrees(found[index], exact), f"{found[index]!r} in {text!r} is not {exact!r} to the printed digits"
