"""The NUL character (U+0000) is refused in every string a request brings, with a 422 that
names each field holding it.

PostgreSQL cannot store it (its ``text`` and ``jsonb`` types refuse U+0000) and SQLite can:
one rule for both backends keeps a record that one of them stores from failing on the other,
and a NUL in an id or query is nearly always a bug of the sender. The rule covers body fields
(keys of objects too, and fields the service does not store such as ``content``), query-string
parameters and the path.

The checks cost next to nothing when there is no NUL: JSON can only carry one as the escape
``\\u0000`` (a raw control character is invalid JSON) and a query string only as ``%00``, so a
byte search decides, and only a request that has one is parsed to name the fields.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

import orjson
from pydantic import BaseModel

from rankscope.service.errors import MAX_ERROR_DETAILS, ApiError

NUL = "\x00"
_JSON_ESCAPE = b"\\u0000"


def nul_paths(value: Any, path: str) -> list[str]:
    """The paths (``body.records.1.query``) of the strings and object keys in a decoded JSON
    value that hold U+0000."""
    found: list[str] = []
    _walk(value, path, found)
    return found


def _walk(value: Any, path: str, found: list[str]) -> None:
    if isinstance(value, str):
        if NUL in value:
            found.append(path)
    elif isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}"
            if NUL in key:
                found.append(where)
            _walk(item, where, found)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _walk(item, f"{path}.{i}", found)


def nul_error(paths: list[str]) -> ApiError:
    """422 naming the fields that hold U+0000 (the first ``MAX_ERROR_DETAILS``, and their
    count, as every validation error), and the fix."""
    shown = paths[0].replace(NUL, "\\u0000")
    more = f" (and {len(paths) - 1} more fields)" if len(paths) > 1 else ""
    return ApiError(
        422,
        "validation_error",
        f"{shown} contains the NUL character (U+0000){more}, which the service does not "
        "accept in any field: remove it or replace it (e.g. by U+FFFD) before sending",
        [
            {"path": p, "message": "contains the NUL character (U+0000)", "type": "string_nul"}
            for p in paths[:MAX_ERROR_DETAILS]
        ],
        error_count=len(paths),
    )


def refuse_nul_json(raw: bytes, where: str = "body") -> None:
    """Raise the 422 when the JSON document ``raw`` holds U+0000 in a string or key. Malformed
    JSON is left to the body's validation (which answers its own 422)."""
    # most bodies hold no backslash at all (a memchr); else rfind: CPython's reverse search
    # skips on the needle's first byte (the backslash), the forward one on its last ("0",
    # common in numbers), 2-3 times slower on a batch
    if b"\\" not in raw or raw.rfind(_JSON_ESCAPE) < 0:
        return
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return
    paths = nul_paths(value, where)
    if paths:
        raise nul_error(paths)


def refuse_nul_model(body: BaseModel, where: str = "body") -> None:
    """The same for a body FastAPI already validated into ``body`` (field names as sent)."""
    paths = nul_paths(body.model_dump(mode="json", by_alias=True), where)
    if paths:
        raise nul_error(paths)


def query_nul_paths(query_string: bytes, path: str) -> list[str]:
    """The query parameters (``query.topicId``) and the path (``path``) that hold U+0000."""
    found = []
    if NUL in path:
        found.append("path")
    if b"%00" in query_string or b"\x00" in query_string:
        for name, value in parse_qsl(
            query_string.decode("latin-1"), keep_blank_values=True, errors="replace"
        ):
            if NUL in name or NUL in value:
                found.append(f"query.{name}")
    return found


__all__ = [
    "NUL",
    "nul_error",
    "nul_paths",
    "query_nul_paths",
    "refuse_nul_json",
    "refuse_nul_model",
]
