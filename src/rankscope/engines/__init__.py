"""Search engines behind one small contract, and a registry of them.

The built-in engines are listed by name in :data:`BUILTIN_ENGINES`, each with the module that
registers it; the other modules are what the engines share: :mod:`~rankscope.engines.base` (the
contract), :mod:`~rankscope.engines.chunking`, :mod:`~rankscope.engines.embeddings`,
:mod:`~rankscope.engines.onnx_bert`, :mod:`~rankscope.engines.neighbours`,
:mod:`~rankscope.engines.phrase`, :mod:`~rankscope.engines.stream`,
:mod:`~rankscope.engines.vectorstore` and the private ``_*`` modules.
"""

from __future__ import annotations

from rankscope.engines.base import (
    BUILTIN_ENGINES,
    QUERY_KINDS,
    Document,
    Engine,
    Hit,
    Query,
    QueryKind,
    create_engine,
    engine_names,
    load_builtin_engines,
    register_engine,
)

__all__ = [
    "BUILTIN_ENGINES",
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
