"""Storage of the collection service: connections and migrations (``db``), the tables
(``models``), transactions acting as a principal (``base``), and one store per table:
``records``, ``events``, ``alerts``, ``settings`` (thresholds, retention) and ``keys``. The
store reads and writes rows; it computes no measure and knows no request body."""

from __future__ import annotations

from dataclasses import dataclass

from rankscope.service.store.alerts import AlertStore
from rankscope.service.store.base import Database
from rankscope.service.store.db import Principal, make_engine, migrate
from rankscope.service.store.events import EventFilters, EventStore
from rankscope.service.store.records import Filters, RecordStore
from rankscope.service.store.settings import SettingsStore


@dataclass(frozen=True)
class Stores:
    """The stores over one database, as the analyses and commands use them."""

    records: RecordStore
    events: EventStore
    alerts: AlertStore
    settings: SettingsStore


__all__ = [
    "AlertStore",
    "Database",
    "EventFilters",
    "EventStore",
    "Filters",
    "Principal",
    "RecordStore",
    "SettingsStore",
    "Stores",
    "make_engine",
    "migrate",
]
