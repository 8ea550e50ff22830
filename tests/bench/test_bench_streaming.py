"""The benchmark streams its corpus: no parsed copy is held, each configuration reads it again."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from bench_suites import DOCS, make_suite

from rankscope.bench import run_benchmark
from rankscope.bench.corpus import scan_corpus
from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine
from rankscope.engines.stream import DocumentStream
from rankscope.suite import load_suite


class Census(Engine):
    """Keeps plain strings, never the Document values, and counts the Document values alive
    while it searches: what the rest of the process holds."""

    name = "benchtest-census"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset({"query_string"})
    alive: ClassVar[list[int]] = []
    indexed: ClassVar[list[int]] = []

    def __init__(self, **options: object) -> None:
        self.texts: dict[str, str] = {}

    def index(self, docs: Iterable[Document]) -> None:
        self.texts = {d.id: f"{d.title} {d.text}".lower() for d in docs}
        type(self).indexed.append(len(self.texts))

    def _search(self, query: Query, k: int) -> list[Hit]:
        type(self).alive.append(_documents_alive())
        words = set(query.text.lower().split())
        hits = [Hit(i, float(len(words & set(t.split())))) for i, t in self.texts.items()]
        return sorted((h for h in hits if h.score), key=lambda h: -h.score)[:k]


class Idle(Census):
    """Answers from nothing and reads nothing when indexing (like a run file)."""

    name = "benchtest-idle"

    def index(self, docs: Iterable[Document]) -> None:
        pass

    def _search(self, query: Query, k: int) -> list[Hit]:
        return [Hit("py", 1.0)]


def _documents_alive() -> int:
    gc.collect()
    return sum(isinstance(o, Document) for o in gc.get_objects())


register_engine("benchtest-census")(Census)
register_engine("benchtest-idle")(Idle)


def _big_suite(tmp_path: Path, engines: str, n: int = 400) -> Path:
    path = make_suite(tmp_path, engines)
    filler = [{"_id": f"f{i}", "title": "", "text": f"filler {i} text"} for i in range(n)]
    with (tmp_path / "docs.jsonl").open("a") as out:
        out.writelines(json.dumps(d) + "\n" for d in filler)
    return path


def test_no_parsed_copy_of_the_corpus_is_held_while_engines_search(tmp_path: Path) -> None:
    Census.alive.clear()
    Census.indexed.clear()
    suite = load_suite(
        _big_suite(
            tmp_path,
            "- {name: one, engine: benchtest-census}\n- {name: two, engine: "
            "benchtest-census, chunking: {size: 4}}",
        )
    )
    before = _documents_alive()  # other test modules hold some
    result = run_benchmark(suite, tmp_path / "out")
    total = len(DOCS) + 400
    assert result.suite.num_documents == total
    # each configuration read the whole corpus (the second as chunks) from its source
    assert Census.indexed[0] == total and Census.indexed[1] > total
    # while searching, the process holds no Document values: the suite kept none
    assert Census.alive and max(Census.alive) - before < 5, (before, Census.alive)
    chunked = result.configurations[1]
    assert chunked.num_documents == total and chunked.num_units == Census.indexed[1]


def test_counts_of_an_engine_that_reads_nothing(tmp_path: Path) -> None:
    suite = load_suite(
        make_suite(
            tmp_path,
            "- {name: idle, engine: benchtest-idle}\n"
            "- {name: idle-chunks, engine: benchtest-idle, chunking: {size: 4}}",
        )
    )
    whole, chunked = run_benchmark(suite, tmp_path / "out").configurations
    assert whole.num_documents == whole.num_units == len(DOCS)
    assert chunked.num_documents == len(DOCS)
    # "long" has 50 words: 13 chunks of 4; the four others fit 2-3 chunks each
    assert chunked.num_units == sum(-(-len(d["text"].split()) // 4) for d in DOCS)


def test_corpus_fingerprint_is_the_one_checkpoints_were_made_with(tmp_path: Path) -> None:
    # computed by Suite.corpus_fingerprint before the corpus was streamed: checkpoints made
    # then stay valid
    suite = load_suite(make_suite(tmp_path, "- {name: a, engine: sqlite}"))
    scan = scan_corpus(suite.corpus(), {"py", "nowhere"})
    assert scan.fingerprint == "44b02e9a01554ebf"
    assert scan.count == len(DOCS) and scan.found == {"py"} and scan.trec_safe_ids
    assert scan.fields == ()
    odd = scan_corpus([Document("a b", "x", fields={"lang": "en", "title": "t"})])
    assert not odd.trec_safe_ids and odd.fields == ("lang",)


def test_suite_corpus_is_read_afresh_each_time(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path, "- {name: a, engine: sqlite}"))
    corpus = suite.corpus()
    assert isinstance(corpus, DocumentStream)
    assert [d.id for d in corpus] == [d["_id"] for d in DOCS]
    with (tmp_path / "docs.jsonl").open("a") as out:
        out.write(json.dumps({"_id": "new", "text": "added later"}) + "\n")
    assert [d.id for d in corpus][-1] == "new"
