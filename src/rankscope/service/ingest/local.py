"""Local mode of the collect client (``MetricsClient.local(path)``): batches written straight
into a SQLite file by the service's own write path, without HTTP: the same validation,
measures and idempotency. :class:`LocalSender` is registered in pyproject.toml in the
entry-point group :data:`rankscope.collect.senders.LOCAL_SENDER_GROUP`, which the client reads:
it never imports nor names the service."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from sqlalchemy.exc import SQLAlchemyError

from rankscope.collect.senders import Outcome, SendResult
from rankscope.collect.wire import MetricCreate
from rankscope.service.ingest.batcher import write_items
from rankscope.service.ingest.rows import NewRecord, settings_thresholds
from rankscope.service.ingest.writer import MetricsStore
from rankscope.service.nul import nul_error, nul_paths
from rankscope.service.settings import load_settings
from rankscope.service.store.db import Principal, make_engine, migrate


class LocalSender:
    """Writes batches straight into a SQLite file with the service's own store (no HTTP):
    the same validation, measures and idempotency. Needs the ``serve`` extra."""

    def __init__(self, path: str | Path, user_id: str, threshold: float | None = None) -> None:
        raw = str(path)
        url = raw if raw.startswith("sqlite:") else f"sqlite:///{Path(raw).expanduser()}"
        settings = load_settings(database_url=url, default_threshold=threshold)
        self._engine = make_engine(url, pool_size=1)
        migrate(self._engine)
        self._store = MetricsStore(self._engine, settings_thresholds(settings))
        self._settings = settings
        self.user_id = user_id

    def send(self, records: list[dict[str, Any]]) -> SendResult:
        principal = Principal(self.user_id)
        try:
            items = []
            for i, record in enumerate(records):
                refused = nul_paths(record, f"records.{i}")
                if refused:  # the service's rule (rankscope.service.nul), here too
                    return SendResult(Outcome.REJECT, None, nul_error(refused).message)
                parsed = MetricCreate.model_validate(record)
                owner = parsed.user_id or self.user_id
                items.append(
                    (
                        Principal(owner) if owner != self.user_id else principal,
                        NewRecord(parsed, owner),
                    )
                )
        except ValidationError as exc:
            return SendResult(Outcome.REJECT, None, str(exc))
        try:
            write_items(self._store, items)
        except SQLAlchemyError as exc:  # e.g. the file is locked for longer than the timeout
            return SendResult(Outcome.RETRY, None, str(exc))
        return SendResult(Outcome.SENT)

    async def asend(self, records: list[dict[str, Any]]) -> SendResult:
        return await asyncio.to_thread(self.send, records)

    def close(self) -> None:
        self._store.close()


__all__ = ["LocalSender"]
