"""`ferromotion lab`: serves web/ on 127.0.0.1 with the right types, and nothing outside it.

Most cases run against a small stand-in lab in a temporary directory, next to a file that
must never be served; one runs the real command on this checkout's web/ (built by
`make wasm`, as `make test` does before pytest).
"""

from __future__ import annotations

import http.client
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator, Tuple

import pytest
from support import FERROMOTION, run_cli

ROOT = Path(__file__).resolve().parents[1]
SECRET = "do-not-serve-me"

# Request targets sent byte for byte (http.client does not normalise them).
TRAVERSALS = [
    "/../pyproject.toml",
    "/../secret.txt",
    "/%2e%2e/secret.txt",
    "/%2E%2E/secret.txt",
    "/..%2fsecret.txt",
    "/%2e%2e%2fsecret.txt",
    "/pkg/../../secret.txt",
    "/pkg/%2e%2e/%2e%2e/secret.txt",
    "/./../secret.txt",
    "/..%5csecret.txt",
    "/%5c..%5csecret.txt",
    "/%252e%252e/secret.txt",
    "/.%2e/secret.txt",
    "/%2e./secret.txt",
    "../secret.txt",
    "//../secret.txt",
    "/%2fsecret.txt",
    "/%00/../secret.txt",
    "/link/secret.txt",  # a symbolic link inside the lab pointing out of it
    "/linked-secret.txt",
    "http://127.0.0.1/../secret.txt",
]


def start(*args: str) -> Tuple[subprocess.Popen, str]:
    """Run `ferromotion lab ARGS --port 0` and return the process and the URL it prints."""
    proc = subprocess.Popen([*FERROMOTION, "lab", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: "queue.Queue[str]" = queue.Queue()
    threading.Thread(target=lambda: lines.put(proc.stdout.readline()), daemon=True).start()  # type: ignore[union-attr]
    try:
        line = lines.get(timeout=30)
    except queue.Empty:
        proc.kill()
        pytest.fail("`ferromotion lab` printed no URL within 30 s")
    assert line.startswith("ferromotion lab: serving"), (line, proc.stderr.read() if proc.poll() else "")  # type: ignore[union-attr]
    url = next(w for w in line.split() if w.startswith("http://127.0.0.1:"))
    return proc, url


def stop(proc: subprocess.Popen) -> int:
    proc.terminate()
    return proc.wait(timeout=10)


def get(url: str, target: str, method: str = "GET") -> Tuple[int, str, bytes]:
    host, port = url[len("http://"):].rstrip("/").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.putrequest(method, target, skip_host=False, skip_accept_encoding=True)
    conn.endheaders()
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, r.getheader("Content-Type") or "", body


@pytest.fixture(scope="module")
def fake_lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("lab")
    (base / "secret.txt").write_text(SECRET)
    web = base / "web"
    (web / "pkg").mkdir(parents=True)
    (web / "js").mkdir()
    (web / "index.html").write_text("<!doctype html><title>lab</title>")
    (web / "pkg" / "ferromotion_wasm.js").write_text("export default 1;")
    (web / "pkg" / "ferromotion_wasm_bg.wasm").write_bytes(b"\0asm\1\0\0\0")
    (web / "js" / "ui.js").write_text("console.log(1);")
    (web / "link").symlink_to(base, target_is_directory=True)
    (web / "linked-secret.txt").symlink_to(base / "secret.txt")
    return web


@pytest.fixture(scope="module")
def fake_url(fake_lab: Path) -> Iterator[str]:
    proc, url = start("--dir", str(fake_lab))
    yield url
    assert stop(proc) == 0


@pytest.mark.parametrize("target, content_type", [
    ("/", "text/html; charset=utf-8"),
    ("/index.html", "text/html; charset=utf-8"),
    ("/pkg/ferromotion_wasm_bg.wasm", "application/wasm"),
    ("/pkg/ferromotion_wasm.js", "text/javascript; charset=utf-8"),
    ("/js/ui.js?v=2", "text/javascript; charset=utf-8"),
])
def test_serves_the_lab_with_the_right_types(fake_url: str, target: str, content_type: str) -> None:
    status, ctype, body = get(fake_url, target)
    assert status == 200 and ctype == content_type and body


@pytest.mark.parametrize("target", TRAVERSALS)
def test_nothing_outside_the_lab_is_reachable(fake_url: str, target: str) -> None:
    status, _, body = get(fake_url, target)
    assert status in (400, 404), (target, status)
    assert SECRET.encode() not in body and b"[project]" not in body


@pytest.mark.parametrize("target", ["/js/", "/js", "/pkg/", "/missing.html"])
def test_no_directory_listings_and_404_for_the_rest(fake_url: str, target: str) -> None:
    status, _, body = get(fake_url, target)
    assert status == 404 and b"ui.js" not in body and b"ferromotion_wasm" not in body


def test_only_get_and_head(fake_url: str) -> None:
    assert get(fake_url, "/index.html", "HEAD")[0] == 200
    assert get(fake_url, "/index.html", "POST")[0] == 501


def test_the_checkouts_web_directory_by_default() -> None:
    if not (ROOT / "web" / "pkg" / "ferromotion_wasm_bg.wasm").is_file():
        pytest.fail("web/pkg/ is missing: run `make wasm` to build the WebAssembly core first")
    proc, url = start()
    try:
        status, ctype, body = get(url, "/pkg/ferromotion_wasm_bg.wasm")
        assert status == 200 and ctype == "application/wasm" and body[:4] == b"\0asm"
        assert get(url, "/")[0] == 200
        for target in ("/../pyproject.toml", "/%2e%2e/pyproject.toml", "/%2e%2e%2fpyproject.toml",
                       "/pkg/../../Cargo.toml", "/../.git/config"):
            status, _, body = get(url, target)
            assert status == 404 and b"[project]" not in body and b"[workspace]" not in body, target
    finally:
        assert stop(proc) == 0


def run_lab(*args: str) -> subprocess.CompletedProcess:
    return run_cli("lab", "--port", "0", *args, timeout=60)


def test_missing_build_tells_the_user_to_run_make_wasm(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<!doctype html>")
    p = run_lab("--dir", str(tmp_path))
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.startswith("ferromotion: error: ") and "make wasm" in p.stderr
    assert "Traceback" not in p.stderr


def test_missing_lab_directory_is_a_clear_error(tmp_path: Path) -> None:
    p = run_lab("--dir", str(tmp_path / "nowhere"))
    assert p.returncode == 1 and "no browser lab" in p.stderr and "Traceback" not in p.stderr


def test_a_busy_port_is_a_clear_error(fake_lab: Path, fake_url: str) -> None:
    port = fake_url.rstrip("/").rsplit(":", 1)[1]
    p = run_cli("lab", "--dir", str(fake_lab), "--port", port, timeout=60)
    assert p.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in p.stderr and "Traceback" not in p.stderr


def test_listens_on_loopback_only(fake_url: str) -> None:
    assert fake_url.startswith("http://127.0.0.1:")




def test_make_lab_runs_the_same_server_without_the_package(fake_lab: Path) -> None:
    """scripts/lab.sh (`make lab`) runs labserver.py as a script with python3 -I: no venv, no compiled
    core, and the same hardened handler."""
    script = ROOT / "python" / "ferromotion" / "labserver.py"
    lab_sh = (ROOT / "scripts" / "lab.sh").read_text()
    assert "python/ferromotion/labserver.py" in lab_sh
    proc = subprocess.Popen([sys.executable, "-I", str(script), "--dir", str(fake_lab), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        err = proc.stderr.read() if proc.poll() is not None else ""  # type: ignore[union-attr]
        assert line.startswith("ferromotion lab: serving"), (line, err)
        url = next(w for w in line.split() if w.startswith("http://127.0.0.1:"))
        assert get(url, "/pkg/ferromotion_wasm_bg.wasm")[1] == "application/wasm"
        for target in TRAVERSALS:
            status, _, body = get(url, target)
            assert status in (400, 404) and SECRET.encode() not in body, target
    finally:
        assert stop(proc) == 0
