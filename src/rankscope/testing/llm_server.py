"""A scripted LLM provider on loopback, speaking the Anthropic and OpenAI wire formats.

Tests point the real ``anthropic`` and ``openai`` SDK clients at it (``base_url``) so that retries,
timeouts, parsing, caching and cost accounting are exercised over real HTTP without touching the
internet. It answers

- ``POST /v1/messages`` like the Anthropic Messages API (``message`` JSON, ``usage``,
  ``request-id`` header, ``{"type": "error", "error": {...}}`` bodies), and
- ``POST /v1/chat/completions`` like OpenAI Chat Completions (``chat.completion`` JSON, ``usage``,
  ``x-request-id`` header, ``{"error": {...}}`` bodies).

What it answers is scripted: a queue of actions (consumed first) and/or a function of the request.
Actions: :class:`Reply` (a normal answer, or with ``omit`` one lacking ``content``, ``usage``...),
:class:`Fail` (an HTTP error with the provider's error body, optionally ``retry-after``),
:class:`ErrorBody` (HTTP 200 whose body is the provider's error object, as some gateways send),
:class:`Hang` (sleep, then do another action), :class:`Reset` (drop the connection with a TCP
reset) and :class:`Raw` (any status, headers and body bytes).

``slots=1`` makes it answer one request at a time, like llama.cpp's server with one slot: the
other requests wait in its queue, and that wait counts against the client's timeout.

Use it as a context manager::

    with ScriptedLLMServer(lambda req: Reply("##final score: 2")) as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="test")
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Api = Literal["anthropic", "openai"]


@dataclass(frozen=True, slots=True)
class Reply:
    """A well-formed model answer with ``text``; token counts default to an estimate."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    stop_reason: str | None = None
    #: top-level fields left out of the answer, e.g. ``("content",)`` or ``("usage",)``
    omit: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Fail:
    """An HTTP error with the provider's JSON error body; ``retry_after`` sets the header."""

    status: int
    message: str = "scripted failure"
    retry_after: float | str | None = None
    error_type: str | None = None


@dataclass(frozen=True, slots=True)
class ErrorBody:
    """HTTP 200 whose body is the provider's error object (``{"type": "error", ...}``)."""

    message: str = "Overloaded"
    error_type: str = "overloaded_error"


@dataclass(frozen=True, slots=True)
class Hang:
    """Wait ``seconds`` before doing ``then`` (by default: answer from the handler)."""

    seconds: float
    then: Action | None = None


@dataclass(frozen=True, slots=True)
class Reset:
    """Drop the connection without an answer (TCP RST)."""


@dataclass(frozen=True, slots=True)
class Raw:
    """Send exactly this status, headers and body."""

    status: int
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()


Action = Reply | Fail | ErrorBody | Hang | Reset | Raw


@dataclass(slots=True)
class RecordedRequest:
    """One request as the server saw it."""

    api: Api
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    number: int  # 1-based arrival order
    outcome: str = "pending"  # "answered" (200 sent), "error:<status>", "reset", "raw:<status>"
    #: ``time.monotonic()`` when the request was read and when it was dealt with (answered,
    #: failed or reset; None while pending); the clock is shared by the processes of a machine
    received_at: float = 0.0
    finished_at: float | None = None

    def settle(self, outcome: str) -> None:
        self.outcome = outcome
        self.finished_at = time.monotonic()

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def system(self) -> str:
        if self.api == "anthropic":
            return _content_text(self.body.get("system", ""))
        return "\n".join(
            _content_text(m.get("content", ""))
            for m in self.body.get("messages", [])
            if m.get("role") in {"system", "developer"}
        )

    @property
    def prompt(self) -> str:
        """The text of the user messages, joined by newlines."""
        return "\n".join(
            _content_text(m.get("content", ""))
            for m in self.body.get("messages", [])
            if m.get("role") == "user"
        )


Handler = Callable[[RecordedRequest], Action]

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
}


class ScriptedLLMServer:
    """A threaded HTTP server on 127.0.0.1 (ephemeral port) with scripted answers.

    ``handler`` answers when the queue is empty; without one an empty queue yields a 500.
    ``api_key``, when set, must be sent (``x-api-key`` or ``Authorization: Bearer``) or the
    server answers 401 like the real services. ``slots`` bounds the requests worked on at once
    (None: no bound); the others wait, as in a llama.cpp server started with ``--parallel 1``.
    ``max_in_flight`` records the most requests that were being worked on at once.
    """

    def __init__(
        self,
        handler: Handler | None = None,
        *,
        script: Iterable[Action] = (),
        api_key: str | None = None,
        slots: int | None = None,
    ) -> None:
        self.handler = handler
        self.api_key = api_key
        self._slots = threading.BoundedSemaphore(slots) if slots is not None else None
        self._in_flight = 0
        self.max_in_flight = 0
        self._queue: deque[Action] = deque(script)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._counter = itertools.count(1)
        self.requests: list[RecordedRequest] = []
        self._httpd = _Server(("127.0.0.1", 0), _RequestHandler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> ScriptedLLMServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting and inspection ----------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """Root URL; the Anthropic SDK appends ``/v1/messages`` to it."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """URL for the OpenAI SDK, which appends ``/chat/completions``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *actions: Action) -> None:
        with self._lock:
            self._queue.extend(actions)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def answered_count(self) -> int:
        """Requests that got a 200 answer: the calls a real provider would bill."""
        with self._lock:
            return sum(1 for r in self.requests if r.outcome == "answered")

    def wait_for_requests(self, n: int, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.request_count >= n:
                return True
            time.sleep(0.01)
        return False

    # -- used by the request handler -------------------------------------------------------
    def _record(self, api: Api, path: str, headers: dict[str, str], body: dict[str, Any]) -> Any:
        with self._lock:
            req = RecordedRequest(
                api, path, headers, body, next(self._counter), received_at=time.monotonic()
            )
            self.requests.append(req)
            action = self._queue.popleft() if self._queue else None
        return req, action

    @contextlib.contextmanager
    def _slot(self) -> Iterator[None]:
        """Hold one of the server's slots while a request is worked on."""
        if self._slots is not None:
            while not self._slots.acquire(timeout=0.05):
                if self._stopping.is_set():
                    raise ConnectionAbortedError("server stopping")
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= 1
            if self._slots is not None:
                self._slots.release()

    def _sleep(self, seconds: float) -> bool:
        """Sleep unless the server stops first; True when the full time passed."""
        return not self._stopping.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default listen backlog of 5 resets connections when a client opens dozens
    # at once (``--concurrency 64``); production servers accept hundreds (uvicorn 2048).
    request_queue_size = 1024
    owner: ScriptedLLMServer


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    # Send each response in one write with Nagle's algorithm off, as production servers do.
    # The stdlib default (headers and body in two unbuffered writes, Nagle on) holds the body
    # back until the client's delayed ACK of the headers: about 40 ms added to every call on a
    # reused connection, which would swamp what a client costs per call.
    disable_nagle_algorithm = True
    wbufsize = 64 * 1024

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def handle(self) -> None:
        # The client went away (its timeout) or we reset the connection on purpose.
        with contextlib.suppress(ConnectionError, OSError):
            super().handle()

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/messages"):
            api: Api = "anthropic"
        elif path.endswith("/chat/completions"):
            api = "openai"
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}}, {})
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        headers = {k.lower(): v for k, v in self.headers.items()}
        req, action = owner._record(api, path, headers, body)
        if owner.api_key is not None and not self._authorized(headers, owner.api_key):
            self._do(req, Fail(401, "invalid x-api-key"))
            return
        with owner._slot():
            if action is None:
                action = (
                    owner.handler(req)
                    if owner.handler is not None
                    else Fail(500, "script exhausted and no handler")
                )
            self._do(req, action)

    @staticmethod
    def _authorized(headers: dict[str, str], key: str) -> bool:
        return headers.get("x-api-key") == key or headers.get("authorization") == f"Bearer {key}"

    def _do(self, req: RecordedRequest, action: Action) -> None:
        # The outcome is recorded before the response goes out: a client holding the response
        # finds it recorded (a failed send corrects it to "undelivered").
        owner = self.server.owner
        while isinstance(action, Hang):
            if not owner._sleep(action.seconds):
                return
            nxt = action.then
            if nxt is None:
                nxt = (
                    owner.handler(req)
                    if owner.handler is not None
                    else Fail(500, "script exhausted and no handler")
                )
            action = nxt
        if isinstance(action, Reset):
            req.settle("reset")
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            return
        if isinstance(action, Raw):
            req.settle(f"raw:{action.status}")
            self._send(action.status, action.body, dict(action.headers), "application/json")
            return
        request_id = f"req_{req.number:06d}"
        if isinstance(action, ErrorBody):
            fail = Fail(200, action.message, error_type=action.error_type)
            extra = {"request-id" if req.api == "anthropic" else "x-request-id": request_id}
            req.settle("error-body:200")
            self._send_json(200, _error_body(req.api, fail, request_id), extra)
            return
        if isinstance(action, Fail):
            extra = {"request-id" if req.api == "anthropic" else "x-request-id": request_id}
            if action.retry_after is not None:
                extra["retry-after"] = str(action.retry_after)
            req.settle(f"error:{action.status}")
            self._send_json(action.status, _error_body(req.api, action, request_id), extra)
            return
        payload, headers = _reply_body(req, action, request_id)
        req.settle("answered")
        if not self._send_json(200, payload, headers):
            req.settle("undelivered")

    def _send_json(self, status: int, payload: object, headers: dict[str, str]) -> bool:
        return self._send(status, json.dumps(payload).encode(), headers, "application/json")

    def _send(self, status: int, body: bytes, headers: dict[str, str], ctype: str) -> bool:
        try:
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(body)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            return True
        except OSError:
            self.close_connection = True
            return False


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def estimate_tokens(text: str) -> int:
    """The server's token count: one token per 4 characters, at least 1."""
    return max(1, math.ceil(len(text) / 4))


def _reply_body(
    req: RecordedRequest, reply: Reply, request_id: str
) -> tuple[dict[str, Any], dict[str, str]]:
    in_tokens = (
        reply.input_tokens
        if reply.input_tokens is not None
        else estimate_tokens(req.system + req.prompt)
    )
    out_tokens = (
        reply.output_tokens if reply.output_tokens is not None else estimate_tokens(reply.text)
    )
    payload, headers = _full_reply_body(req, reply, request_id, in_tokens, out_tokens)
    return {k: v for k, v in payload.items() if k not in reply.omit}, headers


def _full_reply_body(
    req: RecordedRequest, reply: Reply, request_id: str, in_tokens: int, out_tokens: int
) -> tuple[dict[str, Any], dict[str, str]]:
    if req.api == "anthropic":
        return (
            {
                "id": f"msg_{req.number:06d}",
                "type": "message",
                "role": "assistant",
                "model": req.model,
                "content": [{"type": "text", "text": reply.text}],
                "stop_reason": reply.stop_reason or "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": in_tokens, "output_tokens": out_tokens},
            },
            {"request-id": request_id},
        )
    return (
        {
            "id": f"chatcmpl-{req.number:06d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": reply.stop_reason or "stop",
                }
            ],
            "usage": {
                "prompt_tokens": in_tokens,
                "completion_tokens": out_tokens,
                "total_tokens": in_tokens + out_tokens,
            },
            "system_fingerprint": None,
        },
        {"x-request-id": request_id},
    )


def _error_body(api: Api, fail: Fail, request_id: str) -> dict[str, Any]:
    if api == "anthropic":
        etype = fail.error_type or _ANTHROPIC_ERROR_TYPES.get(fail.status, "api_error")
        return {
            "type": "error",
            "error": {"type": etype, "message": fail.message},
            "request_id": request_id,
        }
    etype = fail.error_type or _OPENAI_ERROR_TYPES.get(fail.status, "server_error")
    return {"error": {"message": fail.message, "type": etype, "param": None, "code": None}}


__all__ = [
    "Action",
    "ErrorBody",
    "Fail",
    "Hang",
    "Raw",
    "RecordedRequest",
    "Reply",
    "Reset",
    "ScriptedLLMServer",
    "estimate_tokens",
]
