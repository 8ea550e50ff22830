"""The FastAPI application of ``rankscope serve``.

``create_app(settings)`` builds it; at start-up it connects, migrates a SQLite database (or, on
PostgreSQL, checks that ``rankscope serve migrate`` ran and that its role cannot bypass
row-level security) and starts the group-commit writer. ``create_app_from_env`` is the factory
uvicorn's workers call (settings from the environment).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from rankscope import __version__
from rankscope.collect.wire import BatchCreate, EventsCreate, MetricCreate
from rankscope.errors import ServiceError
from rankscope.service.analysis.alerts import check_alerts
from rankscope.service.api import errors
from rankscope.service.api.deps import ServiceState
from rankscope.service.api.limits import RequestLimiter
from rankscope.service.api.routes import (
    alerts,
    clicks,
    events,
    health,
    me,
    records,
    retention,
    thresholds,
)
from rankscope.service.auth import Authenticator
from rankscope.service.dashboard import install as install_dashboard
from rankscope.service.ingest.batcher import WriteBatcher
from rankscope.service.ingest.bulk import BulkWriter
from rankscope.service.ingest.rows import settings_thresholds
from rankscope.service.ingest.writer import MetricsStore
from rankscope.service.schemas.events import events_models
from rankscope.service.schemas.records import FeedbackCreate, collect_models
from rankscope.service.server import tune_gc
from rankscope.service.settings import ServiceSettings, load_settings
from rankscope.service.store.db import is_postgres, make_engine, migrate

log = logging.getLogger("rankscope.service")

DESCRIPTION = """Collect retrieval quality from production, per user, on rankscope's measures.

Authenticate with `Authorization: Bearer <token>` (an API key from `rankscope serve create-key`
or a JWT). Every error answers `{"success": false, "error": {"code", "message", "details"}}`.
See docs/service.md.
"""


def build_state(settings: ServiceSettings) -> ServiceState:
    """Connect and check the database; the state every request uses."""
    engine = make_engine(
        settings.database_url,
        pool_size=settings.pool_size,
        sqlite_synchronous=settings.sqlite_synchronous,
    )
    if not is_postgres(engine) and settings.auto_migrate:
        migrate(engine)
    store = MetricsStore(
        engine, settings_thresholds(settings), cache_seconds=settings.api_key_cache_seconds
    )
    store.check_schema()
    problem = store.check_role()
    if problem is not None:
        if not (problem.bypasses_rls and settings.allow_privileged_role):
            store.close()
            raise ServiceError(problem.message)
        log.warning("%s (allowed by allow_privileged_role)", problem.message)
    writers = 4 if is_postgres(engine) else 1
    return ServiceState(
        settings=settings,
        store=store,
        auth=Authenticator(settings, engine),
        batcher=WriteBatcher(
            store,
            max_batch=settings.write_batch_size,
            writers=writers,
            gather_seconds=settings.write_gather_ms / 1000,
        ),
        limiter=RequestLimiter(settings.rate_limit_per_second),
        stores=store.stores(),
        bulk=BulkWriter(settings, store),
    )


def start_alert_checks(state: ServiceState) -> asyncio.Task[None] | None:
    """The in-server alert check (every ``alert_check_interval_seconds``; off at 0)."""
    interval = state.settings.alert_check_interval_seconds
    if interval <= 0 or not state.settings.alert_rules:
        return None

    async def loop() -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                result = await asyncio.to_thread(check_alerts, state.stores, state.settings)
                if result.fired:
                    log.warning("alert check: %d new alerts", len(result.fired))
            except Exception:
                log.exception("the alert check failed; trying again in %g s", interval)

    return asyncio.create_task(loop())


def import_on_start() -> None:
    """Import what requests would import on first use: scipy.stats (the intervals of the
    summaries, the tests of compare and the alerts) cost the first records page a serving
    process answered 0.9 s of CPU and ~50 MB of RSS. (Not at module level: a process that
    only embeds the app, or the command line, need not pay for it.)"""
    import scipy.stats  # noqa: F401


def create_app(settings: ServiceSettings | None = None, *, serving: bool = False) -> FastAPI:
    """The application; ``serving``: this process only serves it (``rankscope serve``'s
    workers), so start-up may tune the process's garbage collector (:func:`tune_gc`)."""
    settings = settings or load_settings()
    # the bodies sized by the settings, built now rather than by the first requests
    collect_models(settings.max_documents_per_record, settings.max_batch_records)
    events_models(settings.max_batch_events)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state = build_state(settings)
        app.state.service = state
        if serving:
            import_on_start()
            tune_gc()
        await state.batcher.start()
        await state.bulk.start()
        checker = start_alert_checks(state)
        try:
            yield
        finally:
            if checker is not None:
                checker.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await checker
            await state.batcher.stop()
            await state.bulk.stop()
            state.store.close()

    app = FastAPI(
        title="rankscope serve",
        version=__version__,
        description=DESCRIPTION,
        docs_url=None,  # served from the package's files (install_dashboard), not a CDN
        redoc_url=None,
        lifespan=lifespan,
    )
    errors.install(app)
    app.include_router(health.router)
    app.include_router(thresholds.router)
    app.include_router(records.router)
    app.include_router(events.router)
    app.include_router(clicks.router)
    app.include_router(alerts.router)
    app.include_router(retention.router)
    app.include_router(me.router)
    install_dashboard(app)
    app.add_middleware(errors.BodyLimit, limit=settings.max_request_bytes)
    app.add_middleware(errors.NulGuard)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, with our error body for 422 instead of FastAPI's own."""
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    # bodies the collect routes parse themselves (metrics.parse_body)
    for model in (MetricCreate, BatchCreate, EventsCreate, FeedbackCreate):
        body = model.model_json_schema(by_alias=True, ref_template="#/components/schemas/{model}")
        components.update(body.pop("$defs", {}))
        components[model.__name__] = body
    envelope = components.get("ErrorEnvelope")
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            response = operation.get("responses", {}).get("422")
            if response is not None and envelope is not None:
                response["content"] = {
                    "application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}
                }
                response["description"] = (
                    "malformed JSON or invalid fields (details list each field path)"
                )
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    app.openapi_schema = schema
    return schema


def create_app_from_env() -> FastAPI:
    """The factory uvicorn workers call: settings from the environment (and its file)."""
    return create_app(load_settings(), serving=True)


__all__ = ["build_state", "create_app", "create_app_from_env"]
