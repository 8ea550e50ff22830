"""The needle benchmark: grading over the scripted server, metrics and aggregates."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from rankscope.engines.base import Hit
from rankscope.errors import FormatError, InputError
from rankscope.judge.needle import (
    WEIGHT_PRESETS,
    NeedleQuestion,
    PositionWeights,
    QuestionResult,
    RetrievalGrader,
    needle_rank,
    parse_grade,
    progress_line,
    read_questions,
    run_needle,
    summarize,
)
from rankscope.testing.llm_server import ErrorBody, Fail, Hang, Reply


@pytest.mark.parametrize(
    ("answer", "grade"),
    [
        ('{"grade": 8, "reasoning": "core answer"}', 8),
        ('Sure! Here is my verdict:\n```json\n{"grade": 6, "reasoning": "most"}\n```\nThanks', 6),
        ("8/10", 8),
        ("I would give this 7 out of 10.", 7),
        ("Grade: 9", 9),
        ("11", 10),  # clamped
        ('{"grade": 0}', 1),  # clamped
        ('{"grade": 7.6}', 8),
        ("eight", None),
        ("", None),
    ],
)
def test_parse_grade(answer: str, grade: int | None) -> None:
    assert parse_grade(answer).grade == grade


@pytest.mark.parametrize(
    ("answer", "grade", "raw", "clamped"),
    [
        ("11", 10, 11.0, True),
        ('{"grade": 0, "reasoning": "none"}', 1, 0.0, True),
        ("Grade: 10.4", 10, 10.4, True),
        ('{"grade": 7.6}', 8, 7.6, False),  # rounded, not clamped
        ("10/10", 10, 10.0, False),
        ("eight", None, None, False),
    ],
)
def test_parse_grade_keeps_the_number_and_says_when_it_clamped(
    answer: str, grade: int | None, raw: float | None, clamped: bool
) -> None:
    parsed = parse_grade(answer)
    assert (parsed.grade, parsed.raw_grade, parsed.clamped) == (grade, raw, clamped)


def _grader(server, settings):  # type: ignore[no-untyped-def]
    return RetrievalGrader.create("anthropic", None, settings, base_url=server.base_url)


def test_grader_over_http_never_raises(server, keys, fast_settings, caplog) -> None:  # type: ignore[no-untyped-def]
    server.enqueue(
        Reply('{"grade": 9, "reasoning": "has it"}'),
        Reply("Looks partial. 5/10"),
        Reply(""),
        *[Fail(500)] * 2,
        Hang(30.0, Reply("x")),
        Hang(30.0),
    )
    grader = _grader(server, fast_settings.model_copy(update={"max_retries": 1}))
    with caplog.at_level(logging.DEBUG, logger="rankscope.judge.needle"):
        first = grader.grade("What is X?", "X is Y", ["chunk about X is Y", "other"])
    assert (first.grade, first.reasoning) == (9, "has it") and first.latency_ms > 0
    assert "[1] chunk about X is Y" in server.requests[0].prompt
    assert "Expected answer: X is Y" in server.requests[0].prompt
    assert server.requests[0].model == "claude-sonnet-4-6"  # Sonnet-class default
    assert any("grading answer" in r.message for r in caplog.records)  # trace of the exchange
    assert grader.grade("q", "a", ["c"]).grade == 5
    empty = grader.grade("q", "a", ["c"])
    assert empty.grade is None and "empty" in empty.reasoning
    failed = grader.grade("q", "a", [])
    # A failed grading has no reasoning; the error has its own field (as the grading design).
    assert failed.grade is None and failed.reasoning is None
    assert failed.error is not None and failed.cost_usd == 0.0
    timed_out = grader.grade("q", "a", ["c"])
    assert timed_out.grade is None and timed_out.reasoning is None
    assert timed_out.error is not None and "timed out" in timed_out.error
    assert empty.error is None and empty.raw_answer == ""  # paid, but no grade in it


def test_grader_retries_a_200_that_is_an_error_or_lacks_content(  # type: ignore[no-untyped-def]
    server, keys, fast_settings
) -> None:
    server.enqueue(ErrorBody(), Reply("x", omit=("content",)), Reply("x", omit=("usage",)))
    server.handler = lambda req: Reply('{"grade": 7, "reasoning": "most"}')
    graded = _grader(server, fast_settings).grade("q", "a", ["c"])
    assert graded.grade == 7 and server.request_count == 4


def test_position_weights_and_total() -> None:
    m = PositionWeights()
    assert [m.weight(r) for r in (1, 2, 3, 4, 5, None)] == [1.0, 0.95, 0.95, 0.85, 0.85, 0.6]
    assert m.total_score(8, 1) == 8.0 and m.total_score(8, 3) == pytest.approx(7.6)
    assert m.total_score(10, None) == pytest.approx(6.0) and m.total_score(None, 1) is None
    steep = WEIGHT_PRESETS["steep"]
    assert [steep.weight(r) for r in (1, 2, 5, None)] == [1.0, 0.8, 0.8, 0.5]


def test_needle_rank_by_id_parent_or_text() -> None:
    hits = [Hit("doc1#0", 3.0, "alpha"), Hit("doc2#4", 2.0, "The Answer  is here"), Hit("x", 1.0)]
    assert needle_rank(hits, ["doc2"], "") == 2  # chunk of the needle document
    assert needle_rank(hits, ["doc1#0"], "") == 1
    assert needle_rank(hits, [], "answer is HERE") == 2
    assert needle_rank(hits, ["nope"], "absent") is None
    assert needle_rank([Hit("c7", 1.0, "")], ["d"], "", parents={"c7": "d"}) == 1


def _result(rank: int | None, grade: int | None, qid: str = "q") -> QuestionResult:
    ids = ("a", "b", "c", "d", "e")
    return QuestionResult(
        question_id=qid,
        question="q?",
        expected_answer="a",
        needle_found=rank is not None,
        rank=rank,
        hit_at_1=rank == 1,
        hit_at_5=rank is not None and rank <= 5,
        llm_grade=grade,
        llm_reasoning="",
        total_score=PositionWeights().total_score(grade, rank),
        latency_ms=1.0,
        grading_latency_ms=2.0,
        retrieved_ids=ids,
    )


def test_summary_aggregates() -> None:
    rs = [_result(1, 9, "1"), _result(3, 8, "2"), _result(None, 10, "3"), _result(2, None, "4")]
    s = summarize(rs, k=5)
    assert s.accuracy == 0.75 and s.hit_at_1_rate == 0.25 and s.hit_at_5_rate == 0.75
    assert s.mrr == pytest.approx((1 + 1 / 3 + 0 + 1 / 2) / 4)
    assert s.avg_llm_grade == pytest.approx(9.0) and s.graded == 3
    assert s.avg_total_score == pytest.approx((9.0 + 7.6 + 6.0) / 3)
    # totals 9.0, 7.6, 6.0, None over 4 questions; None never passes
    assert (s.pass_rate_8, s.pass_rate_7, s.pass_rate_6_5) == (0.25, 0.5, 0.5)


def test_progress_line() -> None:
    line = progress_line(3, 20, _result(1, 8))
    assert line == "[3/20] ✓ R1 G8 T8.0 (1ms) q?"
    assert progress_line(1, 2, _result(None, None)).startswith("[1/2] ✗ R- G- T- ")


def test_run_needle_end_to_end(server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    corpus = {"n1": "The flutter speed is 450 knots.", "n2": "Lift grows with angle of attack."}

    def retrieve(question: str, k: int) -> list[Hit]:
        order = ["n1", "n2"] if "flutter" in question else ["n2", "n1"]
        return [Hit(d, 1.0, corpus[d]) for d in order][:k]

    server.handler = lambda req: Reply('{"grade": 8, "reasoning": "ok"}')
    qs = [
        NeedleQuestion("1", "What is the flutter speed?", "450 knots", ("n1",)),
        NeedleQuestion("2", "What does lift depend on?", "angle of attack", ("n2",)),
        NeedleQuestion("3", "Who built it?", "nobody knows", (), "not in any chunk"),
    ]
    seen: list[str] = []
    results, summary = run_needle(
        qs,
        retrieve,
        _grader(server, fast_settings),
        k=2,
        on_result=lambda i, n, r: seen.append(progress_line(i, n, r)),
    )
    assert [r.rank for r in results] == [1, 1, None]
    assert results[2].total_score == pytest.approx(8 * 0.6) and results[2].needle_found is False
    assert summary.accuracy == pytest.approx(2 / 3) and len(seen) == 3
    assert results[0].retrieved_ids == ("n1", "n2")


def test_read_questions(tmp_path: Path) -> None:
    y = tmp_path / "q.yaml"
    y.write_text(
        "questions:\n- id: a\n  question: What?\n  expected_answer: That\n  needle_id: d1\n"
        "- question: Why?\n  answer: Because\n  needle_text: because\n"
    )
    qs = read_questions(y)
    assert qs[0] == NeedleQuestion("a", "What?", "That", ("d1",), "")
    assert qs[1].id == "2" and qs[1].needle_text == "because"
    j = tmp_path / "q.jsonl"
    j.write_text('{"id": "x", "question": "Q", "expected_answer": "A"}\n')
    with pytest.raises(FormatError, match=r"q.jsonl:1: .*needle"):
        read_questions(j)


def test_custom_weights() -> None:
    m = PositionWeights(rank1=1.0, rank2_3=0.5, rank4_5=0.25, not_found=0.0)
    assert m.total_score(10, 2) == 5.0 and m.total_score(10, None) == 0.0


def test_retrieval_measures_come_from_evaluate() -> None:
    from rankscope.judge.needle import retrieval_measures

    got = retrieval_measures(
        [("q1", ("a", "b", "c"), 2), ("q2", (), None), ("q3", ("x", "y"), None)], k=3
    )
    assert got["q1"] == {"hit@1": 0.0, "hit@5": 1.0, "hit@k": 1.0, "mrr": 0.5}
    assert got["q2"] == got["q3"] == {"hit@1": 0.0, "hit@5": 0.0, "hit@k": 0.0, "mrr": 0.0}


def test_a_pipeline_in_the_working_folder_and_a_chunked_engine(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    server,
    keys,  # type: ignore[no-untyped-def]
) -> None:
    from rankscope.cli.app import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_rag_pipeline.py").write_text(
        "def retrieve(question, k):\n"
        "    return ['The flutter speed is 450 knots.', {'id': 'n2', 'text': 'lift'}][:k]\n"
    )
    questions = tmp_path / "q.yaml"
    questions.write_text(
        "- {id: a, question: what flutter speed, expected_answer: 450 knots,\n"
        "   needle_text: 450 knots}\n"
    )
    server.handler = lambda req: Reply("9")
    url = ["--base-url", server.base_url]
    assert main(["needle", str(questions), "--pipeline", "my_rag_pipeline:retrieve", *url]) == 0
    assert "[1] The flutter speed is 450 knots." in server.requests[0].prompt
    corpus = tmp_path / "corpus.jsonl"
    words = " ".join(f"w{i}" for i in range(40))
    corpus.write_text(
        '{"_id": "long", "text": "' + words + ' the flutter speed is 450 knots"}\n'
        '{"_id": "other", "text": "lift and drag"}\n'
    )
    questions.write_text(
        "- {id: a, question: flutter speed knots, expected_answer: 450 knots, needle_id: long}\n"
    )
    out = tmp_path / "out"
    args = ["needle", str(questions), "--corpus", str(corpus), "--chunk-size", "10", "-k", "2"]
    assert main([*args, *url, "--out", str(out)]) == 0
    row = json.loads((out / "results.jsonl").read_text())
    assert row["rank"] == 1 and row["retrieved_ids"][0].startswith("long#")  # a chunk of it


def test_output_never_pairs_a_summary_with_other_results(tmp_path: Path) -> None:
    from rankscope.judge.needle import NeedleOutput, summarize

    out = NeedleOutput.at(tmp_path / "run")
    settings = {"k": 5}
    out.start(settings, [])
    out.append(_result(1, 9, "1"))
    out.finish(summarize([_result(1, 9, "1")], 5))
    assert out.summary.is_file() and out.earlier(settings) == []  # finished: a new run is fresh
    out.start(settings, [])
    assert not out.summary.exists() and out.results.read_text() == ""
    out.append(_result(2, 7, "1"))  # interrupted here
    kept = out.earlier(settings)
    assert [r.rank for r in kept] == [2]
    with pytest.raises(InputError, match=r"other settings \(k differ\)"):
        out.earlier({"k": 3})
    file_mode = NeedleOutput.at(tmp_path / "res.jsonl")
    assert (
        file_mode.summary.name == "res.summary.json" and file_mode.manifest.name == "res.run.json"
    )
