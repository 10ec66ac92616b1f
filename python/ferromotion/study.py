"""Studies: parameter grids evaluated on Dask, written point by point to a store, resumable.

A study is a declarative grid (a TOML file or a dict) over the drop's parameters, the
stiffness, the step and the tolerance route's options (``study = "drop"``), or over the
quadruped's configuration and robot (``study = "quadruped"``). Every point is evaluated by
the package's own functions (:func:`ferromotion.sweep`, :func:`ferromotion.quadruped`), so
the core computes and this module only orchestrates: it cuts the grid into tasks, runs them
on a ``dask.distributed`` cluster (an embedded ``LocalCluster`` on 127.0.0.1 by default, or
any cluster by address), and each task writes its rows to the store before it reports done.

The table is a pandas DataFrame, one row per grid point (``point`` is its index in the
grid), the point's parameters first, then ``error`` and ``error_message`` (the typed core
error a point raised, else None), then every readout. A DataFrame rather than an xarray
Dataset: a study's rows are not a dense hypercube of numbers (the rigid law has no
stiffness, the tolerance columns exist only when an rtol is swept, failed points carry a
string instead of readouts), and a long table of mixed columns is what pandas holds without
padding; a dense numeric grid becomes a Dataset in one line
(``table.set_index([...]).to_xarray()``).

The store is a directory of Parquet parts, one per task (``parts/b000017.parquet``), each
written to a temporary name and renamed into place, so a part is either complete or absent,
whatever kills its worker. Parquet parts rather than Zarr: the rows are tabular and mixed
(strings, booleans, integers, floats), written once per task and never updated, which is
what Parquet files are; concurrent tasks never touch the same file, so no locks; and the
directory is itself the table for any reader (``pandas.read_parquet(out / "parts")``).
Zarr suits dense numeric arrays written chunk by chunk into one shared array.

Needs the ``study`` extra: ``pip install 'ferromotion[study]'`` (dask, distributed, pandas,
pyarrow).

Examples
--------
>>> import ferromotion as fm
>>> s = fm.study({"study": "drop", "grid": {"k": [1e4, 1e6], "dt": 1e-4}})
>>> s.n_points, s.n_tasks
(2, 1)
>>> t = s.compute(processes=False, workers=1, progress=False)
>>> list(t["k"]), bool(t["fixed_right_sign"].iloc[1])
([10000.0, 1000000.0], False)
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import itertools
import json
import math
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

import ferromotion as fm
from ferromotion import _core

if TYPE_CHECKING:  # pragma: no cover - imports for annotations only
    import pandas as pd
    from distributed import Client

__all__ = ["Study", "StudyError", "study"]

#: The store's format tag, written into ``study.json``.
FORMAT = "ferromotion.study/1"

# Drop points per task by default: one drop point costs tens of microseconds to a third of
# a millisecond, a Dask task about a millisecond of scheduling, so a task of 500 points keeps
# the overhead at a few percent. A quadruped configuration (about a second) is a task of its own.
_DEFAULT_BATCH = {"drop": 500, "quadruped": 1}

# Drop axes, in the grid's order (k innermost). The Drop's own field names.
_DROP_FIELDS = tuple(f.name for f in dataclasses.fields(fm.Drop))
_DROP_AXES = (*_DROP_FIELDS, "dt", "rtol", "events", "k")
# Quadruped axes: fm.quadruped's keywords, the robot's parameters, then the law and stiffness.
_QUAD: Dict[str, Any] = _core.DEFAULTS["quadruped"]
_QUAD_OPTIONS = ("dt", "t_final", "refinement", "damping_ratio", "reference_mass", "clearance", "speed",
                 "typical_probe", "probe_tol", "min_probe", "max_steps", "converged_gradient")
_ROBOT_FIELDS = tuple(_QUAD["robot"])
_QUAD_AXES = (*_QUAD_OPTIONS, *_ROBOT_FIELDS, "law", "stiffness")
_INT_KEYS = {"refinement", "max_steps"}
_BOOL_KEYS = {"events", "converged_gradient"}
_LAWS = ("rigid", "penalty")
# Top-level keys of a spec, per kind.
_TOP_KEYS = {"drop": {"study", "batch", "grid", "corrected", "blame"},
             "quadruped": {"study", "batch", "grid"}}


class StudyError(Exception):
    """A study cannot run as asked: an invalid spec (the message names the key), or a store
    that holds another study or an unfinished one without ``resume``."""


def _need(module: str) -> Any:
    """Import an optional dependency of the ``study`` extra, or say how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"fm.study needs {module.split('.')[0]}: pip install 'ferromotion[study]'") from e


# ---------------------------------------------------------------------------------------
# The spec


def _read_toml(path: Path) -> Dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python < 3.11
        tomllib = _need("tomli")
    try:
        with open(path, "rb") as f:
            return dict(tomllib.load(f))
    except FileNotFoundError:
        raise StudyError(f"study spec {path}: no such file") from None
    except tomllib.TOMLDecodeError as e:
        raise StudyError(f"study spec {path}: not valid TOML: {e}") from None


def _scalar(key: str, value: Any) -> Union[float, int, bool, str]:
    """One axis value, typed by its key; the message names the key."""
    where = f"`grid.{key}`"
    if key in _BOOL_KEYS:
        if not isinstance(value, bool):
            raise StudyError(f"{where}: expected true or false, got {value!r}")
        return value
    if key == "law":
        if value not in _LAWS:
            raise StudyError(f"{where}: expected one of {list(_LAWS)}, got {value!r}")
        return str(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise StudyError(f"{where}: expected a number, got {value!r}")
    if key in _INT_KEYS:
        if isinstance(value, float) and not value.is_integer():
            raise StudyError(f"{where}: expected a whole number, got {value!r}")
        return int(value)
    if not math.isfinite(value):
        raise StudyError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def _range(key: str, table: Mapping[str, Any]) -> List[Any]:
    """``{log = [lo, hi, per_decade]}`` (10^lo .. 10^hi, fm.log_grid), ``{linspace =
    [start, stop, n]}`` or ``{geomspace = [start, stop, n]}`` (numpy's)."""
    where = f"`grid.{key}`"
    if len(table) != 1 or next(iter(table)) not in ("log", "linspace", "geomspace"):
        raise StudyError(f"{where}: a table must be {{log = [lo, hi, per_decade]}}, {{linspace = [start, stop, n]}} "
                         f"or {{geomspace = [start, stop, n]}}, got {dict(table)!r}")
    (form, args), = table.items()
    if (not isinstance(args, list) or len(args) != 3 or any(isinstance(a, bool) or not isinstance(a, (int, float))
                                                           for a in args)
            or not float(args[2]).is_integer() or args[2] < 1):
        raise StudyError(f"`grid.{key}.{form}`: expected [number, number, whole number >= 1], got {args!r}")
    if form == "log":
        try:
            values = fm.log_grid(float(args[0]), float(args[1]), int(args[2]))
        except fm.FerroError as e:
            raise StudyError(f"`grid.{key}.log`: {e}") from None
    elif form == "geomspace":
        if not (args[0] > 0 and args[1] > 0):
            raise StudyError(f"`grid.{key}.geomspace`: start and stop must be > 0, got {args!r}")
        values = np.geomspace(float(args[0]), float(args[1]), int(args[2]))
    else:
        values = np.linspace(float(args[0]), float(args[1]), int(args[2]))
    return [_scalar(key, float(v)) for v in values]


def _axis(key: str, value: Any) -> List[Any]:
    if isinstance(value, Mapping):
        return _range(key, value)
    values = value if isinstance(value, list) else [value]
    if not values:
        raise StudyError(f"`grid.{key}`: an empty list leaves the study without points")
    return [_scalar(key, v) for v in values]


def _normalise(raw: Mapping[str, Any]) -> Dict[str, Any]:
    """The spec with every axis a list of typed values, and the package defaults that stand
    for the axes left out: the study's identity (two specs that normalise alike are the
    same study)."""
    kind = raw.get("study")
    if kind not in _TOP_KEYS:
        raise StudyError(f"`study`: expected \"drop\" or \"quadruped\", got {kind!r}")
    unknown = sorted(set(raw) - _TOP_KEYS[kind])
    if unknown:
        raise StudyError(f"unknown key `{unknown[0]}` in a {kind} study (known: {sorted(_TOP_KEYS[kind])})")
    batch = raw.get("batch", _DEFAULT_BATCH[kind])
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise StudyError(f"`batch`: expected a whole number >= 1 (points per task), got {batch!r}")
    grid = raw.get("grid", {})
    if not isinstance(grid, Mapping):
        raise StudyError(f"`grid`: expected a table of axes, got {grid!r}")
    axes = _DROP_AXES if kind == "drop" else _QUAD_AXES
    unknown = sorted(set(grid) - set(axes))
    if unknown:
        raise StudyError(f"unknown key `grid.{unknown[0]}` in a {kind} study (known: {', '.join(axes)})")
    spec: Dict[str, Any] = {"study": kind, "batch": batch}
    if kind == "drop":
        for flag in ("corrected", "blame"):
            value = raw.get(flag, False)
            if not isinstance(value, bool):
                raise StudyError(f"`{flag}`: expected true or false, got {value!r}")
            spec[flag] = value
        if "events" in grid and "rtol" not in grid:
            raise StudyError("`grid.events`: the tolerance route's option needs `grid.rtol` (which runs that route)")
        # Axes always in the table; the others only when the spec sweeps or sets them.
        required: Dict[str, Any] = {"dt": _core.DEFAULTS["dt"]}
    else:
        required = {"dt": _QUAD["dt"], "law": list(_LAWS), "stiffness": list(_QUAD["stiffness"])}
    spec["grid"] = {key: _axis(key, grid[key] if key in grid else required[key])
                    for key in axes if key in grid or key in required}
    if kind == "drop" and "k" not in grid:
        raise StudyError("`grid.k`: a drop study needs its stiffnesses (N/m)")
    # What an axis left out means: the package's defaults, part of the study's identity.
    spec["defaults"] = {"drop": fm.Drop().to_dict(), "quadruped": _QUAD}
    return spec


def _spec_hash(spec: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


# ---------------------------------------------------------------------------------------
# The plan: points and tasks


def _drop_plan(spec: Mapping[str, Any]) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """Points (k innermost) and tasks: each task is a list of calls of fm.sweep, one per
    group of points that share everything but k, packed up to ``batch`` points."""
    grid = spec["grid"]
    outer = [key for key in _DROP_AXES if key != "k" and key in grid]
    routes = {"corrected": spec["corrected"], "blame": spec["blame"]}
    points: List[Dict[str, Any]] = []
    tasks: List[Dict[str, Any]] = []
    calls: List[Dict[str, Any]] = []
    size = 0
    for combo in itertools.product(*(grid[key] for key in outer)):
        params = dict(zip(outer, combo))
        ks = grid["k"]
        start = 0
        while start < len(ks):
            take = min(len(ks) - start, spec["batch"] - size)
            ids = list(range(len(points), len(points) + take))
            for k in ks[start:start + take]:
                points.append({**params, "k": k})
            calls.append({"params": params, "k": ks[start:start + take], "points": ids})
            size += take
            start += take
            if size == spec["batch"]:
                tasks.append({"id": len(tasks), "kind": "drop", "calls": calls, "routes": routes})
                calls, size = [], 0
    if calls:
        tasks.append({"id": len(tasks), "kind": "drop", "calls": calls, "routes": routes})
    return points, tasks


def _quadruped_plan(spec: Mapping[str, Any]) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """Points (per configuration: the rigid law, then the penalty law at each stiffness) and
    tasks of ``batch`` configurations, one fm.quadruped call per configuration."""
    grid = spec["grid"]
    outer = [key for key in (*_QUAD_OPTIONS, *_ROBOT_FIELDS) if key in grid]
    points: List[Dict[str, Any]] = []
    tasks: List[Dict[str, Any]] = []
    calls: List[Dict[str, Any]] = []
    for combo in itertools.product(*(grid[key] for key in outer)):
        params = dict(zip(outer, combo))
        ids = []
        for law in grid["law"]:
            for k in ([math.nan] if law == "rigid" else grid["stiffness"]):
                ids.append(len(points))
                points.append({**params, "law": law, "stiffness": k})
        calls.append({"params": params, "laws": grid["law"], "stiffness": grid["stiffness"], "points": ids})
        if len(calls) == spec["batch"]:
            tasks.append({"id": len(tasks), "kind": "quadruped", "calls": calls})
            calls = []
    if calls:
        tasks.append({"id": len(tasks), "kind": "quadruped", "calls": calls})
    return points, tasks


# ---------------------------------------------------------------------------------------
# Evaluating a task (on a worker): the package's public functions, nothing else


def _error_fields(e: Optional[BaseException]) -> Dict[str, Any]:
    return {"error": None if e is None else type(e).__name__, "error_message": None if e is None else str(e)}


def _sweep_columns(s: "fm.Sweep") -> Dict[str, np.ndarray]:
    """Every readout of a sweep as one column per scalar: states as ``_y``/``_v``, the
    Jacobians as ``_J00 .. _J11`` (rows y, v; columns y0, v0). Not the routes' ``wall_s``:
    a wall time measures one run on one worker, not the point, and a study's table must be
    the same whichever run and worker computed it (a resumed study equals a fresh one); each
    task's wall and CPU time are in its task record instead."""
    n = len(s)
    cols: Dict[str, np.ndarray] = {"exact_y": np.repeat(s.exact.state[0], n), "exact_v": np.repeat(s.exact.state[1], n)}
    for i, j in itertools.product(range(2), range(2)):
        cols[f"exact_J{i}{j}"] = np.repeat(s.exact.jacobian[i, j], n)
    for name in ("fixed", "tolerance", "corrected"):
        route = getattr(s, name)
        if route is None:
            continue
        for field, arr in vars(route).items():
            if field == "wall_s":
                continue
            if field == "state":
                cols[f"{name}_y"], cols[f"{name}_v"] = arr[:, 0], arr[:, 1]
            elif field == "jacobian":
                for i, j in itertools.product(range(2), range(2)):
                    cols[f"{name}_J{i}{j}"] = arr[:, i, j]
            else:
                cols[f"{name}_{field}"] = arr
    if s.blame is not None:
        for field, arr in vars(s.blame).items():
            cols[f"blame_{field}"] = arr
    if s.tolerance_cost_ratio is not None:
        cols["tolerance_cost_ratio"] = s.tolerance_cost_ratio
    return cols


def _frame(pd: Any, readouts: Mapping[str, Any], n: int, error: Optional[BaseException] = None) -> Any:
    """``error``, ``error_message`` and the readouts (none for a refused point), n rows."""
    fields = _error_fields(error)
    return pd.DataFrame({"error": [fields["error"]] * n, "error_message": [fields["error_message"]] * n,
                         **readouts}, index=range(n))


def _drop_call(pd: Any, call: Mapping[str, Any], routes: Mapping[str, bool]) -> Any:
    """The call's points through fm.sweep: one call for all of them, or, when the core
    refuses that call, one call per point so that each keeps its own outcome."""
    p = call["params"]
    options = dict(dt=p["dt"], tolerance=p.get("rtol"), events=p.get("events", False),
                   corrected=routes["corrected"], blame=routes["blame"], quiet=True)

    def run(ks: Sequence[float]) -> Any:
        drop = fm.Drop(**{f: p[f] for f in _DROP_FIELDS if f in p})
        return _frame(pd, _sweep_columns(fm.sweep(drop, np.asarray(ks, dtype=np.float64), **options)), len(ks))

    try:
        return run(call["k"])
    except fm.FerroError as e:
        if len(call["k"]) == 1:
            return _frame(pd, {}, 1, e)
    frames = []
    for k in call["k"]:
        try:
            frames.append(run([k]))
        except fm.FerroError as e:
            frames.append(_frame(pd, {}, 1, e))
    return pd.concat(frames, ignore_index=True)


def _quadruped_call(pd: Any, call: Mapping[str, Any]) -> Any:
    """The configuration through fm.quadruped (the rigid law always runs; the penalty law
    at the stiffnesses asked for); its rows in the order of the points."""
    p = call["params"]
    options = {k: p[k] for k in _QUAD_OPTIONS if k in p}
    if "t_final" not in options and "period" in p:
        options["t_final"] = p["period"]
    robot = {k: p[k] for k in _ROBOT_FIELDS if k in p}
    ks = call["stiffness"] if "penalty" in call["laws"] else []
    n = len(call["points"])
    try:
        report = fm.quadruped(stiffness=ks, robot=robot or None, **options)
    except fm.FerroError as e:
        return _frame(pd, {}, n, e)
    rows = [i for law in call["laws"] for i in ([0] if law == "rigid" else range(1, len(ks) + 1))]
    table = {name: col[rows] for name, col in report.table().items() if name not in ("law", "stiffness")}
    table["failure"] = np.array([report.laws[i].failure for i in rows], dtype=object)
    return _frame(pd, table, n)


def _part_path(out: Path, task_id: int) -> Path:
    return out / "parts" / f"b{task_id:06d}.parquet"


def _cpu_s() -> float:
    """CPU seconds of this process so far (the core's own threads included)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Unix
        return time.process_time()
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_task(out: str, task: Mapping[str, Any], points: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """Evaluate one task and write its part. Runs on a worker.

    The part is written under a temporary name and renamed into place: it is complete or
    absent. Running a task twice (a worker died after writing) rewrites the same rows.
    Returns ``task`` (its id), ``rows``, ``wall_s`` and ``cpu_s`` (the process's CPU time
    over the task: the task's own cost on a single-threaded worker) and ``pid``.
    """
    wall0, cpu0 = time.perf_counter(), _cpu_s()
    pd = _need("pandas")
    first = task["calls"][0]["points"][0]
    frames = []
    for call in task["calls"]:
        if task["kind"] == "drop":
            readouts = _drop_call(pd, call, task["routes"])
        else:
            readouts = _quadruped_call(pd, call)
        params = pd.DataFrame([points[i - first] for i in call["points"]], index=range(len(call["points"])))
        frames.append(pd.concat([pd.DataFrame({"point": call["points"]}), params, readouts], axis=1))
    frame = pd.concat(frames, ignore_index=True)
    final = _part_path(Path(out), task["id"])
    tmp = final.with_name(f".{final.stem}-{uuid.uuid4().hex}.tmp")
    frame.to_parquet(tmp, index=False)
    os.replace(tmp, final)
    return {"task": task["id"], "rows": len(frame), "wall_s": time.perf_counter() - wall0, "cpu_s": _cpu_s() - cpu0,
            "pid": os.getpid()}


# ---------------------------------------------------------------------------------------
# The study


def local_cluster_options(workers: Optional[int] = None, processes: bool = True) -> Dict[str, Any]:
    """Keywords of the embedded ``distributed.LocalCluster``: every socket on 127.0.0.1, one
    thread per worker, and in worker processes one thread for the core's own parallel
    loops (``RAYON_NUM_THREADS=1``), so that a worker is one core."""
    options: Dict[str, Any] = dict(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                   processes=processes, dashboard_address="127.0.0.1:0",
                                   silence_logs=40)  # logging.ERROR
    if processes:
        options.update(host="127.0.0.1", env={"RAYON_NUM_THREADS": "1"})
    # (Threads in this process talk in memory: no socket but the dashboard's.)
    return options


class Study:
    """A study bound to its store (made by :func:`study`); :meth:`compute` runs what is not
    done yet and returns the table.

    Attributes
    ----------
    spec : dict
        The normalised spec: every axis a list, every default filled in.
    kind : str
        ``"drop"`` or ``"quadruped"``.
    out : pathlib.Path
        The store's directory (``study.json`` and ``parts/``).
    n_points, n_tasks : int
        Grid points and tasks.
    stats : list of dict
        One entry per task that :meth:`compute` ran, in the order they finished: ``task``,
        ``rows``, ``wall_s``, ``cpu_s`` (the worker process's CPU time over the task) and
        ``pid`` (the worker process).
    """

    def __init__(self, spec: Dict[str, Any], out: Path) -> None:
        self.spec = spec
        self.kind: str = spec["study"]
        self.out = out
        plan = _drop_plan if self.kind == "drop" else _quadruped_plan
        self._points, self._tasks = plan(spec)
        self.n_points = len(self._points)
        self.n_tasks = len(self._tasks)
        self.stats: List[Dict[str, Any]] = []

    def points(self) -> "pd.DataFrame":
        """The grid: one row per point (``point`` and its parameters), nothing computed."""
        pd = _need("pandas")
        return pd.DataFrame([{"point": i, **p} for i, p in enumerate(self._points)])

    def done(self) -> List[int]:
        """The tasks whose part is in the store."""
        return [t["id"] for t in self._tasks if _part_path(self.out, t["id"]).is_file()]

    def _task_points(self, task: Mapping[str, Any]) -> List[Dict[str, Any]]:
        first = task["calls"][0]["points"][0]
        last = task["calls"][-1]["points"][-1]
        return self._points[first:last + 1]

    def table(self) -> "pd.DataFrame":
        """The rows in the store, ordered by point (complete once :meth:`compute` returned)."""
        pd = _need("pandas")
        parts = [pd.read_parquet(_part_path(self.out, i)) for i in self.done()]
        if not parts:
            return self.points().iloc[0:0]
        return pd.concat(parts, ignore_index=True).sort_values("point", kind="stable").reset_index(drop=True)

    def compute(self, client: Optional["Client"] = None, *, scheduler: Optional[str] = None,
                workers: Optional[int] = None, processes: bool = True, progress: Optional[bool] = None,
                on_task: Optional[Callable[[int, int], None]] = None) -> "pd.DataFrame":
        """Run the tasks not in the store yet and return the complete table.

        Parameters
        ----------
        client : distributed.Client, optional
            Run on this client's cluster.
        scheduler : str, optional
            Else connect to the scheduler at this address (``tcp://host:port``).
        workers : int, optional
            Else start an embedded ``LocalCluster`` on 127.0.0.1 with this many workers
            (default: the machine's cores), one thread each, closed on return.
        processes : bool
            The embedded cluster's workers are processes (default) or threads; the core
            releases the GIL, so both run in parallel.
        progress : bool, optional
            True: Dask's progress bar; None (default): the bar when stderr is a terminal;
            both print the dashboard's link when the cluster has a dashboard. False: silent.
        on_task : callable, optional
            Called as ``on_task(done, total)`` on the client each time a task's part is written.

        Raises
        ------
        StudyError
            A task did not write its part (the rows already written stay in the store).
        """
        distributed = _need("distributed")
        todo = [t for t in self._tasks if not _part_path(self.out, t["id"]).is_file()]
        if todo:
            own = None
            if client is None:
                if scheduler is not None:
                    client = own = distributed.Client(scheduler)
                else:
                    cluster = distributed.LocalCluster(**local_cluster_options(workers, processes))
                    client = own = distributed.Client(cluster)
            try:
                self._run(client, todo, distributed, progress, on_task)
            finally:
                if own is not None:
                    cluster = own.cluster
                    own.close()
                    if cluster is not None:
                        cluster.close()
        table = self.table()
        if len(table) != self.n_points or list(table["point"]) != list(range(self.n_points)):
            raise StudyError(f"{self.out}: the store holds {len(table)} of {self.n_points} points")
        return table

    def _run(self, client: "Client", todo: Sequence[Mapping[str, Any]], distributed: Any,
             progress: Optional[bool], on_task: Optional[Callable[[int, int], None]]) -> None:
        # A fresh key per run: a key the scheduler still remembers from an earlier run would
        # hand back that run's result without writing the part again.
        tag = f"{_spec_hash(self.spec)[:10]}-{uuid.uuid4().hex[:8]}"
        futures = [client.submit(run_task, str(self.out), task, self._task_points(task),
                                 key=f"ferromotion-study-{tag}-{task['id']}") for task in todo]
        if progress is not False:
            link = getattr(client, "dashboard_link", None)
            if link:
                print(f"ferromotion study: {len(todo)} tasks to run; dashboard {link}", file=sys.stderr)
            if progress or sys.stderr.isatty():
                distributed.progress(futures, notebook=False)  # a text bar; returns when all are done
        done = self.n_tasks - len(todo)
        try:
            for future in distributed.as_completed(futures):
                self.stats.append(future.result())
                done += 1
                if on_task is not None:
                    on_task(done, self.n_tasks)
        finally:
            for future in futures:
                future.cancel()

    def __repr__(self) -> str:
        return (f"Study({self.kind}: {self.n_points} points in {self.n_tasks} tasks, "
                f"{len(self.done())} done, store {self.out})")


def _open_store(spec: Dict[str, Any], out: Optional[Union[str, "os.PathLike[str]"]], resume: bool) -> Path:
    path = Path(tempfile.mkdtemp(prefix="ferromotion-study-") if out is None else out)
    meta = path / "study.json"
    doc = {"format": FORMAT, "spec": spec, "hash": _spec_hash(spec)}
    if meta.is_file():
        try:
            held = json.loads(meta.read_text())
        except ValueError:
            raise StudyError(f"{meta}: not a study store (unreadable study.json)") from None
        if held.get("format") != FORMAT or held.get("hash") != doc["hash"]:
            raise StudyError(f"{path} holds a different study: give another --out (out=) or remove it")
        parts = list((path / "parts").glob("b*.parquet"))
        if parts and not resume:
            raise StudyError(f"{path} already holds {len(parts)} finished tasks of this study: pass --resume "
                             "(resume=True) to finish it without recomputing them, or give another --out")
        return path
    if path.exists() and any(path.iterdir()):
        raise StudyError(f"{path} is not empty and holds no study: give an empty or new directory")
    (path / "parts").mkdir(parents=True, exist_ok=True)
    meta.write_text(json.dumps(doc, indent=1))
    return path


def study(spec: Union[str, "os.PathLike[str]", Mapping[str, Any]], *,
          out: Optional[Union[str, "os.PathLike[str]"]] = None, resume: bool = False) -> Study:
    """A study of a grid, bound to its store; ``.compute()`` runs it.

    Parameters
    ----------
    spec : path or mapping
        A TOML file, or the same as a dict. ``study = "drop"`` or ``"quadruped"``;
        ``batch``: points (drop) or configurations (quadruped) per task; ``[grid]``: one
        key per axis, each a value, a list, ``{log = [lo, hi, per_decade]}`` (10^lo ..
        10^hi, as :func:`ferromotion.log_grid`), ``{linspace = [start, stop, n]}`` or
        ``{geomspace = [start, stop, n]}``.
        Drop axes: the :class:`ferromotion.Drop` fields (``height``, ``velocity``,
        ``t_final``, ``zeta``, ``gravity``, ``mass``), ``k``, ``dt``, ``rtol`` (runs the
        tolerance route), ``events``; top-level ``corrected`` and ``blame`` add those
        columns. Quadruped axes: the keywords of :func:`ferromotion.quadruped`, the
        robot's parameters (``friction``, ``period``, ``kp``, ...), ``law`` (``"rigid"``,
        ``"penalty"``) and ``stiffness``; ``t_final`` follows ``period`` unless given.
    out : path, optional
        The store's directory (created when missing); default a new temporary directory.
    resume : bool
        Continue a study whose store already holds finished tasks (they are not recomputed).

    Raises
    ------
    StudyError
        The spec is invalid (the message names the key), or ``out`` holds another study, or
        an unfinished one and ``resume`` is False.

    Examples
    --------
    >>> import ferromotion as fm
    >>> s = fm.study({"study": "quadruped", "grid": {"stiffness": [1e3, 1e4], "friction": [0.5, 0.8]}})
    >>> s.n_points, s.n_tasks   # per friction, one task: the rigid law and two stiffnesses
    (6, 2)
    >>> fm.study({"study": "drop", "grid": {"k": [1e4], "heigth": 1.0}})
    Traceback (most recent call last):
        ...
    ferromotion.study.StudyError: unknown key `grid.heigth` in a drop study (known: height, velocity, ...)
    """
    if isinstance(spec, Mapping):
        raw = dict(spec)
    else:
        path = Path(spec)
        raw = _read_toml(path)
    try:
        normal = _normalise(raw)
    except StudyError as e:
        if isinstance(spec, Mapping):
            raise
        raise StudyError(f"study spec {spec}: {e}") from None
    return Study(normal, _open_store(normal, out, resume))


# ---------------------------------------------------------------------------------------
# Command line: `ferromotion study SPEC.toml [--scheduler ADDR] [--out DIR] [--resume]`


def add_parser(sub: Any) -> None:
    """Register the ``study`` subcommand on the CLI's subparsers."""
    p = sub.add_parser(
        "study",
        help="run a parameter grid (drop or quadruped) on Dask into a resumable store",
        description=(
            "Evaluate every point of the grid in SPEC.toml with the package's sweep or quadruped functions, on an "
            "embedded Dask cluster on 127.0.0.1 (or the one at --scheduler), writing each task's rows to a Parquet "
            "part in --out as it finishes. A re-run with --resume recomputes nothing that is done; a point the core "
            "refuses is recorded with its typed error. Needs pip install 'ferromotion[study]'."
        ),
    )
    p.add_argument("spec", type=Path, metavar="SPEC.toml", help="the study's grid (see examples/*_study.toml)")
    p.add_argument("--scheduler", metavar="ADDR", default=None,
                   help="address of a running Dask scheduler, tcp://host:port (default: an embedded cluster)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="the store's directory (default: SPEC's name without .toml, plus .study, here)")
    p.add_argument("--resume", action="store_true", help="finish a study whose store already holds tasks")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="workers of the embedded cluster (default: the machine's cores)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cli)


def _cli(args: argparse.Namespace) -> int:
    out = args.out if args.out is not None else Path(args.spec.name).with_suffix(".study")
    try:
        if args.workers is not None and args.workers < 1:
            raise StudyError(f"--workers: must be >= 1, got {args.workers}")
        s = study(args.spec, out=out, resume=args.resume)
        print(f"ferromotion study: {s.kind}, {s.n_points} points in {s.n_tasks} tasks "
              f"({len(s.done())} already done), store {s.out}", file=sys.stderr)
        table = s.compute(scheduler=args.scheduler, workers=args.workers, progress=False if args.quiet else None)
    except (StudyError, ImportError, OSError) as e:
        print(f"ferromotion: error: {e}", file=sys.stderr)
        return 1
    failed = table["error"].notna()
    table.to_parquet(s.out / "table.parquet", index=False)
    print(f"{len(table)} points, {int(failed.sum())} refused by the core"
          + (f" ({', '.join(sorted(set(table.loc[failed, 'error'])))})" if failed.any() else "")
          + f"; table: {s.out / 'table.parquet'} (pandas.read_parquet)")
    return 0
