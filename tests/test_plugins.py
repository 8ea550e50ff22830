"""Plugins: a package's engine and measure, declared as entry points, run through bench,
compare, report, diff and eval without rankscope being changed. The package is
tests/plugins/rankscope_demo_plugin; the fixture installs it the way pip would leave it for
importlib.metadata (a ``.dist-info`` folder with its entry points, on the path)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "tests" / "plugins" / "rankscope_demo_plugin"
EXAMPLES = ROOT / "examples"


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a process that has the demo plugin installed."""
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dist = tmp_path / "site" / "rankscope_demo_plugin-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    lines = []
    for group, points in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in points.items()]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
    path = os.pathsep.join([str(tmp_path / "site"), str(PLUGIN), str(ROOT / "src")])
    return {**os.environ, "PYTHONPATH": path, "COLUMNS": "200"}


def rankscope(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rankscope", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


SUITE = """
name: plugin
corpus: {type: jsonl, path: %(examples)s/corpus.jsonl}
queries: {path: %(examples)s/queries.jsonl}
qrels: %(examples)s/qrels.txt
settings: {k: [10], max_k: 20, warmup: 0, repeats: 1, measures: [ndcg@10, demo_top1, hit@1]}
engines:
  - {name: bm25, engine: sqlite}
  - {name: overlap, engine: demo_overlap, options: {%(option)s: 2.0}}
"""


def test_a_plugin_engine_and_measure_run_through_bench_compare_diff_and_eval(
    plugin_env: dict[str, str], tmp_path: Path
) -> None:
    env = plugin_env
    listed = rankscope(env, "engines", "demo_overlap", "--format", "json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    info = json.loads(listed.stdout)
    assert info["source"] == "plugin rankscope-demo-plugin"
    assert info["options"] == [
        {"name": "boost", "type": "float", "required": False, "default": 1.0, "choices": []}
    ]

    suite = tmp_path / "suite.yaml"
    suite.write_text(textwrap.dedent(SUITE % {"examples": EXAMPLES, "option": "boots"}))
    typo = rankscope(env, "bench", str(suite), "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert typo.returncode == 2
    assert typo.stderr == (
        f"rankscope: error: {suite}:9: engines[1].options.boots (configuration 'overlap'): "
        "unknown option 'boots' for engine 'demo_overlap'. Did you mean `boost`? Engine "
        "'demo_overlap' takes: boost\n"
    )
    assert not (tmp_path / "out").exists()  # nothing ran

    suite.write_text(textwrap.dedent(SUITE % {"examples": EXAMPLES, "option": "boost"}))
    out = tmp_path / "out"
    bench = rankscope(env, "bench", str(suite), "-o", str(out), "-f", "json", cwd=tmp_path)
    assert bench.returncode == 0, bench.stderr
    results = json.loads((out / "results.json").read_text())
    means = {c["name"]: c["views"]["answered"]["summary"] for c in results["configurations"]}
    # demo_top1 is hit@1 written as a plugin: the same values, computed by the plugin
    assert (means["bm25"]["demo_top1"], means["bm25"]["hit@1"]) == (1.0, 1.0)
    assert (means["overlap"]["demo_top1"], means["overlap"]["hit@1"]) == (0.8, 0.8)
    assert means["overlap"]["ndcg@10"] == pytest.approx(0.7407881523388088, abs=1e-12)

    compare = rankscope(
        env, "compare", str(out), "-m", "demo_top1", "--format", "json", cwd=tmp_path
    )
    assert compare.returncode == 0, compare.stderr
    assert '"demo_top1"' in compare.stdout

    report = rankscope(env, "report", str(out), "--md", "-", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert "demo_top1" in report.stdout

    diff = rankscope(env, "diff", str(out), "bm25", "overlap", "-m", "demo_top1", cwd=tmp_path)
    assert diff.returncode == 0, diff.stderr
    assert "demo_top1" in diff.stdout

    evaluated = rankscope(
        env, "eval", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "bm25.run"), "-m",
        "demo_top1", "-m", "hit@1", "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    assert json.loads(evaluated.stdout)["runs"][0]["mean"] == {"demo_top1": 0.9, "hit@1": 0.9}


def test_without_the_plugin_its_names_are_unknown(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    got = rankscope(env, "engines", "demo_overlap", cwd=tmp_path)
    assert got.returncode == 2 and "unknown engine 'demo_overlap'" in got.stderr
