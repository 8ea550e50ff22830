"""``rankscope bench --ray``: configurations as Ray tasks on a local two-CPU cluster.

A Ray run must write the results.json of a local run: every field is equal except those that
depend on when and where it ran (:data:`MAY_DIFFER`, as docs/ray.md lists them).
"""

from __future__ import annotations

import copy
import json
import logging
import os
import shutil
import socket
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="needs the ray extra: pip install 'rankscope[ray]'")

from rankscope.bench import BenchmarkResult, ConfigRecord, NullReporter, run_benchmark  # noqa: E402
from rankscope.bench.ray_runner import RayOptions  # noqa: E402
from rankscope.cli.app import main  # noqa: E402
from rankscope.errors import RankscopeError  # noqa: E402
from rankscope.suite import BenchConfig, load_suite  # noqa: E402

#: what may differ between two runs of one suite, Ray or not: when and where it ran, and what
#: was timed (with what is derived from timings: latency statistics, the fastest and balanced
#: picks; the best-quality pick too where headlines tie, as ties go to the faster)
MAY_DIFFER = {
    "top": ["timestamp"],
    "configuration": ["started_at", "finished_at", "host", "index_time_s", "qps"],
    "view": ["latency"],
    "per_query": ["latency_ms"],
    "statistics": ["latency"],
    "recommendations": ["fastest", "best_balance"],
}
#: warnings about how the configurations ran (several machines; side by side on one)
RUN_WARNINGS = ("machines (", "with --ray, up to ")

DOCS = [
    {"_id": "d1", "title": "Pools", "text": "connection pooling for databases"},
    {"_id": "d2", "title": "Reuse", "text": "a pool of connections is reused"},
    {"_id": "d3", "title": "Logs", "text": "rotating log files daily"},
    {"_id": "d4", "title": "Policy", "text": "log rotation policy"},
    {"_id": "d5", "title": "Backoff", "text": "retry with exponential backoff"},
    {"_id": "d6", "title": "Failures", "text": "retrying failed requests"},
]

FAILING = """
def search(text, k):
    raise RuntimeError("index server went away")
"""

# Both configurations wait in ``index`` until the other has started: they finish only when
# two workers run them at the same time (else the wait times out and both fail).
MEET = """
import os, time
from pathlib import Path

HERE = Path(__file__).parent


def index(docs):
    (HERE / f"started-{os.getpid()}").write_text(str(time.time()))
    deadline = time.monotonic() + 60
    while len(list(HERE.glob("started-*"))) < 2:
        if time.monotonic() > deadline:
            raise RuntimeError("the other configuration never ran alongside this one")
        time.sleep(0.05)


def search(text, k):
    return [("d1", 1.0)]
"""


def write_suite(folder: Path, engines: str) -> Path:
    """Stemming (tantivy) against none (sqlite with unicode61): different quality, no tie."""
    (folder / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    (folder / "failing.py").write_text(FAILING)
    (folder / "meet.py").write_text(MEET)
    head = textwrap.dedent(
        """
        name: ray-bench
        corpus: {type: jsonl, path: docs.jsonl}
        settings: {k: [1, 3], max_k: 5, warmup: 1, repeats: 2}
        queries:
          - {id: q1, text: connection pool, judgments: {d2: 2, d1: 1}}
          - {id: q2, text: retrying, judgments: {d5: 2, d6: 1}}
          - {id: q3, text: rotation, judgments: {d3: 2}}
          - {id: q4, text: log files, judgments: {d3: 1, d4: 1}}
          - {id: q5, text: backoff, judgments: {d5: 2}}
          - {id: q6, text: unjudged pool}
        engines:
        """
    )
    path = folder / "suite.yaml"
    path.write_text(head + textwrap.indent(textwrap.dedent(engines).strip(), "  ") + "\n")
    return path


ENGINES = """
- {name: sqlite, engine: sqlite, options: {tokenizer: unicode61}}
- {name: tantivy, engine: tantivy}
- {name: broken, engine: python, options: {search: "failing:search"}}
"""


def _ray_processes(marker: str) -> list[int]:
    """Processes whose command line names ``marker`` (the cluster's temporary folder)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    """A local Ray cluster of two CPUs (two workers at a time), for this module's tests.

    Its folder is short (Ray's unix sockets live in it: a path holds at most 107 bytes) and
    HOME points into it (Ray writes an authentication token under ~/.ray); usage statistics
    are off (no network in tests). Every Ray process is gone at the end.
    """
    root = Path(tempfile.mkdtemp(prefix="rsray", dir="/tmp"))
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(root / "home"))
        env.setenv("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            _temp_dir=str(root / "r"),
            logging_level=logging.WARNING,
        )
        try:
            yield
        finally:
            ray.shutdown()
    deadline = time.monotonic() + 20
    while _ray_processes(str(root)) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _ray_processes(str(root))
    shutil.rmtree(root, ignore_errors=True)
    assert not left, f"Ray processes left running: {left}"


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    """results.json without the fields that :data:`MAY_DIFFER`."""
    out = copy.deepcopy(data)
    for key in MAY_DIFFER["top"]:
        out.pop(key)
    out["warnings"] = [w for w in out["warnings"] if not any(m in w for m in RUN_WARNINGS)]
    for config in out["configurations"]:
        for key in MAY_DIFFER["configuration"]:
            config.pop(key)
        # engines may report seconds among their indexing counts (names ending in _s)
        config["index_stats"] = {k: v for k, v in config["index_stats"].items() if k[-2:] != "_s"}
        for view in config["views"].values():
            for key in MAY_DIFFER["view"]:
                view.pop(key)
        if config["per_query"] is not None:
            for key in MAY_DIFFER["per_query"]:
                config["per_query"].pop(key)
    for view in out["statistics"].values():
        for key in MAY_DIFFER["statistics"]:
            view.pop(key)
    for view in out["recommendations"].values():
        for key in MAY_DIFFER["recommendations"]:
            view.pop(key)
    return out


def read(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "results.json").read_text())
    return data


def test_a_ray_run_writes_the_results_json_of_a_local_run(cluster: None, tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, ENGINES))
    started = time.perf_counter()
    local = run_benchmark(suite, tmp_path / "local")
    local_s = time.perf_counter() - started
    started = time.perf_counter()
    remote = run_benchmark(suite, tmp_path / "ray", ray=RayOptions())
    ray_s = time.perf_counter() - started
    print(f"local run {local_s:.2f} s, Ray run {ray_s:.2f} s (3 configurations)")

    # the premise: distinct headlines, so that no latency breaks a tie in best_quality
    headlines = [c.views["answered"].summary["ndcg@10"] for c in local.successful]
    assert len(headlines) == 2 and len(set(headlines)) == 2
    assert [f.name for f in remote.failures] == ["broken"]
    assert "index server went away" in str(remote.failures[0].error)

    a, b = read(tmp_path / "local"), read(tmp_path / "ray")
    assert comparable(a) == comparable(b)
    # what the comparison left out is there, and differs only as timings do
    assert a["timestamp"] and b["timestamp"]
    for config in b["configurations"]:
        assert config["host"] == socket.gethostname()
    ok = [c for c in b["configurations"] if c["status"] == "ok"]
    assert all(c["index_time_s"] > 0 and c["per_query"]["latency_ms"][0] > 0 for c in ok)
    assert b["recommendations"]["answered"]["best_quality"]["config"] == "tantivy"
    # the per-query scores, explicitly (the comparison above holds them too)
    for x, y in zip(a["configurations"], b["configurations"], strict=True):
        if x["status"] == "failed":
            assert x["per_query"] is None and y["per_query"] is None
            continue
        assert x["per_query"]["values"] == y["per_query"]["values"]
        assert x["per_query"]["values"]["ndcg@10"][0] is not None
    # run files, judgments and resolved suite: byte for byte
    for name in ("runs/sqlite.trec", "runs/tantivy.trec", "qrels.txt", "suite.resolved.yaml"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes()
    assert not (tmp_path / "ray" / "runs" / "broken.trec").exists()
    # checkpoints: the same records but for timings
    for name in ("sqlite", "tantivy", "broken"):
        x, y = (
            ConfigRecord.model_validate_json(
                (tmp_path / o / "configs" / f"{name}.json").read_text()
            )
            for o in ("local", "ray")
        )
        timed = {"started_at", "finished_at", "index_time_s", "latency_samples_s"}
        timed |= {"measured_wall_s", "qps"}
        assert x.model_dump(exclude=timed) == y.model_dump(exclude=timed)


class StopAtFirstFinished(NullReporter):
    """Ctrl-C in the driver as the first successful configuration is checkpointed."""

    def finish(self, config: BenchConfig, status: str, resumed: bool) -> None:
        if status == "ok" and not resumed:
            raise KeyboardInterrupt


def test_an_interrupted_ray_run_resumes_without_rerunning_finished_configurations(
    cluster: None, tmp_path: Path
) -> None:
    suite = load_suite(write_suite(tmp_path, ENGINES))
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_benchmark(suite, out, ray=RayOptions(), reporter=StopAtFirstFinished())
    assert not (out / "results.json").exists()
    manifest = json.loads((out / "manifest.json").read_text())["configs"]
    finished = [name for name, entry in manifest.items() if entry["status"] == "ok"]
    assert len(finished) == 1
    first = ConfigRecord.model_validate_json((out / "configs" / f"{finished[0]}.json").read_text())

    resumed = run_benchmark(suite, out, ray=RayOptions())
    again = resumed.config(finished[0])
    assert again.resumed and again.started_at == first.started_at
    others = [c for c in resumed.configurations if c.name != finished[0]]
    assert others and not any(c.resumed for c in others)
    assert (out / "results.json").is_file()

    # the folder is the same as a local run's: a local resume reuses what Ray finished
    local = run_benchmark(suite, out)
    assert [c.resumed for c in local.configurations] == [True, True, False]  # failures rerun


def test_two_workers_run_configurations_at_the_same_time(cluster: None, tmp_path: Path) -> None:
    suite = load_suite(
        write_suite(
            tmp_path,
            """
            - {name: one, engine: python, options: {index: "meet:index", search: "meet:search"}}
            - {name: two, engine: python, options: {index: "meet:index", search: "meet:search"}}
            """,
        )
    )
    result = run_benchmark(suite, tmp_path / "out", ray=RayOptions())
    assert result.failures == []
    assert len(list(tmp_path.glob("started-*"))) == 2  # two worker processes
    (warning,) = [w for w in result.warnings if w.startswith("with --ray")]
    assert f"up to 2 configurations ran at the same time on {socket.gethostname()}" in warning
    assert os.getpid() not in {int(p.name.split("-")[1]) for p in tmp_path.glob("started-*")}


def test_a_task_no_node_can_hold_is_refused(cluster: None, tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, ENGINES))
    with pytest.raises(RankscopeError, match="largest node of the Ray cluster has 2"):
        run_benchmark(suite, tmp_path / "out", ray=RayOptions(cpus_per_config=3))
    with pytest.raises(RankscopeError, match="more than 0"):
        RayOptions(cpus_per_config=0)


def test_the_cli_runs_on_the_connected_cluster(
    cluster: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path, ENGINES)
    out = tmp_path / "out"
    args = ["bench", str(suite), "--ray", "-o", str(out), "--quiet", "-f", "json"]
    assert main(args) == 3  # a configuration failed; the others are reported
    data = json.loads(capsys.readouterr().out)
    assert [c["status"] for c in data["configurations"]] == ["ok", "ok", "failed"]
    assert BenchmarkResult.read(out / "results.json").to_data() == data
