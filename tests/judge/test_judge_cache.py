"""The judgment cache: answers committed before ``put`` returns, commits shared by threads."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from rankscope.errors import JudgeError
from rankscope.judge.cache import CachedJudgment, CacheKey, JudgmentCache


def _key(i: int) -> CacheKey:
    return CacheKey("anthropic", "m", "t", f"q{i}", f"d{i}")


def _answer(i: int) -> CachedJudgment:
    return CachedJudgment(
        label=i % 4,
        reason=None,
        rationale="r",
        raw_text=f"##final score: {i % 4}",
        raw_response={"id": f"msg_{i}"},
        input_tokens=10,
        output_tokens=2,
        cost_usd=0.001,
        request_id=f"req_{i}",
        created_at="2025-01-01T00:00:00+00:00",
    )


class _GatedConnection:
    """Holds the first commit until ``release`` is set, so that other puts queue behind it."""

    def __init__(self, db: sqlite3.Connection, fail: bool = False) -> None:
        self.db = db
        self.fail = fail
        self.entered = threading.Event()
        self.release = threading.Event()
        self.batches: list[int] = []

    def executemany(self, sql: str, rows: list[Any]) -> None:
        self.batches.append(len(rows))
        if len(self.batches) == 1:
            self.entered.set()
            assert self.release.wait(10)
        if self.fail:
            raise sqlite3.OperationalError("disk I/O error")
        self.db.executemany(sql, rows)

    def commit(self) -> None:
        self.db.commit()

    def rollback(self) -> None:
        self.db.rollback()

    def close(self) -> None:
        self.db.close()


def _visible(path: Path, key: CacheKey) -> bool:
    """Whether another connection (another process, after a kill) sees the answer."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        row = db.execute("SELECT 1 FROM judgments WHERE key = ?", (key.digest,)).fetchone()
    return row is not None


def test_puts_that_overlap_share_a_commit_and_each_is_on_disk_when_put_returns(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cache.sqlite"
    cache = JudgmentCache(path)
    gate = _GatedConnection(cache._db)
    cache._db = gate  # type: ignore[assignment]
    seen_on_return: dict[int, bool] = {}

    def put(i: int) -> None:
        cache.put(_key(i), _answer(i))
        seen_on_return[i] = _visible(path, _key(i))

    first = threading.Thread(target=put, args=(0,))
    first.start()
    assert gate.entered.wait(10)  # the first answer is being committed
    others = [threading.Thread(target=put, args=(i,)) for i in range(1, 16)]
    for t in others:
        t.start()
    while len(cache._pending) < 15:  # every other answer queued for the next commit
        threading.Event().wait(0.001)
    assert not seen_on_return  # nobody returned before its commit
    gate.release.set()
    for t in [first, *others]:
        t.join(10)
    assert gate.batches == [1, 15] and cache.commits == 2
    assert seen_on_return == dict.fromkeys(range(16), True)
    assert cache.get(_key(7)) == _answer(7) and len(cache) == 16
    cache.close()


def test_a_failed_commit_fails_every_put_in_it_and_the_cache_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    cache = JudgmentCache(path)
    gate = _GatedConnection(cache._db, fail=True)
    cache._db = gate  # type: ignore[assignment]
    errors: dict[int, str] = {}

    def put(i: int) -> None:
        try:
            cache.put(_key(i), _answer(i))
        except JudgeError as e:
            errors[i] = str(e)

    threads = [threading.Thread(target=put, args=(i,)) for i in range(3)]
    threads[0].start()
    assert gate.entered.wait(10)
    for t in threads[1:]:
        t.start()
    while len(cache._pending) < 2:
        threading.Event().wait(0.001)
    gate.release.set()
    for t in threads:
        t.join(10)
    assert sorted(errors) == [0, 1, 2] and "disk I/O error" in errors[0]
    assert str(path) in errors[0] and len(cache) == 0
    gate.fail = False
    cache.put(_key(9), _answer(9))  # the next answer is stored
    assert _visible(path, _key(9)) and cache.commits == 1
    cache.close()


def test_reads_do_not_wait_for_a_commit_in_progress(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    cache = JudgmentCache(path)
    cache.put(_key(1), _answer(1))
    gate = _GatedConnection(cache._db)
    cache._db = gate  # type: ignore[assignment]
    writer = threading.Thread(target=cache.put, args=(_key(2), _answer(2)))
    writer.start()
    assert gate.entered.wait(10)
    try:
        # The commit is held: a lookup answers from the last committed state.
        assert cache.get(_key(1)) == _answer(1) and cache.get(_key(2)) is None
        assert _key(1) in cache and len(cache) == 1
    finally:
        gate.release.set()
        writer.join(10)
    assert cache.get(_key(2)) == _answer(2)
    cache.close()


def test_an_unusable_cache_path_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "dir.sqlite").mkdir()
    with pytest.raises(JudgeError, match="pass --cache"):
        JudgmentCache(tmp_path / "dir.sqlite")


@pytest.mark.parametrize("field", ["provider", "model", "template_hash", "query_hash", "doc_hash"])
def test_a_key_differing_in_one_field_misses(tmp_path: Path, field: str) -> None:
    key = CacheKey("anthropic", "claude-haiku", "t", "q", "d")
    other = replace(key, **{field: "other"})
    with JudgmentCache(tmp_path / "c.sqlite") as cache:
        cache.put(key, _answer(1))
        assert cache.get(key) is not None
        assert cache.get(other) is None  # another model's answer is never reused


def test_fields_are_kept_apart_in_the_key() -> None:
    # joined without a separator, ("ab", "c") and ("a", "bc") would be one key: another
    # model's (or another query's) answer reused
    base = CacheKey("anthropic", "m", "t", "q", "d")
    assert (
        replace(base, provider="ab", model="c").digest
        != replace(base, provider="a", model="bc").digest
    )
    assert (
        replace(base, query_hash="q1", doc_hash="2d").digest
        != replace(base, query_hash="q", doc_hash="12d").digest
    )
