"""What the routers share: the error responses they document, page parameters, and reading a
body that a route parses itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel
from starlette.requests import ClientDisconnect

from rankscope.service.errors import bad_request
from rankscope.service.schemas.common import ErrorEnvelope

ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorEnvelope, "description": text}
    for status, text in (
        (400, "bad request (e.g. startDate after endDate)"),
        (401, "missing, malformed or invalid token"),
        (403, "not allowed for this caller"),
        (404, "no such record for this caller"),
        (413, "body over max_request_bytes, or a batch over max_batch_records"),
        (422, "malformed JSON or invalid fields (details list each field path)"),
        (429, "rate limit exceeded (Retry-After says when to retry)"),
        (500, "internal error"),
        (503, "database unavailable; retry"),
    )
}

#: a page's size and start
Limit = Annotated[int, Query(ge=1, le=1000)]
PageSize = Annotated[int, Query(ge=1, le=1000, description="page size (at most 1,000)")]
Offset = Annotated[int, Query(ge=0, le=1_000_000_000)]
MinImpressions = Annotated[int | None, Query(alias="minImpressions", ge=1, le=1_000_000)]

T = TypeVar("T")


async def parse_body(request: Request, parse: Callable[[bytes], T]) -> T:
    """``parse`` of the raw body: pydantic-core validates straight from the bytes (FastAPI's own
    body parameter decodes to Python objects first and costs several times more on the collect
    routes). A large body is parsed on a worker thread."""
    try:
        raw = await request.body()
    except ClientDisconnect:  # e.g. closed at the body's deadline (service/connections.py)
        raise bad_request("the connection closed before the request body arrived") from None
    if len(raw) < 65536:  # a thread hand-off costs more than parsing a small body
        return parse(raw)
    return await run_in_threadpool(parse, raw)


def body_of(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI request body of a route that parses ``model`` itself (see parse_body)."""
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}
            },
        }
    }


__all__ = ["ERRORS", "Limit", "MinImpressions", "Offset", "PageSize", "body_of", "parse_body"]
