"""Errors the API answers with a typed body ``{"success": false, "error": {code, message,
details}}``; the exception handlers in :mod:`rankscope.service.api.errors` render them."""

from __future__ import annotations

from typing import Any

from rankscope.errors import ServiceError


class ApiError(ServiceError):
    """An error with an HTTP status and a stable machine-readable code."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers or {}

    def __reduce__(self) -> tuple[type[ApiError], tuple[Any, ...]]:
        # whole, so that an error raised in a bulk worker process reaches the response intact
        return (ApiError, (self.status, self.code, self.message, self.details, self.headers))


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
    return ApiError(422, "validation_error", message, details)


__all__ = [
    "ApiError",
    "bad_request",
    "forbidden",
    "not_found",
    "too_large",
    "unauthorized",
    "unprocessable",
]
