"""Errors the API answers with a typed body ``{"success": false, "error": {code, message,
details}}``; the exception handlers in :mod:`rankscope.service.api.errors` render them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rankscope.errors import ServiceError

#: validation errors listed in a 422's details; errorCount says how many there were
MAX_ERROR_DETAILS = 20


class ApiError(ServiceError):
    """An error with an HTTP status and a stable machine-readable code. ``error_count``: the
    number of validation errors (a 422 ``validation_error``'s ``errorCount``)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Any = None,
        headers: dict[str, str] | None = None,
        error_count: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers or {}
        self.error_count = error_count

    def __reduce__(self) -> tuple[type[ApiError], tuple[Any, ...]]:
        # whole, so that an error raised in a bulk worker process reaches the response intact
        return (
            ApiError,
            (self.status, self.code, self.message, self.details, self.headers, self.error_count),
        )


def unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, headers={"WWW-Authenticate": "Bearer"})


def forbidden(message: str) -> ApiError:
    return ApiError(403, "forbidden", message)


def not_found(message: str) -> ApiError:
    return ApiError(404, "not_found", message)


def bad_request(message: str, details: Any = None) -> ApiError:
    return ApiError(400, "bad_request", message, details)


def too_large(message: str, details: Any = None) -> ApiError:
    return ApiError(413, "payload_too_large", message, details)


def unprocessable(message: str, details: Any = None) -> ApiError:
    count = len(details) if isinstance(details, list) else None
    return ApiError(422, "validation_error", message, details, error_count=count)


def validation_details(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """pydantic's errors as ``{"path": "body.records.0.query", "message", "type"}``."""
    return [
        {
            "path": ".".join(str(p) for p in err.get("loc", ())),
            "message": err.get("msg", ""),
            "type": err.get("type"),
        }
        for err in errors
    ]


def invalid_fields(details: list[dict[str, Any]], total: int | None = None) -> ApiError:
    """422 for field errors (``{"path", "message", "type"}`` each): the first
    ``MAX_ERROR_DETAILS`` listed, ``errorCount`` the ``total`` (default: all of them), the
    message naming the first."""
    count = len(details) if total is None else total
    if any(d.get("type") == "json_invalid" for d in details[:MAX_ERROR_DETAILS]):
        message = "the body is not valid JSON"
    else:
        first = details[0] if details else {"path": "", "message": ""}
        message = f"invalid request: {first['path']}: {first['message']}"
        if count > 1:
            message += f" (and {count - 1} more error{'s' if count > 2 else ''})"
    return ApiError(
        422, "validation_error", message, details[:MAX_ERROR_DETAILS], error_count=count
    )


__all__ = [
    "MAX_ERROR_DETAILS",
    "ApiError",
    "bad_request",
    "forbidden",
    "invalid_fields",
    "not_found",
    "too_large",
    "unauthorized",
    "unprocessable",
    "validation_details",
]
