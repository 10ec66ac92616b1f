"""What every test folder shares, as a plain module: the command-line runner, a document
editor and Chromium's launch.

Test modules import these by name (``from support import run_cli``): pytest puts tests/ on
sys.path when it loads tests/conftest.py, for tests/ and for tests/engines/ and tests/bench_env/
alike (the benches put it there themselves). Only the standard library is imported here, so the
engines' and the bench's own environments (.venv-engines, .venv-bench) load it too; playwright
is imported when a browser is launched. pytest's fixtures live in tests/conftest.py.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Dict, List

# The installed `ferromotion` command of the interpreter running the tests.
FERROMOTION: List[str] = [sys.executable, "-m", "ferromotion"]

# Debian's Chromium, driven by Playwright. Never run `playwright install`.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def run_cli(*args: str, timeout: float = 300, **kwargs: Any) -> subprocess.CompletedProcess:
    """Run ``ferromotion ARGS...`` in a child process and capture its output as text."""
    return subprocess.run([*FERROMOTION, *args], capture_output=True, text=True, timeout=timeout, **kwargs)


def set_field(doc: Dict[str, Any], path: str, value: Any) -> None:
    """Set the dotted field ``path`` (``"exact.jacobian"``) of a JSON document, or delete it
    when ``value`` is None: a bad document made from a good one."""
    *parents, last = path.split(".")
    for key in parents:
        doc = doc[key]
    if value is None:
        del doc[last]
    else:
        doc[last] = value


def launch_chromium(playwright: Any) -> Any:
    """Launch headless Chromium (/usr/bin/chromium) from a ``sync_playwright()`` context."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
