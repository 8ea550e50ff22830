"""Where configurations ran: the host in each record, a warning when there were several, and
the check a Ray task makes that its node sees the driver's corpus (no Ray needed here)."""

from __future__ import annotations

import json
import socket
from dataclasses import replace
from pathlib import Path

from bench_suites import make_suite

from rankscope.bench import ConfigRecord, run_benchmark
from rankscope.bench.checks import host_warnings
from rankscope.bench.ray_runner import TaskOutcome, corpus_file, run_task, side_by_side_warnings
from rankscope.bench.runner import RunInputs
from rankscope.suite import BenchConfig, load_suite


def record(name: str, host: str | None, status: str = "ok") -> ConfigRecord:
    spec = BenchConfig(name=name, engine="sqlite")
    return ConfigRecord.model_validate(
        {"name": name, "config": spec, "host": host, "status": status}
    )


def test_each_configuration_names_its_host(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path, "- {name: lite, engine: sqlite}"))
    result = run_benchmark(suite, tmp_path / "out")
    assert result.config("lite").host == socket.gethostname()
    saved = json.loads((tmp_path / "out" / "configs" / "lite.json").read_text())
    assert saved["host"] == socket.gethostname()
    assert not any("machines" in w for w in result.warnings)


def test_several_hosts_are_warned_about() -> None:
    assert host_warnings([record("a", "n1"), record("b", "n1"), record("c", None)]) == []
    # a failed configuration measured nothing
    assert host_warnings([record("a", "n1"), record("b", "n2", "failed")]) == []
    (warning,) = host_warnings([record("a", "n1"), record("b", "n2"), record("c", "n1")])
    assert "ran on 2 machines (n1: a, c; n2: b)" in warning
    assert "latencies measured on different machines are not comparable" in warning


def test_a_task_whose_node_lacks_the_corpus_fails_naming_host_and_path(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path, "- {name: lite, engine: sqlite}"))
    inputs = RunInputs.of(suite, (), 5)
    expected = corpus_file(inputs)
    assert expected is not None and expected.size == (tmp_path / "docs.jsonl").stat().st_size

    outcome = run_task(inputs, suite.configs[0], expected)  # the same file: it runs
    ran = outcome.record
    assert ran.ok and ran.rankings and outcome.host == socket.gethostname()
    assert outcome.started <= outcome.finished

    other = replace(expected, size=expected.size + 1)  # the driver saw another file
    failed = run_task(inputs, suite.configs[0], other).record
    assert failed.status == "failed" and failed.stage == "index"
    assert failed.error is not None and str(tmp_path / "docs.jsonl") in failed.error
    assert f"on host {socket.gethostname()}" in failed.error
    assert f"here: {expected.size} bytes; the driver's: {other.size} bytes" in failed.error
    assert "filesystem every node mounts" in failed.error

    (tmp_path / "docs.jsonl").unlink()  # not on this node at all
    missing = run_task(inputs, suite.configs[0], expected).record
    assert missing.error is not None and "(here: missing;" in missing.error


def test_configurations_side_by_side_on_one_machine_are_warned_about() -> None:
    def ran(name: str, host: str, start: float, end: float, status: str = "ok") -> TaskOutcome:
        return TaskOutcome(record(name, host, status), host, start, end)

    # one after the other (an end and a start at the same moment do not overlap), or on
    # different machines, or beside a failure: nothing to say
    apart = [ran("a", "n1", 0, 1), ran("b", "n1", 1, 2), ran("c", "n2", 0, 2)]
    assert side_by_side_warnings([*apart, ran("d", "n1", 0, 2, "failed")]) == []
    (warning,) = side_by_side_warnings([*apart, ran("d", "n1", 0.5, 1.5), ran("e", "n2", 3, 4)])
    assert warning.startswith("with --ray, up to 2 configurations ran at the same time on n1")
    assert "(a, b, d)" in warning and "latencies are not those of a configuration" in warning
    three = [ran("a", "n1", 0, 3), ran("b", "n1", 1, 3), ran("c", "n1", 2, 3)]
    assert "up to 3 configurations" in side_by_side_warnings(three)[0]
