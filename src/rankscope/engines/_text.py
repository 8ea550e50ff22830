"""Text helpers shared by the engines: word splitting, term counting, boolean-query checks,
field lists.

User query text is never handed to an engine's query parser as is: it is split into plain word
tokens here, and each engine quotes or wraps those tokens in its own syntax, so operators,
quotes, colons or parentheses in the text are searched as words (or dropped), never executed.

A free-text query becomes one clause per *distinct* term (:func:`term_counts`), weighted by its
number of occurrences where the engine can weight a clause, and a query with more than
:data:`MAX_QUERY_TERMS` distinct terms is refused with a :class:`QueryError` (that query fails,
not the engine): one clause per occurrence made a 10,000-character query take seconds to
minutes, or exceed Lucene's clause limit.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

from rankscope.engines.base import Document, Query
from rankscope.engines.stream import extra_fields
from rankscope.errors import EngineError, QueryError

# Letters and digits (any script); everything else separates words. Combining marks are kept so
# that decomposed accents stay inside their word.
_WORD = re.compile(r"(?:[^\W_]|[\u0300-\u036f])+")


def words(text: str) -> list[str]:
    """The word tokens of ``text`` (NFC-normalised, case kept): no punctuation, no operators."""
    return _WORD.findall(unicodedata.normalize("NFC", text))


#: the most distinct terms (and phrase words, and boolean terms) one query may hold, in every
#: lexical engine, so that the work per query is bounded: Lucene's default clause limit
MAX_QUERY_TERMS = 1024


def term_counts(terms: Iterable[str], query: Query, engine: str) -> dict[str, int]:
    """Each distinct term of ``terms`` with its number of occurrences, in first-seen order.

    A :class:`QueryError` when there are more than :data:`MAX_QUERY_TERMS` distinct terms.
    """
    counts: dict[str, int] = {}
    for term in terms:
        counts[term] = counts.get(term, 0) + 1
    if len(counts) > MAX_QUERY_TERMS:
        raise QueryError(
            f"query {query.id!r} has {len(counts)} distinct terms for the {engine} engine; a "
            f"query may hold at most {MAX_QUERY_TERMS}. Shorten it"
        )
    return counts


def check_phrase_length(terms: Iterable[str], query: Query) -> None:
    """A :class:`QueryError` when a phrase holds more than :data:`MAX_QUERY_TERMS` words."""
    n = sum(1 for _ in terms)
    if n > MAX_QUERY_TERMS:
        raise QueryError(
            f"query {query.id!r}: a phrase of {n} words is too long; a phrase may hold at "
            f"most {MAX_QUERY_TERMS}. Shorten it"
        )


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
