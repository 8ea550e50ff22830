"""Lucene BM25 through Anserini, the toolkit behind Pyserini's and BEIR's published BM25 runs.

The engine runs Anserini's fat jar in a JVM inside the Python process (``pyjnius``, the bridge
Pyserini uses). Indexing writes a Lucene index the way Anserini's ``IndexCollection`` does for a
JSON collection: a stored ``id`` (with binary doc values, which Anserini's searcher uses to
break score ties by id), a ``contents`` field holding every field of the document (title first,
then text, then the others, one per line), plus one indexed field per document field for
``match`` / ``multi_match`` / field phrases. Documents are read once and added one by one.
Searching goes through Anserini's ``SimpleSearcher`` with ``BM25Similarity(k1, b)``.

Queries are Lucene query objects built with Lucene's ``QueryBuilder`` (the analysis step of
Lucene's query parser, without its syntax), so user text is only ever analysed:

- ``query_string``: a disjunction of the analysed terms on ``contents``, one clause per distinct
  term boosted by its number of occurrences (a term occurring twice counts twice, as with
  Lucene's ``QueryParser`` and Anserini's bag-of-words query, whose repeated clauses Lucene's
  ``BooleanQuery`` rewrites to the same boosts; a clause per occurrence made a long query
  exceed Lucene's limit of 1,024 clauses);
- ``match``: the same on one field;
- ``multi_match``: one such disjunction per field, each in a ``BoostQuery``, summed
  (``multi_match="sum"``) or as a ``DisjunctionMaxQuery`` (``"max"``);
- ``phrase``: a Lucene ``PhraseQuery`` with ``slop`` (terms may be reordered, a transposition
  costs 2) on the field, or on ``contents``;
- ``boolean``: ``BooleanQuery`` with MUST / SHOULD / MUST_NOT clauses on ``contents``; a term of
  several words is a phrase.

Analyzers (``analyzer``): ``anserini`` (Anserini's default: Porter stemming, Lucene's English
stop words), ``anserini-krovetz``, ``anserini-nostem``, ``standard`` (Lucene's
``StandardAnalyzer``: lowercase, no stop words since Lucene 8), ``english`` (Lucene's
``EnglishAnalyzer``) and ``whitespace``. BM25 defaults are Anserini's ``k1=0.9, b=0.4``.

The jar: option ``jar``, else ``$RANKSCOPE_ANSERINI_JAR``, else the one shipped in pyserini's
distribution (``pyserini/resources/jars/anserini-*-fatjar.jar``; install it with ``pip install
--no-deps pyserini==0.22.1``: its own dependencies are heavy and unneeded). Java: ``java_home``,
else ``$JAVA_HOME``, else the ``java`` on the PATH. Anserini 0.22 runs on Java 11 or newer;
Anserini 0.23 and later need Java 21.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar, Literal

from rankscope.config import environment
from rankscope.engines._text import boolean_clauses, check_phrase_length, term_counts, words
from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine
from rankscope.errors import ConfigError, EngineError, QueryError
from rankscope.util.extras import install_command

# Imported where used, so that this module imports without them: pyjnius (the anserini extra).

JAR_ENV = "RANKSCOPE_ANSERINI_JAR"
ANALYZERS = ("anserini", "anserini-krovetz", "anserini-nostem", "standard", "english", "whitespace")
INSTALL_HINT = (
    f"{install_command('anserini')} && pip install --no-deps pyserini==0.22.1 (the jar), "
    "and a Java 11+ runtime (Debian: apt-get install openjdk-17-jre-headless)"
)
_FIELD_PREFIX = "f:"
_jvm_lock = threading.Lock()


def find_jar(jar: str | os.PathLike[str] | None = None) -> Path | None:
    """The Anserini fat jar: ``jar``, ``$RANKSCOPE_ANSERINI_JAR`` or pyserini's (None if absent)."""
    given = jar or environment().anserini_jar
    if given:
        return Path(given)
    spec = importlib.util.find_spec("pyserini")
    for root in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(glob.glob(os.path.join(root, "resources", "jars", "anserini-*-fatjar.jar")))
        if found:
            return Path(found[-1])
    return None


def find_java_home(java_home: str | os.PathLike[str] | None = None) -> Path | None:
    """A Java installation: ``java_home``, ``$JAVA_HOME`` or the one of ``java`` on the PATH."""
    given = java_home or os.environ.get("JAVA_HOME")
    if given:
        return Path(given)
    java = shutil.which("java")
    if java is None:
        return None
    return Path(os.path.realpath(java)).parent.parent


def start_jvm(jar: Path, java_home: Path) -> Any:
    """``jnius.autoclass`` with the jar on the class path (the JVM starts once per process)."""
    with _jvm_lock:
        try:
            import jnius_config
        except ImportError as exc:
            raise EngineError(f"engine 'anserini' needs pyjnius ({exc}); {INSTALL_HINT}") from exc
        if not jnius_config.vm_running:
            os.environ.setdefault("JAVA_HOME", str(java_home))
            # (not get_classpath(): it imports jnius, which starts the JVM)
            jnius_config.add_classpath(str(jar))
        try:
            import jnius
        except Exception as exc:  # no libjvm: pyjnius fails while loading
            raise EngineError(
                f"engine 'anserini' could not start a Java VM from {java_home}: {exc}; "
                f"{INSTALL_HINT}"
            ) from exc
        try:
            jnius.autoclass("io.anserini.search.SimpleSearcher")
        except Exception as exc:
            raise EngineError(
                f"engine 'anserini': the Java VM cannot load Anserini from {jar} ({exc}). "
                f"A JVM started earlier in this process without that jar cannot take it; an "
                f"'UnsupportedClassVersionError' means this jar needs a newer Java (Anserini "
                f">= 0.23 needs Java 21)"
            ) from exc
        return jnius.autoclass


@register_engine("anserini")
class AnseriniEngine(Engine):
    """Lucene BM25 through Anserini. See the module docstring for the translation.

    Options: ``path`` (index directory, replaced at each ``index()``; default: a temporary one,
    deleted on close), ``analyzer``, ``k1`` (0.9), ``b`` (0.4), ``multi_match`` (``sum`` or
    ``max``), ``jar``, ``java_home``.
    """

    name = "anserini"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset(
        {"query_string", "match", "multi_match", "phrase", "boolean"}
    )

    def __init__(
        self,
        path: str | Path | None = None,
        analyzer: str = "anserini",
        k1: float = 0.9,
        b: float = 0.4,
        multi_match: Literal["sum", "max"] = "sum",
        jar: str | None = None,
        java_home: str | None = None,
    ) -> None:
        if analyzer not in ANALYZERS:
            raise ConfigError(
                "anserini engine option 'analyzer' is unknown",
                value=analyzer,
                hint=f"use one of {', '.join(ANALYZERS)}",
            )
        if not (float(k1) >= 0 and 0 <= float(b) <= 1):
            raise ConfigError(
                "anserini engine options 'k1' and 'b' need k1 >= 0 and 0 <= b <= 1",
                value={"k1": k1, "b": b},
            )
        if multi_match not in ("sum", "max"):
            raise ConfigError(
                "anserini engine option 'multi_match' must be 'sum' or 'max'", value=multi_match
            )
        jar_path = find_jar(jar)
        if jar_path is None or not jar_path.is_file():
            raise EngineError(
                f"engine 'anserini' needs Anserini's fat jar"
                f"{f' (not found: {jar_path})' if jar_path else ''}: give option 'jar' or "
                f"${JAR_ENV}, or {INSTALL_HINT}"
            )
        home = find_java_home(java_home)
        if home is None:
            raise EngineError(f"engine 'anserini' needs Java and none was found; {INSTALL_HINT}")
        self.jar, self.java_home = jar_path, home
        self.analyzer_name = analyzer
        self.k1, self.b = float(k1), float(b)
        self.multi_match = multi_match
        self._tmp = None if path is not None else tempfile.mkdtemp(prefix="rankscope-anserini-")
        self.path = Path(path) if path is not None else Path(self._tmp or "")
        self._J = start_jvm(jar_path, home)
        self._analyzer = self._make_analyzer()
        self._builder = self._J("org.apache.lucene.util.QueryBuilder")(self._analyzer)
        self._occur = self._J("org.apache.lucene.search.BooleanClause$Occur")
        self._analyzer_utils = self._J("io.anserini.analysis.AnalyzerUtils")
        self._term_query = self._J("org.apache.lucene.search.TermQuery")
        self._lucene_term = self._J("org.apache.lucene.index.Term")
        self._boost_query = self._J("org.apache.lucene.search.BoostQuery")
        self._searcher: Any = None
        self._fields: set[str] = set()
        self._closed = False

    def _make_analyzer(self) -> Any:
        J, name = self._J, self.analyzer_name
        default_english = J("io.anserini.analysis.DefaultEnglishAnalyzer")
        if name == "anserini":
            return default_english.newDefaultInstance()
        if name == "anserini-krovetz":
            return default_english.newStemmingInstance("krovetz")
        if name == "anserini-nostem":
            return default_english.newNonStemmingInstance()
        if name == "standard":
            return J("org.apache.lucene.analysis.standard.StandardAnalyzer")()
        if name == "english":
            return J("org.apache.lucene.analysis.en.EnglishAnalyzer")()
        return J("org.apache.lucene.analysis.core.WhitespaceAnalyzer")()

    # -- indexing -------------------------------------------------------------------------------

    def index(self, docs: Iterable[Document]) -> None:
        if self._closed:
            raise EngineError("anserini engine is closed; create a new one")
        J = self._J
        self._close_searcher()
        if self.path.exists():
            shutil.rmtree(self.path)
        self.path.mkdir(parents=True)
        store = J("org.apache.lucene.document.Field$Store")
        string_field = J("org.apache.lucene.document.StringField")
        text_field = J("org.apache.lucene.document.TextField")
        binary_dv = J("org.apache.lucene.document.BinaryDocValuesField")
        bytes_ref = J("org.apache.lucene.util.BytesRef")
        lucene_doc = J("org.apache.lucene.document.Document")
        config = J("org.apache.lucene.index.IndexWriterConfig")(self._analyzer)
        config.setOpenMode(J("org.apache.lucene.index.IndexWriterConfig$OpenMode").CREATE)
        config.setSimilarity(
            J("org.apache.lucene.search.similarities.BM25Similarity")(self.k1, self.b)
        )
        directory = J("org.apache.lucene.store.FSDirectory").open(
            J("java.io.File")(str(self.path)).toPath()
        )
        writer = J("org.apache.lucene.index.IndexWriter")(directory, config)
        fields: set[str] = set()
        try:
            for d in docs:
                doc = lucene_doc()
                doc.add(string_field("id", d.id, store.YES))
                doc.add(binary_dv("id", bytes_ref(d.id.encode("utf-8"))))
                values = [("title", d.title), ("text", d.text)] + [
                    (f, v) for f, v in d.fields.items() if f not in ("title", "text")
                ]
                doc.add(text_field("contents", "\n".join(v for _, v in values if v), store.NO))
                for f, v in values:
                    fields.add(f)
                    doc.add(text_field(_FIELD_PREFIX + f, v, store.NO))
                writer.addDocument(doc)
            writer.commit()
        except Exception as exc:
            raise EngineError(f"anserini engine: indexing into {self.path} failed: {exc}") from exc
        finally:
            writer.close()
            directory.close()
        self._fields = fields

    def _open(self) -> Any:
        if self._closed:
            raise EngineError("anserini engine is closed; create a new one")
        if self._searcher is None:
            if not any(self.path.glob("segments_*")):
                raise EngineError("anserini engine has no index yet; call index() first")
            searcher = self._J("io.anserini.search.SimpleSearcher")(str(self.path), self._analyzer)
            searcher.set_bm25(self.k1, self.b)
            self._searcher = searcher
        return self._searcher

    # -- searching ------------------------------------------------------------------------------

    def _lucene_field(self, query: Query, name: str | None) -> str:
        if not name or name in ("all", "_all", "*", "contents"):
            return "contents"
        if name not in self._fields:
            known = ", ".join(sorted(self._fields)) or "(nothing indexed yet)"
            raise EngineError(
                f"query {query.id!r} names field {name!r}, which the anserini index does not "
                f"have; indexed fields: {known}"
            )
        return _FIELD_PREFIX + name

    def analyze(self, text: str) -> list[str]:
        """The terms of ``text`` as the index analyser makes them."""
        return [str(t) for t in self._analyzer_utils.analyze(self._analyzer, text).toArray()]

    def _terms(self, query: Query, field: str, text: str) -> Any:
        """Any of the analysed terms of ``text`` in ``field``: one clause per distinct term,
        boosted by its count (Lucene rewrites repeated clauses so; building them first
        exceeded its clause limit). None when no term survives analysis."""
        counts = term_counts(self.analyze(text), query, self.name)
        clauses = []
        for term, n in counts.items():
            q = self._term_query(self._lucene_term(field, term))
            clauses.append(q if n == 1 else self._boost_query(q, float(n)))
        if len(clauses) <= 1:
            return clauses[0] if clauses else None
        builder = self._J("org.apache.lucene.search.BooleanQuery$Builder")()
        for q in clauses:
            builder.add(q, self._occur.SHOULD)
        return builder.build()

    def _phrase(self, query: Query, field: str, text: str, slop: int) -> Any:
        check_phrase_length(words(text), query)
        return self._builder.createPhraseQuery(field, text, max(0, int(slop)))

    def _term(self, query: Query, text: str) -> Any:
        if len(words(text)) > 1:
            return self._phrase(query, "contents", text, 0)
        return self._terms(query, "contents", text)

    def lucene_query(self, query: Query) -> Any:
        """The Lucene query for ``query`` (None: no term survives analysis)."""
        J = self._J
        kind = query.kind
        if kind == "boolean":
            must, should, must_not = boolean_clauses(query)
            builder = J("org.apache.lucene.search.BooleanQuery$Builder")()
            positive = 0
            for terms, occur in ((must, self._occur.MUST), (should, self._occur.SHOULD)):
                for t in terms:
                    q = self._term(query, t)
                    if q is None:
                        if occur == self._occur.MUST:  # a required term analysed away
                            return None
                        continue
                    builder.add(q, occur)
                    positive += 1
            if not positive:
                return None
            for t in must_not:
                q = self._term(query, t)
                if q is not None:
                    builder.add(q, self._occur.MUST_NOT)
            return builder.build()
        if kind == "query_string":
            return self._terms(query, self._lucene_field(query, query.field), query.text)
        if kind == "match":
            if not query.field:
                raise EngineError(
                    f"match query {query.id!r} names no field; set 'field' or use a query_string"
                )
            return self._terms(query, self._lucene_field(query, query.field), query.text)
        if kind == "multi_match":
            if not query.fields:
                raise EngineError(f"multi_match query {query.id!r} lists no fields")
            boost_query = J("org.apache.lucene.search.BoostQuery")
            parts = []
            for f, boost in query.fields:
                q = self._terms(query, self._lucene_field(query, f), query.text)
                if q is not None:
                    parts.append(boost_query(q, float(boost)))
            if not parts:
                return None
            if self.multi_match == "max":
                disjuncts = J("java.util.ArrayList")()
                for q in parts:
                    disjuncts.add(q)
                return J("org.apache.lucene.search.DisjunctionMaxQuery")(disjuncts, 0.0)
            builder = J("org.apache.lucene.search.BooleanQuery$Builder")()
            for q in parts:
                builder.add(q, self._occur.SHOULD)
            return builder.build()
        return self._phrase(query, self._lucene_field(query, query.field), query.text, query.slop)

    def _search(self, query: Query, k: int) -> list[Hit]:
        searcher = self._open()
        lq = self.lucene_query(query)
        if lq is None:
            return []
        try:
            results = searcher.search(lq, int(k))
        except Exception as exc:
            if "TooManyClauses" in str(exc):  # the query is too large, not the engine broken
                raise QueryError(
                    f"anserini engine cannot run query {query.id!r}: it expands to more "
                    f"clauses than Lucene allows ({str(exc).splitlines()[0]}); shorten it"
                ) from exc
            raise EngineError(f"anserini engine failed on query {query.id!r}: {exc}") from exc
        return [Hit(doc_id=str(r.docid), score=float(r.score)) for r in results]

    def _close_searcher(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None

    def close(self) -> None:
        if not self._closed:
            self._close_searcher()
            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)
        self._closed = True
