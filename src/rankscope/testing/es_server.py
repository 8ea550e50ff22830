"""A small Elasticsearch / OpenSearch on loopback, speaking their REST wire format.

Tests point the real ``elasticsearch`` and ``opensearch-py`` clients at it so that index
management, bulk indexing, searching, retries and error handling run over real HTTP without a
cluster. It answers

- ``GET /`` (cluster info), ``HEAD|PUT|DELETE /<index>`` (``?ignore_unavailable=true``),
  ``POST /<index>/_refresh``;
- ``POST [/<index>]/_bulk``: NDJSON ``index`` / ``create`` / ``delete`` actions, answered with
  per-item statuses and ``errors``;
- ``POST|GET /<index>/_search`` for ``match``, ``multi_match`` (``best_fields`` with
  ``tie_breaker``, ``most_fields``; ``field^boost``), ``match_phrase`` (``slop`` by Lucene's
  sloppy-phrase rule), ``query_string`` (terms, escapes, ``"phrases"``, ``+``/``-``, ``f:term``),
  ``bool`` (``must``, ``should``, ``must_not``, ``filter``, ``minimum_should_match``) and
  ``match_all``, scored by a small BM25 (Lucene's formula, per field, with the index's
  ``similarity.default`` ``k1`` and ``b``, exact document lengths) and ``copy_to`` fields.
  Analyzers: ``standard``, ``simple``, ``whitespace``, ``english`` (standard + English stop words +
  a plural-``s`` stemmer, *not* Elasticsearch's Porter stemmer) and custom ones built from the
  ``standard`` / ``whitespace`` tokenizers and ``lowercase`` / ``stop`` / ``asciifolding`` /
  stemmer filters. Errors come back in Elasticsearch's shape (``{"error": {"root_cause", "type",
  "reason"}, "status"}``).

``flavor="elasticsearch"`` adds the ``X-Elastic-Product`` header the Elasticsearch client checks;
``flavor="opensearch"`` reports an OpenSearch distribution. Faults are scripted with
:meth:`EsServer.inject`: an HTTP status (429 ``es_rejected_execution_exception``, 5xx), a delay
(client timeouts), rejected bulk items, a shard failure or ``timed_out`` in a search response.
Every request is recorded (method, path, query, JSON or NDJSON body) for golden-file checks.

This is a test double for wire behaviour and a plausible ranking, not a search engine to
benchmark: its scores follow BM25 but its analyzers are simpler than a real cluster's.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, unquote, urlsplit

from rankscope.engines.phrase import sloppy_match_length

Flavor = Literal["elasticsearch", "opensearch"]

_ENGLISH_STOP_WORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
        "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
        "these", "they", "this", "to", "was", "will", "with",
    }
)  # fmt: skip
# (Lucene's EnglishAnalyzer default stop set)
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_POSITION_GAP = 100  # Elasticsearch's position_increment_gap between values of one field
_ERROR_TYPES = {
    400: "illegal_argument_exception",
    404: "index_not_found_exception",
    429: "es_rejected_execution_exception",
    500: "internal_server_error",
    502: "bad_gateway",
    503: "unavailable_shards_exception",
    504: "gateway_timeout",
}


class _ApiError(Exception):
    def __init__(self, status: int, kind: str, reason: str, index: str | None = None) -> None:
        super().__init__(reason)
        self.status, self.kind, self.reason, self.index = status, kind, reason, index

    def body(self) -> dict[str, Any]:
        cause: dict[str, Any] = {"type": self.kind, "reason": self.reason}
        if self.index:
            cause["index"] = self.index
        return {"error": {"root_cause": [cause], **cause}, "status": self.status}


# -- analysis -----------------------------------------------------------------------------------


def _plural_stem(token: str) -> str:
    """Lucene's EnglishMinimalStemmer: plural endings only (``ies`` -> ``y``, ``es``, ``s``)."""
    n = len(token)
    if n < 3 or token[-1] != "s":
        return token
    if token[-2] in "us":
        return token
    if token[-2] == "e":
        if n > 3 and token[-3] == "i" and token[-4] not in "ae":
            return token[:-3] + "y"
        if token[-3] in "iao" or token[-3] == "e":
            return token[:-1]
    return token[:-1]


def _fold(token: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", token) if not unicodedata.combining(c))


@dataclass(frozen=True)
class _Analyzer:
    tokenizer: str = "standard"
    filters: tuple[str, ...] = ("lowercase",)

    def __call__(self, text: str) -> list[tuple[int, str]]:
        """(position, term) pairs; removed stop words keep their position gap, as in Lucene."""
        if self.tokenizer == "whitespace":
            raw = text.split()
        elif self.tokenizer in ("letter", "simple"):
            raw = re.findall(r"[^\W\d_]+", text)
        else:
            raw = _TOKEN.findall(text)
        out: list[tuple[int, str]] = []
        for pos, tok in enumerate(raw):
            t: str | None = tok
            for f in self.filters:
                if t is None:
                    break
                if f == "lowercase":
                    t = t.lower()
                elif f == "asciifolding":
                    t = _fold(t)
                elif f == "possessive":
                    t = re.sub(r"['’]s$", "", t)
                elif f == "stop":
                    t = None if t.lower() in _ENGLISH_STOP_WORDS else t
                elif f in ("stemmer", "porter_stem", "kstem", "snowball", "minimal_english"):
                    t = _plural_stem(t)
            if t:
                out.append((pos, t))
        return out


_BUILTIN_ANALYZERS: dict[str, _Analyzer] = {
    "standard": _Analyzer("standard", ("lowercase",)),
    "simple": _Analyzer("simple", ("lowercase",)),
    "whitespace": _Analyzer("whitespace", ()),
    "english": _Analyzer("standard", ("possessive", "lowercase", "stop", "stemmer")),
}


def _custom_analyzer(name: str, spec: Mapping[str, Any]) -> _Analyzer:
    tokenizer = str(spec.get("tokenizer", "standard"))
    if tokenizer not in ("standard", "whitespace", "letter", "simple"):
        raise _ApiError(
            400, "illegal_argument_exception", f"failed to find tokenizer [{tokenizer}]"
        )
    filters = []
    for f in spec.get("filter", []) or []:
        name_f = str(f)
        if name_f not in (
            "lowercase", "asciifolding", "stop", "stemmer", "porter_stem", "kstem", "snowball",
            "minimal_english",
        ):  # fmt: skip
            raise _ApiError(
                400,
                "illegal_argument_exception",
                f"failed to find filter under name [{name_f}] (analyzer [{name}])",
            )
        filters.append(name_f)
    return _Analyzer(tokenizer, tuple(filters))


# -- indices ------------------------------------------------------------------------------------


@dataclass
class _Field:
    analyzer: _Analyzer
    copy_to: tuple[str, ...] = ()


@dataclass
class _Index:
    name: str
    k1: float
    b: float
    analyzers: dict[str, _Analyzer]
    fields: dict[str, _Field]
    template: _Field | None
    ids: list[str] = field(default_factory=list)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: field -> doc id -> term -> positions
    postings: dict[str, dict[str, dict[str, list[int]]]] = field(default_factory=dict)
    lengths: dict[str, dict[str, int]] = field(default_factory=dict)
    #: visible to searches: the state at the last refresh
    visible: tuple[str, ...] = ()

    def analyzer_for(self, field_name: str) -> _Analyzer:
        f = self.fields.get(field_name)
        return f.analyzer if f else _BUILTIN_ANALYZERS["standard"]

    def put(self, doc_id: str, source: dict[str, Any]) -> str:
        result = "updated" if doc_id in self.sources else "created"
        self.delete(doc_id)
        self.ids.append(doc_id)
        self.sources[doc_id] = source
        values: dict[str, list[str]] = {}
        for name, value in source.items():
            if not isinstance(value, str):
                continue
            spec = self.fields.get(name)
            if spec is None and self.template is not None:
                spec = self.fields[name] = _Field(self.template.analyzer, self.template.copy_to)
            if spec is None:
                continue
            values.setdefault(name, []).append(value)
            for target in spec.copy_to:
                values.setdefault(target, []).append(value)
        for name, texts in values.items():
            analyzer = self.analyzer_for(name)
            terms: dict[str, list[int]] = {}
            offset, length = 0, 0
            for text in texts:
                toks = analyzer(text)
                for pos, term in toks:
                    terms.setdefault(term, []).append(offset + pos)
                length += len(toks)
                last = toks[-1][0] if toks else -1
                offset += last + 1 + _POSITION_GAP
            if length:
                self.postings.setdefault(name, {})[doc_id] = terms
                self.lengths.setdefault(name, {})[doc_id] = length
        return result

    def delete(self, doc_id: str) -> bool:
        if doc_id not in self.sources:
            return False
        del self.sources[doc_id]
        self.ids.remove(doc_id)
        for per_field in self.postings.values():
            per_field.pop(doc_id, None)
        for lens in self.lengths.values():
            lens.pop(doc_id, None)
        return True


def _flat_settings(settings: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in settings.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flat_settings(value, name + "."))
        else:
            out[name.removeprefix("index.")] = value
    return out


def _new_index(name: str, body: Mapping[str, Any]) -> _Index:
    flat = _flat_settings(body.get("settings") or {})
    sim_type = str(flat.get("similarity.default.type", "BM25"))
    if sim_type != "BM25":
        raise _ApiError(400, "illegal_argument_exception", f"Unknown Similarity type [{sim_type}]")
    k1 = float(flat.get("similarity.default.k1", 1.2))
    b = float(flat.get("similarity.default.b", 0.75))
    analyzers = dict(_BUILTIN_ANALYZERS)
    settings = body.get("settings") or {}
    analysis = settings.get("analysis") or (settings.get("index") or {}).get("analysis") or {}
    for aname, spec in (analysis.get("analyzer") or {}).items():
        analyzers[aname] = _custom_analyzer(aname, spec)

    def make_field(spec: Mapping[str, Any]) -> _Field:
        if spec.get("type", "text") != "text":
            raise _ApiError(400, "mapper_parsing_exception", f"unsupported type [{spec['type']}]")
        aname = str(spec.get("analyzer", "standard"))
        if aname not in analyzers:
            raise _ApiError(
                400, "mapper_parsing_exception", f"analyzer [{aname}] has not been configured"
            )
        copy_to = spec.get("copy_to") or ()
        return _Field(analyzers[aname], (copy_to,) if isinstance(copy_to, str) else tuple(copy_to))

    mappings = body.get("mappings") or {}
    fields = {n: make_field(s) for n, s in (mappings.get("properties") or {}).items()}
    template = None
    for entry in mappings.get("dynamic_templates") or []:
        for spec in entry.values():
            if spec.get("match_mapping_type") in ("string", "*"):
                template = make_field(spec.get("mapping") or {})
    if template is None and mappings.get("dynamic", True) not in (False, "false", "strict"):
        template = _Field(analyzers["standard"])
    return _Index(name, k1, b, analyzers, fields, template)


# -- scoring ------------------------------------------------------------------------------------

_Scores = dict[str, float]


class _Searcher:
    def __init__(self, index: _Index) -> None:
        self.ix = index
        self.docs = index.visible

    def _bm25(self, field_name: str, term: str, freq: float, doc: str, boost: float) -> float:
        lens = self.ix.lengths.get(field_name, {})
        visible = [d for d in self.docs if d in lens]
        n_docs = len(visible)
        postings = self.ix.postings.get(field_name, {})
        df = sum(1 for d in visible if term in postings[d])
        avgdl = sum(lens[d] for d in visible) / n_docs if n_docs else 1.0
        idf = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
        norm = self.ix.k1 * (1 - self.ix.b + self.ix.b * lens[doc] / avgdl)
        return boost * idf * freq / (freq + norm)

    def terms(self, field_name: str, text: str) -> list[tuple[int, str]]:
        return self.ix.analyzer_for(field_name)(text)

    def term_scores(self, field_name: str, terms: list[str], boost: float) -> _Scores:
        postings = self.ix.postings.get(field_name, {})
        out: _Scores = {}
        for doc in self.docs:
            doc_terms = postings.get(doc)
            if not doc_terms:
                continue
            s = 0.0
            hit = False
            for term in terms:
                if term in doc_terms:
                    hit = True
                    s += self._bm25(field_name, term, len(doc_terms[term]), doc, boost)
            if hit:
                out[doc] = s
        return out

    def match(self, field_name: str, text: str, operator: str, boost: float) -> _Scores:
        terms = [t for _, t in self.terms(field_name, text)]
        scores = self.term_scores(field_name, terms, boost)
        if operator.lower() == "and":
            postings = self.ix.postings.get(field_name, {})
            scores = {d: s for d, s in scores.items() if all(t in postings[d] for t in terms)}
        return scores

    def phrase(self, field_name: str, text: str, slop: int, boost: float) -> _Scores:
        analysed = self.terms(field_name, text)
        if not analysed:
            return {}
        first = analysed[0][0]
        offsets = [p - first for p, _ in analysed]
        postings = self.ix.postings.get(field_name, {})
        out: _Scores = {}
        for doc in self.docs:
            doc_terms = postings.get(doc)
            if not doc_terms or not all(t in doc_terms for _, t in analysed):
                continue
            positions = [doc_terms[t] for _, t in analysed]
            length = sloppy_match_length(positions, offsets, slop)
            if length is None:
                continue
            freq = 1.0 / (1 + length)
            out[doc] = sum(self._bm25(field_name, t, freq, doc, boost) for _, t in analysed)
        return out

    def run(self, q: Mapping[str, Any]) -> _Scores:
        if not isinstance(q, Mapping) or len(q) != 1:
            raise _ApiError(400, "parsing_exception", f"query malformed: {json.dumps(q)[:200]}")
        ((kind, spec),) = q.items()
        if kind == "match_all":
            return {d: float(spec.get("boost", 1.0)) for d in self.docs}
        if kind in ("match", "match_phrase"):
            ((fname, params),) = spec.items()
            if not isinstance(params, Mapping):
                params = {"query": params}
            text = str(params.get("query", ""))
            boost = float(params.get("boost", 1.0))
            if kind == "match_phrase":
                return self.phrase(fname, text, int(params.get("slop", 0)), boost)
            return self.match(fname, text, str(params.get("operator", "or")), boost)
        if kind == "multi_match":
            return self.multi_match(spec)
        if kind == "query_string":
            return self.run(_parse_query_string(spec))
        if kind == "bool":
            return self.boolean(spec)
        raise _ApiError(400, "parsing_exception", f"unknown query [{kind}]")

    def multi_match(self, spec: Mapping[str, Any]) -> _Scores:
        text = str(spec.get("query", ""))
        kind = spec.get("type", "best_fields")
        if kind not in ("best_fields", "most_fields"):
            raise _ApiError(400, "parsing_exception", f"[multi_match] unsupported type [{kind}]")
        tie = float(spec.get("tie_breaker", 0.0))
        per_field: list[_Scores] = []
        for entry in spec.get("fields") or []:
            fname, _, boost = str(entry).partition("^")
            per_field.append(self.match(fname, text, "or", float(boost or 1.0)))
        out: _Scores = {}
        for doc in {d for s in per_field for d in s}:
            vals = [s[doc] for s in per_field if doc in s]
            if kind == "most_fields":
                out[doc] = sum(vals)
            else:
                best = max(vals)
                out[doc] = best + tie * (sum(vals) - best)
        return out

    def boolean(self, spec: Mapping[str, Any]) -> _Scores:
        def clauses(name: str) -> list[_Scores]:
            value = spec.get(name) or []
            items = value if isinstance(value, list) else [value]
            return [self.run(c) for c in items]

        must, should, must_not, filt = (
            clauses("must"),
            clauses("should"),
            clauses("must_not"),
            clauses("filter"),
        )
        candidates: set[str] | None = None
        for group in must + filt:
            keys = set(group)
            candidates = keys if candidates is None else candidates & keys
        msm = spec.get("minimum_should_match")
        need = int(msm) if msm is not None else (0 if must or filt else 1)
        if candidates is None:
            candidates = {d for s in should for d in s} if should else set(self.docs)
        if need:
            candidates = {d for d in candidates if sum(d in s for s in should) >= need}
        for group in must_not:
            candidates -= set(group)
        boost = float(spec.get("boost", 1.0))
        return {
            d: boost * (sum(s.get(d, 0.0) for s in must) + sum(s.get(d, 0.0) for s in should))
            for d in candidates
        }


_QS_SPECIAL = set('+-=&|><!(){}[]^"~*?:\\/')


def _parse_query_string(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A ``query_string`` as ``bool`` of ``match`` / ``match_phrase`` clauses: plain and escaped
    terms, ``"phrases"``, ``+``/``-`` prefixes and ``field:term``; other syntax is refused."""
    text = str(spec.get("query", ""))
    default_field = str(spec.get("default_field") or "*")
    if default_field == "*":
        fields = [str(f) for f in spec.get("fields") or []] or ["*"]
    else:
        fields = [default_field]
    operator = str(spec.get("default_operator", "OR")).upper()
    must: list[dict[str, Any]] = []
    should: list[dict[str, Any]] = []
    must_not: list[dict[str, Any]] = []

    def fail(why: str) -> _ApiError:
        return _ApiError(400, "query_shard_exception", f"Failed to parse query [{text}]: {why}")

    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        prefix = ""
        if text[i] in "+-":
            prefix = text[i]
            i += 1
        target = fields
        m = re.match(r"([A-Za-z0-9_.\-]+):(?!\s)", text[i:])
        if m:
            target = [m.group(1)]
            i += m.end()
        if i < n and text[i] == '"':
            end = text.find('"', i + 1)
            if end < 0:
                raise fail("Lexical error: unterminated quote")
            words_, kind = text[i + 1 : end], "match_phrase"
            i = end + 1
        else:
            buf = []
            while i < n and not text[i].isspace():
                c = text[i]
                if c == "\\" and i + 1 < n:
                    buf.append(text[i + 1])
                    i += 2
                    continue
                if c in _QS_SPECIAL:
                    raise fail(f"unsupported syntax at {c!r}")
                buf.append(c)
                i += 1
            words_, kind = "".join(buf), "match"
            if words_ in ("AND", "OR", "NOT"):
                raise fail(f"operator {words_} is not supported by this test server")
        alts = [{kind: {f: {"query": words_}}} for f in target]
        clause = alts[0] if len(alts) == 1 else {"bool": {"should": alts}}
        if prefix == "-":
            must_not.append(clause)
        elif prefix == "+" or operator == "AND":
            must.append(clause)
        else:
            should.append(clause)
    body: dict[str, Any] = {"must": must, "should": should, "must_not": must_not}
    if not must and not should:
        body["should"] = []
        body["minimum_should_match"] = 1
    return {"bool": body}


# -- faults and recording -----------------------------------------------------------------------


@dataclass
class Fault:
    """A scripted failure for requests whose method and path match, ``times`` times.

    - ``status``: answer with this HTTP status and an Elasticsearch error body;
    - ``delay``: sleep this many seconds first (then answer normally unless ``status`` is set);
    - ``reject_items``: a ``_bulk`` answers 200 with ``errors: true``, its first
      ``reject_items`` items rejected with ``item_status`` (not indexed);
    - ``shard_failure``: a ``_search`` answers 200 with one of two shards failed;
    - ``timed_out``: a ``_search`` answers 200 with ``timed_out: true``.
    """

    path: str = ".*"
    method: str | None = None
    status: int | None = None
    delay: float = 0.0
    reject_items: int = 0
    item_status: int = 429
    shard_failure: bool = False
    timed_out: bool = False
    times: int = 1


@dataclass(frozen=True)
class Recorded:
    """One request as the server received it (``EsServer.requests``, :meth:`EsServer.recorded`):
    the JSON body parsed, an NDJSON body as a list of its objects."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


class EsServer:
    """The server; use as a context manager. ``url`` is its base URL on 127.0.0.1."""

    def __init__(self, flavor: Flavor = "elasticsearch") -> None:
        self.flavor = flavor
        self.indices: dict[str, _Index] = {}
        self.requests: list[Recorded] = []
        self._faults: list[Fault] = []
        self._lock = threading.RLock()
        handler = type("Handler", (_Handler,), {"app": self})
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._http.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def start(self) -> EsServer:
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> EsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def inject(self, *faults: Fault) -> None:
        with self._lock:
            self._faults.extend(faults)

    def recorded(self, path_suffix: str, method: str | None = None) -> list[Recorded]:
        with self._lock:
            return [
                r
                for r in self.requests
                if r.path.endswith(path_suffix) and (method is None or r.method == method)
            ]

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for f in self._faults:
                if (f.method is None or f.method == method) and re.search(f.path, path):
                    f.times -= 1
                    if f.times <= 0:
                        self._faults.remove(f)
                    return f
        return None

    # -- the API ----------------------------------------------------------------------------------

    def handle(
        self, method: str, path: str, query: dict[str, list[str]], body: Any, fault: Fault | None
    ) -> tuple[int, Any]:
        parts = [unquote(p) for p in path.strip("/").split("/") if p]
        with self._lock:
            if not parts:
                return 200, self._info()
            if parts[-1] == "_bulk":
                return 200, self._bulk(parts[0] if len(parts) > 1 else None, body, fault)
            name = parts[0]
            if len(parts) == 1:
                if method == "HEAD":
                    return (200 if name in self.indices else 404), None
                if method == "PUT":
                    if name in self.indices:
                        raise _ApiError(
                            400,
                            "resource_already_exists_exception",
                            f"index [{name}] already exists",
                            name,
                        )
                    self.indices[name] = _new_index(name, body or {})
                    return 200, {"acknowledged": True, "shards_acknowledged": True, "index": name}
                if method == "DELETE":
                    if name not in self.indices:
                        if query.get("ignore_unavailable", ["false"])[0] == "true":
                            return 200, {"acknowledged": True}
                        raise _ApiError(404, "index_not_found_exception", "no such index", name)
                    del self.indices[name]
                    return 200, {"acknowledged": True}
            index = self.indices.get(name)
            if index is None:
                raise _ApiError(404, "index_not_found_exception", f"no such index [{name}]", name)
            if parts[1:] == ["_refresh"]:
                index.visible = tuple(index.ids)
                return 200, {"_shards": {"total": 1, "successful": 1, "failed": 0}}
            if parts[1:] == ["_search"]:
                return 200, self._search(index, body or {}, fault)
        raise _ApiError(400, "illegal_argument_exception", f"no handler for [{method} {path}]")

    def _info(self) -> dict[str, Any]:
        version: dict[str, Any] = {"number": "9.1.0", "lucene_version": "10.2.2"}
        if self.flavor == "opensearch":
            version = {"distribution": "opensearch", "number": "2.19.0"}
        return {
            "name": "rankscope-loopback",
            "cluster_name": "rankscope",
            "version": version,
            "tagline": "The OpenSearch Project: https://opensearch.org/"
            if self.flavor == "opensearch"
            else "You Know, for Search",
        }

    def _bulk(self, default_index: str | None, lines: Any, fault: Fault | None) -> dict[str, Any]:
        if not isinstance(lines, list):
            raise _ApiError(400, "illegal_argument_exception", "The bulk request must be NDJSON")
        items: list[dict[str, Any]] = []
        rejected = fault.reject_items if fault else 0
        i = 0
        while i < len(lines):
            action = lines[i]
            if not isinstance(action, Mapping) or len(action) != 1:
                raise _ApiError(400, "illegal_argument_exception", f"Malformed action at line {i}")
            ((op, meta),) = action.items()
            name = meta.get("_index", default_index)
            doc_id = str(meta.get("_id"))
            source = lines[i + 1] if op in ("index", "create") else None
            i += 2 if op in ("index", "create") else 1
            if rejected > 0:
                rejected -= 1
                status = fault.item_status if fault else 429
                items.append(
                    {
                        op: {
                            "_index": name,
                            "_id": doc_id,
                            "status": status,
                            "error": {
                                "type": _ERROR_TYPES.get(status, "exception"),
                                "reason": "rejected execution of bulk item (queue capacity)",
                            },
                        }
                    }
                )
                continue
            index = self.indices.get(name)
            if index is None:  # auto-create, as a cluster with default settings does
                index = self.indices[name] = _new_index(name, {})
            if op == "delete":
                found = index.delete(doc_id)
                items.append(
                    {op: {"_index": name, "_id": doc_id, "status": 200 if found else 404,
                          "result": "deleted" if found else "not_found"}}
                )  # fmt: skip
                continue
            if op == "create" and doc_id in index.sources:
                items.append(
                    {op: {"_index": name, "_id": doc_id, "status": 409,
                          "error": {"type": "version_conflict_engine_exception",
                                    "reason": f"[{doc_id}]: document already exists"}}}
                )  # fmt: skip
                continue
            if not isinstance(source, Mapping):
                raise _ApiError(400, "illegal_argument_exception", "bulk source must be an object")
            result = index.put(doc_id, dict(source))
            items.append(
                {op: {"_index": name, "_id": doc_id, "status": 201 if result == "created" else 200,
                      "result": result, "_shards": {"total": 1, "successful": 1, "failed": 0}}}
            )  # fmt: skip
        errors = any("error" in next(iter(item.values())) for item in items)
        return {"took": 1, "errors": errors, "items": items}

    def _search(
        self, index: _Index, body: Mapping[str, Any], fault: Fault | None
    ) -> dict[str, Any]:
        scores = _Searcher(index).run(body.get("query") or {"match_all": {}})
        size = int(body.get("size", 10))
        order = {d: i for i, d in enumerate(index.visible)}
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
        shards: dict[str, Any] = {"total": 1, "successful": 1, "skipped": 0, "failed": 0}
        if fault is not None and fault.shard_failure:
            ranked = ranked[::2]
            shards = {
                "total": 2, "successful": 1, "skipped": 0, "failed": 1,
                "failures": [{"shard": 1, "index": index.name, "node": "n1", "reason": {
                    "type": "node_not_connected_exception", "reason": "[n1] Node not connected"}}],
            }  # fmt: skip
        source = body.get("_source", True)
        hits = []
        for doc, score in ranked[:size]:
            hit: dict[str, Any] = {"_index": index.name, "_id": doc, "_score": score}
            if source is not False:
                hit["_source"] = index.sources[doc]
            hits.append(hit)
        out: dict[str, Any] = {
            "took": 1,
            "timed_out": bool(fault and fault.timed_out),
            "_shards": shards,
            "hits": {"max_score": ranked[0][1] if ranked else None, "hits": hits},
        }
        if body.get("track_total_hits", True) is not False:
            out["hits"]["total"] = {"value": len(ranked), "relation": "eq"}
        return out


class _Handler(BaseHTTPRequestHandler):
    app: EsServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> tuple[Any, bytes]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw.strip():
            return None, raw
        ctype = self.headers.get("Content-Type", "")
        if "ndjson" in ctype or self.path.split("?")[0].endswith("/_bulk"):
            return [json.loads(line) for line in raw.splitlines() if line.strip()], raw
        return json.loads(raw), raw

    def _dispatch(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        try:
            body, _ = self._read_body()
        except (ValueError, UnicodeDecodeError) as exc:
            self._reply(400, _ApiError(400, "parse_exception", f"invalid JSON: {exc}").body())
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.app._lock:
            self.app.requests.append(Recorded(self.command, parts.path, query, headers, body))
        fault = self.app._take_fault(self.command, parts.path)
        if fault is not None and fault.delay:
            time.sleep(fault.delay)
        if fault is not None and fault.status is not None:
            kind = _ERROR_TYPES.get(fault.status, "exception")
            self._reply(fault.status, _ApiError(fault.status, kind, f"scripted {kind}").body())
            return
        try:
            status, payload = self.app.handle(self.command, parts.path, query, body, fault)
        except _ApiError as exc:
            status, payload = exc.status, exc.body()
        except (KeyError, TypeError, ValueError) as exc:
            status, payload = 400, _ApiError(400, "parsing_exception", repr(exc)).body()
        self._reply(status, payload)

    def _reply(self, status: int, payload: Any) -> None:
        data = b"" if payload is None else json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            if self.app.flavor == "elasticsearch":
                self.send_header("X-Elastic-Product", "Elasticsearch")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _dispatch


__all__ = ["EsServer", "Fault", "Flavor", "Recorded"]
