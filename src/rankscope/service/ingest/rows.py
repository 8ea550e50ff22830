"""From a collect request to a stored row: ranked list, judgments, threshold, measures.

:func:`build_rows` turns many requests into rows with one ``evaluate()`` call; it is shared by
the HTTP service and the client's local mode.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from rankscope import __version__
from rankscope.collect.wire import MetricCreate
from rankscope.ids import uuid7s
from rankscope.service.ingest import measures
from rankscope.service.settings import ServiceSettings, search_type_key

#: (user id, search type label) -> threshold
ThresholdLookup = Callable[[str, str], float]


class NewRecord(NamedTuple):
    """A validated request and the user it belongs to (a named tuple: one per record)."""

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
    """Rows for ``retrieval_metrics``, scored together in one ``evaluate()`` call.

    This runs for every collected record (tens of thousands a second through the batch
    endpoint), so the loop is written for speed: no helper objects per record, and what
    records share (the search-type label, the threshold) is computed once per distinct value.
    """
    now = now or dt.datetime.now(dt.UTC)
    rows: list[dict[str, Any]] = []
    items: list[measures.Evaluable] = []
    labels: dict[tuple[bool, bool, bool, bool], tuple[str, dict[str, bool]]] = {}
    limits: dict[tuple[str, str], float] = {}
    utc = dt.UTC
    version = __version__
    evaluable = measures.Evaluable
    keys = _item_keys(len(records))
    for key, item_key, record in zip(uuid7s(len(records)), keys, records, strict=True):
        req = record.request
        opts = req.options
        docs = req.retrieved_documents
        if opts is None:
            type_label, flags, cutoff, web = "none", None, None, 0
            topic_id = document_ids = arm = None
        else:
            st = opts.search_types
            if st is None:
                type_label, flags = "none", None
            else:
                bits = (st.semantic, st.keyword, st.hybrid, st.web)
                known = labels.get(bits)
                if known is None:
                    known = labels[bits] = (search_type_key(st.names()), st.flags())
                type_label, flags = known[0], known[1].copy()  # each row owns its flags
            cutoff = opts.cutoff
            web = opts.web_results_count or 0
            topic_id = opts.topic_id
            document_ids = None if opts.document_ids is None else list(opts.document_ids)
            arm = opts.arm
        doc_ids = [d["documentId"] for d in docs]
        scores = [d["score"] for d in docs]
        threshold: float | None = None
        source = "provided"
        given = judgments_of(req.judgments, req.relevant_document_ids)
        if given is None:
            limit_key = (record.user_id, type_label)
            threshold = limits.get(limit_key)
            if threshold is None:
                threshold = limits[limit_key] = thresholds(record.user_id, type_label)
            given = measures.heuristic_judgments(zip(doc_ids, scores, strict=True), threshold)
            source = "heuristic"
        # the distinct documents in the order first shown are the keys of a dict made from
        # doc_ids: taken from the judgments' dict instead of measures.shown_ranking
        if source == "heuristic":
            judgments = given  # grades every retrieved document already, in that order
            distinct = tuple(given)
        else:  # measures.complete_judgments: grade 0 for each retrieved document not judged
            judgments = dict.fromkeys(doc_ids, 0)
            distinct = tuple(judgments)
            judgments.update(given)
        ranking = measures.first_shown(distinct, cutoff)
        items.append(evaluable(item_key, ranking, judgments))
        timestamp = req.timestamp or now
        if timestamp.tzinfo is None:
            timestamp = timestamp.replace(tzinfo=utc)
        n = len(docs)
        rows.append(
            {
                "id": key,
                "user_id": record.user_id,
                "query": req.query,
                "query_id": req.query_id,
                "timestamp": timestamp,
                "document_chunks_retrieved": n,
                "web_results_retrieved": web,
                "total_sources": n + web,
                "min_score": min(scores) if n else None,
                "max_score": max(scores) if n else None,
                "average_score": sum(scores) / n if n else None,
                "search_types": flags,
                "search_type": type_label,
                "topic_id": topic_id,
                "document_ids": document_ids,
                "ranked_list": _ranked(docs),
                "judgments": given,
                "judgment_source": source,
                "threshold": threshold,
                "cutoff": cutoff if cutoff else len(ranking),
                "rankscope_version": version,
                "collect_id": req.collect_id,
                "arm": arm,
                "created_at": now,
                "updated_at": now,
            }
        )
    for row, values in zip(rows, measures.score_values(items), strict=True):
        # VALUE_COLUMNS (rankscope.service.store.models), spelled out: a subscript each costs
        # a third of row.update(zip(...)); a test checks that the two agree
        (
            row["total_retrieved"],
            row["total_relevant"],
            row["relevant_retrieved"],
            row["precision"],
            row["recall"],
            row["f1_score"],
            row["mean_reciprocal_rank"],
            row["average_precision"],
            row["ndcg"],
        ) = values
    return rows


#: keys of the items of one evaluate() call: the item's index, zero-padded so that byte order
#: is index order (the keys only tell the items apart; the row's id is the record's key)
_KEYS: list[str] = []


def _item_keys(n: int) -> list[str]:
    if len(_KEYS) < n:
        _KEYS[:] = [f"{i:09d}" for i in range(max(n, 2 * len(_KEYS), 1024))]
    return _KEYS[:n]


def ranked_list(req: MetricCreate) -> list[dict[str, Any]]:
    """The shown list: position (from 1), document id, score, and chunk index and name when
    given."""
    return _ranked(req.retrieved_documents)


def _ranked(docs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for position, doc in enumerate(docs, start=1):
        item = {"position": position, "document_id": doc["documentId"], "score": doc["score"]}
        chunk = doc.get("chunkIndex")
        if chunk is not None:
            item["chunk_index"] = chunk
        name = doc.get("documentName")
        if name is not None:
            item["document_name"] = name
        out.append(item)
    return out


def rescore(row: Mapping[str, Any], judgments: Mapping[str, int]) -> dict[str, Any]:
    """New measure columns for a stored row given new judgments (feedback)."""
    doc_ids = [item["document_id"] for item in row["ranked_list"]]
    ranking = measures.shown_ranking(doc_ids, row["cutoff"])
    full = measures.complete_judgments(judgments, doc_ids)
    (values,) = measures.score([measures.Evaluable(str(row["id"]), ranking, full)])
    return dataclasses.asdict(values)  # the fields are VALUE_COLUMNS


__all__ = [
    "NewRecord",
    "ThresholdLookup",
    "build_rows",
    "judgments_of",
    "ranked_list",
    "rescore",
    "settings_thresholds",
    "with_user_thresholds",
]
