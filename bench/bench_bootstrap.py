"""The paired bootstrap test against the randomization test at 100,000 queries × 10,000 draws.

Both tests on the same generated pair of systems (seeded; per-query scores in [0, 1]), one seed,
timed in this process (wall clock and CPU). ``--before FILE`` also times the bootstrap with
another version of ``rankscope/stats/_resample.py`` (e.g. ``git show
7bb5bbb:src/rankscope/stats/_resample.py > /tmp/before.py``), and checks that it gives the same
p-value and interval.

Usage::

    OPENBLAS_NUM_THREADS=1 python bench/bench_bootstrap.py [--before FILE]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from rankscope.stats import bootstrap_test, paired, randomization_test

QUERIES = 100_000
RESAMPLES = 10_000


def timed(name: str, test: Callable[..., Any], a: np.ndarray, b: np.ndarray) -> Any:
    wall, cpu = time.perf_counter(), time.process_time()
    result = test(a, b, resamples=RESAMPLES, seed=1)
    print(
        f"{name}: p = {result.p_value!r}, interval [{result.interval.low!r}, "
        f"{result.interval.high!r}], wall {time.perf_counter() - wall:.1f} s, "
        f"CPU {time.process_time() - cpu:.1f} s, load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", help="another _resample.py to time the bootstrap with")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    a = rng.random(QUERIES)
    b = np.clip(a + rng.normal(0.002, 0.2, QUERIES), 0, 1)
    print(f"{QUERIES:,} queries x {RESAMPLES:,} draws, nproc {os.cpu_count()}", flush=True)
    timed("randomization", randomization_test, a, b)
    now = timed("bootstrap", bootstrap_test, a, b)
    if args.before:
        spec = importlib.util.spec_from_file_location("before", args.before)
        assert spec is not None and spec.loader is not None
        before = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(before)
        paired.bootstrap_moments = before.bootstrap_moments  # type: ignore[attr-defined]
        old = timed("bootstrap (before)", bootstrap_test, a, b)
        same = (old.p_value, old.interval) == (now.p_value, now.interval)
        print(f"same p-value and interval: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
