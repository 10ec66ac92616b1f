"""`make bench-study`: fm.study at 1 and 2 workers, and what that predicts for 100.

Two studies, the repository's examples: the 10,000-point drop study (examples/drop_study.toml)
and the 24-point quadruped study (examples/quadruped_study.toml). Each runs three ways:

- direct: every task run one after the other in this process (the study's own task function,
  no Dask), one core (RAYON_NUM_THREADS=1): the work W, and per task w = W / tasks;
- on an embedded LocalCluster of 1 and then 2 worker processes (one thread, one core each),
  into a fresh store, timed from submission to the complete table (cluster start-up apart).

Printed: wall times, the speed-up from 1 to 2 workers, the overhead per task
o = (T1 - W) / tasks (scheduling, shipping the task, writing its Parquet part, reading the
table back), the peak resident memory of each worker process, and the estimate for P = 100
workers from those measurements alone: T(P) = ceil(tasks / P) * (w + o) at the study's batch
size, and at the batch that gives every worker four tasks.
"""

from __future__ import annotations

import os

os.environ["RAYON_NUM_THREADS"] = "1"  # the direct run is one core, as one worker is

import math  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
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


def direct(spec: Path) -> float:
    with tempfile.TemporaryDirectory() as out:
        s = fm.study(spec, out=out)
        t0 = time.perf_counter()
        for task in s._tasks:
            run_task(str(s.out), task, s._task_points(task))
        elapsed = time.perf_counter() - t0
        assert len(s.table()) == s.n_points
    return elapsed


def on_cluster(spec: Path, workers: int) -> Dict[str, Any]:
    with distributed.LocalCluster(**local_cluster_options(workers)) as cluster, distributed.Client(cluster) as c:
        c.run(lambda: __import__("ferromotion.study"))  # imports are start-up, not study time
        with tempfile.TemporaryDirectory() as out:
            s = fm.study(spec, out=out)
            t0 = time.perf_counter()
            table = s.compute(c, progress=False)
            elapsed = time.perf_counter() - t0
            assert len(table) == s.n_points
        rss = sorted(c.run(_peak_rss_mib).values())
    return {"wall": elapsed, "rss": rss}


def main() -> int:
    print(f"fm.study benchmark on {os.cpu_count()} cores (shared: other work on the machine inflates the times)\n")
    rows: List[str] = []
    for spec in STUDIES:
        s = fm.study(spec)
        n, tasks = s.n_points, s.n_tasks
        work = direct(spec)
        one = on_cluster(spec, 1)
        two = on_cluster(spec, 2)
        w = work / tasks
        o = max(0.0, (one["wall"] - work) / tasks)
        t100 = math.ceil(tasks / TARGET_WORKERS) * (w + o)
        # Re-batched so every one of the 100 workers gets 4 tasks (drop points split finer;
        # a quadruped task is one configuration and cannot be split).
        tasks_fine = min(TARGET_WORKERS * 4, n if s.kind == "drop" else tasks)
        t100_fine = math.ceil(tasks_fine / TARGET_WORKERS) * (work / tasks_fine + o)
        print(f"{spec.name}: {n} points in {tasks} tasks")
        print(f"  direct (1 core, no Dask)   {work:8.2f} s   w = {w * 1e3:.1f} ms per task, "
              f"{work / n * 1e6:.0f} us per point")
        print(f"  1 worker                   {one['wall']:8.2f} s   overhead per task o = {o * 1e3:.1f} ms "
              f"({o / (w + o) * 100:.0f}% of a task)")
        print(f"  2 workers                  {two['wall']:8.2f} s   speed-up {one['wall'] / two['wall']:.2f}x "
              f"(ideal 2x)")
        print(f"  peak RSS per worker        1 worker: {one['rss'][0]:.0f} MiB; 2 workers: "
              f"{', '.join(f'{r:.0f}' for r in two['rss'])} MiB")
        print(f"  estimate, {TARGET_WORKERS} workers: {t100:.2f} s at this batch ({tasks} tasks keep "
              f"{min(tasks, TARGET_WORKERS)} workers busy); {t100_fine:.2f} s with {tasks_fine} tasks; "
              f"speed-up over 1 worker {one['wall'] / max(t100, t100_fine if s.kind == 'drop' else t100):.1f}x "
              f"(work alone: {work:.2f} s / {TARGET_WORKERS} = {work / TARGET_WORKERS:.3f} s)\n")
        rows.append(f"| {spec.stem} | {n} | {tasks} | {work:.2f} | {one['wall']:.2f} | {two['wall']:.2f} | "
                    f"{one['wall'] / two['wall']:.2f} | {o * 1e3:.1f} | {max(two['rss']):.0f} | {t100:.2f} |")
    print("| study | points | tasks | direct s | 1 worker s | 2 workers s | speed-up | overhead ms/task "
          "| peak MiB/worker | 100 workers s (est.) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
