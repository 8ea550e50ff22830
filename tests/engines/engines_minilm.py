"""One loaded MiniLM embedder shared by the engine tests (a uniquely named module, so that it is
never confused with another folder's conftest)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

_MINILM: dict[str, Any] = {}


def shared_minilm() -> Any:
    """One loaded MiniLM embedder for the whole session (loading takes seconds), behind a
    session-wide embedding cache so each text is embedded once."""
    if "embedder" not in _MINILM:
        from rankscope.engines.embeddings import (
            CachedEmbedder,
            EmbeddingCache,
            SentenceTransformerEmbedder,
        )

        folder = Path(tempfile.mkdtemp(prefix="rankscope-minilm-"))
        _MINILM["embedder"] = CachedEmbedder(
            SentenceTransformerEmbedder(), EmbeddingCache(folder / "embeddings.sqlite")
        )
    return _MINILM["embedder"]
