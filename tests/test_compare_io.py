"""The loader of ``rankscope compare``: files in, a ScoreMatrix out; a baseline by its file."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.compare_io import compare_runs, load_scores, resolve_baseline
from rankscope.errors import InputError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
QRELS, BM25, DENSE = (str(EXAMPLES / f) for f in ("qrels.txt", "bm25.run", "dense.run"))


def test_load_scores_aligns_every_qrels_query() -> None:
    loaded = load_scores(QRELS, [BM25, DENSE], ["ndcg@10", "map"])
    assert loaded.systems == ("bm25", "dense")
    assert loaded.measures == ("ndcg@10", "map") and loaded.n == 10


def test_a_baseline_by_name_path_file_name_or_stem() -> None:
    runs = ["a/bm25.run", "b/dense.run"]
    systems = ("bm25-x", "dense-y")
    assert resolve_baseline("dense-y", runs, systems) == "dense-y"
    assert resolve_baseline("b/dense.run", runs, systems) == "dense-y"
    assert resolve_baseline("dense.run", runs, systems) == "dense-y"
    assert resolve_baseline("bm25", runs, systems) == "bm25-x"
    assert resolve_baseline("other", runs, systems) == "other"  # compare() refuses it
    with pytest.raises(InputError, match="matches several runs"):
        resolve_baseline("run", ["x/run", "y/run"], ("one", "two"))


def test_compare_runs_needs_two_runs_and_finds_the_baseline_by_file() -> None:
    with pytest.raises(InputError, match="at least two runs"):
        compare_runs(QRELS, [BM25])
    found = compare_runs(QRELS, [BM25, DENSE], ["map"], baseline="dense.run")
    assert found.baseline == "dense" and found.row("map", "dense").is_baseline
