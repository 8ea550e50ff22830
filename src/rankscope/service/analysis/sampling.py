"""The collected queries a judging sample is drawn from: every normalised query of the records
and events, with its frequency, impressions, clicks, zero-result state and the documents shown
for it (:func:`rankscope.online.sampling.sample_for_judging` draws from them)."""

from __future__ import annotations

from dataclasses import dataclass

from rankscope.online.queries import normalise_query, query_key
from rankscope.online.sampling import CollectedQuery, ShownDocument
from rankscope.service.store import Stores
from rankscope.service.store.db import Principal
from rankscope.service.store.events import EventFilters
from rankscope.service.store.records import Filters


def collected_queries(
    stores: Stores, principal: Principal, filters: Filters
) -> list[CollectedQuery]:
    """Every collected query (normalised text), from records and events, with its frequency,
    impressions, clicks, zero-result state and the documents shown for it."""
    columns = ["id", "query", "query_id", "arm", "ranked_list"]
    records = stores.records.metric_rows(principal, filters, columns)
    event_filter = EventFilters.of_records(filters)
    events = stores.events.rows(principal, event_filter, ["search", "impression", "click"])
    texts = {r["query_id"]: r["query"] for r in records if r["query_id"]}
    for e in events:
        if e["query"] and e["query_id"] not in texts:
            texts[e["query_id"]] = e["query"]

    @dataclass
    class Acc:
        text: str
        searches: set[str]
        impressions: int = 0
        clicks: int = 0
        empty: bool = False
        shown: bool = False

    acc: dict[str, Acc] = {}
    docs: dict[str, dict[str, ShownDocument]] = {}

    def entry(text: str) -> tuple[str, Acc]:
        key = normalise_query(text)
        return key, acc.setdefault(key, Acc(text, set()))

    def show(key: str, doc: str, position: int, name: str | None, source: str) -> None:
        known = docs.setdefault(key, {})
        old = known.get(doc)
        if old is None or position < old.position:
            known[doc] = ShownDocument(doc, position, name or (old.name if old else None), source)

    for r in records:
        key, a = entry(r["query"])
        a.searches.add(r["query_id"] or f"record:{r['id']}")
        if not r["ranked_list"]:
            a.empty = True
        for item in r["ranked_list"]:
            a.shown = True
            show(
                key,
                item["document_id"],
                item["position"],
                item.get("document_name"),
                r["arm"] or "collected",
            )
    for e in events:
        text = texts.get(e["query_id"])
        if text is None:
            continue
        key, a = entry(text)
        a.searches.add(e["query_id"])
        if e["action"] == "search" and e["result_count"] == 0:
            a.empty = True
        elif e["action"] == "impression":
            a.impressions += 1
            a.shown = True
            show(key, e["document_id"], e["position"], None, e["arm"] or "impressions")
        elif e["action"] == "click":
            a.clicks += 1
    return [
        CollectedQuery(
            key=query_key(key),
            text=a.text,
            frequency=len(a.searches),
            impressions=a.impressions,
            clicks=a.clicks,
            zero_result=a.empty and not a.shown,
            documents=tuple(docs.get(key, {}).values()),
        )
        for key, a in sorted(acc.items())
    ]


__all__ = ["collected_queries"]
