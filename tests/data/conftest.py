"""Shared helpers for the data-layer tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from prerequisites import shared_data
from rankscope.data import Qrels, Run


@pytest.fixture
def trec_eval_dir() -> Path:
    return shared_data("trec_eval_test")


def assert_runs_equal(a: Run, b: Run, *, check_name: bool = True) -> None:
    if check_name:
        assert a.name == b.name
    assert a.query_ids == b.query_ids
    assert a.offsets.tolist() == b.offsets.tolist()
    assert a.doc_ids.to_pylist() == b.doc_ids.to_pylist()
    np.testing.assert_array_equal(a.scores, b.scores)


def assert_qrels_equal(a: Qrels, b: Qrels) -> None:
    assert a.query_ids == b.query_ids
    assert a.offsets.tolist() == b.offsets.tolist()
    assert a.doc_ids.to_pylist() == b.doc_ids.to_pylist()
    assert a.grades.tolist() == b.grades.tolist()


@pytest.fixture
def same_run() -> object:
    return assert_runs_equal


@pytest.fixture
def same_qrels() -> object:
    return assert_qrels_equal
