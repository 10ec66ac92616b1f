"""`make bench-study`: fm.study at 1 and 2 workers, and what that predicts for 100.

Two studies, the repository's examples: the 10,000-point drop study (examples/drop_study.toml)
and the 24-point quadruped study (examples/quadruped_study.toml). Each runs three ways:

- direct: every task run one after the other in this process (the study's own task function,
  no Dask), one core (RAYON_NUM_THREADS=1);
- on an embedded LocalCluster of 1 and then 2 worker processes (one thread, one core each),
  into a fresh store, timed from submission to the complete table (cluster start-up apart).

Printed: wall times and the measured speed-up from 1 to 2 workers; each task's CPU time (the
study's own ``stats``: evaluating its points and writing its Parquet part); the overhead per
task in CPU time, on the worker (the worker process's CPU beyond its tasks') and in the
coordinator (the LocalCluster's scheduler runs in this process beside the client, and it is
serial), the latter split into a part per task and a part per study by running the drop
study again at a 20x smaller batch; the peak resident memory of each worker process.

The machine is shared, so wall times carry other people's work. The predictions use CPU
times instead, as dedicated cores would spend them: the tasks (each plus the worker's
overhead) scheduled longest-first on P workers, and the coordinator's serial time, overlapped
(lower bound) or one after the other (upper bound); for P = 1, 2 (to set against the
measurement) and P = 100, at the study's batch size and, for the drop, at the 20x smaller
batch with its own measured task costs.
"""

from __future__ import annotations

import os

os.environ["RAYON_NUM_THREADS"] = "1"  # the direct run is one core, as one worker is

import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tomllib  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Dict, List, Sequence, Tuple  # noqa: E402

import distributed  # noqa: E402

import ferromotion as fm  # noqa: E402
from ferromotion.study import _cpu_s, local_cluster_options, run_task  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STUDIES = [ROOT / "examples" / "drop_study.toml", ROOT / "examples" / "quadruped_study.toml"]
TARGET_WORKERS = 100


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _spec(path: Path, **override: Any) -> Dict[str, Any]:
    with open(path, "rb") as f:
        return {**tomllib.load(f), **override}


def direct(spec: Dict[str, Any]) -> float:
    with tempfile.TemporaryDirectory() as out:
        s = fm.study(spec, out=out)
        t0 = time.perf_counter()
        for task in s._tasks:
            run_task(str(s.out), task, s._task_points(task))
        elapsed = time.perf_counter() - t0
        assert len(s.table()) == s.n_points
    return elapsed


def on_cluster(spec: Dict[str, Any], workers: int) -> Dict[str, Any]:
    """Wall time of the study on ``workers`` worker processes, each task's CPU time (the
    study's own stats), the workers' and the coordinator's CPU, each worker's peak memory."""
    with distributed.LocalCluster(**local_cluster_options(workers)) as cluster, distributed.Client(cluster) as c:
        c.run(lambda: __import__("ferromotion.study"))  # imports are start-up, not study time
        with tempfile.TemporaryDirectory() as out:
            s = fm.study(spec, out=out)
            workers_cpu, here_cpu = c.run(_cpu_s), _cpu_s()
            t0 = time.perf_counter()
            table = s.compute(c, progress=False)
            elapsed = time.perf_counter() - t0
            here_cpu = _cpu_s() - here_cpu
            workers_cpu = sum(v - workers_cpu[k] for k, v in c.run(_cpu_s).items())
            assert len(table) == s.n_points
        rss = sorted(c.run(_peak_rss_mib).values())
    # The scheduler of a LocalCluster runs in this process, beside the client: here_cpu is
    # the coordinator's CPU time (scheduler + client), the part that does not spread.
    return {"wall": elapsed, "tasks": s.n_tasks, "task_cpu": [t["cpu_s"] for t in s.stats], "rss": rss,
            "workers_cpu": workers_cpu, "coord_cpu": here_cpu}


def makespan(costs: Sequence[float], workers: int) -> float:
    """Longest-first greedy schedule of the tasks' costs on ``workers`` (what a scheduler
    handing the next task to the first free worker achieves, near enough)."""
    loads = [0.0] * workers
    for cost in sorted(costs, reverse=True):
        loads[loads.index(min(loads))] += cost
    return max(loads)


def main() -> int:
    print(f"fm.study benchmark on {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start "
          "(other work on the machine stretches every wall time)\n")
    rows: List[str] = []
    s_cpu, s_fixed = 0.0, 0.0  # set by the drop study, which runs first
    for path in STUDIES:
        spec = _spec(path)
        s = fm.study(spec)
        n, tasks = s.n_points, s.n_tasks
        work = direct(spec)
        one = on_cluster(spec, 1)
        two = on_cluster(spec, 2)
        costs = one["task_cpu"]
        # A worker's own CPU per task beyond the task (Dask's worker side, its idle loop included).
        ow = max(0.0, (one["workers_cpu"] - sum(costs)) / tasks)
        # The coordinator's CPU has a part per task and a part per study (submitting, reading
        # the parts back): the drop study runs again in 20x more tasks to tell them apart. The
        # coordinator does not look inside a task, so the quadruped (6 tasks: too few to split
        # it) uses the drop's split.
        many = None
        if s.kind == "drop":
            many = on_cluster(_spec(path, batch=max(1, s.spec["batch"] // 20)), 1)
            s_cpu = max(0.0, (many["coord_cpu"] - one["coord_cpu"]) / (many["tasks"] - tasks))
            s_fixed = max(0.0, one["coord_cpu"] - tasks * s_cpu)

        def predict(task_costs: Sequence[float], workers: int) -> Tuple[float, float]:
            """Dedicated cores: the workers' schedule and the serial coordinator, overlapped
            (lower) or one after the other (upper)."""
            spread = makespan([c + ow for c in task_costs], workers)
            serial = len(task_costs) * s_cpu + s_fixed
            return max(spread, serial), spread + serial

        p1, p2, p100 = predict(costs, 1), predict(costs, 2), predict(costs, TARGET_WORKERS)
        # The drop study re-batched into 20x more tasks, with those tasks' own measured costs
        # (a task also has a fixed cost: its DataFrame, its Parquet part, the exact route).
        # A quadruped task is one configuration and cannot be split.
        fine = many["tasks"] if many is not None else tasks
        p100_fine = predict(many["task_cpu"], TARGET_WORKERS) if many is not None else p100
        print(f"{path.name}: {n} points in {tasks} tasks")
        print(f"  direct (1 core, no Dask)   {work:8.2f} s wall")
        print(f"  1 worker                   {one['wall']:8.2f} s wall; tasks {sum(costs):.2f} s CPU "
              f"({sum(costs) / n * 1e3:.3g} ms per point, {sum(costs) / tasks * 1e3:.1f} ms per task)")
        print(f"  2 workers                  {two['wall']:8.2f} s wall: speed-up {one['wall'] / two['wall']:.2f}x "
              f"measured; {p1[0] / p2[0]:.2f}x predicted on 2 dedicated cores")
        if many is not None:
            print(f"  1 worker, {many['tasks']} tasks       {many['wall']:8.2f} s wall; tasks "
                  f"{sum(many['task_cpu']):.2f} s CPU ({(sum(many['task_cpu']) - sum(costs)) / (fine - tasks) * 1e3:.1f}"
                  f" ms more per task: a task's fixed cost)")
        print(f"  overhead per task          worker {ow * 1e3:.1f} ms CPU; coordinator {s_cpu * 1e3:.2f} ms CPU "
              f"+ {s_fixed:.2f} s per study (scheduler + client, serial)")
        print(f"  peak RSS per worker        1 worker: {one['rss'][0]:.0f} MiB; 2 workers: "
              f"{', '.join(f'{r:.0f}' for r in two['rss'])} MiB")
        print(f"  predicted, dedicated cores 1 worker {p1[0]:.2f} .. {p1[1]:.2f} s; 2 workers {p2[0]:.2f} .. "
              f"{p2[1]:.2f} s; {TARGET_WORKERS} workers {p100[0]:.2f} .. {p100[1]:.2f} s ({tasks} tasks keep "
              f"{min(tasks, TARGET_WORKERS)} busy)"
              + (f", {p100_fine[0]:.2f} .. {p100_fine[1]:.2f} s in {fine} tasks" if fine != tasks else "") + "\n")
        rows.append(f"| {path.stem} | {n} | {tasks} | {one['wall']:.2f} | {two['wall']:.2f} | "
                    f"{one['wall'] / two['wall']:.2f} | {p1[0] / p2[0]:.2f} | {sum(costs) / tasks * 1e3:.0f} | "
                    f"{ow * 1e3:.1f} + {s_cpu * 1e3:.2f} | {max(two['rss']):.0f} | {p100[0]:.2f} .. {p100[1]:.2f} |")
    print("| study | points | tasks | 1 worker s | 2 workers s | speed-up measured | speed-up predicted "
          "| task CPU ms | overhead CPU ms/task (worker + coordinator) | peak MiB/worker | 100 workers s (predicted) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
