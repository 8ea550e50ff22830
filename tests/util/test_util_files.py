from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rankscope.util.files import (
    PRIVATE_MODE,
    atomic_write,
    atomic_write_json,
    atomic_write_text,
    current_umask,
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_text_is_written_whole_with_the_shared_mode(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "results.txt"
    assert atomic_write_text(path, "a\r\nb\n") == path
    assert path.read_bytes() == b"a\r\nb\n"  # line ends as given
    assert _mode(path) == 0o666 & ~current_umask()
    assert sorted(p.name for p in path.parent.iterdir()) == ["results.txt"]


def test_a_secret_is_private(tmp_path: Path) -> None:
    path = tmp_path / "keys.env"
    atomic_write_text(path, "KEY=x\n", private=True)
    assert _mode(path) == PRIVATE_MODE == 0o600
    # rewriting it shared gives the shared mode: the mode is the call's, not the old file's
    atomic_write_text(path, "x\n")
    assert _mode(path) == 0o666 & ~current_umask()


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    atomic_write_json(path, {"a": [1.5, float("inf")], "name": "é"})
    assert (
        path.read_text(encoding="utf-8")
        == '{\n  "a": [\n    1.5,\n    Infinity\n  ],\n  "name": "é"\n}\n'
    )

    def broken(tmp: Path) -> None:
        tmp.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        atomic_write(path, broken)
    assert path.read_text(encoding="utf-8").startswith('{\n  "a"')
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_the_temporary_file_is_unique_and_beside_the_target(tmp_path: Path) -> None:
    seen: list[Path] = []

    def write(tmp: Path) -> None:
        seen.append(tmp)
        tmp.write_text(str(len(seen)))

    atomic_write(tmp_path / "x.trec", write)
    atomic_write(tmp_path / "x.trec", write)
    assert seen[0] != seen[1]
    assert all(p.parent == tmp_path and p.name.startswith(".x.trec.") for p in seen)
    assert (tmp_path / "x.trec").read_text() == "2"
    assert not any(p.exists() for p in seen)


def test_a_umask_of_077_is_honoured(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        atomic_write_text(tmp_path / "a.csv", "x\n")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a.csv") == 0o600
