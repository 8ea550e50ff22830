"""Documents streamed from their source: a corpus is read again each time it is iterated.

An engine's ``index`` takes any ``Iterable[Document]`` and reads it once. The benchmark gives it a
:class:`DocumentStream`, which reads the corpus file (and chunks it) while the engine consumes it,
so no parsed copy of the corpus stays in memory beside the engine's own index: a JSONL corpus
parsed into Python objects takes about 1.3 times its file size, more than most indexes. A stream
also carries what a scan of the corpus learned in advance (the extra field names), so an engine
that must declare its columns before the first row (an FTS5 table, a tantivy schema) need not
read everything first. :func:`reiterable` gives an engine that must read its input twice (a
hybrid indexing two members, a digest before a COPY) something it can iterate again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence

from rankscope.engines.base import Document


class DocumentStream(Iterable[Document]):
    """Documents produced afresh by ``source()`` on each iteration.

    ``fields``: the extra field names (not ``title``/``text``) the documents hold, in first-seen
    order, when known in advance; ``count``: how many documents there are, when known.
    """

    __slots__ = ("_source", "count", "fields")

    def __init__(
        self,
        source: Callable[[], Iterable[Document]],
        *,
        fields: Sequence[str] | None = None,
        count: int | None = None,
    ) -> None:
        self._source = source
        self.fields = None if fields is None else tuple(fields)
        self.count = count

    @classmethod
    def of(cls, docs: Iterable[Document]) -> DocumentStream:
        """``docs`` as a stream: itself when it is one, a view of a list or tuple, else the
        documents read into a list first (an iterator can be read only once)."""
        if isinstance(docs, DocumentStream):
            return docs
        held = docs if isinstance(docs, Sequence) else list(docs)
        return cls(lambda: held, fields=extra_fields(held), count=len(held))

    def with_fields(self, fields: Sequence[str], count: int | None = None) -> DocumentStream:
        """The same documents, with their extra field names (and count) known."""
        return DocumentStream(
            self._source, fields=fields, count=self.count if count is None else count
        )

    def through(
        self, step: Callable[[Iterable[Document]], Iterable[Document]], *, count: int | None = None
    ) -> DocumentStream:
        """The documents ``step`` makes of these on each read (chunks, or these as they pass a
        tap); ``step`` keeps the documents' fields, so the extra field names stay known."""
        return DocumentStream(lambda: step(self), fields=self.fields, count=count)

    def __iter__(self) -> Iterator[Document]:
        return iter(self._source())

    def __repr__(self) -> str:
        return f"DocumentStream(count={self.count}, fields={self.fields})"


def reiterable(docs: Iterable[Document]) -> Iterable[Document]:
    """``docs`` in a form that can be iterated more than once: a stream or a collection as it
    is, anything else (a generator) read into a list."""
    if isinstance(docs, DocumentStream | Collection):
        return docs
    return list(docs)


def extra_fields(docs: Iterable[Document]) -> list[str]:
    """The field names other than ``title`` and ``text`` that the documents hold, in first-seen
    order: from a :class:`DocumentStream` that knows them without reading it, else by a pass."""
    if isinstance(docs, DocumentStream) and docs.fields is not None:
        return list(docs.fields)
    extra: dict[str, None] = {}
    for d in docs:
        for f in d.fields:
            if f not in ("title", "text"):
                extra.setdefault(f, None)
    return list(extra)
