"""What an output folder knows about its batches: ``batches.sqlite``, changed in transactions.

It records, before a batch is created, the submission (a token, the file of request lines and
the requests it carries) and each request's custom_id -> cache key -> (query, doc) pairs; then
the batch id the provider gave it, its last status, and what each request got. Every change is
one transaction committed to disk (``synchronous=FULL``) before rankscope goes on, so a run
killed at any point leaves either the state before a step or the state after it.

Request states: ``pending`` (in a submitted batch, or one being submitted), ``answered`` (its
answer is in the judgment cache), ``retry`` (errored or expired: to be submitted again),
``failed`` (an error that would recur, or out of attempts) and ``canceled``. Submission states:
``submitting`` (recorded, create call not yet confirmed), ``submitted``, ``collected`` and
``abandoned`` (its create call surely made nothing).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from rankscope.errors import JudgeError
from rankscope.judge.cache import CacheKey
from rankscope.util.sqlite import check_version, connect

STORE_FILE = "batches.sqlite"
LOCK_FILE = "batches.lock"
SUBMISSIONS_DIR = "batches"

RequestState = Literal["pending", "answered", "retry", "failed", "canceled"]
SubmissionState = Literal["submitting", "submitted", "collected", "abandoned"]

#: the tables as version 1 wrote them (``PRAGMA user_version``; 0 in older files)
SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS submissions (
    number INTEGER PRIMARY KEY,
    token TEXT NOT NULL UNIQUE,
    file TEXT NOT NULL,
    requests INTEGER NOT NULL,
    state TEXT NOT NULL,
    created_at REAL NOT NULL,
    batch_id TEXT,
    status TEXT,
    counts TEXT NOT NULL DEFAULT '{}',
    note TEXT
);
CREATE TABLE IF NOT EXISTS requests (
    custom_id TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    template_hash TEXT NOT NULL,
    query_hash TEXT NOT NULL,
    doc_hash TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    submission INTEGER,
    error TEXT
);
CREATE TABLE IF NOT EXISTS pairs (
    custom_id TEXT NOT NULL,
    query_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    passage_truncated INTEGER NOT NULL,
    passage_tokens INTEGER NOT NULL,
    PRIMARY KEY (query_id, doc_id, custom_id)
);
CREATE INDEX IF NOT EXISTS requests_state ON requests (state);
CREATE INDEX IF NOT EXISTS requests_submission ON requests (submission);
CREATE INDEX IF NOT EXISTS pairs_custom_id ON pairs (custom_id);
"""


def custom_id_for(key: CacheKey) -> str:
    """A request's custom_id: from its cache key, so the same question is one request (the
    characters and length both providers accept)."""
    return "rs-" + key.digest[:40]


@dataclass(frozen=True, slots=True)
class PairRef:
    """A pool pair a request answers, and how its passage was sent."""

    query_id: str
    doc_id: str
    passage_truncated: bool
    passage_tokens: int


@dataclass(frozen=True, slots=True)
class RequestRecord:
    custom_id: str
    key: CacheKey
    state: RequestState
    attempts: int
    submission: int | None
    error: str | None


@dataclass(frozen=True, slots=True)
class SubmissionRecord:
    number: int
    token: str
    file: str  # relative to the output folder
    requests: int
    state: SubmissionState
    created_at: float  # Unix time, taken before the create call
    batch_id: str | None
    status: str | None
    counts: dict[str, int]
    note: str | None


@dataclass(frozen=True, slots=True)
class BatchSetup:
    """What every batch of a folder shares: the provider, model and prompt they were made with."""

    provider: str
    kind: str
    model: str
    base_url: str | None
    template_hash: str
    min_label: int
    max_label: int

    def to_json(self) -> str:
        return json.dumps(
            {
                "provider": self.provider,
                "kind": self.kind,
                "model": self.model,
                "base_url": self.base_url,
                "template_hash": self.template_hash,
                "min_label": self.min_label,
                "max_label": self.max_label,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> BatchSetup:
        d = json.loads(text)
        return cls(
            str(d["provider"]),
            str(d["kind"]),
            str(d["model"]),
            d.get("base_url"),
            str(d["template_hash"]),
            int(d["min_label"]),
            int(d["max_label"]),
        )


@dataclass(frozen=True, slots=True)
class BatchProgress:
    """Where a folder's batch judging stands: its batches and its requests by state."""

    batches: int  # submitted (and confirmed) in all
    open_batches: int  # not yet collected
    unconfirmed: int  # create calls whose outcome is not known yet
    requests: int
    pending: int
    answered: int
    retry: int
    failed: int
    canceled: int
    pairs: int  # pool pairs the requests answer (a request may answer several)


class BatchStore:
    """The batches of one output folder (``batches.sqlite``). Not thread-safe: one run at a time
    works on a folder (:func:`folder_lock`)."""

    def __init__(self, out_dir: str | os.PathLike[str], *, create: bool = True) -> None:
        self.out = Path(out_dir)
        self.path = self.out / STORE_FILE
        if not create and not self.path.exists():
            raise JudgeError(
                f"{self.out} has no batches ({STORE_FILE} is missing); submit some with "
                f"`rankscope judge POOL --batch --out {self.out}`"
            )
        try:
            # synchronous FULL: a committed step survives a power cut
            self.db = connect(self.path, isolation_level=None, check_same_thread=True)
            check_version(
                self.db, SCHEMA_VERSION, what="the batch record", path=self.path, error=JudgeError
            )
            self.db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as e:
            raise JudgeError(f"cannot open the batch record {self.path}: {e}") from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> BatchStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- setup ----------------------------------------------------------------------------------
    def setup(self) -> BatchSetup | None:
        row = self.db.execute("SELECT value FROM meta WHERE name = 'setup'").fetchone()
        return None if row is None else BatchSetup.from_json(row[0])

    def ensure_setup(self, setup: BatchSetup) -> None:
        """Record the setup, or check that it is the one recorded (one folder, one setup)."""
        known = self.setup()
        if known is None:
            with self.transaction() as db:
                db.execute("INSERT INTO meta VALUES ('setup', ?)", (setup.to_json(),))
            return
        differs = [
            name
            for name in ("provider", "model", "template_hash", "min_label", "max_label")
            if getattr(known, name) != getattr(setup, name)
        ]
        if differs:
            detail = ", ".join(
                f"{n}: {getattr(known, n)!r} there, {getattr(setup, n)!r} now" for n in differs
            )
            raise JudgeError(
                f"{self.out} holds batches made with another setup ({detail}); use another "
                f"--out, or the same provider, model and prompt"
            )

    # -- requests -------------------------------------------------------------------------------
    def request(self, custom_id: str) -> RequestRecord | None:
        row = self.db.execute(
            "SELECT custom_id, provider, model, template_hash, query_hash, doc_hash, state, "
            "attempts, submission, error FROM requests WHERE custom_id = ?",
            (custom_id,),
        ).fetchone()
        return None if row is None else _request(row)

    def requests(self, state: RequestState | None = None) -> list[RequestRecord]:
        sql = (
            "SELECT custom_id, provider, model, template_hash, query_hash, doc_hash, state, "
            "attempts, submission, error FROM requests"
        )
        rows = (
            self.db.execute(sql + " WHERE state = ? ORDER BY rowid", (state,))
            if state
            else self.db.execute(sql + " ORDER BY rowid")
        )
        return [_request(r) for r in rows]

    def requests_of(self, number: int) -> list[RequestRecord]:
        rows = self.db.execute(
            "SELECT custom_id, provider, model, template_hash, query_hash, doc_hash, state, "
            "attempts, submission, error FROM requests WHERE submission = ? ORDER BY rowid",
            (number,),
        )
        return [_request(r) for r in rows]

    def state_counts(self) -> dict[str, int]:
        rows = self.db.execute("SELECT state, COUNT(*) FROM requests GROUP BY state")
        return {str(s): int(n) for s, n in rows}

    def pairs(self, custom_id: str) -> list[PairRef]:
        rows = self.db.execute(
            "SELECT query_id, doc_id, passage_truncated, passage_tokens FROM pairs "
            "WHERE custom_id = ? ORDER BY rowid",
            (custom_id,),
        )
        return [PairRef(str(q), str(d), bool(t), int(n)) for q, d, t, n in rows]

    def progress(self) -> BatchProgress:
        subs = self.submissions()
        states = self.state_counts()
        return BatchProgress(
            batches=sum(1 for s in subs if s.batch_id is not None),
            open_batches=sum(1 for s in subs if s.state == "submitted"),
            unconfirmed=sum(1 for s in subs if s.state == "submitting"),
            requests=sum(states.values()),
            pending=states.get("pending", 0),
            answered=states.get("answered", 0),
            retry=states.get("retry", 0),
            failed=states.get("failed", 0),
            canceled=states.get("canceled", 0),
            pairs=self.pair_count(),
        )

    def failed_pairs(self) -> list[tuple[str, str, str]]:
        """(query_id, doc_id, why) of the pairs whose request failed or was canceled."""
        return [
            (p.query_id, p.doc_id, r.error or r.state)
            for r in self.requests()
            if r.state in ("failed", "canceled")
            for p in self.pairs(r.custom_id)
        ]

    def pair_ids(self) -> set[tuple[str, str]]:
        """(query_id, doc_id) of every pair the folder's requests answer."""
        return {(str(q), str(d)) for q, d in self.db.execute("SELECT query_id, doc_id FROM pairs")}

    def pair_count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM pairs").fetchone()[0])

    def add_pairs(self, custom_id: str, pairs: Iterable[PairRef]) -> None:
        with self.transaction() as db:
            _insert_pairs(db, custom_id, pairs)

    def pending_pairs(self) -> dict[tuple[str, str, str], str]:
        """(query_id, doc_id, cache digest) -> custom_id of the pairs whose request is in a
        batch not yet collected (or waits to be submitted again)."""
        rows = self.db.execute(
            "SELECT p.query_id, p.doc_id, r.custom_id, r.provider, r.model, r.template_hash, "
            "r.query_hash, r.doc_hash FROM pairs p JOIN requests r USING (custom_id) "
            "WHERE r.state IN ('pending', 'retry')"
        )
        return {(q, d, CacheKey(*key).digest): cid for q, d, cid, *key in rows}

    # -- submissions ----------------------------------------------------------------------------
    def submissions(self, *states: SubmissionState) -> list[SubmissionRecord]:
        sql = (
            "SELECT number, token, file, requests, state, created_at, batch_id, status, counts, "
            "note FROM submissions"
        )
        if states:
            marks = ", ".join("?" for _ in states)
            rows = self.db.execute(sql + f" WHERE state IN ({marks}) ORDER BY number", states)
        else:
            rows = self.db.execute(sql + " ORDER BY number")
        return [_submission(r) for r in rows]

    def next_number(self) -> int:
        row = self.db.execute("SELECT COALESCE(MAX(number), 0) FROM submissions").fetchone()
        return int(row[0]) + 1

    def begin_submission(
        self,
        number: int,
        token: str,
        file: str,
        created_at: float,
        requests: list[tuple[str, CacheKey, list[PairRef]]],
    ) -> None:
        """Record a submission and its requests as pending, before the create call."""
        with self.transaction() as db:
            db.execute(
                "INSERT INTO submissions (number, token, file, requests, state, created_at) "
                "VALUES (?, ?, ?, ?, 'submitting', ?)",
                (number, token, file, len(requests), created_at),
            )
            for cid, key, pairs in requests:
                db.execute(
                    "INSERT INTO requests (custom_id, provider, model, template_hash, "
                    "query_hash, doc_hash, state, attempts, submission) "
                    "VALUES (?, ?, ?, ?, ?, ?, 'pending', 1, ?) "
                    "ON CONFLICT (custom_id) DO UPDATE SET state = 'pending', "
                    "attempts = attempts + 1, submission = excluded.submission, error = NULL",
                    (cid, key.provider, key.model, key.template_hash, key.query_hash,
                     key.doc_hash, number),
                )  # fmt: skip
                _insert_pairs(db, cid, pairs)

    def confirm_submission(self, number: int, batch_id: str, status: str) -> None:
        with self.transaction() as db:
            db.execute(
                "UPDATE submissions SET state = 'submitted', batch_id = ?, status = ? "
                "WHERE number = ?",
                (batch_id, status, number),
            )

    def abandon_submission(self, number: int, request_state: RequestState, note: str) -> None:
        """A create that surely made nothing: its requests go to ``request_state``; the attempt
        is not counted."""
        with self.transaction() as db:
            db.execute(
                "UPDATE submissions SET state = 'abandoned', note = ? WHERE number = ?",
                (note, number),
            )
            db.execute(
                "UPDATE requests SET state = ?, error = ?, attempts = MAX(attempts - 1, 0) "
                "WHERE submission = ? AND state = 'pending'",
                (request_state, note, number),
            )

    def update_status(self, number: int, status: str, counts: dict[str, int]) -> None:
        with self.transaction() as db:
            db.execute(
                "UPDATE submissions SET status = ?, counts = ? WHERE number = ?",
                (status, json.dumps(counts, sort_keys=True), number),
            )

    def finish_collection(
        self, number: int, outcomes: dict[str, tuple[RequestState, str | None]]
    ) -> None:
        """Record what each request of an ended batch got, and the batch as collected (one
        transaction). Only requests still pending in this submission change."""
        with self.transaction() as db:
            for cid, (state, error) in outcomes.items():
                db.execute(
                    "UPDATE requests SET state = ?, error = ? "
                    "WHERE custom_id = ? AND submission = ? AND state = 'pending'",
                    (state, error, cid, number),
                )
            db.execute("UPDATE submissions SET state = 'collected' WHERE number = ?", (number,))

    def give_up(self, custom_ids: Iterable[str], why: str) -> None:
        with self.transaction() as db:
            for cid in custom_ids:
                db.execute(
                    "UPDATE requests SET state = 'failed', error = ? "
                    "WHERE custom_id = ? AND state = 'retry'",
                    (why, cid),
                )


def _insert_pairs(db: sqlite3.Connection, custom_id: str, pairs: Iterable[PairRef]) -> None:
    db.executemany(
        "INSERT OR IGNORE INTO pairs VALUES (?, ?, ?, ?, ?)",
        [(custom_id, p.query_id, p.doc_id, int(p.passage_truncated), p.passage_tokens)
         for p in pairs],
    )  # fmt: skip


def _request(row: tuple[object, ...]) -> RequestRecord:
    cid, provider, model, th, qh, dh, state, attempts, submission, error = row
    return RequestRecord(
        custom_id=str(cid),
        key=CacheKey(str(provider), str(model), str(th), str(qh), str(dh)),
        state=state,  # type: ignore[arg-type]
        attempts=int(attempts),  # type: ignore[call-overload]
        submission=None if submission is None else int(submission),  # type: ignore[call-overload]
        error=None if error is None else str(error),
    )


def _submission(row: tuple[object, ...]) -> SubmissionRecord:
    number, token, file, requests, state, created, batch_id, status, counts, note = row
    return SubmissionRecord(
        number=int(number),  # type: ignore[call-overload]
        token=str(token),
        file=str(file),
        requests=int(requests),  # type: ignore[call-overload]
        state=state,  # type: ignore[arg-type]
        created_at=float(created),  # type: ignore[arg-type]
        batch_id=None if batch_id is None else str(batch_id),
        status=None if status is None else str(status),
        counts={str(k): int(v) for k, v in json.loads(str(counts)).items()},
        note=None if note is None else str(note),
    )


@contextlib.contextmanager
def folder_lock(out_dir: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the folder's batch lock: one run at a time submits or collects (a killed run's
    lock goes with its process)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    handle: IO[str] = (out / LOCK_FILE).open("a")
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise JudgeError(
                f"another `rankscope judge --batch` is working on {out} (it holds "
                f"{out / LOCK_FILE}); wait for it to finish, or stop it"
            ) from None
        yield
    finally:
        handle.close()


def pending_in(out_dir: str | os.PathLike[str]) -> dict[tuple[str, str, str], str]:
    """The pairs of ``out_dir`` waiting in its batches (empty when it has none)."""
    if not (Path(out_dir) / STORE_FILE).exists():
        return {}
    with BatchStore(out_dir, create=False) as store:
        return store.pending_pairs()


__all__ = [
    "LOCK_FILE",
    "STORE_FILE",
    "SUBMISSIONS_DIR",
    "BatchProgress",
    "BatchSetup",
    "BatchStore",
    "PairRef",
    "RequestRecord",
    "RequestState",
    "SubmissionRecord",
    "SubmissionState",
    "custom_id_for",
    "folder_lock",
    "pending_in",
]
