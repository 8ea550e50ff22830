"""Retention: each user's records, events and alerts are kept for the user's
``retention_days`` (``PUT /api/retention``), else the ``retention_days`` setting, else forever;
``rankscope serve purge`` deletes what is older (a record by its ``timestamp``, an event by its
``timestamp``, an alert by when it was raised)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from rankscope.service.settings import ServiceSettings
from rankscope.service.store.db import Principal
from rankscope.service.store.events import OnlineStore
from rankscope.service.store.models import user_settings_table

PURGER = Principal("rankscope-purge", "service")


def retention_of(online: OnlineStore, settings: ServiceSettings) -> dict[str, int | None]:
    """Each known user's effective retention in days (None: kept forever)."""
    t = user_settings_table
    with online.metrics._begin(PURGER) as conn:
        rows = conn.execute(select(t.c.user_id, t.c.retention_days))
        own = {r.user_id: r.retention_days for r in rows}
    return {u: own.get(u) or settings.retention_days for u in online.users(PURGER)}


def purge(
    online: OnlineStore,
    settings: ServiceSettings,
    *,
    now: dt.datetime | None = None,
    dry_run: bool = False,
) -> dict[str, dict[str, int]]:
    """Delete (or with ``dry_run`` count) what each user's retention no longer covers."""
    now = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    cutoffs = {
        user: now - dt.timedelta(days=days)
        for user, days in retention_of(online, settings).items()
        if days is not None
    }
    return online.purge(PURGER, cutoffs, dry_run=dry_run)


__all__ = ["PURGER", "purge", "retention_of"]
