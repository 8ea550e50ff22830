"""Shared data for the statistics tests: Sakai's Table 5.1 (tests/prerequisites.py: skipped
when absent, a failure under CI=true)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from prerequisites import shared_data


@pytest.fixture(scope="session")
def sakai() -> NDArray[np.float64]:
    """Table 5.1: 3 systems (A, B, C) × 20 topics."""
    path = shared_data("stats", "sakai_table_5_1.tsv")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == ["query_id", "A", "B", "C"]
    rows = [[float(v) for v in line.split("\t")[1:]] for line in lines[1:] if line.strip()]
    return np.asarray(rows, dtype=np.float64).T
