"""``/api/metrics/retrieval/thresholds``: the score thresholds of heuristic rows.

The settings give a default and values per search type; each user may set their own (``*`` for
any search type, or a search type label such as ``semantic`` or ``keyword+semantic``). A record
without judgments uses, in order: the user's value for its search type, the user's ``*``, the
settings' value for its search type, the settings' default. Changes apply to records collected
afterwards; stored rows keep the threshold they were scored with (the ``threshold`` column).
"""

from __future__ import annotations

from fastapi import APIRouter

from rankscope.collect.wire import SEARCH_TYPES
from rankscope.service.api.common import ERRORS
from rankscope.service.api.deps import CurrentPrincipal, OtherUserQuery, State, acting_user
from rankscope.service.errors import unprocessable
from rankscope.service.nul import refuse_nul_model
from rankscope.service.schemas.common import Envelope
from rankscope.service.schemas.records import Thresholds, ThresholdsUpdate
from rankscope.service.settings import search_type_key
from rankscope.service.store.db import Principal

router = APIRouter(
    prefix="/api/metrics/retrieval/thresholds", tags=["thresholds"], responses=ERRORS
)


def _user(principal: Principal, user_id: str | None) -> str:
    return acting_user(principal, user_id, "read or set another user's thresholds")


def _label(key: str) -> str:
    if key == "*":
        return key
    parts = key.split("+")
    if not all(p in SEARCH_TYPES for p in parts):
        raise unprocessable(
            f"unknown search type {key!r}",
            [
                {
                    "path": f"body.thresholds.{key}",
                    "type": "value_error",
                    "message": f"use '*', {', '.join(SEARCH_TYPES)} or a combination joined by '+'",
                }
            ],
        )
    return search_type_key(parts)


@router.get("", response_model=Envelope[Thresholds], summary="Thresholds in force")
def get_thresholds(
    principal: CurrentPrincipal, state: State, user_id: OtherUserQuery = None
) -> Envelope[Thresholds]:
    user = _user(principal, user_id)
    s = state.settings
    own = state.stores.settings.own_thresholds(principal, user)
    return Envelope(
        data=Thresholds(default=s.default_threshold, by_search_type=dict(s.thresholds), own=own)
    )


@router.put("", response_model=Envelope[Thresholds], summary="Set or remove own thresholds")
def put_thresholds(
    body: ThresholdsUpdate,
    principal: CurrentPrincipal,
    state: State,
    user_id: OtherUserQuery = None,
) -> Envelope[Thresholds]:
    user = _user(principal, user_id)
    refuse_nul_model(body)
    values = {_label(k): v for k, v in body.thresholds.items()}
    own = state.stores.settings.set_thresholds(principal, user, values)
    s = state.settings
    return Envelope(
        data=Thresholds(default=s.default_threshold, by_search_type=dict(s.thresholds), own=own)
    )
