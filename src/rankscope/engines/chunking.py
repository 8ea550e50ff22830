"""Split documents into overlapping chunks, and map chunk hits back to their documents.

Chunk ``n`` (0-based) of document ``d`` gets the id ``f"{d}#{n}"``, ``parent_id=d``, the
document's title and extra fields. ``unit="tokens"`` windows over whitespace-separated tokens;
``unit="chars"`` windows over characters but moves each cut back to the nearest whitespace so
words are not split (a single word longer than ``size`` is cut where it must be).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal

from rankscope.engines.base import Document, Hit
from rankscope.errors import ConfigError

ChunkUnit = Literal["tokens", "chars"]
_SPACE = re.compile(r"\s")


def check_chunking(size: object, overlap: object, unit: object = "tokens") -> None:
    """Raise :class:`ConfigError` unless ``0 <= overlap < size`` and ``unit`` is known."""
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ConfigError(
            "chunk size must be a positive integer", value=size, hint="e.g. size: 200"
        )
    if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
        raise ConfigError(
            "chunk overlap must be a non-negative integer", value=overlap, hint="e.g. overlap: 20"
        )
    if overlap >= size:
        raise ConfigError(
            f"chunk overlap must be smaller than the chunk size ({size})",
            value=overlap,
            hint=f"use an overlap between 0 and {size - 1}",
        )
    if unit not in ("tokens", "chars"):
        raise ConfigError(
            "chunk unit must be 'tokens' or 'chars'", value=unit, hint="e.g. unit: tokens"
        )


def chunk_documents(
    docs: Iterable[Document], size: int, overlap: int = 0, unit: ChunkUnit = "tokens"
) -> list[Document]:
    """Split each document's ``text`` into windows of ``size`` units sharing ``overlap`` units.

    A document whose text fits in one window (an empty one included) yields one chunk.
    """
    return list(iter_chunks(docs, size, overlap, unit))


def iter_chunks(
    docs: Iterable[Document], size: int, overlap: int = 0, unit: ChunkUnit = "tokens"
) -> Iterator[Document]:
    """The chunks of :func:`chunk_documents`, made as they are read (a streamed corpus is
    chunked while an engine indexes it). The arguments are checked before the first chunk."""
    check_chunking(size, overlap, unit)
    return _chunks(docs, size, overlap, unit)


def _chunks(
    docs: Iterable[Document], size: int, overlap: int, unit: ChunkUnit
) -> Iterator[Document]:
    for doc in docs:
        if unit == "tokens":
            pieces = _token_windows(doc.text, size, overlap)
        else:
            pieces = _char_windows(doc.text, size, overlap)
        for n, piece in enumerate(pieces):
            yield Document(
                id=f"{doc.id}#{n}",
                text=piece,
                title=doc.title,
                fields=doc.fields,
                parent_id=doc.id,
            )


def chunk_parent(chunk_id: str) -> str:
    """The document a chunk id ``"{doc_id}#{n}"`` names (an id without ``#`` is its own)."""
    return chunk_id.rsplit("#", 1)[0] if "#" in chunk_id else chunk_id


def _token_windows(text: str, size: int, overlap: int) -> list[str]:
    tokens = text.split()
    if len(tokens) <= size:
        return [" ".join(tokens)]
    step = size - overlap
    out = []
    for start in range(0, len(tokens), step):
        out.append(" ".join(tokens[start : start + size]))
        if start + size >= len(tokens):
            break
    return out


def _char_windows(text: str, size: int, overlap: int) -> list[str]:
    text = text.strip()
    if len(text) <= size:
        return [text]
    out: list[str] = []
    start = 0
    while True:
        end = start + size
        if end >= len(text):
            out.append(text[start:].strip())
            break
        # cut at the last whitespace inside the window, unless the window is one long word
        cut = _last_space(text, start, end)
        end = cut if cut > start else end
        out.append(text[start:end].strip())
        nxt = max(end - overlap, start + 1)
        # start the next window at a word start: skip forward past a partial word
        if nxt < end and not _SPACE.match(text[nxt - 1]):
            nxt = _next_space(text, nxt, end)
        while nxt < len(text) and _SPACE.match(text[nxt]):
            nxt += 1
        if nxt >= len(text):
            break
        start = nxt
    return [piece for piece in out if piece]


def _last_space(text: str, start: int, end: int) -> int:
    """Index of the last whitespace in ``text[start:end+1]`` (so a word ending at ``end`` fits)."""
    for i in range(min(end, len(text) - 1), start, -1):
        if _SPACE.match(text[i]):
            return i
    return -1


def _next_space(text: str, start: int, end: int) -> int:
    for i in range(start, end):
        if _SPACE.match(text[i]):
            return i
    return end


def collapse_to_documents(
    hits: Sequence[Hit], k: int, parents: dict[str, str] | None = None
) -> list[Hit]:
    """Map ranked chunk hits to ranked document hits, at most ``k``.

    A document takes the rank and score of its best (first) chunk; order is kept. The parent of a
    chunk is looked up in ``parents`` (chunk id -> document id) when given, else read from the
    ``"{doc_id}#{n}"`` id (an id without ``#`` is its own document).
    """
    seen: set[str] = set()
    out: list[Hit] = []
    for hit in hits:
        parent = parents.get(hit.doc_id) if parents is not None else None
        if parent is None:
            parent = chunk_parent(hit.doc_id)
        if parent in seen:
            continue
        seen.add(parent)
        out.append(Hit(doc_id=parent, score=hit.score, text=hit.text))
        if len(out) >= k:
            break
    return out
