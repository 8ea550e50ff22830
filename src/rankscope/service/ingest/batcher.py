"""Group commit for single-record collects: concurrent requests are stored together.

Each ``POST .../collect`` hands its record to :class:`WriteBatcher` and awaits its outcome. A
writer thread takes everything that queued up while it wrote the previous group (up to
``max_batch`` records), scores it with one ``evaluate()`` call and stores it in one transaction;
a request waits for at most one write in progress. When a group fails, its records are retried
one by one so that one bad record cannot fail the others.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from rankscope.service.ingest.rows import NewRecord
from rankscope.service.ingest.writer import MetricsStore, WriteGroup
from rankscope.service.store.db import Principal
from rankscope.service.store.records import WriteOutcome

Item = tuple[Principal, NewRecord]


def write_items(store: MetricsStore, items: Sequence[Item]) -> list[WriteOutcome]:
    """Store items (grouped by principal) in one transaction; outcomes in item order."""
    groups: dict[Principal, tuple[WriteGroup, list[int]]] = {}
    for i, (principal, record) in enumerate(items):
        group, where = groups.setdefault(principal, (WriteGroup(principal), []))
        group.records.append(record)
        where.append(i)
    ordered = list(groups.values())
    results = store.write([g for g, _ in ordered])
    out: list[WriteOutcome | None] = [None] * len(items)
    for (_, where), outcomes in zip(ordered, results, strict=True):
        for i, outcome in zip(where, outcomes, strict=True):
            out[i] = outcome
    assert all(o is not None for o in out)
    return out  # type: ignore[return-value]


class WriteBatcher:
    def __init__(
        self,
        store: MetricsStore,
        *,
        max_batch: int = 512,
        writers: int = 1,
        gather_seconds: float = 0.0,
    ) -> None:
        self.store = store
        self.gather_seconds = gather_seconds
        self.max_batch = max_batch
        self.writers = writers
        self._queue: asyncio.Queue[tuple[Item, asyncio.Future[WriteOutcome]]] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._executor = ThreadPoolExecutor(max_workers=writers, thread_name_prefix="rs-write")

    async def start(self) -> None:
        self._queue = asyncio.Queue()
        self._tasks = [asyncio.create_task(self._run()) for _ in range(self.writers)]

    async def stop(self) -> None:
        if self._queue is not None:
            await self._queue.join()  # every accepted record is written before shutdown
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._executor.shutdown(wait=True)

    async def submit(self, principal: Principal, record: NewRecord) -> WriteOutcome:
        if self._queue is None:
            raise RuntimeError("the write batcher is not started")
        future: asyncio.Future[WriteOutcome] = asyncio.get_running_loop().create_future()
        await self._queue.put(((principal, record), future))
        return await future

    async def _run(self) -> None:
        assert self._queue is not None
        queue = self._queue
        loop = asyncio.get_running_loop()
        while True:
            batch = [await queue.get()]
            if queue.empty() and self.gather_seconds > 0:
                # a moment for concurrent requests to join: one evaluate() and one commit for
                # many records costs far less CPU than one each
                await asyncio.sleep(self.gather_seconds)
            while len(batch) < self.max_batch and not queue.empty():
                batch.append(queue.get_nowait())
            items = [item for item, _ in batch]
            try:
                try:
                    outcomes = await loop.run_in_executor(
                        self._executor, write_items, self.store, items
                    )
                    for (_, future), outcome in zip(batch, outcomes, strict=True):
                        _settle(future, outcome)
                except Exception as group_error:
                    if len(batch) == 1:
                        _settle(batch[0][1], group_error)
                    else:
                        for item, future in batch:
                            try:
                                (one,) = await loop.run_in_executor(
                                    self._executor, write_items, self.store, [item]
                                )
                                _settle(future, one)
                            except Exception as error:
                                _settle(future, error)
            finally:
                for _ in batch:
                    queue.task_done()


def _settle(future: asyncio.Future[WriteOutcome], result: WriteOutcome | BaseException) -> None:
    if future.done():  # the request was cancelled (client went away)
        return
    if isinstance(result, BaseException):
        future.set_exception(result)
    else:
        future.set_result(result)


__all__ = ["WriteBatcher", "write_items"]
