"""BM25 with bm25s, a fast in-process BM25 (sparse score matrices in numpy), as a lexical
baseline beside the vector stores.

Documents are the fields named by ``fields`` (title and text) joined, tokenized by bm25s's
``Tokenizer`` (lowercase, its word pattern ``\\w\\w+``, ``stopwords``, and a Snowball
``stemmer`` from PyStemmer when one is named); the query goes through the same tokenizer, so
no query syntax exists. Scoring follows ``method``: ``robertson`` (the original), ``lucene``
(Lucene's BM25, the default), ``atire``, ``bm25l`` and ``bm25+`` (these two with ``delta``),
with ``k1`` and ``b``. Every document's score is computed (``BM25.get_scores``) and the top k
of the documents holding a query word taken with rankscope's tie rule (equal scores in
indexing order), so a shallow search is always a prefix of a deeper one; a document without
any query word is never returned, although ``bm25l`` and ``bm25+`` give it a floor score. Only
``query_string`` queries are answered: bm25s indexes one text per document, without fields or
positions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import numpy as np

from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine
from rankscope.engines.neighbours import top_k
from rankscope.errors import ConfigError, EngineError
from rankscope.util.extras import import_extra, needs_extra

# Imported where used, so that this module imports without them: bm25s and PyStemmer (the bm25s
# extra).

METHODS = ("robertson", "lucene", "atire", "bm25l", "bm25+")


def _import_bm25s() -> Any:
    return import_extra("bm25s", "engine 'bm25s'", "the bm25s package", "bm25s", EngineError)


def _stemmer(language: str | None) -> Any:
    if language is None:
        return None
    try:
        import Stemmer
    except ImportError as exc:
        raise EngineError(
            needs_extra("bm25s engine option 'stemmer'", "PyStemmer", "bm25s")
        ) from exc
    try:
        return Stemmer.Stemmer(language).stemWord
    except KeyError:
        raise ConfigError(
            "bm25s engine option 'stemmer' names a language PyStemmer does not know",
            value=language,
            hint=f"use one of {', '.join(Stemmer.algorithms())}, or null for no stemming",
        ) from None


@register_engine("bm25s")
class Bm25sEngine(Engine):
    """bm25s BM25 over one text per document.

    Options: ``method`` (``lucene`` default, ``robertson``, ``atire``, ``bm25l``, ``bm25+``),
    ``k1`` (1.5), ``b`` (0.75), ``delta`` (0.5, bm25l and bm25+; bm25s's defaults),
    ``stopwords`` (``en`` default, a list of words, or null), ``stemmer`` (a Snowball language
    such as ``english``, default; null for none), ``fields`` (default title and text).
    """

    name = "bm25s"
    option_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {"method": METHODS}
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset({"query_string"})

    def __init__(
        self,
        method: str = "lucene",
        k1: float = 1.5,
        b: float = 0.75,
        delta: float = 0.5,
        stopwords: str | list[str] | None = "en",
        stemmer: str | None = "english",
        fields: tuple[str, ...] | list[str] = ("title", "text"),
    ) -> None:
        if method not in METHODS:
            raise ConfigError(
                f"bm25s engine option 'method' must be one of {', '.join(METHODS)}",
                value=method,
            )
        for opt, value in (("k1", k1), ("b", b), ("delta", delta)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(f"bm25s engine option {opt!r} must be a number >= 0", value=value)
        if b > 1:
            raise ConfigError("bm25s engine option 'b' must be in [0, 1]", value=b)
        if isinstance(fields, str) or not fields or not all(isinstance(f, str) for f in fields):
            raise ConfigError(
                "bm25s engine option 'fields' must be a non-empty list of field names",
                value=fields,
            )
        if stopwords is not None and not isinstance(stopwords, str | list):
            raise ConfigError(
                "bm25s engine option 'stopwords' must be a language code, a list of words or null",
                value=stopwords,
            )
        self.method = method
        self.k1, self.b, self.delta = float(k1), float(b), float(delta)
        self.stopwords = stopwords
        self.stemmer = stemmer
        self._stem = _stemmer(stemmer)
        self.fields = tuple(fields)
        self._ids: list[str] = []
        self._tokenizer: Any = None
        self._retriever: Any = None
        self._empty_token: int | None = None

    def index(self, docs: Iterable[Document]) -> None:
        bm25s = _import_bm25s()
        from bm25s.tokenization import Tokenizer

        units = list(docs)
        self._ids = [d.id for d in units]
        self._retriever = None
        if not units:
            return
        texts = ["\n".join(d.get(f) for f in self.fields) for d in units]
        tokenizer = Tokenizer(stopwords=self.stopwords or [], stemmer=self._stem)
        ids = tokenizer.tokenize(texts, show_progress=False, return_as="ids")
        retriever = bm25s.BM25(method=self.method, k1=self.k1, b=self.b, delta=self.delta)
        retriever.index(ids, show_progress=False)
        self._tokenizer = tokenizer
        self._retriever = retriever
        # bm25s gives a document without words the empty token; a query must never match it
        self._empty_token = tokenizer.get_vocab_dict().get("")

    def _search(self, query: Query, k: int) -> list[Hit]:
        if self._retriever is None or not query.text.strip():
            return []
        tokens = self._tokenizer.tokenize(
            [query.text], update_vocab=False, show_progress=False, return_as="ids"
        )[0]
        tokens = [t for t in tokens if t != self._empty_token]
        if not tokens:
            return []
        scores = np.asarray(self._retriever.get_scores(tokens), dtype=np.float32)
        # bm25l and bm25+ give every document a floor score per query word (as rank_bm25
        # does); only documents holding a query word are results, whatever the method
        matrix = self._retriever.scores
        holds = np.zeros(scores.shape[0], dtype=np.bool_)
        for token in set(tokens):
            holds[matrix["indices"][matrix["indptr"][token] : matrix["indptr"][token + 1]]] = True
        matching = int(np.count_nonzero(holds))
        if not matching:
            return []
        ranked = np.where(holds, scores, -np.inf).astype(np.float32)
        return [Hit(self._ids[i], float(scores[i])) for i in top_k(ranked, min(k, matching))]

    def close(self) -> None:
        self._retriever = None
        self._tokenizer = None
