"""The hand-written stub of ferromotion._core matches the built module, and the package
type-checks against it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ferromotion

PACKAGE = Path(ferromotion.__file__).resolve().parent


def test_stubtest() -> None:
    p = subprocess.run([sys.executable, "-m", "mypy.stubtest", "ferromotion._core"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr


def test_package_type_checks() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--disallow-untyped-defs", str(PACKAGE)],
        capture_output=True, text=True, timeout=600,
    )
    assert p.returncode == 0, p.stdout + p.stderr


def test_stub_and_marker_ship_with_the_package() -> None:
    assert (PACKAGE / "_core.pyi").is_file()
    assert (PACKAGE / "py.typed").is_file()
