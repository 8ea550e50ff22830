"""Judging a pool: cache, null labels, checkpoint/resume, --fresh, dry-run estimates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankscope.errors import ProviderError
from rankscope.judge.cache import JudgmentCache
from rankscope.judge.config import JudgeSettings
from rankscope.judge.judging import RelevanceJudge, estimate, judge_pool, read_judgments
from rankscope.judge.pool import Pool, PoolEntry
from rankscope.judge.providers import make_provider
from rankscope.testing.llm_server import Fail, RecordedRequest, Reply, ScriptedLLMServer

ANSWERS = {
    "doc-a": "The passage answers it. M=3 T=3\n##final score: 3",
    "doc-b": '{"score": 1, "reasoning": "related"}',
    "doc-c": "eight",  # unparseable -> null
    "doc-d": "11",  # out of range -> null
    "doc-e": "0",
}


def _pool() -> Pool:
    return Pool(
        tuple(
            PoolEntry("q1", d, (("run", i + 1),), query="wing flutter", text=f"text of {d}")
            for i, d in enumerate(ANSWERS)
        )
    )


def _answer(req: RecordedRequest) -> Reply:
    for doc, text in ANSWERS.items():
        if f"text of {doc}" in req.prompt:
            return Reply(text, input_tokens=200, output_tokens=10)
    return Reply("")


def _judge(server: ScriptedLLMServer, cache: JudgmentCache, settings: JudgeSettings, **kw):  # type: ignore[no-untyped-def]
    provider = make_provider("anthropic", "claude-haiku", settings, base_url=server.base_url)
    return RelevanceJudge(provider, cache=cache, **kw)


def test_labels_nulls_outputs_and_cost(tmp_path: Path, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    server.handler = _answer
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        summary = judge_pool(_pool(), _judge(server, cache, fast_settings), tmp_path / "out")
    assert summary.paid_calls == 5 and summary.judged == 5 and not summary.failed
    rows = {r["doc_id"]: r for r in read_judgments(tmp_path / "out" / "judgments.jsonl")}
    assert {d: r["label"] for d, r in rows.items()} == {
        "doc-a": 3, "doc-b": 1, "doc-c": None, "doc-d": None, "doc-e": 0,
    }  # fmt: skip
    assert "no score" in rows["doc-c"]["reason"] and "outside" in rows["doc-d"]["reason"]
    assert rows["doc-a"]["rationale"] == "The passage answers it. M=3 T=3"
    assert rows["doc-b"]["rationale"] == "related"
    assert rows["doc-c"]["raw_text"] == "eight" and rows["doc-a"]["raw_response"]["id"]
    qrels = (tmp_path / "out" / "qrels.txt").read_text().splitlines()
    assert sorted(qrels) == ["q1 0 doc-a 3", "q1 0 doc-b 1", "q1 0 doc-e 0"]  # judged only
    # claude-haiku-4-5: $1 in / $5 out per million tokens
    assert summary.usage.cost_usd == pytest.approx(5 * (200 * 1 + 10 * 5) / 1e6)
    saved = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert saved["labels"] == {"0": 1, "1": 1, "3": 1, "null": 2}


def test_second_run_is_free_even_into_a_new_folder(tmp_path, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    server.handler = _answer
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge_pool(_pool(), _judge(server, cache, fast_settings), tmp_path / "one")
        assert server.request_count == 5
        again = judge_pool(_pool(), _judge(server, cache, fast_settings), tmp_path / "two")
    assert server.request_count == 5  # the cache answered every pair
    assert again.paid_calls == 0 and again.from_cache == 5
    one = [r["label"] for r in read_judgments(tmp_path / "one" / "judgments.jsonl")]
    two = [r["label"] for r in read_judgments(tmp_path / "two" / "judgments.jsonl")]
    assert sorted(map(str, one)) == sorted(map(str, two))


def test_fresh_bypasses_cache_and_restarts_output(tmp_path, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    server.handler = _answer
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge_pool(_pool(), _judge(server, cache, fast_settings), tmp_path / "out")
        s = judge_pool(_pool(), _judge(server, cache, fast_settings, fresh=True), tmp_path / "out")
    assert server.request_count == 10 and s.paid_calls == 5
    assert len(read_judgments(tmp_path / "out" / "judgments.jsonl")) == 5


def test_changing_the_template_is_a_new_cache_key(tmp_path, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    from rankscope.judge.prompts import PromptTemplate

    server.handler = _answer
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge_pool(_pool(), _judge(server, cache, fast_settings), tmp_path / "a")
        other = _judge(server, cache, fast_settings, template=PromptTemplate("{query}|{passage}"))
        judge_pool(_pool(), other, tmp_path / "b")
    assert server.request_count == 10


def test_another_model_misses_the_cache(tmp_path, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    server.handler = _answer
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        haiku = _judge(server, cache, fast_settings)
        judge_pool(_pool(), haiku, tmp_path / "a")
        provider = make_provider(
            "anthropic", "claude-sonnet", fast_settings, base_url=server.base_url
        )
        other = judge_pool(_pool(), RelevanceJudge(provider, cache=cache), tmp_path / "b")
        again = judge_pool(_pool(), haiku, tmp_path / "c")
    assert (other.paid_calls, other.from_cache) == (5, 0)  # each model answers for itself
    assert (again.paid_calls, again.from_cache) == (0, 5)
    assert server.request_count == 10
    models = {r["model"] for r in read_judgments(tmp_path / "b" / "judgments.jsonl")}
    assert models == {provider.model} != {haiku.provider.model}


def test_resume_skips_rows_already_written(tmp_path, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    server.handler = _answer
    out = tmp_path / "out"
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge_pool(_pool(), _judge(server, cache, fast_settings), out)
    lines = (out / "judgments.jsonl").read_text().splitlines(keepends=True)
    # as if killed while writing the fourth row: two whole rows and half a line survive
    (out / "judgments.jsonl").write_text("".join(lines[:2]) + lines[2][:40])
    with JudgmentCache(tmp_path / "other-cache.sqlite") as empty_cache:
        s = judge_pool(_pool(), _judge(server, empty_cache, fast_settings), out)
    assert s.resumed == 2 and s.paid_calls == 3
    rows = read_judgments(out / "judgments.jsonl")
    assert len(rows) == 5 and len({r["doc_id"] for r in rows}) == 5


def test_failures_are_reported_not_cached(tmp_path, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    def flaky(req: RecordedRequest) -> Reply | Fail:
        return Fail(500, "down") if "doc-b" in req.prompt else _answer(req)

    server.handler = flaky
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        s = judge_pool(_pool(), _judge(server, cache, fast_settings), tmp_path / "out")
        assert [f[1] for f in s.failed] == ["doc-b"] and s.judged == 4
        assert len(cache) == 4
        server.handler = _answer  # the provider recovers; a rerun does only the missing pair
        s2 = judge_pool(_pool(), _judge(server, cache, fast_settings), tmp_path / "out")
    assert s2.paid_calls == 1 and s2.resumed == 4 and not s2.failed


def test_fatal_error_stops_the_run(tmp_path, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    server.handler = lambda req: Fail(404, "model not found")
    with JudgmentCache(tmp_path / "c.sqlite") as cache, pytest.raises(ProviderError, match="404"):
        judge_pool(_pool(), _judge(server, cache, fast_settings), tmp_path / "o", concurrency=1)
    assert server.request_count <= 2  # stops instead of failing every pair


def test_dry_run_estimate_spends_nothing(tmp_path, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    server.handler = _answer
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge = _judge(server, cache, fast_settings)
        est = estimate(_pool(), judge, fast_settings)
        assert server.request_count == 0
        assert est.calls == 5 and est.cached == 0
        assert est.input_tokens > 5 * 100  # the default prompt is a few hundred tokens
        assert est.output_tokens == 5 * fast_settings.expected_output_tokens
        # claude-haiku-4-5: $1 in / $5 out per million tokens
        assert est.cost_usd == pytest.approx((est.input_tokens + 5 * est.output_tokens) / 1e6)
        judge_pool(_pool(), judge, tmp_path / "out")
        est2 = estimate(_pool(), judge, fast_settings, tmp_path / "out")
    assert (est2.calls, est2.already_done) == (0, 5)


def test_concurrent_judging_writes_every_row_once(tmp_path, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    server.handler = lambda req: Reply("2")
    pool = Pool(
        tuple(
            PoolEntry("q", f"d{i}", (("r", i + 1),), query="query", text=f"passage {i}")
            for i in range(40)
        )
    )
    with JudgmentCache(tmp_path / "c.sqlite") as cache:
        s = judge_pool(pool, _judge(server, cache, fast_settings), tmp_path / "o", concurrency=8)
    rows = read_judgments(tmp_path / "o" / "judgments.jsonl")
    assert s.paid_calls == 40 and len({r["doc_id"] for r in rows}) == 40 == len(rows)


def test_a_pool_without_query_texts_is_refused_by_the_library(tmp_path: Path) -> None:
    from rankscope.errors import InputError

    pool = Pool((PoolEntry("1", "d1", (("r", 1),), query="", text="t"),), source="p.jsonl")
    judge = RelevanceJudge.__new__(RelevanceJudge)  # never used: the pool is refused first
    with pytest.raises(InputError, match=r"p.jsonl: 1 pool queries have no text"):
        estimate(pool, judge, JudgeSettings())
    with pytest.raises(InputError, match=r"p.jsonl: 1 pool queries have no text"):
        judge_pool(pool, judge, tmp_path)


def test_calls_in_flight_stay_at_the_concurrency_when_nothing_times_out(
    tmp_path, server, keys, fast_settings
) -> None:  # type: ignore[no-untyped-def]
    # Errors and dropped connections are retried but are no sign of a server queue: only
    # timeouts lower the number of calls in flight.
    from rankscope.testing.llm_server import Hang, Reset

    server.enqueue(Fail(500), Reset(), Fail(503), Reset())
    server.handler = lambda req: Hang(0.3, Reply("2"))
    pool = Pool(
        tuple(
            PoolEntry("q", f"d{i}", (("r", i + 1),), query="query", text=f"passage {i}")
            for i in range(24)
        )
    )
    with JudgmentCache(tmp_path / "c.sqlite") as cache:
        s = judge_pool(pool, _judge(server, cache, fast_settings), tmp_path / "o", concurrency=8)
    assert s.judged == 24 and not s.failed and server.request_count == 28
    assert s.concurrency == 8 and s.concurrency_lowest == 8
    assert server.max_in_flight == 8
