"""Where a client's batches go, and what comes back: the service over HTTP, or (local mode) the
service's own write path in this process.

Local mode's sender is the service's (:class:`rankscope.service.ingest.local.LocalSender`: the
same validation, measures and idempotency, into a SQLite file). The client does not import nor
name the service: the service registers its sender in the entry-point group
:data:`LOCAL_SENDER_GROUP` (pyproject.toml), which :func:`local_sender` reads when
``MetricsClient.local`` is called, so the client works without the ``serve`` extra."""

from __future__ import annotations

import json
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
    # the answer is not about the records (authentication, a redirect, a wrong URL, a 2xx
    # that is not the service's): keep them all and send them again later
    HOLD = "hold"


#: answers that say the server (or a proxy before it) is away or busy, not that it failed on
#: the records sent: retried for as long as it takes
TRANSIENT_STATUSES = frozenset({408, 425, 429, 502, 503, 504})
#: answers that say the request did not reach the batch endpoint as the client meant (its
#: token, or its URL): no record is at fault, so none is split off or dropped
HOLD_STATUSES = frozenset({401, 404, 405, 407})
#: how much of an answer's body a message quotes
QUOTED = 300


@dataclass(frozen=True)
class SendResult:
    outcome: Outcome
    retry_after: float | None = None
    message: str = ""


def classify(status: int, body: str, retry_after: str | None) -> SendResult:
    """The outcome of an HTTP answer to a batch. Only a 2xx whose body is the service's
    envelope (``{"success": true, "data": {...}}``) means stored: a proxy's or a login page's
    200 stored nothing."""
    if 200 <= status < 300:
        if _is_envelope(body):
            return SendResult(Outcome.SENT)
        return SendResult(
            Outcome.HOLD,
            None,
            f"HTTP {status} with a body that is not the rankscope service's answer (is the URL "
            f"the service's?): {body[:QUOTED]!r}",
        )
    wait = None
    if retry_after:
        try:
            wait = float(retry_after)
        except ValueError:
            wait = None
    if 300 <= status < 400:
        return SendResult(
            Outcome.HOLD,
            wait,
            f"HTTP {status}: the service's URL redirects (the client does not follow "
            "redirects); use the URL it redirects to",
        )
    if status in HOLD_STATUSES:
        why = {
            401: "the token was refused; check the client's token",
            404: "no batch endpoint at this URL; check the client's URL",
            405: "no batch endpoint at this URL; check the client's URL",
            407: "a proxy asks for authentication",
        }[status]
        return SendResult(Outcome.HOLD, wait, f"HTTP {status}: {why}: {body[:QUOTED]}")
    if status in TRANSIENT_STATUSES:
        return SendResult(Outcome.RETRY, wait, f"HTTP {status}")
    if status >= 500:
        return SendResult(Outcome.FAULT, wait, f"HTTP {status}: {body[:500]}")
    if status == 413:
        return SendResult(Outcome.SPLIT, None, body[:500])
    return SendResult(Outcome.REJECT, None, f"HTTP {status}: {body[:500]}")


def _is_envelope(body: str) -> bool:
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return False
    return (
        isinstance(payload, dict)
        and payload.get("success") is True
        and isinstance(payload.get("data"), dict)
    )


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
    "HOLD_STATUSES",
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
