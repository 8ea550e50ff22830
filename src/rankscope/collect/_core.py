"""What the threaded and the asyncio client share: the bounded queue with its counters, the
booking of a send's answer (:class:`~rankscope.collect.senders.SendResult`), and the
backoff."""

from __future__ import annotations

import logging
import random
from collections import deque
from dataclasses import dataclass
from typing import Any

from rankscope.collect.senders import Outcome, SendResult
from rankscope.collect.wire import make_record

log = logging.getLogger("rankscope.collect")

#: default of ``max_server_errors``
MAX_SERVER_ERRORS = 3


@dataclass(frozen=True)
class ClientStats:
    """Counters of a client. ``collected`` = ``sent + dropped + rejected + pending`` once
    nothing is in flight; ``retried`` counts send attempts that had to be repeated;
    ``rejected`` counts records the server refused (4xx) or failed on alone
    ``max_server_errors`` times (500); an answer that is not about the records (401, 3xx, 404,
    405, 407, or a 2xx without the service's envelope) keeps them queued and counts in
    ``retried``."""

    collected: int
    sent: int
    retried: int
    dropped: int
    rejected: int
    invalid: int
    pending: int


class Buffer:
    """The bounded queue: full means the oldest record is dropped (and counted). Not locked:
    the threaded client holds its lock around every call; the asyncio one runs in one loop."""

    def __init__(self, max_queue: int, max_server_errors: int = MAX_SERVER_ERRORS) -> None:
        self.queue: deque[dict[str, Any]] = deque()
        self.max_queue = max_queue
        self.max_server_errors = max(1, max_server_errors)
        self.in_flight = 0
        self.collected = 0
        self.sent = 0
        self.retried = 0
        self.dropped = 0
        self.rejected = 0
        self.invalid = 0
        self.batch_limit: int | None = None
        # sizes of the next batches, taken before batch_size: the parts of a batch sent again
        # to find the record the server refuses (one by one) or fails on (halves)
        self.plan: deque[int] = deque()
        # batches given up on 500s (split or dropped) since the server last stored one: the
        # backoff grows with it, so a server failing on everything is not hammered
        self.fault_streak = 0
        # the HOLD answer logged since the server last stored a batch (said once, loudly)
        self.held: str | None = None

    def add(self, record: dict[str, Any]) -> None:
        if len(self.queue) >= self.max_queue:
            self.queue.popleft()
            self.dropped += 1
        self.queue.append(record)
        self.collected += 1

    def take(self, n: int) -> list[dict[str, Any]]:
        if self.plan:
            n = self.plan.popleft()
        if self.batch_limit is not None:
            n = min(n, self.batch_limit)
        batch = [self.queue.popleft() for _ in range(min(n, len(self.queue)))]
        self.in_flight = len(batch)
        return batch

    def finish(self, batch: list[dict[str, Any]], result: SendResult, faults: int = 0) -> bool:
        """Book a send's result (``faults``: the FAULT answers this batch has had, this one
        included); True when the batch is done (not to be sent again as it is)."""
        if result.outcome is Outcome.SENT:
            self.sent += len(batch)
            self.fault_streak = 0
            if self.held is not None:
                log.warning("rankscope collect: the server stores records again")
            self.held = None
        elif result.outcome is Outcome.HOLD:
            # not about these records: keep them (and the queue) and send them again later
            self.retried += 1
            if self.held is None:
                log.error(
                    "rankscope collect: the server did not store a batch of %d records: %s; "
                    "the records stay queued (up to max_queue) and are sent again",
                    len(batch),
                    result.message,
                )
            self.held = result.message
            return False
        elif result.outcome is Outcome.FAULT:
            if faults < self.max_server_errors:
                self.retried += 1
                return False
            self.fault_streak += 1
            if len(batch) > 1:
                # one record the server cannot store fails the whole batch every time: send
                # the halves apart (and theirs, as long as they fail) to keep the others
                half = len(batch) // 2
                self.plan.extendleft((len(batch) - half, half))
                self.queue.extendleft(reversed(batch))
                log.warning(
                    "rankscope collect: the server failed %d times on a batch of %d records "
                    "(%s); sending it in halves",
                    faults,
                    len(batch),
                    result.message,
                )
            else:
                self.rejected += 1
                log.warning(
                    "rankscope collect: the server failed %d times on one record alone (%s); "
                    "dropped it (collectId %s)",
                    faults,
                    result.message,
                    batch[0].get("collectId"),
                )
        elif result.outcome is Outcome.REJECT:
            if len(batch) > 1:
                # one bad record refuses the whole batch: send these one by one to keep the rest
                self.plan.extendleft([1] * len(batch))
                self.queue.extendleft(reversed(batch))
            else:
                self.rejected += 1
                log.warning("rankscope collect: a record was rejected: %s", result.message)
        elif result.outcome is Outcome.SPLIT:
            if len(batch) == 1:
                self.rejected += 1
                log.warning("rankscope collect: a record is too large: %s", result.message)
            else:
                # back to the front of the queue, to go out in batches half as large
                self.batch_limit = max(1, len(batch) // 2)
                self.queue.extendleft(reversed(batch))
        else:
            self.retried += 1
            return False
        self.in_flight = 0
        return True

    def abandon(self, batch: list[dict[str, Any]]) -> None:
        """Records given up (closing before they could be sent) count as dropped."""
        self.dropped += len(batch) + len(self.queue)
        self.queue.clear()
        self.plan.clear()
        self.in_flight = 0

    @property
    def done(self) -> int:
        return self.sent + self.dropped + self.rejected

    def stats(self) -> ClientStats:
        return ClientStats(
            collected=self.collected,
            sent=self.sent,
            retried=self.retried,
            dropped=self.dropped,
            rejected=self.rejected,
            invalid=self.invalid,
            pending=len(self.queue) + self.in_flight,
        )


def backoff(attempt: int, base: float, cap: float, retry_after: float | None) -> float:
    """Full-jitter exponential backoff, at least the server's Retry-After."""
    delay = random.uniform(0, min(cap, base * (2**attempt)))
    if retry_after is not None:
        delay = max(delay, min(cap, retry_after))
    return delay


class BatchingClient:
    """The batching settings and the queue of a client; the subclasses add the transport and
    the worker (a thread, or a task on the event loop)."""

    def __init__(
        self,
        *,
        batch_size: int,
        max_queue: int,
        flush_interval: float,
        backoff_base: float,
        backoff_max: float,
        close_timeout: float,
        max_server_errors: int = MAX_SERVER_ERRORS,
    ) -> None:
        self.batch_size = max(1, batch_size)
        self.flush_interval = flush_interval
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.close_timeout = close_timeout
        self._buffer = Buffer(max(1, max_queue), max_server_errors)
        self._flushing = 0
        self._closing = False

    def _retry_delay(self, batch: list[dict[str, Any]], result: SendResult, attempt: int) -> float:
        """How long to wait before sending ``batch`` again (the first failure is logged)."""
        if attempt == 0 and result.outcome is not Outcome.HOLD:  # HOLD: logged once already
            log.warning(
                "rankscope collect: sending %d records failed (%s); retrying",
                len(batch),
                result.message,
            )
        # after batches given up on 500s, the first retries wait longer too
        streak = self._buffer.fault_streak
        return backoff(attempt + streak, self.backoff_base, self.backoff_max, result.retry_after)


def build_record(query: str, documents: Any, options: dict[str, Any]) -> dict[str, Any] | None:
    """The record of one retrieval, or None (logged) when it cannot be built: collecting never
    raises into the application."""
    try:
        return make_record(query, documents, **options)
    except Exception as exc:
        log.warning("rankscope collect: record not collected: %s", exc)
        return None


__all__ = [
    "MAX_SERVER_ERRORS",
    "BatchingClient",
    "Buffer",
    "ClientStats",
    "backoff",
    "build_record",
]
