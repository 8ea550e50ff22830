"""One identity for a query typed many times: its normalised text and a short key.

``normalise_query`` is what groups searches into one query for implicit judgments, sampling and
alerts: Unicode NFKC, case folded, whitespace collapsed to single spaces, trimmed ("  Rotate
LOGS " and "rotate logs" are one query). ``query_key`` turns that text into an id that qrels and
pool files can hold (no spaces): ``q`` and the first 16 hex digits of its SHA-256.
"""

from __future__ import annotations

import hashlib
import unicodedata


def normalise_query(text: str) -> str:
    """NFKC, case folded, inner whitespace collapsed, trimmed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def query_key(text: str) -> str:
    """The id of a query's normalised text: ``q`` + 16 hex digits of its SHA-256."""
    digest = hashlib.sha256(normalise_query(text).encode("utf-8")).hexdigest()
    return "q" + digest[:16]


__all__ = ["normalise_query", "query_key"]
