"""What every resource's bodies share: the envelopes (``{"success": true, "data": ...}`` and the
typed error), ranges of time, and the date forms of query strings. (The models of what a
client sends are :mod:`rankscope.collect.wire`'s; ``Camel`` there is every body's base.)"""

from __future__ import annotations

import datetime as dt
import re
import threading
from typing import Any, Generic, Literal, TypeVar

from pydantic import Field

from rankscope.collect.wire import Camel

T = TypeVar("T")

#: held while a body model is built at run time: pydantic silences one of its own warnings
#: with ``warnings.catch_warnings()``, which is not thread-safe, so two threads building
#: schemas at once (two apps in one process, on their first requests) could turn that
#: warning into an error in the other thread (``filterwarnings = error``)
SCHEMA_BUILD = threading.Lock()


class Envelope(Camel, Generic[T]):
    success: Literal[True] = True
    data: T


class ErrorBody(Camel):
    code: str
    message: str
    details: Any = None
    error_count: int | None = Field(
        None,
        description="validation_error only: the errors found (details lists the first 20; "
        "validation stops at the first bad item of a list)",
    )


class ErrorEnvelope(Camel):
    success: Literal[False] = False
    error: ErrorBody


class DateRange(Camel):
    """The design's range: UTC to the millisecond, ``2026-01-31T23:59:59.999Z``."""

    start: str
    end: str


class TimeRange(Camel):
    """From a moment to a moment, to the microsecond (UTC; null: open, or nothing to bound)."""

    start: dt.datetime | None
    end: dt.datetime | None


class Health(Camel):
    status: Literal["ok"]


class Me(Camel):
    """Who a token acts as (``GET /api/me``)."""

    user_id: str
    role: Literal["user", "service"]


class Ready(Camel):
    status: Literal["ok", "unavailable"]
    database: str
    schema_revision: str | None


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_moment(value: str, *, end: bool = False) -> dt.datetime:
    """An ISO 8601 date or date-time (without an offset: UTC) as a moment in UTC; a date alone
    as an ``end`` means its whole day. ValueError when it is not a date, OverflowError when it
    lies outside the years 1 to 9999 in UTC."""
    text = value.strip()
    if _DATE.match(text):
        day = dt.date.fromisoformat(text)
        moment = dt.datetime.combine(day, dt.time.min, dt.UTC)
        return moment + dt.timedelta(days=1, microseconds=-1) if end else moment
    parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)  # 0001-01-01T00:00+01:00 is before the first in UTC


_Body = TypeVar("_Body", bound=Camel)


def from_value(body: type[_Body], value: object, /, **given: Any) -> _Body:
    """A response body built from a domain value (a dataclass of rankscope.online, say): each
    field of ``body`` is read from the attribute of the same name, unless ``given`` (a field the
    value names otherwise, or does not have). The body validates what it is given, so a field
    the value lacks and nobody gives is an error, not a silent default."""
    fields = {
        name: getattr(value, name)
        for name in body.model_fields
        if name not in given and hasattr(value, name)
    }
    return body(**fields, **given)


__all__ = [
    "DateRange",
    "Envelope",
    "ErrorBody",
    "ErrorEnvelope",
    "Health",
    "Me",
    "Ready",
    "TimeRange",
    "from_value",
    "parse_moment",
]
