"""A webhook receiver on 127.0.0.1 for tests: records every POST (headers and JSON body) and
answers from a script (status codes, optionally with ``Retry-After``), then 200."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: Any
    status: int  # what the receiver answered


class WebhookReceiver:
    """``with WebhookReceiver(script=[500, 503]) as hook: ... hook.url ... hook.received``"""

    def __init__(self, script: list[int | tuple[int, int]] | None = None) -> None:
        self._script: deque[int | tuple[int, int]] = deque(script or [])
        self._lock = threading.Lock()
        self.received: list[Received] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with owner._lock:
                    step = owner._script.popleft() if owner._script else 200
                    status, retry = step if isinstance(step, tuple) else (step, None)
                    owner.received.append(
                        Received(self.path, dict(self.headers), json.loads(raw or b"null"), status)
                    )
                self.send_response(status)
                if retry is not None:
                    self.send_header("Retry-After", str(retry))
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/hook"

    def delivered(self) -> list[Received]:
        with self._lock:
            return [r for r in self.received if 200 <= r.status < 300]

    def wait_for(self, n: int, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.received) >= n:
                    return True
            time.sleep(0.02)
        return False

    def __enter__(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


__all__ = ["Received", "WebhookReceiver"]
