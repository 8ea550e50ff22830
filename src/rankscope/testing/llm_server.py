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

It also speaks both providers' batch APIs, answering each request of a batch with the same
script when the batch ends (after ``batch_polls`` polls):

- Anthropic Message Batches: ``POST /v1/messages/batches``, ``GET /v1/messages/batches[/{id}]``,
  ``GET /v1/messages/batches/{id}/results`` (JSONL: ``succeeded``, ``errored``, ``expired``,
  ``canceled``) and ``POST .../{id}/cancel``;
- OpenAI Batch and Files: ``POST /v1/files`` (multipart upload), ``GET /v1/files/{id}[/content]``,
  ``POST /v1/batches``, ``GET /v1/batches[/{id}]`` (``validating``, ``in_progress``,
  ``finalizing``, ``completed``, ``failed``, ``expired``, ``cancelled``) and
  ``POST /v1/batches/{id}/cancel``; results in an output file and an error file (JSONL).

In a batch, :class:`Reply` succeeds, :class:`Fail` (or :class:`ErrorBody`) makes that request
error and :class:`Expire` makes it expire unprocessed. ``control`` scripts the batch and file
calls themselves (a 500 on a poll, a hang on a download, or :class:`Lost`: a create that took
effect although its answer never arrived). Requests answered inside a batch are recorded in
``requests`` like any other, with their ``batch_id`` and ``custom_id``; the batch and file calls
are recorded in ``control_requests``.

``slots=1`` makes it answer one request at a time, like llama.cpp's server with one slot: the
other requests wait in its queue, and that wait counts against the client's timeout.

Use it as a context manager::

    with ScriptedLLMServer(lambda req: Reply("##final score: 2")) as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="test")
"""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import itertools
import json
import math
import re
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

#: the provider whose wire format a request used
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


@dataclass(frozen=True, slots=True)
class Expire:
    """In a batch: the request expires unprocessed (nothing is billed for it)."""


@dataclass(frozen=True, slots=True)
class Lost:
    """For a batch or file call (``control``): the call takes effect, but the client gets
    ``then`` instead of its answer (e.g. a batch created whose id the client never learns)."""

    then: Action


Action = Reply | Fail | ErrorBody | Hang | Reset | Raw | Expire | Lost


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
    #: set for a request answered inside a batch
    batch_id: str | None = None
    custom_id: str | None = None

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


#: answers a request the queue does not (ScriptedLLMServer's ``handler``)
Handler = Callable[[RecordedRequest], Action]


@dataclass(slots=True)
class ControlRequest:
    """One batch or file call (create, poll, list, results, upload, download, cancel)."""

    api: Api
    method: str
    path: str
    operation: str  # e.g. "batches.create", "batches.retrieve", "files.content"
    number: int
    batch_id: str | None = None
    status: int | None = None  # the status answered (None: no answer, e.g. a reset)


#: sees every batch and file call first (ScriptedLLMServer's ``control``)
ControlHandler = Callable[[ControlRequest], Action | None]

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

    A batch ends at its ``batch_polls + 1``-th poll (its ``retrieve``); until then it is in
    progress. Its requests are answered (by the queue, then ``handler``) when it ends.
    ``control`` sees every batch and file call first and may answer it instead (an
    :class:`Action`), delay it (:class:`Hang` without ``then``) or let it take effect and answer
    otherwise (:class:`Lost`); None lets it through.
    """

    def __init__(
        self,
        handler: Handler | None = None,
        *,
        script: Iterable[Action] = (),
        api_key: str | None = None,
        slots: int | None = None,
        batch_polls: int = 0,
        control: ControlHandler | None = None,
    ) -> None:
        self.handler = handler
        self.api_key = api_key
        self.batch_polls = batch_polls
        self.control = control
        self.control_requests: list[ControlRequest] = []
        self.batches: dict[str, _Batch] = {}
        self.files: dict[str, _File] = {}
        self._slots = threading.BoundedSemaphore(slots) if slots is not None else None
        self._in_flight = 0
        self.max_in_flight = 0
        self._queue: deque[Action] = deque(script)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._counter = itertools.count(1)
        self._ids = itertools.count(1)
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

    def batch_calls(self, operation: str) -> list[ControlRequest]:
        """The batch and file calls of one kind, e.g. ``"batches.retrieve"`` (the polls)."""
        with self._lock:
            return [c for c in self.control_requests if c.operation == operation]

    def wait_for_calls(self, operation: str, n: int, timeout: float = 10.0) -> bool:
        """Wait until ``n`` calls of ``operation`` have been seen."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.batch_calls(operation)) >= n:
                return True
            time.sleep(0.01)
        return False

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

    def _answer_in_batch(self, batch: _Batch, custom_id: str, body: dict[str, Any]) -> Any:
        """Answer one request of an ending batch by the script: (request, action)."""
        path = "/v1/messages" if batch.api == "anthropic" else "/v1/chat/completions"
        req, action = self._record(batch.api, path, {}, body)
        req.batch_id, req.custom_id = batch.id, custom_id
        if action is None:
            action = (
                self.handler(req)
                if self.handler is not None
                else Fail(500, "script exhausted and no handler")
            )
        while isinstance(action, Hang):  # no one waits inside a batch: take what follows
            nxt = action.then
            action = (
                nxt
                if nxt is not None
                else (self.handler(req) if self.handler is not None else Reply(""))
            )
        return req, action

    def _record_control(
        self, api: Api, method: str, path: str, operation: str, batch_id: str | None
    ) -> ControlRequest:
        with self._lock:
            call = ControlRequest(
                api, method, path, operation, len(self.control_requests) + 1, batch_id
            )
            self.control_requests.append(call)
        return call

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}{next(self._ids):024x}"

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

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if not self._batch_route("GET", path, b""):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}}, {})

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        if self._batch_route("POST", path, raw):
            return
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

    # -- batch and file calls -----------------------------------------------------------------
    def _batch_route(self, method: str, path: str, raw: bytes) -> bool:
        """Serve a batch or file call; False when ``path`` is not one."""
        route = _match_route(method, path)
        if route is None:
            return False
        api, operation, ident = route
        owner = self.server.owner
        call = owner._record_control(api, method, path, operation, ident)
        headers = {k.lower(): v for k, v in self.headers.items()}
        if owner.api_key is not None and not self._authorized(headers, owner.api_key):
            self._control_answer(call, Fail(401, "invalid x-api-key"))
            return True
        action = owner.control(call) if owner.control is not None else None
        while isinstance(action, Hang):
            if not owner._sleep(action.seconds):
                return True
            action = action.then
        lost: Action | None = None
        if isinstance(action, Lost):
            lost, action = action.then, None
        if action is not None:  # answered instead: the call takes no effect
            self._control_answer(call, action)
            return True
        try:
            status, payload, ctype = _BatchApi(owner, headers).serve(
                operation, ident, raw, self.path
            )
        except _ApiError as e:
            status, payload, ctype = e.status, _error_body(api, e.fail, "req_batch"), None
        if lost is not None:
            self._control_answer(call, lost)
            return True
        call.status = status
        if isinstance(payload, bytes):
            self._send(status, payload, {}, ctype or "application/octet-stream")
        else:
            self._send_json(status, payload, {})
        return True

    def _control_answer(self, call: ControlRequest, action: Action) -> None:
        if isinstance(action, Reset):
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            return
        if isinstance(action, Raw):
            call.status = action.status
            self._send(action.status, action.body, dict(action.headers), "application/json")
            return
        if isinstance(action, Fail | ErrorBody):
            fail = action if isinstance(action, Fail) else Fail(200, action.message)
            extra = {}
            if isinstance(action, Fail) and action.retry_after is not None:
                extra["retry-after"] = str(action.retry_after)
            call.status = fail.status
            self._send_json(fail.status, _error_body(call.api, fail, "req_control"), extra)
            return
        raise TypeError(f"{type(action).__name__} cannot answer a batch or file call")

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
        if not isinstance(action, Reply):  # Expire and Lost belong to batches and their calls
            self._do(req, Fail(500, f"{type(action).__name__} cannot answer a live request"))
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


# -- batch APIs -------------------------------------------------------------------------------

_ROUTES: tuple[tuple[str, re.Pattern[str], Api, str], ...] = (
    ("POST", re.compile(r"/v1/messages/batches"), "anthropic", "batches.create"),
    ("GET", re.compile(r"/v1/messages/batches"), "anthropic", "batches.list"),
    ("GET", re.compile(r"/v1/messages/batches/([^/]+)"), "anthropic", "batches.retrieve"),
    ("GET", re.compile(r"/v1/messages/batches/([^/]+)/results"), "anthropic", "batches.results"),
    ("POST", re.compile(r"/v1/messages/batches/([^/]+)/cancel"), "anthropic", "batches.cancel"),
    ("POST", re.compile(r"/v1/files"), "openai", "files.create"),
    ("GET", re.compile(r"/v1/files/([^/]+)"), "openai", "files.retrieve"),
    ("GET", re.compile(r"/v1/files/([^/]+)/content"), "openai", "files.content"),
    ("POST", re.compile(r"/v1/batches"), "openai", "batches.create"),
    ("GET", re.compile(r"/v1/batches"), "openai", "batches.list"),
    ("GET", re.compile(r"/v1/batches/([^/]+)"), "openai", "batches.retrieve"),
    ("POST", re.compile(r"/v1/batches/([^/]+)/cancel"), "openai", "batches.cancel"),
)

#: Anthropic's rule for a request's custom_id
_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."


def _match_route(method: str, path: str) -> tuple[Api, str, str | None] | None:
    for verb, pattern, api, operation in _ROUTES:
        m = pattern.fullmatch(path)
        if verb == method and m is not None:
            return api, operation, (m.group(1) if m.groups() else None)
    return None


class _ApiError(Exception):
    def __init__(self, status: int, message: str, error_type: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.fail = Fail(status, message, error_type=error_type)


@dataclass(slots=True)
class _File:
    id: str
    filename: str
    purpose: str
    content: bytes
    created_at: int

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": self.created_at + 30 * 86400,
            "status_details": None,
        }


@dataclass(slots=True)
class _Batch:
    """One batch: its requests (custom_id, body), polls left, and its results once ended."""

    id: str
    api: Api
    items: list[tuple[str, dict[str, Any]]]
    created_at: float
    polls_left: int
    endpoint: str = ""
    input_file_id: str | None = None
    metadata: dict[str, Any] | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)  # OpenAI: failed validation
    polls: int = 0
    ended_at: float | None = None
    cancel_at: float | None = None
    #: custom_id -> "succeeded" | "errored" | "expired" | "canceled", and the JSONL lines
    kinds: dict[str, str] = field(default_factory=dict)
    lines: list[dict[str, Any]] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None
    tokens: tuple[int, int] = (0, 0)

    def count(self, kind: str) -> int:
        return sum(1 for k in self.kinds.values() if k == kind)


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


class _BatchApi:
    """The batch and file endpoints of both providers, over the server's shared state."""

    def __init__(self, owner: ScriptedLLMServer, headers: dict[str, str]) -> None:
        self.owner = owner
        self.host = headers.get("host", f"127.0.0.1:{owner.port}")
        self.content_type = headers.get("content-type", "")

    def serve(
        self, operation: str, ident: str | None, raw: bytes, target: str
    ) -> tuple[int, dict[str, Any] | bytes, str | None]:
        query = {k: v[-1] for k, v in parse_qs(urlsplit(target).query).items()}
        api: Api = "anthropic" if target.startswith("/v1/messages") else "openai"
        if operation == "files.create":
            return 200, self._upload(raw), None
        if operation == "files.retrieve":
            return 200, self._file(ident).to_json(), None
        if operation == "files.content":
            return 200, self._file(ident).content, "application/octet-stream"
        if operation == "batches.create":
            body = _json_object(raw)
            batch = (
                self._create_anthropic(body) if api == "anthropic" else self._create_openai(body)
            )
            return 200, self._describe(batch), None
        if operation == "batches.list":
            return 200, self._list(api, query), None
        batch = self._batch(api, ident)
        if operation == "batches.retrieve":
            with self.owner._lock:
                batch.polls += 1
                # validation fails at once; a valid batch runs for its polls
                due = batch.ended_at is None and (
                    bool(batch.errors) or batch.polls > batch.polls_left
                )
            if due:
                self._end(batch)
            return 200, self._describe(batch), None
        if operation == "batches.cancel":
            if batch.ended_at is None:
                batch.cancel_at = time.time()
                self._end(batch, canceled=True)
            return 200, self._describe(batch, canceling=True), None
        # batches.results (Anthropic)
        if batch.ended_at is None:
            raise _ApiError(404, f"batch {batch.id} has not ended; its results are not ready")
        text = "".join(json.dumps(line) + "\n" for line in batch.lines)
        return 200, text.encode(), "application/binary"

    # -- files --------------------------------------------------------------------------------
    def _upload(self, raw: bytes) -> dict[str, Any]:
        fields = _multipart(raw, self.content_type)
        upload = fields.get("file")
        if upload is None:
            raise _ApiError(400, "missing required parameter: 'file'", "invalid_request_error")
        purpose = fields.get("purpose", (None, b""))[1].decode()
        if not purpose:
            raise _ApiError(400, "missing required parameter: 'purpose'", "invalid_request_error")
        return self._store(upload[0] or "upload.jsonl", purpose, upload[1]).to_json()

    def _store(self, filename: str, purpose: str, content: bytes) -> _File:
        f = _File(self.owner._new_id("file-"), filename, purpose, content, int(time.time()))
        with self.owner._lock:
            self.owner.files[f.id] = f
        return f

    def _file(self, ident: str | None) -> _File:
        with self.owner._lock:
            f = self.owner.files.get(ident or "")
        if f is None:
            raise _ApiError(404, f"No such File object: {ident}", "invalid_request_error")
        return f

    # -- create -------------------------------------------------------------------------------
    def _create_anthropic(self, body: dict[str, Any]) -> _Batch:
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            raise _ApiError(400, "requests: at least one request is required")
        items: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        for i, r in enumerate(requests):
            cid = r.get("custom_id") if isinstance(r, dict) else None
            if not isinstance(cid, str) or not _CUSTOM_ID.fullmatch(cid):
                raise _ApiError(400, f"requests.{i}.custom_id: must match ^[a-zA-Z0-9_-]{{1,64}}$")
            if cid in seen:
                raise _ApiError(400, f"requests.{i}.custom_id: duplicate custom_id {cid!r}")
            seen.add(cid)
            params = r.get("params")
            if not isinstance(params, dict):
                raise _ApiError(400, f"requests.{i}.params: Field required")
            for name, kind in (("model", str), ("max_tokens", int), ("messages", list)):
                if not isinstance(params.get(name), kind):
                    raise _ApiError(400, f"requests.{i}.params.{name}: Field required")
            items.append((cid, params))
        return self._add(
            _Batch(
                self.owner._new_id("msgbatch_"),
                "anthropic",
                items,
                time.time(),
                self.owner.batch_polls,
            )
        )

    def _create_openai(self, body: dict[str, Any]) -> _Batch:
        if body.get("completion_window") != "24h":
            raise _ApiError(400, "completion_window: only '24h' is supported")
        endpoint = body.get("endpoint")
        if endpoint != "/v1/chat/completions":
            raise _ApiError(400, f"endpoint {endpoint!r} is not served here")
        source = self._file(body.get("input_file_id"))
        if source.purpose != "batch":
            raise _ApiError(400, f"file {source.id} has purpose {source.purpose!r}, not 'batch'")
        items, errors = _validate_openai_lines(source.content, endpoint)
        batch = _Batch(self.owner._new_id("batch_"), "openai", items, time.time(),
                       self.owner.batch_polls, endpoint=endpoint, input_file_id=source.id,
                       metadata=body.get("metadata"), errors=errors)  # fmt: skip
        return self._add(batch)

    def _add(self, batch: _Batch) -> _Batch:
        with self.owner._lock:
            self.owner.batches[batch.id] = batch
        return batch

    def _batch(self, api: Api, ident: str | None) -> _Batch:
        with self.owner._lock:
            batch = self.owner.batches.get(ident or "")
        if batch is None or batch.api != api:
            raise _ApiError(404, f"batch {ident} not found", "not_found_error")
        return batch

    # -- processing ---------------------------------------------------------------------------
    def _end(self, batch: _Batch, *, canceled: bool = False) -> None:
        """Answer every request of the batch by the script (or cancel them) and end it."""
        if batch.errors:  # OpenAI: failed validation, nothing runs
            batch.ended_at = time.time()
            return
        tin = tout = 0
        for n, (cid, body) in enumerate(batch.items, 1):
            if canceled:
                batch.kinds[cid] = "canceled"
                if batch.api == "anthropic":
                    batch.lines.append({"custom_id": cid, "result": {"type": "canceled"}})
                continue
            req, action = self.owner._answer_in_batch(batch, cid, body)
            line_id = f"batch_req_{batch.id[-8:]}{n:06d}"
            if isinstance(action, Expire):
                req.settle("expired")
                batch.kinds[cid] = "expired"
                batch.lines.append(
                    {"custom_id": cid, "result": {"type": "expired"}}
                    if batch.api == "anthropic"
                    else {"id": line_id, "custom_id": cid, "response": None,
                          "error": {"code": "batch_expired", "message": _EXPIRED_MESSAGE}}
                )  # fmt: skip
                continue
            if isinstance(action, Reply):
                payload, headers = _reply_body(req, action, f"req_{req.number:06d}")
                req.settle("answered")
                batch.kinds[cid] = "succeeded"
                usage = payload.get("usage") or {}
                tin += int(usage.get("input_tokens", usage.get("prompt_tokens", 0)) or 0)
                tout += int(usage.get("output_tokens", usage.get("completion_tokens", 0)) or 0)
                batch.lines.append(
                    {"custom_id": cid, "result": {"type": "succeeded", "message": payload}}
                    if batch.api == "anthropic"
                    else {"id": line_id, "custom_id": cid, "error": None, "response": {
                        "status_code": 200, "request_id": headers["x-request-id"], "body": payload}}
                )  # fmt: skip
                continue
            fail = _as_failure(action)
            req.settle(f"error:{fail.status}")
            batch.kinds[cid] = "errored"
            request_id = f"req_{req.number:06d}"
            batch.lines.append(
                {"custom_id": cid, "result": {"type": "errored",
                                              "error": _error_body("anthropic", fail, request_id)}}
                if batch.api == "anthropic"
                else {"id": line_id, "custom_id": cid, "error": None, "response": {
                    "status_code": fail.status, "request_id": request_id,
                    "body": _error_body("openai", fail, request_id)}}
            )  # fmt: skip
        batch.tokens = (tin, tout)
        if batch.api == "openai" and not canceled:
            out = [
                ln for ln in batch.lines if ln["response"] and ln["response"]["status_code"] == 200
            ]
            err = [ln for ln in batch.lines if ln not in out]
            if out:
                batch.output_file_id = self._store(f"{batch.id}_output.jsonl", "batch_output",
                                                   _jsonl(out)).id  # fmt: skip
            if err:
                batch.error_file_id = self._store(f"{batch.id}_error.jsonl", "batch_output",
                                                  _jsonl(err)).id  # fmt: skip
        batch.ended_at = time.time()

    # -- descriptions -------------------------------------------------------------------------
    def _describe(self, batch: _Batch, *, canceling: bool = False) -> dict[str, Any]:
        if batch.api == "anthropic":
            return self._describe_anthropic(batch, canceling=canceling)
        return _describe_openai(batch, canceling=canceling)

    def _describe_anthropic(self, batch: _Batch, *, canceling: bool) -> dict[str, Any]:
        ended = batch.ended_at is not None
        status = "canceling" if canceling else "ended" if ended else "in_progress"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": status,
            "request_counts": {
                "processing": 0 if ended else len(batch.items),
                "succeeded": batch.count("succeeded"),
                "errored": batch.count("errored"),
                "canceled": batch.count("canceled"),
                "expired": batch.count("expired"),
            },
            "ended_at": _iso(batch.ended_at),
            "created_at": _iso(batch.created_at),
            "expires_at": _iso(batch.created_at + timedelta(hours=24).total_seconds()),
            "archived_at": None,
            "cancel_initiated_at": _iso(batch.cancel_at),
            "results_url": (
                f"http://{self.host}/v1/messages/batches/{batch.id}/results" if ended else None
            ),
        }

    def _list(self, api: Api, query: dict[str, str]) -> dict[str, Any]:
        with self.owner._lock:
            batches = [b for b in self.owner.batches.values() if b.api == api]
        batches.sort(key=lambda b: b.created_at, reverse=True)  # newest first, as both do
        after = query.get("after_id" if api == "anthropic" else "after")
        if after:
            ids = [b.id for b in batches]
            batches = batches[ids.index(after) + 1 :] if after in ids else []
        limit = int(query.get("limit", "20"))
        page, more = batches[:limit], len(batches) > limit
        data = [self._describe(b) for b in page]
        first = page[0].id if page else None
        last = page[-1].id if page else None
        if api == "anthropic":
            return {"data": data, "has_more": more, "first_id": first, "last_id": last}
        return {"object": "list", "data": data, "first_id": first, "last_id": last,
                "has_more": more}  # fmt: skip


def _describe_openai(batch: _Batch, *, canceling: bool) -> dict[str, Any]:
    created = int(batch.created_at)
    ended = batch.ended_at is not None
    end = int(batch.ended_at) if batch.ended_at is not None else None
    if batch.errors:
        status = "failed" if ended else "validating"
    elif batch.cancel_at is not None:
        status = "cancelling" if canceling else "cancelled"
    elif ended:
        status = "expired" if batch.count("expired") else "completed"
    elif batch.polls <= 1 and batch.polls_left >= 2:
        status = "validating"
    elif batch.polls >= batch.polls_left >= 3:
        status = "finalizing"
    else:
        status = "in_progress"
    done = batch.count("succeeded")
    out: dict[str, Any] = {
        "id": batch.id,
        "object": "batch",
        "endpoint": batch.endpoint,
        "model": batch.items[0][1].get("model") if batch.items else None,
        "errors": ({"object": "list", "data": batch.errors} if batch.errors else None),
        "input_file_id": batch.input_file_id,
        "completion_window": "24h",
        "status": status,
        "output_file_id": batch.output_file_id,
        "error_file_id": batch.error_file_id,
        "created_at": created,
        "in_progress_at": created if status not in {"validating", "failed"} else None,
        "expires_at": created + 86400,
        "finalizing_at": end if status in {"completed", "expired", "finalizing"} else None,
        "completed_at": end if status == "completed" else None,
        "failed_at": end if status == "failed" else None,
        "expired_at": end if status == "expired" else None,
        "cancelling_at": int(batch.cancel_at) if batch.cancel_at is not None else None,
        "cancelled_at": end if status == "cancelled" else None,
        "request_counts": {
            "total": len(batch.items),
            "completed": done,
            "failed": batch.count("errored") + batch.count("expired"),
        },
        "metadata": batch.metadata,
    }
    if ended and not batch.errors:
        tin, tout = batch.tokens
        out["usage"] = {
            "input_tokens": tin,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": tout,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": tin + tout,
        }
    return out


def _validate_openai_lines(
    content: bytes, endpoint: str
) -> tuple[list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """The requests of an OpenAI batch input file, and what is wrong with it (one error per
    bad line: the batch then fails validation, as OpenAI's does)."""
    items: list[tuple[str, dict[str, Any]]] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()
    models: set[str] = set()

    def bad(line: int, code: str, message: str, param: str | None = None) -> None:
        errors.append({"code": code, "message": message, "param": param, "line": line})

    for n, text in enumerate(content.decode("utf-8", "replace").splitlines(), 1):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError:
            bad(n, "invalid_json_line", f"line {n} is not valid JSON")
            continue
        cid = row.get("custom_id") if isinstance(row, dict) else None
        body = row.get("body") if isinstance(row, dict) else None
        if not isinstance(cid, str) or not cid:
            bad(n, "missing_required_parameter", "custom_id is required", "custom_id")
        elif cid in seen:
            bad(n, "duplicate_custom_id", f"the custom_id {cid!r} is used twice", "custom_id")
        elif row.get("method") != "POST":
            bad(n, "invalid_method", "method must be POST", "method")
        elif row.get("url") != endpoint:
            bad(n, "mismatched_endpoint", f"url must be the batch's endpoint {endpoint}", "url")
        elif not isinstance(body, dict) or not isinstance(body.get("model"), str):
            bad(n, "missing_required_parameter", "body.model is required", "body.model")
        else:
            seen.add(cid)
            models.add(body["model"])
            items.append((cid, body))
    if len(models) > 1:
        bad(0, "mismatched_model", f"a batch runs one model; this file has {sorted(models)}")
    if not items and not errors:
        bad(0, "empty_file", "the input file has no requests")
    return items, errors


def _as_failure(action: Action) -> Fail:
    if isinstance(action, Fail):
        return action
    if isinstance(action, ErrorBody):
        return Fail(500, action.message, error_type=action.error_type)
    if isinstance(action, Raw):
        return Fail(action.status if action.status >= 400 else 500, "raw answer in a batch")
    return Fail(500, "internal server error")


def _json_object(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw or b"{}")
    except json.JSONDecodeError:
        raise _ApiError(400, "the body is not JSON", "invalid_request_error") from None
    if not isinstance(body, dict):
        raise _ApiError(400, "the body must be a JSON object", "invalid_request_error")
    return body


def _jsonl(lines: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _multipart(raw: bytes, content_type: str) -> dict[str, tuple[str | None, bytes]]:
    """``{field name: (file name, bytes)}`` of a multipart/form-data body."""
    if "multipart/form-data" not in content_type:
        raise _ApiError(400, "expected multipart/form-data", "invalid_request_error")
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if isinstance(name, str):
            payload = part.get_payload(decode=True)
            fields[name] = (part.get_filename(), payload if isinstance(payload, bytes) else b"")
    return fields


__all__ = [
    "Action",
    "Api",
    "ControlHandler",
    "ControlRequest",
    "ErrorBody",
    "Expire",
    "Fail",
    "Handler",
    "Hang",
    "Lost",
    "Raw",
    "RecordedRequest",
    "Reply",
    "Reset",
    "ScriptedLLMServer",
    "estimate_tokens",
]
