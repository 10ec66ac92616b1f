"""A route's answer read lazily from the core: the same Route whichever way it was built, its
arrays made once on first access, and options read the same by the fast path and by pythonize."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ferromotion as fm

WALL = ("wall_s", "wall_resolution_s")


def _without_wall(r: fm.Route) -> dict:
    return {k: v for k, v in r.to_dict().items() if k not in WALL}


def test_the_native_answer_and_the_core_document_give_the_same_route() -> None:
    # The sweep's exact reference arrives as the core's RouteResult document (a dict), the
    # route call as the native RouteAnswer: two construction paths, one Route.
    drop = fm.Drop()
    from_document = fm.sweep(drop, k=np.array([1e6])).exact
    native = fm.exact(drop)
    assert _without_wall(from_document) == _without_wall(native)
    assert repr(from_document) == repr(native)
    assert from_document.dv_dy0 == native.dv_dy0 == native.jacobian[1, 0]


def test_arrays_are_made_once_read_only_and_the_route_is_frozen() -> None:
    r = fm.fixed(fm.Drop(), k=1e6, dt=1e-4)
    assert r.jacobian is r.jacobian and r.state is r.state
    assert not r.jacobian.flags.writeable and r.jacobian.dtype == np.float64
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.steps = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.route = "exact"  # type: ignore[misc]


def test_options_read_by_the_fast_path_and_by_pythonize_agree() -> None:
    # A plain int goes through the flat JSON path; a numpy integer is not a Python int, so the
    # same options go through pythonize. The answers must be the same bits.
    drop = fm.Drop()
    fast = fm.fixed(drop, 1e6, 1e-4, max_steps=100_000)
    slow = fm.fixed(drop, 1e6, 1e-4, max_steps=np.int64(100_000))  # type: ignore[arg-type]
    assert _without_wall(fast) == _without_wall(slow)
    fast_t = fm.tolerance(drop, 1e6, rtol=1e-4, events=True, jacobian="forward")
    slow_t = fm.tolerance(drop, 1e6, rtol=np.float64(1e-4).item(), events=np.bool_(True),  # type: ignore[arg-type]
                          jacobian="forward")
    assert _without_wall(fast_t) == _without_wall(slow_t)
    # Refusals are pythonize's, naming the key, whichever path saw the dict first.
    for bad in (-1, 1.5, "8000"):
        with pytest.raises(fm.ScenarioError, match="max_steps"):
            fm.fixed(drop, 1e6, 1e-4, max_steps=bad)  # type: ignore[arg-type]


def test_route_keeps_its_dataclass_fields_and_constructor() -> None:
    r = fm.tolerance(fm.Drop(), k=1e6, rtol=1e-6, events=True)
    assert [f.name for f in dataclasses.fields(fm.Route)] == list(r.to_dict())
    copy = dataclasses.replace(r)
    assert copy.to_dict() == r.to_dict() and repr(copy) == repr(r)
    assert dataclasses.asdict(r)["probe_gap"] == r.probe_gap
