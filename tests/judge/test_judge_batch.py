"""Judging through the batch APIs: same answers as the synchronous path at half the price, and
never a pair paid twice (cache, waiting batches, lost creates, interrupted collections).

Every call goes through the real SDKs to the scripted server on loopback, which counts what it
answers: ``server.requests`` holds one record per request a provider would bill or refuse.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from rankscope.errors import JudgeError
from rankscope.judge.batch import (
    batch_status,
    plan_batches,
    resume_batches,
    submit_batches,
)
from rankscope.judge.batch_store import BatchStore, folder_lock
from rankscope.judge.cache import JudgmentCache
from rankscope.judge.config import JudgeSettings
from rankscope.judge.judging import RelevanceJudge, estimate, judge_pool, read_judgments
from rankscope.judge.pool import Pool, PoolEntry
from rankscope.judge.providers import make_provider
from rankscope.testing.llm_server import (
    Action,
    ControlRequest,
    Expire,
    Fail,
    Lost,
    RecordedRequest,
    Reply,
    Reset,
    ScriptedLLMServer,
)

ANSWERS = {
    "doc-a": "The passage answers it. M=3 T=3\n##final score: 3",
    "doc-b": '{"score": 1, "reasoning": "related"}',
    "doc-c": "eight",  # unparseable -> null
    "doc-d": "##final score: 2",
    "doc-e": "0",
}
MODELS = {"anthropic": "claude-haiku", "openai": "gpt-4o-mini"}


def _pool(*docs: str, same_text_as: dict[str, str] | None = None) -> Pool:
    same = same_text_as or {}
    return Pool(
        tuple(
            PoolEntry(
                "q1", d, (("run", i + 1),), query="wing flutter", text=f"text of {same.get(d, d)}"
            )
            for i, d in enumerate(docs or ANSWERS)
        )
    )


def _doc(req: RecordedRequest) -> str:
    return req.prompt.split("text of ")[1].split()[0]


def _answer(req: RecordedRequest) -> Action:
    return Reply(ANSWERS.get(_doc(req), "1"), input_tokens=200, output_tokens=10)


def _url(server: ScriptedLLMServer, kind: str) -> str:
    return server.base_url if kind == "anthropic" else server.openai_base_url


def _judge(
    server: ScriptedLLMServer,
    cache: JudgmentCache,
    settings: JudgeSettings,
    kind: str = "anthropic",
) -> RelevanceJudge:
    provider = make_provider(kind, MODELS[kind], settings, base_url=_url(server, kind))
    return RelevanceJudge(provider, cache=cache)


def _resume(out: Path, judge: RelevanceJudge, cache: JudgmentCache, **kw: Any) -> Any:
    return resume_batches(out, judge.provider, cache, poll_interval=0, sleep=lambda s: None, **kw)


def _paid(server: ScriptedLLMServer) -> Counter[str]:
    """Answered requests per question (the custom_id names it): what a provider bills."""
    return Counter(_doc(r) for r in server.requests if r.outcome == "answered")


SAME_FIELDS = (
    "query_id", "doc_id", "label", "reason", "rationale", "raw_text", "provider", "model",
    "template_hash", "query_hash", "doc_hash", "input_tokens", "output_tokens", "cached",
    "passage_truncated", "passage_tokens",
)  # fmt: skip


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_batch_gives_the_synchronous_judgments_at_half_the_price(
    tmp_path: Path, server: ScriptedLLMServer, keys: None, fast_settings: JudgeSettings, kind: str
) -> None:
    server.handler = _answer
    server.batch_polls = 2
    # doc-f has doc-a's text: one question, asked once, answering both pairs
    pool = _pool(*ANSWERS, "doc-f", same_text_as={"doc-f": "doc-a"})
    with JudgmentCache(tmp_path / "sync.sqlite") as cache:
        sync = judge_pool(
            pool, _judge(server, cache, fast_settings, kind), tmp_path / "sync", concurrency=1
        )
    live = server.answered_count
    with JudgmentCache(tmp_path / "batch.sqlite") as cache:
        judge = _judge(server, cache, fast_settings, kind)
        report = submit_batches(pool, judge, tmp_path / "batch")
        assert [s.requests for s in report.submitted] == [5] and report.plan.request_pairs == 6
        assert (tmp_path / "batch" / "batches.json").exists()
        summary = _resume(tmp_path / "batch", judge, cache)
    assert live == 5 and server.answered_count == 10  # five questions, each paid once per path
    assert all(r.batch_id for r in server.requests[5:])
    sync_rows = read_judgments(tmp_path / "sync" / "judgments.jsonl")
    batch_rows = read_judgments(tmp_path / "batch" / "judgments.jsonl")
    key = lambda r: r["doc_id"]  # noqa: E731
    assert [{f: r[f] for f in SAME_FIELDS} for r in sorted(sync_rows, key=key)] == [
        {f: r[f] for f in SAME_FIELDS} for r in sorted(batch_rows, key=key)
    ]
    for s, b in zip(sorted(sync_rows, key=key), sorted(batch_rows, key=key), strict=True):
        assert b["cost_usd"] == pytest.approx(s["cost_usd"] * 0.5)
        assert b["batch_id"] == report.submitted[0].batch_id and s["batch_id"] is None
    assert (tmp_path / "sync" / "qrels.txt").read_text() == (
        tmp_path / "batch" / "qrels.txt"
    ).read_text()
    assert sync.spent is not None and summary.spent is not None
    assert summary.spent.calls == sync.spent.calls == 5
    assert sync.spent.cost_usd is not None
    assert summary.spent.cost_usd == pytest.approx(sync.spent.cost_usd * 0.5)
    assert summary.batch is not None and summary.batch.answered == 5
    assert json.loads((tmp_path / "batch" / "summary.json").read_text())["batch"]["pairs"] == 6


def test_pairs_judged_cached_or_waiting_are_never_submitted(
    tmp_path: Path, server: ScriptedLLMServer, keys: None, fast_settings: JudgeSettings
) -> None:
    server.handler = _answer
    server.batch_polls = 5
    out = tmp_path / "out"
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge = _judge(server, cache, fast_settings)
        judge_pool(_pool("doc-a", "doc-b"), judge, tmp_path / "elsewhere")  # into the cache
        first = submit_batches(_pool(), judge, out)
        assert (first.plan.cached, first.plan.requests) == (2, 3)
        assert len(read_judgments(out / "judgments.jsonl")) == 2  # cached rows, written at once
        again = submit_batches(_pool(), judge, out)
        assert (again.plan.already_done, again.plan.in_batches, again.plan.requests) == (2, 3, 0)
        assert again.submitted == ()
        # a new pair asking what a waiting request asks joins it instead of being sent
        more = submit_batches(_pool("doc-c", "doc-g", same_text_as={"doc-g": "doc-c"}), judge, out)
        assert (more.plan.in_batches, more.plan.requests) == (2, 0)
        assert len(server.batches) == 1 and server.answered_count == 2
        summary = _resume(out, judge, cache)
    rows = {r["doc_id"]: r for r in read_judgments(out / "judgments.jsonl")}
    assert sorted(rows) == ["doc-a", "doc-b", "doc-c", "doc-d", "doc-e", "doc-g"]
    assert rows["doc-g"]["raw_text"] == rows["doc-c"]["raw_text"] == "eight"
    assert rows["doc-g"]["cached"] and not rows["doc-c"]["cached"]
    assert _paid(server) == Counter({d: 1 for d in ANSWERS})  # each question paid once in all
    assert summary.spent is not None and summary.spent.calls == 3  # paid by this folder


def test_errored_and_expired_requests_go_again_answered_ones_never(
    tmp_path: Path, server: ScriptedLLMServer, keys: None, fast_settings: JudgeSettings
) -> None:
    seen: Counter[str] = Counter()

    def handler(req: RecordedRequest) -> Action:
        doc = _doc(req)
        seen[doc] += 1
        if doc == "doc-b" and seen[doc] == 1:
            return Fail(529, "Overloaded")  # retryable: submitted again
        if doc == "doc-c" and seen[doc] <= 2:
            return Expire()  # expired twice, answered the third time
        if doc == "doc-d":
            return Fail(400, "prompt too long", error_type="invalid_request_error")
        if doc == "doc-e":
            return Fail(500, "always down")
        return _answer(req)

    server.handler = handler
    out = tmp_path / "out"
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge = _judge(server, cache, fast_settings)
        submit_batches(_pool(), judge, out)
        summary = _resume(out, judge, cache)
    # max_retries=3: doc-e is sent in 4 batches, then given up; doc-d (a 400) only once
    assert seen == Counter({"doc-a": 1, "doc-b": 2, "doc-c": 3, "doc-d": 1, "doc-e": 4})
    assert _paid(server) == Counter({"doc-a": 1, "doc-b": 1, "doc-c": 1})
    assert len(server.batches) == 4
    batch_sizes = [len(b.items) for b in server.batches.values()]
    assert batch_sizes == [5, 3, 2, 1]  # only what errored or expired went again
    failed = {d: why for _, d, why in summary.failed}
    assert set(failed) == {"doc-d", "doc-e"}
    assert "invalid_request_error: prompt too long" in failed["doc-d"]
    assert "gave up after 4 batches" in failed["doc-e"]
    rows = read_judgments(out / "judgments.jsonl")
    assert sorted(r["doc_id"] for r in rows) == ["doc-a", "doc-b", "doc-c"]
    # a new submission (the user's explicit rerun) sends the failed ones again
    server.handler = _answer
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge = _judge(server, cache, fast_settings)
        rerun = submit_batches(_pool(), judge, out)
        assert rerun.plan.requests == 2
        _resume(out, judge, cache)
    assert _paid(server) == Counter({d: 1 for d in ANSWERS})


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_a_create_whose_answer_was_lost_is_found_not_sent_again(
    tmp_path: Path, server: ScriptedLLMServer, keys: None, fast_settings: JudgeSettings, kind: str
) -> None:
    server.handler = _answer

    def control(call: ControlRequest) -> Action | None:
        if call.operation == "batches.create" and not any(
            c.operation == "batches.create" for c in server.control_requests[: call.number - 1]
        ):
            return Lost(Reset())  # the batch is made; its id never reaches the client
        return None

    server.control = control
    out = tmp_path / "out"
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge = _judge(server, cache, fast_settings, kind)
        with pytest.raises(JudgeError, match=r"unconfirmed.*--resume"):
            submit_batches(_pool(), judge, out)
        with BatchStore(out) as store:
            assert [s.state for s in store.submissions()] == ["submitting"]
        # a new submission first asks the provider: nothing is sent while it is unknown
        assert submit_batches(_pool(), judge, out).submitted == ()
        summary = _resume(out, judge, cache)
    assert len(server.batches) == 1 and len(server.batch_calls("batches.create")) == 1
    assert _paid(server) == Counter({d: 1 for d in ANSWERS})
    assert summary.batch is not None and summary.batch.answered == 5
    assert len(read_judgments(out / "judgments.jsonl")) == 5


def test_a_create_that_made_nothing_is_sent_again(
    tmp_path: Path, server: ScriptedLLMServer, keys: None, fast_settings: JudgeSettings
) -> None:
    server.handler = _answer
    server.control = lambda call: (
        Reset() if call.operation == "batches.create" and not server.batches and call.number == 1
        else None
    )  # fmt: skip
    out = tmp_path / "out"
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge = _judge(server, cache, fast_settings)
        with pytest.raises(JudgeError, match="may or may not have been made"):
            submit_batches(_pool(), judge, out)
        assert not server.batches
        summary = _resume(out, judge, cache)  # none found: submitted again, then collected
    assert len(server.batches) == 1 and _paid(server) == Counter({d: 1 for d in ANSWERS})
    assert summary.batch is not None and summary.batch.batches == 1
    with BatchStore(out) as store:
        assert [s.state for s in store.submissions()] == ["abandoned", "collected"]


def test_refused_create_records_nothing_pending(
    tmp_path: Path, server: ScriptedLLMServer, keys: None, fast_settings: JudgeSettings
) -> None:
    server.control = lambda call: (
        Fail(403, "batches are not enabled") if call.operation == "batches.create" else None
    )
    out = tmp_path / "out"
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge = _judge(server, cache, fast_settings)
        with pytest.raises(JudgeError, match="batches are not enabled"):
            submit_batches(_pool(), judge, out)
        with BatchStore(out) as store:
            assert store.state_counts() == {"failed": 5}
            assert [s.state for s in store.submissions()] == ["abandoned"]
        server.control = None
        server.handler = _answer
        assert submit_batches(_pool(), judge, out).plan.requests == 5  # sent again on request
        _resume(out, judge, cache)
    assert _paid(server) == Counter({d: 1 for d in ANSWERS})


def test_a_collection_killed_after_caching_is_collected_again_for_free(
    tmp_path: Path,
    server: ScriptedLLMServer,
    keys: None,
    fast_settings: JudgeSettings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server.handler = _answer
    out = tmp_path / "out"
    real = BatchStore.finish_collection

    def killed(self: BatchStore, *a: Any, **kw: Any) -> None:
        raise KeyboardInterrupt  # answers are cached; their states were never recorded

    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge = _judge(server, cache, fast_settings)
        submit_batches(_pool(), judge, out)
        monkeypatch.setattr(BatchStore, "finish_collection", killed)
        with pytest.raises(KeyboardInterrupt):
            _resume(out, judge, cache)
        assert len(cache) == 5 and not (out / "judgments.jsonl").exists()
        monkeypatch.setattr(BatchStore, "finish_collection", real)
        summary = _resume(out, judge, cache)
    assert len(server.batches) == 1 and _paid(server) == Counter({d: 1 for d in ANSWERS})
    assert summary.paid_calls == 0  # paid for in the killed run, collected again for free
    assert summary.spent is not None and summary.spent.calls == 5
    assert len(read_judgments(out / "judgments.jsonl")) == 5


def test_a_synchronous_run_leaves_waiting_pairs_to_their_batches(
    tmp_path: Path, server: ScriptedLLMServer, keys: None, fast_settings: JudgeSettings
) -> None:
    server.handler = _answer
    server.batch_polls = 3
    out = tmp_path / "out"
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge = _judge(server, cache, fast_settings)
        submit_batches(_pool("doc-a", "doc-b"), judge, out)
        assert estimate(_pool(), judge, fast_settings, out).in_batches == 2
        summary = judge_pool(_pool(), judge, out)
    assert server.answered_count == 3  # doc-c, doc-d, doc-e; a and b wait in their batch
    assert {d for _, d, _ in summary.failed} == {"doc-a", "doc-b"}
    assert all("waiting in a batch" in why for *_, why in summary.failed)


def test_a_folder_keeps_one_setup_and_one_run_at_a_time(
    tmp_path: Path, server: ScriptedLLMServer, keys: None, fast_settings: JudgeSettings
) -> None:
    server.handler = _answer
    out = tmp_path / "out"
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        submit_batches(_pool(), _judge(server, cache, fast_settings), out)
        other = make_provider("anthropic", "claude-sonnet", fast_settings, base_url=server.base_url)
        with pytest.raises(JudgeError, match=r"another setup.*model"):
            plan_batches(_pool(), RelevanceJudge(other, cache=cache), out)
        with pytest.raises(JudgeError, match="were made with anthropic claude-haiku-4-5"):
            resume_batches(out, other, cache)
        with folder_lock(out), pytest.raises(JudgeError, match=r"another .* is working on"):
            resume_batches(out, _judge(server, cache, fast_settings).provider, cache)


def test_plan_cost_size_and_status(
    tmp_path: Path, server: ScriptedLLMServer, keys: None, fast_settings: JudgeSettings
) -> None:
    server.handler = _answer
    server.batch_polls = 1
    settings = fast_settings.model_copy(update={"batch_max_requests": 2, "max_retries": 0})
    out = tmp_path / "out"
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge = _judge(server, cache, settings)
        plan = plan_batches(_pool(), judge, out)
        assert (plan.requests, plan.batches, plan.price_factor) == (5, 3, 0.5)
        assert plan.cost_usd == pytest.approx(plan.list_cost_usd * 0.5)  # type: ignore[operator]
        assert plan.output_tokens == 5 * settings.expected_output_tokens
        assert not out.exists() and server.request_count == 0  # a plan sends and writes nothing
        report = submit_batches(_pool(), judge, out)
        assert [s.requests for s in report.submitted] == [2, 2, 1]
        status = batch_status(out, judge.provider)
        assert [s.status for s in status.submissions] == ["in_progress"] * 3
        assert (status.progress.open_batches, status.progress.pending) == (3, 5)
        _resume(out, judge, cache)
        status = batch_status(out)
    assert [s.state for s in status.submissions] == ["collected"] * 3
    assert status.progress.answered == 5 and status.judged_pairs == 5
    assert status.spent.calls == 5
    view = json.loads((out / "batches.json").read_text())
    assert [b["batch_id"] for b in view["batches"]] == list(server.batches)


def test_a_lost_anthropic_create_with_two_lookalikes_stops_rather_than_guess(
    tmp_path: Path, server: ScriptedLLMServer, keys: None, fast_settings: JudgeSettings
) -> None:
    anthropic = pytest.importorskip("anthropic")
    server.handler = _answer
    server.control = lambda call: (
        Lost(Reset()) if call.operation == "batches.create" and not server.batches else None
    )
    out = tmp_path / "out"
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        judge = _judge(server, cache, fast_settings)
        with pytest.raises(JudgeError, match="unconfirmed"):
            submit_batches(_pool(), judge, out)
        # someone else's batch of the same size, made at the same time
        params = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}
        with anthropic.Anthropic(base_url=server.base_url, api_key="test-key") as client:
            other = client.messages.batches.create(
                requests=[{"custom_id": f"o{i}", "params": params} for i in range(5)]
            )
        with pytest.raises(JudgeError, match=f"2 batches at anthropic could be it .*{other.id}"):
            _resume(out, judge, cache)
    assert len(server.batches) == 2 and server.request_count == 0  # nothing sent again
