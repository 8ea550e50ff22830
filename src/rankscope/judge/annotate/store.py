"""Human judgments of a pool, kept in SQLite as they are made.

One file per pool (by default ``POOL.annotations.sqlite`` beside it), created with mode 0600
(SQLite gives its ``-wal`` and ``-shm`` files the same mode), in WAL mode with
``synchronous=FULL``: every action is committed and synced before the page hears back, so a
killed server or a closed tab loses nothing that was answered.

Tables (schema version 1, ``PRAGMA user_version``; ``PRAGMA application_id`` marks the file):

- ``meta``: key/value settings: the scale, how the queues were made (annotators, overlap, seed).
- ``pairs``: the pool's (query, doc) pairs with their texts, ``id`` = position in the pool
  (1-based); ``queued`` = 0 for pairs left out of every queue (already graded in ``--qrels``).
- ``labels``: reference grades per pair and source (``llm`` from ``rankscope judge``,
  ``qrels`` from existing qrels); replaced when given again.
- ``annotators`` and ``assignments``: who judges which pair.
- ``judgments``: the append-only log of every action, one row each: ``grade`` (with the grade),
  ``skip``, ``note`` (with its text) and ``undo`` (naming, in ``undoes``, the grade or skip row
  it cancels). Triggers refuse UPDATE and DELETE on it. A person's answer for a pair is their
  latest grade or skip row that no undo names; their note is their latest note row. Nothing is
  ever rewritten, so the log shows every answer given, undone and given again, with its time.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from rankscope.errors import InputError
from rankscope.judge.annotate.assign import assign_pairs
from rankscope.judge.annotate.scale import Scale
from rankscope.judge.io import PathLike
from rankscope.judge.pool import Pool
from rankscope.util.sqlite import check_version, connect

SCHEMA_VERSION = 1
APPLICATION_ID = 0x52534E54  # "RSNT": a rankscope annotation store
STORE_SUFFIX = ".annotations.sqlite"
DEFAULT_OVERLAP = 0.1
NOTE_MAX_CHARS = 2000
ELAPSED_MAX_MS = 86_400_000  # a day: longer is a page left open, not time spent
#: annotator names: safe as file names and in URLs
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
Kind = Literal["grade", "skip", "note", "undo"]
REFERENCE_SOURCES = ("llm", "qrels")

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pairs (
    id INTEGER PRIMARY KEY,
    query_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    query TEXT NOT NULL,
    title TEXT NOT NULL,
    text TEXT NOT NULL,
    queued INTEGER NOT NULL DEFAULT 1,
    UNIQUE (query_id, doc_id)
);
CREATE TABLE labels (
    pair_id INTEGER NOT NULL REFERENCES pairs (id),
    source TEXT NOT NULL,
    grade INTEGER NOT NULL,
    PRIMARY KEY (pair_id, source)
);
CREATE TABLE annotators (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);
CREATE TABLE assignments (
    annotator_id INTEGER NOT NULL REFERENCES annotators (id),
    pair_id INTEGER NOT NULL REFERENCES pairs (id),
    PRIMARY KEY (annotator_id, pair_id)
);
CREATE TABLE judgments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    annotator_id INTEGER NOT NULL REFERENCES annotators (id),
    pair_id INTEGER NOT NULL REFERENCES pairs (id),
    kind TEXT NOT NULL CHECK (kind IN ('grade', 'skip', 'note', 'undo')),
    grade INTEGER CHECK ((kind = 'grade') = (grade IS NOT NULL)),
    note TEXT CHECK ((kind = 'note') = (note IS NOT NULL)),
    undoes INTEGER REFERENCES judgments (id) CHECK ((kind = 'undo') = (undoes IS NOT NULL)),
    elapsed_ms INTEGER,
    created_at TEXT NOT NULL
);
CREATE INDEX judgments_by_annotator ON judgments (annotator_id, kind, pair_id);
CREATE TRIGGER judgments_no_update BEFORE UPDATE ON judgments
BEGIN SELECT RAISE(ABORT, 'judgments are append-only'); END;
CREATE TRIGGER judgments_no_delete BEFORE DELETE ON judgments
BEGIN SELECT RAISE(ABORT, 'judgments are append-only'); END;
"""

# the latest grade or skip row of each pair that no undo row names, for one annotator
_ANSWERS = """
SELECT j.pair_id, j.kind, j.grade, j.id, j.created_at FROM judgments AS j
JOIN (
    SELECT pair_id, MAX(id) AS id FROM judgments
    WHERE annotator_id = :a AND kind IN ('grade', 'skip')
      AND id NOT IN (SELECT undoes FROM judgments WHERE annotator_id = :a AND kind = 'undo')
    GROUP BY pair_id
) AS latest ON latest.id = j.id
"""

_SURROGATE = re.compile("[\ud800-\udfff]")


class AnnotationError(InputError):
    """A request the store refuses (bad grade, note or name)."""


class UnknownPairError(AnnotationError):
    """No pair has this id."""


class UnknownAnnotatorError(AnnotationError):
    """No annotator has this name (with fixed ``--annotators``, names outside the list)."""


class NotAssignedError(AnnotationError):
    """The pair exists but is not in this annotator's queue."""


@dataclass(frozen=True, slots=True)
class AnnotationPair:
    id: int
    query_id: str
    doc_id: str
    query: str
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class Progress:
    assigned: int
    graded: int
    skipped: int  # skipped and not graded since
    remaining: int  # assigned - graded (skipped pairs are still to do)


@dataclass(frozen=True, slots=True)
class QueueItem:
    pair: AnnotationPair
    position: int  # 1-based place in the annotator's queue
    note: str  # the annotator's note on the pair ('' if none)
    skipped: bool  # the pair comes back after a skip


@dataclass(frozen=True, slots=True)
class Action:
    """One row of the log."""

    id: int
    annotator: str
    pair_id: int
    kind: Kind
    grade: int | None
    note: str | None
    undoes: int | None
    elapsed_ms: int | None
    created_at: str


@dataclass(frozen=True, slots=True)
class Answer:
    """A person's current answer for a pair: a grade, or a skip (grade None)."""

    pair_id: int
    kind: Literal["grade", "skip"]
    grade: int | None
    action_id: int
    created_at: str


@dataclass(frozen=True, slots=True)
class AssignmentPlan:
    """How the queues were made; ``annotators`` None means open: anyone who gives a name
    joins and gets every queued pair."""

    annotators: tuple[str, ...] | None
    overlap: float
    seed: int
    rejudge: bool  # pairs graded in the reference qrels are queued too

    def to_json(self) -> dict[str, Any]:
        return {
            "annotators": None if self.annotators is None else list(self.annotators),
            "overlap": self.overlap,
            "seed": self.seed,
            "rejudge": self.rejudge,
        }


def default_store_path(pool: PathLike) -> Path:
    """``pool.jsonl`` -> ``pool.annotations.sqlite`` in the same folder."""
    p = Path(pool)
    return p.with_name(p.stem + STORE_SUFFIX)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def check_name(name: object) -> str:
    if not isinstance(name, str) or NAME_RE.fullmatch(name) is None:
        raise AnnotationError(
            "an annotator name is 1-64 letters, digits or . _ @ - (starting with a letter or "
            "digit)",
            value=name,
        )
    return name


def _not_a_store(path: Path, e: sqlite3.DatabaseError) -> InputError:
    return InputError(
        f"not an annotation store ({e})",
        path=path,
        hint="pass --store FILE naming a store made by `rankscope annotate`, or a new file",
    )


def _display_text(text: str) -> str:
    """Texts as SQLite can hold them: a lone UTF-16 surrogate (valid in JSON, not in UTF-8)
    becomes U+FFFD. Only texts shown to people; ids are never rewritten."""
    return _SURROGATE.sub("\ufffd", text)


class AnnotationStore:
    """Thread-safe: the HTTP server's threads share one connection under a lock; each write
    is one transaction, committed and synced before the method returns."""

    def __init__(self, path: PathLike, *, create: bool = False) -> None:
        self.path = Path(path)
        exists = self.path.exists()
        if not exists and not create:
            raise InputError(
                "no annotation store here",
                path=self.path,
                hint="start one with `rankscope annotate POOL` (it is made beside the pool)",
            )
        self._lock = threading.RLock()
        try:  # synchronous FULL: every answer on disk when saved
            self._db = connect(self.path, isolation_level=None)
        except (OSError, sqlite3.OperationalError) as e:
            raise InputError(f"cannot open the annotation store: {e}", path=self.path) from None
        except sqlite3.DatabaseError as e:
            raise _not_a_store(self.path, e) from None
        try:
            self._check_or_init()
        except sqlite3.DatabaseError as e:
            self._db.close()
            raise _not_a_store(self.path, e) from None
        except BaseException:
            self._db.close()
            raise

    # -- opening ------------------------------------------------------------------------------

    def _check_or_init(self) -> None:
        app_id = self._db.execute("PRAGMA application_id").fetchone()[0]
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        tables = self._db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
        if app_id == 0 and version == 0 and tables == 0:
            with self._lock:  # one transaction: a store is made whole or not at all
                self._db.executescript(
                    f"BEGIN IMMEDIATE;{_SCHEMA}"
                    f"PRAGMA application_id={APPLICATION_ID};"
                    f"PRAGMA user_version={SCHEMA_VERSION};"
                    f"INSERT INTO meta VALUES ('created_at', '{now_iso()}');COMMIT;"
                )
            return
        if app_id != APPLICATION_ID:
            raise InputError(
                "this SQLite file is not an annotation store",
                path=self.path,
                hint="pass --store FILE naming a new file or a store made by `rankscope annotate`",
            )
        if version > SCHEMA_VERSION:
            check_version(self._db, SCHEMA_VERSION, what="the annotation store", path=self.path)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> AnnotationStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _read(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Any]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def _meta(self, key: str) -> str | None:
        row = self._read("SELECT value FROM meta WHERE key = ?", (key,))
        return row[0][0] if row else None

    @staticmethod
    def _set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- setting up ---------------------------------------------------------------------------

    def load_pool(self, pool: Pool) -> int:
        """Copy the pool's pairs into a new store, or check that a store holds this pool (the
        same pairs in the same order; the texts already stored are kept). Returns the pairs."""
        given = [(e.query_id, e.doc_id) for e in pool.entries]
        for e in pool.entries:
            for field, value in (("query_id", e.query_id), ("doc_id", e.doc_id)):
                if _SURROGATE.search(value):
                    raise InputError(
                        f"a pool {field} holds a lone UTF-16 surrogate, which no file can keep",
                        path=pool.source,
                        value=value,
                        hint="fix the id in the pool",
                    )
        with self._write() as db:
            stored = [
                tuple(r) for r in db.execute("SELECT query_id, doc_id FROM pairs ORDER BY id")
            ]
            if not stored:
                db.executemany(
                    "INSERT INTO pairs (id, query_id, doc_id, query, title, text) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (i, e.query_id, e.doc_id, *map(_display_text, (e.query, e.title, e.text)))
                        for i, e in enumerate(pool.entries, 1)
                    ],
                )
                self._set_meta(db, "pool_source", str(pool.source or ""))
                return len(given)
        if stored != given:
            at = next(
                (i for i, (a, b) in enumerate(zip(stored, given, strict=False)) if a != b),
                min(len(stored), len(given)),
            )
            raise InputError(
                f"the store holds another pool ({len(stored)} pairs; this pool has "
                f"{len(given)}, and they differ from pair {at + 1} on)",
                path=self.path,
                value=given[at] if at < len(given) else None,
                hint="pass --store NEW.sqlite for this pool, or give the pool the store was made "
                f"from ({self._meta('pool_source') or 'unknown'})",
            )
        return len(given)

    def set_scale(self, scale: Scale) -> None:
        """Record the scale; a store keeps the grade range it was started with."""
        span = f"{scale.min_grade}..{scale.max_grade}"
        with self._write() as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'scale'").fetchone()
            if row is not None and row[0] != span:
                raise InputError(
                    f"the store's scale is {row[0]}, the template's {span}",
                    path=self.path,
                    hint="use the template the store was started with, or another --store",
                )
            self._set_meta(db, "scale", span)

    @property
    def grade_range(self) -> tuple[int, int]:
        span = self._meta("scale") or "0..3"
        low, _, high = span.partition("..")
        return int(low), int(high)

    def set_references(self, source: str, grades: Mapping[tuple[str, str], int]) -> tuple[int, int]:
        """Replace the ``source`` labels (``llm`` or ``qrels``) with ``grades``; returns (pairs
        of the pool labelled, labels for pairs outside the pool, left out)."""
        if source not in REFERENCE_SOURCES:
            raise InputError("unknown label source", value=source, hint="llm or qrels")
        ids = self._pair_ids()
        rows = [(ids[key], source, int(g)) for key, g in grades.items() if key in ids]
        with self._write() as db:
            db.execute("DELETE FROM labels WHERE source = ?", (source,))
            db.executemany("INSERT INTO labels VALUES (?, ?, ?)", rows)
        return len(rows), len(grades) - len(rows)

    def plan(self) -> AssignmentPlan | None:
        raw = self._meta("assignment")
        if raw is None:
            return None
        data = json.loads(raw)
        names = data["annotators"]
        return AssignmentPlan(
            None if names is None else tuple(names),
            float(data["overlap"]),
            int(data["seed"]),
            bool(data["rejudge"]),
        )

    def configure(
        self,
        annotators: Sequence[str] | None = None,
        *,
        overlap: float | None = None,
        seed: int | None = None,
        rejudge: bool | None = None,
    ) -> AssignmentPlan:
        """Make the queues, once: what is not given is taken from the store's plan, else the
        defaults (open, overlap 0.1, seed 0, pairs graded in the qrels left out).

        A store with judgments keeps its plan: a different one is refused, as it would move
        pairs some already judged.
        """
        old = self.plan()
        names = None if annotators is None else tuple(check_name(n) for n in annotators)
        if names is not None and not names:
            raise InputError("--annotators names no one", hint="e.g. --annotators alice,bob")
        plan = AssignmentPlan(
            names if names is not None else (old.annotators if old else None),
            float(overlap if overlap is not None else (old.overlap if old else DEFAULT_OVERLAP)),
            int(seed if seed is not None else (old.seed if old else 0)),
            bool(rejudge if rejudge is not None else (old.rejudge if old else False)),
        )
        if plan == old:
            return plan
        if plan.annotators is not None:  # validates names, overlap
            assign_pairs([], plan.annotators, overlap=plan.overlap, seed=plan.seed)
        with self._write() as db:
            if db.execute("SELECT 1 FROM judgments LIMIT 1").fetchone() is not None:
                assert old is not None
                changed = {
                    k: (v, plan.to_json()[k])
                    for k, v in old.to_json().items()
                    if plan.to_json()[k] != v
                }
                raise InputError(
                    "the store's queues were made with other settings and people have judged "
                    "from them: "
                    + "; ".join(f"{k} was {a!r}, now {b!r}" for k, (a, b) in changed.items()),
                    path=self.path,
                    hint="restart with the store's settings (or none: they are kept), or pass "
                    "--store NEW.sqlite to start over",
                )
            db.execute("DELETE FROM assignments")
            db.execute(
                "UPDATE pairs SET queued = CASE WHEN ? OR id NOT IN "
                "(SELECT pair_id FROM labels WHERE source = 'qrels') THEN 1 ELSE 0 END",
                (int(plan.rejudge),),
            )
            queued = [r[0] for r in db.execute("SELECT id FROM pairs WHERE queued ORDER BY id")]
            if plan.annotators is None:
                keep = [r[0] for r in db.execute("SELECT id FROM annotators")]
                queues = {aid: queued for aid in keep}
            else:
                marks = ",".join("?" * len(plan.annotators))
                db.execute(f"DELETE FROM annotators WHERE name NOT IN ({marks})", plan.annotators)
                queues = {}
                split = assign_pairs(queued, plan.annotators, overlap=plan.overlap, seed=plan.seed)
                for name, pairs in split.items():
                    queues[self._add_annotator(db, name)] = pairs
            for aid, pairs in queues.items():
                db.executemany("INSERT INTO assignments VALUES (?, ?)", [(aid, p) for p in pairs])
            self._set_meta(db, "assignment", json.dumps(plan.to_json()))
        return plan

    @staticmethod
    def _add_annotator(db: sqlite3.Connection, name: str) -> int:
        row = db.execute("SELECT id FROM annotators WHERE name = ?", (name,)).fetchone()
        if row is not None:
            return int(row[0])
        cur = db.execute(
            "INSERT INTO annotators (name, created_at) VALUES (?, ?)", (name, now_iso())
        )
        return int(cur.lastrowid or 0)

    def join(self, name: str) -> None:
        """Let ``name`` judge: in an open store a new name gets every queued pair; with fixed
        annotators only theirs is known."""
        check_name(name)
        plan = self.plan()
        if plan is None:
            raise InputError("the store has no queues yet", hint="start `rankscope annotate POOL`")
        if plan.annotators is not None:
            self._annotator_id(name)
            return
        with self._write() as db:
            if db.execute("SELECT 1 FROM annotators WHERE name = ?", (name,)).fetchone():
                return
            aid = self._add_annotator(db, name)
            db.execute(
                "INSERT INTO assignments SELECT ?, id FROM pairs WHERE queued ORDER BY id", (aid,)
            )

    # -- reading ------------------------------------------------------------------------------

    def _pair_ids(self) -> dict[tuple[str, str], int]:
        return {(q, d): int(i) for i, q, d in self._read("SELECT id, query_id, doc_id FROM pairs")}

    def _annotator_id(self, name: str) -> int:
        check_name(name)
        row = self._read("SELECT id FROM annotators WHERE name = ?", (name,))
        if not row:
            known = self.annotators()
            raise UnknownAnnotatorError(
                "no annotator of this name in the store",
                value=name,
                hint=("the annotators are " + ", ".join(known)) if known else "none has joined",
            )
        return int(row[0][0])

    def annotators(self) -> list[str]:
        return [r[0] for r in self._read("SELECT name FROM annotators ORDER BY id")]

    def pair_count(self) -> int:
        return int(self._read("SELECT COUNT(*) FROM pairs")[0][0])

    def pair(self, pair_id: int) -> AnnotationPair:
        rows = self._read(
            "SELECT id, query_id, doc_id, query, title, text FROM pairs WHERE id = ?", (pair_id,)
        )
        if not rows:
            raise UnknownPairError("no pair has this id", value=pair_id)
        return AnnotationPair(*rows[0])

    def pairs(self) -> list[AnnotationPair]:
        return [
            AnnotationPair(*r)
            for r in self._read(
                "SELECT id, query_id, doc_id, query, title, text FROM pairs ORDER BY id"
            )
        ]

    def queue(self, name: str) -> list[int]:
        aid = self._annotator_id(name)
        rows = self._read(
            "SELECT pair_id FROM assignments WHERE annotator_id = ? ORDER BY pair_id", (aid,)
        )
        return [int(r[0]) for r in rows]

    def answers(self, name: str) -> dict[int, Answer]:
        """``{pair id: the annotator's current answer}`` (grades and skips)."""
        aid = self._annotator_id(name)
        return {
            int(p): Answer(int(p), kind, grade, int(i), at)
            for p, kind, grade, i, at in self._read(_ANSWERS, {"a": aid})
        }

    def notes(self, name: str) -> dict[int, str]:
        """``{pair id: the annotator's latest note}`` (an empty note clears one: left out)."""
        aid = self._annotator_id(name)
        rows = self._read(
            "SELECT pair_id, note FROM judgments WHERE id IN (SELECT MAX(id) FROM judgments "
            "WHERE annotator_id = ? AND kind = 'note' GROUP BY pair_id)",
            (aid,),
        )
        return {int(p): n for p, n in rows if n}

    def progress(self, name: str) -> Progress:
        return self.state(name)[1]

    def next_item(self, name: str) -> QueueItem | None:
        """The pair to show: the first unanswered one in queue order, else the skipped ones in
        the order they were skipped; None when every pair is graded."""
        return self.state(name)[0]

    def state(self, name: str) -> tuple[QueueItem | None, Progress]:
        """The pair to show and the progress, read together (one read of the answers: plain
        tuples, as a queue may hold thousands)."""
        with self._lock:
            aid = self._annotator_id(name)
            queue = [
                int(r[0])
                for r in self._read(
                    "SELECT pair_id FROM assignments WHERE annotator_id = ? ORDER BY pair_id",
                    (aid,),
                )
            ]
            answers = {
                int(p): (kind, int(i)) for p, kind, _, i, _ in self._read(_ANSWERS, {"a": aid})
            }
        place = {p: i for i, p in enumerate(queue, 1)}
        mine = {p: a for p, a in answers.items() if p in place}
        graded = sum(1 for kind, _ in mine.values() if kind == "grade")
        progress = Progress(len(queue), graded, len(mine) - graded, len(queue) - graded)
        chosen = next((p for p in queue if p not in mine), None)
        skipped = False
        if chosen is None:
            later = sorted((i, p) for p, (kind, i) in mine.items() if kind == "skip")
            if not later:
                return None, progress
            chosen, skipped = later[0][1], True
        item = QueueItem(
            self.pair(chosen), place[chosen], self.notes(name).get(chosen, ""), skipped
        )
        return item, progress

    def references(self, source: str) -> dict[tuple[str, str], int]:
        rows = self._read(
            "SELECT p.query_id, p.doc_id, l.grade FROM labels AS l JOIN pairs AS p "
            "ON p.id = l.pair_id WHERE l.source = ?",
            (source,),
        )
        return {(q, d): int(g) for q, d, g in rows}

    def reference_labels(self, pair_id: int) -> dict[str, int]:
        rows = self._read("SELECT source, grade FROM labels WHERE pair_id = ?", (pair_id,))
        return {s: int(g) for s, g in rows}

    def reference_sources(self) -> list[str]:
        return [r[0] for r in self._read("SELECT DISTINCT source FROM labels ORDER BY source")]

    def grades(self) -> dict[str, dict[tuple[str, str], int]]:
        """``{annotator: {(query_id, doc_id): grade}}``: everyone's current grades."""
        keys = {p.id: (p.query_id, p.doc_id) for p in self.pairs()}
        out: dict[str, dict[tuple[str, str], int]] = {}
        for name in self.annotators():
            out[name] = {
                keys[p]: int(a.grade)
                for p, a in sorted(self.answers(name).items())
                if a.kind == "grade" and a.grade is not None
            }
        return out

    def log(self) -> list[Action]:
        """Every row of the log, oldest first."""
        rows = self._read(
            "SELECT j.id, a.name, j.pair_id, j.kind, j.grade, j.note, j.undoes, j.elapsed_ms, "
            "j.created_at FROM judgments AS j JOIN annotators AS a ON a.id = j.annotator_id "
            "ORDER BY j.id"
        )
        return [Action(*r) for r in rows]

    # -- writing ------------------------------------------------------------------------------

    def _check_assigned(self, aid: int, pair_id: object) -> int:
        if isinstance(pair_id, bool) or not isinstance(pair_id, int):
            raise AnnotationError("a pair id is an integer", value=pair_id)
        if not 1 <= pair_id <= 2**63 - 1:  # beyond SQLite's integers: no such pair either
            raise UnknownPairError("no pair has this id", value=pair_id)
        row = self._read(
            "SELECT EXISTS (SELECT 1 FROM pairs WHERE id = ?), EXISTS (SELECT 1 FROM "
            "assignments WHERE annotator_id = ? AND pair_id = ?)",
            (pair_id, aid, pair_id),
        )[0]
        if not row[0]:
            raise UnknownPairError("no pair has this id", value=pair_id)
        if not row[1]:
            raise NotAssignedError("this pair is not in the annotator's queue", value=pair_id)
        return pair_id

    def _append(
        self,
        name: str,
        pair_id: object,
        kind: Kind,
        *,
        grade: int | None = None,
        note: str | None = None,
        undoes: int | None = None,
        elapsed_ms: object = None,
    ) -> Action:
        aid = self._annotator_id(name)
        pid = self._check_assigned(aid, pair_id)
        if elapsed_ms is not None and (
            isinstance(elapsed_ms, bool)
            or not isinstance(elapsed_ms, int)
            or not 0 <= elapsed_ms <= ELAPSED_MAX_MS
        ):
            raise AnnotationError(
                f"elapsedMs is whole milliseconds from 0 to {ELAPSED_MAX_MS}", value=elapsed_ms
            )
        at = now_iso()
        with self._write() as db:
            cur = db.execute(
                "INSERT INTO judgments (annotator_id, pair_id, kind, grade, note, undoes, "
                "elapsed_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (aid, pid, kind, grade, note, undoes, elapsed_ms, at),
            )
            row_id = int(cur.lastrowid or 0)
        return Action(row_id, name, pid, kind, grade, note, undoes, elapsed_ms, at)

    def grade(
        self, name: str, pair_id: object, grade: object, *, elapsed_ms: object = None
    ) -> Action:
        low, high = self.grade_range
        if isinstance(grade, bool) or not isinstance(grade, int) or not low <= grade <= high:
            raise AnnotationError(f"a grade is an integer from {low} to {high}", value=grade)
        return self._append(name, pair_id, "grade", grade=grade, elapsed_ms=elapsed_ms)

    def skip(self, name: str, pair_id: object, *, elapsed_ms: object = None) -> Action:
        return self._append(name, pair_id, "skip", elapsed_ms=elapsed_ms)

    def note(self, name: str, pair_id: object, text: object) -> Action:
        if not isinstance(text, str):
            raise AnnotationError("a note is text", value=text)
        if len(text) > NOTE_MAX_CHARS:
            raise AnnotationError(
                f"a note is at most {NOTE_MAX_CHARS} characters", value=f"{len(text)} characters"
            )
        if "\x00" in text or _SURROGATE.search(text):
            raise AnnotationError(
                "a note may not hold NUL or a lone UTF-16 surrogate", value=text[:40]
            )
        return self._append(name, pair_id, "note", note=text)

    def undo(self, name: str) -> Answer | None:
        """Cancel the annotator's latest grade or skip (its pair comes back); None when there
        is nothing left to undo."""
        with self._lock:  # two undos at once cancel two answers, not one twice
            answers = self.answers(name)
            if not answers:
                return None
            last = max(answers.values(), key=lambda a: a.action_id)
            self._append(name, last.pair_id, "undo", undoes=last.action_id)
            return last


__all__ = [
    "APPLICATION_ID",
    "DEFAULT_OVERLAP",
    "NAME_RE",
    "NOTE_MAX_CHARS",
    "SCHEMA_VERSION",
    "Action",
    "AnnotationError",
    "AnnotationPair",
    "AnnotationStore",
    "Answer",
    "AssignmentPlan",
    "NotAssignedError",
    "Progress",
    "QueueItem",
    "UnknownAnnotatorError",
    "UnknownPairError",
    "check_name",
    "default_store_path",
]
