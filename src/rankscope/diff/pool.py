"""The unjudged documents of a diff as a pool to judge: the (query, document) pairs in the rows
shown of either run that the qrels do not judge, in ``rankscope pool``'s format
(:mod:`rankscope.judge.pool`), for ``rankscope judge`` or annotators."""

from __future__ import annotations

from rankscope.data.order import byte_key
from rankscope.diff.core import RunDiff
from rankscope.judge.pool import Pool, PoolEntry


def unjudged_pool(diff: RunDiff, *, every_query: bool = False) -> Pool:
    """The unjudged pairs of the queries shown (of every compared query with
    ``every_query``), with provenance ``(run, rank)``, the query text and the document's title
    and text where the diff has them. Entries are ordered as ``rankscope pool`` orders them:
    query id (byte order), best rank, document id."""
    found: dict[tuple[str, str], list[tuple[str, int]]] = {}
    texts: dict[str, str] = {}
    for q in diff.queries if every_query else diff.shown:
        texts[q.query_id] = q.query
        for name, side in ((diff.a.name, q.a), (diff.b.name, q.b)):
            for row in side.rows:
                if not row.judged:
                    found.setdefault((q.query_id, row.doc_id), []).append((name, row.rank))
    entries = []
    for (qid, doc_id), provenance in found.items():
        doc = diff.documents.get(doc_id)
        entries.append(
            PoolEntry(
                query_id=qid,
                doc_id=doc_id,
                provenance=tuple(provenance),
                query=texts[qid],
                title=doc.title if doc is not None else "",
                text=doc.text if doc is not None else "",
            )
        )
    entries.sort(key=lambda e: (byte_key(e.query_id), e.best_rank, byte_key(e.doc_id)))
    return Pool(tuple(entries), depth=diff.depth, run_names=(diff.a.name, diff.b.name))


__all__ = ["unjudged_pool"]
