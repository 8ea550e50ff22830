"""trec_eval's order of ids: byte order of their UTF-8 text (C ``strcmp``)."""

from __future__ import annotations


def byte_key(text: str) -> bytes:
    """Sort key giving trec_eval's ``strcmp`` order (surrogate escapes stand for raw bytes)."""
    return text.encode("utf-8", "surrogateescape")


__all__ = ["byte_key"]
