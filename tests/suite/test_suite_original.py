"""The full-text benchmark's original suite shape: spec objects per kind, a judgments list, the
boolean query string, and the errors for what it cannot express."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rankscope.errors import ConfigError
from rankscope.suite import load_suite, load_suite_text
from rankscope.suite.original import parse_boolean

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fts-quality" / "fts_quality_v1.yaml"


def test_the_original_suite_loads_unchanged() -> None:
    suite = load_suite(EXAMPLE)
    got = {q.id: (q.kind, q.text, q.field, q.fields, q.slop, q.must, q.should, q.must_not)
           for q in suite.queries}  # fmt: skip
    assert got == {
        "q1": ("query_string", "climate change", None, (), 0, (), (), ()),
        "q2": ("match", "renewable energy", "title", (), 0, (), (), ()),
        "q3": ("multi_match", "inflation rate", None,
               (("title", 3.0), ("description", 2.0), ("content", 1.0)), 0, (), (), ()),
        "q4": ("phrase", "artificial intelligence", "content", (), 2, (), (), ()),
        "q5": ("boolean", "(climate OR weather) AND NOT politics", None, (), 0, (),
               ("climate", "weather"), ("politics",)),
    }  # fmt: skip
    assert suite.qrels().to_dict()["q1"] == {"3f1c": 3, "9a2b": 1}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("(climate OR weather) AND NOT politics", ([], ["climate", "weather"], ["politics"])),
        ("a AND b AND NOT (c OR d)", (["a", "b"], [], ["c", "d"])),
        ("a OR b", ([], ["a", "b"], [])),
        ('"climate change" AND NOT politics', (["climate change"], [], ["politics"])),
    ],
)
def test_boolean_queries(query: str, expected: tuple[list[str], ...]) -> None:
    assert parse_boolean(query) == expected


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("(a OR b) AND c", "an OR group can stand beside NOT clauses only"),
        ("((a))", "nested parentheses"),
        ("(a", "unbalanced parentheses"),
        ("NOT a", "needs at least one term that is not NOT"),
        ("a AND", "AND or NOT without a term"),
        ("x" * 10_001, "at most 10000"),
    ],
)
def test_boolean_queries_it_cannot_express(query: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_boolean(query)


def _suite(query: str) -> str:
    return (
        "name: t\ncorpus: {type: jsonl, path: docs.jsonl}\n"
        "engines: [{name: x, engine: sqlite}]\nqueries:\n" + query
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "  - id: q\n    kind: match\n    match: {field: title, qurey: x}\n",
            "match: unknown field(s) qurey; match takes field, query",
        ),
        ("  - id: q\n    kind: match\n    match: {field: title}\n", "match needs `query`"),
        (
            "  - id: q\n    text: a\n    match: {field: t, query: b}\n    kind: match\n",
            "give the query once",
        ),
        (
            "  - id: q\n    text: a\n    judgments: [{doc_id: d}]\n",
            "judgments[0] is {'doc_id': 'd'}",
        ),
        (
            "  - id: q\n    kind: boolean\n    boolean: {query: '(a OR b) AND c'}\n",
            "an OR group can stand beside NOT clauses only",
        ),
    ],
)
def test_errors_name_the_file_and_line(tmp_path: Path, query: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_suite_text(_suite(query), base_dir=tmp_path, source="suite.yaml")
    text = str(info.value)
    assert message in text and "suite.yaml" in text


def test_the_original_suite_runs_on_sqlite_tantivy_and_postgres(
    tmp_path: Path, postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from rankscope.cli.app import main

    pytest.importorskip("tantivy")
    pytest.importorskip("psycopg")
    text = EXAMPLE.read_text().replace(
        "engines:\n",
        "engines:\n  - {name: postgres, engine: postgres, options: {dsn: '"
        + postgres_dsn
        + "'}}\n",
    )
    suite = tmp_path / "fts_quality_v1.yaml"
    suite.write_text(text)
    shutil.copy(EXAMPLE.parent / "corpus.jsonl", tmp_path / "corpus.jsonl")
    code = main(["bench", str(suite), "--output", str(tmp_path / "out"), "--quiet"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert sorted(c["name"] for c in results["configurations"]) == ["postgres", "sqlite", "tantivy"]
    assert results["failures"] == []
