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


def test_the_events_summary_reads_its_counts_by_name() -> None:
    import datetime as dt
    import json
    from types import SimpleNamespace

    from rankscope.service.analysis.summaries import events_summary
    from rankscope.service.store.events import EventCounts, EventFilters

    first = dt.datetime(2024, 5, 1, 10, tzinfo=dt.UTC)
    counts = EventCounts(
        searches=4, impressions=7, clicks=3, sessions_with_impressions=3, sessions_clicked=2,
        click_position_sum=5.0, clicks_with_position=3, searches_with_count=4,
        zero_result_searches=1, thumbs_up=2, thumbs_down=1, cited=1, dwell_sum=60.0,
        dwell_count=2, other_actions={"add_to_cart": 1}, experiments={"e1": 2}, first=first,
        last=first + dt.timedelta(days=1),
    )  # fmt: skip
    stores = SimpleNamespace(events=SimpleNamespace(counts=lambda principal, filters: counts))
    body = events_summary(stores, None, EventFilters())  # type: ignore[arg-type]
    data = json.loads(body.model_dump_json(by_alias=True))
    rates = {k: data.pop(k) for k in ("clickThroughRate", "queryClickRate", "zeroResultRate")}
    assert {k: (r["numerator"], r["denominator"]) for k, r in rates.items()} == {
        "clickThroughRate": (3, 7), "queryClickRate": (2, 3), "zeroResultRate": (1, 4),
    }  # fmt: skip
    assert json.dumps(data) == (
        '{"searches": 4, "impressions": 7, "clicks": 3, "meanClickPosition": 1.6666666666666667, '
        '"clicksWithPosition": 3, "thumbsUp": 2, "thumbsDown": 1, "cited": 1, '
        '"meanDwellSeconds": 30.0, "otherActions": {"add_to_cart": 1}, "experiments": {"e1": 2}, '
        '"dateRange": {"start": "2024-05-01T10:00:00Z", "end": "2024-05-02T10:00:00Z"}}'
    )


def test_an_interleaving_with_fewer_than_two_teams_has_nothing_to_compare() -> None:
    from types import SimpleNamespace

    from rankscope.service.analysis.experiments import interleaving_summary
    from rankscope.service.store.events import EventFilters

    shown = [
        {"query_id": "i1", "document_id": "d1", "team": "bm25"},
        {"query_id": "i1", "document_id": "d2", "team": None},
        {"query_id": "i2", "document_id": "d1", "team": "bm25"},
    ]
    stores = SimpleNamespace(events=SimpleNamespace(rows=lambda principal, filters, actions: shown))
    body = interleaving_summary(
        stores,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        EventFilters(),
        SimpleNamespace(interleaving_min_impressions=20),  # type: ignore[arg-type]
        experiment="x",
        alpha=0.1,
    )
    assert body.model_dump_json(by_alias=True) == (
        '{"experiment":"x","arms":["bm25"],"impressions":2,"clicked":0,"wins":0,"losses":0,'
        '"ties":0,"preference":0.0,"pValue":null,"alpha":0.1,"minImpressions":20,'
        '"verdict":"insufficient_data","winner":null}'
    )
