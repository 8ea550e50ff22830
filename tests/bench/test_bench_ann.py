"""ann_recall@k: an engine's top k against the exact nearest neighbours of the same vectors.

Checked against a brute-force count (numpy over every vector), on hand-made rankings and on a
benchmark of real stores: exact configurations score exactly 1.0, an IVF index scanning one
cell scores what the brute force says, and the files the benchmark writes give the same values.
"""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path

import numpy as np
import pytest

from rankscope.bench import run_benchmark
from rankscope.bench.ann import ann_recall, ann_recall_from_files
from rankscope.engines.embeddings import HashingEmbedder
from rankscope.engines.neighbours import exact_top
from rankscope.suite import load_suite


def _brute_force(scores: np.ndarray, ranking: list[int], k: int) -> float:
    """Share of the ranking's first k that score at least the k-th highest of all scores
    (a full sort; within 1e-6 of it counts, as a tie)."""
    kth = float(np.sort(scores)[::-1][k - 1])
    return sum(1 for r in ranking[:k] if float(scores[r]) >= kth - 1e-6) / k


def test_ann_recall_equals_a_brute_force_count_on_random_vectors() -> None:
    rng = np.random.default_rng(7)
    docs = rng.standard_normal((300, 24)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    for trial in range(40):
        q = rng.standard_normal(24).astype(np.float32)
        q /= np.linalg.norm(q)
        scores = docs @ q
        k = [1, 5, 10, 20][trial % 4]
        exact = [(str(i), float(scores[i])) for i in exact_top(scores, k)]
        # an approximate ranking: some of the exact top 2k, shuffled, padded with others
        order = np.argsort(-scores).tolist()
        picked = rng.choice(order[: 2 * k], size=k, replace=False).tolist()
        ranking = [int(i) for i in picked]
        got = ann_recall([str(i) for i in ranking], exact, k)
        assert got == _brute_force(scores, ranking, k)


def test_exact_top_k_scores_one_in_any_order() -> None:
    scores = np.asarray([0.9, 0.1, 0.8, 0.3, 0.7], dtype=np.float32)
    exact = [(str(i), float(scores[i])) for i in exact_top(scores, 3)]
    assert [u for u, _ in exact] == ["0", "2", "4"]
    assert ann_recall(["4", "0", "2"], exact, 3) == 1.0
    assert ann_recall(["4", "0", "3"], exact, 3) == pytest.approx(2 / 3, abs=0)
    assert ann_recall(["4"], exact, 3) == pytest.approx(1 / 3, abs=0)  # fewer hits than k
    assert ann_recall([], exact, 3) == 0.0


def test_a_unit_tied_with_the_kth_counts_as_a_neighbour() -> None:
    # units 1 and 2 tie for the 2nd place: either one makes the top 2 exact
    scores = np.asarray([0.9, 0.5, 0.5, 0.1], dtype=np.float32)
    exact = [(str(i), float(scores[i])) for i in exact_top(scores, 2)]
    assert [u for u, _ in exact] == ["0", "1", "2"]  # the tie is kept
    assert ann_recall(["0", "2"], exact, 2) == 1.0
    assert ann_recall(["0", "1"], exact, 2) == 1.0
    assert ann_recall(["0", "3"], exact, 2) == 0.5
    # within the tolerance (1e-6) counts as tied; beyond it does not
    near = [("a", 0.9), ("b", 0.5), ("c", 0.5 - 5e-7), ("d", 0.5 - 5e-6)]
    assert ann_recall(["a", "c"], near, 2) == 1.0
    assert ann_recall(["a", "d"], near, 2) == 0.5


def test_a_unit_the_engine_returns_twice_counts_once() -> None:
    # chunked engines can return one unit twice in their top k: it is one neighbour found
    exact = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    assert ann_recall(["a", "a", "a"], exact, 3) == pytest.approx(1 / 3, abs=0)
    assert ann_recall(["a", "a", "b"], exact, 3) == pytest.approx(2 / 3, abs=0)
    assert ann_recall(["x", "b", "b"], exact, 2) == 0.5


def test_a_corpus_smaller_than_k_divides_by_its_size_and_no_vector_has_no_value() -> None:
    exact = [("a", 0.9), ("b", 0.2)]
    assert ann_recall(["b", "a"], exact, 10) == 1.0
    assert ann_recall(["b"], exact, 10) == 0.5
    assert ann_recall(["a"], [], 10) is None
    with pytest.raises(ValueError):
        ann_recall(["a"], exact, 0)


# -- a benchmark of real stores ---------------------------------------------------------------

_DIM = 32


def _corpus(tmp_path: Path) -> list[dict[str, str]]:
    words = [f"w{i}" for i in range(200)]
    rng = random.Random(3)
    docs = [
        {"_id": f"d{i:03d}", "title": "", "text": " ".join(rng.sample(words, 10))}
        for i in range(400)
    ]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    return docs


def _suite(tmp_path: Path) -> Path:
    queries = "\n".join(
        f"  - {{id: q{i}, text: w{i} w{i + 50} w{i + 100}, judgments: {{d{i:03d}: 1}}}}"
        for i in range(30)
    )
    model = f"hashing:{_DIM}"
    text = textwrap.dedent(
        f"""
        name: ann
        corpus: {{type: jsonl, path: docs.jsonl}}
        settings: {{k: [1, 10], max_k: 20, warmup: 0, repeats: 1}}
        engines:
          - {{name: exact, engine: vector, options: {{model: "{model}"}}}}
          - {{name: flat, engine: faiss, options: {{model: "{model}", index: flat}}}}
          - name: ivf
            engine: faiss
            options: {{model: "{model}", index: ivf_flat, nlist: 40, nprobe: 1}}
          - {{name: sqlite, engine: sqlite}}
        queries:
        """
    )
    path = tmp_path / "suite.yaml"
    path.write_text(text + queries + "\n")
    return path


def test_benchmark_ann_recall_is_one_when_exact_and_the_brute_force_count_when_not(
    tmp_path: Path,
) -> None:
    pytest.importorskip("faiss")
    docs = _corpus(tmp_path)
    out = tmp_path / "out"
    result = run_benchmark(load_suite(_suite(tmp_path)), out)
    assert not result.failures
    # exact configurations: every query, every k, exactly 1.0
    for name in ("exact", "flat"):
        config = result.config(name)
        assert config.per_query is not None
        for values in config.per_query.ann_recall.values():
            assert values == [1.0] * 30
        assert config.view("all").ann_recall == {"ann_recall@1": 1.0, "ann_recall@10": 1.0}
    # a lexical engine has none
    sqlite = result.config("sqlite")
    assert sqlite.per_query is not None and sqlite.per_query.ann_recall == {}
    assert sqlite.exact_run_file is None

    # the IVF index, against numpy over the same hashing vectors
    embedder = HashingEmbedder(_DIM)
    matrix = embedder.embed([d["text"] for d in docs])
    ivf = result.config("ivf")
    assert ivf.per_query is not None and ivf.run_file is not None
    from rankscope.data import read_run

    run = read_run(out / ivf.run_file)
    index = {d["_id"]: i for i, d in enumerate(docs)}
    for k in (1, 10):
        expected = []
        for i in range(30):
            q = embedder.embed([f"w{i} w{i + 50} w{i + 100}"])[0]
            scores = matrix @ q
            ranking = [index[d] for d, _ in run.ranking(f"q{i}")]
            expected.append(_brute_force(scores, ranking, k))
        assert ivf.per_query.ann_recall[f"ann_recall@{k}"] == expected
    mean = ivf.view("all").ann_recall["ann_recall@10"]
    assert mean is not None and mean < 1.0  # one cell of 40: the approximation shows

    # the values are reproducible from the files written
    for config in result.successful:
        if config.name == "sqlite":
            continue
        assert config.exact_run_file == f"ann/{config.name}.exact.trec"
        assert config.ann_units_file is not None and config.ann_recall_tolerance == 1e-6
        again = ann_recall_from_files(
            out,
            units_file=config.ann_units_file,
            exact_file=config.exact_run_file,
            query_ids=result.query_ids,
            ks=[1, 10],
        )
        assert config.per_query is not None and again == config.per_query.ann_recall

    # the HTML report's table of every measure carries it, beside nDCG and recall
    from rankscope.report.content import build
    from rankscope.report.tables import measures_table

    table = measures_table(build(result))
    assert table.header[-2:] == ["ann_recall@1", "ann_recall@10"]
    rows = dict(table.rows)
    assert [c.value for c in rows["flat"][-2:]] == [1.0, 1.0]
    assert [c.value for c in rows["sqlite"][-2:]] == [None, None]
    assert rows["ivf"][-1].value == mean
