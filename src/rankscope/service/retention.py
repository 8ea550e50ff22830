"""Retention: each user's records, events and alerts are kept for the user's
``retention_days`` (``PUT /api/retention``), else the ``retention_days`` setting, else forever;
``rankscope serve purge`` deletes what is older (a record by its ``timestamp``, an event by its
``timestamp``, an alert by when it was raised)."""

from __future__ import annotations

import datetime as dt

from rankscope.service.settings import ServiceSettings
from rankscope.service.store import Stores
from rankscope.service.store.db import Principal

PURGER = Principal("rankscope-purge", "service")


def retention_of(stores: Stores, settings: ServiceSettings) -> dict[str, int | None]:
    """Each known user's effective retention in days (None: kept forever)."""
    own = stores.settings.retention_days(PURGER)
    return {u: own.get(u) or settings.retention_days for u in stores.settings.users(PURGER)}


def purge(
    stores: Stores,
    settings: ServiceSettings,
    *,
    now: dt.datetime | None = None,
    dry_run: bool = False,
) -> dict[str, dict[str, int]]:
    """Delete (or with ``dry_run`` count) what each user's retention no longer covers."""
    now = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    cutoffs = {
        user: now - dt.timedelta(days=days)
        for user, days in retention_of(stores, settings).items()
        if days is not None
    }
    return stores.settings.purge(PURGER, cutoffs, dry_run=dry_run)


__all__ = ["PURGER", "purge", "retention_of"]
