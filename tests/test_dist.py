"""`make dist`: the package as a student gets it from an index.

- The wheel is one abi3 build with a manylinux tag, and auditwheel (PyPA's own checker, not
  maturin's reimplementation) agrees with the tag.
- In a fresh venv outside the repository, with no Rust toolchain on PATH and no index (the
  wheel's dependencies come from target/wheelhouse/, fetched by scripts/dist.sh), `pip install`
  of the wheel works, and `ferromotion lab` serves the lab shipped inside the package, which runs
  in Debian's Chromium: the slider moves and the readouts come.
- The sdist builds a wheel from source (Rust needed, the wasm toolchain not) that carries the lab.

Slow (installs, and the sdist compiles the extension), so marked ``dist`` and deselected by
default (pyproject's addopts); `make dist-test` builds the artefacts and runs these alone.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path
from typing import Dict, Iterator, Tuple

import pytest
from labkit import ROOT, assert_stayed_local, commit_prediction, new_page, open_lab, readout, settle, slide_to
from playwright.sync_api import Browser

pytestmark = pytest.mark.dist

DIST = ROOT / "dist"
WHEELHOUSE = ROOT / "target" / "wheelhouse"
DIST_VENV = ROOT / ".venv-dist"
LAB_FILES = ["index.html", "css/lab.css", "js/ui.js", "js/sim.js", "js/worker.js", "pkg/ferromotion_wasm.js",
             "pkg/ferromotion_wasm_bg.wasm"]


def _one(pattern: str) -> Path:
    found = sorted(DIST.glob(pattern))
    if len(found) != 1:
        pytest.fail(f"expected one {pattern} in dist/, found {[p.name for p in found]}: run `make dist` first")
    return found[0]


@pytest.fixture(scope="module")
def wheel() -> Path:
    return _one("ferromotion-*.whl")


@pytest.fixture(scope="module")
def sdist() -> Path:
    return _one("ferromotion-*.tar.gz")


def _base_python() -> str:
    """An interpreter outside any venv (the one the project's .venv was made from)."""
    return getattr(sys, "_base_executable", None) or shutil.which("python3") or "python3"


def test_the_wheel_is_abi3_and_manylinux_and_auditwheel_agrees(wheel: Path) -> None:
    m = re.fullmatch(r"ferromotion-[^-]+-cp39-abi3-(?P<platform>.+)\.whl", wheel.name)
    assert m, wheel.name
    platforms = m["platform"].split(".")
    assert any(p.startswith("manylinux") for p in platforms) and "linux_x86_64" not in platforms, platforms
    p = subprocess.run([str(DIST_VENV / "bin" / "auditwheel"), "show", str(wheel)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stdout.split())
    tag = re.search(r'consistent with the following platform tag: "([^"]+)"', text)
    assert tag and tag[1] in platforms, text
    names = zipfile.ZipFile(wheel).namelist()
    for name in LAB_FILES:
        assert f"ferromotion/lab/{name}" in names, name


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Tuple[Path, Dict[str, str]]:
    """A venv outside the repository with the wheel installed, and an environment whose PATH holds
    that venv's bin/ only: no cargo, no rustc, no checkout on sys.path."""
    home = tmp_path_factory.mktemp("student")
    venv = home / "venv"
    subprocess.run([_base_python(), "-m", "venv", str(venv)], check=True, timeout=300, cwd=home)
    env = {"PATH": str(venv / "bin"), "HOME": str(home), "LANG": "C.UTF-8", "PIP_NO_INPUT": "1",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for tool in ("cargo", "rustc", "maturin"):
        assert shutil.which(tool, path=env["PATH"]) is None, tool
    p = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--find-links",
                        str(WHEELHOUSE), str(wheel)], capture_output=True, text=True, timeout=600, env=env, cwd=home)
    assert p.returncode == 0, p.stdout + p.stderr
    return venv, env


def _start_lab(venv: Path, env: Dict[str, str]) -> Tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([str(venv / "bin" / "ferromotion"), "lab", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=env["HOME"])
    lines: "queue.Queue[str]" = queue.Queue()
    threading.Thread(target=lambda: lines.put(proc.stdout.readline()), daemon=True).start()  # type: ignore[union-attr]
    try:
        line = lines.get(timeout=60)
    except queue.Empty:
        proc.kill()
        pytest.fail("`ferromotion lab` printed no URL within 60 s")
    err = proc.stderr.read() if proc.poll() is not None else ""  # type: ignore[union-attr]
    assert line.startswith("ferromotion lab: serving"), (line, err)
    return proc, next(w for w in line.split() if w.startswith("http://127.0.0.1:")).rstrip("/")


@pytest.fixture(scope="module")
def installed_lab(fresh: Tuple[Path, Dict[str, str]]) -> Iterator[Tuple[str, str]]:
    venv, env = fresh
    proc, url = _start_lab(venv, env)
    try:
        yield url, proc.args  # type: ignore[misc]
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def test_the_installed_package_imports_from_the_venv(fresh: Tuple[Path, Dict[str, str]]) -> None:
    venv, env = fresh
    code = ("import ferromotion as fm, ferromotion.labserver as ls; "
            "print(fm.__file__); print(ls.default_root()); print(fm.fixed(fm.Drop(), k=1e6, dt=1e-4).jacobian[1][0])")
    p = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, env=env,
                       cwd=env["HOME"], timeout=120)
    assert p.returncode == 0, p.stderr
    module, root, _ = p.stdout.splitlines()
    assert Path(module).is_relative_to(venv) and not Path(module).is_relative_to(ROOT)
    assert Path(root) == Path(module).parent / "lab" and (Path(root) / "index.html").is_file()


def test_the_installed_lab_runs_in_chromium(browser: Browser, installed_lab: Tuple[str, str]) -> None:  # noqa: F811
    url, _ = installed_lab
    page = new_page(browser, url)
    try:
        open_lab(page, url)
        commit_prediction(page)
        slide_to(page, 4.0)
        assert page.locator("#k-label").inner_text() == "k = 1.0e4 N/m"
        for name in ("forward", "gradient", "sign", "exponent", "refine"):
            assert readout(page, name) not in ("", "…"), name
        settle(page)
        assert page.console_errors == []
        assert_stayed_local(page, url)
    finally:
        page.context.close()


def test_the_sdist_builds_a_wheel_from_source(sdist: Path, tmp_path: Path) -> None:
    """pip builds the sdist with maturin (no build isolation: .venv-dist has maturin, so nothing is
    fetched) and the wheel it makes carries the extension and the lab."""
    # The checkout's target/ keeps the dependencies' compiled artefacts: only our crates rebuild.
    env = dict(os.environ, PATH=f"{DIST_VENV / 'bin'}{os.pathsep}{os.environ['PATH']}",
               CARGO_TARGET_DIR=str(ROOT / "target"))
    env.pop("VIRTUAL_ENV", None)
    p = subprocess.run([str(DIST_VENV / "bin" / "python"), "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "-w", str(tmp_path / "out"), str(sdist)], capture_output=True, text=True, timeout=1800,
                       env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    (built,) = (tmp_path / "out").glob("ferromotion-*.whl")
    names = zipfile.ZipFile(built).namelist()
    assert any(re.fullmatch(r"ferromotion/_core\.abi3\.so", n) for n in names), names
    for name in LAB_FILES:
        assert f"ferromotion/lab/{name}" in names, name
