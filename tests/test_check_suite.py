"""The checker on a suite of right and deliberately wrong gradients (benches/check_suite.py; the
whole suite with every peer beside us is `make bench-check`). Pinned here on a fast subset, one
map of each kind: no wrong gradient agrees, every right float64 gradient is verified, every right
float32 gradient is verified within evaluation noise with the noise named, and a verdict costs
at most 95 evaluations."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import ferromotion as fm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benches"))
import check_suite as cs  # noqa: E402

CASES = cs.fast_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_suite_verdict(case: cs.Case) -> None:
    f = cs.Counted(case.map.f)
    r = fm.check_gradient(f, case.grad, case.map.x)
    assert r.evaluations == f.calls <= 95
    if not case.right:
        assert r.verdict in ("not-verified", "refused") and not r.agrees, r.why
    elif case.map.float32:
        assert r.verdict == "verified-within-noise", r.why
        assert "float32" in r.noise["cause"] and "float32" in r.why
    else:
        assert r.verdict == "verified", r.why


def test_the_suite_has_every_kind_and_bug() -> None:
    assert {m.kind for m in cs.MAPS} == {"smooth", "badly-scaled", "near-optimum", "float32", "kinked", "engine"}
    assert {c.bug for c in cs.cases()} == {"right", *cs.BUGS}
    assert {c.map.kind for c in CASES} == {m.kind for m in cs.MAPS}
