"""``/api/retention``: how many days a user's records, events and alerts are kept."""

from __future__ import annotations

from fastapi import APIRouter

from rankscope.service.api.common import ERRORS
from rankscope.service.api.deps import CurrentPrincipal, OtherUserQuery, State, acting_user
from rankscope.service.schemas.alerts import RetentionPublic, RetentionUpdate
from rankscope.service.schemas.common import Envelope
from rankscope.service.store.db import Principal

router = APIRouter(tags=["alerts and retention"], responses=ERRORS)


def _user(principal: Principal, user_id: str | None) -> str:
    return acting_user(principal, user_id, "read or change another user's settings")


def _retention(state: State, principal: Principal, user: str) -> RetentionPublic:
    own = state.stores.settings.retention(principal, user)
    default = state.settings.retention_days
    return RetentionPublic(
        user_id=user,
        retention_days=own,
        default_retention_days=default,
        effective_retention_days=own or default,
    )


@router.get("/api/retention", response_model=Envelope[RetentionPublic], summary="Retention")
def get_retention(
    principal: CurrentPrincipal, state: State, user_id: OtherUserQuery = None
) -> Envelope[RetentionPublic]:
    return Envelope(data=_retention(state, principal, _user(principal, user_id)))


@router.put(
    "/api/retention",
    response_model=Envelope[RetentionPublic],
    summary="Set (or with null remove) your retention in days",
)
def put_retention(
    body: RetentionUpdate, principal: CurrentPrincipal, state: State, user_id: OtherUserQuery = None
) -> Envelope[RetentionPublic]:
    user = _user(principal, user_id)
    state.stores.settings.set_retention(principal, user, body.retention_days)
    return Envelope(data=_retention(state, principal, user))
