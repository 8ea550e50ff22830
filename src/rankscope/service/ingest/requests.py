"""From a collect request's body to stored records: validation, limits, owner, the batch write.

Plain functions, so that a batch runs the same code on the bulk thread of the serving process
or in a bulk worker process (:mod:`rankscope.service.ingest.bulk`).

A body's cost is bounded before it is validated item by item: each list's length is checked as
it is read (the service's limits are the models' ``max_length``, :func:`collect_models`),
validation stops at the first bad item of a list, and a 422 lists the first 20 errors with
their count. A body of millions of bad items is refused as fast as a body of one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any, NamedTuple, TypeVar
from urllib.parse import quote

import orjson
from pydantic import BaseModel, ValidationError

from rankscope.collect.wire import (
    MAX_DOCUMENT_IDS,
    MAX_JUDGMENTS,
    CollectOptions,
    MetricCreate,
    SearchTypes,
)
from rankscope.service.errors import (
    MAX_ERROR_DETAILS,
    ApiError,
    forbidden,
    invalid_fields,
    too_large,
    unprocessable,
    validation_details,
)
from rankscope.service.ingest.batcher import write_items
from rankscope.service.ingest.rows import NewRecord
from rankscope.service.ingest.writer import MetricsStore
from rankscope.service.nul import refuse_nul_json
from rankscope.service.schemas.records import collect_models
from rankscope.service.settings import ServiceSettings
from rankscope.service.store.db import Principal

M = TypeVar("M", bound=BaseModel)

#: the earliest timestamp a body may carry (the design's timestamps count seconds from it)
EARLIEST = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
#: how far past the server's clock a timestamp may be (a client's clock runs ahead, or sends
#: local time as UTC: up to 14 hours)
FUTURE_SLACK = dt.timedelta(days=1)
#: the response header naming the unknown fields a collect body's records carried
IGNORED_HEADER = "X-Rankscope-Ignored-Fields"
IGNORED_COUNT_HEADER = "X-Rankscope-Ignored-Field-Count"


def body_details(exc: ValidationError) -> list[dict[str, Any]]:
    """pydantic's errors of a request body, with ``body.``-prefixed field paths."""
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    return validation_details([{**e, "loc": ("body", *e["loc"])} for e in errors])


def owner_of(principal: Principal, user_id: str | None) -> str:
    """The user a written record belongs to: the caller, or anyone for the service role."""
    if user_id is None or user_id == principal.user_id:
        return principal.user_id
    if not principal.is_service:
        raise forbidden("only the service role may write records for another user (userId)")
    return user_id


def check_timestamp(value: dt.datetime | None, path: str, now: dt.datetime) -> None:
    """A body's timestamp lies from 1970-01-01 (UTC) to a day past ``now``; 422 otherwise."""
    if value is None:
        return
    moment = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
    latest = now + FUTURE_SLACK
    if EARLIEST <= moment <= latest:
        return
    window = f"{EARLIEST:%Y-%m-%dT%H:%M:%SZ} to {latest.astimezone(dt.UTC):%Y-%m-%dT%H:%M:%SZ}"
    raise unprocessable(
        f"{path}: timestamp {value.isoformat()} is outside {window} (from the Unix epoch to a "
        "day past the server's clock); check the client's clock and time zone",
        [
            {
                "path": path,
                "message": f"a timestamp from {window}",
                "type": "timestamp_out_of_range",
            }
        ],
    )


class UnknownFields:
    """The unknown fields of a collect body that validation met: the first 20 paths (none
    when there were too many to list), and how many."""

    def __init__(self, paths: Sequence[str] = (), count: int = 0) -> None:
        self.paths = list(paths[:MAX_ERROR_DETAILS])
        self.count = count

    def headers(self) -> dict[str, str]:
        """The response headers that name them (none when there are none). Paths are
        percent-encoded: a header carries ASCII only, and a comma separates them."""
        if not self.count:
            return {}
        return {
            IGNORED_HEADER: ", ".join(quote(p, safe="._-~*[]@$") for p in self.paths),
            IGNORED_COUNT_HEADER: str(self.count),
        }

    def refuse(self) -> ApiError:
        """The 422 of ``unknown_fields = "reject"``."""
        details = [
            {"path": p, "message": "Extra inputs are not permitted", "type": "extra_forbidden"}
            for p in self.paths
        ]
        return invalid_fields(details, self.count)


def _collect_error(
    details: list[dict[str, Any]], count: int, settings: ServiceSettings
) -> ApiError:
    """A collect body's validation errors; an over-long list names the setting that limits
    it (413 for a batch's records, as before validation checked lengths)."""
    for d in details:
        if d["type"] != "too_long":
            continue
        if d["path"] == "body.records":
            limit = settings.max_batch_records
            return too_large(
                f"more than {limit} records in one batch (max_batch_records)",
                {"limitRecords": limit},
            )
        if d["path"].endswith(".retrievedDocuments"):
            limit = settings.max_documents_per_record
            d["message"] = f"more than {limit} retrieved documents (max_documents_per_record)"
    return invalid_fields(details, count)


#: errors of a first validation that are listed to tell unknown fields from invalid ones; past
#: this many (say, an object of a million unknown keys) they are only counted
_LISTED_ERRORS = 10_000


def _validate(
    model: type[M], raw: bytes, settings: ServiceSettings, found: UnknownFields
) -> tuple[M, UnknownFields]:
    """``model`` from the body, with its unknown fields ignored or refused (setting
    ``unknown_fields``).

    The models forbid unknown fields, so the usual body, which has none, is validated once. A
    body that fails is validated again ignoring them (pydantic's ``extra="ignore"``): if that
    passes, every error of the first pass was an unknown field. Either pass stops at the first
    bad item of a list, so the unknown fields named are those met before it. Where
    :func:`check_shape` ``found`` some already, the first pass is skipped (a body of a million
    unknown keys would make it list a million errors)."""
    reject = settings.unknown_fields == "reject"
    if found.count:
        if reject:
            raise found.refuse()
        count, details = found.count, None
    else:
        try:
            return model.model_validate_json(raw), found
        except ValidationError as exc:
            count = exc.error_count()
            details = body_details(exc) if count <= _LISTED_ERRORS else None
    extras: list[str] = found.paths
    if details is not None:
        extras = [d["path"] for d in details if d["type"] == "extra_forbidden"]
        if reject or len(extras) < len(details):
            if not reject:  # report the invalid fields only
                details = [d for d in details if d["type"] != "extra_forbidden"]
                count = len(details)
            raise _collect_error(details, count, settings)
    try:
        parsed = model.model_validate_json(raw, extra="ignore")
    except ValidationError as exc:
        raise _collect_error(body_details(exc), exc.error_count(), settings) from None
    unknown = UnknownFields(extras, count)
    if reject:
        raise unknown.refuse()
    return parsed, unknown


#: bodies larger than this have their lists' lengths checked by orjson (a C parser, a few ms a
#: megabyte) before pydantic reads them: pydantic-core builds a whole JSON array before it
#: validates its items, which for 8 MiB of small objects costs the better part of a second
#: even when the list is refused at its 1,001st item
SHAPE_CHECK_BYTES = 1 << 20


def _too_long(value: Any, limit: int) -> bool:
    return isinstance(value, list | dict) and len(value) > limit


def _field(body: dict[str, Any], alias: str, name: str) -> Any:
    return body[alias] if alias in body else body.get(name)


def _record_shape(body: Any, path: str, settings: ServiceSettings) -> dict[str, Any] | None:
    """The first list of a collect record over its limit, as a field error (None: none)."""
    if not isinstance(body, dict):
        return None
    docs = _field(body, "retrievedDocuments", "retrieved_documents")
    limit = settings.max_documents_per_record
    if _too_long(docs, limit):
        message = f"more than {limit} retrieved documents (max_documents_per_record)"
        return {"path": f"{path}.retrievedDocuments", "message": message, "type": "too_long"}
    options = body.get("options")
    lists = [
        (body, "relevantDocumentIds", "relevant_document_ids", MAX_JUDGMENTS, ""),
        (body, "judgments", "judgments", MAX_JUDGMENTS, ""),
        (options, "documentIds", "document_ids", MAX_DOCUMENT_IDS, ".options"),
    ]
    for holder, alias, name, most, where in lists:
        value = _field(holder, alias, name) if isinstance(holder, dict) else None
        if isinstance(value, list | dict) and len(value) > most:
            kind = "List" if isinstance(value, list) else "Dictionary"
            return {
                "path": f"{path}{where}.{alias}",
                "message": f"{kind} should have at most {most} items, not {len(value)}",
                "type": "too_long",
            }
    return None


def _names(model: type[BaseModel]) -> frozenset[str]:
    """The keys a model takes: its fields' aliases and names."""
    return frozenset(
        key for name, f in model.model_fields.items() for key in (name, f.alias) if key
    )


_RECORD_KEYS = _names(MetricCreate)
_OPTIONS_KEYS = _names(CollectOptions)
_TYPES_KEYS = _names(SearchTypes)


def _unknown_keys(found: UnknownFields, body: Any, path: str, known: frozenset[str]) -> None:
    if isinstance(body, dict) and not known.issuperset(body):
        names = [k for k in body if k not in known]
        found.paths.extend(f"{path}.{k}" for k in names[: MAX_ERROR_DETAILS - len(found.paths)])
        found.count += len(names)


#: the most keys one object of a collect or events body may hold (``judgments`` excepted: its
#: cap is ``MAX_JUDGMENTS``); an object of 650,000 unknown keys cost most of a second to
#: validate, and was accepted
MAX_OBJECT_KEYS = 1000


def might_hold_many_keys(raw: bytes) -> bool:
    """Whether a body could hold an object over ``MAX_OBJECT_KEYS`` keys: every key is followed
    by a colon, so a body with fewer colons cannot (a count at memchr speed)."""
    return raw.count(b":") > MAX_OBJECT_KEYS


def too_many_keys(value: Any, path: str) -> dict[str, Any] | None:
    """A field error when ``value`` is an object of more than ``MAX_OBJECT_KEYS`` keys."""
    if isinstance(value, dict) and len(value) > MAX_OBJECT_KEYS:
        return {
            "path": path,
            "message": f"an object may hold at most {MAX_OBJECT_KEYS} keys, not {len(value)}",
            "type": "too_many_keys",
        }
    return None


def _record_keys(record: Any, path: str) -> dict[str, Any] | None:
    """The first object of a collect record over ``MAX_OBJECT_KEYS`` keys (its documents,
    options and search types too; not its judgments)."""
    if not isinstance(record, dict):
        return None
    problem = too_many_keys(record, path)
    options = record.get("options")
    if problem is None and isinstance(options, dict):
        problem = too_many_keys(options, f"{path}.options")
        types = _field(options, "searchTypes", "search_types")
        problem = problem or too_many_keys(types, f"{path}.options.searchTypes")
    docs = _field(record, "retrievedDocuments", "retrieved_documents")
    if problem is None and isinstance(docs, list):
        for i, item in enumerate(docs):
            problem = too_many_keys(item, f"{path}.retrievedDocuments.{i}")
            if problem is not None:
                break
    return problem


def check_shape(raw: bytes, settings: ServiceSettings, *, batch: bool) -> UnknownFields:
    """A large collect body's list lengths, before validation (see ``SHAPE_CHECK_BYTES``),
    with the same errors as validation would give; and the unknown fields of its records'
    objects (not of their documents). Any body that could hold an object over
    ``MAX_OBJECT_KEYS`` keys has its objects counted first (a 422 naming the object). Anything
    else, malformed JSON included, is left to validation."""
    found = UnknownFields()
    large = len(raw) > SHAPE_CHECK_BYTES
    if not large and not might_hold_many_keys(raw):
        return found
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return found
    if not large:
        _check_keys(body, batch=batch)
        return found
    records: list[Any] = [body]
    paths = ["body"]
    if batch:
        given = body.get("records") if isinstance(body, dict) else None
        if _too_long(given, settings.max_batch_records):
            raise _collect_error([{"path": "body.records", "type": "too_long"}], 1, settings)
        records = given if isinstance(given, list) else []
        paths = [f"body.records.{i}" for i in range(len(records))]
        _unknown_keys(found, body, "body", frozenset(("records",)))
    if batch and (top := too_many_keys(body, "body")) is not None:
        raise invalid_fields([top])
    for record, path in zip(records, paths, strict=True):
        # lengths first: a list of millions is refused before its items are looked at
        problem = _record_shape(record, path, settings) or _record_keys(record, path)
        if problem is not None:
            raise invalid_fields([problem])
        if isinstance(record, dict):
            _unknown_keys(found, record, path, _RECORD_KEYS)
            options = record.get("options")
            _unknown_keys(found, options, f"{path}.options", _OPTIONS_KEYS)
            if isinstance(options, dict):
                types = _field(options, "searchTypes", "search_types")
                _unknown_keys(found, types, f"{path}.options.searchTypes", _TYPES_KEYS)
    return found


def _check_keys(body: Any, *, batch: bool) -> None:
    """422 for the first object of a collect or batch body over ``MAX_OBJECT_KEYS`` keys."""
    if batch:
        problem = too_many_keys(body, "body")
        given = body.get("records") if isinstance(body, dict) else None
        records = given if isinstance(given, list) else []
        for i, record in enumerate(records):
            if problem is not None:
                break
            problem = _record_keys(record, f"body.records.{i}")
    else:
        problem = _record_keys(body, "body")
    if problem is not None:
        raise invalid_fields([problem])


def _check_timestamps(records: Sequence[tuple[MetricCreate, str]]) -> None:
    now = dt.datetime.now(dt.UTC)
    for record, prefix in records:
        check_timestamp(record.timestamp, f"{prefix}.timestamp", now)


def read_record(settings: ServiceSettings, raw: bytes) -> tuple[MetricCreate, UnknownFields]:
    """A single collect's body, validated and checked, and its ignored unknown fields."""
    refuse_nul_json(raw)
    found = check_shape(raw, settings, batch=False)
    model, _ = collect_models(settings.max_documents_per_record, settings.max_batch_records)
    record, unknown = _validate(model, raw, settings, found)
    _check_timestamps([(record, "body")])
    return record, unknown


class BatchReply(NamedTuple):
    """A batch request's response body, and the unknown fields its records carried."""

    body: bytes
    ignored_paths: list[str]
    ignored_count: int

    def headers(self) -> dict[str, str]:
        return UnknownFields(self.ignored_paths, self.ignored_count).headers()


def store_batch(
    settings: ServiceSettings, store: MetricsStore, principal: Principal, raw: bytes
) -> BatchReply:
    """A batch request's body -> its records stored in one transaction -> the response body
    (``{"success": true, "data": BatchResult}``)."""
    refuse_nul_json(raw)
    found = check_shape(raw, settings, batch=True)
    _, model = collect_models(settings.max_documents_per_record, settings.max_batch_records)
    batch, unknown = _validate(model, raw, settings, found)
    _check_timestamps([(r, f"body.records.{i}") for i, r in enumerate(batch.records)])
    items = [(principal, NewRecord(r, owner_of(principal, r.user_id))) for r in batch.records]
    outcomes = write_items(store, items) if items else []
    # serialised directly (a thousand items through the response model cost more than the
    # insert); the shape is BatchResult's, and orjson writes a UUID as its usual text
    items_out = [
        {"id": o.id, "collectId": r.collect_id, "duplicate": o.duplicate}
        for o, r in zip(outcomes, batch.records, strict=True)
    ]
    dups = sum(o.duplicate for o in outcomes)
    data = {"accepted": len(outcomes) - dups, "duplicates": dups, "records": items_out}
    body = orjson.dumps({"success": True, "data": data})
    return BatchReply(body, unknown.paths, unknown.count)


__all__ = [
    "EARLIEST",
    "FUTURE_SLACK",
    "IGNORED_COUNT_HEADER",
    "IGNORED_HEADER",
    "MAX_OBJECT_KEYS",
    "BatchReply",
    "UnknownFields",
    "body_details",
    "check_shape",
    "check_timestamp",
    "might_hold_many_keys",
    "owner_of",
    "read_record",
    "store_batch",
    "too_many_keys",
]
