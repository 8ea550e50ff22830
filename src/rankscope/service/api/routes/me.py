"""``GET /api/me``: who a token acts as (the dashboard shows the service role a user picker)."""

from __future__ import annotations

from fastapi import APIRouter

from rankscope.service.api.deps import CurrentPrincipal
from rankscope.service.schemas.common import Envelope, ErrorEnvelope, Me

router = APIRouter(
    prefix="/api",
    tags=["session"],
    responses={401: {"model": ErrorEnvelope, "description": "missing or invalid token"}},
)


@router.get("/me", response_model=Envelope[Me], summary="The user and role of this token")
def me(principal: CurrentPrincipal) -> Envelope[Me]:
    return Envelope(data=Me(user_id=principal.user_id, role=principal.role))
