"""The judge commands end to end: kill and resume, dry run, import, needle, and Cranfield.

Every LLM call goes to the scripted server on loopback through the real SDKs.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from prerequisites import shared_data
from rankscope.cli.app import main
from rankscope.testing.llm_server import (
    ErrorBody,
    Hang,
    RecordedRequest,
    Reply,
    ScriptedLLMServer,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _list_prices(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scripted server stands in for the providers' own APIs: their list prices apply
    (a server elsewhere is not priced by default)."""
    config = tmp_path_factory.mktemp("judge-config") / "judge.yaml"
    config.write_text("list_prices_anywhere: true\n")
    monkeypatch.setenv("RANKSCOPE_JUDGE_CONFIG", str(config))


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["ANTHROPIC_API_KEY"] = "test-key"
    env["OPENAI_API_KEY"] = "test-key"
    env["RANKSCOPE_CACHE_DIR"] = str(tmp_path / "cache")
    return env


def _write_pool(path: Path, n: int) -> None:
    with path.open("w") as f:
        for i in range(n):
            rec = {
                "query_id": str(i % 3 + 1),
                "query": f"query number {i % 3 + 1}",
                "doc_id": f"d{i}",
                "text": f"passage {i} body",
                "runs": [{"run": "r", "rank": i + 1}],
            }
            f.write(json.dumps(rec) + "\n")


def _grade_of(req: RecordedRequest) -> int:
    for token in req.prompt.split():
        if token.isdigit():
            return int(token) % 4
    return 0


def test_kill_mid_run_then_resume_pays_nothing_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, 12)
    stop_after = 5
    lock = threading.Lock()
    state = {"answered": 0, "hang": True}

    def handler(req: RecordedRequest) -> Reply | Hang:
        with lock:
            if state["hang"] and state["answered"] >= stop_after:
                return Hang(120)  # the client is killed while waiting for this answer
            state["answered"] += 1
        passage = req.prompt.split("Passage: ")[1].split("\n")[0]
        return Reply(f"##final score: {int(passage.split()[1]) % 4}")

    env = _env(tmp_path)
    for name in ("ANTHROPIC_API_KEY", "RANKSCOPE_CACHE_DIR"):
        monkeypatch.setenv(name, env[name])
    out = tmp_path / "out"
    args = [
        "judge", str(pool), "--provider", "anthropic", "--model", "claude-haiku",
        "--concurrency", "1", "--out", str(out),
    ]  # fmt: skip
    with ScriptedLLMServer(handler, api_key="test-key") as server:
        args += ["--base-url", server.base_url]
        # the first run is a separate process, killed (SIGKILL) while a call is in flight
        proc = subprocess.Popen(
            [sys.executable, "-m", "rankscope", *args],
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert server.wait_for_requests(stop_after + 1, timeout=90), "client never got going"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        first = [r.prompt for r in server.requests if r.outcome == "answered"]
        assert len(first) == stop_after
        rows = (out / "judgments.jsonl").read_text().splitlines()
        assert len(rows) == stop_after  # everything paid for was written before the kill

        state["hang"] = False
        assert main(args) == 0
        done = capsys.readouterr().out
        paid = [r.prompt for r in server.requests if r.outcome == "answered"]
    assert len(paid) == 12 and len(set(paid)) == 12  # no pair was paid for twice
    assert "5 already in" in done and "7 calls to make" in done
    labels = {json.loads(x)["doc_id"]: json.loads(x)["label"] for x in
              (out / "judgments.jsonl").read_text().splitlines()}  # fmt: skip
    assert labels == {f"d{i}": i % 4 for i in range(12)}
    qrels = (out / "qrels.txt").read_text().split("\n")
    assert len([q for q in qrels if q]) == 12

    # a repeat run into a new folder is answered by the cache: the server sees nothing new
    with ScriptedLLMServer(handler, api_key="test-key") as server2:
        again = [*args[:-2], "--base-url", server2.base_url, "--out", str(tmp_path / "b")]
        assert main(again) == 0
        assert server2.request_count == 0
    assert "12 cached, 0 calls" in capsys.readouterr().out


def test_dry_run_prints_calls_tokens_cost_and_sends_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, 6)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.delenv("RANKSCOPE_JUDGE_CONFIG")  # the defaults: a local server is not priced
    with ScriptedLLMServer(lambda r: Reply("1"), api_key="test-key") as server:
        code = main([
            "judge", str(pool), "--provider", "openai", "--model", "gpt-4o-mini",
            "--base-url", server.openai_base_url, "--cache-path", str(tmp_path / "c.sqlite"),
            "--out", str(tmp_path / "out"), "--dry-run",
        ])  # fmt: skip
        assert server.request_count == 0
        out = capsys.readouterr().out
        assert code == 0
        assert "6 pairs: 0 already in" in out and "6 calls to make to openai gpt-4o-mini" in out
        # a server that is not OpenAI's API is not priced at OpenAI's list price
        assert (
            "estimated tokens: 1650 in + 720 out; estimated cost: unknown (no price for this "
            "model: --price-in/--price-out, or the judge config)\n" in out
        )
        assert "dry run: nothing was sent" in out
        code = main([
            "judge", str(pool), "--provider", "openai", "--model", "gpt-4o-mini",
            "--base-url", server.openai_base_url, "--cache-path", str(tmp_path / "c.sqlite"),
            "--out", str(tmp_path / "out"), "--dry-run", "--price-in", "0.15", "--price-out", "0.6",
        ])  # fmt: skip
        assert code == 0 and server.request_count == 0
        # (1650 * 0.15 + 720 * 0.6) / 1e6 = 0.0006795
        assert "estimated cost: $0.0007\n" in capsys.readouterr().out
    assert not (tmp_path / "out" / "judgments.jsonl").exists()


def test_dry_run_needs_neither_an_output_folder_nor_a_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, 6)
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    for extra in ([], ["--batch"]):
        args = [
            "judge",
            str(pool),
            "--model",
            "claude-haiku",
            "--cache-path",
            "c.sqlite",
            "--dry-run",
        ]
        assert main([*args, *extra]) == 0
        out = capsys.readouterr().out
        assert "6 pairs: 0 cached" in out and "to anthropic claude-haiku" in out
        assert "estimated cost: $" in out and "dry run: nothing was sent" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.sqlite", "pool.jsonl"]
    # a real run still needs both
    assert main(["judge", str(pool), "--model", "claude-haiku", "--out", "o"]) == 2
    assert "needs an API key" in capsys.readouterr().err
    assert main(["judge", str(pool), "--model", "claude-haiku"]) == 2
    assert "no output folder given" in capsys.readouterr().err


def test_judge_with_a_user_template_and_nulls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, 4)
    tmpl = tmp_path / "t.txt"
    tmpl.write_text('Rate {passage} for {query}. Reply {"score": N}.')
    answers = iter(['{"score": 2}', "eight", '{"score": 3}', "8/10"])
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with ScriptedLLMServer(lambda r: Reply(next(answers)), api_key="test-key") as server:
        code = main([
            "judge", str(pool), "--base-url", server.base_url, "--template", str(tmpl),
            "--cache-path", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "out"),
            "--concurrency", "1",
        ])  # fmt: skip
        assert server.requests[0].prompt.startswith("Rate passage 0 body for query number 1.")
    out = capsys.readouterr().out
    assert code == 0 and "labels: 2: 1, 3: 1, null: 2" in out
    assert "cost $0.0" in out  # claude-sonnet default has a price


def test_qrels_import_reports_bad_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, 3)
    ann = tmp_path / "ann.csv"
    ann.write_text("query_id,doc_id,grade\n1,d0,2\n1,d9,1\n2,d1,5\n")
    code = main(["qrels", "import", str(ann), "--pool", str(pool), "--out", str(tmp_path / "q")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{ann}:3: unknown doc id 'd9'" in err and f"{ann}:4: grade 5 is outside" in err
    existing = tmp_path / "old.txt"
    existing.write_text("1 0 d0 0\n3 0 d2 1\n")
    ann.write_text("query_id,doc_id,grade\n1,d0,2\n2,d1,\n3,d2,1\n")
    code = main([
        "qrels", "import", str(ann), "--pool", str(pool), "--merge", str(existing),
        "--out", str(tmp_path / "merged.txt"),
    ])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "imported 2 graded pairs (1 blank rows skipped): 0 new, 1 unchanged, 1 conflicts" in out
    assert "conflict query 1 doc d0: existing 0, annotated 2 -> kept 2" in out
    assert (tmp_path / "merged.txt").read_text() == "1 0 d0 2\n3 0 d2 1\n"
    code = main([
        "qrels", "import", str(ann), "--pool", str(pool), "--merge", str(existing),
        "--policy", "error", "--out", str(tmp_path / "m2.txt"),
    ])  # fmt: skip
    assert code == 2 and "conflict with the existing qrels" in capsys.readouterr().err


# -- batch APIs: submit, kill, resume -----------------------------------------------------------


def _passage_number(req: RecordedRequest) -> int:
    return int(req.prompt.split("Passage: ")[1].split()[1])


def _rankscope(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "rankscope", *args],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _kill(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_batch_submit_kill_mid_poll_and_mid_download_resume_pays_each_pair_once(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
) -> None:
    from collections import Counter

    from rankscope.testing.llm_server import ControlRequest, Expire, Fail

    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, 12)
    seen: Counter[int] = Counter()
    hang = {"poll": True, "download": True}
    download = "batches.results" if kind == "anthropic" else "files.content"

    def handler(req: RecordedRequest) -> Reply | Fail | Expire:
        n = _passage_number(req)
        seen[n] += 1
        if n == 4 and seen[n] == 1:
            return Fail(529 if kind == "anthropic" else 500, "overloaded")  # errored: again
        if n == 7 and seen[n] == 1:
            return Expire()  # expired: again
        return Reply(f"##final score: {n % 4}")

    def control(call: ControlRequest) -> Hang | None:
        # the second poll, and the first download of results, never answer while hang is set:
        # the client is killed waiting for them
        polls = [c for c in server.control_requests if c.operation == "batches.retrieve"]
        if call.operation == "batches.retrieve" and hang["poll"] and len(polls) == 2:
            return Hang(120)
        if call.operation == download and hang["download"]:
            return Hang(120)
        return None

    env = _env(tmp_path)
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "RANKSCOPE_CACHE_DIR"):
        monkeypatch.setenv(name, env[name])
    out = tmp_path / "out"
    model = "claude-haiku" if kind == "anthropic" else "gpt-4o-mini"
    with ScriptedLLMServer(handler, api_key="test-key", batch_polls=2, control=control) as server:
        url = server.base_url if kind == "anthropic" else server.openai_base_url
        submit = ["judge", str(pool), "--provider", kind, "--model", model, "--base-url", url,
                  "--out", str(out), "--batch"]  # fmt: skip
        resume = ["judge", "--batch", "--resume", str(out), "--poll-interval", "0.05"]

        # 1. submit (its own process): returns once the batch id is recorded
        proc = _rankscope(submit, env)
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr.decode()
        [batch_id] = server.batches
        assert f"submitted batch {batch_id}: 12 requests" in stdout.decode()
        assert batch_id in (out / "batches.json").read_text()
        assert server.request_count == 0  # nothing answered before the batch ends

        # 2. resume, SIGKILLed while it waits for its second poll
        proc = _rankscope(resume, env)
        try:
            assert server.wait_for_calls("batches.retrieve", 2, timeout=90), "never polled"
        finally:
            _kill(proc)
        assert not (out / "judgments.jsonl").exists() and server.request_count == 0

        # 3. resume again, SIGKILLed while downloading the results: the batch has ended, so
        # the provider has answered (and billed) its requests, but the client has none yet
        hang["poll"] = False
        proc = _rankscope(resume, env)
        try:
            assert server.wait_for_calls(download, 1, timeout=90), "never downloaded"
        finally:
            _kill(proc)
        assert server.answered_count == 10  # 12 minus the errored one and the expired one
        assert not (out / "judgments.jsonl").exists()

        # 4. resume to the end: collects, submits again only the errored and expired pairs
        hang["download"] = False
        assert main(resume) == 0
        done = capsys.readouterr()
        paid = Counter(r.custom_id for r in server.requests if r.outcome == "answered")
        creates = len(server.batch_calls("batches.create"))

        # the same pool judged without --batch, into a fresh cache, for comparison
        monkeypatch.setenv("RANKSCOPE_CACHE_DIR", str(tmp_path / "sync-cache"))
        sync_args = [*submit[:-3], "--out", str(tmp_path / "sync"), "--concurrency", "1"]
        assert main(sync_args) == 0
    assert len(paid) == 12 and set(paid.values()) == {1}  # every pair paid for exactly once
    assert seen[4] == seen[7] == 3 and all(seen[n] == 2 for n in seen if n not in (4, 7))
    assert creates == 2  # the first batch, then one with the errored and expired pairs
    assert len(server.batches[batch_id].items) == 12
    assert [len(b.items) for b in server.batches.values()] == [12, 2]
    assert "collected 12 answers" in done.out and "12 answered, 0 waiting" in done.out
    assert f"batch 1 {batch_id}: " in done.err

    rows = [json.loads(x) for x in (out / "judgments.jsonl").read_text().splitlines()]
    sync_file = tmp_path / "sync" / "judgments.jsonl"
    sync_rows = [json.loads(x) for x in sync_file.read_text().splitlines()]
    fields = ("query_id", "doc_id", "label", "reason", "rationale", "raw_text", "input_tokens",
              "output_tokens", "provider", "model", "template_hash", "doc_hash",
              "cached")  # fmt: skip
    by_doc = lambda r: r["doc_id"]  # noqa: E731
    assert [{f: r[f] for f in fields} for r in sorted(rows, key=by_doc)] == [
        {f: r[f] for f in fields} for r in sorted(sync_rows, key=by_doc)
    ]
    assert {r["doc_id"]: r["label"] for r in rows} == {f"d{i}": i % 4 for i in range(12)}
    assert sum(r["cost_usd"] for r in rows) == pytest.approx(
        0.5 * sum(r["cost_usd"] for r in sync_rows)
    )
    assert (out / "qrels.txt").read_text() == (tmp_path / "sync" / "qrels.txt").read_text()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["spent"]["calls"] == 12 and summary["batch"]["answered"] == 12


def test_batch_dry_run_status_and_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, 6)
    for name, value in _env(tmp_path).items():
        if name in ("ANTHROPIC_API_KEY", "RANKSCOPE_CACHE_DIR"):
            monkeypatch.setenv(name, value)
    out = tmp_path / "out"
    with ScriptedLLMServer(lambda r: Reply("##final score: 1"), api_key="test-key") as server:
        args = ["judge", str(pool), "--model", "claude-haiku", "--base-url", server.base_url,
                "--out", str(out), "--batch"]  # fmt: skip
        assert main([*args, "--dry-run"]) == 0
        dry = capsys.readouterr().out
        assert not server.control_requests and not out.exists()
        assert main(args) == 0
        capsys.readouterr()
        assert main(["judge", "--batch", "--status", "--out", str(out)]) == 0
        status = capsys.readouterr().out
        assert main(["judge", "--resume", str(out)]) == 2
        assert "--resume and --status go with --batch" in capsys.readouterr().err
        assert main(["judge", "--batch", "--resume", str(tmp_path / "none")]) == 2
        assert "has no batches" in capsys.readouterr().err
    # without a key (and no server URL) the status is still shown, as of the last poll
    from rankscope.judge.batch_store import BatchStore

    with BatchStore(out) as record:
        setup = json.loads(record.db.execute("SELECT value FROM meta").fetchone()[0])
        record.db.execute("UPDATE meta SET value = ?", (json.dumps({**setup, "base_url": None}),))
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert main(["judge", "--batch", "--status", str(out)]) == 0
    offline = capsys.readouterr()
    assert "not polled" in offline.err and "needs an API key" in offline.err
    assert "submitted   ended" in offline.out
    assert "6 pairs: 0 already in" in dry and "6 requests (6 pairs) to submit to anthropic" in dry
    assert "at the batch price (50% of the list price; $" in dry and "nothing was sent" in dry
    [batch_id] = server.batches
    assert "1 batch(es), 1 open, 0 unconfirmed; 6 requests for 6 pairs" in status
    assert batch_id in status and "submitted   ended" in status  # polled, not yet collected


# -- Cranfield end to end -----------------------------------------------------------------------

HUMAN_TO_LLM = {4: 3, 3: 2, 2: 1, 1: 1, 0: 0}


def _cranfield() -> Path:
    return shared_data("cranfield", "beir", "corpus.jsonl").parents[1]


def _noisy_llm(root: Path, seed: int = 7):  # type: ignore[no-untyped-def]
    """A fake judge that answers from the real qrels, with deterministic noise."""
    queries = {}
    for line in (root / "beir" / "queries.jsonl").read_text().splitlines():
        q = json.loads(line)
        queries[q["text"]] = q["_id"]
    docs: dict[str, str] = {}
    for line in (root / "beir" / "corpus.jsonl").read_text().splitlines():
        d = json.loads(line)
        docs.setdefault(d["text"], d["_id"])
    human: dict[tuple[str, str], int] = {}
    for line in (root / "beir" / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        q, d, g = line.split("\t")
        human[(q, d)] = int(g)

    def answer(req: RecordedRequest) -> Reply:
        prompt = req.prompt
        query = prompt.split("Query: ", 1)[1].split("\nPassage: ", 1)[0]
        passage = prompt.split("\nPassage: ", 1)[1].split("\n\nWork through", 1)[0]
        qid, did = queries[query], docs.get(passage, "")
        truth = HUMAN_TO_LLM.get(human.get((qid, did), 0), 0)
        rng = random.Random(f"{seed}/{qid}/{did}")
        label = truth
        if rng.random() < 0.2:  # one answer in five is off by one
            label = min(3, max(0, truth + rng.choice((-1, 1))))
        if rng.random() < 0.03:  # and a few are unusable
            return Reply("I cannot decide.")
        return Reply(f"Intent considered; M={label}, T=2.\n##final score: {label}")

    return answer, human


def _derived_runs(root: Path, tmp: Path) -> list[Path]:
    """Three more 'systems' from the BM25 run, so Kendall's tau ranks five systems."""
    src = root / "runs" / "stevinjs_CS7IS3-CA1"
    bm25 = (src / "results_standard_bm25.txt").read_text().splitlines()
    by_q: dict[str, list[str]] = {}
    for line in bm25:
        q, _, d, _, _, _ = line.split()
        by_q.setdefault(q, []).append(d)
    variants = {
        "bm25_rev10": lambda docs: docs[:10][::-1] + docs[10:],
        "bm25_skip2": lambda docs: docs[2:],
        "bm25_shuffled": lambda docs: random.Random(3).sample(docs, len(docs)),
    }
    paths = []
    for name, fn in variants.items():
        p = tmp / f"{name}.txt"
        with p.open("w") as f:
            for q, docs in by_q.items():
                for rank, d in enumerate(fn(docs), 1):
                    f.write(f"{q} Q0 {d} {rank} {100 - rank} {name}\n")
        paths.append(p)
    return [src / "results_standard_bm25.txt", src / "results_standard_classic.txt", *paths]


def test_cranfield_pool_judge_import_evaluate_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _cranfield()
    runs = _derived_runs(root, tmp_path)
    pool = tmp_path / "pool.csv"
    code = main([
        "pool", str(runs[0]), str(runs[1]), "--depth", "5", "--max-queries", "40",
        "--queries", str(root / "beir" / "queries.jsonl"),
        "--corpus", str(root / "beir" / "corpus.jsonl"), "--out", str(pool),
    ])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "from 2 run(s) at depth 5: 40 queries" in out

    answer, human = _noisy_llm(root)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    llm_dir = tmp_path / "llm"
    with ScriptedLLMServer(answer, api_key="test-key") as server:
        code = main([
            "judge", str(pool), "--model", "claude-haiku", "--base-url", server.base_url,
            "--cache-path", str(tmp_path / "cache.sqlite"), "--out", str(llm_dir),
        ])  # fmt: skip
        n_calls = server.answered_count
    out = capsys.readouterr().out
    assert code == 0, out
    rows = [json.loads(x) for x in (llm_dir / "judgments.jsonl").read_text().splitlines()]
    assert len(rows) == n_calls and 200 <= n_calls <= 400  # 40 queries x 5-10 docs
    nulls = [r for r in rows if r["label"] is None]
    assert nulls and all(r["reason"] == "no score found in the answer" for r in nulls)

    # a reviewer corrects the LLM on the first 30 rows of the pool (human grades, 0-3 scale)
    import csv

    with pool.open() as f:
        records = list(csv.DictReader(f))
    ann = tmp_path / "reviewed.csv"
    with ann.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["query_id", "doc_id", "grade"])
        for r in records[:30]:
            w.writerow([r["query_id"], r["doc_id"],
                        HUMAN_TO_LLM[human.get((r["query_id"], r["doc_id"]), 0)]])  # fmt: skip
    merged = tmp_path / "merged.txt"
    code = main([
        "qrels", "import", str(ann), "--pool", str(pool), "--merge", str(llm_dir / "qrels.txt"),
        "--out", str(merged),
    ])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "imported 30 graded pairs" in out

    from rankscope import evaluate
    from rankscope.judge.io import load_qrels, load_run

    res = evaluate(load_qrels(merged), load_run(runs[0]), measures=("ndcg@10", "P@5"))
    assert 0.0 < res.mean()["ndcg@10"] <= 1.0

    human_qrels = root / "beir" / "qrels" / "test.tsv"
    args = ["agree", str(human_qrels), str(merged), "--human-map", "4=3,3=2,2=1",
            "--measure", "ndcg@10", "--measure", "P@5"]  # fmt: skip
    for run_file in runs:
        args += ["--runs", str(run_file)]
    code = main([*args, "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    labels = report["labels"]
    assert labels["pairs"] > 50
    assert 0.3 < labels["kappa_binary"] < 1.0  # noisy but clearly related
    assert labels["kappa_quadratic"] > labels["kappa_binary"] - 0.3
    taus = {r["measure"]: r["tau_b"] for r in report["rankings"]}
    assert set(taus) == {"ndcg@10", "P@5"} and all(t is not None and t > 0 for t in taus.values())
    code = main(args)
    text = capsys.readouterr().out
    assert code == 0 and "Cohen's kappa, binary (grade >= 1)" in text and "Kendall's tau-b" in text


# -- bad input: one reader, one error ---------------------------------------------------------


def test_bytes_that_are_not_utf8_are_a_file_line_error_in_pool_judge_needle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "a.run"
    run.write_text("1 Q0 d1 1 2.0 a\n")
    queries = tmp_path / "queries.jsonl"
    queries.write_bytes(b'{"_id": "1", "text": "caf\xe9"}\n')
    code = main(["pool", str(run), "--queries", str(queries), "--out", str(tmp_path / "p.jsonl")])
    err = capsys.readouterr().err
    assert code == 2 and f"{queries}:1: text is not valid UTF-8" in err
    assert "Traceback" not in err

    for suffix in ("jsonl", "csv"):
        pool = tmp_path / f"pool.{suffix}"
        good = '{"query_id": "1", "doc_id": "d1", "query": "q", "text": "t"}\n'
        if suffix == "csv":
            good = "query_id,doc_id,query,text\n1,d1,q,t\n"
        pool.write_bytes(good.encode() + b"\xff\xfe broken\n")
        lines = good.count("\n") + 1
        code = main(["judge", str(pool), "--out", str(tmp_path / "out"), "--dry-run"])
        err = capsys.readouterr().err
        assert code == 2 and f"{pool}:{lines}: text is not valid UTF-8" in err, err

    questions = tmp_path / "q.jsonl"
    questions.write_bytes(b'{"id": "1", "question": "\xe9?", "expected_answer": "a"}\n')
    code = main(["needle", str(questions), "--corpus", str(queries)])
    err = capsys.readouterr().err
    assert code == 2 and f"{questions}:1: text is not valid UTF-8" in err


def test_judge_retries_a_200_that_is_an_error_or_lacks_content_or_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, 2)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("RANKSCOPE_JUDGE_CONFIG", str(_fast_config(tmp_path)))
    script: list[ErrorBody | Reply] = [
        ErrorBody(),
        Reply("x", omit=("content",)),
        Reply("x", omit=("usage",)),
    ]
    with ScriptedLLMServer(lambda r: Reply("##final score: 2"), script=script) as server:
        code = main([
            "judge", str(pool), "--base-url", server.base_url, "--concurrency", "1",
            "--cache-path", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "out"),
        ])  # fmt: skip
        outcomes = [r.outcome for r in server.requests]
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "labels: 2: 2" in captured.out and "Traceback" not in captured.err
    assert outcomes == ["error-body:200", "answered", "answered", "answered", "answered"]


def _fast_config(tmp_path: Path) -> Path:
    config = tmp_path / "judge.yaml"
    config.write_text("timeout_s: 2\nbackoff_base_s: 0.001\nbackoff_max_s: 0.01\nmax_retries: 3\n")
    return config


def test_a_server_answering_one_at_a_time_gets_fewer_calls_in_flight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # llama.cpp with one slot: requests queue at the server and the queue time counts against
    # the client's timeout. Four in flight at 0.5 s each make the fourth wait 2 s > 1.5 s.
    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, 8)
    config = tmp_path / "judge.yaml"
    config.write_text("timeout_s: 1.5\nbackoff_base_s: 0.01\nbackoff_max_s: 0.05\nmax_retries: 4\n")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with ScriptedLLMServer(lambda r: Hang(0.5, Reply("##final score: 1")), slots=1) as server:
        code = main([
            "judge", str(pool), "--provider", "openai", "--model", "local",
            "--base-url", server.openai_base_url, "--config", str(config), "--concurrency", "4",
            "--cache-path", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "out"),
        ])  # fmt: skip
        timed_out = sum(1 for r in server.requests if r.outcome != "answered")
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "labels: 1: 8" in captured.out
    assert "lowered it to" in captured.err and "--concurrency" in captured.err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["concurrency"] == 4 and summary["concurrency_lowest"] <= 2
    assert timed_out <= 6  # a few answers are lost before the bound comes down, not a third


def test_a_server_from_openai_base_url_gets_the_same_request_as_from_base_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # llama.cpp honours max_tokens and ignores max_completion_tokens (it generated 4,079 tokens
    # for a limit of 5): the server must get max_tokens however its URL was given.
    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, 1)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a local server needs no key
    bodies = []
    for how in ("env", "flag"):
        with ScriptedLLMServer(lambda r: Reply("##final score: 1")) as server:
            args = ["judge", str(pool), "--provider", "openai", "--model", "qwen",
                    "--fresh", "--out", str(tmp_path / how),
                    "--cache-path", str(tmp_path / "c.sqlite")]  # fmt: skip
            if how == "env":
                monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
            else:
                monkeypatch.delenv("OPENAI_BASE_URL")
                args += ["--base-url", server.openai_base_url]
            code = main(args)
            assert code == 0, capsys.readouterr().err
            bodies.append(server.requests[0].body)
    for body in bodies:
        assert body["max_tokens"] == 512 and "max_completion_tokens" not in body
    assert bodies[0] == bodies[1]


def test_openai_itself_gets_max_completion_tokens() -> None:
    from rankscope.judge.providers import token_limit_param_for

    assert token_limit_param_for(None) == "max_completion_tokens"
    assert token_limit_param_for("https://api.openai.com/v1") == "max_completion_tokens"
    assert token_limit_param_for("http://127.0.0.1:8080/v1") == "max_tokens"


def test_retry_nulls_asks_again_only_where_there_was_no_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, 4)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    out = tmp_path / "out"
    args = ["judge", str(pool), "--concurrency", "1", "--cache-path", str(tmp_path / "c.sqlite"),
            "--out", str(out)]  # fmt: skip
    first = iter(["##final score: 2", "eight", "##final score: 3", "no idea"])
    with ScriptedLLMServer(lambda r: Reply(next(first))) as server:
        assert main([*args, "--base-url", server.base_url]) == 0
    assert "labels: 2: 1, 3: 1, null: 2" in capsys.readouterr().out

    with ScriptedLLMServer(lambda r: Reply("##final score: 1")) as server:
        assert main([*args, "--base-url", server.base_url]) == 0  # nulls are kept by default
        assert server.request_count == 0
        capsys.readouterr()
        assert main([*args, "--base-url", server.base_url, "--retry-nulls", "--dry-run"]) == 0
        assert "2 already in" in capsys.readouterr().out and server.request_count == 0
        assert main([*args, "--base-url", server.base_url, "--retry-nulls"]) == 0
        asked = [r.prompt for r in server.requests]
    printed = capsys.readouterr().out
    assert len(asked) == 2 and all("passage 1 " in p or "passage 3 " in p for p in asked)
    assert "labels: 1: 2, 2: 1, 3: 1" in printed and "asked again: 2 pair(s)" in printed
    rows = [json.loads(x) for x in (out / "judgments.jsonl").read_text().splitlines()]
    assert sorted((r["doc_id"], r["label"]) for r in rows) == [
        ("d0", 2), ("d1", 1), ("d2", 3), ("d3", 1),
    ]  # fmt: skip
    assert len((out / "judgments.superseded.jsonl").read_text().splitlines()) == 2
    summary = json.loads((out / "summary.json").read_text())
    assert summary["usage"]["calls"] == 2 and summary["spent"]["calls"] == 6  # 4 + 2 over runs
    assert "over all its runs: 6 paid calls" in printed


def test_an_empty_pool_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pool = tmp_path / "pool.jsonl"
    pool.write_text("\n")
    code = main(["judge", str(pool), "--out", str(tmp_path / "out"), "--dry-run"])
    err = capsys.readouterr().err
    assert code == 2 and f"{pool}: the pool file holds no (query, doc) pairs" in err
    run = tmp_path / "a.run"
    run.write_text("1 Q0 d1 1 2.0 a\n")
    code = main(
        ["pool", str(run), "--query-ids", "7", "--ids-only", "--out", str(tmp_path / "p.jsonl")]
    )
    assert code == 2 and "nothing to pool" in capsys.readouterr().err


def test_pool_without_query_texts_is_refused_unless_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "a.run"
    run.write_text("1 Q0 d1 1 2.0 a\n")
    out = tmp_path / "p.jsonl"
    assert main(["pool", str(run), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no query texts" in err and "--queries" in err and "Traceback" not in err
    assert not out.exists()
    assert main(["pool", str(run), "--ids-only", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["query"] == ""


def test_qrels_import_reads_integral_floats_and_refuses_fractions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, 3)
    ann = tmp_path / "ann.csv"
    # as spreadsheets export them
    ann.write_text("query_id,doc_id,grade\n1,d0,2.0\n2,d1, 1.00 \n3,d2,0\n")
    out = tmp_path / "q.txt"
    assert main(["qrels", "import", str(ann), "--pool", str(pool), "--out", str(out)]) == 0
    assert out.read_text() == "1 0 d0 2\n2 0 d1 1\n3 0 d2 0\n"
    ann.write_text("query_id,doc_id,grade\n1,d0,2.5\n2,d1,nan\n")
    capsys.readouterr()
    assert main(["qrels", "import", str(ann), "--pool", str(pool), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{ann}:2: grade '2.5' is not a whole number (2 and 2.0 are read as 2)" in err
    assert f"{ann}:3: grade 'nan' is not a whole number" in err


def test_agree_on_qrels_sharing_no_query_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = tmp_path / "a.txt"
    a.write_text("1 0 d1 1\n1 0 d2 0\n2 0 d3 1\n")
    b = tmp_path / "b.txt"
    b.write_text("5 0 d1 1\n5 0 d2 0\n6 0 d3 1\n7 0 d4 1\n8 0 d5 0\n")
    r1, r2 = tmp_path / "r1.run", tmp_path / "r2.run"
    r1.write_text("1 Q0 d1 1 2 r1\n")
    r2.write_text("1 Q0 d2 1 2 r2\n")
    for flags in ([], ["--unjudged-as", "0"], ["--runs", str(r1), str(r2)], ["--format", "json"]):
        code = main(["agree", str(a), str(b), *flags])
        captured = capsys.readouterr()
        assert code == 2 and "shared judged pairs" not in captured.out
        assert "the two qrels share no query (2 and 4 queries)" in captured.err
    b.write_text("1 0 d1 1\n1 0 d9 1\n6 0 d3 1\n")
    assert main(["agree", str(a), str(b), "--unjudged-as", "0"]) == 0
    out = capsys.readouterr().out
    assert "queries judged by both: 1 (only in a.txt: 1, only in b.txt: 1;" in out
    assert "shared judged pairs: 1 (only in a.txt: 1, only in b.txt: 1)" in out
    assert "compared pairs: 3 (a pair judged by one side only counts as grade 0" in out
    # two files of the same name are told apart by their paths
    (tmp_path / "h").mkdir()
    (tmp_path / "l").mkdir()
    (tmp_path / "h" / "qrels.txt").write_text(a.read_text())
    (tmp_path / "l" / "qrels.txt").write_text(b.read_text())
    human, llm = str(tmp_path / "h" / "qrels.txt"), str(tmp_path / "l" / "qrels.txt")
    assert main(["agree", human, llm, "--unjudged-as", "0"]) == 0
    out = capsys.readouterr().out
    assert f"queries judged by both: 1 (only in {human}: 1, only in {llm}: 1;" in out
    assert f"confusion (rows: {human}, columns: {llm}):" in out


def test_judge_cuts_a_long_passage_to_the_token_budget_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = tmp_path / "pool.jsonl"
    long_text = "flutter " * 125_000  # 1 MB
    rows = [
        {"query_id": "1", "query": "wing flutter", "doc_id": "big", "text": long_text},
        {"query_id": "1", "query": "wing flutter", "doc_id": "small", "text": "short text"},
    ]
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    args = [
        "judge",
        str(pool),
        "--cache-path",
        str(tmp_path / "c.sqlite"),
        "--out",
        str(tmp_path / "o"),
    ]
    with ScriptedLLMServer(lambda r: Reply("##final score: 2")) as server:
        assert main([*args, "--base-url", server.base_url]) == 0
        prompts = {r.prompt.split("Passage: ")[1][:5]: r.prompt for r in server.requests}
    out = capsys.readouterr().out
    assert "1 passage(s) longer than 2000 tokens are cut to their first 2000" in out
    sent = prompts["flutt"].split("Passage: ")[1].split("\n\nWork through")[0]
    assert len(sent) <= 8000 and sent.endswith("flutter")  # cut at a word
    rows_out = {
        r["doc_id"]: r
        for r in map(json.loads, (tmp_path / "o" / "judgments.jsonl").read_text().splitlines())
    }
    assert rows_out["big"]["passage_truncated"] is True
    assert rows_out["big"]["passage_tokens"] == 250_000
    assert rows_out["small"]["passage_truncated"] is False
    with ScriptedLLMServer(lambda r: Reply("1")) as server:
        code = main([*args[:-2], "--out", str(tmp_path / "p"), "--base-url", server.base_url,
                     "--max-passage-tokens", "0", "--dry-run"])  # fmt: skip
    assert code == 0 and "are cut" not in capsys.readouterr().out


def test_killed_with_many_calls_in_flight_every_written_row_is_in_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Answers are committed to the cache in shared commits; a row is written (counted) only
    # once its answer is on disk, so a kill loses no answer that a row stands for, and a rerun
    # pays only for what the cache lacks.
    import sqlite3

    from rankscope.judge.cache import CacheKey

    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, 60)
    lock = threading.Lock()
    state = {"answered": 0, "hang": True}

    def handler(req: RecordedRequest) -> Reply | Hang:
        with lock:
            if state["hang"] and state["answered"] >= 30:
                return Hang(120)
            state["answered"] += 1
        return Hang(0.05, Reply("##final score: 1"))

    env = _env(tmp_path)
    for name in ("ANTHROPIC_API_KEY", "RANKSCOPE_CACHE_DIR"):
        monkeypatch.setenv(name, env[name])
    out = tmp_path / "out"
    args = [
        "judge", str(pool), "--provider", "anthropic", "--model", "claude-haiku",
        "--concurrency", "8", "--out", str(out),
    ]  # fmt: skip
    with ScriptedLLMServer(handler, api_key="test-key") as server:
        args += ["--base-url", server.base_url]
        proc = subprocess.Popen(
            [sys.executable, "-m", "rankscope", *args],
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert server.wait_for_requests(38, timeout=90), "client never got going"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
        rows = [json.loads(x) for x in (out / "judgments.jsonl").read_text().splitlines()]
        db = sqlite3.connect(Path(env["RANKSCOPE_CACHE_DIR"]) / "judgments.sqlite")
        cached = {k for (k,) in db.execute("SELECT key FROM judgments")}
        db.close()
        keys = {
            CacheKey(r["provider"], r["model"], r["template_hash"], r["query_hash"],
                     r["doc_hash"]).digest
            for r in rows
        }  # fmt: skip
        assert rows and keys <= cached  # every counted row is durable in the cache
        before = server.request_count
        state["hang"] = False
        assert main(args) == 0
        asked_again = [r.prompt for r in server.requests[before:]]
    assert f"{len(rows)} already in" in capsys.readouterr().out
    assert len(asked_again) == 60 - len(cached)  # nothing in the cache is paid for again
    assert len((out / "qrels.txt").read_text().splitlines()) == 60


def test_a_rerun_with_nothing_to_ask_loads_no_sdk_and_exit_skips_the_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = tmp_path / "pool.jsonl"
    _write_pool(pool, 4)
    env = _env(tmp_path)
    for name in ("ANTHROPIC_API_KEY", "RANKSCOPE_CACHE_DIR"):
        monkeypatch.setenv(name, env[name])
    # Registered before the command runs, so it runs after the command's own exit hooks.
    probe = (
        "import atexit, gc, sys\n"
        "from rankscope.cli.app import main\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0,"
        " 'sdk', 'anthropic' in sys.modules))\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    with ScriptedLLMServer(lambda r: Reply("##final score: 2"), api_key="test-key") as server:
        args = [
            "judge", str(pool), "--provider", "anthropic", "--model", "claude-haiku",
            "--base-url", server.base_url, "--out", str(tmp_path / "out"),
        ]  # fmt: skip
        first = subprocess.run(
            [sys.executable, "-c", probe, *args], env=env, cwd=REPO, capture_output=True, text=True
        )
        again = subprocess.run(
            [sys.executable, "-c", probe, *args], env=env, cwd=REPO, capture_output=True, text=True
        )
        assert server.request_count == 4
    assert first.returncode == 0, first.stderr
    assert "frozen True sdk True" in first.stdout  # calls were made: the SDK was loaded
    assert again.returncode == 0, again.stderr
    assert "4 already in" in again.stdout and "frozen True sdk False" in again.stdout


def test_agree_over_two_runs_says_tau_can_only_be_plus_or_minus_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = tmp_path / "a.txt"
    a.write_text("1 0 d1 1\n1 0 d2 0\n2 0 d1 1\n2 0 d2 0\n")
    b = tmp_path / "b.txt"
    b.write_text("1 0 d1 0\n1 0 d2 1\n2 0 d1 0\n2 0 d2 1\n")
    r1, r2 = tmp_path / "r1.run", tmp_path / "r2.run"
    r1.write_text("1 Q0 d1 1 2 r1\n2 Q0 d1 1 2 r1\n")
    r2.write_text("1 Q0 d2 1 2 r2\n2 Q0 d2 1 2 r2\n")
    assert main(["agree", str(a), str(b), "--runs", str(r1), str(r2)]) == 0
    out = capsys.readouterr().out
    assert "Kendall's tau-b over 2 runs = -1.0000" in out
    assert "over 2 runs tau can only be +1 or -1" in out
