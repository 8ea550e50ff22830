"""The providers' batch APIs through their official SDKs: many requests in one job at half price.

- Anthropic Message Batches: ``client.messages.batches.create(requests=[{custom_id, params}])``,
  ``retrieve`` (``processing_status``: ``in_progress``, ``canceling``, ``ended``) and ``results``
  (JSONL; each line's ``result.type`` is ``succeeded``, ``errored``, ``canceled`` or ``expired``).
- OpenAI Batch: a JSONL file of ``{custom_id, method: POST, url: /v1/chat/completions, body}``
  lines uploaded with ``client.files.create(purpose="batch")``, ``client.batches.create`` (24 h
  window) and ``retrieve`` (``validating``, ``in_progress``, ``finalizing``, ``completed``,
  ``failed``, ``expired``, ``cancelling``, ``cancelled``); results in the output and error files
  (``client.files.content``), one ``{custom_id, response: {status_code, request_id, body},
  error}`` line per request; a request the window closed on has ``error.code`` ``batch_expired``.

Every call but ``create`` is retried like a completion (429, 5xx, timeouts). ``create`` is not
idempotent: a create whose answer is lost (timeout, reset, 5xx) may have made a batch that runs
and is billed, so it is never blindly retried. It raises :class:`SubmissionUnconfirmed`, and
:meth:`BatchAPI.find` looks for the batch later (OpenAI: by a token in its ``metadata``;
Anthropic, whose batches carry no metadata: by creation time and request count).
"""

from __future__ import annotations

import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeVar

from rankscope.errors import ProviderError
from rankscope.judge.providers import (
    Answer,
    AnthropicProvider,
    OpenAIProvider,
    Provider,
    ProviderCallError,
    RetryableError,
)

log = logging.getLogger("rankscope.judge.batch")

ResultKind = Literal["succeeded", "errored", "expired", "canceled"]
T = TypeVar("T")

#: how far apart our clock and the provider's may be when looking for a lost batch (seconds)
CLOCK_SLACK_S = 300.0
#: the metadata key that names a submission in an OpenAI batch
TOKEN_KEY = "rankscope_submission"


class SubmissionUnconfirmed(ProviderError):
    """A create call failed in a way that leaves open whether the batch was made."""


@dataclass(frozen=True, slots=True)
class BatchInfo:
    """A batch as the provider reports it."""

    id: str
    status: str  # the provider's own word
    ended: bool
    counts: dict[str, int]
    created_at: float  # Unix time
    #: why the whole batch failed (OpenAI ``failed``: the input file did not validate)
    failure: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    #: OpenAI: the output and error files of an ended batch
    result_files: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What one request of an ended batch got."""

    custom_id: str
    kind: ResultKind
    answer: Answer | None = None
    error: str | None = None
    #: an errored request worth submitting again (overloaded, rate limited, server error)
    retryable: bool = False


# Error types of a request that fails the same way when sent again: not resubmitted.
_ANTHROPIC_FINAL_ERRORS = frozenset(
    {
        "invalid_request_error",
        "authentication_error",
        "permission_error",
        "not_found_error",
        "request_too_large",
        "billing_error",
    }
)


class BatchAPI(ABC):
    """One provider's batch API, on top of its :class:`Provider` (client, key, retries)."""

    #: the provider's cap on requests per batch, and on the bytes of one batch
    max_requests: int
    max_bytes: int

    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    @property
    def name(self) -> str:
        return self.provider.name

    @abstractmethod
    def line(self, custom_id: str, prompt: str, system: str | None) -> dict[str, Any]:
        """The request as one line of a batch (and of the submission file kept locally)."""

    @abstractmethod
    def create(self, lines: list[dict[str, Any]], token: str) -> BatchInfo:
        """Submit a batch. Raises ProviderCallError when it was surely not made (a 4xx
        answer), SubmissionUnconfirmed when that is unknown."""

    @abstractmethod
    def retrieve(self, batch_id: str) -> BatchInfo: ...

    @abstractmethod
    def results(self, info: BatchInfo, sent: Mapping[str, dict[str, Any]]) -> list[BatchResult]:
        """The results of an ended batch (``sent``: custom_id -> the line submitted)."""

    @abstractmethod
    def find(self, token: str, since: float, count: int) -> list[BatchInfo]:
        """Batches that may be the submission ``token`` of ``count`` requests, made at
        ``since`` (Unix time) by a create whose answer was lost."""

    # -- calls ----------------------------------------------------------------------------------
    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """An idempotent call, retried like a completion; raises ProviderCallError."""
        p = self.provider
        p.connect()
        last: RetryableError | None = None
        for attempt in range(1, p.settings.max_retries + 2):
            try:
                return fn()
            except ProviderCallError:
                raise
            except Exception as e:
                err = p._classify(e, p._sdk)
                if not isinstance(err, RetryableError):
                    if isinstance(err, ProviderCallError):
                        raise ProviderCallError(
                            f"{what}: {err}", status=err.status, fatal=True
                        ) from e
                    raise
                last = err
                if attempt > p.settings.max_retries:
                    break
                delay = p._delay(attempt, err.retry_after)
                log.warning("%s: %s; retry %d in %.2fs", what, err.reason, attempt, delay)
                p._sleep(delay)
        assert last is not None
        raise ProviderCallError(
            f"{what}: giving up after {p.settings.max_retries + 1} attempts; last error: "
            f"{last.reason}",
            status=last.status,
        )

    def _create_call(self, what: str, fn: Callable[[], T]) -> T:
        """A create call: retried only when the provider answered that it made nothing (429);
        any failure that may hide a batch made raises SubmissionUnconfirmed."""
        p = self.provider
        p.connect()
        for attempt in range(1, p.settings.max_retries + 2):
            try:
                return fn()
            except Exception as e:
                code = getattr(e, "status_code", None)
                status = int(code) if isinstance(e, p._sdk.APIStatusError) and code else 0
                if 400 <= status < 500:  # refused: nothing was made
                    err = p._classify(e, p._sdk)
                    if isinstance(err, RetryableError) and attempt <= p.settings.max_retries:
                        delay = p._delay(attempt, err.retry_after)
                        log.warning("%s: %s; retry %d in %.2fs", what, err.reason, attempt, delay)
                        p._sleep(delay)
                        continue
                    reason = err.reason if isinstance(err, RetryableError) else str(err)
                    raise ProviderCallError(f"{what}: {reason}", status=status, fatal=True) from e
                raise SubmissionUnconfirmed(
                    f"{what}: the answer was lost ({type(e).__name__}: {e}); the batch may or "
                    f"may not have been made"
                ) from e
        raise AssertionError("unreachable")  # pragma: no cover


class AnthropicBatchAPI(BatchAPI):
    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def __init__(self, provider: AnthropicProvider) -> None:
        super().__init__(provider)
        self.anthropic = provider

    def line(self, custom_id: str, prompt: str, system: str | None) -> dict[str, Any]:
        params = self.anthropic.request_body(prompt, system, self.provider.settings.max_tokens)
        return {"custom_id": custom_id, "params": params}

    def create(self, lines: list[dict[str, Any]], token: str) -> BatchInfo:
        client = self.provider.connect()
        batch = self._create_call(
            f"{self.name}: creating a message batch of {len(lines)} requests",
            lambda: client.messages.batches.create(requests=lines),
        )
        return _anthropic_info(batch)

    def retrieve(self, batch_id: str) -> BatchInfo:
        client = self.provider.connect()
        batch = self._call(
            f"{self.name}: polling batch {batch_id}",
            lambda: client.messages.batches.retrieve(batch_id),
        )
        return _anthropic_info(batch)

    def results(self, info: BatchInfo, sent: Mapping[str, dict[str, Any]]) -> list[BatchResult]:
        client = self.provider.connect()
        lines = self._call(
            f"{self.name}: reading the results of batch {info.id}",
            lambda: list(client.messages.batches.results(info.id)),
        )
        return [self._result(item) for item in lines]

    def _result(self, item: Any) -> BatchResult:
        cid = str(item.custom_id)
        result = item.result
        kind = getattr(result, "type", None)
        if kind == "succeeded":
            try:
                answer = self.anthropic.read_answer(result.message, None)
            except RetryableError as e:
                return BatchResult(cid, "errored", error=e.reason, retryable=True)
            return BatchResult(cid, "succeeded", answer=answer)
        if kind == "errored":
            inner = getattr(getattr(result, "error", None), "error", None)
            etype = str(getattr(inner, "type", "api_error"))
            message = str(getattr(inner, "message", ""))
            return BatchResult(
                cid,
                "errored",
                error=f"{etype}: {message}",
                retryable=etype not in _ANTHROPIC_FINAL_ERRORS,
            )
        if kind == "expired":
            return BatchResult(cid, "expired", error="expired before it was processed")
        if kind == "canceled":
            return BatchResult(cid, "canceled", error="the batch was canceled")
        return BatchResult(cid, "errored", error=f"unknown result type {kind!r}", retryable=True)

    def find(self, token: str, since: float, count: int) -> list[BatchInfo]:
        client = self.provider.connect()

        def scan() -> list[BatchInfo]:
            found: list[BatchInfo] = []
            for batch in client.messages.batches.list(limit=100):  # newest first
                info = _anthropic_info(batch)
                if info.created_at < since - CLOCK_SLACK_S:
                    break
                canceled = getattr(batch, "cancel_initiated_at", None) is not None
                if sum(info.counts.values()) == count and not canceled:
                    found.append(info)
            return found

        return self._call(f"{self.name}: listing message batches", scan)


def _timestamp(value: Any) -> float:
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    return 0.0


def _anthropic_info(batch: Any) -> BatchInfo:
    counts = batch.request_counts
    return BatchInfo(
        id=str(batch.id),
        status=str(batch.processing_status),
        ended=batch.processing_status == "ended",
        counts={
            name: int(getattr(counts, name, 0) or 0)
            for name in ("processing", "succeeded", "errored", "canceled", "expired")
        },
        created_at=_timestamp(batch.created_at),
    )


_OPENAI_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
_RETRY_STATUS = frozenset({408, 409, 429})


class OpenAIBatchAPI(BatchAPI):
    max_requests = 50_000
    max_bytes = 200 * 1024 * 1024
    endpoint = "/v1/chat/completions"

    def __init__(self, provider: OpenAIProvider) -> None:
        super().__init__(provider)
        self.openai = provider

    def line(self, custom_id: str, prompt: str, system: str | None) -> dict[str, Any]:
        body = self.openai.request_body(prompt, system, self.provider.settings.max_tokens)
        return {"custom_id": custom_id, "method": "POST", "url": self.endpoint, "body": body}

    def create(self, lines: list[dict[str, Any]], token: str) -> BatchInfo:
        client = self.provider.connect()
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
        # An upload made twice costs nothing but storage: retried like a poll.
        upload = self._call(
            f"{self.name}: uploading a batch input file of {len(lines)} requests",
            lambda: client.files.create(file=(f"{token}.jsonl", data), purpose="batch"),
        )
        batch = self._create_call(
            f"{self.name}: creating a batch of {len(lines)} requests",
            lambda: client.batches.create(
                input_file_id=upload.id,
                endpoint=self.endpoint,
                completion_window="24h",
                metadata={TOKEN_KEY: token},
            ),
        )
        return _openai_info(batch)

    def retrieve(self, batch_id: str) -> BatchInfo:
        client = self.provider.connect()
        batch = self._call(
            f"{self.name}: polling batch {batch_id}", lambda: client.batches.retrieve(batch_id)
        )
        return _openai_info(batch)

    def results(self, info: BatchInfo, sent: Mapping[str, dict[str, Any]]) -> list[BatchResult]:
        client = self.provider.connect()
        out: list[BatchResult] = []
        for file_id in info.result_files:
            data = self._download(client, file_id, info.id)
            out.extend(self._result(row, sent) for row in _jsonl_rows(data))
        return out

    def _download(self, client: Any, file_id: str, batch_id: str) -> bytes:
        content: bytes = self._call(
            f"{self.name}: downloading file {file_id} of batch {batch_id}",
            lambda: client.files.content(file_id).content,
        )
        return content

    def _result(self, row: dict[str, Any], sent: Mapping[str, dict[str, Any]]) -> BatchResult:
        cid = str(row.get("custom_id", ""))
        response = row.get("response")
        error = row.get("error")
        if isinstance(response, dict):
            status = int(response.get("status_code") or 0)
            body = response.get("body")
            if status == 200 and isinstance(body, dict):
                sdk = self.provider._sdk
                completion = sdk.types.chat.ChatCompletion.construct(**body)
                messages = sent.get(cid, {}).get("body", {}).get("messages", [])
                try:
                    answer = self.openai.read_answer(
                        completion, response.get("request_id"), messages
                    )
                except RetryableError as e:
                    return BatchResult(cid, "errored", error=e.reason, retryable=True)
                return BatchResult(cid, "succeeded", answer=answer)
            message = ""
            if isinstance(body, dict) and isinstance(body.get("error"), dict):
                message = str(body["error"].get("message", ""))
            return BatchResult(
                cid,
                "errored",
                error=f"HTTP {status}: {message}",
                retryable=status in _RETRY_STATUS or status >= 500,
            )
        if isinstance(error, dict):
            code = str(error.get("code") or "")
            message = str(error.get("message") or "")
            if code == "batch_expired":
                return BatchResult(cid, "expired", error=message or "batch_expired")
            return BatchResult(cid, "errored", error=f"{code}: {message}", retryable=False)
        return BatchResult(cid, "errored", error="a result line with neither response nor error")

    def find(self, token: str, since: float, count: int) -> list[BatchInfo]:
        client = self.provider.connect()

        def scan() -> list[BatchInfo]:
            found: list[BatchInfo] = []
            for batch in client.batches.list(limit=100):  # newest first
                info = _openai_info(batch)
                if info.created_at < since - CLOCK_SLACK_S:
                    break
                if info.metadata.get(TOKEN_KEY) == token:
                    found.append(info)
            return found

        return self._call(f"{self.name}: listing batches", scan)


def _openai_info(batch: Any) -> BatchInfo:
    counts = batch.request_counts
    failure = None
    errors = getattr(getattr(batch, "errors", None), "data", None) or []
    if batch.status == "failed":
        parts = [
            (f"line {e.line}: " if getattr(e, "line", None) else "")
            + f"{e.code or 'error'}: {e.message or ''}"
            for e in errors
        ]
        failure = "; ".join(parts) or "the batch failed"
    return BatchInfo(
        id=str(batch.id),
        status=str(batch.status),
        ended=batch.status in _OPENAI_ENDED,
        counts={
            name: int(getattr(counts, name, 0) or 0) for name in ("total", "completed", "failed")
        }
        if counts is not None
        else {},
        created_at=_timestamp(batch.created_at),
        failure=failure,
        metadata={str(k): str(v) for k, v in (batch.metadata or {}).items()},
        result_files=tuple(f for f in (batch.output_file_id, batch.error_file_id) if f),
    )


def _jsonl_rows(data: bytes) -> Iterator[dict[str, Any]]:
    for line in data.decode("utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if isinstance(row, dict):
                yield row


def batch_api(provider: Provider) -> BatchAPI:
    """The batch API of a provider's kind."""
    if isinstance(provider, AnthropicProvider):
        return AnthropicBatchAPI(provider)
    if isinstance(provider, OpenAIProvider):
        return OpenAIBatchAPI(provider)
    raise ProviderCallError(f"{provider.name}: no batch API for this provider", fatal=True)


def chunk_lines(
    lines: Iterable[dict[str, Any]], max_requests: int, max_bytes: int
) -> Iterator[list[dict[str, Any]]]:
    """Split request lines into batches under both caps (bytes as JSONL, with a margin)."""
    budget = int(max_bytes * 0.95)
    chunk: list[dict[str, Any]] = []
    size = 0
    for line in lines:
        n = len(json.dumps(line, ensure_ascii=False).encode()) + 1
        if chunk and (len(chunk) >= max_requests or size + n > budget):
            yield chunk
            chunk, size = [], 0
        chunk.append(line)
        size += n
    if chunk:
        yield chunk


__all__ = [
    "AnthropicBatchAPI",
    "BatchAPI",
    "BatchInfo",
    "BatchResult",
    "OpenAIBatchAPI",
    "SubmissionUnconfirmed",
    "batch_api",
    "chunk_lines",
]
