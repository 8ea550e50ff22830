"""``Run.from_dict`` / ``Qrels.from_dict`` (and so ``evaluate`` on dicts): ids as text, and bad
values refused with the query and document named, never truncated or crashing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from rankscope import evaluate
from rankscope.data import Qrels, Run, read_qrels, read_run
from rankscope.errors import InputError


def test_ids_that_are_not_text_read_as_text() -> None:
    # ids and values of other types than the annotations say, on purpose: they are converted
    run = Run.from_dict({1: {2: 0.5, "b": np.float32(0.25)}, "q": {"d": 1}})  # type: ignore[dict-item]
    assert run.query_ids == ("1", "q")
    assert run.ranking("1") == [("2", 0.5), ("b", 0.25)]
    qrels = Qrels.from_dict({1: {2: 1, "b": np.int64(2), "c": 1.0}})  # type: ignore[dict-item]
    assert qrels.to_dict() == {"1": {"2": 1, "b": 2, "c": 1}}
    got = evaluate({1: {2: 1}}, {1: {2: 0.5}}, ["map"])  # type: ignore[dict-item, arg-type]
    assert got.run().values.tolist() == [[1.0]]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"q": {"d": "x"}}, r"score of document 'd' in query 'q' is not a number \(got 'x'\)"),
        ({"q": {"d": True}}, r"score of document 'd' in query 'q' is not a number"),
        ({"q": {"d": None}}, r"score of document 'd' in query 'q' is not a number"),
        ({"q": {"d": float("nan")}}, r"score of document 'd' in query 'q' is NaN or infinite"),
        ({"q": {"a": 2.0, "d": float("inf")}}, r"document 'd' in query 'q' is NaN or infinite"),
        ({"q": {"d": 1.0}, "r": {"e": -np.inf}}, r"document 'e' in query 'r' is NaN"),
        ({"q": [("d", 1.0)]}, r"value of query 'q' is not a mapping"),
        ({1: {"d": 1.0}, "1": {"e": 1.0}}, r"query id '1' is given twice"),
        ({"": {"d": 1.0}}, r"an empty query id"),
        ({"q": {"": 1.0}}, r"query 'q' has an empty or repeated document id"),
        ({"q": {1: 1.0, "1": 2.0}}, r"query 'q' has an empty or repeated document id"),
    ],
)
def test_bad_runs_are_refused_by_name(data: dict[Any, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        Run.from_dict(data)
    with pytest.raises(InputError):
        evaluate({"q": {"d": 1}}, data, ["map"])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"q": {"d": 1.5}}, r"grade of document 'd' in query 'q' is not an integer \(got 1\.5\)"),
        ({"q": {"d": float("nan")}}, r"grade of document 'd' in query 'q' is not an integer"),
        ({"q": {"d": "1"}}, r"relevance of document 'd' in query 'q' is not a number"),
        ({"q": {"d": False}}, r"relevance of document 'd' in query 'q' is not a number"),
        ({1: {"d": 1}, "1": {"e": 1}}, r"query id '1' is given twice"),
    ],
)
def test_bad_qrels_are_refused_by_name(data: dict[Any, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        Qrels.from_dict(data)
    with pytest.raises(InputError, match=message):
        evaluate(data, {"q": {"d": 1.0}}, ["map"])


def test_the_readers_refuse_the_same_mappings() -> None:
    with pytest.raises(InputError, match="query id '1' is given twice"):
        read_run({1: {"d": 1.0}, "1": {"e": 1.0}})
    with pytest.raises(InputError, match="empty or repeated document id"):
        read_qrels({"q": {1: 1, "1": 0}})
    run = read_run({1: {2: 0.5}}, name="r")
    assert (run.query_ids, run.doc_ids.to_pylist(), run.scores.tolist()) == (("1",), ["2"], [0.5])


def test_empty_mappings_stay_empty() -> None:
    assert len(Run.from_dict({})) == 0
    assert Qrels.from_dict({"q": {}}).query_ids == ("q",)


@pytest.mark.parametrize("reader", [Run.from_dict, Qrels.from_dict, read_run, read_qrels])
def test_integers_beyond_64_bits_are_refused(reader: Any) -> None:
    with pytest.raises(InputError, match=r"of document 'd' in query 'q' is out of range"):
        reader({"q": {"d": 2**70}})
    assert len(reader({"q": {"d": 2**63 - 1}})) == 1


def test_large_numpy_float_scores_are_kept() -> None:
    run = Run.from_dict({"q": {"d": np.float64(1e20), "e": np.float32(3e30)}})  # type: ignore[dict-item]
    assert run.scores.tolist() == [float(np.float32(3e30)), 1e20]
