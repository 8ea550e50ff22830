"""Deliver a JSON payload to a webhook with retries and exponential backoff.

A 2xx answer is delivered. Connection errors, timeouts, 408, 429 and 5xx are retried: the
``k``-th retry waits ``backoff * 2^(k-1)`` seconds, or the receiver's ``Retry-After`` (seconds,
at most 60) when longer, up to ``attempts`` tries in all. Any other 4xx stops at once (the
receiver refuses the payload; retrying cannot help).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

RETRY_STATUSES = frozenset({408, 429})


@dataclass(frozen=True)
class Delivery:
    delivered: bool
    attempts: int
    status: int | None
    error: str | None


def deliver(
    url: str,
    payload: Any,
    *,
    attempts: int = 5,
    backoff: float = 1.0,
    timeout: float = 5.0,
    sleep: Callable[[float], None] = time.sleep,
    client: httpx.Client | None = None,
) -> Delivery:
    """POST ``payload`` as JSON to ``url``; see the module for the retry rule."""
    own = client is None
    http = client or httpx.Client(timeout=timeout)
    error: str | None = None
    status: int | None = None
    try:
        for attempt in range(1, attempts + 1):
            wait = backoff * 2 ** (attempt - 1)
            try:
                response = http.post(url, json=payload, headers={"User-Agent": "rankscope-alerts"})
                status = response.status_code
                if 200 <= status < 300:
                    return Delivery(True, attempt, status, None)
                error = f"HTTP {status}: {response.text[:200]}"
                if status < 500 and status not in RETRY_STATUSES:
                    return Delivery(False, attempt, status, error)
                retry_after = response.headers.get("retry-after")
                if retry_after is not None and retry_after.strip().isdigit():
                    wait = max(wait, min(60.0, float(retry_after)))
            except httpx.HTTPError as exc:
                status = None
                error = f"{type(exc).__name__}: {exc}"
            if attempt < attempts:
                sleep(wait)
        return Delivery(False, attempts, status, error)
    finally:
        if own:
            http.close()


__all__ = ["Delivery", "deliver"]
