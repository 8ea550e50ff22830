"""Benchmark suites: the YAML format, its validation, corpus sources, judgments and sweeps.

The names load on first use (:mod:`rankscope.lazy`): the judge reads its files through
:mod:`rankscope.suite.corpus` without the suite's models and sweeps.
"""

from typing import TYPE_CHECKING

from rankscope.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.suite.loader import load_suite, load_suite_text
    from rankscope.suite.model import Suite
    from rankscope.suite.schema import BenchConfig, ChunkingSpec, SuiteSettings, SuiteSpec
    from rankscope.suite.sweep import (
        PRESETS,
        check_embedding_extra,
        embeddings_available,
        expand_sweep,
        preset_configs,
    )

__all__ = [
    "PRESETS",
    "BenchConfig",
    "ChunkingSpec",
    "Suite",
    "SuiteSettings",
    "SuiteSpec",
    "check_embedding_extra",
    "embeddings_available",
    "expand_sweep",
    "load_suite",
    "load_suite_text",
    "preset_configs",
]

__getattr__, __dir__ = lazy_exports(globals(), renamed={"Chunking": "rankscope.suite.ChunkingSpec"})
