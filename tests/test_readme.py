"""Every example of README.md runs as written, from a fresh copy of the repository.

The ```sh, ```console and ```python blocks are read from the README and run in order, in one
shell, in a copy of the repository's files (what ``git ls-files`` lists) with the installed
``rankscope``. What the commands need that a reader brings is given through the environment,
never by changing a command:

- ``pip install`` and ``python3 -m venv`` steps are left out (the package is installed), and
  ``.venv`` in the copy is a link to the running environment, so ``.venv/bin/rankscope`` is it;
- the LLM commands talk to the scripted loopback server (``ANTHROPIC_BASE_URL`` /
  ``OPENAI_BASE_URL``, fake keys), which grades every pair by a hash of its prompt;
- ``rankscope serve`` runs in the background on a free port (``RANKSCOPE_SERVE_PORT``), and
  the README's curl lines are sent to that port instead of 8000: the one rewrite, since port
  8000 may be taken on a shared machine;
- ``COLUMNS=200`` stands for a wide terminal (the tables as the README shows them);
- ``--ray`` starts a local Ray cluster (the ray extra is installed with ``[all]``).

Commands that run the test suite itself are in :data:`SKIPPED`, with the reason (the test
checks that this list is exactly what it left out). Every command must exit 0; where the
README shows output, the output must match (exactly for ``eval``; the numbers of the table rows
for ``compare``, whose wording may change; the JSON for the service's answers, the record's id,
timestamps and version compared by type only).
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import rankscope
from processes import process_group
from rankscope.testing.llm_server import RecordedRequest, Reply, ScriptedLLMServer

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"

#: commands the test leaves out, and why (compared without their trailing comment)
SKIPPED = {
    "scripts/test": "runs the whole test suite, this test included (CI runs it itself)",
    ".venv/bin/pytest -q tests/metrics": "runs part of the test suite",
    "RANKSCOPE_RUN_SLOW=1 .venv/bin/pytest -q": "runs the whole test suite",
}

#: how long the README may take as a whole (the demo's two minutes included)
TIMEOUT_S = 900


@dataclass
class Step:
    kind: str  # sh | console | python
    text: str  # the command (or the Python code) as written
    line: int  # where it starts in README.md
    expected: str | None = None  # the output the README shows after it (console)


def read_steps(readme: str) -> list[Step]:
    steps: list[Step] = []
    lines = readme.splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        kind, start = fence.group(1), i + 1
        end = start
        while not lines[end].startswith("```"):
            end += 1
        body = lines[start:end]
        if kind == "python":
            steps.append(Step("python", "\n".join(body), start + 1))
        elif kind in ("sh", "console"):
            steps += _commands(kind, body, start + 1)
        i = end + 1
    return steps


def _commands(kind: str, body: list[str], first: int) -> list[Step]:
    out: list[Step] = []
    j = 0
    while j < len(body):
        line = body[j]
        if kind == "console" and not line.startswith("$ "):
            out[-1].expected = (out[-1].expected or "") + line + "\n"
            j += 1
            continue
        text = line[2:] if kind == "console" else line
        start = j
        while _unfinished(text) and j + 1 < len(body):
            j += 1
            text += "\n" + body[j]
        if shlex.split(text, comments=True):
            out.append(Step(kind, text, first + start))
        j += 1
    return out


def _unfinished(text: str) -> bool:
    if text.rstrip().endswith("\\"):
        return True
    try:
        shlex.split(text, comments=True)
    except ValueError:  # a quote still open
        return True
    return False


def words(text: str) -> str:
    """A command without its comment, its words separated by one space."""
    return " ".join(shlex.split(text, comments=True))


def _installs(part: str) -> bool:
    w = shlex.split(part, comments=True)
    return (len(w) > 1 and w[0].endswith("pip") and w[1] == "install") or w[:3] == [
        "python3",
        "-m",
        "venv",
    ]


@dataclass
class Plan:
    script: str
    #: steps run, by number: (step, the text run)
    run: dict[int, tuple[Step, str]]
    skipped: dict[str, str]
    installs: list[str]


def plan(steps: list[Step], out: Path, port: int) -> Plan:
    lines = ["set -u", "SERVE_PID=", "trap '[ -n \"$SERVE_PID\" ] && kill $SERVE_PID' EXIT"]
    run: dict[int, tuple[Step, str]] = {}
    skipped: dict[str, str] = {}
    installs: list[str] = []
    for n, step in enumerate(steps):
        io = f'>"{out}/{n}.out" 2>"{out}/{n}.err"'
        if step.kind == "python":
            code = f"\"$PYTHON\" - <<'README_PYTHON'\n{step.text}\nREADME_PYTHON"
            lines += ["{", code, f"}} {io}", f'echo $? >"{out}/{n}.rc"']
            run[n] = (step, step.text)
            continue
        key = words(step.text)
        if key in SKIPPED:
            skipped[key] = SKIPPED[key]
            continue
        parts = [p.strip() for p in step.text.split(" && ")]
        kept = [p for p in parts if not _installs(p)]
        installs += [p for p in parts if _installs(p)]
        if not kept:
            continue
        text = " && ".join(kept)
        if words(text).startswith("curl "):
            text = text.replace("localhost:8000", f"localhost:{port}")
        if words(text) == "rankscope serve":
            ready = (
                "import sys, time, urllib.request\n"
                "for _ in range(600):\n"
                "    try:\n"
                f"        urllib.request.urlopen('http://127.0.0.1:{port}/readyz', timeout=1)\n"
                "        sys.exit(0)\n"
                "    except OSError:\n"
                "        time.sleep(0.1)\n"
                "sys.exit(1)"
            )
            # a simple command, not a { group }: $! is then the server itself, which the trap
            # stops (a group's subshell died alone, and the server ran on, adopted by init)
            # (the command alone: the README's comment after it would swallow the "&")
            lines += [f"rankscope serve {io} &", "SERVE_PID=$!"]
            lines += [f'"$PYTHON" -c "{ready}"', f'echo $? >"{out}/{n}.rc"']
        else:
            lines += ["{", text, f"}} {io}", f'echo $? >"{out}/{n}.rc"']
        run[n] = (step, text)
    return Plan("\n".join(lines) + "\n", run, skipped, installs)


def copy_repository(target: Path) -> None:
    """The repository's files (tracked, or new and not ignored), as a fresh clone has them."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:  # no git: everything but what git would ignore
        ignore = shutil.ignore_patterns(".git", ".venv", "__pycache__", "rankscope-out", "*.pyc")
        shutil.copytree(REPO, target, ignore=ignore, dirs_exist_ok=True)
        return
    for name in listed.stdout.decode().split("\0"):
        source = REPO / name
        if name and source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def grade(request: RecordedRequest) -> Reply:
    """A deterministic answer: the needle grader's JSON, or the judge's score line."""
    value = sum(request.prompt.encode()) % 4
    if '"grade": <integer 1-10>' in request.prompt:
        return Reply(json.dumps({"grade": 6 + value, "reasoning": "scripted"}))
    return Reply(f"The passage, scripted.\n##final score: {value}")


# -- the output the README shows -------------------------------------------------------------


def _numbers_of_rows(text: str) -> list[list[str]]:
    rows = [line for line in text.splitlines() if "│" in line]
    return [re.findall(r"[-+]?\d+(?:\.\d+)?", row) for row in rows]


def _json(text: str) -> object:
    """The JSON, a record's values that differ on every run replaced by their type (so that a
    field added, dropped or changed in type still shows)."""
    data = json.loads(text)
    if isinstance(data, dict) and isinstance(data.get("data"), dict):
        for volatile in ("id", "timestamp", "timestampIso", "rankscopeVersion"):
            if volatile in data["data"]:
                data["data"][volatile] = type(data["data"][volatile]).__name__
    return data


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


#: how shown output is compared, by the start of the command
CHECKS: dict[str, Callable[[str, str], bool]] = {
    "rankscope eval ": lambda shown, got: _lines(shown) == _lines(got),
    "rankscope compare ": lambda shown, got: _numbers_of_rows(shown) == _numbers_of_rows(got),
    "curl ": lambda shown, got: _json(shown) == _json(got),
}


# -- the test ----------------------------------------------------------------------------------


def test_the_readme_steps_are_read_as_a_reader_runs_them() -> None:
    steps = read_steps(README.read_text())
    commands = [words(s.text) for s in steps if s.kind != "python"]
    assert "rankscope eval examples/qrels.txt examples/bm25.run examples/dense.run" in commands
    curl = next(s for s in steps if words(s.text).startswith("curl -s -X POST"))
    assert curl.text.count("\n") == 6 and curl.expected and '"success":true' in curl.expected
    assert sum(s.kind == "python" for s in steps) == 1
    assert all(s.expected is None for s in steps if s.kind == "sh")
    shown = [s for s in steps if s.expected is not None]
    assert len(shown) == 4  # eval, compare and the two curl answers
    for step in shown:  # each has a check, and the check is not vacuous
        assert any(words(step.text).startswith(p) for p in CHECKS), step.text
    compare = next(s for s in shown if words(s.text).startswith("rankscope compare"))
    assert compare.expected is not None
    numbers = _numbers_of_rows(compare.expected)
    assert len(numbers) == 4 and numbers[1][:2] == ["0.7427", "0.6674"]
    assert not CHECKS["rankscope compare "](
        compare.expected, compare.expected.replace("7/0/3", "6/0/4")
    )
    collect = next(s for s in shown if '"success":true' in (s.expected or ""))
    assert collect.expected is not None
    shown_json = collect.expected
    assert CHECKS["curl "](shown_json, shown_json.replace("725ae45a", "00000000"))
    assert not CHECKS["curl "](shown_json, shown_json.replace('"timestamp":', '"stamp":'))


@pytest.mark.slow  # about 3.5 minutes on 2 busy cores, the demo near 2 of them
def test_every_readme_example_runs_as_written(tmp_path: Path) -> None:
    if shutil.which("curl") is None:
        pytest.skip("the README's service example uses curl: apt-get install curl")
    root = tmp_path / "repo"
    root.mkdir()
    copy_repository(root)
    venv = Path(sys.executable).parent.parent
    (root / ".venv").symlink_to(venv, target_is_directory=True)
    out = tmp_path / "out"
    out.mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    steps = read_steps(README.read_text())
    done = plan(steps, out, port)
    assert done.skipped == SKIPPED  # exactly these, each once or more
    assert any("pip install" in i for i in done.installs)

    with ScriptedLLMServer(grade) as llm:
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(Path(rankscope.__file__).resolve().parents[1]),
            "PYTHON": sys.executable,
            "COLUMNS": "200",
            "ANTHROPIC_BASE_URL": llm.base_url,
            "OPENAI_BASE_URL": llm.openai_base_url,
            "ANTHROPIC_API_KEY": "test-key",
            "OPENAI_API_KEY": "test-key",
            "RANKSCOPE_CACHE_DIR": str(tmp_path / "cache"),
            "RANKSCOPE_SERVE_PORT": str(port),
        }
        for name in ("RANKSCOPE_JUDGE_CONFIG", "RANKSCOPE_SERVE_CONFIG", "RAY_ADDRESS"):
            env.pop(name, None)
        # in a process group of its own, stopped as a whole on the way out (a timeout or a
        # failure included): nothing the README started outlives the test
        with process_group(["bash", "-c", done.script], cwd=root, env=env) as shell:
            try:
                _, shell_stderr = shell.communicate(timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                shell_stderr = f"the README's commands ran past {TIMEOUT_S} s and were stopped"
    failures = []
    for n, (step, text) in done.run.items():
        rc_file = out / f"{n}.rc"
        rc = rc_file.read_text().strip() if rc_file.exists() else "not run"
        got = (out / f"{n}.out").read_text() if (out / f"{n}.out").exists() else ""
        err = (out / f"{n}.err").read_text() if (out / f"{n}.err").exists() else ""
        if rc != "0":
            failures.append(f"README.md:{step.line}: exit {rc}: {text}\n{err[-3000:]}")
            continue
        if step.expected is not None:
            check = next((c for p, c in CHECKS.items() if words(text).startswith(p)), None)
            assert check is not None, f"README.md:{step.line}: no check for its output"
            if not check(step.expected, got):
                failures.append(
                    f"README.md:{step.line}: output differs: {text}\n"
                    f"--- README\n{step.expected}--- now\n{got}"
                )
    assert not failures, "\n\n".join(failures) + f"\n\nshell stderr:\n{shell_stderr[-2000:]}"
