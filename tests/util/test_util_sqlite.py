from __future__ import annotations

import os
import sqlite3
import stat
from contextlib import closing
from pathlib import Path

import pytest

from rankscope.errors import EngineError, InputError, JudgeError
from rankscope.util.sqlite import check_version, connect


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_is_private_with_the_pragmas(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "a.sqlite"
    db = connect(path)
    db.execute("CREATE TABLE t (x)")
    db.execute("INSERT INTO t VALUES (1)")
    db.commit()
    names = ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
    pragmas = [db.execute(f"PRAGMA {p}").fetchone()[0] for p in names]
    assert pragmas == ["wal", 2, 1, 30000]
    for name in ("a.sqlite", "a.sqlite-wal", "a.sqlite-shm"):
        assert _mode(path.parent / name) == 0o600, name
    db.close()
    fast = connect(path, synchronous="NORMAL")
    assert fast.execute("PRAGMA synchronous").fetchone()[0] == 1
    fast.close()


def test_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    sqlite3.connect(path).close()
    os.chmod(path, 0o640)
    connect(path).close()
    assert _mode(path) == 0o640


def test_versions_are_stamped_and_a_newer_file_refused(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    db = connect(path)
    assert check_version(db, 3, what="the test store", path=path) == 0
    assert db.execute("PRAGMA user_version").fetchone()[0] == 3
    assert check_version(db, 3, what="the test store", path=path) == 3
    db.execute("PRAGMA user_version=4")
    expected = r"the test store .*v\.sqlite has schema version 4; this rankscope reads up to 3: "
    with pytest.raises(InputError, match=expected + "upgrade rankscope"):
        check_version(db, 3, what="the test store", path=path)
    db.close()


def test_files_written_before_versions_still_open(tmp_path: Path) -> None:
    """A judgment cache and an embedding cache as the unversioned code wrote them: read as
    they are, and stamped version 1."""
    from rankscope.engines.embeddings import EmbeddingCache
    from rankscope.judge.cache import _SCHEMA, JudgmentCache

    path = tmp_path / "cache.sqlite"
    old = sqlite3.connect(path)
    old.execute(_SCHEMA)
    old.commit()
    old.close()
    cache = JudgmentCache(path)
    cache.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1

    emb = tmp_path / "emb.sqlite"
    old = sqlite3.connect(emb)
    old.execute(
        "CREATE TABLE embeddings (model TEXT NOT NULL, text_sha256 BLOB NOT NULL, "
        "vector BLOB NOT NULL, PRIMARY KEY (model, text_sha256)) WITHOUT ROWID"
    )
    old.execute("INSERT INTO embeddings VALUES ('m', x'01', x'0000803f')")
    old.commit()
    old.close()
    cached = EmbeddingCache(emb)
    try:
        assert cached.get_many("m", [b"\x01"])[b"\x01"].tolist() == [1.0]
    finally:
        cached.close()


def test_newer_stores_are_refused_with_their_own_error(tmp_path: Path) -> None:
    from rankscope.engines.embeddings import EmbeddingCache
    from rankscope.judge.batch_store import BatchStore
    from rankscope.judge.cache import JudgmentCache

    for name in ("cache.sqlite", "emb.sqlite", "batches.sqlite"):
        db = sqlite3.connect(tmp_path / name)
        db.execute("PRAGMA user_version=99")
        db.close()
    with pytest.raises(JudgeError, match=r"the judgment cache .* has schema version 99"):
        JudgmentCache(tmp_path / "cache.sqlite")
    with pytest.raises(EngineError, match=r"the embedding cache .* has schema version 99"):
        EmbeddingCache(tmp_path / "emb.sqlite")
    with pytest.raises(JudgeError, match=r"the batch record .* has schema version 99"):
        BatchStore(tmp_path)
