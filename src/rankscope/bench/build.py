"""Turn a configuration into a live engine: options, embedding model, reranker."""

from __future__ import annotations

from typing import Any

from rankscope.engines.base import Engine, create_engine
from rankscope.errors import ConfigError
from rankscope.suite.sweep import EMBEDDING_ENGINES, BenchConfig


def engine_options(config: BenchConfig) -> dict[str, Any]:
    """The keyword options the engine is created with."""
    options = dict(config.options)
    if config.embedding_model is not None:
        if config.engine not in EMBEDDING_ENGINES:
            raise ConfigError(
                f"configuration {config.name!r}: engine {config.engine!r} does not embed text, "
                f"so embedding_model does not apply",
                value=config.embedding_model,
                hint=f"use it with one of: {', '.join(sorted(EMBEDDING_ENGINES))}",
            )
        options.setdefault("model", config.embedding_model)
    return options


def build_engine(config: BenchConfig) -> Engine:
    """Create the configuration's engine; a reranker wraps it (``rerank`` engine)."""
    engine = create_engine(config.engine, **engine_options(config))
    if config.reranker is None:
        return engine
    try:
        return create_engine("rerank", base=engine, model=config.reranker)
    except BaseException:
        engine.close()
        raise
