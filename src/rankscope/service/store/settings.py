"""Each user's own settings: score thresholds (``user_thresholds``) and retention
(``user_settings``), and the purge that retention asks for."""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Sequence

from sqlalchemy import and_, delete, func, select

from rankscope.service.store.base import Database, owner_filter
from rankscope.service.store.db import Principal
from rankscope.service.store.models import (
    alerts_table,
    events_table,
    metrics_table,
    thresholds_table,
    user_settings_table,
)

M = metrics_table.c
E = events_table.c
A = alerts_table.c


class SettingsStore:
    """Reads and writes of users' settings. A user's own thresholds are cached for
    ``cache_seconds`` (this process sees its own changes at once; other worker processes
    within ``cache_seconds``)."""

    def __init__(self, db: Database, *, cache_seconds: float = 5.0) -> None:
        self.db = db
        self._cache_seconds = cache_seconds
        self._own_cache: dict[str, tuple[dict[str, float], float]] = {}
        self._cache_lock = threading.Lock()

    # -- thresholds --------------------------------------------------------------------------

    def thresholds_of(self, wanted: Sequence[tuple[Principal, str]]) -> dict[str, dict[str, float]]:
        """The own thresholds of users (cached for ``cache_seconds``), each read as the
        principal it comes with (the principal writing that user's records)."""
        now = time.monotonic()
        own: dict[str, dict[str, float]] = {}
        missing: dict[Principal, set[str]] = {}
        with self._cache_lock:
            for principal, user in wanted:
                hit = self._own_cache.get(user)
                if hit is not None and hit[1] > now:
                    own[user] = hit[0]
                else:
                    missing.setdefault(principal, set()).add(user)
        if not missing:
            return own
        t = thresholds_table
        read: dict[str, dict[str, float]] = {u: {} for users in missing.values() for u in users}
        with self.db.transaction(None) as conn:
            for principal, users in missing.items():
                self.db.act_as(conn, principal)
                for row in conn.execute(select(t).where(t.c.user_id.in_(sorted(users)))):
                    read[row.user_id][row.search_type] = row.threshold
        with self._cache_lock:
            if len(self._own_cache) > 100_000:
                self._own_cache.clear()
            for user, values in read.items():
                self._own_cache[user] = (values, now + self._cache_seconds)
        return {**own, **read}

    def own_thresholds(self, principal: Principal, user_id: str) -> dict[str, float]:
        with self.db.transaction(principal) as conn:
            rows = conn.execute(
                select(thresholds_table.c.search_type, thresholds_table.c.threshold).where(
                    thresholds_table.c.user_id == user_id
                )
            )
            return {r.search_type: r.threshold for r in rows}

    def set_thresholds(
        self, principal: Principal, user_id: str, values: dict[str, float | None]
    ) -> dict[str, float]:
        t = thresholds_table
        now = dt.datetime.now(dt.UTC)
        with self._cache_lock:
            self._own_cache.pop(user_id, None)
        with self.db.transaction(principal, write=True) as conn:
            for search_type, value in values.items():
                conn.execute(
                    t.delete().where(and_(t.c.user_id == user_id, t.c.search_type == search_type))
                )
                if value is not None:
                    conn.execute(
                        t.insert().values(
                            user_id=user_id,
                            search_type=search_type,
                            threshold=value,
                            updated_at=now,
                        )
                    )
        return self.own_thresholds(principal, user_id)

    # -- retention ---------------------------------------------------------------------------

    def retention_days(self, principal: Principal) -> dict[str, int | None]:
        """Every user's own retention in days (service role), as stored."""
        t = user_settings_table
        with self.db.transaction(principal) as conn:
            rows = conn.execute(select(t.c.user_id, t.c.retention_days))
            return {r.user_id: r.retention_days for r in rows}

    def retention(self, principal: Principal, user_id: str) -> int | None:
        t = user_settings_table
        with self.db.transaction(principal) as conn:
            row = conn.execute(
                select(t.c.retention_days).where(
                    t.c.user_id == user_id, *owner_filter(t, principal)
                )
            ).first()
            return None if row is None else row[0]

    def set_retention(self, principal: Principal, user_id: str, days: int | None) -> None:
        t = user_settings_table
        now = dt.datetime.now(dt.UTC)
        with self.db.transaction(principal, write=True) as conn:
            conn.execute(delete(t).where(t.c.user_id == user_id))
            if days is not None:
                conn.execute(
                    t.insert().values(user_id=user_id, retention_days=days, updated_at=now)
                )

    def users(self, principal: Principal) -> list[str]:
        """Every user with records, events, alerts or settings (service role)."""
        out: set[str] = set()
        with self.db.transaction(principal) as conn:
            for table in (metrics_table, events_table, alerts_table, user_settings_table):
                out.update(u for (u,) in conn.execute(select(table.c.user_id).distinct()))
        return sorted(out)

    def purge(
        self, principal: Principal, cutoffs: dict[str, dt.datetime], *, dry_run: bool = False
    ) -> dict[str, dict[str, int]]:
        """Delete each user's records, events and alerts older than the user's cutoff; the
        counts per user and table. One transaction (as the service role)."""
        out: dict[str, dict[str, int]] = {}
        with self.db.transaction(principal, write=True) as conn:
            for user, cutoff in sorted(cutoffs.items()):
                counts = {}
                for name, table, column in (
                    ("records", metrics_table, M.timestamp),
                    ("events", events_table, E.timestamp),
                    ("alerts", alerts_table, A.created_at),
                ):
                    conds = [table.c.user_id == user, column < cutoff]
                    if dry_run:
                        n = conn.execute(select(func.count()).select_from(table).where(*conds))
                        counts[name] = int(n.scalar_one())
                    else:
                        counts[name] = int(conn.execute(delete(table).where(*conds)).rowcount)
                out[user] = counts
        return out


__all__ = ["SettingsStore"]
