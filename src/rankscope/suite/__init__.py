"""Benchmark suites: the YAML format, its validation, corpus sources, judgments and sweeps."""

from rankscope.suite.loader import load_suite, load_suite_text
from rankscope.suite.model import Suite
from rankscope.suite.schema import Settings, SuiteSpec
from rankscope.suite.sweep import (
    PRESETS,
    BenchConfig,
    Chunking,
    check_embedding_extra,
    embeddings_available,
    expand_sweep,
    preset_configs,
)

__all__ = [
    "PRESETS",
    "BenchConfig",
    "Chunking",
    "Settings",
    "Suite",
    "SuiteSpec",
    "check_embedding_extra",
    "embeddings_available",
    "expand_sweep",
    "load_suite",
    "load_suite_text",
    "preset_configs",
]
