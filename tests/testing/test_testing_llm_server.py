"""The scripted LLM server's wire format, checked with a plain HTTP client."""

from __future__ import annotations

import httpx
import pytest

from rankscope.testing.llm_server import ErrorBody, Fail, Hang, Raw, Reply, Reset, ScriptedLLMServer

BODY = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hello"}]}


def test_anthropic_message_shape_and_headers() -> None:
    with ScriptedLLMServer(script=[Reply("hi", input_tokens=3, output_tokens=1)]) as s:
        r = httpx.post(f"{s.base_url}/v1/messages", json={**BODY, "system": "sys"})
    assert r.status_code == 200 and r.headers["request-id"] == "req_000001"
    assert r.json() == {
        "id": "msg_000001",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "hi"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    assert s.requests[0].system == "sys" and s.requests[0].prompt == "hello"


def test_openai_completion_shape() -> None:
    with ScriptedLLMServer(lambda req: Reply("ok")) as s:
        r = httpx.post(f"{s.openai_base_url}/chat/completions", json=BODY)
    body = r.json()
    assert r.headers["x-request-id"] == "req_000001"
    assert body["object"] == "chat.completion" and body["choices"][0]["message"] == {
        "role": "assistant",
        "content": "ok",
        "refusal": None,
    }
    assert body["choices"][0]["finish_reason"] == "stop"
    usage = body["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_error_bodies_retry_after_and_auth() -> None:
    with ScriptedLLMServer(script=[Fail(429, "slow", retry_after=2)] * 2, api_key="k") as s:
        a = httpx.post(f"{s.base_url}/v1/messages", json=BODY, headers={"x-api-key": "k"})
        o = httpx.post(
            f"{s.openai_base_url}/chat/completions",
            json=BODY,
            headers={"authorization": "Bearer k"},
        )
        denied = httpx.post(f"{s.base_url}/v1/messages", json=BODY)
    assert a.status_code == 429 and a.headers["retry-after"] == "2"
    assert a.json()["type"] == "error"
    assert a.json()["error"] == {"type": "rate_limit_error", "message": "slow"}
    assert (
        o.json()["error"]["type"] == "rate_limit_exceeded"
        and o.json()["error"]["message"] == "slow"
    )
    assert denied.status_code == 401 and denied.json()["error"]["type"] == "authentication_error"
    assert [r.outcome for r in s.requests] == ["error:429", "error:429", "error:401"]


def test_raw_and_reset() -> None:
    with ScriptedLLMServer(script=[Raw(200, b""), Reset()]) as s:
        assert httpx.post(f"{s.base_url}/v1/messages", json=BODY).content == b""
        with pytest.raises(httpx.TransportError):
            httpx.post(f"{s.base_url}/v1/messages", json=BODY)
        assert s.answered_count == 0 and s.request_count == 2


def test_error_body_with_200_and_omitted_fields() -> None:
    with ScriptedLLMServer(script=[ErrorBody("Overloaded"), Reply("hi", omit=("usage",))]) as s:
        first = httpx.post(f"{s.base_url}/v1/messages", json=BODY)
        second = httpx.post(f"{s.base_url}/v1/messages", json=BODY)
    assert first.status_code == 200 and first.json()["type"] == "error"
    assert first.json()["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    assert second.status_code == 200 and "usage" not in second.json()
    assert second.json()["content"] == [{"type": "text", "text": "hi"}]
    assert [r.outcome for r in s.requests] == ["error-body:200", "answered"]


def test_one_slot_serves_one_request_at_a_time() -> None:
    import threading

    with ScriptedLLMServer(lambda req: Hang(0.2, Reply("ok")), slots=1) as s:
        threads = [
            threading.Thread(
                target=httpx.post, args=(f"{s.base_url}/v1/messages",), kwargs={"json": BODY}
            )
            for _ in range(3)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert s.max_in_flight == 1 and s.answered_count == 3
