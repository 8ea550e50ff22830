"""Elasticsearch / OpenSearch query DSL for the five query kinds, index settings and bulk actions.

Pure functions from rankscope values to the JSON bodies the clients send, so the bodies can be
compared with golden files (``tests/engines/golden/``) and read in one place:

- index creation: one shard, no replicas, the BM25 ``k1`` / ``b`` as the index's ``default``
  similarity (``settings.index.similarity.default``), one analyzer for every text field; every
  field is ``copy_to`` a ``contents`` field, which free-text, all-field phrase and boolean
  queries search (one BM25 bag over the whole document, as the other engines score it);
- ``query_string`` -> ``query_string`` on ``contents``, OR between terms. By default the text is
  reduced to its words (reserved characters ``+ - = && || > < ! ( ) { } [ ] ^ " ~ * ? : \\ /``
  dropped, ``AND``/``OR``/``NOT`` lowercased), so user text is never Lucene syntax; with
  ``query_syntax="lucene"`` it is passed as written;
- ``match`` -> ``match`` on the field;
- ``multi_match`` -> ``multi_match`` with ``field^boost`` and a ``type`` (``best_fields``, as
  Elasticsearch defaults; ``most_fields`` sums the fields as the postgres engine does);
- ``phrase`` -> ``match_phrase`` with ``slop`` (on ``contents`` when no field is named);
- ``boolean`` -> ``bool`` with ``must`` / ``should`` / ``must_not``; a one-word term is a
  ``match``, a longer one a ``match_phrase``, all on ``contents``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from rankscope.engines._text import boolean_clauses, words
from rankscope.engines.base import Document, Query
from rankscope.errors import ConfigError, EngineError

CONTENTS = "contents"
#: the name a custom analyzer definition gets in the index settings
CUSTOM_ANALYZER = "rankscope"
_OPERATORS = frozenset({"AND", "OR", "NOT"})
_FIELD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]*")
_ALL = ("", "all", "_all", "*", CONTENTS)

MultiMatchType = Literal["best_fields", "most_fields"]
QuerySyntax = Literal["escape", "lucene"]


def analyzer_name(analyzer: str | Mapping[str, Any]) -> str:
    """The analyzer the mappings name: a built-in name, or the custom one's name."""
    return analyzer if isinstance(analyzer, str) else CUSTOM_ANALYZER


def check_analyzer(analyzer: object) -> str | dict[str, Any]:
    if isinstance(analyzer, str) and analyzer.strip():
        return analyzer
    if isinstance(analyzer, Mapping) and analyzer.get("tokenizer"):
        return {"type": "custom", **{str(k): v for k, v in analyzer.items()}}
    raise ConfigError(
        "option 'analyzer' must name a built-in analyzer or define a custom one",
        value=analyzer,
        hint="e.g. analyzer: english, or analyzer: {tokenizer: standard, filter: [lowercase, "
        "stop, porter_stem]}",
    )


def index_body(
    *,
    k1: float,
    b: float,
    analyzer: str | Mapping[str, Any],
    shards: int = 1,
    replicas: int = 0,
) -> dict[str, Any]:
    """The body of ``PUT /<index>``: settings (shards, BM25, analysis) and mappings."""
    settings: dict[str, Any] = {
        "index": {
            "number_of_shards": int(shards),
            "number_of_replicas": int(replicas),
            "similarity": {"default": {"type": "BM25", "k1": float(k1), "b": float(b)}},
        }
    }
    if not isinstance(analyzer, str):
        settings["analysis"] = {"analyzer": {CUSTOM_ANALYZER: dict(analyzer)}}
    name = analyzer_name(analyzer)
    field = {"type": "text", "analyzer": name, "copy_to": CONTENTS}
    return {
        "settings": settings,
        "mappings": {
            "dynamic_templates": [
                {"strings_as_text": {"match_mapping_type": "string", "mapping": dict(field)}}
            ],
            "properties": {
                CONTENTS: {"type": "text", "analyzer": name},
                "title": dict(field),
                "text": dict(field),
            },
        },
    }


def document_source(doc: Document) -> dict[str, str]:
    """The ``_source`` of a document: title, text and its other fields (names checked)."""
    source = {"title": doc.title, "text": doc.text}
    for name, value in doc.fields.items():
        if name in ("title", "text"):
            continue
        if name == CONTENTS or not _FIELD_NAME.fullmatch(name):
            raise EngineError(
                f"document {doc.id!r} has field {name!r}, which cannot be an Elasticsearch field "
                f"here (letters, digits, '_' and '-', not starting with '_' or '-'; "
                f"{CONTENTS!r} is reserved); rename it in the corpus"
            )
        source[name] = value
    return source


def bulk_action(index: str, doc: Document) -> dict[str, Any]:
    """One ``index`` action for the clients' bulk helpers."""
    return {"_op_type": "index", "_index": index, "_id": doc.id, "_source": document_source(doc)}


def _field(name: str | None) -> str:
    if name is None or name in _ALL:
        return CONTENTS
    return name


def query_string_text(text: str, syntax: QuerySyntax) -> str:
    if syntax == "lucene":
        return text
    return " ".join(w.lower() if w in _OPERATORS else w for w in words(text))


def _term_query(term: str) -> dict[str, Any]:
    if len(words(term)) > 1:
        return {"match_phrase": {CONTENTS: {"query": term}}}
    return {"match": {CONTENTS: {"query": term}}}


def query_dsl(
    query: Query,
    *,
    multi_match_type: MultiMatchType = "best_fields",
    query_syntax: QuerySyntax = "escape",
) -> dict[str, Any] | None:
    """The ``query`` clause for ``query``, or None when it has nothing to search for."""
    kind = query.kind
    if kind == "boolean":
        must, should, must_not = boolean_clauses(query)
        clause: dict[str, Any] = {}
        if must:
            clause["must"] = [_term_query(t) for t in must]
        if should:
            clause["should"] = [_term_query(t) for t in should]
        if must_not:
            clause["must_not"] = [_term_query(t) for t in must_not]
        return {"bool": clause}
    if kind == "query_string":
        text = query_string_text(query.text, query_syntax)
        if not text.strip():
            return None
        return {
            "query_string": {
                "query": text,
                "default_field": _field(query.field),
                "default_operator": "OR",
            }
        }
    if not words(query.text):
        return None
    if kind == "match":
        if not query.field:
            raise EngineError(
                f"match query {query.id!r} names no field; set 'field' or use a query_string "
                f"query to search all fields"
            )
        return {"match": {_field(query.field): {"query": query.text}}}
    if kind == "multi_match":
        if not query.fields:
            raise EngineError(
                f"multi_match query {query.id!r} lists no fields; give (field, boost) pairs"
            )
        return {
            "multi_match": {
                "query": query.text,
                "fields": [f"{_field(f)}^{float(boost):g}" for f, boost in query.fields],
                "type": multi_match_type,
            }
        }
    # phrase
    return {
        "match_phrase": {
            _field(query.field): {"query": query.text, "slop": max(0, int(query.slop))}
        }
    }


def search_body(
    query: Query,
    k: int,
    *,
    multi_match_type: MultiMatchType = "best_fields",
    query_syntax: QuerySyntax = "escape",
) -> dict[str, Any] | None:
    """The body of ``POST /<index>/_search`` (ids and scores only), or None for no search."""
    clause = query_dsl(query, multi_match_type=multi_match_type, query_syntax=query_syntax)
    if clause is None:
        return None
    return {"query": clause, "size": int(k), "_source": False, "track_total_hits": False}
