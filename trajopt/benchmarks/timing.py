"""Timing helper shared by the benchmarks."""

import time

import numpy as np


def seconds_per_call(call, count: int = 1, minimum_seconds: float = 0.3) -> float:
    """Best-of-3 mean seconds per call (divided by ``count``), repeating ``call`` to fill ``minimum_seconds``."""
    start = time.perf_counter()
    call()
    once = max(time.perf_counter() - start, 1e-7)
    repeats = max(1, int(minimum_seconds / once / 3))
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeats):
            call()
        best = min(best, (time.perf_counter() - start) / repeats)
    return best / count
