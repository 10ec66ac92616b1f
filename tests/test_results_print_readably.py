"""Results print as something a person can read: a short line for `repr`, and a table that
fits a terminal. The numbers in what is printed are the core's own (read from its document,
never recomputed), and the dict-style access that notebooks and the CLI use keeps working."""

from __future__ import annotations

import json

import ferromotion as fm
from ferromotion import _core


def untimed(doc: dict) -> dict:
    """The core's budget document without its wall times (each call measures its own)."""
    rows = [{k: v for k, v in r.items() if k != "wall_s"} for r in doc["rows"]]
    return {**{k: v for k, v in doc.items() if k not in ("rows", "wall_resolution_s")}, "rows": rows}


def test_the_equal_budget_prints_one_short_line_and_a_table_of_the_cores_numbers() -> None:
    b = fm.equal_budget(k=1e6, budget=8_000)
    core = _core.equal_budget(fm.Drop(), {"k": 1e6, "budget": 8_000})

    # The core's document, by key, as before (notebook 06 and `audit --json` read it so).
    assert isinstance(b, dict) and isinstance(b, fm.EqualBudget)
    assert untimed(b) == untimed(core)
    assert untimed(json.loads(json.dumps(b))) == untimed(core)
    assert type(b.to_dict()) is dict and untimed(b.to_dict()) == untimed(core)

    # repr: one line a person reads, naming what it holds and how to see the table.
    text = repr(b)
    assert "\n" not in text and len(text) <= 200, text
    assert "8,000" in text and "format_table()" in text
    wrong = [r["route"] for r in core["rows"] if r["sign"] == "wrong"]
    assert wrong and all(route in text for route in wrong), text

    # The table: one line per route and per probe, each carrying that row's own numbers.
    table = b.format_table()
    lines = table.splitlines()
    assert max(len(line) for line in lines) <= 120, table
    for r in b["rows"]:
        line = next(line for line in lines if line.strip().startswith(r["route"] + " ") or line.strip() == r["route"])
        if r["gradient_error"] is None:
            continue
        assert f"{r['gradient_error']:.2e}" in line and f"{r['dv_dy0']:.4f}" in line and f"{r['force_evals']:,}" in line
        assert ("WRONG" in line) == (r["sign"] == "wrong"), line
    for p in b["probe_trap"]:
        assert any(line.split()[:2] == [f"{p['probe']:.0e}", f"{p['euler_dv_dy0']:.4f}"] for line in lines), p

