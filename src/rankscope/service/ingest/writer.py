"""The records' store with the write path: each write's rows are built and scored (one
``evaluate()`` call, with the users' own thresholds) before the write transaction opens, so
SQLite's write lock is held only for the inserts; feedback rescores a stored record."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from rankscope.service.ingest.rows import (
    NewRecord,
    ThresholdLookup,
    build_rows,
    rescore,
    with_user_thresholds,
)
from rankscope.service.store import Stores
from rankscope.service.store.alerts import AlertStore
from rankscope.service.store.db import Principal
from rankscope.service.store.events import EventStore
from rankscope.service.store.records import RecordStore, WriteOutcome
from rankscope.service.store.settings import SettingsStore
from rankscope.service.stored_measures import MEASURE_COLUMNS


@dataclass
class WriteGroup:
    """Records one principal writes (for itself, or for users when it is the service)."""

    principal: Principal
    records: list[NewRecord] = field(default_factory=list)


class MetricsStore(RecordStore):
    """The records' store that scores what it writes. ``thresholds``: the settings' thresholds
    of heuristic rows, under each user's own (read through :attr:`user_settings`, cached for
    ``cache_seconds``)."""

    def __init__(
        self, engine: Engine, thresholds: ThresholdLookup, *, cache_seconds: float = 5.0
    ) -> None:
        super().__init__(engine, MEASURE_COLUMNS)
        self._thresholds = thresholds
        self.user_settings = SettingsStore(self, cache_seconds=cache_seconds)

    def stores(self) -> Stores:
        """Every store over this one's database (its engine, write lock and settings cache)."""
        return Stores(self, EventStore(self), AlertStore(self), self.user_settings)

    def write(
        self, groups: Sequence[WriteGroup], now: dt.datetime | None = None
    ) -> list[list[WriteOutcome]]:
        """Store every group's records in one transaction; duplicates (same user and
        ``collectId``) are not stored again and come back with the stored id. ``now``: the
        rows' creation time and the default timestamp (default: the current time)."""
        if not groups:
            return []
        users = [(g.principal, r.user_id) for g in groups for r in g.records]
        lookup = with_user_thresholds(self.user_settings.thresholds_of(users), self._thresholds)
        built = build_rows([r for g in groups for r in g.records], lookup, now)
        parts = []
        start = 0
        for group in groups:
            parts.append((group.principal, built[start : start + len(group.records)]))
            start += len(group.records)
        return self.insert(parts)

    def feedback(
        self, principal: Principal, record_id: uuid.UUID, judgments: dict[str, int]
    ) -> dict[str, Any] | None:
        """Replace a record's judgments, recompute its measures, mark it ``feedback``."""

        def change(row: dict[str, Any]) -> dict[str, Any]:
            values = rescore(row, judgments)
            values.update(
                judgments=judgments,
                judgment_source="feedback",
                threshold=None,
                updated_at=dt.datetime.now(dt.UTC),
            )
            return values

        return self.modify(principal, record_id, change)

    def own_thresholds(self, principal: Principal, user_id: str) -> dict[str, float]:
        return self.user_settings.own_thresholds(principal, user_id)

    def set_thresholds(
        self, principal: Principal, user_id: str, values: dict[str, float | None]
    ) -> dict[str, float]:
        return self.user_settings.set_thresholds(principal, user_id, values)


__all__ = ["MetricsStore", "WriteGroup"]
