"""Rendering a diff: the terminal table fits 80 columns, Markdown and the terminal keep texts from
the files inert (markup, HTML, control characters), JSON carries every value exactly."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from prerequisites import shared_data, shared_data_root
from rankscope.diff import diff_runs
from rankscope.engines.base import Document
from rankscope.report.rundiff import md, to_json, to_markdown, to_text
from rankscope.util.markup import printable as plain

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "diff"))
from diff_data import CRANFIELD, EXAMPLES, HAVE_CRANFIELD, cranfield_bench

QRELS = str(EXAMPLES / "qrels.txt")
BM25 = str(EXAMPLES / "bm25.run")
DENSE = str(EXAMPLES / "dense.run")
HOSTILE = shared_data_root() / "hostile" / "strings.jsonl"


def hostile() -> dict[str, str]:
    shared_data("hostile", "strings.jsonl")  # skips, or fails under CI=true, when absent
    rows = [json.loads(line) for line in HOSTILE.read_text(encoding="utf-8").splitlines()]
    return {r["name"]: r["text"] for r in rows}


def test_table_fits_80_columns_and_states_the_summary() -> None:
    diff = diff_runs(QRELS, BM25, DENSE)
    text = to_text(diff)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[0] == "dense vs bm25: ndcg@10, 10 queries, top 10 shown"
    assert lines[1] == "mean: bm25 0.6556, dense 0.7427; Δ = dense - bm25 = +0.0871"
    assert lines[2] == "dense: 7 wins, 3 losses, 0 ties (equal values; 0 with identical top 10)"
    assert "▲ 102  ndcg@10 0.5380 → 0.8454, Δ +0.3074; judged@10 10/10 → 10/10" in text
    row = next(line for line in lines if line.lstrip().startswith("1  wiki-35035"))
    assert row.split() == ["1", "wiki-35035", "0", "gone", "│", "wiki-87765", "3", "↑3"]
    assert text.count("▼ ") == 3 and text.count("▲ ") == 7


@pytest.mark.skipif(not HAVE_CRANFIELD, reason=f"no Cranfield data in {CRANFIELD}")
def test_long_titles_are_cut_to_the_width(tmp_path: Path) -> None:
    from rankscope.diff import diff_benchmark

    out = cranfield_bench(tmp_path)
    diff = diff_benchmark(out, "bm25", "classic").select(limit=3)
    for width in (80, 120):
        text = to_text(diff, width=width)
        assert max(len(line) for line in text.splitlines()) <= width
        assert "…" in text  # titles and the query text were cut, not wrapped


def payload_diff() -> tuple[object, dict[str, str]]:
    strings = hostile()
    doc = "<script>alert(1)</script>[bold]x[/bold]"
    qrels = {"q|1": {doc: 1, "plain": 0}}
    run_a = {"q|1": {doc: 2.0, "plain": 1.0, "\x1b[31mred": 0.5}}
    run_b = {"q|1": {"plain": 2.0, doc: 1.0}}
    corpus = {
        doc: Document(doc, strings["control_chars"] + strings["html_script"], "*emph* [l](x)"),
        "plain": Document("plain", strings["rtl_override"], strings["html_attr_break"]),
    }
    diff = diff_runs(
        qrels,
        run_a,
        run_b,
        "ndcg@10",
        queries={"q|1": strings["html_script"] + strings["crlf"]},
        categories={"q|1": "<b>cat</b>"},
        corpus=corpus,
    )
    return diff, strings


def test_terminal_output_writes_no_control_character() -> None:
    diff, _ = payload_diff()
    text = to_text(diff, width=200)  # type: ignore[arg-type]
    assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
    assert "\\x1b[31mred" in text  # shown, escaped
    assert "[bold]x[/bold]" in text  # rich markup shown as text, not applied
    assert "<script>alert(1)</script>" in text


def test_markdown_escapes_every_payload() -> None:
    diff, _ = payload_diff()
    text = to_markdown(diff)  # type: ignore[arg-type]
    body = "\n".join(line.removeprefix("> ") for line in text.splitlines())  # blockquotes
    assert "<" not in body and ">" not in body  # no tag: every one is an entity
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "\\*emph\\* \\[l\\](x)" in text
    assert "q\\|1" in text and "\x1b" not in text
    table_rows = [line for line in text.splitlines() if line.startswith("| ")]
    # every row of the side-by-side has its 7 cells: no payload split a cell
    assert {line.replace("\\|", "").count("|") for line in table_rows} == {8}
    assert md("a|b") == "a\\|b" and plain("a\tb") == "a\\x09b"


def test_json_is_exact_and_complete() -> None:
    diff = diff_runs(QRELS, BM25, DENSE).select(limit=2)
    data = json.loads(to_json(diff))
    assert data["counts"] == {"queries": 10, "wins": 7, "losses": 3, "ties": 0, "identical": 0}
    assert data["shown"] == 2 and data["filters"] == ["first 2 of 10"]
    q = data["queries"][0]
    assert q["query_id"] == "102" and q["delta"] == diff.shown[0].delta
    assert q["a"]["value"] == diff.shown[0].a.value
    assert q["a"]["rows"][0] == {
        "rank": 1,
        "doc_id": "wiki-35035",
        "score": 27.2854,
        "grade": 0,
        "judged": True,
        "other_rank": None,
        "moved": "gone",
        "title": "",
        "snippet": "",
    }
    assert data["a"]["name"] == "bm25" and data["a"]["mean"] == diff.a.mean


def test_json_of_a_lone_surrogate_is_still_json() -> None:
    # JSON corpora may hold "\ud800" (valid JSON, not Unicode): a title UTF-8 cannot carry
    corpus = {"d": Document("d", "text", "t\ud800")}
    diff = diff_runs({"q": {"d": 1}}, {"q": {"d": 1.0}}, {"q": {"x": 1.0}}, corpus=corpus)
    text = to_json(diff)
    text.encode("utf-8")  # writable
    assert json.loads(text)["queries"][0]["a"]["rows"][0]["title"] == "t\ud800"
    assert "\ud800" not in to_text(diff) and "t\\ud800" in to_text(diff)  # escaped
