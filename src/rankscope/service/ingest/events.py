"""From an events request's body to stored rows: validation (limits, timestamps, U+0000),
then one row per event for ``search_events``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

import orjson
from pydantic import ValidationError

from rankscope.collect.wire import EventCreate
from rankscope.ids import uuid7s
from rankscope.service.errors import ApiError, invalid_fields, too_large
from rankscope.service.ingest.requests import (
    SHAPE_CHECK_BYTES,
    body_details,
    check_timestamp,
    might_hold_many_keys,
    too_many_keys,
)
from rankscope.service.nul import refuse_nul_json
from rankscope.service.schemas.events import events_models


def _too_many(limit: int) -> ApiError:
    return too_large(
        f"more than {limit} events in one request (max_batch_events)", {"limitEvents": limit}
    )


#: default of the setting ``max_event_attributes_bytes``
MAX_ATTRIBUTES_BYTES = 16 * 1024


def _check_objects(given: list[Any], prefix: str, attributes_limit: int) -> None:
    """422 for the first event over ``MAX_OBJECT_KEYS`` keys, or whose ``attributes`` are
    larger than ``attributes_limit`` bytes as compact JSON (what is stored and read back)."""
    for i, event in enumerate(given):
        if not isinstance(event, dict):
            continue
        problem = too_many_keys(event, f"{prefix}.{i}")
        if problem is not None:
            raise invalid_fields([problem])
        attributes = event.get("attributes")
        if not isinstance(attributes, dict | list):
            continue
        size = len(orjson.dumps(attributes))
        if size > attributes_limit:
            raise invalid_fields(
                [
                    {
                        "path": f"{prefix}.{i}.attributes",
                        "message": f"attributes may take at most {attributes_limit} bytes as "
                        f"JSON (max_event_attributes_bytes), not {size}",
                        "type": "too_large",
                    }
                ]
            )


def parse_events(
    raw: bytes, limit: int, attributes_limit: int = MAX_ATTRIBUTES_BYTES
) -> list[EventCreate]:
    """``{"events": [...]}`` or a bare JSON list of at most ``limit`` events (413 past it);
    errors name each field path; U+0000 in any string is a 422. No object holds more than
    ``MAX_OBJECT_KEYS`` keys, and an event's ``attributes`` at most ``attributes_limit``
    bytes as JSON: both checked before validation. Timestamps lie from 1970 to a day past the
    server's clock."""
    refuse_nul_json(raw)
    wrapped, bare = events_models(limit)
    if len(raw) > SHAPE_CHECK_BYTES or len(raw) > attributes_limit or might_hold_many_keys(raw):
        # the list's length before pydantic builds it, then each event's size
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = None
        if isinstance(body, dict) and (top := too_many_keys(body, "body")) is not None:
            raise invalid_fields([top])
        given = body.get("events") if isinstance(body, dict) else body
        if isinstance(given, list):
            if len(given) > limit:
                raise _too_many(limit)
            _check_objects(
                given, "body.events" if isinstance(body, dict) else "body", attributes_limit
            )
    try:
        if raw.lstrip()[:1] == b"[":
            events = bare.validate_json(raw)
        else:
            events = wrapped.model_validate_json(raw).events
    except ValidationError as exc:
        details = body_details(exc)
        if any(d["type"] == "too_long" and d["path"] in ("body", "body.events") for d in details):
            raise _too_many(limit) from None
        raise invalid_fields(details, exc.error_count()) from None
    now = dt.datetime.now(dt.UTC)
    prefix = "body" if raw.lstrip()[:1] == b"[" else "body.events"
    for i, event in enumerate(events):
        check_timestamp(event.timestamp, f"{prefix}.{i}.timestamp", now)
    return events


def event_rows(
    events: Sequence[EventCreate], owner: Callable[[str | None], str], now: dt.datetime
) -> list[dict[str, Any]]:
    """Rows for ``search_events`` (timestamps default to ``now``, in UTC)."""
    rows = []
    for key, event in zip(uuid7s(len(events)), events, strict=True):
        timestamp = event.timestamp or now
        if timestamp.tzinfo is None:
            timestamp = timestamp.replace(tzinfo=dt.UTC)
        rows.append(
            {
                "id": key,
                "user_id": owner(event.user_id),
                "event_id": event.event_id,
                "action": event.action,
                "query_id": event.query_id,
                "query": event.query,
                "document_id": event.document_id,
                "position": event.position,
                "dwell_seconds": event.dwell_time_seconds,
                "result_count": event.result_count,
                "topic_id": event.topic_id,
                "search_type": event.search_type,
                "arm": event.arm,
                "experiment": event.experiment,
                "team": event.team,
                "session_id": event.session_id,
                "client_id": event.client_id,
                "application": event.application,
                "attributes": event.attributes,
                "timestamp": timestamp.astimezone(dt.UTC),
                "created_at": now,
            }
        )
    return rows


__all__ = ["MAX_ATTRIBUTES_BYTES", "event_rows", "parse_events"]
