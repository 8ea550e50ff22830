"""The Pareto front of quality against latency, within noise, on constructed configurations."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from bench_suites import make_suite
from rich.console import Console

from rankscope.bench import run_benchmark
from rankscope.bench.pareto import classic_front, pareto_front
from rankscope.report import render_table
from rankscope.suite import load_suite

N = 40


def _constructed() -> tuple[list[str], np.ndarray, np.ndarray]:
    """Five configurations over 40 queries:

    - ``slow-good``: quality ~0.8, 10 ms;
    - ``fast-good``: the same quality within noise, 1 ms: beats slow-good;
    - ``fastest-poor``: quality ~0.2, 0.5 ms: nothing is faster, on the front;
    - ``mid-poor``: quality ~0.2 (fastest-poor's within noise), 5 ms: beaten;
    - ``near``: 0.01 below fast-good and 2% slower, both within noise: on the front, although
      fast-good is ahead of it on both means (the classic front drops it).
    """
    rng = np.random.default_rng(11)
    base = rng.uniform(0.55, 1.0, N)
    noise = lambda sd: rng.normal(0.0, sd, N)  # noqa: E731
    quality = np.stack(
        [
            np.clip(base + noise(0.1), 0, 1),
            np.clip(base + noise(0.1), 0, 1),
            np.clip(base - 0.6 + noise(0.1), 0, 1),
            np.clip(base - 0.6 + noise(0.1), 0, 1),
            np.clip(base + noise(0.1), 0, 1),
        ]
    )
    # fast-good and near: near scores 0.01 lower on average
    quality[4] = np.clip(quality[1] - 0.01 + noise(0.1), 0, 1)
    spread = rng.uniform(0.8, 1.2, N)  # some queries are slower for every configuration
    latency = np.stack(
        [
            10.0 * spread * (1 + noise(0.05)),
            1.0 * spread * (1 + noise(0.05)),
            0.5 * spread * (1 + noise(0.05)),
            5.0 * spread * (1 + noise(0.05)),
            1.0 * spread * (1 + noise(0.3)),
        ]
    )
    latency[4] = latency[1] * 1.02 * (1 + noise(0.3))
    names = ["slow-good", "fast-good", "fastest-poor", "mid-poor", "near"]
    return names, quality, latency


def test_the_front_on_a_constructed_case() -> None:
    names, quality, latency = _constructed()
    means_q, means_t = quality.mean(axis=1), latency.mean(axis=1)
    # the premise: near is behind fast-good on both means, by a margin within noise
    assert means_q[4] < means_q[1] and means_t[4] > means_t[1]
    found = pareto_front(names, quality, latency, label="nDCG@10")
    assert found.configs == ["fast-good", "fastest-poor", "near"]
    assert found.beaten_by == {
        "slow-good": ["fast-good", "near"],
        "mid-poor": ["fast-good", "fastest-poor", "near"],
    }
    assert found.notes == []
    assert "over all 10 pairs" in found.rule and "randomised Tukey HSD" in found.rule
    # by means alone the front differs both ways: near is off (fast-good is ahead of it on
    # both means), and slow-good is on, its quality a hair above fast-good's by chance
    assert means_q[0] > means_q[1]
    classic = classic_front(names, list(means_q), list(means_t))
    assert classic == ["slow-good", "fast-good", "fastest-poor"]


def test_nothing_is_beaten_when_nothing_can_be_tested() -> None:
    one = pareto_front(["a"], np.asarray([[0.5, 0.7]]), np.asarray([[1.0, 2.0]]))
    assert one.configs == ["a"] and one.beaten_by == {}
    # one query: no test is possible, so no difference is significant
    few = pareto_front(
        ["a", "b"], np.asarray([[0.9], [0.1]]), np.asarray([[1.0], [9.0]]), label="nDCG@10"
    )
    assert few.configs == ["a", "b"]
    assert few.notes == [
        "nDCG@10: fewer than 2 queries with values, no difference tested",
        "latency: fewer than 2 queries every configuration ran, none tested",
    ]


def test_latency_is_compared_over_the_queries_every_configuration_ran() -> None:
    names, quality, latency = _constructed()
    latency = latency.copy()
    latency[0, :5] = np.nan  # slow-good skipped five queries
    found = pareto_front(names, quality, latency)
    assert found.configs == ["fast-good", "fastest-poor", "near"]


def test_results_json_and_the_table_mark_the_front(tmp_path: Path) -> None:
    engines = """
    - {name: a, engine: benchtest-overlap}
    - {name: b, engine: benchtest-overlap}
    """
    out = tmp_path / "out"
    result = run_benchmark(load_suite(make_suite(tmp_path, engines)), out)
    for view in ("answered", "all"):
        front = result.statistics[view].pareto
        assert front is not None
        # two identical engines: neither beats the other
        assert front.configs == ["a", "b"] and front.beaten_by == {}
    stored = (out / "results.json").read_text()
    assert '"pareto"' in stored and '"beaten_by"' in stored
    console = Console(file=io.StringIO(), width=250, color_system=None)
    render_table(result, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    header = next(line for line in text.splitlines() if "configuration" in line)
    assert "Pareto" in header
    rows = [line for line in text.splitlines() if line.startswith("│ ")]
    assert len(rows) == 2 and all("◆" in row for row in rows)
    assert "◆ Pareto front: a configuration beats another" in text


def test_a_configuration_faster_on_every_query_beats_the_others_among_many() -> None:
    # 34 configurations (561 pairs), equal quality, each slower than the one before on every
    # query: only the fastest is on the front. With 10,000 draws a pair's smallest p (1/10,001)
    # times 561 (Holm) would be above 0.05, and nothing would be beaten
    rng = np.random.default_rng(5)
    m, n = 34, 20
    quality = np.tile(rng.uniform(0, 1, n), (m, 1))
    spread = rng.uniform(0.5, 2.0, n)
    latency = np.stack([(1.0 + i) * spread for i in range(m)])
    names = [f"c{i:02d}" for i in range(m)]
    found = pareto_front(names, quality, latency)
    assert found.configs == ["c00"]
    assert found.beaten_by["c33"] == names[:-1]
    assert "B = 22,440" in found.rule
