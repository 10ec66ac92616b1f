"""`make bench-study`: fm.study at 1 and 2 workers, and what that predicts for 100.

Two studies, the repository's examples: the 10,000-point drop study (examples/drop_study.toml)
and the 24-point quadruped study (examples/quadruped_study.toml). Each runs three ways:

- direct: every task run one after the other in this process (the study's own task function,
  no Dask), one core (RAYON_NUM_THREADS=1);
- on an embedded LocalCluster of 1 and then 2 worker processes (one thread, one core each),
  into a fresh store, timed from submission to the complete table (cluster start-up apart).

Printed: wall times, the speed-up from 1 to 2 workers, a task's own time w (Dask's task
stream: evaluating its points and writing its Parquet part), the overhead per task
o = (workers * wall - sum of task times) / tasks (scheduling, shipping tasks and results,
the client's bookkeeping, idle workers at the end), the peak resident memory of each worker
process, and the estimate for P = 100 dedicated workers from those measurements alone. The
machine is shared, so wall times carry other people's work; the estimate uses CPU times
instead: the workers' CPU per task w_cpu, and the coordinator's CPU (the LocalCluster's
scheduler runs in this process, beside the client; it is serial), split into s_cpu per task
and s_fixed per study by running the drop study at a second, 20x smaller batch. Between
max(ceil(tasks / P) * w_cpu, tasks * s_cpu + s_fixed) and their sum, at the study's batch
size and at the batch that gives every worker four tasks.
"""

from __future__ import annotations

import os

os.environ["RAYON_NUM_THREADS"] = "1"  # the direct run is one core, as one worker is

import math  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tomllib  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Dict, List  # noqa: E402

import distributed  # noqa: E402

import ferromotion as fm  # noqa: E402
from ferromotion import study as study_module  # noqa: E402,F401  (the module, for run_task)
from ferromotion.study import local_cluster_options, run_task  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STUDIES = [ROOT / "examples" / "drop_study.toml", ROOT / "examples" / "quadruped_study.toml"]
TARGET_WORKERS = 100


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


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
    """Wall time of the study on ``workers`` worker processes, the tasks' own compute time
    (Dask's task stream), and each worker's peak resident memory."""
    with distributed.LocalCluster(**local_cluster_options(workers)) as cluster, distributed.Client(cluster) as c:
        c.run(lambda: __import__("ferromotion.study"))  # imports are start-up, not study time
        with tempfile.TemporaryDirectory() as out:
            s = fm.study(spec, out=out)
            with distributed.get_task_stream(client=c) as stream:
                workers_cpu, here_cpu = c.run(_cpu_s), _cpu_s()
                t0 = time.perf_counter()
                table = s.compute(c, progress=False)
                elapsed = time.perf_counter() - t0
                here_cpu = _cpu_s() - here_cpu
                workers_cpu = sum(v - workers_cpu[k] for k, v in c.run(_cpu_s).items())
            assert len(table) == s.n_points
        compute = sum(ss["stop"] - ss["start"] for task in stream.data for ss in task["startstops"]
                      if ss["action"] == "compute")
        rss = sorted(c.run(_peak_rss_mib).values())
    # The scheduler of a LocalCluster runs in this process, beside the client: here_cpu is
    # the coordinator's CPU time (scheduler + client), the part that does not spread.
    return {"wall": elapsed, "compute": compute, "rss": rss, "workers_cpu": workers_cpu, "coord_cpu": here_cpu}


def main() -> int:
    print(f"fm.study benchmark on {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start "
          "(other work on the machine inflates every time)\n")
    rows: List[str] = []
    for path in STUDIES:
        spec = _spec(path)
        s = fm.study(spec)
        n, tasks = s.n_points, s.n_tasks
        work = direct(spec)
        one = on_cluster(spec, 1)
        two = on_cluster(spec, 2)
        # The coordinator's cost has a part per task and a part per study (submitting, reading
        # the parts back): the drop study also runs in 20x more tasks to tell them apart.
        many = None
        if s.kind == "drop":
            fine_batch = max(1, s.spec["batch"] // 20)
            many = on_cluster(_spec(path, batch=fine_batch), 1)
            many["tasks"] = fm.study(_spec(path, batch=fine_batch)).n_tasks
        w = one["compute"] / tasks  # a task's own wall time on a worker
        # Per task, the time a worker slot spent not computing a task: scheduling, shipping the
        # task and its result, the client's bookkeeping, waiting at the end.
        o1 = (one["wall"] - one["compute"]) / tasks
        o2 = (2 * two["wall"] - two["compute"]) / tasks
        # CPU time is what a dedicated core would spend (wall times here include other people's
        # work): per task on a worker, and per task in the coordinator (scheduler + client).
        w_cpu = one["workers_cpu"] / tasks
        if many is not None:
            s_cpu = max(0.0, (many["coord_cpu"] - one["coord_cpu"]) / (many["tasks"] - tasks))
            s_fixed = max(0.0, one["coord_cpu"] - tasks * s_cpu)
        else:  # a handful of tasks: all of the coordinator's time counted per task (an upper bound)
            s_cpu, s_fixed = one["coord_cpu"] / tasks, 0.0
        # 100 dedicated workers: ceil(tasks / P) rounds of w_cpu each, and the coordinator's
        # serial tasks * s_cpu + s_fixed, overlapped (lower) or not (upper).
        rounds = math.ceil(tasks / TARGET_WORKERS)
        t100_lo = max(rounds * w_cpu, tasks * s_cpu + s_fixed)
        t100_hi = rounds * w_cpu + tasks * s_cpu + s_fixed
        # Re-batched so that each of the 100 workers gets 4 tasks (a drop task can be split
        # down to single points; a quadruped task is one configuration and cannot).
        fine = min(TARGET_WORKERS * 4, n if s.kind == "drop" else tasks)
        fine_w = one["workers_cpu"] / fine
        fine_lo = max(math.ceil(fine / TARGET_WORKERS) * fine_w, fine * s_cpu + s_fixed)
        fine_hi = math.ceil(fine / TARGET_WORKERS) * fine_w + fine * s_cpu + s_fixed
        print(f"{path.name}: {n} points in {tasks} tasks")
        print(f"  direct (1 core, no Dask)   {work:8.2f} s   {work / n * 1e6:.0f} us per point")
        print(f"  1 worker                   {one['wall']:8.2f} s   task w = {w * 1e3:.1f} ms wall, "
              f"{w_cpu * 1e3:.1f} ms worker CPU; overhead per task o = {o1 * 1e3:.1f} ms wall "
              f"({o1 / (w + o1) * 100:.1f}% of a task)")
        if many is not None:
            print(f"  1 worker, {many['tasks']} tasks       {many['wall']:8.2f} s   overhead per task "
                  f"{(many['wall'] - many['compute']) / many['tasks'] * 1e3:.1f} ms wall")
        print(f"  coordinator CPU            {s_cpu * 1e3:.2f} ms per task + {s_fixed:.2f} s per study "
              f"(scheduler + client, serial)")
        print(f"  2 workers                  {two['wall']:8.2f} s   speed-up {one['wall'] / two['wall']:.2f}x "
              f"(ideal 2x); overhead per task {o2 * 1e3:.1f} ms wall; worker CPU {two['workers_cpu']:.2f} s "
              f"(1 worker: {one['workers_cpu']:.2f} s)")
        print(f"  peak RSS per worker        1 worker: {one['rss'][0]:.0f} MiB; 2 workers: "
              f"{', '.join(f'{r:.0f}' for r in two['rss'])} MiB")
        print(f"  estimate, {TARGET_WORKERS} dedicated workers: {t100_lo:.2f} .. {t100_hi:.2f} s at this batch "
              f"({tasks} tasks keep {min(tasks, TARGET_WORKERS)} workers busy)"
              + (f"; {fine_lo:.2f} .. {fine_hi:.2f} s in {fine} tasks" if fine != tasks else "")
              + f"; 1 dedicated worker: {one['workers_cpu'] + one['coord_cpu']:.2f} s\n")
        rows.append(f"| {path.stem} | {n} | {tasks} | {work:.2f} | {one['wall']:.2f} | {two['wall']:.2f} | "
                    f"{one['wall'] / two['wall']:.2f} | {w_cpu * 1e3:.0f} | {o1 * 1e3:.1f} | {s_cpu * 1e3:.1f} | "
                    f"{max(two['rss']):.0f} | {t100_lo:.2f} .. {t100_hi:.2f} |")
    print("| study | points | tasks | direct s | 1 worker s | 2 workers s | speed-up | task CPU ms | overhead ms/task "
          "| coordinator CPU ms/task | peak MiB/worker | 100 workers s (est.) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
