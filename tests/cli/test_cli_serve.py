"""``rankscope serve`` commands: migrate, create-key, list-keys, revoke-key, and the server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

pytest.importorskip("fastapi", reason="the service needs: pip install 'rankscope[serve]'")

from rankscope.cli.app import main
from rankscope.service.store.db import head_revision
from serve_helpers import COLLECT, bearer, free_port, record, wait_ready

pytestmark = pytest.mark.service


def test_key_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'm.sqlite'}"
    assert main(["serve", "migrate", "--database-url", db]) == 0
    assert f"schema empty -> {head_revision()}" in capsys.readouterr().out
    assert main(["serve", "migrate", "--database-url", db]) == 0
    assert "already current" in capsys.readouterr().out
    assert (
        main(["serve", "create-key", "--user", "alice", "--role", "service", "--database-url", db])
        == 0
    )
    out = capsys.readouterr()
    key = out.out.strip()
    assert key.startswith("rsk_") and "role service" in out.err
    # which database it wrote to: run from another folder, a relative sqlite URL is another file
    assert out.err.endswith(
        f"stored in the SQLite file {tmp_path / 'm.sqlite'}; the service accepts it when it "
        "runs on that database\n"
    )
    assert main(["serve", "list-keys", "--database-url", db]) == 0
    listed = capsys.readouterr().out
    assert "alice\tservice\tactive" in listed and key not in listed
    assert main(["serve", "revoke-key", key, "--database-url", db]) == 0
    assert "revoked key" in capsys.readouterr().out
    assert main(["serve", "revoke-key", "nope", "--database-url", db]) == 2
    assert "no API key with id 'nope'" in capsys.readouterr().err
    assert main(["serve", "migrate", "--database-url", "mysql://x/y"]) == 2
    assert "unsupported database" in capsys.readouterr().err


def test_database_shown_names_the_file_or_hides_the_password() -> None:
    from rankscope.cli.serve import database_shown

    assert database_shown("sqlite:///rel.sqlite") == f"the SQLite file {Path.cwd() / 'rel.sqlite'}"
    assert database_shown("sqlite://") == "an in-memory SQLite database"
    assert (
        database_shown("postgresql://owner:s3cret@db:5432/metrics")
        == "postgresql://owner:***@db:5432/metrics"
    )


def test_serve_starts_on_sqlite_with_one_command(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'm.sqlite'}"
    port = free_port()
    key = subprocess.run(
        [
            sys.executable,
            "-m",
            "rankscope.cli.app",
            "serve",
            "create-key",
            "-u",
            "bob",
            "--database-url",
            db,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rankscope.cli.app",
            "serve",
            "--database-url",
            db,
            "--port",
            str(port),
        ],
        env={**os.environ},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url)
        r = httpx.post(url + COLLECT, json=record(), headers=bearer(key))
        assert r.status_code == 201 and r.json()["data"]["userId"] == "bob"
        assert httpx.get(url + "/docs").status_code == 200
    finally:
        server.terminate()
        server.communicate(timeout=30)


def test_serve_on_a_busy_port_says_so_before_claiming_to_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'm.sqlite'}"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "--database-url", db, "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on http://127.0.0.1:{port}: the port is in use" in err
    assert "choose a free one with --port, e.g. --port " in err
    assert "rankscope serve: sqlite" not in err and "Traceback" not in err
    suggested = int(err.rsplit("--port ", 1)[1].split()[0])
    assert suggested != port
    assert main(["serve", "--database-url", db, "--host", "192.0.2.1"]) == 2
    assert "192.0.2.1 is not an address of this machine" in capsys.readouterr().err
