"""The contract test's corpus, queries and engine-case types (shared by conftest and tests)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from rankscope.engines import QUERY_KINDS, Document, Engine, Query
from rankscope.engines.base import QueryKind

# -- the contract corpus ------------------------------------------------------------------------

CONTRACT_DOCS: tuple[Document, ...] = (
    Document("d1", "The boundary layer over a flat plate becomes turbulent at high speed.",
             "Boundary layer flow"),
    Document("d2", "Heat transfer in hypersonic flow raises the wall temperature.",
             "Heat transfer"),
    Document("d3", "Knead the dough, let it rise, and bake the bread in a hot oven.",
             "Baking bread"),
    Document("d4", "Swept wings delay the shock waves that form on the wing at transonic speed.",
             "Wing design"),
    Document("d5", "Boil the pasta in salted water and serve it with a tomato sauce.", "Pasta"),
    Document("d6", "A normal shock wave forms ahead of a blunt body in supersonic flow.",
             "Shock wave ahead of blunt bodies"),
    Document("d7", "Turbulent flow mixes momentum near the wall of a pipe.", "Turbulence"),
    Document("d8", "A warm tomato soup with bread for cold winter evenings.", "Tomato soup",
             fields={"tags": "food recipe winter"}),
)  # fmt: skip
CONTRACT_IDS = frozenset(d.id for d in CONTRACT_DOCS)

# other documents, to check that indexing again replaces the first corpus
REPLACEMENT_DOCS: tuple[Document, ...] = (
    Document("z1", "Zebras graze on the savanna grass.", "Zebras"),
    Document("z2", "Giraffes eat leaves from tall acacia trees.", "Giraffes"),
)


@dataclass(frozen=True)
class ContractQuery:
    """A query of the contract test and what a sensible engine returns for it."""

    query: Query
    #: the document that must be ranked first
    top: str
    #: when set, every returned id must be one of these (for precise kinds such as phrase)
    only: frozenset[str] | None = None


CONTRACT_QUERIES: dict[QueryKind, ContractQuery] = {
    "query_string": ContractQuery(Query("q-qs", "boundary layer turbulence"), top="d1"),
    "match": ContractQuery(Query("q-match", "bread", kind="match", field="title"), top="d3"),
    "multi_match": ContractQuery(
        Query("q-mm", "tomato soup", kind="multi_match", fields=(("title", 3.0), ("text", 1.0))),
        top="d8",
    ),
    "phrase": ContractQuery(
        Query("q-phrase", "blunt body", kind="phrase", field="text"),
        top="d6",
        only=frozenset({"d6"}),
    ),
    "boolean": ContractQuery(
        Query("q-bool", "bread -soup", kind="boolean", must=("bread",), must_not=("soup",)),
        top="d3",
        only=frozenset({"d3"}),
    ),
}

# text that must not break any engine: query syntax of FTS5, tantivy, Lucene, SQL, unicode
HOSTILE_TEXTS: tuple[str, ...] = (
    '"unbalanced quote',
    "title: (bread",
    "AND OR NOT",
    "-boundary *",
    "NEAR(shock wave, 2)",
    "{c0 c1} : wing",
    "bread^3 soup~2 [a TO z]",
    "'; DROP TABLE docs; --",
    "l'avion été über 速度 ‑ 🚀",
    "",
    "   ",
    "\\ / ? ! @ # $ % & | < > = +",
    "x" * 3000,
)


def hostile_query(kind: QueryKind, text: str) -> Query:
    """A query of ``kind`` carrying hostile ``text`` wherever user text goes."""
    if kind == "match":
        return Query("hostile", text, kind="match", field="text")
    if kind == "multi_match":
        return Query("hostile", text, kind="multi_match", fields=(("title", 2.0), ("text", 1.0)))
    if kind == "phrase":
        return Query("hostile", text, kind="phrase", slop=2)
    if kind == "boolean":
        return Query("hostile", text, kind="boolean", must=("bread", text), must_not=(text,))
    return Query("hostile", text)


# -- engine cases -------------------------------------------------------------------------------


@dataclass
class CaseContext:
    """What an engine factory gets: a fresh folder, requested fixtures, unique names."""

    tmp_path: Path
    fixtures: dict[str, Any] = field(default_factory=dict)
    _counter: Iterator[int] = field(default_factory=itertools.count)

    def unique_name(self, prefix: str) -> str:
        """A name unique in this test session (for tables or indexes on shared servers)."""
        return f"{prefix}_{next(_NAMES)}_{next(self._counter)}"


_NAMES = itertools.count()


ALL_KINDS: frozenset[QueryKind] = frozenset(QUERY_KINDS)


@dataclass(frozen=True)
class EngineCase:
    """One engine configuration of the contract test.

    ``kinds`` (the query kinds the engine supports; ``test_declares_kinds`` checks it against
    the engine) and ``indexes`` (it indexes the documents it is given) are its capabilities:
    a test marked ``engine_capability`` is deselected, not skipped, for a case without it.
    """

    id: str
    make: Callable[[CaseContext], Engine]
    requires: tuple[str, ...] = ()
    fixtures: tuple[str, ...] = ()
    indexes: bool = True
    marks: tuple[pytest.MarkDecorator, ...] = ()
    kinds: frozenset[QueryKind] = ALL_KINDS

    def has(self, capability: str, kind: str | None = None) -> bool:
        """Whether the case has ``capability``: ``indexes``, or ``kind`` (the query kind)."""
        if capability == "indexes":
            return self.indexes
        if capability == "kind":
            return kind in self.kinds
        raise ValueError(f"unknown engine capability {capability!r}")
