"""Conformance fixtures as data: contact problems with an exact rigid answer that any engine's CI
can run, with or without this package.

Each fixture is one JSON document of schema ``ferromotion.fixture/1`` (``fixture.schema.json``
beside this module describes it): initial state, parameters, horizon, the exact x(T) and
J = dx(T)/dx(0), the tolerances and what each verdict means. The numbers are the core's
(``experiments::conformance``): ``drop`` is ``fm.exact(fm.Drop())``; ``slope`` is a ball on a
frictionless plane inclined by 0.3 rad, its answer in closed form (parabolic flight, impact
times from a quadratic, saltation matrices), checked against central differences and against
``fm.hybrid_jacobian`` of ``fm.SlopeBall`` in the core's tests.

* :func:`export_fixtures` (``ferromotion fixtures export DIR``) writes them and the schema;
* :func:`load_fixture` reads one back, refusing a bad file with its path and the field at fault;
* :func:`conformance` (``fm.conformance``) judges an engine's x(T) and J against one;
* :func:`conformance_engine` (``ferromotion conformance --engine NAME``, ``ferromotion audit
  --engine NAME --fixture NAME``) runs a real engine on the fixtures (``drop`` in every engine;
  ``slope``, the V-groove's three and the ``cylinder`` where the adapter can express them:
  MuJoCo, MJX, Newton (not the cylinder), Drake; docs/engines.md) at the fixture's suggested dt
  and a few stiffnesses. Where the exact answer has no Jacobian (``ferromotion.fixture/2``'s
  ``not_differentiable`` and ``set_valued``) the core's verdict names the piece or the outcome
  the engine's answer is nearest, or says it averages them or picks neither.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from .. import _core
from .._core import FixtureError

__all__ = ["FIXTURE_SCHEMA", "SCHEMA_FILE", "FixtureError", "Conformance", "ConformanceRun", "fixtures",
           "export_fixtures", "load_fixture", "conformance", "conformance_engine", "run_fixture"]

#: The ``schema`` field of every fixture document.
FIXTURE_SCHEMA = "ferromotion.fixture/1"
#: The JSON Schema of a fixture document, shipped in the package.
SCHEMA_FILE = Path(__file__).with_name("fixture.schema.json")


def fixtures() -> Dict[str, Dict[str, Any]]:
    """Every shipped fixture, by name, as the document the JSON file holds."""
    return {name: json.loads(text) for name, text in _core.fixtures()}


def export_fixtures(directory: Union[str, Path]) -> List[Path]:
    """Write each fixture as ``NAME.json`` and the schema as ``fixture.schema.json`` into ``directory``."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in _core.fixtures():
        p = out / f"{name}.json"
        p.write_text(text + "\n", encoding="utf-8")
        written.append(p)
    schema = out / SCHEMA_FILE.name
    schema.write_text(SCHEMA_FILE.read_text(encoding="utf-8"), encoding="utf-8")
    return written + [schema]


def load_fixture(source: Union[str, Path, Dict[str, Any]]) -> Dict[str, Any]:
    """A validated fixture document from a shipped name (``"drop"``, ``"slope"``), a file, or a dict.

    Raises :class:`ferromotion.FixtureError` (a ``FerroError`` and a ``ValueError``), the core's
    refusal: ``"PATH: field 'exact.jacobian[2]': 2 entries, initial_state has 4"``, or
    ``"PATH: reason"`` when the whole file is at fault (unreadable, not JSON, too large or too deep).
    """
    if isinstance(source, dict):
        try:  # NaN and Infinity are written as such: the core refuses them naming their field
            text = json.dumps(source)
        except TypeError as e:  # a value JSON has no type for
            raise FixtureError(f"fixture document: not JSON: {e}") from None
        return dict(_core.read_fixture(text))
    if isinstance(source, str) and source in dict(_core.fixtures()):
        return fixtures()[source]
    return dict(_core.read_fixture_file(str(source)))


@dataclasses.dataclass(frozen=True)
class Conformance:
    """The core's verdict on an engine's x(T) and J against a fixture.

    Attributes
    ----------
    fixture : str
    state_error, gradient_error : float
        max|x - x*| / max|x*| and max|J - J*| / max|J*|.
    key, key_exact : float
        The engine's and the exact value of the fixture's key entry of J.
    sign : str or None
        ``right``, ``wrong`` or ``right_far_off`` (the sign line of the key entry); None for a
        set-valued fixture (no derivative exists: ``gradient_error`` and ``key_exact`` are None too).
    verdict : str
        ``conforms``, ``right``, ``right_far_off`` or ``wrong``; ``not_differentiable`` (judged against
        the nearest piece) or ``set_valued`` where the exact answer has no Jacobian.
    meaning : str
        The fixture's words for that verdict.
    outcome : str or None
        A v2 fixture's kind of derivative: ``differentiable``, ``not_differentiable``, ``set_valued``.
    pieces : dict or None
        Not differentiable: the piece the engine's J is nearest, or that it averages them
        (``{"among", "distances", "to_mean", "nearest", "says"}``, the core's decision).
    outcomes : dict or None
        Set-valued: the order's outcome the engine's x(T) is nearest (the one its tie-breaking
        picked), or that it lands between them (``nearest`` None), in the same form.
    """

    fixture: str
    state_error: float
    gradient_error: Optional[float]
    key: float
    key_exact: Optional[float]
    sign: Optional[str]
    verdict: str
    meaning: str
    outcome: Optional[str] = None
    pieces: Optional[Dict[str, Any]] = None
    outcomes: Optional[Dict[str, Any]] = None

    @property
    def nearest(self) -> str:
        """Where the engine's answer sits among the pieces or outcomes, in words ('' when the
        fixture has one Jacobian)."""
        near = self.pieces or self.outcomes
        return str(near["says"]) if near else ""

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


def conformance(fixture: Union[str, Path, Dict[str, Any]], state: Any, gradient: Any) -> Conformance:
    """Judge an engine's ``state`` = x(T) and ``gradient`` = J = dx(T)/dx(0) against a fixture.

    Parameters
    ----------
    fixture : str, Path or dict
        A shipped fixture's name, a fixture file, or a fixture document.
    state : array (n,)
    gradient : array (n, n)
        ``gradient[i, j] = d x_i(T) / d x_j(0)``.

    Examples
    --------
    >>> import ferromotion as fm
    >>> drop = fm.Drop()
    >>> r = fm.fixed(drop, 1e6, 1e-4)
    >>> fm.conformance("drop", r.state, r.jacobian).verdict
    'wrong'
    >>> e = fm.exact(drop)
    >>> fm.conformance("drop", e.state, e.jacobian).verdict
    'conforms'
    """
    doc = load_fixture(fixture)
    out = _core.conformance(json.dumps(doc), np.asarray(state, dtype=float), np.asarray(gradient, dtype=float))
    # Fields the core leaves out (a v1 fixture has no outcome, pieces or outcomes) are None.
    got: Dict[str, Any] = {f.name: out.get(f.name) for f in dataclasses.fields(Conformance)}
    return Conformance(**got)


def run_fixture(adapter: Any, doc: Dict[str, Any], k: float, dt: float, x0: Optional[Sequence[float]] = None,
                jac: bool = True) -> Any:
    """(x(T), J or None) of an engine adapter on a fixture, by the adapter's ``fixture_<name>``
    method; None when it has none (it cannot express that fixture)."""
    from ._adapter import fixture_method

    run = fixture_method(adapter, str(doc["name"]))
    if run is None:
        return None
    x = np.asarray(doc["initial_state"] if x0 is None else x0, dtype=float)
    return run(doc, k, dt, x, jac=jac)


@dataclasses.dataclass(frozen=True)
class ConformanceRun:
    """:func:`conformance_engine`'s rows: one per (fixture, k), with the engine's numbers."""

    engine: str
    version: str
    gradient_route: str
    dt: float
    rows: List[Dict[str, Any]]
    skipped: List[str]

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)

    def table(self) -> str:
        lines = [f"ferromotion conformance --engine {self.engine} ({self.version}), dt = {self.dt:g} s",
                 f"engine gradient: {self.gradient_route}",
                 "state error = max|x - x*| / max|x*|; grad. error = max|J - J*| / max|J*|; key = the fixture's "
                 "key entry of J (drop: dv(T)/dy0; slope: dv_z(T)/dp_z0; V-groove, cylinder: dv_x(T)/dp_x0)", "",
                 f"{'fixture':<17}  {'k (N/m)':>9}  {'key':>10}  {'exact key':>10}  {'state error':>11}  "
                 f"{'grad. error':>11}  verdict"]

        def num(v: Any, fmt: str) -> str:  # None where no derivative exists
            return "-" if v is None else format(v, fmt)

        for r in self.rows:
            c = r["conformance"]
            near = (c.get("pieces") or c.get("outcomes") or {}).get("says")
            lines.append(f"{r['fixture']:<17}  {r['k']:9.2e}  {num(c['key'], '10.4g')}  {num(c['key_exact'], '10.4g')}  "
                         f"{num(c['state_error'], '11.3e')}  {num(c['gradient_error'], '11.3e')}  {c['verdict']}"
                         + (f" (nearest: {near})" if near else ""))
        lines.append("")
        meanings = {r["conformance"]["verdict"]: r["conformance"]["meaning"] for r in self.rows}
        lines.extend(f"{v}: {m}" for v, m in meanings.items())
        lines.extend(self.skipped)
        return "\n".join(lines)

    def write_receipts(self, directory: Union[str, Path]) -> List[Path]:
        """One JSON receipt per row: the engine, its numbers and the core's verdict."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for r in self.rows:
            p = out / f"{self.engine}.{r['fixture']}.k{r['k']:.0e}.json"
            p.write_text(json.dumps({"schema": "ferromotion.conformance/1", "engine": self.engine,
                                     "version": self.version, "gradient_route": self.gradient_route,
                                     "dt": self.dt, **r}, indent=2) + "\n", encoding="utf-8")
            paths.append(p)
        return paths


def conformance_engine(engine: str, names: Sequence[Union[str, Path, Dict[str, Any]]] = ("drop", "slope"),
                       stiffness: Sequence[float] = (1e4, 1e6), dt: Optional[float] = None,
                       adapter: Any = None) -> ConformanceRun:
    """Run a real engine on the fixtures (shipped names, files or documents) and judge each
    (fixture, k) with :func:`conformance`."""
    from . import engine_adapter

    ad = engine_adapter(engine) if adapter is None else adapter
    rows: List[Dict[str, Any]] = []
    skipped: List[str] = []
    step = None
    for name in names:
        doc = load_fixture(name)
        step = float(doc["suggested"]["dt"][0]) if dt is None else float(dt)
        for k in stiffness:
            got = run_fixture(ad, doc, float(k), step)
            if got is None:
                skipped.append(f"{doc['name']}: the {engine} adapter cannot express this fixture")
                break
            x, j = got
            c = conformance(doc, x, j)
            rows.append({"fixture": doc["name"], "k": float(k), "state": np.asarray(x).tolist(),
                         "jacobian": np.asarray(j).tolist(), "conformance": c.to_dict()})
    return ConformanceRun(engine=engine, version=ad.version, gradient_route=ad.gradient_route,
                          dt=float(step if step is not None else 0.0), rows=rows, skipped=skipped)
