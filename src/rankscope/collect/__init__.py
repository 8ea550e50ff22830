"""Collect retrieval metrics from an application: a client that never blocks or raises.

- :class:`MetricsClient` (a background thread) and :class:`AsyncMetricsClient` (asyncio) send
  records to ``rankscope serve``; ``MetricsClient.local(path)`` writes to a SQLite file instead.
- :func:`make_record` builds one record (the JSON of ``POST /api/metrics/retrieval/collect``).

See docs/service.md and examples/collect_rag.py.
"""

from rankscope.collect._core import ClientStats
from rankscope.collect.aio import AsyncMetricsClient
from rankscope.collect.client import MetricsClient
from rankscope.collect.wire import make_record

__all__ = ["AsyncMetricsClient", "ClientStats", "MetricsClient", "make_record"]
