"""Requests per second per user: a token bucket (burst of two seconds' worth). In-process:
with several workers each holds its own buckets, so the limit is per worker. (Not
:class:`rankscope.judge.limits.RateLimiter`, which paces calls to an LLM provider.)"""

from __future__ import annotations

import threading
import time


class RequestLimiter:
    def __init__(self, per_second: float) -> None:
        self.rate = per_second
        self.capacity = max(1.0, 2 * per_second)
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def retry_after(self, user: str) -> float | None:
        """None when the request may go ahead (one token taken), else seconds to wait."""
        if self.rate <= 0:
            return None
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(user, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            if tokens >= 1:
                self._buckets[user] = (tokens - 1, now)
                return None
            self._buckets[user] = (tokens, now)
            return (1 - tokens) / self.rate


__all__ = ["RequestLimiter"]
