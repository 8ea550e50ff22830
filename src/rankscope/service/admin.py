"""What the ``rankscope serve`` commands call, one function each: :func:`serve`,
:func:`migrate_database`, :func:`new_key`, :func:`remove_key`, :func:`keys`,
:func:`import_ubi`, :func:`sample_pool`, :func:`calibrate_thresholds`,
:func:`run_alert_check` and :func:`run_purge` (and :func:`parse_when` for their dates). The
commands parse their options, make one call here and print what it returns.

The key commands and ``migrate`` act as the owner (``admin_database_url``); the others open the
service's database (``database_url``: on PostgreSQL the application role, acting per
transaction as one user or as the service role)."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
from sqlalchemy.exc import SQLAlchemyError

from rankscope.errors import InputError, ServiceError
from rankscope.online.clicks import Model
from rankscope.online.sampling import Sample, sample_for_judging
from rankscope.service.analysis.alerts import CheckResult, check_alerts
from rankscope.service.analysis.calibration import calibrate, click_labels
from rankscope.service.analysis.sampling import collected_queries
from rankscope.service.ingest.events import event_rows
from rankscope.service.ingest.rows import settings_thresholds
from rankscope.service.ingest.ubi import UbiImport, read_ubi
from rankscope.service.ingest.writer import MetricsStore
from rankscope.service.schemas.common import parse_moment
from rankscope.service.schemas.experiments import CalibrationPublic
from rankscope.service.server import run
from rankscope.service.settings import ServiceSettings
from rankscope.service.store import Stores
from rankscope.service.store.db import Principal, describe, is_postgres, make_engine, migrate
from rankscope.service.store.keys import KeyInfo, create_key, list_keys, revoke_key
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


def parse_when(value: str | None, name: str, *, end: bool = False) -> dt.datetime | None:
    """A command's date option (ISO 8601; a date alone as an ``end`` is its whole day)."""
    if value is None:
        return None
    try:
        return parse_moment(value, end=end)
    except (ValueError, OverflowError):
        raise InputError(
            f"{name} is not a date",
            value=value,
            hint="use ISO 8601: 2024-05-01 or 2024-05-01T12:00Z",
        ) from None


# -- serve, migrate and keys -------------------------------------------------------------------


def serve(settings: ServiceSettings, announce: Callable[[str], None] | None = None) -> None:
    """Serve until interrupted (:func:`rankscope.service.server.run`)."""
    run(settings, announce)


@dataclass(frozen=True)
class Migration:
    """The database (its URL without the password) and its revision before and after."""

    database: str
    before: str | None
    after: str | None


def migrate_database(settings: ServiceSettings, revision: str = "head") -> Migration:
    """Upgrade the schema (as the owner: ``admin_database_url``)."""
    engine = make_engine(settings.admin_url, pool_size=1)
    try:
        before, after = migrate(engine, revision)
    finally:
        engine.dispose()
    return Migration(describe(settings.admin_url), before, after)


@contextlib.contextmanager
def _admin_engine(settings: ServiceSettings) -> Iterator[Any]:
    """The owner's engine (SQLite migrated first when ``auto_migrate``), disposed after; a
    database error inside becomes a ServiceError that says what to check."""
    engine = make_engine(settings.admin_url, pool_size=1)
    if not is_postgres(engine) and settings.auto_migrate:
        migrate(engine)
    try:
        yield engine
    except Exception as exc:
        _explain(exc, settings)
        raise
    finally:
        engine.dispose()


def new_key(
    settings: ServiceSettings,
    user_id: str,
    role: Literal["user", "service"] = "user",
    name: str | None = None,
) -> tuple[str, KeyInfo]:
    with _admin_engine(settings) as engine:
        return create_key(engine, user_id, role, name)


def remove_key(settings: ServiceSettings, key_or_id: str) -> KeyInfo:
    with _admin_engine(settings) as engine:
        return revoke_key(engine, key_or_id)


def keys(settings: ServiceSettings) -> list[KeyInfo]:
    with _admin_engine(settings) as engine:
        return list_keys(engine)


def _explain(exc: Exception, settings: ServiceSettings) -> None:
    if isinstance(exc, SQLAlchemyError):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ServiceError(
            f"database {describe(settings.admin_url)}: {first}. Is it migrated (`rankscope "
            "serve migrate`) and is admin_database_url the owner's URL?"
        ) from exc


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

PURGER = Principal("rankscope-purge", "service")


def retention_of(stores: Stores, settings: ServiceSettings) -> dict[str, int | None]:
    """Each known user's effective retention in days (None: kept forever)."""
    own = stores.settings.retention_days(PURGER)
    return {u: own.get(u) or settings.retention_days for u in stores.settings.users(PURGER)}


def purge_expired(
    stores: Stores,
    settings: ServiceSettings,
    *,
    now: dt.datetime | None = None,
    dry_run: bool = False,
) -> dict[str, dict[str, int]]:
    """Delete (or with ``dry_run`` count) what each user's retention no longer covers."""
    now = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    cutoffs = {
        user: now - dt.timedelta(days=days)
        for user, days in retention_of(stores, settings).items()
        if days is not None
    }
    return stores.settings.purge(PURGER, cutoffs, dry_run=dry_run)


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
        return purge_expired(stores, settings, now=now, dry_run=dry_run)


__all__ = [
    "PURGER",
    "Calibrated",
    "Imported",
    "Migration",
    "SampleFiles",
    "calibrate_thresholds",
    "import_ubi",
    "keys",
    "migrate_database",
    "new_key",
    "open_online",
    "parse_when",
    "principal_for",
    "purge_expired",
    "remove_key",
    "retention_of",
    "run_alert_check",
    "run_purge",
    "sample_pool",
    "serve",
]
