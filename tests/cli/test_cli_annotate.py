"""``rankscope annotate``: serve (the default subcommand), export, agree and status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from rankscope.cli.app import main
from rankscope.judge.annotate.scale import template_scale
from rankscope.judge.annotate.server import is_loopback
from rankscope.judge.annotate.store import AnnotationStore
from rankscope.judge.pool import Pool, PoolEntry, write_pool

SRC = Path(__file__).resolve().parents[2] / "src"
TOKEN = "cli-token-0123456789abcdef"


def pool_file(folder: Path) -> Path:
    entries = [
        PoolEntry(f"q{q}", f"d{q}{d}", (("bm25", d),), query=f"query {q}", text=f"text {q} {d}")
        for q in (1, 2)
        for d in (1, 2, 3)
    ]
    path = folder / "pool.jsonl"
    write_pool(Pool(tuple(entries)), path)
    return path


@contextmanager
def served(*args: str) -> Iterator[tuple[subprocess.Popen[str], str, list[str]]]:
    """``rankscope annotate ARGS --port 0`` in a subprocess; yields it, its page URL and the
    lines it printed before."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "RANKSCOPE_ANNOTATE_TOKEN": TOKEN}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rankscope.cli.app", "annotate", *args, "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("open http://"):
                break
        else:
            raise AssertionError(
                f"no URL printed: {lines} {proc.stderr.read() if proc.stderr else ''}"
            )
        yield proc, lines[-1].removeprefix("open "), lines
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def api(url: str, path: str) -> httpx.Response:
    base = url.split("/?", 1)[0]
    return httpx.get(base + path, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)


def test_annotate_pool_serves_the_page_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    pool = pool_file(tmp_path)
    llm = tmp_path / "judgments.jsonl"
    llm.write_text(
        json.dumps({"query_id": "q1", "doc_id": "d11", "label": 2}) + "\n"
        + json.dumps({"query_id": "q1", "doc_id": "d12", "label": None}) + "\n"
        + json.dumps({"query_id": "q9", "doc_id": "x", "label": 1}) + "\n"
    )  # fmt: skip
    qrels = tmp_path / "old.qrels"
    qrels.write_text("q2 0 d21 1\n")
    with served(str(pool), "--labels", str(llm), "--qrels", str(qrels), "--annotators",
                "ann,ben", "--overlap", "0.5") as (proc, url, lines):  # fmt: skip
        assert url == f"{url.split('/?')[0]}/?token={TOKEN}"
        assert url.startswith("http://127.0.0.1:")
        assert f"store: {tmp_path / 'pool.annotations.sqlite'} (6 pairs)" in lines
        assert (
            "llm labels: 1 pairs of the pool from " + str(llm) + " (1 outside the pool left out)"
            in lines
        )
        assert "queues: 2 annotator(s), overlap 0.5, seed 0" in lines
        session = api(url, "/api/session").json()["data"]
        assert session["annotators"] == ["ann", "ben"] and session["references"] == ["llm", "qrels"]
        for name in ("ann", "ben"):
            assert api(url, f"/api/next?annotator={name}").json()["data"]["item"] is not None
        with AnnotationStore(tmp_path / "pool.annotations.sqlite") as store:
            queues = [store.queue(name) for name in ("ann", "ben")]
        # d21 is graded in the qrels: 5 pairs queued, 3 of them (0.5 of 5, half up) twice
        assert len(queues[0]) + len(queues[1]) == 5 + 3
        assert 4 not in queues[0] + queues[1]  # pair 4 is (q2, d21)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "stopped; the answers are in" in out


def test_annotate_serve_is_the_default_subcommand(tmp_path: Path) -> None:
    pool = pool_file(tmp_path)
    with served("serve", str(pool), "--store", str(tmp_path / "s.sqlite")) as (_, url, lines):
        assert "queues: open; anyone who gives a name judges every queued pair" in lines
        assert api(url, "/api/session").json()["data"]["pairs"] == 6


def seeded_store(tmp_path: Path) -> Path:
    pool = pool_file(tmp_path)
    from rankscope.judge.pool import read_pool

    store = AnnotationStore(tmp_path / "pool.annotations.sqlite", create=True)
    store.load_pool(read_pool(pool))
    store.set_scale(template_scale())
    store.set_references("llm", {("q1", "d11"): 2, ("q1", "d12"): 0})
    store.configure()
    for name, grades in (("ann", [2, 0, 1]), ("ben", [2, 1, 1])):
        store.join(name)
        for pair, grade in enumerate(grades, 1):
            store.grade(name, pair, grade)
    store.note("ben", 2, "maybe")
    store.close()
    return pool


def export(*args: object) -> int:
    return main(["annotate", "export", *map(str, args)])


def test_export_one_annotator_everyone_and_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pool = seeded_store(tmp_path)
    store = tmp_path / "pool.annotations.sqlite"
    assert export(store, "--annotator", "ann", "-o", tmp_path / "a.qrels") == 0
    assert (tmp_path / "a.qrels").read_text() == "q1 0 d11 2\nq1 0 d12 0\nq1 0 d13 1\n"
    # the pool's path finds the store beside it
    assert export(pool, "-o", tmp_path / "all.txt") == 0
    assert (tmp_path / "all.txt").read_text() == "q1 0 d11 2\nq1 0 d13 1\n"
    captured = capsys.readouterr()
    assert "wrote 2 graded pairs (all annotators)" in captured.out
    assert "1 pair(s) graded differently were left out" in captured.err
    # the format follows the suffix, as for pool and qrels import
    assert export(store, "--annotator", "ben", "-o", tmp_path / "ben.csv") == 0
    text = (tmp_path / "ben.csv").read_text()
    assert text.startswith("query_id,doc_id,grade,") and "maybe" in text
    assert export(store, "-o", tmp_path / "log.jsonl") == 0
    assert len((tmp_path / "log.jsonl").read_text().splitlines()) == 7
    assert export(store, "--per-annotator", "-o", tmp_path / "each") == 0
    assert sorted(p.name for p in (tmp_path / "each").iterdir()) == ["ann.qrels", "ben.qrels"]
    assert (tmp_path / "each" / "ann.qrels").read_text() == (tmp_path / "a.qrels").read_text()
    assert export(store, "--disagreements", "error", "-o", tmp_path / "x") == 2
    assert "graded differently" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_export_and_agree_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seeded_store(tmp_path)
    store = str(tmp_path / "pool.annotations.sqlite")
    pool = str(tmp_path / "pool.jsonl")
    cases = [
        (["export", store, "--annotator", "zed", "-o", "x"], "no annotator of this name"),
        (["export", store, "--disagreements", "some", "-o", "x"], "unknown --disagreements"),
        (["export", store, "--per-annotator", "--annotator", "ann", "-o", "x"], "--per-annotator"),
        (["export", str(tmp_path / "none.sqlite"), "-o", "x"], "no annotation store here"),
        (["agree", store, "-f", "xml"], "unknown --format"),
        ([pool, "--show-labels", "sometimes"], "unknown --show-labels"),
        ([pool, "--annotators", "ann,ben,cy"], "people have judged from them"),
        ([pool, "--token", "short"], "16-128 letters"),
        ([pool, "--max-grade", "4"], "no wording for grade(s) [4]"),
    ]
    ids_only = tmp_path / "ids.jsonl"
    write_pool(Pool((PoolEntry("q1", "d1", ()),)), ids_only)
    cases.append(([str(ids_only)], "pool queries have no text"))
    for argv, message in cases:
        assert main(["annotate", *argv]) == 2, argv
        err = capsys.readouterr().err
        if argv[0] != store:  # a refused start leaves no store behind
            assert not (tmp_path / "ids.annotations.sqlite").exists()
        assert message in err and "Traceback" not in err, (argv, err)


def test_agree_and_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seeded_store(tmp_path)
    store = str(tmp_path / "pool.annotations.sqlite")
    assert main(["annotate", "agree", store]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Cohen's kappa on the pairs both sides graded (binary: grade >= 1)"
    assert "  ann              ben                   3   0.667" in out[3]
    assert out[-2:] == ["disagreements: 1", "  q1 d12: ann 0, ben 1; llm 0; ben: 'maybe'"]
    assert main(["annotate", "agree", store, "-l", "2", "--limit", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0].endswith("(binary: grade >= 2)")
        and out[-1] == "  ... and 1 more (-f json lists all)"
    )
    assert main(["annotate", "agree", store, "-f", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (pair,) = report["between_annotators"]
    assert pair["shared"] == 3 and pair["labels"]["exact"] == pytest.approx(2 / 3, abs=1e-12)
    assert main(["annotate", "status", store]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == [
        "  ann: 3 of 6 graded, 0 skipped",
        "  ben: 3 of 6 graded, 0 skipped",
    ]


def test_loopback_names() -> None:
    assert all(map(is_loopback, ("127.0.0.1", "localhost", "::1", "[::1]", "127.1.2.3")))
    assert not any(map(is_loopback, ("0.0.0.0", "192.168.1.2", "example.com", "::")))


def test_serving_imports_no_heavy_library() -> None:
    """Judging by hand needs neither numpy (until agreement or an export) nor the service's
    stack."""
    code = (
        "import rankscope.cli.app, rankscope.cli.annotate, rankscope.judge.annotate.server, "
        "rankscope.judge.annotate.store\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    loaded = {m.split(".")[0] for m in json.loads(done.stdout)}
    assert not loaded & {"numpy", "pyarrow", "pandas", "fastapi", "uvicorn", "sqlalchemy"}
