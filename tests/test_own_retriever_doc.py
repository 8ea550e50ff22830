"""docs/own-retriever.md runs as written: its ```sh commands (a Python retriever and an HTTP
retriever benchmarked against BM25) and its measure example, from a copy of examples/.

The one rewrite: the HTTP example's port 8765 becomes a free port (in the command and in the
copied suite), since 8765 may be taken on a shared machine. A command ending in ``&`` (the
example server) starts in the background; the next command waits until it accepts connections,
and the server is stopped at the end, also when a step fails.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rankscope.errors import ConfigError
from rankscope.suite import load_suite

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "own-retriever.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.M | re.S)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, "the example server exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"the example server did not listen on port {port}")


@pytest.fixture
def workdir(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A copy of examples/, and an environment whose ``rankscope`` and ``python`` are the
    running interpreter's (as an installed rankscope is)."""
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, args in (("rankscope", "-m rankscope"), ("python", "")):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {args} "$@"\n')
        shim.chmod(0o755)
    src = str(REPO / "src")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])),
    }
    return tmp_path, env


def test_the_doc_benchmarks_a_python_and_an_http_retriever_against_bm25(
    workdir: tuple[Path, dict[str, str]],
) -> None:
    cwd, env = workdir
    port = free_port()
    suite = cwd / "examples" / "own-retriever" / "suite-http.yaml"
    suite.write_text(suite.read_text().replace("8765", str(port)))
    commands = [
        line.replace("8765", str(port))
        for block in blocks("sh")
        for line in block.splitlines()
        if line.strip()
    ]
    assert len(commands) == 3
    servers: list[subprocess.Popen[bytes]] = []
    try:
        for command in commands:
            if command.endswith("&"):
                servers.append(
                    subprocess.Popen(command[:-1], shell=True, cwd=cwd, env=env,
                                     stdout=subprocess.DEVNULL, start_new_session=True)
                )  # fmt: skip
                wait_for(port, servers[-1])
                continue
            done = subprocess.run(
                command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=300
            )
            assert done.returncode == 0, (command, done.stderr)
    finally:
        for server in servers:
            os.killpg(server.pid, 15)
            server.wait(timeout=30)
    python = json.loads((cwd / "rankscope-out/own-retriever/results.json").read_text())
    http = json.loads((cwd / "rankscope-out/own-retriever-http/results.json").read_text())
    ndcg = {
        c["name"]: c["views"]["answered"]["summary"]["ndcg@10"]
        for results in (python, http)
        for c in results["configurations"]
    }
    assert ndcg["bm25"] == pytest.approx(0.8908613712607046, abs=1e-12)
    # the function, the class and the API are one retriever: the same rankings
    assert ndcg["my-function"] == ndcg["my-class"] == ndcg["my-api"]
    assert ndcg["my-api"] == pytest.approx(0.8351975837818157, abs=1e-12)


def test_the_doc_measure_example_runs(workdir: tuple[Path, dict[str, str]]) -> None:
    cwd, env = workdir
    [code] = [b for b in blocks("python") if "rankscope.measures" in b]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[2:3] == ["bm25  1.0000  0.9000  1.0000"]


def test_the_typo_the_doc_shows_fails_at_load_as_shown(tmp_path: Path) -> None:
    suite = REPO / "examples" / "own-retriever" / "suite.yaml"
    text = suite.read_text().replace(
        'search: "my_retriever:search"', 'function: "my_retriever:search"'
    )
    copy = tmp_path / "own" / "suite.yaml"
    shutil.copytree(REPO / "examples", tmp_path, dirs_exist_ok=True)
    copy.parent.mkdir(exist_ok=True)
    copy.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_suite(copy)
    shown = (
        "unknown option 'function' for engine 'python'. Did you mean `search` (required, and "
        "missing)? Engine 'python' takes: search, index, call, kinds"
    )
    assert shown in str(info.value)
    assert shown.replace("\n", " ") in " ".join(DOC.read_text().split())
