"""Engine capabilities are declared on the engine class, not kept as lists of names elsewhere."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from rankscope.bench.build import build_engine, engine_options
from rankscope.engines import Document, Engine, Hit, Query, register_engine
from rankscope.engines.base import engine_class
from rankscope.errors import ConfigError
from rankscope.suite import BenchConfig


@register_engine("capability-test-dense")
class _MyDense(Engine):
    """A user's dense engine: declaring ``embeds_text`` is all it takes to get the model."""

    name = "capability-test-dense"
    embeds_text = True

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    def index(self, docs: Iterable[Document]) -> None:
        pass

    def _search(self, query: Query, k: int) -> list[Hit]:
        return []


def test_a_registered_engine_that_embeds_gets_the_configurations_model() -> None:
    config = BenchConfig(name="mine", engine="capability-test-dense", embedding_model="my-model")
    assert config.needs_embeddings
    with build_engine(config) as engine:
        assert isinstance(engine, _MyDense)
        assert engine.model == "my-model"


def test_hybrid_passes_the_model_to_every_member_that_embeds() -> None:
    members: list[dict[str, Any]] = [
        {"engine": "sqlite"},
        {"engine": "capability-test-dense"},
        {"engine": "vector", "model": "kept"},
    ]
    config = BenchConfig(
        name="h", engine="hybrid", options={"engines": members}, embedding_model="m"
    )
    assert engine_options(config)["engines"] == [
        {"engine": "sqlite"},
        {"engine": "capability-test-dense", "model": "m"},
        {"engine": "vector", "model": "kept"},
    ]
    # the default members are declared on the hybrid class
    default = engine_options(BenchConfig(name="d", engine="hybrid", embedding_model="m"))["engines"]
    assert default == [{"engine": "sqlite"}, {"engine": "vector", "model": "m"}]
    # a rerank engine's own model reranks: the configuration's model goes to its first stage
    rerank = engine_class("rerank").with_embedding_model(
        {"engine": {"engine": "vector"}, "mode": "embedding"}, "m"
    )
    assert rerank == {"engine": {"engine": "vector", "model": "m"}, "mode": "embedding"}


def test_an_embedding_model_for_an_engine_that_embeds_nothing_is_refused() -> None:
    lexical = {"engines": [{"engine": "sqlite"}, {"engine": "tantivy"}]}
    for config in (
        BenchConfig(name="s", engine="sqlite", embedding_model="m"),
        BenchConfig(name="h", engine="hybrid", options=lexical, embedding_model="m"),
    ):
        with pytest.raises(ConfigError, match=r"does not embed text.*embedding_model does not"):
            engine_options(config)


def test_capabilities_decide_whether_an_embedding_backend_is_needed() -> None:
    assert engine_class("vector").embeds_text and engine_class("pgvector").embeds_text
    assert engine_class("hybrid").composite and engine_class("rerank").composite
    assert not engine_class("sqlite").embeds_text and not engine_class("sqlite").composite
    assert BenchConfig(name="v", engine="vector").needs_embeddings
    # the model-free hashing embedder needs no embedding library
    assert not BenchConfig(
        name="v", engine="vector", options={"model": "hashing:64"}
    ).needs_embeddings
    lexical_and_hashing = [{"engine": "sqlite"}, {"engine": "vector", "model": "hashing"}]
    assert not BenchConfig(
        name="h", engine="hybrid", options={"engines": lexical_and_hashing}
    ).needs_embeddings
    assert BenchConfig(
        name="h", engine="hybrid"
    ).needs_embeddings  # default members: sqlite + vector
    assert BenchConfig(name="s", engine="sqlite", reranker="cross-encoder/x").needs_embeddings


def test_the_embedders_live_with_the_engines() -> None:
    import importlib

    assert importlib.util.find_spec("rankscope.engines.embeddings") is not None
    assert importlib.util.find_spec("rankscope.embeddings") is None
    import rankscope.suite.sweep as sweep

    assert not hasattr(sweep, "EMBEDDING_ENGINES")  # capabilities are on the engine classes
