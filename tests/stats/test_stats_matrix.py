"""One query set for every comparison: alignment, filled and dropped queries."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rankscope import Qrels, Run, evaluate
from rankscope.compare_io import load_scores
from rankscope.errors import InputError
from rankscope.stats import ScoreMatrix, align_scores

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_align_fills_missing_and_drops_outside_queries() -> None:
    aligned = align_scores(
        {"a": {"q1": 0.5, "q2": 0.25, "zz": 1.0}, "b": {"q2": 0.75}}, ["q1", "q2", "q3"]
    )
    assert aligned.values.tolist() == [[0.5, 0.25, 0.0], [0.0, 0.75, 0.0]]
    assert aligned.observed.tolist() == [[True, True, False], [False, True, False]]
    assert aligned.filled == (1, 2) and aligned.dropped == (1, 0)
    with pytest.raises(InputError, match="twice"):
        align_scores({"a": {}}, ["q1", "q1"])


def _qrels_and_runs() -> tuple[Qrels, list[Run]]:
    qrels = Qrels.from_dict({"1": {"d1": 1, "d2": 2}, "2": {"d3": 1}, "3": {"d4": 1}})
    full = Run.from_dict(
        {"1": {"d1": 2.0, "d2": 1.0}, "2": {"d3": 1.0}, "3": {"d9": 1.0}}, name="full"
    )
    partial = Run.from_dict(
        {"1": {"d2": 3.0, "d1": 1.0}, "2": {"d5": 1.0}, "extra": {"d1": 1.0}}, name="partial"
    )
    return qrels, [full, partial]


def test_load_scores_scores_every_qrels_query_and_counts() -> None:
    qrels, runs = _qrels_and_runs()
    scores = load_scores(qrels, runs, ["ndcg@10", "P@1"])
    assert scores.systems == ("full", "partial")
    assert scores.query_ids == ("1", "2", "3") and scores.n == 3
    assert scores.measures == ("ndcg@10", "P@1")
    assert scores.filled == (0, 1)  # partial lacks query 3
    assert scores.dropped == (0, 1)  # partial's query "extra" is not judged
    expected = evaluate(qrels, runs, ["ndcg@10"], average_over_qrels=True)
    for s, name in enumerate(scores.systems):
        assert scores.scores("ndcg@10")[s].tolist() == expected.values("ndcg@10", name).tolist()
    assert scores.scores("ndcg_cut.10") is not None  # any accepted spelling
    with pytest.raises(InputError, match="not in these scores"):
        scores.scores("map")


def test_from_results_without_average_over_qrels_fills_zeros() -> None:
    qrels, runs = _qrels_and_runs()
    plain = ScoreMatrix.from_results(evaluate(qrels, runs, ["P@1"]))
    with_c = ScoreMatrix.from_results(evaluate(qrels, runs, ["P@1"], average_over_qrels=True))
    assert np.array_equal(plain.values, with_c.values)
    assert plain.filled == with_c.filled == (0, 1)
    counted = ScoreMatrix.from_results(evaluate(qrels, runs, ["P@1"]), dropped={"partial": 1})
    assert counted.dropped == (0, 1)
    with pytest.raises(InputError, match="not in the results"):
        ScoreMatrix.from_results(evaluate(qrels, runs, ["P@1"]), dropped={"other": 1})


def test_aggregate_only_measures_are_refused() -> None:
    qrels, runs = _qrels_and_runs()
    with pytest.raises(InputError, match="gm_map"):
        load_scores(qrels, runs, ["gm_map"])


def test_examples_from_files() -> None:
    scores = load_scores(
        EXAMPLES / "qrels.txt", [EXAMPLES / "bm25.run", EXAMPLES / "dense.run"], ["map"]
    )
    assert scores.systems == ("bm25", "dense") and scores.n == 10
    assert scores.filled == (0, 0) and scores.dropped == (0, 0)
    means = evaluate(
        EXAMPLES / "qrels.txt", [EXAMPLES / "bm25.run", EXAMPLES / "dense.run"], ["map"]
    )
    assert scores.scores("map").mean(axis=1).tolist() == pytest.approx(
        [means.mean("bm25")["map"], means.mean("dense")["map"]]
    )


def test_matrix_validation_and_select() -> None:
    x = np.arange(6, dtype=float).reshape(2, 3) / 10
    scores = ScoreMatrix.from_arrays(["a", "b"], ["q1", "q2", "q3"], {"m": x, "n": x * 2})
    picked = scores.select(systems=["b"], measures=["n"])
    assert picked.systems == ("b",) and picked.scores("n").tolist() == [[0.6, 0.8, 1.0]]
    assert scores.values.flags.writeable is False
    with pytest.raises(InputError, match="unique"):
        ScoreMatrix.from_arrays(["a", "a"], ["q1", "q2", "q3"], {"m": x})
    with pytest.raises(InputError, match="systems × queries"):
        ScoreMatrix.from_arrays(["a", "b"], ["q1", "q2"], {"m": x})
    with pytest.raises(InputError, match="no finite value"):
        ScoreMatrix.from_arrays(["a", "b"], ["q1", "q2", "q3"], {"m": x * np.nan})
    with pytest.raises(InputError, match="no system named"):
        scores.select(systems=["c"])
    per_query = ScoreMatrix.from_per_query(
        {"m": {"a": {"q1": 0.1}, "b": {"q2": 0.2, "q9": 0.5}}}, ["q1", "q2"]
    )
    assert per_query.filled == (1, 1) and per_query.dropped == (0, 1)
