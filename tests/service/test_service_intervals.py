"""The summaries' intervals (analysis/intervals.py over the store's aggregates), pinned to
``scipy.stats.t.interval`` on the values themselves, on SQLite and on PostgreSQL."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator

import pytest
from scipy import stats

from serve_helpers import METRICS, PgDatabase, Service, bearer, doc, make_keys, record

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from rankscope.service.analysis.intervals import mean_interval
from rankscope.service.app import create_app


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, service: Service) -> Iterator[Service]:
    if request.param == "sqlite":
        yield service
        return
    pg: PgDatabase = request.getfixturevalue("pg_database")
    keys = make_keys(pg.admin_dsn)
    settings = pg.settings()
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield Service(client, keys, settings)


def _collect(service: Service, relevant: int, retrieved: int, topic: str) -> None:
    """One judged record whose precision is relevant / retrieved."""
    docs = [doc(f"d{i}", 1.0 - i / 100) for i in range(retrieved)]
    body = record(
        docs=docs,
        relevantDocumentIds=[f"d{i}" for i in range(relevant)],
        options={"topicId": topic},
    )
    r = service.client.post(f"{METRICS}/collect", json=body, headers=bearer(service.keys.alice))
    assert r.status_code == 201, r.text


def _scipy(values: list[float]) -> tuple[float, float]:
    n = len(values)
    scale = statistics.stdev(values) / math.sqrt(n)
    low, high = stats.t.interval(0.95, n - 1, loc=statistics.fmean(values), scale=scale)
    return max(0.0, float(low)), min(1.0, float(high))


def test_summary_interval_is_scipys_t_interval(backend: Service) -> None:
    # precisions 0, 1/4, 2/4, ...: a sample variance (n - 1), not the population's (n)
    counts = [0, 1, 2, 2, 3, 1, 4, 2]
    for relevant in counts:
        _collect(backend, relevant, 4, "mixed")
    values = [c / 4 for c in counts]
    summary = backend.client.get(f"{METRICS}/summary", headers=bearer(backend.keys.alice)).json()[
        "data"
    ]
    precision = summary["byJudgmentSource"]["judged"]["precision"]
    low, high = _scipy(values)
    assert precision["mean"] == pytest.approx(statistics.fmean(values), rel=1e-12)
    assert precision["low"] == pytest.approx(low, rel=1e-12)
    assert precision["high"] == pytest.approx(high, rel=1e-12)
    # the population variance gives a narrower interval, which this tolerance tells apart
    population = math.sqrt(statistics.pvariance(values) / len(values))
    assert precision["high"] - precision["low"] > 2 * 2.36 * population


def test_equal_values_give_a_zero_width_interval(backend: Service) -> None:
    # seven records of precision 1/3: E[x^2] - E[x]^2 is 2.8e-17 here, not 0 (cancellation),
    # which made an interval of width ~1e-8 around a constant
    for _ in range(7):
        _collect(backend, 1, 3, "constant")
    groups = backend.client.get(
        f"{METRICS}/breakdown?by=topic", headers=bearer(backend.keys.alice)
    ).json()["data"]
    (group,) = [g for g in groups["groups"] if g["key"] == "constant"]
    assert group["judgmentSource"] == "judged" and group["stats"]["count"] == 7
    precision = group["stats"]["precision"]
    assert precision["mean"] == pytest.approx(1 / 3, abs=1e-15)
    assert precision["low"] == pytest.approx(precision["mean"], abs=1e-15)
    assert precision["high"] == pytest.approx(precision["mean"], abs=1e-15)


@pytest.mark.parametrize(
    "values",
    [[0.1, 0.2, 0.3], [0.0, 1.0], [0.5, 0.52, 0.49, 0.51, 0.5, 0.55], [0.9] * 4 + [1.0]],
)
def test_mean_interval_is_scipys(values: list[float]) -> None:
    got = mean_interval(len(values), statistics.fmean(values), statistics.variance(values))
    low, high = _scipy(values)
    assert got.low == pytest.approx(low, rel=1e-12, abs=1e-15)
    assert got.high == pytest.approx(high, rel=1e-12, abs=1e-15)


def test_mean_interval_of_one_value_has_no_bounds() -> None:
    got = mean_interval(1, 0.4, 0.0)
    assert (got.mean, got.low, got.high) == (0.4, None, None)
