"""The demo's hybrid does not lose to its own best member on the demo's queries."""

from __future__ import annotations

import pytest

from prerequisites import run_slow
from rankscope import evaluate
from rankscope.bench.build import build_engine
from rankscope.demo import SUITE_PATH
from rankscope.engines import Engine
from rankscope.engines.base import create_engine
from rankscope.suite import load_suite


@pytest.mark.slow
def test_demo_hybrid_is_at_least_as_good_as_its_best_member() -> None:
    run_slow("embeds the demo corpus with MiniLM")
    suite = load_suite(SUITE_PATH)
    (config,) = [c for c in suite.configs if c.engine == "hybrid"]
    docs = suite.documents()
    hybrid = build_engine(config)
    members: dict[str, Engine] = {
        spec["engine"]: create_engine(
            str(spec["engine"]), **{k: v for k, v in spec.items() if k != "engine"}
        )
        for spec in config.options["engines"]
    }
    queries = [q for q in suite.queries if q.kind in hybrid.supported_kinds]
    assert len(queries) == 80
    qrels = {q: r for q, r in suite.qrels().to_dict().items() if q in {x.id for x in queries}}
    runs = {}
    for name, engine in [*members.items(), ("hybrid", hybrid)]:
        with engine:
            engine.index(docs)
            runs[name] = {q.id: {h.doc_id: h.score for h in engine.search(q, 100)} for q in queries}
    scores = evaluate(qrels, runs, "ndcg@10", average_over_qrels=True)
    ndcg = {name: scores.mean(name)["ndcg@10"] for name in runs}
    best = max(ndcg[m] for m in members)
    assert ndcg["hybrid"] >= best, ndcg


@pytest.mark.slow
def test_demo_dense_quality_is_the_same_with_onnx_and_torch() -> None:
    run_slow("embeds the demo corpus twice with MiniLM")
    pytest.importorskip("onnxruntime")
    pytest.importorskip("sentence_transformers")
    suite = load_suite(SUITE_PATH)
    docs = suite.documents()
    queries = [q for q in suite.queries if q.kind in ("query_string", "match")]
    qrels = {q: r for q, r in suite.qrels().to_dict().items() if q in {x.id for x in queries}}
    runs = {}
    for backend in ("onnx", "torch"):
        with create_engine("vector", fields=["text"], backend=backend) as engine:
            engine.index(docs)
            runs[backend] = {
                q.id: {h.doc_id: h.score for h in engine.search(q, 100)} for q in queries
            }
    scores = evaluate(qrels, runs, "ndcg@10", average_over_qrels=True)
    onnx, torch = (scores.mean(b)["ndcg@10"] for b in ("onnx", "torch"))
    assert abs(onnx - torch) < 1e-3, (onnx, torch)
