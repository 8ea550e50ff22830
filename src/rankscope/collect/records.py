"""Build the JSON record of one retrieval, as ``POST /api/metrics/retrieval/collect`` takes it.

Documents may be mappings (``documentId``/``document_id``/``doc_id``/``id``, ``score``,
``chunkIndex``/``chunk_index``, ``documentName``/``document_name``/``name``), objects with such
attributes (rankscope's own ``Hit``), or ``(document_id, score)`` pairs.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rankscope.ids import uuid7

_ID_NAMES = ("documentId", "document_id", "doc_id", "id")
_CHUNK_NAMES = ("chunkIndex", "chunk_index")
_NAME_NAMES = ("documentName", "document_name", "name", "title")
SEARCH_TYPES = ("semantic", "keyword", "hybrid", "web")


def _get(doc: Any, names: Sequence[str]) -> Any:
    for name in names:
        if isinstance(doc, Mapping):
            if name in doc:
                return doc[name]
        elif hasattr(doc, name):
            return getattr(doc, name)
    return None


def document(doc: Any) -> dict[str, Any]:
    """One retrieved document as the API's ``retrievedDocuments`` item."""
    if isinstance(doc, tuple) and len(doc) == 2:
        doc_id, score = doc
        chunk = name = None
    else:
        doc_id = _get(doc, _ID_NAMES)
        score = _get(doc, ("score",))
        chunk = _get(doc, _CHUNK_NAMES)
        name = _get(doc, _NAME_NAMES)
    if doc_id is None or score is None:
        raise ValueError(f"a retrieved document needs an id and a score, got {doc!r}")
    value = float(score)
    if not math.isfinite(value):
        raise ValueError(f"the score of document {doc_id!r} is not finite: {score!r}")
    out: dict[str, Any] = {"documentId": str(doc_id), "score": value}
    if chunk is not None:
        out["chunkIndex"] = int(chunk)
    if name is not None:
        out["documentName"] = str(name)
    return out


def make_record(
    query: str,
    documents: Iterable[Any],
    *,
    relevant_document_ids: Iterable[str] | None = None,
    judgments: Mapping[str, int] | None = None,
    query_id: str | None = None,
    topic_id: str | None = None,
    search_types: Iterable[str] | Mapping[str, bool] | None = None,
    web_results_count: int | None = None,
    document_ids: Iterable[str] | None = None,
    cutoff: int | None = None,
    arm: str | None = None,
    user_id: str | None = None,
    timestamp: dt.datetime | None = None,
    collect_id: str | None = None,
) -> dict[str, Any]:
    """The JSON body of one record; ``collectId`` defaults to a new time-ordered UUID (safe
    retries; the service's (user, collectId) index takes it at its end)."""
    record: dict[str, Any] = {
        "query": str(query),
        "retrievedDocuments": [document(d) for d in documents],
        "collectId": collect_id or uuid7().hex,
        "timestamp": (timestamp or dt.datetime.now(dt.UTC)).isoformat(),
    }
    if query_id is not None:
        record["queryId"] = str(query_id)
    if relevant_document_ids is not None:
        record["relevantDocumentIds"] = [str(d) for d in relevant_document_ids]
    if judgments is not None:
        record["judgments"] = {str(k): int(v) for k, v in judgments.items()}
    if user_id is not None:
        record["userId"] = str(user_id)
    options: dict[str, Any] = {}
    if topic_id is not None:
        options["topicId"] = str(topic_id)
    if search_types is not None:
        if isinstance(search_types, Mapping):
            chosen = {k for k, v in search_types.items() if v}
        else:
            chosen = set(search_types)
        unknown = chosen - set(SEARCH_TYPES)
        if unknown:
            raise ValueError(f"unknown search types {sorted(unknown)}; use {SEARCH_TYPES}")
        options["searchTypes"] = {t: t in chosen for t in SEARCH_TYPES}
    if web_results_count is not None:
        options["webResultsCount"] = int(web_results_count)
    if document_ids is not None:
        options["documentIds"] = [str(d) for d in document_ids]
    if cutoff is not None:
        options["cutoff"] = int(cutoff)
    if arm is not None:
        options["arm"] = str(arm)
    if options:
        record["options"] = options
    return record


__all__ = ["SEARCH_TYPES", "document", "make_record"]
