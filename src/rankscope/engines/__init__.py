"""Search engines behind one small contract, and a registry of them."""

from __future__ import annotations

import importlib
import pkgutil

from rankscope.engines.base import (
    QUERY_KINDS,
    Document,
    Engine,
    Hit,
    Query,
    QueryKind,
    create_engine,
    engine_names,
    register_engine,
)

# Every module of this package except these registers one engine with @register_engine. Each
# imports its heavy dependency lazily (inside the engine), so importing it costs nothing when the
# extra is not installed.
_NOT_ENGINES = frozenset({"base", "chunking", "embeddings", "onnx_bert", "vectorstore"})
_loaded = False


def load_builtin_engines() -> None:
    global _loaded
    if _loaded:
        return
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_") and info.name not in _NOT_ENGINES:
            importlib.import_module(f"{__name__}.{info.name}")
    _loaded = True


__all__ = [
    "QUERY_KINDS",
    "Document",
    "Engine",
    "Hit",
    "Query",
    "QueryKind",
    "create_engine",
    "engine_names",
    "load_builtin_engines",
    "register_engine",
]
