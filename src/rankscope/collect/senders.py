"""Where a client's batches go: the service over HTTP, or a SQLite file (local mode)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Protocol

import httpx

from rankscope.collect._core import Outcome, SendResult, classify

BATCH_PATH = "/api/metrics/retrieval/collect/batch"


class Sender(Protocol):
    def send(self, records: list[dict[str, Any]]) -> SendResult: ...

    def close(self) -> None: ...


def _headers(token: str | None) -> dict[str, str]:
    headers = {"User-Agent": "rankscope-collect"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


class HttpSender:
    """``POST .../collect/batch`` with the records; any transport error is a retry."""

    def __init__(self, url: str, token: str | None, timeout: float) -> None:
        self._client = httpx.Client(
            base_url=url.rstrip("/"), headers=_headers(token), timeout=timeout
        )

    def send(self, records: list[dict[str, Any]]) -> SendResult:
        try:
            response = self._client.post(BATCH_PATH, json={"records": records})
        except httpx.HTTPError as exc:  # connection refused or reset, timeout, ...
            return SendResult(Outcome.RETRY, None, f"{type(exc).__name__}: {exc}")
        return classify(response.status_code, response.text, response.headers.get("retry-after"))

    def close(self) -> None:
        self._client.close()


class AsyncHttpSender:
    def __init__(self, url: str, token: str | None, timeout: float) -> None:
        self._client = httpx.AsyncClient(
            base_url=url.rstrip("/"), headers=_headers(token), timeout=timeout
        )

    async def send(self, records: list[dict[str, Any]]) -> SendResult:
        try:
            response = await self._client.post(BATCH_PATH, json={"records": records})
        except httpx.HTTPError as exc:
            return SendResult(Outcome.RETRY, None, f"{type(exc).__name__}: {exc}")
        return classify(response.status_code, response.text, response.headers.get("retry-after"))

    async def close(self) -> None:
        await self._client.aclose()


class LocalSender:
    """Writes batches straight into a SQLite file with the service's own store (no HTTP):
    the same validation, measures and idempotency. Needs the ``serve`` extra."""

    def __init__(self, path: str | Path, user_id: str, threshold: float | None = None) -> None:
        from rankscope.service.ingest.rows import settings_thresholds
        from rankscope.service.ingest.writer import MetricsStore
        from rankscope.service.settings import load_settings
        from rankscope.service.store.db import make_engine, migrate

        raw = str(path)
        url = raw if raw.startswith("sqlite:") else f"sqlite:///{Path(raw).expanduser()}"
        settings = load_settings(database_url=url, default_threshold=threshold)
        self._engine = make_engine(url, pool_size=1)
        migrate(self._engine)
        self._store = MetricsStore(self._engine, settings_thresholds(settings))
        self._settings = settings
        self.user_id = user_id

    def send(self, records: list[dict[str, Any]]) -> SendResult:
        from pydantic import ValidationError
        from sqlalchemy.exc import SQLAlchemyError

        from rankscope.service.ingest.batcher import write_items
        from rankscope.service.ingest.rows import NewRecord
        from rankscope.service.nul import nul_error, nul_paths
        from rankscope.service.schemas.records import MetricCreate
        from rankscope.service.store.db import Principal

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


__all__ = ["BATCH_PATH", "AsyncHttpSender", "HttpSender", "LocalSender", "Sender"]
