"""The contract every engine keeps, run over every case in ``conftest.ENGINE_FACTORIES``.

A test marked ``engine_capability`` runs only for the cases that have the capability (a query
kind, indexing); the others are deselected at collection (tests/engines/conftest.py), so a
case's missing kinds are not reported as skips.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from engines_contract_data import (
    CONTRACT_DOCS,
    CONTRACT_IDS,
    CONTRACT_QUERIES,
    HOSTILE_TEXTS,
    REPLACEMENT_DOCS,
    EngineCase,
    hostile_query,
)

from rankscope.engines import QUERY_KINDS, Engine, Hit, Query
from rankscope.errors import EngineError, UnsupportedQueryError

EngineMaker = Callable[[], Engine]


def _indexed(make_engine: EngineMaker) -> Engine:
    engine = make_engine()
    engine.index(CONTRACT_DOCS)
    return engine


def _check_ranked(hits: list[Hit], k: int) -> None:
    assert len(hits) <= k
    assert all(isinstance(h, Hit) and isinstance(h.doc_id, str) for h in hits)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True), scores
    assert len({h.doc_id for h in hits}) == len(hits), "an id is returned twice"


def test_declares_kinds(make_engine: EngineMaker, engine_case: EngineCase) -> None:
    engine = make_engine()
    assert engine.supported_kinds
    assert set(engine.supported_kinds) <= set(QUERY_KINDS)
    assert "query_string" in engine.supported_kinds
    # the case's declared kinds decide which kind tests are collected for it
    assert engine.supported_kinds == engine_case.kinds


@pytest.mark.parametrize("kind", QUERY_KINDS)
def test_each_supported_kind_ranks_sensibly(make_engine: EngineMaker, kind: str) -> None:
    engine = _indexed(make_engine)
    case = CONTRACT_QUERIES[kind]  # type: ignore[index]
    if kind not in engine.supported_kinds:
        with pytest.raises(UnsupportedQueryError, match=kind):
            engine.search(case.query, 5)
        return
    hits = engine.search(case.query, 5)
    _check_ranked(hits, 5)
    assert hits, f"no hits for {case.query}"
    assert hits[0].doc_id == case.top, hits
    assert {h.doc_id for h in hits} <= CONTRACT_IDS
    if case.only is not None:
        assert {h.doc_id for h in hits} <= case.only, hits


@pytest.mark.parametrize("k", [1, 3, 100])
def test_k_is_respected(make_engine: EngineMaker, k: int) -> None:
    engine = _indexed(make_engine)
    hits = engine.search(CONTRACT_QUERIES["query_string"].query, k)
    _check_ranked(hits, k)
    assert len(hits) == min(k, len(hits)) and hits
    if k == 1:
        assert hits[0].doc_id == "d1"
    assert engine.search(CONTRACT_QUERIES["query_string"].query, 0) == []


def test_top_k_is_a_prefix_of_a_deeper_search(make_engine: EngineMaker) -> None:
    engine = _indexed(make_engine)
    query = Query("q-flow", "flow wall")
    deep = engine.search(query, 8)
    shallow = engine.search(query, 3)
    assert [h.doc_id for h in shallow] == [h.doc_id for h in deep[:3]]


@pytest.mark.engine_capability("indexes")
def test_reindexing_replaces_the_documents(make_engine: EngineMaker) -> None:
    engine = _indexed(make_engine)
    engine.index(REPLACEMENT_DOCS)
    hits = engine.search(Query("q-z", "zebras graze"), 10)
    assert hits and hits[0].doc_id == "z1"
    old = engine.search(CONTRACT_QUERIES["query_string"].query, 10)
    assert not {h.doc_id for h in old} & CONTRACT_IDS


@pytest.mark.engine_capability("indexes")
def test_empty_index_gives_no_hits(make_engine: EngineMaker) -> None:
    engine = make_engine()
    engine.index([])
    assert engine.search(Query("q", "boundary layer"), 10) == []


@pytest.mark.engine_capability("kind")
@pytest.mark.parametrize("kind", QUERY_KINDS)
def test_hostile_text_does_not_break_the_engine(make_engine: EngineMaker, kind: str) -> None:
    engine = _indexed(make_engine)
    assert kind in engine.supported_kinds
    for text in HOSTILE_TEXTS:
        try:
            hits = engine.search(hostile_query(kind, text), 5)  # type: ignore[arg-type]
        except UnsupportedQueryError:
            raise
        except EngineError as exc:
            pytest.fail(f"{text!r} raised {exc}")
        _check_ranked(hits, 5)
    # the engine still answers normally afterwards
    assert engine.search(CONTRACT_QUERIES["query_string"].query, 3)[0].doc_id == "d1"


def test_close_is_idempotent_and_releases_the_engine(make_engine: EngineMaker) -> None:
    query = CONTRACT_QUERIES["query_string"].query
    engine = _indexed(make_engine)
    assert engine.search(query, 3)[0].doc_id == "d1"
    engine.close()
    engine.close()  # a second close is a no-op, not an error
    # what it held (files, locks, connections) is released: another engine of the same case,
    # on the same folder, indexes and answers
    again = _indexed(make_engine)
    assert again.search(query, 3)[0].doc_id == "d1"


def test_context_manager_closes(make_engine: EngineMaker) -> None:
    with make_engine() as engine:
        engine.index(CONTRACT_DOCS)
        assert engine.search(CONTRACT_QUERIES["query_string"].query, 2)
