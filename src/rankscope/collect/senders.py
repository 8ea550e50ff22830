"""Where a client's batches go, and what comes back: the service over HTTP, or (local mode) the
service's own write path in this process.

Local mode's sender is the service's (:class:`rankscope.service.ingest.local.LocalSender`: the
same validation, measures and idempotency, into a SQLite file). The client does not import the
service: :func:`local_sender` loads that class by its name, :data:`LOCAL_SENDER`, when
``MetricsClient.local`` is called, so the client works without the ``serve`` extra."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Protocol, cast

import httpx

BATCH_PATH = "/api/metrics/retrieval/collect/batch"
#: local mode's sender, ``module:class`` (see the module's text)
LOCAL_SENDER = "rankscope.service.ingest.local:LocalSender"


class Outcome(Enum):
    SENT = "sent"  # stored (or already stored: duplicates by collectId count as sent)
    RETRY = "retry"  # the server or network is away or busy: send the same records again later
    FAULT = "fault"  # the server failed on these records (500): again, then in halves
    REJECT = "reject"  # the server refuses these records (4xx): sending again cannot help
    SPLIT = "split"  # too large: send in halves


#: answers that say the server (or a proxy before it) is away or busy, not that it failed on
#: the records sent: retried for as long as it takes
TRANSIENT_STATUSES = frozenset({408, 425, 429, 502, 503, 504})


@dataclass(frozen=True)
class SendResult:
    outcome: Outcome
    retry_after: float | None = None
    message: str = ""


def classify(status: int, body: str, retry_after: str | None) -> SendResult:
    """The outcome of an HTTP answer to a batch."""
    if 200 <= status < 300:
        return SendResult(Outcome.SENT)
    wait = None
    if retry_after:
        try:
            wait = float(retry_after)
        except ValueError:
            wait = None
    if status in TRANSIENT_STATUSES:
        return SendResult(Outcome.RETRY, wait, f"HTTP {status}")
    if status >= 500:
        return SendResult(Outcome.FAULT, wait, f"HTTP {status}: {body[:500]}")
    if status == 413:
        return SendResult(Outcome.SPLIT, None, body[:500])
    return SendResult(Outcome.REJECT, None, f"HTTP {status}: {body[:500]}")


class Sender(Protocol):
    def send(self, records: list[dict[str, Any]]) -> SendResult: ...

    def close(self) -> None: ...


class InProcessSender(Sender, Protocol):
    """A sender that stores in this process (local mode): ``asend`` runs ``send`` off the
    event loop."""

    async def asend(self, records: list[dict[str, Any]]) -> SendResult: ...


def local_sender(path: str | Path, user: str, threshold: float | None = None) -> InProcessSender:
    """Local mode's sender (:data:`LOCAL_SENDER`): ``user``'s records into the SQLite file
    ``path`` (or a ``sqlite:`` URL), ``threshold`` the default of heuristic rows. Needs the
    ``serve`` extra."""
    module, _, name = LOCAL_SENDER.partition(":")
    sender = getattr(importlib.import_module(module), name)
    return cast(InProcessSender, sender(path, user, threshold))


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


__all__ = [
    "BATCH_PATH",
    "LOCAL_SENDER",
    "TRANSIENT_STATUSES",
    "AsyncHttpSender",
    "HttpSender",
    "InProcessSender",
    "Outcome",
    "SendResult",
    "Sender",
    "classify",
    "local_sender",
]
