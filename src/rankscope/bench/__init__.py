"""Benchmarks: run a suite's configurations, time them, evaluate and compare them."""

from rankscope.bench.config_record import ChunkHit, ConfigRecord, IndexCache
from rankscope.bench.latency import LatencyStats, latency_stats
from rankscope.bench.ray_runner import RayOptions
from rankscope.bench.recommend import BALANCE_FORMULA, Candidate, recommend
from rankscope.bench.results import (
    Alone,
    BenchmarkResult,
    CategoryScores,
    ConfigResult,
    ConfigurationComparison,
    QueryArrays,
    Recommendation,
    Recommendations,
    ViewScores,
    ViewStatistics,
)
from rankscope.bench.runner import NullReporter, Reporter, run_benchmark, run_config
from rankscope.lazy import renamed_exports

__all__ = [
    "BALANCE_FORMULA",
    "Alone",
    "BenchmarkResult",
    "Candidate",
    "CategoryScores",
    "ChunkHit",
    "ConfigRecord",
    "ConfigResult",
    "ConfigurationComparison",
    "IndexCache",
    "LatencyStats",
    "NullReporter",
    "QueryArrays",
    "RayOptions",
    "Recommendation",
    "Recommendations",
    "Reporter",
    "ViewScores",
    "ViewStatistics",
    "latency_stats",
    "recommend",
    "run_benchmark",
    "run_config",
]

__getattr__ = renamed_exports(__name__, {"ConfigSpec": "rankscope.suite.BenchConfig"})
