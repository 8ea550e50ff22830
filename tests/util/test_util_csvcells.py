from __future__ import annotations

import csv
import io
import time

import pytest

from rankscope.util.csvcells import cell, csv_table, neutralise, restore

CASES = [
    ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
    ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("+A1", "'+A1"),
    ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
    ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"),
    ("-", "'-"),
    ("'=x", "''=x"),  # one more apostrophe: restore gives back exactly the text
    ("''@x", "'''@x"),
    # numbers are never text to neutralise
    ("-0.5", "-0.5"),
    ("-1", "-1"),
    ("+3", "+3"),
    ("-.5e-3", "-.5e-3"),
    ("-inf", "-inf"),
    ("nan", "nan"),
    # nothing to do
    ("q1", "q1"),
    ("'quoted", "'quoted"),
    ("a=b", "a=b"),
    ("", ""),
]


@pytest.mark.parametrize(("text", "written"), CASES)
def test_neutralise_and_restore(text: str, written: str) -> None:
    assert neutralise(text) == written
    assert restore(written) == text


def test_cells_by_type() -> None:
    assert [cell(v) for v in ("-x", -0.5, 3, None, True, float("-inf"), 0.1)] == [
        "'-x", "-0.5", "3", "", "true", "-inf", "0.1",
    ]  # fmt: skip


def test_csv_table_reads_back_through_restore() -> None:
    rows: list[list[str | float | None]] = [["=a,b", -0.25, "x\ny"], ["'=c", None, "@d"]]
    text = csv_table(["h1", "=h2", "h3"], rows)
    assert text == "h1,'=h2,h3\n\"'=a,b\",-0.25,\"x\ny\"\n''=c,,'@d\n"
    back = [[restore(c) for c in row] for row in csv.reader(io.StringIO(text, newline=""))]
    assert back == [["h1", "=h2", "h3"], ["=a,b", "-0.25", "x\ny"], ["'=c", "", "@d"]]


@pytest.mark.parametrize(
    "text",
    ["=" + "x" * 10_000, "'" * 10_000 + "=", "-" * 10_000, "=\x00\ud800", "-" + "1" * 10_000 + "x"],
    ids=["long formula", "apostrophes", "dashes", "NUL and lone surrogate", "almost a number"],
)
def test_hostile_texts_round_trip_quickly(text: str) -> None:
    start = time.perf_counter()
    assert restore(neutralise(text)) == text
    assert time.perf_counter() - start < 0.1
