"""Regression alerts: evaluate the settings' alert rules over stored records, store what
fires (once per rule, scope and day), deliver it by webhook.

For each rule, per user (and per topic or search type with ``by``), over records of one
judgment kind (judged or heuristic, never mixed):

- ``method = "window"``: the last ``window_days`` against the ``baseline_days`` before them,
  by :func:`rankscope.online.alerts.window_change` (paired over the normalised queries seen in
  both windows when at least ``min_n`` are, else Welch); it fires when ``delta <= -min_delta``
  and the whole 95% interval lies below 0, with at least ``min_n`` values.
- ``method = "ewma"``: daily means (UTC days counted back from the check time) of the baseline
  and window; :func:`rankscope.online.alerts.ewma_chart` fires when the last day's EWMA falls
  below the lower control limit and the window holds at least ``min_n`` values.

An alert's ``dedup_key`` is ``rule|scope|value|day of the check``: checking again the same day
adds nothing. New alerts (and older ones still ``pending``) are POSTed to the rule's
``webhook_url`` or the ``alert_webhook_url`` setting as ``{"text": message, "alert": {...}}``
(:mod:`rankscope.service.analysis.webhooks`); without a URL their status is ``none``.
"""

from __future__ import annotations

import datetime as dt
import math
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankscope.online.alerts import ewma_chart, window_change
from rankscope.online.queries import normalise_query
from rankscope.service.analysis.webhooks import deliver
from rankscope.service.schemas.alerts import AlertPublic
from rankscope.service.settings import AlertRule, ServiceSettings
from rankscope.service.store import Stores
from rankscope.service.store.db import Principal
from rankscope.service.store.records import Filters

CHECKER = Principal("rankscope-alerts", "service")
DAY = dt.timedelta(days=1)


@dataclass
class CheckResult:
    checked_at: dt.datetime
    groups: int = 0
    fired: list[dict[str, Any]] = field(default_factory=list)


def _scope_value(rule: AlertRule, row: dict[str, Any]) -> str | None:
    if rule.by == "topic":
        return row["topic_id"]  # type: ignore[no-any-return]
    if rule.by == "searchType":
        return row["search_type"]  # type: ignore[no-any-return]
    return None


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def evaluate_rule(
    stores: Stores, rule: AlertRule, now: dt.datetime
) -> tuple[int, list[dict[str, Any]]]:
    """The groups evaluated and the alert rows (not yet stored) of one rule."""
    window_start = now - dt.timedelta(days=rule.window_days)
    baseline_start = window_start - dt.timedelta(days=rule.baseline_days)
    columns = [
        "user_id",
        "query",
        "topic_id",
        "search_type",
        "timestamp",
        "judgment_source",
        rule.measure,
    ]
    rows = stores.records.metric_rows(CHECKER, Filters(start=baseline_start, end=now), columns)
    heuristic = rule.judgments == "heuristic"
    groups: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for row in rows:
        if (row["judgment_source"] == "heuristic") != heuristic or row["timestamp"] >= now:
            continue
        groups.setdefault((row["user_id"], _scope_value(rule, row)), []).append(row)
    out = []
    for (user, value), members in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        current = [r for r in members if r["timestamp"] >= window_start]
        baseline = [r for r in members if r["timestamp"] < window_start]
        alert = _check(rule, current, baseline, now, window_start, baseline_start)
        if alert is None:
            continue
        alert.update(
            user_id=user,
            scope=rule.by,
            scope_value=value,
            dedup_key=f"{rule.name}|{rule.by}|{value or ''}|{now.date().isoformat()}",
        )
        out.append(alert)
    return len(groups), out


def _check(
    rule: AlertRule,
    current: list[dict[str, Any]],
    baseline: list[dict[str, Any]],
    now: dt.datetime,
    window_start: dt.datetime,
    baseline_start: dt.datetime,
) -> dict[str, Any] | None:
    m = rule.measure
    cur = [float(r[m]) for r in current]
    base = [float(r[m]) for r in baseline]
    common: dict[str, Any] = {
        "id": uuid.uuid4(),
        "rule": rule.name,
        "measure": m,
        "judgment_source": rule.judgments,
        "window_start": window_start,
        "window_end": now,
        "baseline_start": baseline_start,
        "baseline_end": window_start,
        "n_current": len(cur),
        "n_baseline": len(base),
    }
    if rule.method == "window":
        by_cur: dict[str, list[float]] = {}
        by_base: dict[str, list[float]] = {}
        for r in current:
            by_cur.setdefault(normalise_query(r["query"]), []).append(float(r[m]))
        for r in baseline:
            by_base.setdefault(normalise_query(r["query"]), []).append(float(r[m]))
        change = window_change(
            cur,
            base,
            current_by_query=by_cur,
            baseline_by_query=by_base,
            min_n=rule.min_n,
            min_delta=rule.min_delta,
        )
        if not change.regression:
            return None
        assert change.interval is not None
        return {
            **common,
            "method": change.method,
            "current_mean": change.current_mean,
            "baseline_mean": change.baseline_mean,
            "delta": change.delta,
            "ci_low": change.interval.low,
            "ci_high": change.interval.high,
            "effect_size": _finite(change.effect_size),
            "p_value": change.p_value,
            "paired_queries": change.paired_queries,
            "message": f"{rule.name}: {m} fell from {change.baseline_mean:.4f} to "
            f"{change.current_mean:.4f} ({change.reason}; n = {len(cur)} vs {len(base)})",
        }
    if len(cur) < rule.min_n:
        return None
    baseline_days = math.ceil(rule.baseline_days)
    window_days = math.ceil(rule.window_days)
    start = now - dt.timedelta(days=baseline_days + window_days)
    days: dict[int, list[float]] = {}
    for r in (*baseline, *current):
        days.setdefault(int((r["timestamp"] - start) / DAY), []).append(float(r[m]))
    base_means = [float(np.mean(days[d])) for d in sorted(days) if d < baseline_days]
    watch_means = [float(np.mean(days[d])) for d in sorted(days) if d >= baseline_days]
    chart = ewma_chart(
        base_means + watch_means, len(base_means), lam=rule.ewma_lambda, width=rule.ewma_width
    )
    if chart is None or not chart.signal:
        return None
    return {
        **common,
        "method": "ewma",
        "current_mean": float(np.mean(cur)),
        "baseline_mean": chart.target,
        "delta": chart.values[-1] - chart.target,
        "ci_low": None,
        "ci_high": None,
        "effect_size": None,
        "p_value": None,
        "paired_queries": 0,
        "message": f"{rule.name}: the EWMA of daily {m} ({chart.values[-1]:.4f}) is below its "
        f"lower control limit {chart.limits[-1]:.4f} (target {chart.target:.4f}, sigma "
        f"{chart.sigma:.4f}, lambda {chart.lam:g}, L {chart.width:g}; n = {len(cur)})",
    }


def public_alert(row: dict[str, Any]) -> AlertPublic:
    return AlertPublic.model_validate({k: row[k] for k in AlertPublic.model_fields})


def check_alerts(
    stores: Stores,
    settings: ServiceSettings,
    now: dt.datetime | None = None,
    *,
    sleep: Callable[[float], None] | None = None,
) -> CheckResult:
    """Evaluate every rule, store the new alerts, deliver them (and earlier pending ones)."""
    now = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    result = CheckResult(checked_at=now)
    urls: dict[uuid.UUID, str] = {}
    for rule in settings.alert_rules:
        groups, alerts = evaluate_rule(stores, rule, now)
        result.groups += groups
        url = rule.webhook_url or settings.alert_webhook_url
        for alert in alerts:
            alert.update(
                delivery_status="pending" if url else "none",
                delivery_attempts=0,
                delivered_at=None,
                last_error=None,
                created_at=now,
            )
            if stores.alerts.insert(CHECKER, alert):
                result.fired.append(alert)
                if url:
                    urls[alert["id"]] = url
    pending = stores.alerts.page(
        CHECKER, start=None, end=None, user_id=None, status="pending", limit=1000, offset=0
    )
    rules = {r.name: r for r in settings.alert_rules}
    for row in pending:
        known = rules.get(row["rule"])
        url = urls.get(row["id"]) or (known.webhook_url if known else None)
        url = url or settings.alert_webhook_url
        if not url:
            continue
        public = public_alert(row)
        outcome = deliver(
            url,
            {"text": public.message, "alert": public.model_dump(mode="json", by_alias=True)},
            attempts=settings.webhook_max_attempts,
            backoff=settings.webhook_backoff_seconds,
            timeout=settings.webhook_timeout_seconds,
            sleep=sleep or time.sleep,
        )
        attempts = row["delivery_attempts"] + outcome.attempts
        status = "delivered" if outcome.delivered else "failed"
        delivered_at = dt.datetime.now(dt.UTC) if outcome.delivered else None
        stores.alerts.set_delivery(
            CHECKER,
            row["id"],
            status=status,
            attempts=attempts,
            delivered_at=delivered_at,
            error=outcome.error,
        )
        for fired in result.fired:
            if fired["id"] == row["id"]:
                fired.update(
                    delivery_status=status,
                    delivery_attempts=attempts,
                    delivered_at=delivered_at,
                    last_error=outcome.error,
                )
    return result


__all__ = ["CHECKER", "CheckResult", "check_alerts", "evaluate_rule", "public_alert"]
