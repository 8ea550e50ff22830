"""Storage of the collection service: models, migrations, connections, reads and writes."""

from rankscope.service.store.db import Principal, make_engine, migrate
from rankscope.service.store.records import Filters, MetricsStore

__all__ = ["Filters", "MetricsStore", "Principal", "make_engine", "migrate"]
