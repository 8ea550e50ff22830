"""``/api/alerts``: regressions found by the alert rules, and the check that finds them."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool

from rankscope.service.analysis.alerts import check_alerts, public_alert
from rankscope.service.api.common import ERRORS, Limit, Offset
from rankscope.service.api.deps import (
    CurrentPrincipal,
    EndDateQuery,
    OtherUserQuery,
    StartDateQuery,
    State,
    acting_user,
    date_range,
)
from rankscope.service.errors import forbidden
from rankscope.service.schemas.alerts import AlertCheck, AlertsPage
from rankscope.service.schemas.common import Envelope
from rankscope.service.store.db import Principal

router = APIRouter(tags=["alerts and retention"], responses=ERRORS)


def _user(principal: Principal, user_id: str | None) -> str:
    return acting_user(principal, user_id, "read or change another user's settings")


@router.get("/api/alerts", response_model=Envelope[AlertsPage], summary="Alerts, newest first")
def list_alerts(
    principal: CurrentPrincipal,
    state: State,
    start_date: StartDateQuery = None,
    end_date: EndDateQuery = None,
    status: Annotated[
        Literal["pending", "delivered", "failed", "none"] | None,
        Query(description="webhook delivery status"),
    ] = None,
    user_id: OtherUserQuery = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> Envelope[AlertsPage]:
    start, end = date_range(start_date, end_date)
    if user_id is not None:
        _user(principal, user_id)
    rows = state.stores.alerts.page(
        principal,
        start=start,
        end=end,
        user_id=user_id,
        status=status,
        limit=limit,
        offset=offset,
    )
    return Envelope(
        data=AlertsPage(limit=limit, offset=offset, alerts=[public_alert(r) for r in rows])
    )


@router.post(
    "/api/alerts/check",
    response_model=Envelope[AlertCheck],
    summary="Service role: evaluate the alert rules now and deliver what fires",
)
async def check(principal: CurrentPrincipal, state: State) -> Envelope[AlertCheck]:
    if not principal.is_service:
        raise forbidden("only the service role may run the alert check")
    result = await run_in_threadpool(check_alerts, state.stores, state.settings)
    return Envelope(
        data=AlertCheck(
            checked_at=result.checked_at,
            groups=result.groups,
            fired=[public_alert(a) for a in result.fired],
        )
    )
