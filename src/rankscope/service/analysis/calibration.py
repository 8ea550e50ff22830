"""Calibration of the heuristic score threshold against labels (click grades, or a qrels file
of query keys): per search type or arm, how the threshold in force agrees with them and which
threshold agrees best (:func:`rankscope.online.calibration.calibrate_threshold`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Literal

from rankscope.online.calibration import calibrate_threshold
from rankscope.online.clicks import Model
from rankscope.online.queries import query_key
from rankscope.service.analysis.clicks import click_qrels, event_filters_of
from rankscope.service.ingest.rows import settings_thresholds, with_user_thresholds
from rankscope.service.schemas.experiments import CalibrationGroup, CalibrationPublic
from rankscope.service.settings import ServiceSettings
from rankscope.service.store import Stores
from rankscope.service.store.db import Principal
from rankscope.service.store.records import Filters


def click_labels(
    stores: Stores,
    principal: Principal,
    filters: Filters,
    settings: ServiceSettings,
    model: Model | None = None,
) -> tuple[dict[str, dict[str, int]], str]:
    """Click grades keyed by query key, and their source name."""
    graded = click_qrels(stores, principal, event_filters_of(filters), settings, model=model)
    return {query_key(q): g for q, g in graded.by_query.items()}, graded.source


def calibrate(
    stores: Stores,
    principal: Principal,
    filters: Filters,
    settings: ServiceSettings,
    labels: Mapping[str, Mapping[str, int]],
    labels_name: str,
    *,
    by: Literal["searchType", "arm"] = "searchType",
    min_grade: int = 1,
) -> CalibrationPublic:
    """Per search type (or arm): how the score threshold agrees with ``labels`` (keyed by
    query key; grade >= ``min_grade`` is relevant) at the threshold in force, and the best."""
    columns = [
        "user_id",
        "query",
        "search_type",
        "arm",
        "ranked_list",
        "threshold",
        "judgment_source",
    ]
    rows = stores.records.metric_rows(principal, filters, columns)
    own = {
        u: stores.settings.own_thresholds(principal, u)
        for u in sorted({r["user_id"] for r in rows})
    }
    lookup = with_user_thresholds(own, settings_thresholds(settings))
    groups: dict[str | None, tuple[list[float], list[bool], Counter[float]]] = {}
    for row in rows:
        grades = labels.get(query_key(row["query"]))
        if not grades:
            continue
        best: dict[str, float] = {}
        for item in row["ranked_list"]:
            doc = item["document_id"]
            best[doc] = max(best.get(doc, item["score"]), item["score"])
        key = row["search_type"] if by == "searchType" else row["arm"]
        scores, truth, currents = groups.setdefault(key, ([], [], Counter()))
        current = row["threshold"]
        if current is None:
            current = lookup(row["user_id"], row["search_type"])
        for doc, score in best.items():
            if doc in grades:
                scores.append(score)
                truth.append(grades[doc] >= min_grade)
                currents[current] += 1
    out = []
    for key in sorted(groups, key=lambda k: (k is None, k or "")):
        scores, truth, currents = groups[key]
        current = currents.most_common(1)[0][0] if currents else None
        c = calibrate_threshold(scores, truth, group=str(key), current=current)
        out.append(
            CalibrationGroup(
                group=key,
                pairs=c.n,
                positives=c.positives,
                current_threshold=c.current_threshold,
                kappa_current=c.kappa_current,
                agreement_current=c.agreement_current,
                best_threshold=c.best_threshold,
                kappa_best=c.kappa_best,
                agreement_best=c.agreement_best,
                applicable=(
                    by == "searchType"
                    and c.best_threshold is not None
                    and 0.0 <= c.best_threshold <= 1.0
                ),
            )
        )
    return CalibrationPublic(labels=labels_name, by=by, min_grade=min_grade, groups=out)


__all__ = ["calibrate", "click_labels"]
