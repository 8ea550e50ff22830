"""Benchmarks: run a suite's configurations, time them, evaluate and compare them."""

from rankscope.bench.latency import LatencyStats, latency_stats
from rankscope.bench.recommend import BALANCE_FORMULA, recommend
from rankscope.bench.results import BenchmarkResult
from rankscope.bench.runner import NullReporter, Reporter, run_benchmark, run_config

__all__ = [
    "BALANCE_FORMULA",
    "BenchmarkResult",
    "LatencyStats",
    "NullReporter",
    "Reporter",
    "latency_stats",
    "recommend",
    "run_benchmark",
    "run_config",
]
