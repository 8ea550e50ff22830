"""Response bodies built from domain values (service.schemas.common.from_value)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

pytest.importorskip("fastapi", reason="the service needs: pip install 'rankscope[serve]'")

from rankscope.online.clicks import ClickJudgment
from rankscope.service.schemas.common import from_value
from rankscope.service.schemas.events import ClickJudgmentPublic
from rankscope.service.schemas.experiments import CiPublic
from rankscope.stats import Interval


def test_every_field_is_read_from_the_value_by_name() -> None:
    j = ClickJudgment(
        query="q", doc="d", impressions=10, clicks=3, ctr=0.3, mean_position=1.5,
        expected_clicks=2.0, coec=1.5, examined=8, satisfied=2, attractiveness=0.4,
        satisfaction=0.5, dbn=0.2, thumbs_up=1, thumbs_down=0, cited=2, model="dbn", grade=2,
    )  # fmt: skip
    body = from_value(ClickJudgmentPublic, j, query_key="q0123", document_id=j.doc)
    assert body.model_dump(by_alias=True) == {
        "queryKey": "q0123", "query": "q", "documentId": "d", "impressions": 10, "clicks": 3,
        "ctr": 0.3, "meanPosition": 1.5, "expectedClicks": 2.0, "coec": 1.5, "examined": 8,
        "satisfied": 2, "attractiveness": 0.4, "satisfaction": 0.5, "dbn": 0.2, "thumbsUp": 1,
        "thumbsDown": 0, "cited": 2, "grade": 2,
    }  # fmt: skip
    interval = Interval(low=0.1, high=0.3, level=0.95, method="t")
    assert from_value(CiPublic, interval) == CiPublic(low=0.1, high=0.3, level=0.95, method="t")


def test_a_field_the_value_lacks_is_an_error() -> None:
    with pytest.raises(ValidationError, match="documentId"):
        from_value(ClickJudgmentPublic, object(), query_key="q")
