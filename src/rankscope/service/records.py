"""From a collect request to a stored row: ranked list, judgments, threshold, measures.

:func:`build_rows` turns many requests into rows with one ``evaluate()`` call; it is shared by
the HTTP service and the client's local mode.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rankscope import __version__
from rankscope.service import measures
from rankscope.service.schemas import MetricCreate
from rankscope.service.settings import ServiceSettings, search_type_key

#: (user id, search type label) -> threshold
ThresholdLookup = Callable[[str, str], float]


@dataclass(frozen=True)
class NewRecord:
    """A validated request and the user it belongs to."""

    request: MetricCreate
    user_id: str


def settings_thresholds(settings: ServiceSettings) -> ThresholdLookup:
    """Thresholds from the settings only (per search type, else the default)."""

    def lookup(_user: str, search_type: str) -> float:
        return settings.thresholds.get(search_type, settings.default_threshold)

    return lookup


def with_user_thresholds(
    own: Mapping[str, Mapping[str, float]], fallback: ThresholdLookup
) -> ThresholdLookup:
    """A user's own thresholds (``{user: {search type or '*': value}}``) before ``fallback``."""

    def lookup(user: str, search_type: str) -> float:
        mine = own.get(user, {})
        if search_type in mine:
            return mine[search_type]
        if "*" in mine:
            return mine["*"]
        return fallback(user, search_type)

    return lookup


def judgments_of(
    judgments: Mapping[str, int] | None, relevant_ids: Sequence[str] | None
) -> dict[str, int] | None:
    """Graded judgments win; relevant ids give grade 1 each; None when neither is given."""
    if judgments is not None:
        return dict(judgments)
    if relevant_ids is not None:
        return dict.fromkeys(relevant_ids, 1)
    return None


def build_rows(
    records: Sequence[NewRecord], thresholds: ThresholdLookup, now: dt.datetime | None = None
) -> list[dict[str, Any]]:
    """Rows for ``retrieval_metrics``, scored together in one ``evaluate()`` call."""
    now = now or dt.datetime.now(dt.UTC)
    rows: list[dict[str, Any]] = []
    items: list[measures.Evaluable] = []
    keys = new_ids(len(records))
    for key, record in zip(keys, records, strict=True):
        req = record.request
        opts = req.options
        docs = req.retrieved_documents
        search_types = opts.search_types if opts and opts.search_types else None
        type_label = search_type_key(search_types.names() if search_types else [])
        doc_ids = [d["documentId"] for d in docs]
        given = judgments_of(req.judgments, req.relevant_document_ids)
        if given is None:
            threshold: float | None = thresholds(record.user_id, type_label)
            assert threshold is not None
            given = measures.heuristic_judgments(
                ((d["documentId"], d["score"]) for d in docs), threshold
            )
            source = "heuristic"
        else:
            threshold = None
            source = "provided"
        judgments = measures.complete_judgments(given, doc_ids)
        cutoff = opts.cutoff if opts and opts.cutoff else None
        ranking = measures.shown_ranking(doc_ids, cutoff)
        items.append(measures.Evaluable(key.hex, ranking, judgments))
        scores = [d["score"] for d in docs]
        web = (opts.web_results_count if opts else None) or 0
        timestamp = req.timestamp or now
        if timestamp.tzinfo is None:
            timestamp = timestamp.replace(tzinfo=dt.UTC)
        rows.append(
            {
                "id": key,
                "user_id": record.user_id,
                "query": req.query,
                "query_id": req.query_id,
                "timestamp": timestamp,
                "document_chunks_retrieved": len(docs),
                "web_results_retrieved": web,
                "total_sources": len(docs) + web,
                "min_score": min(scores) if scores else None,
                "max_score": max(scores) if scores else None,
                "average_score": sum(scores) / len(scores) if scores else None,
                "search_types": search_types.flags() if search_types else None,
                "search_type": type_label,
                "topic_id": opts.topic_id if opts else None,
                "document_ids": list(opts.document_ids)
                if opts and opts.document_ids is not None
                else None,
                "ranked_list": ranked_list(req),
                "judgments": given,
                "judgment_source": source,
                "threshold": threshold,
                "cutoff": cutoff if cutoff is not None else len(ranking),
                "rankscope_version": __version__,
                "collect_id": req.collect_id,
                "arm": opts.arm if opts else None,
                "created_at": now,
                "updated_at": now,
            }
        )
    for row, values in zip(rows, measures.score(items), strict=True):
        row.update(measure_columns(values))
    return rows


def new_ids(n: int) -> list[uuid.UUID]:
    """``n`` random (version 4) UUIDs from one read of the system's random source."""
    raw = os.urandom(16 * n)
    out = []
    for i in range(n):
        b = bytearray(raw[16 * i : 16 * i + 16])
        b[6] = (b[6] & 0x0F) | 0x40  # version 4
        b[8] = (b[8] & 0x3F) | 0x80  # RFC 4122 variant
        out.append(uuid.UUID(bytes=bytes(b)))
    return out


def ranked_list(req: MetricCreate) -> list[dict[str, Any]]:
    """The shown list: position (from 1), document id, score, and chunk index and name when
    given."""
    out = []
    for position, doc in enumerate(req.retrieved_documents, start=1):
        item = {"position": position, "document_id": doc["documentId"], "score": doc["score"]}
        chunk = doc.get("chunkIndex")
        if chunk is not None:
            item["chunk_index"] = chunk
        name = doc.get("documentName")
        if name is not None:
            item["document_name"] = name
        out.append(item)
    return out


def measure_columns(values: measures.QueryMeasures) -> dict[str, Any]:
    return {
        "total_retrieved": values.total_retrieved,
        "total_relevant": values.total_relevant,
        "relevant_retrieved": values.relevant_retrieved,
        "precision": values.precision,
        "recall": values.recall,
        "f1_score": values.f1_score,
        "mean_reciprocal_rank": values.mean_reciprocal_rank,
        "average_precision": values.average_precision,
        "ndcg": values.ndcg,
    }


def rescore(row: Mapping[str, Any], judgments: Mapping[str, int]) -> dict[str, Any]:
    """New measure columns for a stored row given new judgments (feedback)."""
    doc_ids = [item["document_id"] for item in row["ranked_list"]]
    ranking = measures.shown_ranking(doc_ids, row["cutoff"])
    full = measures.complete_judgments(judgments, doc_ids)
    (values,) = measures.score([measures.Evaluable(str(row["id"]), ranking, full)])
    return measure_columns(values)


__all__ = [
    "NewRecord",
    "ThresholdLookup",
    "build_rows",
    "judgments_of",
    "measure_columns",
    "ranked_list",
    "rescore",
    "settings_thresholds",
    "with_user_thresholds",
]
