"""The annotation page and its small JSON API, on the standard library's HTTP server.

No framework: the core install stays light (the ``serve`` extra's FastAPI is not needed to judge
a pool by hand). One thread per connection (:class:`http.server.ThreadingHTTPServer`), each
with a socket timeout; the store serialises writes.

Security, as the metrics service: the server listens on 127.0.0.1 unless ``--host`` names
another address; every ``/api`` request needs the token (``Authorization: Bearer TOKEN``,
compared in constant time) that the command prints in the page's URL; on loopback the
``Host`` header must name loopback too (no DNS rebinding). The page and its scripts come from
this package and hold no data; every response carries a Content-Security-Policy that lets the
page load from and connect to this origin only, and nothing may frame it.

Answers are JSON envelopes: ``{"success": true, "data": ...}`` or ``{"success": false,
"error": {"code", "message", "details"}}`` with a 4xx status for every bad request (bad JSON,
unknown fields, a grade off the scale, an unknown pair or annotator, a body over 64 KiB, NUL
or lone surrogates in text); a 5xx only when the store itself fails.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import secrets
import socket
import sqlite3
import sys
import threading
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import ip_address
from pathlib import Path
from typing import Any, Literal, NoReturn
from urllib.parse import parse_qs, urlsplit

from rankscope.errors import InputError, RankscopeError
from rankscope.judge.annotate.agreement import RaterAgreement, agreement_report
from rankscope.judge.annotate.export import EXPORT_FORMATS, export_text
from rankscope.judge.annotate.highlight import highlight
from rankscope.judge.annotate.scale import Scale
from rankscope.judge.annotate.store import (
    AnnotationError,
    AnnotationStore,
    NotAssignedError,
    QueueItem,
    UnknownAnnotatorError,
    UnknownPairError,
)

log = logging.getLogger("rankscope.annotate")

STATIC = Path(__file__).parent / "static"
MAX_BODY = 64 * 1024
SOCKET_TIMEOUT_S = 30
LINGER_S = 2.0  # how long a refused body is read and dropped, at most
LINGER_BYTES = 16 * 1024 * 1024
TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{16,128}")
ShowLabels = Literal["never", "after"]
SHOW_LABELS: tuple[ShowLabels, ...] = ("never", "after")

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
COMMON_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
}
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


def new_token() -> str:
    return secrets.token_urlsafe(24)


def check_token(token: str) -> str:
    if TOKEN_RE.fullmatch(token) is None:
        raise InputError(
            "a token is 16-128 letters, digits, - or _",
            value=f"{len(token)} characters",
            hint="leave it out and one is made for you",
        )
    return token


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """How the annotation page runs: its token, scale, address and when labels are shown."""

    token: str
    scale: Scale
    show_labels: ShowLabels = "never"
    host: str = "127.0.0.1"
    port: int = 0
    threshold: int = 1  # binary kappa: grade >= threshold
    verbose: bool = False


class HttpError(Exception):
    def __init__(self, status: int, code: str, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details


def _fail(status: int, code: str, message: str, details: Any = None) -> NoReturn:
    raise HttpError(status, code, message, details)


def _segments(query: str, text: str) -> list[list[Any]]:
    return [[piece, 1 if marked else 0] for piece, marked in highlight(query, text)]


def _item_json(item: QueueItem | None, queue_length: int) -> dict[str, Any] | None:
    if item is None:
        return None
    p = item.pair
    return {
        "pairId": p.id,
        "queryId": p.query_id,
        "docId": p.doc_id,
        "query": p.query,
        "title": _segments(p.query, p.title),
        "text": _segments(p.query, p.text),
        "position": item.position,
        "queueLength": queue_length,
        "note": item.note,
        "skipped": item.skipped,
    }


class AnnotationApp:
    """The routes, independent of the socket layer: ``handle`` takes a parsed request."""

    def __init__(self, store: AnnotationStore, config: ServerConfig) -> None:
        self.store = store
        self.config = config
        self._token = config.token.encode("ascii")
        self.files = self._load_files()
        self.routes: dict[tuple[str, str], Callable[[dict[str, str], dict[str, Any]], Any]] = {
            ("GET", "/api/session"): self.session,
            ("POST", "/api/annotators"): self.join,
            ("GET", "/api/next"): self.next,
            ("POST", "/api/grade"): self.grade,
            ("POST", "/api/skip"): self.skip,
            ("POST", "/api/undo"): self.undo,
            ("POST", "/api/note"): self.note,
            ("GET", "/api/agreement"): self.agreement,
            ("GET", "/api/export"): self.export,
        }

    @staticmethod
    def _load_files() -> dict[str, tuple[bytes, str]]:
        files: dict[str, tuple[bytes, str]] = {}
        for path in sorted(STATIC.iterdir()):
            if path.is_file() and path.suffix in _TYPES:
                files["/static/" + path.name] = (path.read_bytes(), _TYPES[path.suffix])
        files["/"] = files.pop("/static/index.html")
        return files

    def authorised(self, header: str | None) -> bool:
        if header is None or not header.startswith("Bearer "):
            return False
        given = header[len("Bearer ") :].strip().encode("latin-1", "replace")
        return hmac.compare_digest(given, self._token)

    # -- request values -----------------------------------------------------------------------

    @staticmethod
    def _fields(
        body: Mapping[str, Any], required: tuple[str, ...], optional: tuple[str, ...] = ()
    ) -> None:
        unknown = sorted(set(body) - set(required) - set(optional))
        if unknown:
            _fail(
                422,
                "validation_error",
                f"unknown field(s): {', '.join(unknown)[:200]}",
                {"allowed": [*required, *optional]},
            )
        missing = [k for k in required if k not in body]
        if missing:
            _fail(422, "validation_error", f"missing field(s): {', '.join(missing)}")

    @staticmethod
    def _param(params: dict[str, str], name: str, default: str | None = None) -> str:
        value = params.get(name, default)
        if value is None:
            _fail(422, "validation_error", f"the query parameter {name!r} is required")
        return value

    def _state(self, name: str) -> dict[str, Any]:
        item, progress = self.store.state(name)
        return {
            "item": _item_json(item, progress.assigned),
            "progress": {
                "assigned": progress.assigned,
                "graded": progress.graded,
                "skipped": progress.skipped,
                "remaining": progress.remaining,
            },
        }

    # -- routes -------------------------------------------------------------------------------

    def session(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        plan = self.store.plan()
        return {
            "pairs": self.store.pair_count(),
            "annotators": self.store.annotators(),
            "open": plan is None or plan.annotators is None,
            "overlap": None if plan is None else plan.overlap,
            "scale": [
                {"grade": lv.grade, "description": lv.description}
                for lv in self.config.scale.levels
            ],
            "showLabels": self.config.show_labels,
            "references": self.store.reference_sources(),
            "threshold": self.config.threshold,
        }

    def join(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        self._fields(body, ("annotator",))
        self.store.join(body["annotator"])
        return {"annotator": body["annotator"], **self._state(body["annotator"])}

    def next(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        return self._state(self._param(params, "annotator"))

    def grade(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        self._fields(body, ("annotator", "pairId", "grade"), ("elapsedMs",))
        name = body["annotator"]
        saved = self.store.grade(
            name, body["pairId"], body["grade"], elapsed_ms=body.get("elapsedMs")
        )
        reference = None
        if self.config.show_labels == "after":  # only once the person has answered
            reference = self.store.reference_labels(saved.pair_id) or None
        return {
            "saved": self._saved(saved.id, saved.pair_id, "grade", saved.grade),
            "reference": reference,
            **self._state(name),
        }

    def skip(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        self._fields(body, ("annotator", "pairId"), ("elapsedMs",))
        name = body["annotator"]
        saved = self.store.skip(name, body["pairId"], elapsed_ms=body.get("elapsedMs"))
        return {"saved": self._saved(saved.id, saved.pair_id, "skip", None), **self._state(name)}

    def undo(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        self._fields(body, ("annotator",))
        name = body["annotator"]
        undone = self.store.undo(name)
        gone = (
            None
            if undone is None
            else self._saved(undone.action_id, undone.pair_id, undone.kind, undone.grade)
        )
        return {"undone": gone, **self._state(name)}

    def note(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        self._fields(body, ("annotator", "pairId", "note"))
        saved = self.store.note(body["annotator"], body["pairId"], body["note"])
        return {"saved": {"id": saved.id, "pairId": saved.pair_id, "note": saved.note}}

    def _saved(self, action_id: int, pair_id: int, kind: str, grade: int | None) -> dict[str, Any]:
        pair = self.store.pair(pair_id)
        return {
            "id": action_id,
            "pairId": pair_id,
            "queryId": pair.query_id,
            "docId": pair.doc_id,
            "kind": kind,
            "grade": grade,
        }

    def agreement(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        raw = self._param(params, "threshold", str(self.config.threshold))
        if re.fullmatch(r"[0-9]", raw) is None:
            _fail(422, "validation_error", "threshold is a grade, 0-9", {"value": raw[:40]})
        report = agreement_report(self.store, threshold=int(raw))
        show_refs = self.config.show_labels == "after"

        def rater(r: RaterAgreement) -> dict[str, Any]:
            a = r.labels
            return {
                "a": r.a,
                "b": r.b,
                "shared": r.shared,
                "exact": None if a is None else a.exact,
                "kappa": None
                if a is None
                else {
                    "binary": a.kappa_binary,
                    "linear": a.kappa_linear,
                    "quadratic": a.kappa_quadratic,
                },
            }

        return {
            "threshold": report.threshold,
            "annotators": [rater(r) for r in report.between_annotators],
            "references": [rater(r) for r in report.with_references],
            "disagreements": [
                {
                    "pairId": d.pair.id,
                    "queryId": d.pair.query_id,
                    "docId": d.pair.doc_id,
                    "query": d.pair.query,
                    "grades": d.grades,
                    "references": d.references if show_refs else None,
                    "notes": d.notes,
                }
                for d in report.disagreements
            ],
        }

    def export(self, params: dict[str, str], body: dict[str, Any]) -> Any:
        fmt = self._param(params, "format", "qrels")
        if fmt not in EXPORT_FORMATS:
            _fail(422, "validation_error", "format is qrels, csv or jsonl", {"value": fmt[:40]})
        rule = self._param(params, "disagreements", "omit")
        if rule not in ("omit", "error"):
            _fail(422, "validation_error", "disagreements is omit or error", {"value": rule[:40]})
        name = params.get("annotator")
        if name is not None:
            self.store.queue(name)  # an unknown name is a 404, not an empty file
        text, result = export_text(self.store, fmt, name, disagreements=rule)  # type: ignore[arg-type]
        suffix = {"qrels": "qrels", "csv": "csv", "jsonl": "log.jsonl"}[fmt]
        return {
            "format": fmt,
            "filename": f"{name or 'annotations'}.{suffix}",
            "text": text,
            "rows": None if result is None else len(result.rows),
            "disagreements": None if result is None else len(result.disagreements),
        }


class _Handler(BaseHTTPRequestHandler):
    server_version = "rankscope-annotate"
    sys_version = ""
    timeout = SOCKET_TIMEOUT_S
    app: AnnotationApp  # set on the subclass made per server
    allowed_hosts: frozenset[str] | None

    # -- responses ----------------------------------------------------------------------------

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str,
        cache: str,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache)
        for key, value in COMMON_HEADERS.items():
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload: Any, extra: Mapping[str, str] | None = None) -> None:
        body = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        self._send(status, body, "application/json", "no-store", extra)

    def _error(self, error: HttpError) -> None:
        self._json(
            error.status,
            {
                "success": False,
                "error": {"code": error.code, "message": error.message, "details": error.details},
            },
            {"WWW-Authenticate": "Bearer"} if error.status == 401 else None,
        )

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own errors (a bad request line, headers too long, an unknown method)
        as JSON, like every other answer, with a status line even to what looked like an
        HTTP/0.9 request (a request line of one word), and as 4xx: an unknown method is a 405,
        an HTTP version it does not speak a 400."""
        self.close_connection = True
        if getattr(self, "request_version", "HTTP/0.9") in ("HTTP/0.9", ""):
            self.request_version = "HTTP/1.0"
        if code == 501:  # a method no handler has: the client's mistake, not the server's
            self._error(HttpError(405, "method_not_allowed", f"{message or 'method'}"))
            return
        if code >= 500:  # 505: an HTTP version it does not speak
            code = 400
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = "error"
        self._error(HttpError(code, phrase.lower().replace(" ", "_"), message or phrase))

    def log_message(self, format: str, *args: Any) -> None:
        if self.app.config.verbose:
            # never the query string: the page's URL holds the token
            path = getattr(self, "path", "").split("?", 1)[0]
            sys.stderr.write(f"{self.address_string()} {self.command} {path} {args[1:]!s}\n")

    # -- requests -----------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _refuse_method(self) -> None:
        self.close_connection = True
        self._error(HttpError(405, "method_not_allowed", f"{self.command} is not allowed here"))

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = _refuse_method

    def _dispatch(self, method: str) -> None:
        self._body_read = method != "POST"
        try:
            self._route(method)
        except HttpError as e:
            self._error(e)
        except (UnknownPairError, UnknownAnnotatorError) as e:
            code = "unknown_pair" if isinstance(e, UnknownPairError) else "unknown_annotator"
            self._error(HttpError(404, code, str(e)))
        except NotAssignedError as e:
            self._error(HttpError(409, "not_assigned", str(e)))
        except (AnnotationError, RankscopeError) as e:
            self._error(HttpError(422, "validation_error", str(e)))
        except sqlite3.Error as e:
            log.error("annotation store error: %s", e)
            self._error(HttpError(503, "store_unavailable", f"the store failed: {e}"))
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True
        except Exception:
            traceback.print_exc(file=sys.stderr)
            self._error(HttpError(500, "internal", "internal error (see the server's output)"))
        finally:
            if not self._body_read:
                self._linger()

    def _linger(self) -> None:
        """After answering a request whose body was not read (refused first), read and drop
        what the client still sends, for a moment: closing a socket with unread data resets
        the connection, and the client would lose the answer that says why."""
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(LINGER_S)
            left = LINGER_BYTES
            while left > 0:
                chunk = self.connection.recv(min(65536, left))
                if not chunk:
                    break
                left -= len(chunk)
        except OSError:
            pass

    def _route(self, method: str) -> None:
        hosts = self.allowed_hosts
        if hosts is not None and (self.headers.get("Host") or "").lower() not in hosts:
            _fail(421, "misdirected_request", "this server answers on loopback addresses only")
        try:
            parts = urlsplit(self.path)
        except ValueError:
            _fail(400, "bad_request", "the request target is not a URL")
        path = parts.path
        if path.startswith("/api/"):
            route = self.app.routes.get((method, path))
            if route is None:
                if any(p == path for _, p in self.app.routes):
                    self._refuse_method()
                    return
                _fail(404, "not_found", "no such endpoint")
            if not self.app.authorised(self.headers.get("Authorization")):
                _fail(
                    401,
                    "unauthorized",
                    "send 'Authorization: Bearer TOKEN' with the token in "
                    "the URL `rankscope annotate` printed",
                )
            params = self._params(parts.query)
            body = self._body() if method == "POST" else {}
            self._json(200, {"success": True, "data": route(params, body)})
            return
        if method != "GET":
            self._refuse_method()
            return
        found = self.app.files.get(path)
        if found is None:
            _fail(404, "not_found", "no such page")
        self._send(200, found[0], found[1], "no-cache")

    @staticmethod
    def _params(query: str) -> dict[str, str]:
        try:
            parsed = parse_qs(query, keep_blank_values=True, errors="strict", max_num_fields=20)
        except UnicodeDecodeError:
            _fail(400, "bad_request", "the query string is not UTF-8")
        except ValueError:
            _fail(400, "bad_request", "too many query parameters")
        out: dict[str, str] = {}
        for key, values in parsed.items():
            if len(values) > 1:
                _fail(422, "validation_error", f"the parameter {key[:40]!r} is given twice")
            if "\x00" in values[0]:
                _fail(422, "validation_error", f"the parameter {key[:40]!r} holds NUL")
            out[key] = values[0]
        return out

    def _body(self) -> dict[str, Any]:
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            _fail(411, "length_required", "send the body with a Content-Length, not chunked")
        raw_length = self.headers.get("Content-Length")
        if raw_length is None:
            self.close_connection = True
            _fail(411, "length_required", "a POST needs a Content-Length")
        if not raw_length.isdigit():
            self.close_connection = True
            _fail(400, "bad_request", "Content-Length is not a whole number")
        length = int(raw_length)
        if length > MAX_BODY:
            self.close_connection = True  # the body is not read
            _fail(
                413,
                "payload_too_large",
                f"a body is at most {MAX_BODY} bytes",
                {"limit": MAX_BODY, "length": length},
            )
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            self.close_connection = True
            _fail(415, "unsupported_media_type", "send Content-Type: application/json")
        raw = self.rfile.read(length)
        self._body_read = True
        if len(raw) != length:
            self.close_connection = True
            _fail(400, "bad_request", "the body ended before Content-Length")
        try:
            body = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
        except UnicodeDecodeError:
            _fail(400, "invalid_json", "the body is not UTF-8")
        except (ValueError, RecursionError) as e:
            _fail(400, "invalid_json", f"the body is not JSON: {str(e)[:120]}")
        if not isinstance(body, dict):
            _fail(422, "validation_error", "the body is a JSON object")
        return body


class _Server6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


class AnnotationServer:
    """The app on a socket; ``serve_forever`` (the CLI) or ``start``/``stop`` (tests)."""

    def __init__(self, store: AnnotationStore, config: ServerConfig) -> None:
        check_token(config.token)
        if config.show_labels not in SHOW_LABELS:
            raise InputError(
                "unknown --show-labels", value=config.show_labels, hint="never or after"
            )
        self.app = AnnotationApp(store, config)
        loopback = is_loopback(config.host)
        handler: type[_Handler] = type(
            "Handler", (_Handler,), {"app": self.app, "allowed_hosts": None}
        )
        server_class = _Server6 if ":" in config.host.strip("[]") else ThreadingHTTPServer
        try:
            self.httpd = server_class((config.host.strip("[]"), config.port), handler)
        except OSError as e:
            raise InputError(
                f"cannot listen on {config.host}:{config.port}: {e.strerror or e}",
                hint="pass another --port (0 picks a free one)",
            ) from None
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        if loopback:
            names = ("127.0.0.1", "localhost", "[::1]")
            handler.allowed_hosts = frozenset(f"{n}:{self.port}" for n in names)
        self.host = config.host
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host = f"[{self.host.strip('[]')}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def url(self) -> str:
        """The page's address with the token (print it; it is the key to the store)."""
        return f"{self.base_url}/?token={self.app.config.token}"

    def serve_forever(self) -> None:
        try:
            self.httpd.serve_forever(poll_interval=0.2)
        finally:
            self.httpd.server_close()

    def start(self) -> AnnotationServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> AnnotationServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = [
    "CSP",
    "MAX_BODY",
    "SHOW_LABELS",
    "AnnotationApp",
    "AnnotationServer",
    "ServerConfig",
    "ShowLabels",
    "check_token",
    "is_loopback",
    "new_token",
]
