"""Where a client's batches go, and what comes back: the service over HTTP, or (local mode) the
service's own write path in this process.

Local mode's sender is the service's (:class:`rankscope.service.ingest.local.LocalSender`: the
same validation, measures and idempotency, into a SQLite file). The client does not import nor
name the service: the service registers its sender in the entry-point group
:data:`LOCAL_SENDER_GROUP` (pyproject.toml), which :func:`local_sender` reads when
``MetricsClient.local`` is called, so the client works without the ``serve`` extra."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from rankscope.errors import ConfigError

if TYPE_CHECKING:
    import httpx

BATCH_PATH = "/api/metrics/retrieval/collect/batch"
#: the entry-point group of local mode's sender: a class taking ``(path, user, threshold)``,
#: registered as :data:`LOCAL_SENDER_NAME` (the service registers its own in pyproject.toml)
LOCAL_SENDER_GROUP = "rankscope.local_senders"
#: the name local mode's sender is registered under
LOCAL_SENDER_NAME = "sqlite"


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
    """Local mode's sender (registered in :data:`LOCAL_SENDER_GROUP`): ``user``'s records into
    the SQLite file ``path`` (or a ``sqlite:`` URL), ``threshold`` the default of heuristic
    rows. Needs the ``serve`` extra."""
    found = entry_points(group=LOCAL_SENDER_GROUP, name=LOCAL_SENDER_NAME)
    if not found:
        raise ConfigError(
            f"local mode needs a sender registered as {LOCAL_SENDER_NAME!r} in the entry-point "
            f"group {LOCAL_SENDER_GROUP!r}, and no installed package registers one: install "
            "rankscope (pip install 'rankscope[serve]'; from a checkout, pip install -e "
            "'.[serve]' again after pulling)"
        )
    try:
        sender = next(iter(found)).load()
    except ImportError as exc:
        raise ConfigError(
            f"local mode needs the serve extra: pip install 'rankscope[serve]' ({exc})"
        ) from exc
    return cast(InProcessSender, sender(path, user, threshold))


def _httpx() -> Any:
    """httpx, which the HTTP senders need (the ``collect`` extra; not part of the core)."""
    try:
        import httpx
    except ImportError as exc:
        raise ConfigError(
            "the collect client sends over HTTP with httpx: pip install 'rankscope[collect]'"
        ) from exc
    return httpx


def _headers(token: str | None) -> dict[str, str]:
    headers = {"User-Agent": "rankscope-collect"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


class HttpSender:
    """``POST .../collect/batch`` with the records; any transport error is a retry."""

    def __init__(self, url: str, token: str | None, timeout: float) -> None:
        self._httpx = _httpx()
        self._client: httpx.Client = self._httpx.Client(
            base_url=url.rstrip("/"), headers=_headers(token), timeout=timeout
        )

    def send(self, records: list[dict[str, Any]]) -> SendResult:
        try:
            response = self._client.post(BATCH_PATH, json={"records": records})
        except self._httpx.HTTPError as exc:  # connection refused or reset, timeout, ...
            return SendResult(Outcome.RETRY, None, f"{type(exc).__name__}: {exc}")
        return classify(response.status_code, response.text, response.headers.get("retry-after"))

    def close(self) -> None:
        self._client.close()


class AsyncHttpSender:
    def __init__(self, url: str, token: str | None, timeout: float) -> None:
        self._httpx = _httpx()
        self._client: httpx.AsyncClient = self._httpx.AsyncClient(
            base_url=url.rstrip("/"), headers=_headers(token), timeout=timeout
        )

    async def send(self, records: list[dict[str, Any]]) -> SendResult:
        try:
            response = await self._client.post(BATCH_PATH, json={"records": records})
        except self._httpx.HTTPError as exc:
            return SendResult(Outcome.RETRY, None, f"{type(exc).__name__}: {exc}")
        return classify(response.status_code, response.text, response.headers.get("retry-after"))

    async def close(self) -> None:
        await self._client.aclose()


__all__ = [
    "BATCH_PATH",
    "LOCAL_SENDER_GROUP",
    "LOCAL_SENDER_NAME",
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
