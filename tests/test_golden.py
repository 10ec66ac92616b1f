"""Python's numbers equal the golden dump, bit for bit: the same file the WebAssembly build
is checked against (tests/golden/parity.mjs), so Python, native Rust and WebAssembly agree.

`make test` writes target/golden/native.json with the core's `golden_dump` example over
tests/golden/drops.json before pytest runs. When the file is missing, this test makes it
(cargo run --release -p ferromotion-core --example golden_dump) and fails if it cannot.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

import ferromotion as fm

ROOT = Path(__file__).resolve().parents[1]
DROPS = ROOT / "tests" / "golden" / "drops.json"
NATIVE = ROOT / "target" / "golden" / "native.json"
DUMP = "cargo run --release -p ferromotion-core --example golden_dump > target/golden/native.json"


def _cargo() -> str:
    found = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    if not Path(found).exists():
        pytest.fail(f"{NATIVE} is missing and cargo was not found: run the golden dump first ({DUMP}, "
                    "or `make test`)")
    return found


@pytest.fixture(scope="module")
def native() -> List[Dict[str, Any]]:
    if not NATIVE.exists():
        NATIVE.parent.mkdir(parents=True, exist_ok=True)
        p = subprocess.run([_cargo(), "run", "--quiet", "--release", "-p", "ferromotion-core", "--example",
                            "golden_dump"], cwd=ROOT, capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            pytest.fail(f"{NATIVE} is missing and the golden dump failed; run it by hand ({DUMP}):\n{p.stderr}")
        tmp = NATIVE.with_suffix(".json.tmp")
        tmp.write_text(p.stdout)
        tmp.replace(NATIVE)
    data: List[Dict[str, Any]] = json.loads(NATIVE.read_text())
    return data


@pytest.fixture(scope="module")
def drops() -> List[Dict[str, Any]]:
    data: List[Dict[str, Any]] = json.loads(DROPS.read_text())
    return data


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _compare(a: Any, b: Any, where: str, diffs: List[str]) -> int:
    """Compare native `a` with Python's `b`: floats by their bits, everything else by value.
    Returns how many numbers were compared."""
    if isinstance(a, bool) or isinstance(b, bool):
        if a is not b:
            diffs.append(f"{where}: native {a!r} vs python {b!r}")
        return 0
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if type(a) is not type(b) or (_bits(a) != _bits(b) if isinstance(a, float) else a != b):
            diffs.append(f"{where}: native {a!r} vs python {b!r}")
        return 1
    if isinstance(a, dict) and isinstance(b, dict):
        n = 0
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                diffs.append(f"{where}.{key}: present on one side only")
                continue
            n += _compare(a[key], b[key], f"{where}.{key}", diffs)
        return n
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            diffs.append(f"{where}: lengths {len(a)} vs {len(b)}")
            return 0
        return sum(_compare(x, y, f"{where}[{i}]", diffs) for i, (x, y) in enumerate(zip(a, b)))
    if a != b:
        diffs.append(f"{where}: native {a!r} vs python {b!r}")
    return 0


def _report(diffs: List[str], numbers: int) -> str:
    return (f"{len(diffs)} differences in {numbers} numbers (a stale dump? regenerate it: {DUMP}); "
            "the first few:\n  " + "\n  ".join(diffs[:8]))


def test_the_dump_covers_every_drop(native: List[Dict[str, Any]], drops: List[Dict[str, Any]]) -> None:
    assert len(native) == len(drops), f"native.json has {len(native)} entries for {len(drops)} drops: {DUMP}"
    assert len(drops) > 100


def test_evaluate_equals_the_golden_dump_bit_for_bit(native: List[Dict[str, Any]],
                                                     drops: List[Dict[str, Any]]) -> None:
    diffs: List[str] = []
    numbers = 0
    for i, (want, drop) in enumerate(zip(native, drops)):
        where = f"drop {i} (k = {drop['k']}, dt = {drop['dt']})"
        try:
            got: Any = fm.evaluate(drop)
        except fm.FerroError as e:
            got = {"error": type(e).__name__.replace("ScenarioError", "Scenario"), "message": str(e)}
        numbers += _compare(want, got, where, diffs)
    assert not diffs, _report(diffs, numbers)
    assert numbers > 10_000


def test_typed_api_equals_the_golden_dump_bit_for_bit(native: List[Dict[str, Any]],
                                                      drops: List[Dict[str, Any]]) -> None:
    """The routes through their typed wrappers (numpy arrays, row-major) give the same bits."""
    diffs: List[str] = []
    numbers = 0
    for i, (want, sc) in enumerate(zip(native, drops)):
        if "error" in want:
            continue
        d = fm.Drop(**sc["drop"])
        k, dt = sc["k"], sc["dt"]
        routes = {
            "exact": fm.exact(d),
            "fixed": fm.fixed(d, k, dt),
            "corrected": fm.corrected(d, k, dt),
            "flow": fm.flow(d, k),
            "tolerance": fm.tolerance(d, k, rtol=1e-6, events=True),
            "tolerance_forward": fm.tolerance(d, k, rtol=1e-6, events=True, jacobian="forward"),
        }
        if want["rk4"] is not None:
            routes["rk4"] = fm.rk4(d, k, dt)
        for name, r in routes.items():
            flat = {"state": r.state.tolist(), "jacobian": r.jacobian.ravel().tolist()}
            if name != "exact":
                flat["cost"] = {"steps": r.steps, "rejected_steps": r.rejected_steps, "force_evals": r.force_evals,
                                "state_force_evals": r.state_force_evals, "rollouts": r.rollouts}
            expected = {key: want[name][key] for key in flat}
            numbers += _compare(expected, flat, f"drop {i} {name}", diffs)
        numbers += _compare(want["blame"], fm.blame(d, k, dt).to_dict(), f"drop {i} blame", diffs)
        numbers += _compare(want["restitution_limit"], fm.limit_restitution(d), f"drop {i} e_limit", diffs)
        numbers += _compare(want["restitution_at_k"], fm.realised_restitution(d, k), f"drop {i} e_k", diffs)
    assert not diffs, _report(diffs, numbers)
    assert numbers > 10_000
