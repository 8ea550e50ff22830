"""One table of stored measures (rankscope.service.stored_measures): the store's columns, the
API's names, the sort choices, the summary's fields, the alert rules' measures and what the
write path computes all follow it."""

from __future__ import annotations

import dataclasses
import typing

import pytest
from sqlalchemy import Float, Integer

from rankscope.metrics.names import parse_measure
from rankscope.service.api.routes.records import SORT_CHOICES, SortChoice
from rankscope.service.ingest import measures
from rankscope.service.schemas.records import Averages, GroupStats, MetricPublic
from rankscope.service.settings import AlertRule
from rankscope.service.store.models import metrics_table
from rankscope.service.stored_measures import (
    MEASURE_API_NAMES,
    MEASURE_COLUMNS,
    STORED_COUNTS,
    STORED_MEASURES,
    VALUE_COLUMNS,
)

pytestmark = pytest.mark.service


def test_the_table_names_six_measures_and_three_counts() -> None:
    assert MEASURE_COLUMNS == (
        "precision",
        "recall",
        "f1_score",
        "mean_reciprocal_rank",
        "average_precision",
        "ndcg",
    )
    assert list(MEASURE_API_NAMES) == [
        "precision",
        "recall",
        "f1Score",
        "meanReciprocalRank",
        "averagePrecision",
        "ndcg",
    ]
    assert (
        "total_retrieved",
        "total_relevant",
        "relevant_retrieved",
        *MEASURE_COLUMNS,
    ) == VALUE_COLUMNS
    # trec_eval's name of each is the same measure (rankscope eval -m on an export)
    for m in (*STORED_MEASURES, *STORED_COUNTS):
        assert parse_measure(m.trec_eval) == m.measure, m
    assert measures.TREC_EVAL_MEASURES == (
        "set_P",
        "set_recall",
        "set_F",
        "recip_rank",
        "map",
        "ndcg",
    )


def test_the_stored_columns_are_the_tables() -> None:
    columns = {c.name: c for c in metrics_table.columns}
    for m in STORED_COUNTS:
        assert isinstance(columns[m.column].type, Integer), m.column
    for m in STORED_MEASURES:
        assert isinstance(columns[m.column].type, Float), m.column


def test_what_the_write_path_computes_is_the_tables() -> None:
    assert tuple(f.name for f in dataclasses.fields(measures.QueryMeasures)) == VALUE_COLUMNS
    assert tuple(m.measure for m in (*STORED_MEASURES, *STORED_COUNTS)) == measures.MEASURES
    item = measures.Evaluable("q", ("a", "b", "c"), {"a": 0, "b": 1, "c": 0, "d": 1})
    (values,) = measures.score([item])
    assert dataclasses.asdict(values) == {
        "total_retrieved": 3,
        "total_relevant": 2,
        "relevant_retrieved": 1,
        "precision": pytest.approx(1 / 3, abs=1e-12),
        "recall": 0.5,
        "f1_score": pytest.approx(0.4, abs=1e-12),
        "mean_reciprocal_rank": 0.5,
        "average_precision": 0.25,
        "ndcg": pytest.approx((1 / 1.584962500721156) / (1 + 1 / 1.584962500721156), abs=1e-12),
    }


def test_the_bodies_sort_choices_and_alert_rules_are_the_tables() -> None:
    stats = [f for f in GroupStats.model_fields if f not in ("count", "zero_results")]
    assert tuple(stats) == MEASURE_COLUMNS
    assert set(VALUE_COLUMNS) <= set(MetricPublic.model_fields)
    averages = [f for f in Averages.model_fields if f != "total_queries"]
    assert averages == [m.summary_field for m in STORED_MEASURES]
    assert typing.get_args(SortChoice) == SORT_CHOICES
    assert SORT_CHOICES[:6] == tuple(MEASURE_API_NAMES) and SORT_CHOICES[6] == "-precision"
    rule = AlertRule.model_fields["measure"].annotation
    assert typing.get_args(rule) == MEASURE_COLUMNS
