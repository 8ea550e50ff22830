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
        if config.engine == "hybrid":
            options["engines"] = _hybrid_members(options.get("engines"), config.embedding_model)
        else:
            options.setdefault("model", config.embedding_model)
    elif config.engine == "hybrid" and "engines" not in options:
        options["engines"] = _hybrid_members(None, None)
    return options


def _hybrid_members(members: Any, model: str | None) -> Any:
    """Hybrid = BM25 (sqlite) + dense (vector) unless the options list the members; the
    configuration's embedding model goes to every dense member that names none."""
    if members is None:
        dense: dict[str, Any] = {"engine": "vector"}
        if model is not None:
            dense["model"] = model
        return [{"engine": "sqlite"}, dense]
    if model is None or not isinstance(members, list):
        return members
    out = []
    for member in members:
        if isinstance(member, dict) and member.get("engine") in EMBEDDING_ENGINES:
            member = {**member}
            member.setdefault("model", model)
        out.append(member)
    return out


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
