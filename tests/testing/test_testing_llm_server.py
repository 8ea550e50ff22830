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


def test_a_response_goes_out_in_one_write_with_nagle_off() -> None:
    # Headers and body in two writes with Nagle on hold the body back until the client's
    # delayed ACK (about 40 ms a call on a reused connection): what a client costs per call
    # would be lost under it.
    import json
    import socket

    from rankscope.testing.llm_server import _RequestHandler

    class CountingSocket(socket.socket):
        writes: list[int]

        def send(self, data, *args):  # type: ignore[no-untyped-def, override]
            self.writes.append(len(data))
            return super().send(data, *args)

        def sendall(self, data, *args):  # type: ignore[no-untyped-def, override]
            self.writes.append(len(data))
            return super().sendall(data, *args)

    body = json.dumps(BODY).encode()
    request = (
        b"POST /v1/messages HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
    )
    with (
        ScriptedLLMServer(lambda req: Reply("ok")) as s,
        socket.create_server(("127.0.0.1", 0)) as listener,
        socket.create_connection(listener.getsockname()) as client,
    ):
        accepted, address = listener.accept()
        conn = CountingSocket(accepted.family, accepted.type, fileno=accepted.detach())
        conn.writes = []
        client.sendall(request)
        with conn:
            _RequestHandler(conn, address, s._httpd)  # serves the one request
            nodelay = conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        response = b""
        while chunk := client.recv(65536):
            response += chunk
    assert response.startswith(b"HTTP/1.1 200") and b'"text": "ok"' in response
    assert len(conn.writes) == 1 and conn.writes[0] == len(response)
    assert nodelay


def test_dozens_of_connections_opened_at_once_are_all_accepted() -> None:
    # socketserver's listen backlog of 5 made the 7th simultaneous connection wait or reset.
    import socket

    s = ScriptedLLMServer(lambda req: Reply("ok"))  # listening, not accepting yet
    clients: list[socket.socket] = []
    try:
        for _ in range(64):
            c = socket.socket()
            clients.append(c)
            c.settimeout(5)
            c.connect(("127.0.0.1", s.port))  # completes in the kernel's accept queue
        s.start()
        for c in clients:
            c.sendall(
                b"POST /v1/messages HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n"
                b"Connection: close\r\n\r\n{}"
            )
        statuses = [c.recv(12) for c in clients]
    finally:
        for c in clients:
            c.close()
        if s._thread is not None:
            s.stop()
        else:
            s._httpd.server_close()
    assert statuses == [b"HTTP/1.1 200"] * 64 and s.answered_count == 64


def test_requests_record_when_they_arrived_and_were_dealt_with() -> None:
    import time

    with ScriptedLLMServer(script=[Hang(0.05, Reply("ok")), Fail(500)]) as s:
        before = time.monotonic()
        httpx.post(f"{s.base_url}/v1/messages", json=BODY)
        httpx.post(f"{s.base_url}/v1/messages", json=BODY)
        after = time.monotonic()
    first, second = s.requests
    assert first.finished_at is not None and second.finished_at is not None
    assert before <= first.received_at <= first.finished_at <= second.received_at
    assert second.received_at <= second.finished_at <= after
    assert [first.outcome, second.outcome] == ["answered", "error:500"]
