"""Files a benchmark writes get the mode the user's umask gives (not mkstemp's 0600)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from bench_suites import make_suite

from rankscope.bench import run_benchmark
from rankscope.suite import load_suite


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_output_files_honour_the_umask(tmp_path: Path, umask: int) -> None:
    engines = "- {name: first, engine: sqlite, chunking: {size: 8, overlap: 2}}"
    suite = load_suite(make_suite(tmp_path, engines))
    previous = os.umask(umask)
    try:
        run_benchmark(suite, tmp_path / "out")
    finally:
        os.umask(previous)
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    names = {p.relative_to(tmp_path / "out").as_posix() for p in files}
    assert {"results.json", "manifest.json", "suite.resolved.yaml", "qrels.txt"} <= names
    assert {"runs/first.trec", "chunks/first.jsonl", "configs/first.json"} <= names
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path
