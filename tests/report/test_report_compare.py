"""Renderers of a Comparison: every format shows the same numbers; marks; LaTeX escaping."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from rankscope.report import to_csv, to_json, to_latex, to_markdown, to_text
from rankscope.report.csv import CSV_COLUMNS
from rankscope.report.latex import latex_escape
from rankscope.report.numbers import BETTER, WORSE, fmt_p, fmt_value
from rankscope.stats import Comparison, ScoreMatrix, compare


def _comparison(test: str = "t") -> Comparison:
    rng = np.random.default_rng(0)
    topic = rng.random(40)
    x = np.clip(topic + rng.normal(0, 0.05, (3, 40)), 0, 1)
    x[1] += 0.1
    x[2] -= 0.1
    scores = ScoreMatrix.from_arrays(
        ["base_1", "up", "down"], [str(i) for i in range(40)], {"ndcg@10": x}
    )
    return compare(scores, test=test)  # type: ignore[arg-type]


def test_marks_in_text_and_markdown() -> None:
    c = _comparison()
    text = to_text(c)
    up = next(line for line in text.splitlines() if line.lstrip().startswith("up"))
    down = next(line for line in text.splitlines() if line.lstrip().startswith("down"))
    assert BETTER in up and WORSE not in up and WORSE in down
    md = to_markdown(c)
    assert "| up |" in md and BETTER in md and WORSE in md
    assert md.startswith("- 40 queries: the given queries")


def test_csv_and_json_hold_the_same_numbers() -> None:
    c = _comparison("randomization")
    rows = list(csv.DictReader(io.StringIO(to_csv(c))))
    assert list(rows[0]) == CSV_COLUMNS
    data = json.loads(to_json(c))
    for row, jrow in zip(rows, data["measures"][0]["rows"], strict=True):
        assert row["system"] == jrow["system"]
        assert float(row["mean"]) == jrow["mean"]
        if jrow["p_adjusted"] is not None:
            assert float(row["p_adjusted"]) == jrow["p_adjusted"]
            assert row["direction"] == (jrow["direction"] or "")
    assert rows[0]["delta"] == "" and rows[0]["is_baseline"] == "true"


def test_latex_escapes_names_and_marks() -> None:
    latex = to_latex(_comparison())
    assert r"base\_1 (baseline)" in latex
    assert r"$^{\blacktriangle}$" in latex and r"$^{\blacktriangledown}$" in latex
    assert latex_escape("a&b%c#d") == r"a\&b\%c\#d"


def test_number_formats() -> None:
    assert fmt_value(None) == "—" and fmt_value(float("inf"), signed=True) == "+inf"
    assert fmt_value(-0.00001) == "0.0000" and fmt_value(0.12345, signed=True) == "+0.1235"
    assert fmt_p(0.0) == "<0.0001" and fmt_p(0.04999) == "0.0500" and fmt_p(1.0) == "1.0000"


@pytest.mark.parametrize("test", ["tukey", "rtukey"])
def test_all_pairs_tables(test: str) -> None:
    text = to_text(_comparison(test))
    assert "ndcg@10: all pairs" in text and "simultaneous" in text
    assert "family-wise error controlled over all 3 pairs" in text
