"""From a collect request's body to stored records: validation, limits, owner, the batch write.

Plain functions, so that a batch runs the same code on the bulk thread of the serving process
or in a bulk worker process (:mod:`rankscope.service.bulk`).
"""

from __future__ import annotations

from typing import TypeVar

import orjson
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from rankscope.service.batcher import write_items
from rankscope.service.errors import forbidden, too_large, unprocessable
from rankscope.service.nul import refuse_nul_json
from rankscope.service.records import NewRecord
from rankscope.service.schemas import BatchCreate, MetricCreate
from rankscope.service.settings import ServiceSettings
from rankscope.service.store.db import Principal
from rankscope.service.store.repository import MetricsStore

M = TypeVar("M", bound=BaseModel)


def parse_json(model: type[M], raw: bytes) -> M:
    """The body as ``model``, validated by pydantic-core straight from the bytes. Errors become
    the usual 422 with ``body.``-prefixed field paths; U+0000 in any string is a 422 too."""
    refuse_nul_json(raw)
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False)]
        raise RequestValidationError(errors) from None


def owner_of(principal: Principal, user_id: str | None) -> str:
    """The user a written record belongs to: the caller, or anyone for the service role."""
    if user_id is None or user_id == principal.user_id:
        return principal.user_id
    if not principal.is_service:
        raise forbidden("only the service role may write records for another user (userId)")
    return user_id


def check_documents(record: MetricCreate, limit: int, path: str) -> None:
    if len(record.retrieved_documents) > limit:
        raise unprocessable(
            f"{len(record.retrieved_documents)} retrieved documents, over the limit of {limit} "
            "(max_documents_per_record)",
            [
                {
                    "path": f"{path}.retrievedDocuments",
                    "message": f"at most {limit} documents",
                    "type": "too_long",
                }
            ],
        )


def store_batch(
    settings: ServiceSettings, store: MetricsStore, principal: Principal, raw: bytes
) -> bytes:
    """A batch request's body -> its records stored in one transaction -> the response body
    (``{"success": true, "data": BatchResult}``)."""
    batch = parse_json(BatchCreate, raw)
    limit = settings.max_batch_records
    if len(batch.records) > limit:
        raise too_large(
            f"{len(batch.records)} records in one batch, over the limit of {limit} "
            "(max_batch_records)",
            {"limitRecords": limit},
        )
    items = []
    for i, record in enumerate(batch.records):
        check_documents(record, settings.max_documents_per_record, f"body.records.{i}")
        items.append((principal, NewRecord(record, owner_of(principal, record.user_id))))
    outcomes = write_items(store, items) if items else []
    # serialised directly (a thousand items through the response model cost more than the
    # insert); the shape is BatchResult's, and orjson writes a UUID as its usual text
    records = [
        {"id": o.id, "collectId": r.collect_id, "duplicate": o.duplicate}
        for o, r in zip(outcomes, batch.records, strict=True)
    ]
    dups = sum(o.duplicate for o in outcomes)
    data = {"accepted": len(outcomes) - dups, "duplicates": dups, "records": records}
    return orjson.dumps({"success": True, "data": data})


__all__ = ["check_documents", "owner_of", "parse_json", "store_batch"]
