"""pytest's fixtures for every test folder: the browser lab's (``lab``, ``browser``, ``page``,
``phone``), used by name, with no import.

Nothing here is imported by a test module: shared helpers live in plain modules
(``support.py``: the command-line runner and Chromium's launch; ``labkit.py``: driving the lab).
Only pytest and the standard library are imported at the top, so the engines' and the bench's
own environments (.venv-engines, .venv-bench), which have no playwright, load this file too;
the fixtures import what they need when a test asks for them.

Each test module gets its own server and browser (``scope="module"``).
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest


@pytest.fixture(scope="module")
def lab() -> Iterator[str]:
    """Base URL of the lab served from web/ on 127.0.0.1 (an ephemeral port). The WebAssembly
    build must exist (web/pkg/, made by `make wasm`): without it the test fails, not skips."""
    from labkit import WEB, serve

    if not (WEB / "pkg" / "ferromotion_wasm_bg.wasm").is_file():
        pytest.fail("web/pkg/ is missing: run `make wasm` to build the WebAssembly core first")
    yield from serve(WEB)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium (/usr/bin/chromium) driven by Playwright."""
    from playwright.sync_api import sync_playwright
    from support import launch_chromium

    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, lab: str) -> Iterator[Any]:
    """A desktop-sized page (1280 x 900) in a fresh context (see ``labkit.new_page``)."""
    from labkit import new_page

    pg = new_page(browser, lab)
    yield pg
    pg.context.close()


@pytest.fixture
def phone(browser: Any, lab: str) -> Iterator[Any]:
    """A phone-sized page (375 x 800) in a fresh context."""
    from labkit import PHONE, new_page

    pg = new_page(browser, lab, PHONE)
    yield pg
    pg.context.close()
