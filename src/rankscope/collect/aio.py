"""``AsyncMetricsClient``: the asyncio variant of :class:`rankscope.collect.MetricsClient`.

``collect(...)`` is a plain (non-async) method that queues and returns; a task on the running
event loop sends batches with the same retries, backoff, drop-oldest queue and counters.
``await flush()``, ``await aclose()`` (or ``async with``). Records collected while no loop runs
wait for the first ``collect`` or ``flush`` made inside one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path
from typing import Any

from rankscope.collect._core import (
    MAX_SERVER_ERRORS,
    BatchingClient,
    ClientStats,
    build_record,
)
from rankscope.collect.senders import (
    AsyncHttpSender,
    InProcessSender,
    Outcome,
    SendResult,
    local_sender,
)

log = logging.getLogger("rankscope.collect")


class AsyncMetricsClient(BatchingClient):
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
        local: InProcessSender | None = None,
    ) -> None:
        self._http = None if local is not None else AsyncHttpSender(url, token, timeout)
        self._local = local
        super().__init__(
            batch_size=batch_size,
            max_queue=max_queue,
            flush_interval=flush_interval,
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            close_timeout=close_timeout,
            max_server_errors=max_server_errors,
        )
        self._wake: asyncio.Event | None = None
        self._progress: asyncio.Condition | None = None
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def local(
        cls, path: str | Path, user: str = "local", *, threshold: float | None = None, **kw: Any
    ) -> AsyncMetricsClient:
        return cls("", local=local_sender(path, user, threshold), **kw)

    def collect(self, query: str, documents: Any, **options: Any) -> None:
        """Queue one retrieval; returns at once and never raises."""
        record = build_record(query, documents, options)
        if record is None:
            self._buffer.invalid += 1
            return
        self.collect_record(record)

    def collect_record(self, record: dict[str, Any]) -> None:
        try:
            if self._closing:
                self._buffer.collected += 1
                self._buffer.dropped += 1
                return
            self._buffer.add(record)
            self._ensure_task()
            if self._wake is not None and len(self._buffer.queue) >= self.batch_size:
                self._wake.set()
        except Exception:  # pragma: no cover
            log.exception("rankscope collect: unexpected error")

    def stats(self) -> ClientStats:
        return self._buffer.stats()

    def _ensure_task(self) -> None:
        if self._task is not None and not self._task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop yet: the records wait in the queue
        self._wake = asyncio.Event()
        self._progress = asyncio.Condition()
        self._task = loop.create_task(self._run())

    async def flush(self, timeout: float | None = None) -> bool:
        self._ensure_task()
        assert self._wake is not None and self._progress is not None
        target = self._buffer.collected
        deadline = None if timeout is None else time.monotonic() + timeout
        self._flushing += 1
        self._wake.set()
        try:
            async with self._progress:
                while self._buffer.done < target:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._progress.wait(), left or 0.5)
            return True
        finally:
            self._flushing -= 1

    async def aclose(self, timeout: float | None = None) -> ClientStats:
        if self._closing:
            return self.stats()
        await self.flush(self.close_timeout if timeout is None else timeout)
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._buffer.queue or self._buffer.in_flight:
            self._buffer.abandon([])
        if self._http is not None:
            await self._http.close()
        if self._local is not None:
            self._local.close()
        return self.stats()

    async def __aenter__(self) -> AsyncMetricsClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _send(self, batch: list[dict[str, Any]]) -> SendResult:
        try:
            if self._local is not None:
                return await self._local.asend(batch)
            assert self._http is not None
            return await self._http.send(batch)
        except Exception as exc:
            return SendResult(Outcome.RETRY, None, repr(exc))

    async def _notify(self) -> None:
        assert self._progress is not None
        async with self._progress:
            self._progress.notify_all()

    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            queued = len(self._buffer.queue)
            if not queued:
                self._wake.clear()
                await self._wake.wait()
                continue
            if queued < self.batch_size and not self._flushing:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.flush_interval)
            batch = self._buffer.take(self.batch_size)
            attempt = faults = 0
            try:
                while True:
                    result = await self._send(batch)
                    faults += result.outcome is Outcome.FAULT
                    if self._buffer.finish(batch, result, faults):
                        break
                    await asyncio.sleep(self._retry_delay(batch, result, attempt))
                    attempt += 1
            except asyncio.CancelledError:
                self._buffer.abandon(batch)
                raise
            await self._notify()


__all__ = ["AsyncMetricsClient"]
