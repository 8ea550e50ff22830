"""The real Anthropic and OpenAI SDK clients against the scripted server on loopback."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from rankscope.errors import JudgeError
from rankscope.judge.config import JudgeSettings, load_settings
from rankscope.judge.limits import RateLimiter
from rankscope.judge.providers import ProviderCallError, make_provider, parse_retry_after
from rankscope.testing.llm_server import (
    ErrorBody,
    Fail,
    Hang,
    Raw,
    Reply,
    Reset,
    ScriptedLLMServer,
)

APIS = ["anthropic", "openai"]


def _provider(api: str, server: ScriptedLLMServer, settings: JudgeSettings, sleeps: list[float]):  # type: ignore[no-untyped-def]
    url = server.base_url if api == "anthropic" else server.openai_base_url
    return make_provider(api, "claude-sonnet", settings, base_url=url, sleep=sleeps.append)


@pytest.mark.parametrize("api", APIS)
def test_answer_usage_request_id_and_cost(api, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    server.enqueue(Reply("##final score: 2", input_tokens=1000, output_tokens=20))
    p = _provider(api, server, fast_settings, [])
    done = p.complete("is this relevant?", system="be strict")
    assert done.text == "##final score: 2"
    assert (done.input_tokens, done.output_tokens) == (1000, 20)
    assert done.request_id == "req_000001"
    assert done.model == "claude-sonnet-4-6"  # alias resolved, echoed by the server
    # claude-sonnet-4-6 defaults: $3 / $15 per million tokens
    assert done.cost_usd == pytest.approx((1000 * 3 + 20 * 15) / 1e6)
    assert done.raw["usage"]
    req = server.requests[0]
    assert req.api == api and req.prompt == "is this relevant?" and req.system == "be strict"
    assert req.model == "claude-sonnet-4-6"
    totals = p.meter.totals()
    assert (totals.calls, totals.input_tokens, totals.output_tokens) == (1, 1000, 20)


@pytest.mark.parametrize("api", APIS)
def test_retries_honour_retry_after_then_succeed(api, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    server.enqueue(
        Fail(429, "slow down", retry_after=7),
        Fail(500),
        Raw(200, b""),  # a 200 with an empty body
        Reply("3"),
    )
    sleeps: list[float] = []
    p = _provider(api, server, fast_settings, sleeps)
    done = p.complete("q")
    assert done.text == "3" and done.attempts == 4
    assert sleeps[0] == 7.0  # retry-after wins over the backoff
    assert all(0 < s <= fast_settings.backoff_max_s for s in sleeps[1:])
    assert [r.outcome for r in server.requests] == ["error:429", "error:500", "raw:200", "answered"]
    assert p.meter.totals().calls == 1  # only the answered call is counted as paid


@pytest.mark.parametrize("api", APIS)
def test_timeouts_and_resets_are_retried(api, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    server.enqueue(Hang(30.0), Reset(), Reply("1"))
    p = _provider(api, server, fast_settings, [])
    assert p.complete("q").text == "1"
    assert server.request_count == 3


@pytest.mark.parametrize("api", APIS)
def test_gives_up_after_max_retries(api, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    server.handler = lambda req: Fail(503, "overloaded")
    p = _provider(api, server, fast_settings, [])
    with pytest.raises(ProviderCallError, match=r"giving up after 4 attempts.*HTTP 503") as info:
        p.complete("q")
    assert not info.value.fatal
    assert server.request_count == fast_settings.max_retries + 1


@pytest.mark.parametrize("api", APIS)
def test_bad_key_is_fatal_and_not_retried(api, server, monkeypatch, fast_settings) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "wrong")
    monkeypatch.setenv("OPENAI_API_KEY", "wrong")
    p = _provider(api, server, fast_settings, [])
    with pytest.raises(ProviderCallError, match="401") as info:
        p.complete("q")
    assert info.value.fatal and server.request_count == 1


def test_custom_key_variable(server, monkeypatch, fast_settings) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("MY_JUDGE_KEY", "test-key")
    server.enqueue(Reply("0"))
    p = make_provider(
        "anthropic", "m", fast_settings, base_url=server.base_url, api_key_env="MY_JUDGE_KEY"
    )
    assert p.complete("q").text == "0"
    headers = server.requests[0].headers
    assert "test-key" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])


def test_missing_key_without_base_url_is_an_error(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(JudgeError, match="ANTHROPIC_API_KEY"):
        make_provider("anthropic", "claude-sonnet")


def test_openai_compatible_server_from_config(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with ScriptedLLMServer(lambda r: Reply("2")) as local:
        cfg = tmp_path / "judge.yaml"
        cfg.write_text(
            f"providers:\n  local:\n    kind: openai\n    base_url: {local.openai_base_url}\n"
            "    api_key_env: null\naliases:\n  small: qwen2.5-7b-instruct\n"
            "prices:\n  qwen2.5-7b-instruct: {input: 0.0, output: 0.0}\ntimeout_s: 5\n"
        )
        settings = load_settings(cfg)
        assert "anthropic" in settings.providers  # merged with the defaults
        p = make_provider("local", "small", settings)
        done = p.complete("q")
        assert done.text == "2" and done.cost_usd == 0.0
        assert local.requests[0].model == "qwen2.5-7b-instruct"
        assert local.requests[0].headers["authorization"] == "Bearer not-needed"
        assert local.requests[0].body["max_tokens"] == settings.max_tokens


def test_openai_token_limit_parameter(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with ScriptedLLMServer(lambda r: Reply("2")) as srv:
        cfg = tmp_path / "judge.yaml"
        cfg.write_text(
            f"providers:\n  newer:\n    kind: openai\n    base_url: {srv.openai_base_url}\n"
            "    api_key_env: null\n    token_limit_param: max_completion_tokens\n"
        )
        make_provider("newer", "gpt-4.1", load_settings(cfg)).complete("q")
        body = srv.requests[0].body
    assert body["max_completion_tokens"] == 512 and "max_tokens" not in body


def test_toml_config_and_bad_values(tmp_path) -> None:  # type: ignore[no-untyped-def]
    good = tmp_path / "judge.toml"
    good.write_text('timeout_s = 12\n[aliases]\nfast = "gpt-4.1-nano"\n')
    s = load_settings(good)
    assert s.timeout_s == 12 and s.resolve_model("fast") == "gpt-4.1-nano"
    assert s.resolve_model("claude-haiku") == "claude-haiku-4-5"
    bad = tmp_path / "bad.yaml"
    bad.write_text("timeout_s: -3\n")
    from rankscope.errors import ConfigError

    with pytest.raises(ConfigError, match=r"bad.yaml.*timeout_s"):
        load_settings(bad)
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("timeout: 3\n")
    with pytest.raises(ConfigError, match="timeout"):
        load_settings(unknown)


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None
    now = datetime(2030, 1, 1, tzinfo=UTC)
    header = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after({"retry-after": header}, now=now.timestamp()) == pytest.approx(30)


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.t += s


def test_rate_limiter_requests_per_minute() -> None:
    c = _Clock()
    rl = RateLimiter(60, None, clock=c.now, sleep=c.sleep)
    for _ in range(60):  # a full minute's allowance is available at once
        assert rl.acquire() == 0.0
    assert rl.acquire() == pytest.approx(1.0)  # then one per second
    assert c.t == pytest.approx(1.0)


def test_rate_limiter_tokens_per_minute_and_settle() -> None:
    c = _Clock()
    rl = RateLimiter(None, 1200, clock=c.now, sleep=c.sleep)
    assert rl.acquire(1000) == 0.0
    waited = rl.acquire(400)  # 200 left, 200 more needed at 20 tokens/s
    assert waited == pytest.approx(10.0)
    rl.settle(estimated=400, actual=100)  # the call used less than estimated: refund
    assert rl.acquire(300) == 0.0


def test_provider_uses_the_limiter(server, keys) -> None:  # type: ignore[no-untyped-def]
    c = _Clock()
    settings = JudgeSettings(requests_per_minute=2)
    p = make_provider("anthropic", "m", settings, base_url=server.base_url)
    p.limiter = RateLimiter(2, None, clock=c.now, sleep=c.sleep)
    server.handler = lambda req: Reply("1")
    for _ in range(3):
        p.complete("q")
    assert c.slept and sum(c.slept) == pytest.approx(30.0)


@pytest.mark.parametrize("api", APIS)
def test_a_200_that_is_an_error_or_lacks_content_or_usage_is_retried(  # type: ignore[no-untyped-def]
    api, server, keys, fast_settings
) -> None:
    server.enqueue(
        ErrorBody("Overloaded"),
        Reply("x", omit=("content",) if api == "anthropic" else ("choices",)),
        Reply("x", omit=("usage",)) if api == "anthropic" else Raw(200, b'{"error": {}}'),
        Reply("2", input_tokens=10, output_tokens=1),
    )
    sleeps: list[float] = []
    p = _provider(api, server, fast_settings, sleeps)
    done = p.complete("q")
    assert (done.text, done.attempts, done.input_tokens) == ("2", 4, 10)
    assert len(sleeps) == 3 and p.meter.totals().calls == 1
    server.handler = lambda req: ErrorBody("Overloaded")
    with pytest.raises(ProviderCallError, match=r"HTTP 200 whose body is an error.*Overloaded"):
        p.complete("q")


def test_openai_answer_without_usage_is_counted_not_free(server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    server.enqueue(Reply("1", omit=("usage",)))
    p = _provider("openai", server, fast_settings, [])
    done = p.complete("x" * 400)
    assert done.text == "1" and done.input_tokens == 100 and done.output_tokens == 1
    assert done.cost_usd is not None and done.cost_usd > 0


def test_adaptive_concurrency_halves_on_timeouts_and_grows_back() -> None:
    from rankscope.judge.limits import AdaptiveConcurrency

    gate = AdaptiveConcurrency(8, increase_after=2)
    with gate.slot() as first, gate.slot() as second:
        first(True)  # started under bound 8, timed out
        second(True)  # also under bound 8: the bound is halved once per round, not twice
    assert gate.limit == 4 and gate.lowered == 1
    with gate.slot() as settle:
        settle(True)
    assert gate.limit == 2
    for _ in range(4):  # 2 x bound successes in a row: one more slot
        with gate.slot() as settle:
            settle(False)
    assert gate.limit == 3 and gate.lowest == 2
    fixed = AdaptiveConcurrency(4, adaptive=False)
    with fixed.slot() as settle:
        settle(True)
    assert fixed.limit == 4


@pytest.mark.parametrize("api", APIS)
def test_the_sdk_client_is_made_at_the_first_call(api, server, keys, fast_settings) -> None:  # type: ignore[no-untyped-def]
    # Importing an SDK costs about a second; a run whose pairs are all cached never needs it.
    p = _provider(api, server, fast_settings, [])
    assert p._client is None
    server.enqueue(Reply("1"))
    assert p.complete("hi").text == "1"
    client = p._client
    assert client is not None
    server.enqueue(Reply("2"))
    assert p.complete("hi").text == "2" and p._client is client  # made once


def test_a_missing_sdk_is_a_clear_error(monkeypatch, keys) -> None:  # type: ignore[no-untyped-def]
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "openai" else real(name, *a)
    )
    with pytest.raises(JudgeError, match=r"openai SDK: pip install 'rankscope\[llm\]'"):
        make_provider("openai", "m", JudgeSettings(), base_url="http://127.0.0.1:9/v1")


def test_a_client_the_sdk_refuses_to_make_is_a_fatal_call_error(server, keys) -> None:  # type: ignore[no-untyped-def]
    p = make_provider("anthropic", "m", JudgeSettings(), base_url=server.base_url)

    def refuse(sdk):  # type: ignore[no-untyped-def]
        raise ValueError("bad base URL")

    p._make_client = refuse  # type: ignore[method-assign]
    with pytest.raises(
        ProviderCallError, match="cannot set up the anthropic client: bad base URL"
    ) as e:
        p.complete("hi")
    assert e.value.fatal and server.request_count == 0
