"""Batch requests stored off the event loop: on a thread of the serving process, or spread
over a pool of bulk worker processes.

A batch of 1,000 records costs about 0.1 s of CPU (validation, one ``evaluate()``, the
inserts), nearly all of it holding the interpreter lock. One process therefore stores about one
core's worth of batches however many arrive, and on SQLite more threads in it only take turns
on the lock while one of them holds SQLite's write lock. With ``bulk_processes`` = N > 0 the
raw body of each batch goes to one of N worker processes, which validates, scores and stores
it and sends back the response body: the batches of every connection spread over the pool as
processes become free. (uvicorn's ``--workers`` share the listening socket instead: each
keep-alive connection stays with the process that accepted it, and a few connections opened at
once often all land on one process, leaving the others idle; bench/RESULTS.md, "Batches over
several cores".)

The pool starts with the application (each process connects once and tunes its garbage
collector as the serving process does) and is replaced if a process dies; the request that
in the pool then answers 503 (stored or not), and a retry with the same ``collectId`` values
stores nothing twice.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from rankscope.service.errors import ApiError
from rankscope.service.ingest.requests import BatchReply, store_batch
from rankscope.service.ingest.rows import settings_thresholds
from rankscope.service.ingest.writer import MetricsStore
from rankscope.service.server import tune_gc
from rankscope.service.settings import ServiceSettings
from rankscope.service.store.db import Principal, make_engine

log = logging.getLogger("rankscope.service")


class BulkWriter:
    """Where batch requests are validated, scored and stored (see the module's text)."""

    def __init__(self, settings: ServiceSettings, store: MetricsStore) -> None:
        self.settings = settings
        self.store = store
        self.processes = settings.bulk_processes
        # without a pool: one thread on SQLite (one writer, and more threads only take turns on
        # the interpreter lock while holding its write lock); on PostgreSQL a few, whose waits
        # on the database's round trips let another batch compute
        threads = 4 if store.postgres else 1
        self._executor: Executor = (
            self._new_pool()
            if self.processes
            else ThreadPoolExecutor(threads, thread_name_prefix="rs-bulk")
        )

    def _new_pool(self) -> ProcessPoolExecutor:
        # spawned, not forked: the serving process runs threads (a fork copies their locks)
        return ProcessPoolExecutor(
            self.processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_process,
            initargs=(self.settings,),
        )

    async def start(self) -> None:
        """Start every bulk process now (connected and ready), not on the first batch."""
        if self.processes:
            loop = asyncio.get_running_loop()
            # submitted together, so that the pool starts one process for each
            started = [loop.run_in_executor(self._executor, _ready) for _ in range(self.processes)]
            await asyncio.gather(*started)

    async def store_batch(self, principal: Principal, raw: bytes) -> BatchReply:
        """The response of a batch request (errors raise as they would in the route)."""
        loop = asyncio.get_running_loop()
        if not self.processes:
            return await loop.run_in_executor(
                self._executor, store_batch, self.settings, self.store, principal, raw
            )
        executor = self._executor
        try:
            return await loop.run_in_executor(executor, _store_in_process, principal, raw)
        except BrokenProcessPool:
            if self._executor is executor:  # the first request to notice replaces the pool
                log.error("a bulk worker process stopped; starting a new pool")
                self._executor = self._new_pool()
                executor.shutdown(wait=False)
            raise ApiError(
                503,
                "unavailable",
                "a bulk process stopped while this batch was in the pool, which may or may "
                "not have stored it; retry (records with a collectId are never stored twice)",
                headers={"Retry-After": "1"},
            ) from None

    def process_ids(self) -> list[int]:
        """The bulk processes' ids (none in thread mode)."""
        # ProcessPoolExecutor keeps its processes by id in _processes (no public accessor)
        processes = getattr(self._executor, "_processes", None) or {}
        return sorted(processes)

    async def stop(self) -> None:
        """Finish the batches in progress, then stop the thread or the processes."""
        await asyncio.to_thread(self._executor.shutdown, wait=True)


# -- in a bulk worker process -----------------------------------------------------------------

_PROCESS: tuple[ServiceSettings, MetricsStore] | None = None


def _start_process(settings: ServiceSettings) -> None:
    global _PROCESS
    # Ctrl-C goes to the whole process group: the serving process finishes the batches in
    # progress, then shuts the pool down; and should it be killed, the pool ends. (SIGTERM
    # stays: a broken pool stops its remaining processes with it.)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with, args=(os.getppid(),), daemon=True).start()

    engine = make_engine(
        settings.database_url, pool_size=1, sqlite_synchronous=settings.sqlite_synchronous
    )
    store = MetricsStore(
        engine, settings_thresholds(settings), cache_seconds=settings.api_key_cache_seconds
    )
    _PROCESS = (settings, store)
    tune_gc()


def _end_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def _ready() -> int:
    return os.getpid()


def _store_in_process(principal: Principal, raw: bytes) -> BatchReply:
    assert _PROCESS is not None, "the bulk process was not started by BulkWriter"
    settings, store = _PROCESS
    return store_batch(settings, store, principal, raw)


__all__ = ["BulkWriter"]
