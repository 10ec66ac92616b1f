"""One helper for the GIL tests: run core work in a thread and check this thread kept running."""
import threading
import time
from typing import Callable


def assert_gil_released(work: Callable[[], object], *, min_elapsed: float, what: str) -> None:
    """Run ``work`` in a thread while this thread counts; it must keep counting.

    A core call that held the GIL would let this thread run for a switch interval or
    two (5 ms each) at most; one that releases it leaves the count at a good fraction of
    the rate measured alone. ``min_elapsed`` (s) guards against work too short to tell.
    """
    count = [0]
    done = threading.Event()
    window: dict = {}

    def run() -> None:
        try:
            window["before"] = count[0]
            t0 = time.perf_counter()
            work()
            window["elapsed"] = time.perf_counter() - t0
            window["after"] = count[0]
        finally:
            done.set()

    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.05:
        count[0] += 1
    rate = count[0] / (time.perf_counter() - t0)
    worker = threading.Thread(target=run)
    worker.start()
    while not done.is_set():
        count[0] += 1
    worker.join()
    assert "elapsed" in window, f"the {what} raised"
    assert window["elapsed"] > min_elapsed, f"the {what} was too short to tell"
    assert window["after"] - window["before"] > 0.25 * rate * window["elapsed"], (rate, window)
