"""``GET /api/metrics/retrieval/compare``: two arms, each measure's difference with its
interval and test, and no winner below the minimum sample."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from rankscope.service.analysis.experiments import compare_records, measure_columns
from rankscope.service.api.deps import CurrentPrincipal, RowFilters, State
from rankscope.service.api.routes.records import ERRORS
from rankscope.service.errors import unprocessable
from rankscope.service.schemas.events import ArmsComparison
from rankscope.service.schemas.records import Envelope

router = APIRouter(prefix="/api/metrics/retrieval", tags=["retrieval metrics"], responses=ERRORS)


@router.get(
    "/compare",
    response_model=Envelope[ArmsComparison],
    summary="A/B: the difference of each measure between two arms, with CI and a test",
)
def compare(
    principal: CurrentPrincipal,
    state: State,
    filters: RowFilters,
    arms: Annotated[str, Query(max_length=600, description="the two arms: arms=a,b")],
    paired: Annotated[
        bool, Query(description="pair over the queries seen in both arms (default: unpaired)")
    ] = False,
    judgments: Annotated[
        Literal["auto", "judged", "heuristic", "clicks"],
        Query(
            description="rows judged or heuristic (never mixed; auto: judged when any), or "
            "every record re-judged by click grades"
        ),
    ] = "auto",
    click_model: Annotated[Literal["ctr", "coec", "dbn"] | None, Query(alias="clickModel")] = None,
    measures: Annotated[
        str | None,
        Query(
            max_length=300,
            description="comma-separated: precision, recall, f1Score, "
            "meanReciprocalRank, averagePrecision, ndcg (default: all)",
        ),
    ] = None,
    alpha: Annotated[float, Query(gt=0, lt=1)] = 0.05,
    min_sample: Annotated[int | None, Query(alias="minSample", ge=2, le=1_000_000)] = None,
    seed: Annotated[int, Query(ge=0, le=2**32 - 1)] = 0,
) -> Envelope[ArmsComparison]:
    names = [a.strip() for a in arms.split(",") if a.strip()]
    if len(names) != 2 or names[0] == names[1]:
        raise unprocessable(
            "arms takes two different arm names: arms=a,b",
            [{"path": "query.arms", "message": "two names", "type": "value_error"}],
        )
    if filters.arm is not None:
        raise unprocessable(
            "compare takes its arms from arms=a,b; leave out the arm filter",
            [{"path": "query.arm", "message": "not with compare", "type": "value_error"}],
        )
    return Envelope(
        data=compare_records(
            state.online,
            principal,
            filters,
            state.settings,
            arms=(names[0], names[1]),
            paired=paired,
            judgments=judgments,
            click_model=click_model,
            measures=measure_columns(measures),
            alpha=alpha,
            min_sample=min_sample,
            seed=seed,
        )
    )
