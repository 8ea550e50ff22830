"""The needle benchmark: grading over the scripted server, metrics and aggregates."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from rankscope.engines.base import Hit
from rankscope.errors import FormatError
from rankscope.judge.needle import (
    WEIGHT_PRESETS,
    NeedleQuestion,
    PositionWeights,
    QuestionResult,
    RetrievalGrader,
    RetrievalMetrics,
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
    assert parse_grade(answer)[0] == grade


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
    assert failed.grade is None and "grading failed" in failed.reasoning
    timed_out = grader.grade("q", "a", ["c"])
    assert timed_out.grade is None and "timed out" in timed_out.reasoning


def test_grader_retries_a_200_that_is_an_error_or_lacks_content(  # type: ignore[no-untyped-def]
    server, keys, fast_settings
) -> None:
    server.enqueue(ErrorBody(), Reply("x", omit=("content",)), Reply("x", omit=("usage",)))
    server.handler = lambda req: Reply('{"grade": 7, "reasoning": "most"}')
    graded = _grader(server, fast_settings).grade("q", "a", ["c"])
    assert graded.grade == 7 and server.request_count == 4


def test_position_weights_and_total() -> None:
    m = RetrievalMetrics()
    assert [m.weights.weight(r) for r in (1, 2, 3, 4, 5, None)] == [
        1.0,
        0.95,
        0.95,
        0.85,
        0.85,
        0.6,
    ]
    assert m.total_score(8, 1) == 8.0 and m.total_score(8, 3) == pytest.approx(7.6)
    assert m.total_score(10, None) == pytest.approx(6.0) and m.total_score(None, 1) is None
    steep = RetrievalMetrics(WEIGHT_PRESETS["steep"])
    assert [steep.weights.weight(r) for r in (1, 2, 5, None)] == [1.0, 0.8, 0.8, 0.5]


def test_needle_rank_by_id_parent_or_text() -> None:
    hits = [Hit("doc1#0", 3.0, "alpha"), Hit("doc2#4", 2.0, "The Answer  is here"), Hit("x", 1.0)]
    rank = RetrievalMetrics.needle_rank
    assert rank(hits, ["doc2"], "") == 2  # chunk of the needle document
    assert rank(hits, ["doc1#0"], "") == 1
    assert rank(hits, [], "answer is HERE") == 2
    assert rank(hits, ["nope"], "absent") is None


def _result(rank: int | None, grade: int | None) -> QuestionResult:
    m = RetrievalMetrics()
    return QuestionResult(
        question_id="q",
        question="q?",
        expected_answer="a",
        needle_found=rank is not None,
        rank=rank,
        hit_at_1=rank == 1,
        hit_at_5=rank is not None and rank <= 5,
        llm_grade=grade,
        llm_reasoning="",
        total_score=m.total_score(grade, rank),
        latency_ms=1.0,
        grading_latency_ms=2.0,
    )


def test_summary_aggregates() -> None:
    rs = [_result(1, 9), _result(3, 8), _result(None, 10), _result(2, None)]
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
    m = RetrievalMetrics(PositionWeights(rank1=1.0, rank2_3=0.5, rank4_5=0.25, not_found=0.0))
    assert m.total_score(10, 2) == 5.0 and m.total_score(10, None) == 0.0
