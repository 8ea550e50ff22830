"""BM25 with tantivy (the ``tantivy`` Python package, a Rust Lucene-like library).

Every text field (``title``, ``text``, extra fields) gets one indexed tantivy field analysed by
one analyzer (simple tokenizer, long-token removal, lowercasing, optional stemming). Queries are
built from tantivy query objects, never from query-language strings: the query text is split
into words, run through the same analyzer, and wrapped in term, phrase, boost and boolean
queries. Translation:

- ``query_string``: a disjunction of term queries over every field (scores add up), one per
  distinct analysed term, boosted by its number of occurrences (what a clause per occurrence
  scored, at the cost of one);
- ``match``: the same on one field;
- ``multi_match``: one disjunction per listed field, each wrapped in a boost query;
- ``phrase``: a phrase query with ``slop`` (on one field, or any field);
- ``boolean``: Must / Should / MustNot clauses; a multi-word term is a phrase in any field.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from rankscope.engines._text import (
    boolean_clauses,
    check_phrase_length,
    document_fields,
    field_names,
    indexed_name,
    term_counts,
    words,
)
from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine
from rankscope.engines.stream import reiterable
from rankscope.errors import ConfigError, EngineError
from rankscope.util.extras import import_extra

# Imported where used, so that this module imports without them: tantivy (the tantivy extra).

_ANALYZER = "rankscope"
_STEM_LANGUAGES = frozenset(
    {
        "arabic", "danish", "dutch", "english", "finnish", "french", "german", "greek",
        "hungarian", "italian", "norwegian", "portuguese", "romanian", "russian", "spanish",
        "swedish", "tamil", "turkish",
    }
)  # fmt: skip


def _import_tantivy() -> Any:
    return import_extra(
        "tantivy", "engine 'tantivy'", "the tantivy package", "tantivy", EngineError
    )


@register_engine("tantivy")
class TantivyEngine(Engine):
    """tantivy BM25 (k1=1.2, b=0.75).

    Options: ``path`` (a directory for the index, created or overwritten; default: in RAM),
    ``stemmer`` (a language name such as ``"english"``, or ``None`` for no stemming),
    ``heap_size`` (indexing memory in bytes).
    """

    name = "tantivy"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset(
        {"query_string", "match", "multi_match", "phrase", "boolean"}
    )
    thread_safe = True

    def __init__(
        self,
        path: str | Path | None = None,
        stemmer: str | None = "english",
        heap_size: int = 50_000_000,
    ) -> None:
        if stemmer is not None and stemmer.lower() not in _STEM_LANGUAGES:
            raise ConfigError(
                "tantivy engine option 'stemmer' names an unknown language",
                value=stemmer,
                hint=f"use one of {', '.join(sorted(_STEM_LANGUAGES))}, or null for no stemming",
            )
        self._tv = _import_tantivy()
        self.path = None if path is None else Path(path)
        self.stemmer = None if stemmer is None else stemmer.lower()
        self.heap_size = int(heap_size)
        builder = self._tv.TextAnalyzerBuilder(self._tv.Tokenizer.simple())
        builder = builder.filter(self._tv.Filter.remove_long(40))
        builder = builder.filter(self._tv.Filter.lowercase())
        if self.stemmer is not None:
            builder = builder.filter(self._tv.Filter.stemmer(self.stemmer))
        self._analyzer = builder.build()
        self._index: Any = None
        self._schema: Any = None
        self._searcher: Any = None
        self._fields: dict[str, str] = {}  # field name -> tantivy field name

    def index(self, docs: Iterable[Document]) -> None:
        tv = self._tv
        docs = reiterable(docs)  # read once for the schema, unless it knows its fields
        fields = document_fields(docs)
        # neutral names: any user field name is safe, and none clashes with the id field
        self._fields = {f: f"f{i}" for i, f in enumerate(fields)}
        sb = tv.SchemaBuilder()
        sb.add_text_field("doc_id", stored=True, tokenizer_name="raw")
        for tf in self._fields.values():
            sb.add_text_field(tf, tokenizer_name=_ANALYZER, index_option="position")
        schema = sb.build()
        try:
            if self.path is None:
                index = tv.Index(schema)
            else:
                if self.path.exists() and any(self.path.iterdir()):
                    if not (self.path / "meta.json").exists():
                        raise EngineError(
                            f"tantivy engine path {str(self.path)!r} is a non-empty directory "
                            f"that holds no tantivy index; give an empty or new directory"
                        )
                    shutil.rmtree(self.path)
                os.makedirs(self.path, exist_ok=True)
                index = tv.Index(schema, path=str(self.path), reuse=False)
            index.register_tokenizer(_ANALYZER, self._analyzer)
            writer = index.writer(heap_size=self.heap_size, num_threads=1)
            for d in docs:
                values: dict[str, Any] = {"doc_id": d.id}
                for f, tf in self._fields.items():
                    values[tf] = d.get(f)
                writer.add_document(tv.Document(**values))
            writer.commit()
            writer.wait_merging_threads()
            index.reload()
        except (OSError, ValueError) as exc:
            raise EngineError(f"tantivy engine could not build its index: {exc}") from exc
        self._index, self._schema = index, schema
        self._searcher = index.searcher()

    # -- translation ----------------------------------------------------------------------------

    def _field(self, query: Query, field: str) -> str:
        return indexed_name(self._fields, query, field, "tantivy")

    def analyze(self, text: str) -> list[str]:
        """The index terms of ``text``, as the index analyser makes them."""
        out: list[str] = []
        for w in words(text):
            out.extend(self._analyzer.analyze(w))
        return out

    def _terms_any(self, tfields: list[str], counts: Mapping[str, int]) -> Any:
        """Any of the terms in any of the fields, a term that occurs n times boosted n times."""
        q = self._tv.Query
        occ = self._tv.Occur.Should
        clauses = []
        for tf in tfields:
            for t, n in counts.items():
                term = q.term_query(self._schema, tf, t)
                clauses.append((occ, term if n == 1 else q.boost_query(term, float(n))))
        return q.boolean_query(clauses)

    def _phrase_any(self, tfields: list[str], terms: list[str], slop: int) -> Any:
        q = self._tv.Query
        if len(terms) == 1:
            return self._terms_any(tfields, {terms[0]: 1})
        subs = [q.phrase_query(self._schema, tf, terms, slop=slop) for tf in tfields]
        if len(subs) == 1:
            return subs[0]
        return q.boolean_query([(self._tv.Occur.Should, s) for s in subs])

    def translate(self, query: Query) -> Any:
        """The tantivy query object for ``query`` (``None`` when it has no searchable word)."""
        tv = self._tv
        everywhere = list(self._fields.values())
        if query.kind == "boolean":
            must, should, must_not = boolean_clauses(query)
            clauses = []
            for occur, terms in (
                (tv.Occur.Must, must),
                (tv.Occur.Should, should),
                (tv.Occur.MustNot, must_not),
            ):
                for term in terms:
                    toks = self.analyze(term)
                    if toks:
                        clauses.append((occur, self._phrase_any(everywhere, toks, 0)))
            if not any(o != tv.Occur.MustNot for o, _ in clauses):
                return None
            return tv.Query.boolean_query(clauses)
        tfields = [self._field(query, f) for f in field_names(query)] or everywhere
        terms = self.analyze(query.text)
        if not terms:
            return None
        if query.kind == "phrase":
            check_phrase_length(terms, query)
            return self._phrase_any(tfields, terms, max(0, int(query.slop)))
        counts = term_counts(terms, query, self.name)
        if query.kind == "multi_match":
            if not query.fields:
                raise EngineError(f"multi_match query {query.id!r} lists no fields")
            subs = [
                tv.Query.boost_query(self._terms_any([tf], counts), float(boost))
                for tf, (_, boost) in zip(tfields, query.fields, strict=True)
            ]
            return tv.Query.boolean_query([(tv.Occur.Should, s) for s in subs])
        return self._terms_any(tfields, counts)

    def _search(self, query: Query, k: int) -> list[Hit]:
        if self._searcher is None:
            return []
        tq = self.translate(query)
        if tq is None:
            return []
        try:
            result = self._searcher.search(tq, k, count=False)
            hits = [
                Hit(doc_id=str(self._searcher.doc(addr)["doc_id"][0]), score=float(score))
                for score, addr in result.hits
            ]
        except ValueError as exc:
            raise EngineError(f"tantivy engine failed on query {query.id!r}: {exc}") from exc
        # tantivy breaks score ties by index order; sort so equal scores come out in id order
        hits.sort(key=lambda h: (-h.score, h.doc_id))
        return hits

    def close(self) -> None:
        self._searcher = None
        self._index = None
