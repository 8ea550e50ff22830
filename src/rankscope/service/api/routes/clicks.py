"""``/api/judgments``: implicit judgments from clicks, and the calibration of the score
threshold against them."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from rankscope.online.queries import query_key
from rankscope.service.analysis.calibration import calibrate, click_labels
from rankscope.service.analysis.clicks import click_qrels
from rankscope.service.api.common import ERRORS, MinImpressions, Offset, PageSize
from rankscope.service.api.deps import CurrentPrincipal, EventRowFilters, RowFilters, State
from rankscope.service.schemas.common import Envelope, from_value
from rankscope.service.schemas.events import ClickJudgmentPublic, ClickJudgmentsPublic, Thresholds3
from rankscope.service.schemas.experiments import CalibrationPublic

router = APIRouter(prefix="/api/judgments", tags=["implicit judgments"], responses=ERRORS)

ClickModel = Annotated[
    Literal["ctr", "coec", "dbn"] | None,
    Query(description="ctr, coec or dbn (default: the click_model setting, dbn)"),
]


@router.get(
    "/clicks",
    response_model=Envelope[ClickJudgmentsPublic],
    summary="Per (normalised query, document): CTR, COEC, DBN and a 0-3 grade",
)
def clicks(
    principal: CurrentPrincipal,
    state: State,
    filters: EventRowFilters,
    model: ClickModel = None,
    min_impressions: MinImpressions = None,
    graded_only: Annotated[bool, Query(alias="gradedOnly")] = False,
    limit: PageSize = 100,
    offset: Offset = 0,
) -> Envelope[ClickJudgmentsPublic]:
    graded = click_qrels(
        state.stores,
        principal,
        filters,
        state.settings,
        model=model,
        min_impressions=min_impressions,
    )
    j = graded.judgments
    items = [x for x in j.judgments if x.grade is not None or not graded_only]
    return Envelope(
        data=ClickJudgmentsPublic(
            model=j.model,
            judgment_source=graded.source,
            thresholds=from_value(Thresholds3, j.thresholds),
            min_impressions=j.min_impressions,
            position_prior=j.prior.ctr.tolist(),
            sessions=len(graded.sessions.log.sessions),
            pairs=len(j.judgments),
            graded=len(j.graded()),
            judgments=[
                from_value(ClickJudgmentPublic, x, query_key=query_key(x.query), document_id=x.doc)
                for x in items[offset : offset + limit]
            ],
        )
    )


@router.get(
    "/calibration",
    response_model=Envelope[CalibrationPublic],
    summary="Agreement (Cohen's kappa) of the score threshold with click grades, and the best",
)
def calibration(
    principal: CurrentPrincipal,
    state: State,
    filters: RowFilters,
    by: Literal["searchType", "arm"] = "searchType",
    model: ClickModel = None,
    min_grade: Annotated[int, Query(alias="minGrade", ge=1, le=3)] = 1,
) -> Envelope[CalibrationPublic]:
    labels, name = click_labels(state.stores, principal, filters, state.settings, model)
    return Envelope(
        data=calibrate(
            state.stores,
            principal,
            filters,
            state.settings,
            labels,
            name,
            by=by,
            min_grade=min_grade,
        )
    )
