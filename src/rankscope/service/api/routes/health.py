"""Liveness (``/healthz``: the process answers) and readiness (``/readyz``: the database
answers and its schema is the one this version needs)."""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import Response
from sqlalchemy.exc import SQLAlchemyError

from rankscope.service.api.deps import State
from rankscope.service.api.errors import error_response
from rankscope.service.schemas.common import Envelope, Health, Ready
from rankscope.service.store.db import head_revision

router = APIRouter(tags=["health"])
log = logging.getLogger("rankscope.service")


@router.get("/healthz", response_model=Envelope[Health])
def healthz() -> Envelope[Health]:
    return Envelope(data=Health(status="ok"))


@router.get(
    "/readyz",
    response_model=Envelope[Ready],
    responses={503: {"description": "the database is unreachable or not migrated"}},
)
def readyz(state: State) -> Envelope[Ready] | Response:
    try:
        revision = state.store.revision()
    except SQLAlchemyError as exc:
        log.warning("readiness check failed: %s", exc)
        return error_response(503, "unavailable", "the database is unreachable")
    if revision != head_revision():
        return error_response(
            503,
            "unavailable",
            f"the database schema is at {revision or 'no revision'}, not {head_revision()}: "
            "run `rankscope serve migrate`",
        )
    dialect = state.store.engine.dialect.name
    return Envelope(data=Ready(status="ok", database=dialect, schema_revision=revision))
