"""`make site`: the lab as one static folder that works from any sub-path of a static host.

scripts/site.sh writes the folder (here into a temporary directory, from this checkout's built
web/, as `make site` does into dist/site/); it is put three folders deep under a host's root,
served by a plain static server (Python's, not the lab's own) and driven in Debian's Chromium
from there: the slider moves, the readouts come, and no request leaves the sub-path.
"""

from __future__ import annotations

import functools
import http.server
import subprocess
import threading
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

import pytest
from labkit import ROOT, WEB, commit_prediction, new_page, open_lab, readout, settle, slide_to
from playwright.sync_api import Browser, Page

SUBPATH = "/courses/physics-101/ferromotion-lab"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (WEB / "pkg" / "ferromotion_wasm_bg.wasm").is_file():
        pytest.fail("web/pkg/ is missing: run `make wasm` to build the WebAssembly core first")
    out = tmp_path_factory.mktemp("host") / SUBPATH.strip("/")
    p = subprocess.run([str(ROOT / "scripts" / "site.sh"), str(out)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return out


class _StaticHost(http.server.SimpleHTTPRequestHandler):
    """A plain static host (not the lab's server): files as they are, .wasm as application/wasm."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".js": "text/javascript"}

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def host(site: Path) -> Iterator[str]:
    """The host's root (three folders above the site) served on 127.0.0.1 by a generic static server."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_StaticHost, directory=str(site.parents[2])))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_folder_is_the_lab_and_nothing_else(site: Path) -> None:
    files = sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.is_file())
    web = sorted(str(p.relative_to(WEB)) for p in WEB.rglob("*")
                 if p.is_file() and (p.parent.name != "pkg" or p.name in ("ferromotion_wasm.js",
                                                                         "ferromotion_wasm_bg.wasm")))
    assert files == web
    for name in files:
        assert (site / name).read_bytes() == (WEB / name).read_bytes(), name


def assert_under_sub_path(page: Page, fetched: str) -> None:
    """No console error, every request stayed under the sub-path (nothing was asked of the
    host's root), and ``fetched`` (a path inside the site) was among them."""
    assert page.console_errors == []  # type: ignore[attr-defined]
    for url in page.requests:  # type: ignore[attr-defined]
        parts = urlsplit(url)
        assert parts.scheme == "data" or parts.path.startswith(SUBPATH + "/"), url
    assert any(u.endswith(SUBPATH + fetched) for u in page.requests)  # type: ignore[attr-defined]


@pytest.mark.parametrize("entry", ["/", "/index.html"])
def test_the_lab_runs_under_a_sub_path(browser: Browser, host: str, entry: str) -> None:  # noqa: F811
    base = host + SUBPATH
    page = new_page(browser, base)
    try:
        page.goto(base + entry)
        page.wait_for_function("window.ferromotionLab && window.ferromotionLab.ready")
        commit_prediction(page)
        slide_to(page, 7.0)
        assert page.locator("#k-label").inner_text() == "k = 1.0e7 N/m"
        for name in ("forward", "gradient", "sign", "exponent"):
            assert readout(page, name) not in ("", "…"), name
        settle(page)
        assert_under_sub_path(page, "/pkg/ferromotion_wasm_bg.wasm")
    finally:
        page.context.close()


def test_the_python_panel_runs_under_a_sub_path(browser: Browser, host: str) -> None:  # noqa: F811
    """The site's Python panel assets (pyodide, the in-browser package and the result classes
    it shares with the native package) load from the sub-path, and its numbers are native's."""
    import ferromotion as fm

    base = host + SUBPATH
    page = new_page(browser, base)
    try:
        open_lab(page, base)
        page.locator("#python > summary").click()
        page.wait_for_function("document.getElementById('python').dataset.ready === 'true'", timeout=120_000)
        page.locator("#py-code").fill("import ferromotion as fm\nprint(repr(fm.fixed(fm.Drop(), k=1e6, dt=1e-4)))\n"
                                      "fm.sweep(fm.Drop(), k=fm.log_grid(4, 8, 2)).plot(mark_k=1e6)")
        page.locator("#py-run").click()
        page.wait_for_function("Number(document.getElementById('python').dataset.runs || 0) > 0", timeout=60_000)
        assert page.locator("#py-output span.py-err").count() == 0, page.locator("#py-output").inner_text()
        assert page.locator("#py-output").inner_text().strip() == repr(fm.fixed(fm.Drop(), k=1e6, dt=1e-4))
        assert page.locator("#py-plot-gradient svg polyline.series").count() == 1
        assert_under_sub_path(page, "/py/ferromotion/_results.py")
    finally:
        page.context.close()


def test_a_root_relative_url_is_refused(tmp_path: Path) -> None:
    """site.sh stops instead of writing a folder that would break under a sub-path."""
    web = tmp_path / "web"
    for sub in ("css", "js", "pkg"):
        (web / sub).mkdir(parents=True)
    (web / "index.html").write_text('<script type="module" src="/js/ui.js"></script>')
    (web / "pkg" / "ferromotion_wasm.js").write_text("")
    (web / "pkg" / "ferromotion_wasm_bg.wasm").write_bytes(b"\0asm")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    for name in ("site.sh", "common.sh"):
        (scripts / name).write_bytes((ROOT / "scripts" / name).read_bytes())
        (scripts / name).chmod(0o755)
    p = subprocess.run([str(scripts / "site.sh"), str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "/js/ui.js" in p.stderr and "sub-path" in p.stderr
    assert not (tmp_path / "out").exists()
