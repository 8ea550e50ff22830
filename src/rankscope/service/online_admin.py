"""The library behind ``rankscope serve import-ubi``, ``sample``, ``calibrate``,
``check-alerts`` and ``purge``: each opens the service's database (``database_url``: on
PostgreSQL the application role, acting per transaction as one user or as the service role),
does one thing, and returns typed results for the command to print."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rankscope.errors import InputError, ServiceError
from rankscope.online.clicks import Model
from rankscope.online.queries import normalise_query, query_key
from rankscope.online.sampling import (
    CollectedQuery,
    Sample,
    ShownDocument,
    sample_for_judging,
)
from rankscope.service.analysis.alerts import CheckResult, check_alerts
from rankscope.service.analysis.experiments import calibrate, click_labels
from rankscope.service.ingest.events import event_rows
from rankscope.service.ingest.rows import settings_thresholds
from rankscope.service.ingest.ubi import UbiImport, read_ubi
from rankscope.service.ingest.writer import MetricsStore
from rankscope.service.retention import purge
from rankscope.service.schemas.experiments import CalibrationPublic
from rankscope.service.settings import ServiceSettings
from rankscope.service.store import Stores
from rankscope.service.store.db import Principal, is_postgres, make_engine, migrate
from rankscope.service.store.events import EventFilters
from rankscope.service.store.records import Filters


@contextlib.contextmanager
def open_online(settings: ServiceSettings) -> Iterator[Stores]:
    """The stores on ``database_url`` (SQLite is migrated first, as the service does)."""
    engine = make_engine(settings.database_url, pool_size=2)
    try:
        if not is_postgres(engine) and settings.auto_migrate:
            migrate(engine)
    except BaseException:
        engine.dispose()
        raise
    store = MetricsStore(engine, settings_thresholds(settings))
    try:
        store.check_schema()
        yield store.stores()
    finally:
        store.close()


def principal_for(user: str | None) -> Principal:
    """One user's rows, or (None) every user's as the service role."""
    return Principal(user, "user") if user else Principal("rankscope-cli", "service")


# -- import-ubi --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Imported:
    ubi: UbiImport
    accepted: int
    duplicates: int


def import_ubi(
    settings: ServiceSettings,
    path: Path,
    user: str,
    *,
    zero_based: bool = False,
    impressions_from_queries: bool = True,
    url: str | None = None,
    token: str | None = None,
    batch_size: int = 1000,
) -> Imported:
    """Read a UBI file and store its events for ``user``: into the database, or through
    ``POST /api/events`` of a running service when ``url`` is given."""
    ubi = read_ubi(path, zero_based=zero_based, impressions_from_queries=impressions_from_queries)
    accepted = duplicates = 0
    batches = [ubi.events[i : i + batch_size] for i in range(0, len(ubi.events), batch_size)]
    if url is not None:
        import httpx

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            for batch in batches:
                body = {
                    "events": [
                        {
                            **e.model_dump(mode="json", by_alias=True, exclude_none=True),
                            "userId": user,
                        }
                        for e in batch
                    ]
                }
                response = client.post("/api/events", json=body)
                if response.status_code != 201:
                    raise ServiceError(
                        f"{url}/api/events answered {response.status_code}: {response.text[:300]}"
                    )
                data = response.json()["data"]
                accepted += data["accepted"]
                duplicates += data["duplicates"]
        return Imported(ubi, accepted, duplicates)
    principal = Principal(user, "user")
    with open_online(settings) as stores:
        for batch in batches:
            rows = event_rows(batch, lambda _u: user, dt.datetime.now(dt.UTC))
            outcomes = stores.events.write(principal, rows)
            dups = sum(d for _, d in outcomes)
            accepted += len(outcomes) - dups
            duplicates += dups
    return Imported(ubi, accepted, duplicates)


# -- sample ------------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class SampleFiles:
    sample: Sample
    pool: Path
    queries: Path


def sample_pool(
    settings: ServiceSettings,
    out: Path,
    budget: int,
    *,
    depth: int = 10,
    seed: int = 0,
    user: str | None = None,
    corpus: Path | None = None,
    start: dt.datetime | None = None,
    end: dt.datetime | None = None,
) -> SampleFiles:
    """Sample collected queries for judging and write the pool ``rankscope judge`` reads, plus
    ``<out>.queries.jsonl`` listing every sampled query with its stratum (zero-result queries
    without documents are only there)."""
    from rankscope.judge.pool import Pool, PoolEntry, pool_format, write_pool

    pool_format(out)  # refuses an unknown suffix before any work
    documents = None
    if corpus is not None:
        from rankscope.judge.io import read_corpus

        documents = read_corpus(corpus)
    with open_online(settings) as stores:
        queries = collected_queries(
            stores, principal_for(user), Filters(start=start, end=end, user_id=None)
        )
    if not queries:
        raise InputError("no collected queries to sample", hint="collect records or events first")
    sample = sample_for_judging(queries, budget, depth=depth, seed=seed)
    entries = []
    for sq in sample.queries:
        for d in sq.documents:
            cdoc = documents.get(d.doc) if documents else None
            entries.append(
                PoolEntry(
                    query_id=sq.query.key,
                    doc_id=d.doc,
                    provenance=((d.source, d.position),),
                    query=sq.query.text,
                    title=(cdoc.title if cdoc else None) or d.name or "",
                    text=cdoc.text if cdoc else "",
                )
            )
    if not entries:
        raise InputError(
            "the sample holds no (query, document) pair to judge (only zero-result queries)",
            hint="collect more queries or raise --budget",
        )
    write_pool(Pool(tuple(entries), depth=depth, run_names=()), out)
    listing = out.with_name(out.name.rsplit(".", 1)[0] + ".queries.jsonl")
    with listing.open("w", encoding="utf-8") as f:
        for sq in sample.queries:
            q = sq.query
            f.write(
                json.dumps(
                    {
                        "query_id": q.key,
                        "query": q.text,
                        "stratum": sq.stratum,
                        "frequency": q.frequency,
                        "impressions": q.impressions,
                        "clicks": q.clicks,
                        "zero_result": q.zero_result,
                        "pairs": len(sq.documents),
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )
    return SampleFiles(sample, out, listing)


# -- calibrate ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Calibrated:
    result: CalibrationPublic
    applied: dict[str, float]


def calibrate_thresholds(
    settings: ServiceSettings,
    *,
    user: str | None = None,
    labels: Path | None = None,
    model: Model | None = None,
    by: Literal["searchType", "arm"] = "searchType",
    min_grade: int = 1,
    apply: bool = False,
) -> Calibrated:
    """Calibrate against click grades, or against a qrels file whose query ids are query keys
    (``rankscope judge`` on a pool from :func:`sample_pool` writes one). ``apply`` sets the
    user's threshold of each search type whose best threshold lies in 0..1."""
    if apply and (user is None or by != "searchType"):
        raise InputError(
            "--apply sets one user's thresholds per search type",
            hint="give --user and keep --by searchType",
        )
    principal = principal_for(user)
    filters = Filters(user_id=None)
    with open_online(settings) as stores:
        if labels is not None:
            from rankscope.data.readers import read_qrels

            grades = read_qrels(labels).to_dict()
            name = str(labels)
        else:
            grades, name = click_labels(stores, principal, filters, settings, model)
        result = calibrate(
            stores, principal, filters, settings, grades, name, by=by, min_grade=min_grade
        )
        applied: dict[str, float] = {}
        if apply:
            assert user is not None
            for g in result.groups:
                if g.applicable and g.group is not None and g.best_threshold is not None:
                    applied[g.group] = g.best_threshold
            if applied:
                stores.settings.set_thresholds(principal, user, dict(applied.items()))
    return Calibrated(result, applied)


# -- alerts and purge --------------------------------------------------------------------------


def run_alert_check(settings: ServiceSettings, now: dt.datetime | None = None) -> CheckResult:
    if not settings.alert_rules:
        raise InputError(
            "no alert rules in the settings",
            hint="add [[alert_rules]] to the settings file (docs/service.md, Alerts)",
        )
    with open_online(settings) as stores:
        return check_alerts(stores, settings, now)


def run_purge(
    settings: ServiceSettings, *, dry_run: bool = False, now: dt.datetime | None = None
) -> dict[str, dict[str, int]]:
    with open_online(settings) as stores:
        return purge(stores, settings, now=now, dry_run=dry_run)


__all__ = [
    "Calibrated",
    "Imported",
    "SampleFiles",
    "calibrate_thresholds",
    "collected_queries",
    "import_ubi",
    "open_online",
    "principal_for",
    "run_alert_check",
    "run_purge",
    "sample_pool",
]
