"""``MetricsClient``: record retrievals from an application without ever slowing it down.

``collect(...)`` builds the record and appends it to a bounded in-memory queue, then returns;
it never blocks on the network and never raises (a record it cannot build is counted in
``stats().invalid`` and logged). A background thread sends the queue in batches to
``POST /api/metrics/retrieval/collect/batch``; on a 502, 503, 504, 429, timeout or refused
connection it retries the same batch with exponential backoff (and the server's Retry-After),
for as long as it takes, until ``close()``. A batch answered 500 (or another 5xx)
``max_server_errors`` times is sent again in halves, and a record answered so alone is dropped
(``stats().rejected``), so that one record the server cannot store does not hold up the rest.
An answer that is not about the records (401, a redirect, 404, 405, 407, or a 2xx whose body is
not the service's envelope) keeps them queued and sends them again, logged once at ERROR.
Every record carries a ``collectId``, so a batch that reached the server before the connection
broke is not stored twice. When the queue is full the oldest record is
dropped and counted. ``flush()`` waits until everything collected so far is sent; ``close()``
flushes (up to ``close_timeout``) and stops; both run at interpreter exit.

``MetricsClient.local("metrics.sqlite", user="me")`` writes to a SQLite file instead, with the
service's own code (no HTTP; ``rankscope serve --database-url sqlite:///metrics.sqlite`` reads it).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from rankscope.collect._core import (
    MAX_SERVER_ERRORS,
    BatchingClient,
    ClientStats,
    build_record,
)
from rankscope.collect.senders import HttpSender, Outcome, Sender, SendResult, local_sender

log = logging.getLogger("rankscope.collect")


class MetricsClient(BatchingClient):
    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        batch_size: int = 100,
        max_queue: int = 10_000,
        flush_interval: float = 0.5,
        timeout: float = 5.0,
        backoff_base: float = 0.1,
        backoff_max: float = 10.0,
        close_timeout: float = 5.0,
        max_server_errors: int = MAX_SERVER_ERRORS,
        sender: Sender | None = None,
    ) -> None:
        self._sender: Sender = sender or HttpSender(url, token, timeout)
        super().__init__(
            batch_size=batch_size,
            max_queue=max_queue,
            flush_interval=flush_interval,
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            close_timeout=close_timeout,
            max_server_errors=max_server_errors,
        )
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="rankscope-collect", daemon=True)
        self._thread.start()
        ref = weakref.ref(self)
        self._atexit = lambda: _close_ref(ref)
        atexit.register(self._atexit)

    @classmethod
    def local(
        cls, path: str | Path, user: str = "local", *, threshold: float | None = None, **kw: Any
    ) -> MetricsClient:
        """A client that stores into a SQLite file directly (needs the ``serve`` extra)."""
        return cls("", sender=local_sender(path, user, threshold), **kw)

    # -- the application's side --------------------------------------------------------------

    def collect(self, query: str, documents: Any, **options: Any) -> None:
        """Queue one retrieval (see :func:`rankscope.collect.make_record` for the options).
        Returns at once; never raises."""
        record = build_record(query, documents, options)
        if record is None:
            with self._cond:
                self._buffer.invalid += 1
            return
        self.collect_record(record)

    def collect_record(self, record: dict[str, Any]) -> None:
        """Queue a record already in the API's JSON shape. Returns at once; never raises."""
        try:
            with self._cond:
                if self._closed:
                    self._buffer.dropped += 1
                    self._buffer.collected += 1
                    return
                self._buffer.add(record)
                if len(self._buffer.queue) >= self.batch_size:
                    self._cond.notify_all()
        except Exception:  # pragma: no cover - nothing above should raise
            log.exception("rankscope collect: unexpected error")

    def stats(self) -> ClientStats:
        with self._cond:
            return self._buffer.stats()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every record collected before this call is sent (or given up); True
        when done within ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            target = self._buffer.collected
            self._flushing += 1
            self._cond.notify_all()
            try:
                while self._buffer.done < target:
                    if not self._thread.is_alive():
                        return False
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    self._cond.wait(left if left is not None else 0.5)
                return True
            finally:
                self._flushing -= 1

    def close(self, timeout: float | None = None) -> ClientStats:
        """Flush (up to ``timeout``, default ``close_timeout``), stop the worker; records still
        unsent are dropped (and counted). Returns the final counters."""
        if self._closed:
            return self.stats()
        self.flush(self.close_timeout if timeout is None else timeout)
        with self._cond:
            self._closing = True
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=max(1.0, self.backoff_max))
        with self._cond:
            if self._buffer.queue or self._buffer.in_flight:
                self._buffer.abandon([])
        try:
            self._sender.close()
        except Exception:  # pragma: no cover
            log.debug("rankscope collect: error closing the sender", exc_info=True)
        atexit.unregister(self._atexit)
        return self.stats()

    def __enter__(self) -> MetricsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the worker --------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                deadline: float | None = None
                while True:
                    if self._closing:
                        return
                    queued = len(self._buffer.queue)
                    if queued >= self.batch_size or (queued and self._flushing):
                        break
                    if queued:  # a partial batch goes out flush_interval after it started
                        if deadline is None:
                            deadline = time.monotonic() + self.flush_interval
                        left = deadline - time.monotonic()
                        if left <= 0:
                            break
                        self._cond.wait(left)
                    else:
                        deadline = None
                        self._cond.wait()
                batch = self._buffer.take(self.batch_size)
            if batch:
                self._deliver(batch)

    def _deliver(self, batch: list[dict[str, Any]]) -> None:
        attempt = faults = 0
        while True:
            try:
                result = self._sender.send(batch)
            except Exception as exc:  # a sender must not kill the worker
                result = SendResult(Outcome.RETRY, None, repr(exc))
            faults += result.outcome is Outcome.FAULT
            with self._cond:
                finished = self._buffer.finish(batch, result, faults)
                self._cond.notify_all()
                if finished:
                    return
                delay = self._retry_delay(batch, result, attempt)
                attempt += 1
                self._cond.wait(delay)  # close() wakes it up
                if self._closing:
                    self._buffer.abandon(batch)
                    self._cond.notify_all()
                    return


def _close_ref(ref: weakref.ref[MetricsClient]) -> None:
    client = ref()
    if client is not None:
        with contextlib.suppress(Exception):  # never break interpreter exit
            client.close()


__all__ = ["MetricsClient"]
