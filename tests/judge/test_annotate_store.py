"""The annotation store: a private, versioned SQLite file; an append-only log whose latest
un-undone answer counts; queues made once; nothing lost to a killed process."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from annotate_helpers import make_pool, new_store

from rankscope.errors import InputError
from rankscope.judge.annotate.store import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    AnnotationError,
    AnnotationStore,
    NotAssignedError,
    Progress,
    UnknownAnnotatorError,
    UnknownPairError,
    default_store_path,
)
from rankscope.judge.pool import Pool, PoolEntry

SRC = Path(__file__).resolve().parents[2] / "src"


def test_store_file_is_private_versioned_and_marked(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    store = new_store(path)
    store.join("alice")
    store.grade("alice", 1, 2)
    for name in ("a.sqlite", "a.sqlite-wal", "a.sqlite-shm"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
    store.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 1
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def test_default_store_sits_beside_the_pool(tmp_path: Path) -> None:
    assert default_store_path(tmp_path / "pool.jsonl") == tmp_path / "pool.annotations.sqlite"


def test_foreign_newer_and_missing_files_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(InputError, match="not an annotation store"):
        AnnotationStore(other)
    text = tmp_path / "notes.txt"
    text.write_text("not a database at all, just text " * 50)
    with pytest.raises(InputError, match="not an annotation store"):
        AnnotationStore(text)
    newer = tmp_path / "newer.sqlite"
    new_store(newer).close()
    db = sqlite3.connect(newer)
    db.execute("PRAGMA user_version=2")
    db.commit()
    db.close()
    with pytest.raises(InputError, match="schema version 2; this rankscope reads up to 1"):
        AnnotationStore(newer)
    with pytest.raises(InputError, match="no annotation store here"):
        AnnotationStore(tmp_path / "missing.sqlite")


def test_a_store_keeps_its_pool(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    new_store(path).close()
    with AnnotationStore(path) as store:
        assert store.load_pool(make_pool()) == 12  # the same pool again: fine
        with pytest.raises(InputError, match=r"another pool \(12 pairs; this pool has 8.*pair 1"):
            store.load_pool(Pool(make_pool(2, 4).entries[::-1]))
        assert store.pair_count() == 12


def test_lone_surrogates_are_replaced_in_texts_and_refused_in_ids(tmp_path: Path) -> None:
    entry = PoolEntry("q1", "d1", (), query="cancer \ud800 tumor", title="\udc00", text="x")
    store = AnnotationStore(tmp_path / "a.sqlite", create=True)
    store.load_pool(Pool((entry,)))
    pair = store.pair(1)
    assert (pair.query, pair.title) == ("cancer \ufffd tumor", "\ufffd")
    bad = PoolEntry("q\ud800", "d1", ())
    with pytest.raises(InputError, match="lone UTF-16 surrogate"):
        AnnotationStore(tmp_path / "b.sqlite", create=True).load_pool(Pool((bad,)))


def test_grades_skips_notes_and_undo(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.sqlite")
    store.join("alice")
    item = store.next_item("alice")
    assert item is not None and (item.pair.id, item.position, item.skipped) == (1, 1, False)
    store.grade("alice", 1, 3, elapsed_ms=1500)
    store.skip("alice", 2)
    store.grade("alice", 3, 0)
    assert store.progress("alice") == Progress(12, 2, 1, 10)
    item = store.next_item("alice")
    assert item is not None and item.pair.id == 4  # the skipped pair waits for the end
    undone = store.undo("alice")
    assert undone is not None and (undone.pair_id, undone.kind, undone.grade) == (3, "grade", 0)
    item = store.next_item("alice")
    assert item is not None and item.pair.id == 3
    store.grade("alice", 3, 1)
    store.note("alice", 3, "half on topic")
    store.note("alice", 1, "first")
    store.note("alice", 1, "")  # an empty note clears it
    assert store.notes("alice") == {3: "half on topic"}
    for pair in range(4, 13):
        store.grade("alice", pair, 2)
    item = store.next_item("alice")
    assert item is not None and (item.pair.id, item.skipped) == (2, True)
    store.grade("alice", 2, 1)
    assert store.next_item("alice") is None
    assert store.progress("alice") == Progress(12, 12, 0, 0)
    # undo walks back: the grade of 2, then pair 12, ...
    assert [store.undo("alice").pair_id for _ in range(3)] == [2, 12, 11]  # type: ignore[union-attr]
    answers = store.answers("alice")
    assert answers[2].kind == "skip"  # the grade is undone; the skip before it stands
    kinds = [a.kind for a in store.log()]
    assert kinds.count("undo") == 4 and kinds.count("note") == 3
    assert store.grades()["alice"][("q1", "q1d3")] == 1


def test_undo_with_nothing_to_undo(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.sqlite")
    store.join("alice")
    assert store.undo("alice") is None
    store.grade("alice", 1, 2)
    assert store.undo("alice") is not None
    assert store.undo("alice") is None


def test_the_log_is_append_only(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.sqlite")
    store.join("alice")
    store.grade("alice", 1, 2)
    store.close()
    db = sqlite3.connect(tmp_path / "a.sqlite")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute("UPDATE judgments SET grade = 3")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute("DELETE FROM judgments")
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        db.execute(
            "INSERT INTO judgments (annotator_id, pair_id, kind, created_at) "
            "VALUES (1, 1, 'grade', 'now')"
        )  # a grade row without a grade
    db.close()


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda s: s.grade("alice", 1, 4), AnnotationError),
        (lambda s: s.grade("alice", 1, -1), AnnotationError),
        (lambda s: s.grade("alice", 1, 2.0), AnnotationError),
        (lambda s: s.grade("alice", 1, True), AnnotationError),
        (lambda s: s.grade("alice", 1, "2"), AnnotationError),
        (lambda s: s.grade("alice", 999, 2), UnknownPairError),
        (lambda s: s.grade("alice", 0, 2), UnknownPairError),
        (lambda s: s.grade("alice", 2**80, 2), UnknownPairError),
        (lambda s: s.grade("alice", "1", 2), AnnotationError),
        (lambda s: s.grade("nobody", 1, 2), UnknownAnnotatorError),
        (lambda s: s.grade("bad name!", 1, 2), AnnotationError),
        (lambda s: s.grade("alice", 1, 2, elapsed_ms=-1), AnnotationError),
        (lambda s: s.grade("alice", 1, 2, elapsed_ms=86_400_001), AnnotationError),
        (lambda s: s.note("alice", 1, "x" * 2001), AnnotationError),
        (lambda s: s.note("alice", 1, "a\x00b"), AnnotationError),
        (lambda s: s.note("alice", 1, "\ud800"), AnnotationError),
        (lambda s: s.note("alice", 1, 5), AnnotationError),
    ],
)
def test_bad_answers_are_refused_and_leave_no_row(
    tmp_path: Path, call: object, error: type
) -> None:
    store = new_store(tmp_path / "a.sqlite")
    store.join("alice")
    with pytest.raises(error):
        call(store)  # type: ignore[operator]
    assert store.log() == []


def test_fixed_annotators_get_their_queues_only(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.sqlite", annotators=["alice", "bob"], overlap=0.25, seed=3)
    alice, bob = store.queue("alice"), store.queue("bob")
    assert len(set(alice) & set(bob)) == 3  # 25% of 12
    assert set(alice) | set(bob) == set(range(1, 13))
    assert len(alice) + len(bob) == 15
    outside = next(p for p in range(1, 13) if p not in alice)
    with pytest.raises(NotAssignedError):
        store.grade("alice", outside, 2)
    with pytest.raises(UnknownAnnotatorError, match="the annotators are alice, bob"):
        store.join("carol")
    store.join("alice")  # a known name joins as it is


def test_open_store_gives_every_newcomer_every_pair(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.sqlite")
    store.join("alice")
    store.join("bob")
    store.join("alice")  # again: nothing changes
    assert store.queue("alice") == store.queue("bob") == list(range(1, 13))
    store.grade("alice", 1, 3)
    store.grade("bob", 1, 1)
    assert store.grades() == {"alice": {("q1", "q1d1"): 3}, "bob": {("q1", "q1d1"): 1}}


def test_queues_are_made_once(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    store = new_store(path, annotators=["alice", "bob"])
    before = store.queue("alice")
    plan = store.configure()  # nothing given: the store's plan stands
    assert plan.annotators == ("alice", "bob") and plan.overlap == 0.1 and plan.seed == 0
    store.configure(["alice", "bob", "carol"])  # nothing judged yet: made again
    assert store.annotators() == ["alice", "bob", "carol"]
    store.configure(["alice", "bob"])
    assert store.annotators() == ["alice", "bob"] and store.queue("alice") == before
    store.grade("alice", before[0], 2)
    with pytest.raises(InputError, match=r"annotators was \['alice', 'bob'\], now"):
        store.configure(["alice", "bob", "carol"])
    with pytest.raises(InputError, match=r"overlap was 0\.1, now 0\.5"):
        store.configure(overlap=0.5)
    store.close()
    with AnnotationStore(path) as again:
        assert again.configure(seed=0).annotators == ("alice", "bob")


def test_pairs_graded_in_the_qrels_are_left_out_unless_rejudged(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path / "a.sqlite", create=True)
    store.load_pool(make_pool())
    kept, outside = store.set_references("qrels", {("q1", "q1d1"): 2, ("q9", "x"): 1})
    assert (kept, outside) == (1, 1)
    store.configure(None)
    store.join("alice")
    assert store.queue("alice") == list(range(2, 13))
    store.configure(rejudge=True)
    assert store.queue("alice") == list(range(1, 13))
    assert store.references("qrels") == {("q1", "q1d1"): 2}
    assert store.reference_labels(1) == {"qrels": 2}


def test_threads_answering_at_once_lose_nothing(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.sqlite", make_pool(queries=10, docs=10))
    names = [f"a{i}" for i in range(4)]
    for name in names:
        store.join(name)

    def work(name: str) -> None:
        for pair in range(1, 101):
            store.grade(name, pair, pair % 4)

    threads = [threading.Thread(target=work, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.log()) == 400
    assert all(len(g) == 100 for g in store.grades().values())


def test_answers_survive_a_killed_process(tmp_path: Path) -> None:
    """A process grades, then dies by SIGKILL before closing anything: every grade it was told
    was saved is in the store."""
    path = tmp_path / "a.sqlite"
    new_store(path).close()
    code = (
        "import os, signal, sys\n"
        "from rankscope.judge.annotate.store import AnnotationStore\n"
        f"s = AnnotationStore({str(path)!r})\n"
        "s.join('alice')\n"
        "for p in range(1, 8):\n"
        "    s.grade('alice', p, p % 4)\n"
        "print('saved', flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == -9 and done.stdout == "saved\n"
    with AnnotationStore(path) as store:
        assert store.grades()["alice"] == {
            (f"q{(p - 1) // 4 + 1}", f"q{(p - 1) // 4 + 1}d{(p - 1) % 4 + 1}"): p % 4
            for p in range(1, 8)
        }
        item = store.next_item("alice")
        assert item is not None and item.pair.id == 8
