"""Text helpers shared by the engines: word splitting, boolean-query checks, field lists.

User query text is never handed to an engine's query parser as is: it is split into plain word
tokens here, and each engine quotes or wraps those tokens in its own syntax, so operators,
quotes, colons or parentheses in the text are searched as words (or dropped), never executed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

from rankscope.engines.base import Document, Query
from rankscope.engines.stream import extra_fields
from rankscope.errors import EngineError

# Letters and digits (any script); everything else separates words. Combining marks are kept so
# that decomposed accents stay inside their word.
_WORD = re.compile(r"(?:[^\W_]|[\u0300-\u036f])+")


def words(text: str) -> list[str]:
    """The word tokens of ``text`` (NFC-normalised, case kept): no punctuation, no operators."""
    return _WORD.findall(unicodedata.normalize("NFC", text))


def boolean_clauses(query: Query) -> tuple[list[str], list[str], list[str]]:
    """The non-empty ``must``/``should``/``must_not`` terms of a boolean query, checked.

    A term may hold several words (it is then searched as a phrase). Terms without any word
    are dropped: they can match nothing. A query with no positive term left is refused rather
    than answered with every document.
    """
    must = [t for t in query.must if words(t)]
    should = [t for t in query.should if words(t)]
    must_not = [t for t in query.must_not if words(t)]
    if not must and not should:
        raise EngineError(
            f"boolean query {query.id!r} has no 'must' or 'should' term with a searchable word "
            f"(must={list(query.must)!r}, should={list(query.should)!r}); add at least one"
        )
    return must, should, must_not


def field_names(query: Query) -> list[str]:
    """The fields a match / multi_match / phrase query names (empty: all fields)."""
    if query.kind == "multi_match":
        return [f for f, _ in query.fields]
    if query.field:
        return [query.field]
    return []


def document_fields(docs: Iterable[Document]) -> list[str]:
    """``title``, ``text``, then every other field the documents hold, in first-seen order (a
    :class:`~rankscope.engines.stream.DocumentStream` that knows them is not read)."""
    return ["title", "text", *extra_fields(docs)]


def indexed_name(names: Mapping[str, str], query: Query, field: str, engine: str) -> str:
    """The engine's own name for a field a query names (``names``: field -> column or index
    field); an :class:`EngineError` listing the indexed fields when it has none."""
    try:
        return names[field]
    except KeyError:
        known = ", ".join(names) or "(nothing indexed yet)"
        raise EngineError(
            f"query {query.id!r} names field {field!r}, which the {engine} index does not "
            f"have; indexed fields: {known}"
        ) from None
