"""``assert_no_regression``: the gate of ``rankscope check`` inside a test suite."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rankscope.data import read_run
from rankscope.testing.regression import assert_no_regression

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "check"))
from check_data import write_qrels, write_run


def test_it_passes_an_equal_candidate_and_fails_a_regression(tmp_path: Path) -> None:
    qrels = write_qrels(tmp_path / "qrels.txt")
    base = write_run(tmp_path / "base.run", "base")
    # a candidate as a value, as a user's own search code would produce it
    same = read_run(write_run(tmp_path / "same.run", "same"))
    passed = assert_no_regression(qrels, base, same, ["ndcg@10", "recip_rank"])
    assert passed.passed and [m.measure for m in passed.measures] == ["ndcg@10", "mrr"]
    worse = write_run(tmp_path / "worse.run", "worse", demoted=set(range(1, 61, 5)))
    with pytest.raises(AssertionError) as failed:
        assert_no_regression(qrels, base, worse, margin=0.02)
    text = str(failed.value)
    assert "FAIL  ndcg@10  baseline 1.0000  candidate 0.8846  Δ -0.1154" in text
    assert "FAIL: worse regresses from base on ndcg@10" in text
    # a floor alone fails an equal candidate
    with pytest.raises(AssertionError, match=r"candidate 1\.0000 < floor 1\.1"):
        assert_no_regression(qrels, base, same, floors={"ndcg@10": 1.1})
