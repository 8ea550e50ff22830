"""Experiments over stored rows, as the routes and commands share them: A/B comparison of two
arms' records, and interleaving experiments over stored impressions and clicks."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from rankscope.errors import InputError
from rankscope.online.ab import compare_arms, compare_arms_paired
from rankscope.online.clicks import Model
from rankscope.online.interleaving import impression_credits, slot_teams, summarise
from rankscope.online.queries import normalise_query
from rankscope.service.analysis.clicks import click_qrels, event_filters_of, scored_with
from rankscope.service.errors import unprocessable
from rankscope.service.schemas.common import from_value
from rankscope.service.schemas.experiments import (
    ArmsComparison,
    CiPublic,
    InterleavingPublic,
    MeasureDifference,
)
from rankscope.service.settings import ServiceSettings
from rankscope.service.store import Stores
from rankscope.service.store.db import Principal
from rankscope.service.store.events import EventFilters
from rankscope.service.store.records import Filters
from rankscope.service.stored_measures import MEASURE_API_NAMES, MEASURE_COLUMNS, STORED_MEASURES
from rankscope.stats import Interval

#: a stored measure's column -> its API name
_API_NAMES = {m.column: m.api_name for m in STORED_MEASURES}
Judgments = Literal["auto", "judged", "heuristic", "clicks"]


def columns_of(names: str | None) -> list[str]:
    """API measure names (comma separated; default all six) -> stored column names."""
    if not names:
        return list(MEASURE_COLUMNS)
    out = []
    for name in (n.strip() for n in names.split(",") if n.strip()):
        if name not in MEASURE_API_NAMES:
            hint = f"use {', '.join(MEASURE_API_NAMES)}"
            raise InputError(f"unknown measure {name!r}", hint=hint)
        out.append(MEASURE_API_NAMES[name])
    return out


def _ci(interval: Interval | None) -> CiPublic | None:
    if interval is None:
        return None
    return from_value(CiPublic, interval)


def compare_records(
    stores: Stores,
    principal: Principal,
    filters: Filters,
    settings: ServiceSettings,
    *,
    arms: tuple[str, str],
    paired: bool = False,
    judgments: Judgments = "auto",
    click_model: Model | None = None,
    measures: Sequence[str] = MEASURE_COLUMNS,
    alpha: float = 0.05,
    min_sample: int | None = None,
    seed: int = 0,
) -> ArmsComparison:
    """Compare two arms' records on each measure (see :mod:`rankscope.online.ab`); judged and
    heuristic rows are never mixed, and clicks re-judge every record by its click grades."""
    selection = dataclasses.replace(filters, arm=None)
    columns = ["id", "query", "arm", "judgment_source", "ranked_list", "cutoff", *MEASURE_COLUMNS]
    rows = [
        r for r in stores.records.metric_rows(principal, selection, columns) if r["arm"] in arms
    ]
    values: list[tuple[Mapping[str, Any], Mapping[str, float]]]
    if judgments == "clicks":
        graded = click_qrels(
            stores, principal, event_filters_of(selection), settings, model=click_model
        )
        source = graded.source
        values = [(row, dataclasses.asdict(m)) for row, m in scored_with(rows, graded.by_query)]
    else:
        kind = judgments
        if kind == "auto":
            kind = (
                "judged"
                if any(r["judgment_source"] != "heuristic" for r in rows)
                else ("heuristic")
            )
        source = kind
        values = [
            (r, r) for r in rows if (r["judgment_source"] == "heuristic") == (kind == "heuristic")
        ]
    counts = {arm: sum(1 for r, _ in values if r["arm"] == arm) for arm in arms}
    floor = min_sample if min_sample is not None else settings.min_sample
    if paired:
        by_query: dict[str, tuple[dict[str, list[float]], dict[str, list[float]]]] = {
            m: ({}, {}) for m in measures
        }
        for row, v in values:
            side = 0 if row["arm"] == arms[0] else 1
            key = normalise_query(row["query"])
            for m in measures:
                by_query[m][side].setdefault(key, []).append(float(v[m]))
        result = compare_arms_paired(by_query, names=arms, alpha=alpha, min_sample=floor)
    else:
        flat = {
            m: (
                [float(v[m]) for r, v in values if r["arm"] == arms[0]],
                [float(v[m]) for r, v in values if r["arm"] == arms[1]],
            )
            for m in measures
        }
        result = compare_arms(flat, names=arms, alpha=alpha, min_sample=floor, seed=seed)
    return ArmsComparison(
        arms=list(arms),
        paired=paired,
        judgment_source=source,
        alpha=alpha,
        min_sample=floor,
        correction=result.correction,
        records=counts,
        measures=[
            from_value(
                MeasureDifference,
                d,
                measure=_API_NAMES[d.measure],
                ci=_ci(d.interval),
                bootstrap_ci=_ci(d.bootstrap),
            )
            for d in result.measures
        ],
    )


def interleaving_summary(
    stores: Stores,
    principal: Principal,
    filters: EventFilters,
    settings: ServiceSettings,
    *,
    experiment: str,
    arms: str | None = None,
    alpha: float = 0.05,
    min_impressions: int | None = None,
) -> InterleavingPublic:
    """An interleaving experiment's impressions (of the selection) and their clicks (any time):
    wins, losses and ties of the two teams (``arms`` "a,b", default the two named, in name
    order) and a sign test (:mod:`rankscope.online.interleaving`)."""
    chosen = dataclasses.replace(filters, experiment=experiment)
    shown = stores.events.rows(principal, chosen, ["impression"])
    teams = slot_teams((r["query_id"], r["document_id"], r["team"]) for r in shown)
    names = {r["team"] for r in shown if r["team"] is not None}
    floor = min_impressions or settings.interleaving_min_impressions
    pair = _arms(arms, names)
    if pair is None:  # fewer than two teams shown: nothing to compare yet
        s = summarise((), impressions=len(teams), alpha=alpha, min_impressions=floor)
        return from_value(InterleavingPublic, s, experiment=experiment, arms=sorted(names))
    clicks = stores.events.rows(
        principal, EventFilters(user_id=filters.user_id), ["click"], query_ids=list(teams)
    )
    credits = impression_credits(teams, ((r["query_id"], r["document_id"]) for r in clicks), pair)
    s = summarise(credits, names=pair, alpha=alpha, min_impressions=floor)
    return from_value(InterleavingPublic, s, experiment=experiment, arms=list(pair))


def _arms(given: str | None, seen: set[str]) -> tuple[str, str] | None:
    if given is not None:
        parts = [p.strip() for p in given.split(",") if p.strip()]
        if len(parts) != 2 or parts[0] == parts[1]:
            raise unprocessable(
                "arms takes two different names: arms=a,b",
                [{"path": "query.arms", "message": "two names", "type": "value_error"}],
            )
        return parts[0], parts[1]
    if len(seen) > 2:
        raise unprocessable(
            f"the experiment's impressions name {len(seen)} teams ({', '.join(sorted(seen))}); "
            "an interleaving compares two: choose them with arms=a,b",
            [{"path": "query.arms", "message": "more than two teams", "type": "value_error"}],
        )
    if len(seen) < 2:
        return None
    first, second = sorted(seen)
    return first, second


__all__ = [
    "columns_of",
    "compare_records",
    "interleaving_summary",
]
