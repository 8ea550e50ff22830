"""Code-search judgments by pattern (``settings.relevance: pattern``): the original code-search
benchmark's recall and nDCG, computed by rankscope's own measures over pattern units."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from rankscope.bench.evaluation import evaluate_runs
from rankscope.data.run import Run
from rankscope.engines.base import Document
from rankscope.errors import ConfigError
from rankscope.suite.loader import load_suite
from rankscope.suite.relevance import CodeExpectation, JudgmentSet, PatternCredit

MEASURES = ["recall@5", "ndcg@5", "recall@1", "ndcg@1"]


def original(ranked: list[str], files: list[str], k: int) -> tuple[float, float]:
    """The original code-search benchmark's formulas (expected_files only): a retrieved file
    counts for the first expected pattern it contains that is not yet found; recall@k = found
    patterns / expected patterns; nDCG@k = DCG of the counted positions over the ideal DCG of
    min(len(expected_files), k) positions."""
    found: set[str] = set()
    dcg = 0.0
    for rank, path in enumerate(ranked[:k], start=1):
        new = next((p for p in files if p in path and p not in found), None)
        if new is not None:
            found.add(new)
            dcg += 1 / math.log2(rank + 1)
    idcg = sum(1 / math.log2(r + 1) for r in range(1, min(len(files), k) + 1))
    return len(found) / len(files), dcg / idcg


def scores(
    corpus: list[str], ranked: list[str], files: list[str], symbols: Sequence[str] = ()
) -> dict[str, dict[str, float]]:
    """recall and nDCG at 5 and 1 of one query, by document and by pattern."""
    judgments = JudgmentSet(code={"q": CodeExpectation(tuple(files), tuple(symbols))})
    docs = [Document(id=d, text="") for d in corpus]
    run = Run.from_dict({"q": {d: float(len(ranked) - i) for i, d in enumerate(ranked)}})
    by_document = evaluate_runs(judgments.resolve(docs), {"r": run}, MEASURES, depth=100)
    credit = PatternCredit.of(judgments.code, docs)
    by_pattern = evaluate_runs(
        judgments.resolve((), by_pattern=True), {"r": credit.credit(run)}, MEASURES, depth=100
    )
    return {"document": by_document.mean("r"), "pattern": by_pattern.mean("r")}


CORPUS = ["src/parser.py", "tests/parser_test.py", "src/render_a.py", "src/render_b.py",
          "src/util.py", "README.md"]  # fmt: skip


def test_a_pattern_matching_two_files_one_retrieved() -> None:
    # the case of the audit: by document recall 0.5, nDCG 1 / (1 + 1/log2 3); by pattern 1, 1
    got = scores(CORPUS, ["src/parser.py", "README.md"], ["parser"])
    assert got["document"]["recall@5"] == 0.5
    assert got["document"]["ndcg@5"] == pytest.approx(1 / (1 + 1 / math.log2(3)), abs=1e-12)
    assert round(got["document"]["ndcg@5"], 3) == 0.613
    assert got["pattern"]["recall@5"] == 1.0
    assert got["pattern"]["ndcg@5"] == pytest.approx(1.0, abs=1e-12)
    recall, ndcg = original(["src/parser.py", "README.md"], ["parser"], 5)
    assert (recall, ndcg) == (1.0, 1.0)


def test_two_patterns_a_found_pattern_counts_once() -> None:
    ranked = ["src/render_a.py", "src/render_b.py", "src/util.py", "README.md"]
    got = scores(CORPUS, ranked, ["render", "util"])
    # by pattern: counted at ranks 1 and 3 (render_b's pattern is already found)
    assert got["pattern"]["recall@5"] == 1.0
    expected = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert got["pattern"]["ndcg@5"] == pytest.approx(expected, abs=1e-12)
    assert round(got["pattern"]["ndcg@5"], 4) == 0.9197
    assert got["pattern"]["recall@1"] == 0.5 and got["pattern"]["ndcg@1"] == 1.0
    # by document: the three matching files are ranks 1-3, all relevant
    assert got["document"]["recall@5"] == 1.0
    assert got["document"]["ndcg@5"] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    ("ranked", "files"),
    [
        (["src/parser.py", "README.md"], ["parser"]),
        (["src/render_a.py", "src/render_b.py", "src/util.py"], ["render", "util"]),
        (["README.md", "src/util.py", "src/render_b.py"], ["render", "util", "missing"]),
        (["src/render_a.py", "src/render_b.py"], ["render", "render_b"]),  # first unfound
        (["README.md", "tests/parser_test.py", "src/parser.py"], ["parser", "test"]),
        ([], ["parser"]),
        (["src/util.py"] + [f"other{i}.py" for i in range(8)] + ["src/parser.py"], ["parser"]),
    ],
)
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_pattern_relevance_is_the_original_formulas(
    ranked: list[str], files: list[str], k: int
) -> None:
    corpus = sorted({*CORPUS, *ranked})
    judgments = JudgmentSet(code={"q": CodeExpectation(tuple(files))})
    docs = [Document(id=d, text="") for d in corpus]
    run = Run.from_dict({"q": {d: float(len(ranked) - i) for i, d in enumerate(ranked)}})
    credit = PatternCredit.of(judgments.code, docs)
    measures = [f"recall@{k}", f"ndcg@{k}"]
    got = evaluate_runs(
        judgments.resolve((), by_pattern=True), {"r": credit.credit(run)}, measures, depth=100
    ).mean("r")
    recall, ndcg = original(ranked, files, k)
    assert got[f"recall@{k}"] == pytest.approx(recall, abs=1e-12)
    assert got[f"ndcg@{k}"] == pytest.approx(ndcg, abs=1e-12)


def test_a_document_matching_two_patterns_counts_for_the_first_unfound() -> None:
    credit = PatternCredit.of(
        {"q": CodeExpectation(("core", "core/io"))},
        [Document(id="core/io.py", text=""), Document(id="core/io_extra.py", text="")],
    )
    run = Run.from_dict({"q": {"core/io.py": 2.0, "core/io_extra.py": 1.0, "x.py": 0.5}})
    assert credit.matches["q"] == {"core/io.py": (0, 1), "core/io_extra.py": (0, 1)}
    assert credit.credit(run).ranking("q") == [
        ("pattern:0", -1.0),
        ("pattern:1", -2.0),
        ("x.py", -3.0),
    ]


def test_credit_follows_trec_eval_order_and_leaves_other_queries() -> None:
    docs = [Document(id="a1", text=""), Document(id="a2", text="")]
    credit = PatternCredit.of({"q": CodeExpectation(("a",))}, docs)
    # a tie: trec_eval ranks a2 above a1 (doc id descending), so a2 is the one counted
    run = Run.from_dict({"q": {"a1": 1.0, "a2": 1.0}, "other": {"d": 0.5}})
    credited = credit.credit(run)
    assert credited.ranking("q") == [("pattern:0", -1.0), ("a1", -2.0)]
    assert credited.ranking("other") == [("d", 0.5)]


def test_a_document_named_like_a_unit_does_not_pass_for_one() -> None:
    credit = PatternCredit.of({"q": CodeExpectation(("zzz",))}, [Document(id="zzz", text="")])
    run = Run.from_dict({"q": {"pattern:0": 2.0, "zzz": 1.0}})
    assert credit.credit(run).ranking("q") == [("document:pattern:0", -1.0), ("pattern:0", -2.0)]


def test_symbols_count_as_patterns_and_in_the_ideal_dcg() -> None:
    # expected_files [util] and expected_symbols [render]: two patterns. The original's IDCG
    # is over min(len(expected_files), k) = 1 position, rankscope's over min(2, k): pinned here.
    docs = [
        Document(id="src/util.py", text="", fields={"symbols": "helper"}),
        Document(id="src/view.py", text="", fields={"symbols": "Render draw"}),
    ]
    judgments = JudgmentSet(code={"q": CodeExpectation(("util",), ("render",))})
    credit = PatternCredit.of(judgments.code, docs)
    assert credit.matches["q"] == {"src/util.py": (0,), "src/view.py": (1,)}
    run = Run.from_dict({"q": {"src/util.py": 2.0, "src/view.py": 1.0}})
    got = evaluate_runs(
        judgments.resolve((), by_pattern=True), {"r": credit.credit(run)}, MEASURES, depth=100
    ).mean("r")
    assert got["recall@5"] == 1.0 and got["ndcg@5"] == pytest.approx(1.0, abs=1e-12)
    assert got["recall@1"] == 0.5 and got["ndcg@1"] == 1.0
    only_symbol = Run.from_dict({"q": {"src/view.py": 1.0}})
    got = evaluate_runs(
        judgments.resolve((), by_pattern=True),
        {"r": credit.credit(only_symbol)},
        MEASURES,
        depth=100,
    ).mean("r")
    assert got["recall@5"] == 0.5
    assert got["ndcg@5"] == pytest.approx(1 / (1 + 1 / math.log2(3)), abs=1e-12)


def test_pattern_relevance_refuses_a_query_judged_also_otherwise() -> None:
    judgments = JudgmentSet(
        inline={"q": {"README.md": 2}}, code={"q": CodeExpectation(("parser",))}
    )
    with pytest.raises(ConfigError, match="query 'q' has expected files or symbols and also"):
        judgments.resolve((), by_pattern=True)


def test_pattern_qrels_keep_the_other_queries_judgments() -> None:
    judgments = JudgmentSet(
        graded={"g": {"d1": 2}},
        inline={"i": {"d2": 1}},
        needles={"n": "d3"},
        code={"c": CodeExpectation(("a", "b"), ("s",))},
    )
    assert judgments.resolve((), match_grade=2, by_pattern=True).to_dict() == {
        "c": {"pattern:0": 2, "pattern:1": 2, "pattern:2": 2},
        "g": {"d1": 2},
        "i": {"d2": 1},
        "n": {"d3": 3},
    }


def _suite(tmp_path: Path, relevance: str) -> Path:
    (tmp_path / "docs.jsonl").write_text('{"_id": "src/parser.py", "text": "parser"}\n')
    path = tmp_path / "suite.yaml"
    path.write_text(
        textwrap.dedent(
            f"""
            name: code
            corpus: {{type: jsonl, path: docs.jsonl}}
            settings: {{k: [5], max_k: 10, relevance: {relevance}}}
            queries:
              - {{id: one, text: parser, expected_files: [parser]}}
            engines: [{{name: x, engine: sqlite}}]
            """
        )
    )
    return path


def test_a_bad_relevance_value_names_the_file_and_line(tmp_path: Path) -> None:
    path = _suite(tmp_path, "patterns")
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    message = str(caught.value)
    # line 4: the settings line (the text starts with a blank line)
    assert "suite.yaml:4: settings.relevance" in message, message
    assert "'document' or 'pattern'" in message, message
