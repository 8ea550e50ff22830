"""Every error leaves the API as ``{"success": false, "error": {code, message, details}}`` with
its status; nothing ever shows a stack trace (it goes to the server log)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from sqlalchemy.exc import DataError, DBAPIError, OperationalError, SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rankscope.errors import RankscopeError
from rankscope.service.errors import ApiError, invalid_fields, validation_details
from rankscope.service.nul import nul_error, query_nul_paths

log = logging.getLogger("rankscope.service")

_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "rate_limited",
    500: "internal_error",
    503: "unavailable",
}


def error_response(
    status: int,
    code: str,
    message: str,
    details: Any = None,
    headers: Mapping[str, str] | None = None,
    error_count: int | None = None,
) -> Response:
    error: dict[str, Any] = {"code": code, "message": message, "details": details}
    if error_count is not None:
        error["errorCount"] = error_count
    body = {"success": False, "error": error}
    return Response(
        orjson.dumps(body), status_code=status, media_type="application/json", headers=headers
    )


def install(app: FastAPI) -> None:
    async def api_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return error_response(
            exc.status, exc.code, exc.message, exc.details, exc.headers, exc.error_count
        )

    async def invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return await api_error(request, invalid_fields(validation_details(exc.errors())))

    async def http_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        code = _CODES.get(exc.status_code, "error")
        return error_response(exc.status_code, code, str(exc.detail), None, exc.headers)

    async def database_error(request: Request, exc: Exception) -> Response:
        if isinstance(exc, DataError):
            # a value the database cannot hold that no check caught: the request's fault, and
            # sending it again cannot help (a 5xx would make clients retry it)
            log.warning(
                "database refused a value on %s %s: %s", request.method, request.url.path, exc
            )
            return error_response(
                422,
                "validation_error",
                f"the database refused a value of this request: {_first_line(exc.orig)}",
            )
        if isinstance(exc, OperationalError) or (
            isinstance(exc, DBAPIError) and exc.connection_invalidated
        ):
            log.warning("database unavailable on %s %s: %s", request.method, request.url.path, exc)
            return error_response(
                503,
                "unavailable",
                "the database is unavailable; retry later",
                None,
                {"Retry-After": "1"},
            )
        return await unexpected(request, exc)

    async def rankscope_error(request: Request, exc: Exception) -> Response:
        log.error("error on %s %s: %s", request.method, request.url.path, exc)
        return error_response(400, "bad_request", str(exc))

    async def unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, "internal_error", "internal error; the server log has details")

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(SQLAlchemyError, database_error)
    app.add_exception_handler(RankscopeError, rankscope_error)
    app.add_exception_handler(Exception, unexpected)


def _first_line(exc: BaseException | None) -> str:
    text = str(exc or "").strip()
    return text.splitlines()[0] if text else "no detail"


class NulGuard:
    """Refuses U+0000 in the query string or the path with 422 naming the parameter
    (:mod:`rankscope.service.nul`; bodies are checked where they are parsed)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            paths = query_nul_paths(scope.get("query_string", b""), scope.get("path", ""))
            if paths:
                error = nul_error(paths)
                response = error_response(
                    error.status,
                    error.code,
                    error.message,
                    error.details,
                    error_count=error.error_count,
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class _TooLarge(StarletteHTTPException):
    """Raised while reading a body past the limit (an HTTPException, so FastAPI's body reader
    passes it through unchanged and the handler answers 413)."""

    def __init__(self, message: str) -> None:
        super().__init__(413, message)


#: bodies of a few fields, whose routes take at most this many bytes (a 8 MiB body of bad
#: entries would cost them far more to parse than they ever need)
SMALL_BODY_BYTES = 64 * 1024
SMALL_BODY_PATHS = frozenset(("/api/metrics/retrieval/thresholds", "/api/retention"))


class BodyLimit:
    """Refuses request bodies over ``limit`` bytes with 413, by Content-Length or while
    reading; the routes of ``SMALL_BODY_PATHS`` take at most ``SMALL_BODY_BYTES``."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    def _message(self, limit: int) -> str:
        if limit < self.limit:
            return f"the request body is over this endpoint's limit of {limit} bytes"
        return (
            f"the request body is over the limit of {limit} bytes (max_request_bytes); "
            "send fewer records per batch"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit
        if scope["path"] in SMALL_BODY_PATHS:
            limit = min(limit, SMALL_BODY_BYTES)
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    await self._refuse(send, 400, "bad_request", "invalid Content-Length header")
                    return
                if length > limit:
                    await self._too_large(send, limit)
                    return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _TooLarge(self._message(limit))
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except _TooLarge:
            if not started:
                await self._too_large(send, limit)

    async def _too_large(self, send: Send, limit: int) -> None:
        await self._refuse(
            send, 413, "payload_too_large", self._message(limit), {"limitBytes": limit}
        )

    async def _refuse(
        self, send: Send, status: int, code: str, message: str, details: Any = None
    ) -> None:
        body = orjson.dumps(
            {"success": False, "error": {"code": code, "message": message, "details": details}}
        )
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


Handler = Callable[[Request, Exception], Awaitable[Response]]

__all__ = [
    "SMALL_BODY_BYTES",
    "SMALL_BODY_PATHS",
    "BodyLimit",
    "NulGuard",
    "error_response",
    "install",
    "validation_details",
]
