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


# -- batch APIs, through the official SDKs --------------------------------------------------------


def _by_prompt(req: object) -> object:
    from rankscope.testing.llm_server import Expire, RecordedRequest

    assert isinstance(req, RecordedRequest)
    if "error" in req.prompt:
        return Fail(529, "Overloaded")
    if "invalid" in req.prompt:
        return Fail(400, "bad request", error_type="invalid_request_error")
    if "expire" in req.prompt:
        return Expire()
    return Reply(f"answer to {req.prompt}", input_tokens=10, output_tokens=2)


def _anthropic_requests(*prompts: str) -> list[dict[str, object]]:
    return [
        {
            "custom_id": f"c{i}",
            "params": {
                "model": "m",
                "max_tokens": 5,
                "messages": [{"role": "user", "content": p}],
            },
        }
        for i, p in enumerate(prompts)
    ]


def test_anthropic_message_batch_ends_after_its_polls_with_every_result_kind() -> None:
    anthropic = pytest.importorskip("anthropic")
    with (
        ScriptedLLMServer(_by_prompt, api_key="k", batch_polls=2) as s,  # type: ignore[arg-type]
        anthropic.Anthropic(base_url=s.base_url, api_key="k", max_retries=0) as client,
    ):
        made = client.messages.batches.create(
            requests=_anthropic_requests("ok", "error", "expire", "invalid")
        )
        assert made.type == "message_batch" and made.processing_status == "in_progress"
        assert made.request_counts.processing == 4 and made.results_url is None
        assert s.request_count == 0  # nothing is answered before the batch ends
        polls = [client.messages.batches.retrieve(made.id) for _ in range(3)]
        assert [p.processing_status for p in polls] == ["in_progress", "in_progress", "ended"]
        ended = polls[-1]
        assert ended.results_url == f"{s.base_url}/v1/messages/batches/{made.id}/results"
        assert ended.ended_at is not None and ended.expires_at > ended.created_at
        counts = ended.request_counts
        assert (counts.succeeded, counts.errored, counts.expired, counts.processing) == (1, 2, 1, 0)
        results = {r.custom_id: r.result for r in client.messages.batches.results(made.id)}
        listed = [b.id for b in client.messages.batches.list()]
    assert results["c0"].type == "succeeded"
    assert results["c0"].message.content[0].text == "answer to ok"
    assert results["c0"].message.usage.input_tokens == 10
    assert results["c1"].type == "errored" and results["c1"].error.error.type == "overloaded_error"
    assert results["c3"].error.error.type == "invalid_request_error"
    assert results["c3"].error.error.message == "bad request"
    assert results["c2"].type == "expired"
    assert listed == [made.id]
    outcomes = {r.custom_id: r.outcome for r in s.requests}
    assert outcomes == {"c0": "answered", "c1": "error:529", "c2": "expired", "c3": "error:400"}
    assert all(r.batch_id == made.id for r in s.requests) and s.answered_count == 1


def test_anthropic_batch_refuses_bad_custom_ids_and_cancels() -> None:
    anthropic = pytest.importorskip("anthropic")
    with (
        ScriptedLLMServer(_by_prompt, batch_polls=5) as s,  # type: ignore[arg-type]
        anthropic.Anthropic(base_url=s.base_url, api_key="k", max_retries=0) as client,
    ):
        bad = _anthropic_requests("ok")
        bad[0]["custom_id"] = "has space"
        with pytest.raises(anthropic.BadRequestError, match="custom_id"):
            client.messages.batches.create(requests=bad)
        twice = _anthropic_requests("a", "b")
        twice[1]["custom_id"] = "c0"
        with pytest.raises(anthropic.BadRequestError, match="duplicate"):
            client.messages.batches.create(requests=twice)
        made = client.messages.batches.create(requests=_anthropic_requests("ok", "ok too"))
        assert client.messages.batches.cancel(made.id).processing_status == "canceling"
        ended = client.messages.batches.retrieve(made.id)
        kinds = [r.result.type for r in client.messages.batches.results(made.id)]
    assert ended.processing_status == "ended" and ended.request_counts.canceled == 2
    assert ended.cancel_initiated_at is not None
    assert kinds == ["canceled", "canceled"] and s.request_count == 0


def _openai_lines(*prompts: str, model: str = "m") -> bytes:
    import json

    return "".join(
        json.dumps(
            {
                "custom_id": f"c{i}",
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": {"model": model, "messages": [{"role": "user", "content": p}]},
            }
        )
        + "\n"
        for i, p in enumerate(prompts)
    ).encode()


def test_openai_batch_files_statuses_output_and_error_files() -> None:
    import json

    openai = pytest.importorskip("openai")
    with (
        ScriptedLLMServer(_by_prompt, api_key="k", batch_polls=3) as s,  # type: ignore[arg-type]
        openai.OpenAI(base_url=s.openai_base_url, api_key="k", max_retries=0) as client,
    ):
        upload = client.files.create(
            file=("in.jsonl", _openai_lines("ok", "error", "expire")), purpose="batch"
        )
        assert upload.object == "file" and upload.purpose == "batch" and upload.bytes > 0
        assert client.files.content(upload.id).content == _openai_lines("ok", "error", "expire")
        made = client.batches.create(
            input_file_id=upload.id,
            endpoint="/v1/chat/completions",
            completion_window="24h",
            metadata={"token": "t1"},
        )
        assert made.object == "batch" and made.status == "validating"
        statuses = [client.batches.retrieve(made.id) for _ in range(4)]
        out_text = client.files.content(statuses[-1].output_file_id).text
        err_text = client.files.content(statuses[-1].error_file_id).text
        listed = list(client.batches.list())
    assert [b.status for b in statuses] == ["validating", "in_progress", "finalizing", "expired"]
    done = statuses[-1]
    assert done.expired_at is not None and done.metadata == {"token": "t1"}
    assert (done.request_counts.total, done.request_counts.completed) == (3, 1)
    assert done.request_counts.failed == 2
    assert done.usage is not None and done.usage.input_tokens == 10
    [ok] = [json.loads(x) for x in out_text.splitlines()]
    assert ok["custom_id"] == "c0" and ok["error"] is None
    assert ok["response"]["status_code"] == 200 and ok["response"]["request_id"].startswith("req_")
    assert ok["response"]["body"]["choices"][0]["message"]["content"] == "answer to ok"
    errors = {e["custom_id"]: e for e in map(json.loads, err_text.splitlines())}
    assert errors["c1"]["response"]["status_code"] == 529
    assert errors["c1"]["response"]["body"]["error"]["message"] == "Overloaded"
    assert errors["c2"]["response"] is None and errors["c2"]["error"]["code"] == "batch_expired"
    assert [b.id for b in listed] == [made.id] and listed[0].metadata == {"token": "t1"}
    assert s.answered_count == 1


def test_openai_batch_that_fails_validation_or_is_cancelled() -> None:
    openai = pytest.importorskip("openai")
    with (
        ScriptedLLMServer(_by_prompt, batch_polls=4) as s,  # type: ignore[arg-type]
        openai.OpenAI(base_url=s.openai_base_url, api_key="k", max_retries=0) as client,
    ):
        mixed = _openai_lines("a") + _openai_lines("b", model="other").replace(b"c0", b"c1")
        bad = client.files.create(file=("bad.jsonl", mixed), purpose="batch")
        failed = client.batches.create(
            input_file_id=bad.id, endpoint="/v1/chat/completions", completion_window="24h"
        )
        failed = client.batches.retrieve(failed.id)
        with pytest.raises(openai.NotFoundError):
            client.batches.create(
                input_file_id="file-missing",
                endpoint="/v1/chat/completions",
                completion_window="24h",
            )
        good = client.files.create(file=("in.jsonl", _openai_lines("ok")), purpose="batch")
        made = client.batches.create(
            input_file_id=good.id, endpoint="/v1/chat/completions", completion_window="24h"
        )
        cancelling = client.batches.cancel(made.id)
        cancelled = client.batches.retrieve(made.id)
    assert failed.status == "failed" and failed.failed_at is not None
    assert failed.errors is not None and failed.errors.data[0].code == "mismatched_model"
    assert cancelling.status == "cancelling" and cancelled.status == "cancelled"
    assert cancelled.output_file_id is None and s.request_count == 0


def test_control_scripts_batch_calls_and_a_create_whose_answer_is_lost() -> None:
    anthropic = pytest.importorskip("anthropic")
    from rankscope.testing.llm_server import ControlRequest, Lost

    def control(call: ControlRequest) -> Fail | Lost | Reset | None:
        if call.operation == "batches.create" and call.number == 1:
            return Lost(Reset())  # made, but the client never hears of it
        if call.operation == "batches.create" and call.number == 2:
            return Reset()  # not made
        if call.operation == "batches.retrieve" and call.number == 4:
            return Fail(503, "try later")
        return None

    with (
        ScriptedLLMServer(_by_prompt, control=control) as s,  # type: ignore[arg-type]
        anthropic.Anthropic(base_url=s.base_url, api_key="k", max_retries=0) as client,
    ):
        with pytest.raises(anthropic.APIConnectionError):
            client.messages.batches.create(requests=_anthropic_requests("ok"))
        with pytest.raises(anthropic.APIConnectionError):
            client.messages.batches.create(requests=_anthropic_requests("ok"))
        [only] = list(client.messages.batches.list())
        with pytest.raises(anthropic.InternalServerError):
            client.messages.batches.retrieve(only.id)
        assert client.messages.batches.retrieve(only.id).processing_status == "ended"
    assert len(s.batches) == 1
    assert [c.operation for c in s.control_requests] == [
        "batches.create", "batches.create", "batches.list", "batches.retrieve", "batches.retrieve",
    ]  # fmt: skip
    assert [c.status for c in s.control_requests] == [None, None, 200, 503, 200]
