"""Turn a configuration into a live engine: options, embedding model, reranker."""

from __future__ import annotations

from typing import Any

from rankscope.engines.base import (
    Engine,
    create_engine,
    embedding_engine_names,
    engine_class,
    spec_takes_embedding_model,
)
from rankscope.errors import ConfigError
from rankscope.suite.schema import BenchConfig


def engine_options(config: BenchConfig) -> dict[str, Any]:
    """The keyword options the engine is created with: the configuration's embedding model
    goes to whatever embeds text in it, as the engine class declares (its ``model`` option, or
    its members' for a hybrid)."""
    options = dict(config.options)
    if config.embedding_model is None:
        return options
    if not spec_takes_embedding_model(config.engine, options):
        raise ConfigError(
            f"configuration {config.name!r}: engine {config.engine!r} does not embed text "
            f"(nor does any engine it is built from), so embedding_model does not apply",
            value=config.embedding_model,
            hint=f"use it with an engine that embeds: {', '.join(embedding_engine_names())}",
        )
    return engine_class(config.engine).with_embedding_model(options, config.embedding_model)


def reranker_options(reranker: str) -> dict[str, Any]:
    """``"embedding"`` / ``"embedding:<model>"`` rerank by embedding cosine; any other value
    names a cross-encoder model."""
    mode, _, model = reranker.partition(":")
    if mode == "embedding":
        return {"mode": "embedding", **({"model": model} if model else {})}
    return {"mode": "cross-encoder", "model": reranker}


def build_engine(config: BenchConfig) -> Engine:
    """Create the configuration's engine; a reranker wraps it (``rerank`` engine)."""
    engine = create_engine(config.engine, **engine_options(config))
    if config.reranker is None:
        return engine
    try:
        return create_engine("rerank", engine=engine, **reranker_options(config.reranker))
    except BaseException:
        engine.close()
        raise
