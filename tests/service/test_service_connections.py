"""What one connection to ``rankscope serve`` may hold (service/connections.py), with real
sockets on 127.0.0.1 against the server process as deployed: a request's head and body have
deadlines, idle keep-alive connections close, and a worker closes connections past its cap.
(Before, 100 slow-header or slow-body connections were all still open after 65 s, and 1,100
half-open ones held 1,121 file descriptors.) The connection layer is the same on either
database, so the server runs on SQLite."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from serve_helpers import free_port, make_keys, wait_ready

pytest.importorskip("uvicorn")

HEADER_TIMEOUT = 1.0
BODY_TIMEOUT = 2.0
KEEP_ALIVE = 1.0
MAX_CONNECTIONS = 60


@dataclass
class Server:
    url: str
    port: int
    pid: int
    key: str
    log: Path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the module (each test leaves no connection open behind it)."""
    folder = tmp_path_factory.mktemp("connections")
    database_url = f"sqlite:///{folder / 'metrics.sqlite'}"
    log = folder / "server.log"
    keys = make_keys(database_url)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RANKSCOPE_SERVE_")}
    env.update(
        RANKSCOPE_SERVE_DATABASE_URL=database_url,
        RANKSCOPE_SERVE_PORT=str(port),
        RANKSCOPE_SERVE_LOG_LEVEL="warning",
        RANKSCOPE_SERVE_REQUEST_HEADER_TIMEOUT_SECONDS=str(HEADER_TIMEOUT),
        RANKSCOPE_SERVE_REQUEST_BODY_TIMEOUT_SECONDS=str(BODY_TIMEOUT),
        RANKSCOPE_SERVE_KEEP_ALIVE_TIMEOUT_SECONDS=str(KEEP_ALIVE),
        RANKSCOPE_SERVE_MAX_CONNECTIONS=str(MAX_CONNECTIONS),
    )
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "rankscope.cli.app", "serve"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, timeout=90)
        yield Server(url, port, process.pid, keys.alice, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    try:
        yield opened
    finally:
        for s in opened:
            s.close()


def _open(server: Server, n: int, opened: list[socket.socket]) -> list[socket.socket]:
    out = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        opened.append(s)
        out.append(s)
    return out


def _closed(s: socket.socket) -> bool:
    """Whether the server closed ``s`` (end of stream or reset), without waiting."""
    s.setblocking(False)
    try:
        data = s.recv(65536)
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.setblocking(True)
    return data == b"" or data.startswith(b"HTTP/1.1 408")


def _wait_closed(
    conns: list[socket.socket], within: float, trickle: bytes | None = None
) -> tuple[int, float]:
    """Wait up to ``within`` seconds for the server to close every connection, sending one byte
    of ``trickle`` to each open one every 0.2 s; returns (how many closed, seconds taken)."""
    start = time.monotonic()
    open_ = set(range(len(conns)))
    sent = 0
    while open_ and time.monotonic() - start < within:
        for i in list(open_):
            if _closed(conns[i]):
                open_.discard(i)
            elif trickle is not None:
                try:
                    conns[i].send(trickle[sent % len(trickle) : sent % len(trickle) + 1])
                except OSError:
                    open_.discard(i)
        sent += 1
        time.sleep(0.2)
    return len(conns) - len(open_), time.monotonic() - start


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _healthy(server: Server) -> None:
    assert httpx.get(server.url + "/healthz", timeout=5).status_code == 200


def test_a_slow_header_is_closed(server: Server, sockets: list[socket.socket]) -> None:
    conns = _open(server, 30, sockets)
    for s in conns:
        s.sendall(b"GET /healthz HTTP/1.1\r\n")
    # one more header byte every 0.2 s: the keep-alive timer alone never fires
    closed, took = _wait_closed(conns, 10 * HEADER_TIMEOUT, trickle=b"X-Slow: aaaaaaaaaaaa")
    assert closed == 30
    assert HEADER_TIMEOUT * 0.8 <= took <= HEADER_TIMEOUT + 2.0
    _healthy(server)


def test_a_silent_connection_is_closed(server: Server, sockets: list[socket.socket]) -> None:
    conns = _open(server, 30, sockets)
    closed, took = _wait_closed(conns, 10 * HEADER_TIMEOUT)
    assert closed == 30 and took <= HEADER_TIMEOUT + 2.0
    _healthy(server)


def test_a_slow_body_is_closed(server: Server, sockets: list[socket.socket]) -> None:
    conns = _open(server, 20, sockets)
    head = (
        b"POST /api/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
        b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
    ) % server.key.encode()
    for s in conns:
        s.sendall(head + b'{"events": [')
    closed, took = _wait_closed(conns, 10 * BODY_TIMEOUT, trickle=b"1,")
    assert closed == 20
    assert BODY_TIMEOUT * 0.8 <= took <= BODY_TIMEOUT + 2.0
    _healthy(server)
    # the application saw a client that went away, not a failure of its own
    assert "Traceback" not in server.log.read_text()


def test_connections_past_the_cap_are_closed_at_once(
    server: Server, sockets: list[socket.socket]
) -> None:
    before = _fds(server.pid)
    conns = _open(server, 3 * MAX_CONNECTIONS, sockets)
    time.sleep(0.3)
    # the worker holds at most MAX_CONNECTIONS of them; the rest are closed on arrival
    assert _fds(server.pid) - before <= MAX_CONNECTIONS + 2
    closed_now = sum(_closed(s) for s in conns)
    assert closed_now >= 2 * MAX_CONNECTIONS - 2
    # and the ones it holds go at the head deadline, freeing their descriptors
    closed, _ = _wait_closed(conns, 10 * HEADER_TIMEOUT)
    assert closed == len(conns)
    time.sleep(0.3)
    assert _fds(server.pid) - before <= 2
    _healthy(server)


def test_well_behaved_clients_are_served(server: Server) -> None:
    # keep-alive within its timeout reuses the connection; a body sent at once is read whole
    with httpx.Client(base_url=server.url, timeout=5) as client:
        for _ in range(3):
            assert client.get("/healthz").status_code == 200
            time.sleep(KEEP_ALIVE / 3)
        r = client.post("/api/events", json={"events": []}, headers={"Authorization": "Bearer x"})
        assert r.status_code == 401  # read whole and answered, not cut off
        time.sleep(KEEP_ALIVE + HEADER_TIMEOUT + 0.5)  # idle past keep-alive: closed, reopened
        assert client.get("/healthz").status_code == 200


def test_an_idle_keep_alive_connection_is_closed(
    server: Server, sockets: list[socket.socket]
) -> None:
    (s,) = _open(server, 1, sockets)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    s.settimeout(5)
    assert s.recv(65536).startswith(b"HTTP/1.1 200")
    closed, took = _wait_closed([s], 10 * KEEP_ALIVE)
    assert closed == 1 and took <= KEEP_ALIVE + 1.0
