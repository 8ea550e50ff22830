"""A persistent SQLite cache of paid LLM judgments, so no answer is ever paid for twice.

The key is a hash of provider, model, prompt-template hash and the hashes of the query text and
the document text: the same question about the same text under the same prompt is answered
once, whatever the ids or the output folder. Every raw response is stored for audit.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.config import environment
from rankscope.errors import JudgeError
from rankscope.util.sqlite import check_version, connect

if TYPE_CHECKING:
    from rankscope.judge.providers import Answer, Completion

#: the judgments table as version 1 wrote it (``PRAGMA user_version``; 0 in older files)
SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    template_hash TEXT NOT NULL,
    query_hash TEXT NOT NULL,
    doc_hash TEXT NOT NULL,
    label INTEGER,
    reason TEXT,
    rationale TEXT NOT NULL,
    raw_text TEXT NOT NULL,
    raw_response TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL,
    request_id TEXT,
    created_at TEXT NOT NULL
)
"""


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def default_cache_path() -> Path:
    """``judgments.sqlite`` in the cache folder (``$RANKSCOPE_CACHE_DIR``: see
    :mod:`rankscope.config`)."""
    return environment().cache_dir / "judgments.sqlite"


@dataclass(frozen=True, slots=True)
class CacheKey:
    provider: str
    model: str
    template_hash: str
    query_hash: str
    doc_hash: str

    @property
    def digest(self) -> str:
        parts = (self.provider, self.model, self.template_hash, self.query_hash, self.doc_hash)
        return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class CachedJudgment:
    label: int | None
    reason: str | None
    rationale: str
    raw_text: str
    raw_response: dict[str, Any]
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    request_id: str | None
    created_at: str

    @classmethod
    def answered(
        cls,
        done: Completion | Answer,
        label: int | None,
        reason: str | None,
        rationale: str,
        *,
        cost_usd: float | None = None,
    ) -> CachedJudgment:
        """A paid answer, as read (``label``, or None with ``reason``), stamped now; its cost
        is ``cost_usd``, else the completion's (a batch answer is priced by its caller)."""
        return cls(
            label=label,
            reason=reason,
            rationale=rationale,
            raw_text=done.text,
            raw_response=done.raw,
            input_tokens=done.input_tokens,
            output_tokens=done.output_tokens,
            cost_usd=cost_usd if cost_usd is not None else getattr(done, "cost_usd", None),
            request_id=done.request_id,
            created_at=now_iso(),
        )


_INSERT = "INSERT OR REPLACE INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


class JudgmentCache:
    """Thread-safe; ``put`` returns once its answer is committed (and synced to disk), so a
    killed run keeps every answer it paid for.

    Commits are grouped: a ``put`` that arrives while another thread is committing waits, and
    the next commit writes every answer that arrived meanwhile in one transaction. Each answer
    is still on disk before its ``put`` returns, but many calls in flight share one sync instead
    of queueing for one each (a synced commit costs milliseconds; a sync per answer caps a run at
    a few hundred answers per second whatever the concurrency). Reads use their own connection,
    so a lookup never waits for a sync.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self._db = connect(self.path)  # synchronous FULL: no paid answer lost
            check_version(
                self._db,
                SCHEMA_VERSION,
                what="the judgment cache",
                path=self.path,
                error=JudgeError,
            )
            self._db.execute(_SCHEMA)
            self._db.commit()
            self._reader = connect(self.path)
        except (OSError, sqlite3.Error) as e:
            raise JudgeError(
                f"cannot open the judgment cache {self.path}: {e}; pass --cache PATH to use "
                f"another file"
            ) from None
        self._read_lock = threading.Lock()
        # Group commit: rows wait in _pending for the next batch; one thread at a time commits.
        self._cond = threading.Condition()
        self._pending: list[tuple[Any, ...]] = []
        self._next_batch = 1  # the batch that the rows in _pending will be committed in
        self._committed = 0  # the last batch written (or failed)
        self._writing = False
        self._failures: dict[int, str] = {}  # batch -> why its commit failed
        self.commits = 0  # transactions committed (fewer than puts when calls overlap)

    def get(self, key: CacheKey) -> CachedJudgment | None:
        with self._read_lock:
            row = self._reader.execute(
                "SELECT label, reason, rationale, raw_text, raw_response, input_tokens, "
                "output_tokens, cost_usd, request_id, created_at FROM judgments WHERE key = ?",
                (key.digest,),
            ).fetchone()
        if row is None:
            return None
        return CachedJudgment(
            label=row[0],
            reason=row[1],
            rationale=row[2],
            raw_text=row[3],
            raw_response=json.loads(row[4]),
            input_tokens=row[5],
            output_tokens=row[6],
            cost_usd=row[7],
            request_id=row[8],
            created_at=row[9],
        )

    def __contains__(self, key: CacheKey) -> bool:
        with self._read_lock:
            row = self._reader.execute(
                "SELECT 1 FROM judgments WHERE key = ?", (key.digest,)
            ).fetchone()
        return row is not None

    def put(self, key: CacheKey, value: CachedJudgment) -> None:
        """Store an answer; returns once it is committed to disk (raises JudgeError if not)."""
        row = (
            key.digest,
            key.provider,
            key.model,
            key.template_hash,
            key.query_hash,
            key.doc_hash,
            value.label,
            value.reason,
            value.rationale,
            value.raw_text,
            json.dumps(value.raw_response, sort_keys=True),
            value.input_tokens,
            value.output_tokens,
            value.cost_usd,
            value.request_id,
            value.created_at,
        )
        with self._cond:
            self._pending.append(row)
            batch = self._next_batch
            while self._committed < batch:
                if self._writing:  # another thread commits; ours goes in the next batch
                    self._cond.wait()
                else:
                    self._commit_pending()
            failure = self._failures.get(batch)
        if failure is not None:
            raise JudgeError(f"cannot write to the judgment cache {self.path}: {failure}")

    def _commit_pending(self) -> None:
        """Commit every pending row as one batch (called holding ``_cond``, released while
        writing so that more rows can queue for the next batch)."""
        rows, self._pending = self._pending, []
        batch = self._next_batch
        self._next_batch += 1
        self._writing = True
        failure: str | None = None
        self._cond.release()
        try:
            self._db.executemany(_INSERT, rows)
            self._db.commit()
        except sqlite3.Error as e:
            failure = str(e)
            with contextlib.suppress(sqlite3.Error):
                self._db.rollback()
        finally:
            self._cond.acquire()
            self._writing = False
            self._committed = batch
            self.commits += failure is None
            if failure is not None:
                self._failures[batch] = failure
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._read_lock:
            return int(self._reader.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])

    def close(self) -> None:
        with self._cond:
            while self._writing:
                self._cond.wait()
            with self._read_lock:
                self._reader.close()
            self._db.close()

    def __enter__(self) -> JudgmentCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


__all__ = [
    "CacheKey",
    "CachedJudgment",
    "JudgmentCache",
    "default_cache_path",
    "now_iso",
    "text_hash",
]
