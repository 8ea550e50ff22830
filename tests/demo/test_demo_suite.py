"""The shipped stdlib-docs suite: shape, judgments and every referenced id against the corpus."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from rankscope.demo import SUITE_PATH
from rankscope.engines import QUERY_KINDS, create_engine
from rankscope.suite import Suite, SuiteSpec, load_suite
from rankscope.suite.docstrings import load_corpus


@pytest.fixture(scope="module")
def suite() -> dict[str, Any]:
    data = yaml.safe_load(SUITE_PATH.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def queries(suite: dict[str, Any]) -> list[dict[str, Any]]:
    items = suite["queries"]
    assert isinstance(items, list)
    return items


@pytest.fixture(scope="module")
def corpus_ids(suite: dict[str, Any]) -> set[str]:
    return {d.id for d in load_corpus(suite["corpus"]["modules"])}


def test_suite_file_ships_inside_the_package() -> None:
    import rankscope

    assert SUITE_PATH.is_file()
    assert Path(rankscope.__file__).parent in SUITE_PATH.parents


def test_header_corpus_and_settings(suite: dict[str, Any]) -> None:
    assert suite["name"] == "stdlib-docs"
    assert suite["description"]
    corpus = suite["corpus"]
    assert corpus["type"] == "python_docstrings"
    modules = corpus["modules"]
    assert len(modules) == len(set(modules)) >= 20
    settings = suite["settings"]
    assert settings["k"] == [5, 10, 20]
    assert settings["max_k"] == 100
    assert settings["warmup"] == 1
    assert settings["repeats"] == 3


def test_engine_configurations(suite: dict[str, Any]) -> None:
    engines = suite["engines"]
    names = [e["name"] for e in engines]
    assert len(names) == len(set(names)) >= 4
    sqlite = [e for e in engines if e["engine"] == "sqlite"]
    sizes = {e.get("chunking", {}).get("size") for e in sqlite}
    assert len(sizes) >= 2, "two sqlite configurations with different chunking"
    kinds = {e["engine"] for e in engines}
    assert {"sqlite", "vector", "hybrid"} <= kinds


def test_at_least_fifty_questions_with_unique_ids(queries: list[dict[str, Any]]) -> None:
    assert len(queries) >= 50
    ids = [q["id"] for q in queries]
    assert len(ids) == len(set(ids))
    texts = [q["text"].strip().lower() for q in queries]
    assert len(texts) == len(set(texts))


def test_every_question_is_complete(queries: list[dict[str, Any]]) -> None:
    for q in queries:
        assert q["text"].strip(), q["id"]
        assert q.get("category"), q["id"]
        assert q.get("expected_answer", "").strip(), q["id"]
        needle = q["needle_doc_id"]
        judgments = q["judgments"]
        assert judgments.get(needle) == 3, f"{q['id']}: needle must be judged 3"
        assert all(g in (0, 1, 2, 3) for g in judgments.values()), q["id"]


def test_every_referenced_doc_exists_in_the_corpus(
    queries: list[dict[str, Any]], corpus_ids: set[str]
) -> None:
    missing = [
        (q["id"], doc_id)
        for q in queries
        for doc_id in [q["needle_doc_id"], *q["judgments"]]
        if doc_id not in corpus_ids
    ]
    assert missing == []


def test_all_five_query_kinds_are_exercised(queries: list[dict[str, Any]]) -> None:
    kinds = Counter(q.get("kind", "query_string") for q in queries)
    assert set(kinds) == set(QUERY_KINDS)
    assert kinds["query_string"] > len(queries) // 2
    for q in queries:
        kind = q.get("kind", "query_string")
        if kind == "match":
            assert q["field"] in ("title", "text"), q["id"]
        if kind == "multi_match":
            assert q["fields"], q["id"]
        if kind == "boolean":
            assert q.get("must") or q.get("should"), q["id"]
    assert any(q.get("slop", 0) > 0 for q in queries if q.get("kind") == "phrase")
    assert any(q.get("must_not") for q in queries if q.get("kind") == "boolean")


def test_categories_cover_several_topics(queries: list[dict[str, Any]]) -> None:
    categories = Counter(q["category"] for q in queries)
    assert len(categories) >= 8
    for topic in ("files", "text", "data", "dates", "concurrency", "math"):
        assert categories[topic] >= 2, topic


def test_suite_validates_against_the_schema() -> None:
    spec = SuiteSpec.model_validate(yaml.safe_load(SUITE_PATH.read_text(encoding="utf-8")))
    assert spec.corpus.type == "python_docstrings"
    assert isinstance(spec.queries, list)
    assert len(spec.queries) >= 50


@pytest.fixture(scope="module")
def loaded() -> Suite:
    return load_suite(SUITE_PATH)


def test_suite_loads_with_its_corpus_and_judgments(
    loaded: Suite, suite: dict[str, Any], queries: list[dict[str, Any]]
) -> None:
    docs = loaded.documents()
    assert [d.id for d in docs] == [d.id for d in load_corpus(suite["corpus"]["modules"])]
    assert len(loaded.queries) == len(queries)
    qrels = loaded.qrels().to_dict()
    for q in queries:
        assert qrels[q["id"]][q["needle_doc_id"]] == 3
    assert len(loaded.answers) == len(queries)
    assert {c.name for c in loaded.configs} == {e["name"] for e in suite["engines"]}


def test_bm25_finds_some_needles_but_not_all(loaded: Suite, queries: list[dict[str, Any]]) -> None:
    """A useful demo is neither solved by keywords alone nor hopeless for them."""
    needles = {q["id"]: q["needle_doc_id"] for q in queries}
    with create_engine("sqlite") as engine:
        engine.index(loaded.documents())
        found = sum(
            needles[query.id] in [hit.doc_id for hit in engine.search(query, 10)]
            for query in loaded.queries
        )
    assert 0.3 * len(needles) <= found <= 0.9 * len(needles)
