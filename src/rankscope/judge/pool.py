"""Depth-k pooling over runs, with provenance, and the pool files annotators and judges read.

A pool holds, per query, the union of the top ``depth`` documents of every run, each once, with
the runs and ranks that brought it in. It is written as JSONL, CSV or YAML (by suffix) with the
query text, doc id, title, a snippet and the full text, plus an empty ``grade`` column for
annotators; the same files are read back by ``rankscope judge`` and ``rankscope qrels import``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from rankscope.data.order import byte_key
from rankscope.engines.base import Document
from rankscope.errors import FormatError, InputError
from rankscope.judge.io import PathLike, iter_jsonl
from rankscope.suite.corpus import read_text
from rankscope.util.csvcells import csv_table, restore
from rankscope.util.order import natural_key

if TYPE_CHECKING:  # judging a pool needs no runs, so no numpy or pyarrow
    from rankscope.data import Run

SNIPPET_CHARS = 300
POOL_FORMATS = ("jsonl", "csv", "yaml")


@dataclass(frozen=True, slots=True)
class PoolEntry:
    """One (query, document) pair to judge and where it came from: ``(run, rank)`` pairs."""

    query_id: str
    doc_id: str
    provenance: tuple[tuple[str, int], ...]
    query: str = ""
    title: str = ""
    text: str = ""

    @property
    def best_rank(self) -> int:
        return min(rank for _, rank in self.provenance) if self.provenance else 0

    @property
    def snippet(self) -> str:
        return make_snippet(self.text)


@dataclass(frozen=True, slots=True)
class Pool:
    """A depth-k pool: the (query, document) pairs to judge, with the runs that retrieved them."""

    entries: tuple[PoolEntry, ...]
    depth: int | None = None
    run_names: tuple[str, ...] = ()
    source: str | None = None
    _keys: frozenset[tuple[str, str]] = field(default=frozenset(), repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_keys", frozenset((e.query_id, e.doc_id) for e in self.entries))

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, pair: object) -> bool:
        return pair in self._keys

    @property
    def query_ids(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for e in self.entries:
            seen.setdefault(e.query_id, None)
        return tuple(seen)

    def per_query_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for e in self.entries:
            counts[e.query_id] = counts.get(e.query_id, 0) + 1
        return counts


def make_snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """The first ``limit`` characters, cut at a word boundary, with an ellipsis when cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip() + "…"


def build_pool(
    runs: Sequence[Run],
    depth: int,
    *,
    queries: Mapping[str, str] | None = None,
    corpus: Mapping[str, Document] | None = None,
    query_ids: Iterable[str] | None = None,
) -> Pool:
    """Depth-``depth`` pool of ``runs``: each run's top documents per query, de-duplicated.

    Runs with the same name are told apart as everywhere else
    (:func:`rankscope.data.unique_run_names`: by file, else ``-2``, ``-3``). Entries are ordered
    by query id (byte order), then by best rank, then doc id. ``query_ids`` restricts the pool.
    """
    if depth < 1:
        raise InputError("pool depth must be at least 1", value=depth, hint="e.g. --depth 20")
    if not runs:
        raise InputError("pooling needs at least one run")
    from rankscope.data import unique_run_names  # numpy, pyarrow: not for the judge's start

    runs = unique_run_names(runs)
    names = [r.name for r in runs]
    wanted = None if query_ids is None else set(query_ids)
    found: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for name, run in zip(names, runs, strict=True):
        for qid in run.query_ids:
            if wanted is not None and qid not in wanted:
                continue
            for rank, (doc, _score) in enumerate(run.ranking(qid)[:depth], 1):
                found.setdefault((qid, doc), []).append((name, rank))
    entries = []
    for (qid, doc), prov in found.items():
        cdoc = corpus.get(doc) if corpus is not None else None
        entries.append(
            PoolEntry(
                query_id=qid,
                doc_id=doc,
                provenance=tuple(prov),
                query=(queries or {}).get(qid, ""),
                title=cdoc.title if cdoc else "",
                text=cdoc.text if cdoc else "",
            )
        )
    if not entries:
        raise InputError(
            "nothing to pool: the runs have no documents"
            + ("" if wanted is None else " for the query ids asked for"),
            value=None if wanted is None else sorted(wanted)[:5],
            hint="check the run files and --query-ids",
        )
    entries.sort(key=lambda e: (byte_key(e.query_id), e.best_rank, byte_key(e.doc_id)))
    return Pool(tuple(entries), depth=depth, run_names=tuple(names))


def require_query_text(pool: Pool) -> None:
    """Refuse a pool whose queries have no text: a judge cannot label a pair without it."""
    empty = sorted({e.query_id for e in pool.entries if not e.query.strip()})
    if empty:
        raise InputError(
            f"{len(empty)} pool queries have no text (e.g. {empty[:3]})",
            path=pool.source,
            hint="build the pool with --queries queries.jsonl",
        )


def select_query_ids(
    runs: Sequence[Run], query_ids: Sequence[str] | None = None, max_queries: int | None = None
) -> list[str] | None:
    """The queries to pool: ``query_ids`` (default: every query of the runs), cut to the first
    ``max_queries`` in natural order (numeric ids numerically); None means all."""
    if max_queries is None:
        return None if query_ids is None else list(query_ids)
    if max_queries < 1:
        raise InputError("--max-queries must be at least 1", value=max_queries)
    every = sorted({q for r in runs for q in r.query_ids}, key=natural_key)
    base = list(query_ids) if query_ids is not None else every
    return base[:max_queries]


@dataclass(frozen=True, slots=True)
class RunContribution:
    """What one run brought to a pool: pairs it found, and pairs only it found."""

    name: str
    pairs: int
    unique: int


@dataclass(frozen=True, slots=True)
class PoolStats:
    pairs: int
    queries: int
    mean_per_query: float
    runs: tuple[RunContribution, ...]
    #: pooled query ids without text in the queries file given (when one was given)
    queries_without_text: tuple[str, ...] = ()
    #: pooled pairs whose document is not in the corpus given (their text is empty)
    docs_without_text: int = 0


def pool_stats(
    pool: Pool,
    queries: Mapping[str, str] | None = None,
    corpus: Mapping[str, Document] | None = None,
) -> PoolStats:
    per_q = pool.per_query_counts()
    contributions = []
    found = [{r for r, _ in e.provenance} for e in pool.entries]
    for name in pool.run_names:
        contributions.append(
            RunContribution(
                name,
                sum(1 for runs in found if name in runs),
                sum(1 for runs in found if runs == {name}),
            )
        )
    missing_q: tuple[str, ...] = ()
    if queries is not None:
        missing_q = tuple(sorted({e.query_id for e in pool.entries if e.query_id not in queries}))
    absent = 0 if corpus is None else sum(1 for e in pool.entries if e.doc_id not in corpus)
    return PoolStats(
        pairs=len(pool),
        queries=len(per_q),
        mean_per_query=len(pool) / len(per_q) if per_q else 0.0,
        runs=tuple(contributions),
        queries_without_text=missing_q,
        docs_without_text=absent,
    )


# -- writing ----------------------------------------------------------------------------------


def pool_format(path: PathLike) -> str:
    suffix = Path(path).suffix.lower().lstrip(".")
    fmt = {"jsonl": "jsonl", "json": "jsonl", "csv": "csv", "yaml": "yaml", "yml": "yaml"}.get(
        suffix
    )
    if fmt is None:
        raise InputError(
            "unknown pool file type", path=path, value=suffix, hint="use .jsonl, .csv or .yaml"
        )
    return fmt


def _provenance_text(prov: tuple[tuple[str, int], ...]) -> str:
    return ";".join(f"{run}:{rank}" for run, rank in prov)


def entry_record(e: PoolEntry) -> dict[str, Any]:
    return {
        "query_id": e.query_id,
        "query": e.query,
        "doc_id": e.doc_id,
        "title": e.title,
        "snippet": e.snippet,
        "text": e.text,
        "runs": [{"run": run, "rank": rank} for run, rank in e.provenance],
        "grade": None,
    }


def write_pool(pool: Pool, path: PathLike) -> str:
    """Write the pool for annotation; the format follows the suffix. Returns the format."""
    fmt = pool_format(path)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    records = [entry_record(e) for e in pool.entries]
    if fmt == "jsonl":
        with p.open("w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    elif fmt == "csv":
        header = ["query_id", "query", "doc_id", "title", "snippet", "text", "runs", "grade"]
        rows = (
            [e.query_id, e.query, e.doc_id, e.title, e.snippet, e.text,
             _provenance_text(e.provenance), ""]
            for e in pool.entries
        )  # fmt: skip
        p.write_text(csv_table(header, rows, lineterminator="\r\n"), encoding="utf-8", newline="")
    else:
        with p.open("w", encoding="utf-8") as f:
            yaml.safe_dump(records, f, sort_keys=False, allow_unicode=True, width=100)
    return fmt


# -- reading ----------------------------------------------------------------------------------


def read_records(path: PathLike) -> list[tuple[int, dict[str, Any]]]:
    """(line, record) pairs from a JSONL, CSV or YAML pool or annotation file."""
    p = Path(path)
    fmt = pool_format(p)
    if fmt == "jsonl":
        return list(iter_jsonl(p))
    text = read_text(p)
    if fmt == "csv":
        reader = csv.DictReader(io.StringIO(text, newline=""))
        out: list[tuple[int, dict[str, Any]]] = []
        start = 2  # the first data record starts on line 2
        for row in reader:
            # undo what the spreadsheet-safe writer added (ids round-trip); a short row's
            # missing cells are None, a long row's extra cells a list
            out.append(
                (start, {k: restore(v) if isinstance(v, str) else v for k, v in row.items()})
            )
            start = reader.line_num + 1
        return out
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise FormatError(f"invalid YAML: {e}", path=p) from None
    if data is None:
        return []
    if not isinstance(data, list) or root is None or not isinstance(root, yaml.SequenceNode):
        raise FormatError("a YAML pool or annotation file is a list of records", path=p)
    pairs = []
    for node, rec in zip(root.value, data, strict=True):
        line = node.start_mark.line + 1
        if not isinstance(rec, dict):
            raise FormatError("each YAML record must be a mapping", path=p, line=line, value=rec)
        pairs.append((line, rec))
    return pairs


def _parse_provenance(value: Any, path: Path, line: int) -> tuple[tuple[str, int], ...]:
    if value is None or value == "":
        return ()
    items: list[tuple[str, int]] = []
    try:
        if isinstance(value, str):
            for part in value.split(";"):
                run, _, rank = part.rpartition(":")
                items.append((run, int(rank)))
        else:
            for item in value:
                items.append((str(item["run"]), int(item["rank"])))
    except (KeyError, TypeError, ValueError):
        raise FormatError(
            "cannot read the 'runs' provenance",
            path=path,
            line=line,
            value=value,
            hint="expected 'run:rank;run:rank' or a list of {run, rank}",
        ) from None
    return tuple(items)


def read_pool(path: PathLike, corpus: Mapping[str, Document] | None = None) -> Pool:
    """Read a pool file written by :func:`write_pool` (any of the three formats).

    ``corpus`` fills in text and title where the file has none.
    """
    p = Path(path)
    entries = []
    seen: set[tuple[str, str]] = set()
    for line, rec in read_records(p):
        qid, did = rec.get("query_id"), rec.get("doc_id")
        if qid in (None, "") or did in (None, ""):
            raise FormatError(
                "a pool record needs 'query_id' and 'doc_id'", path=p, line=line, value=rec
            )
        key = (str(qid), str(did))
        if key in seen:
            raise FormatError(
                "duplicate (query_id, doc_id) in the pool", path=p, line=line, value=key
            )
        seen.add(key)
        text = str(rec.get("text") or "")
        title = str(rec.get("title") or "")
        if corpus is not None and key[1] in corpus:
            cdoc = corpus[key[1]]
            text = text or cdoc.text
            title = title or cdoc.title
        entries.append(
            PoolEntry(
                query_id=key[0],
                doc_id=key[1],
                provenance=_parse_provenance(rec.get("runs"), p, line),
                query=str(rec.get("query") or ""),
                title=title,
                text=text or str(rec.get("snippet") or ""),
            )
        )
    if not entries:
        raise InputError(
            "the pool file holds no (query, doc) pairs",
            path=p,
            hint="build it with `rankscope pool RUN... --out pool.jsonl`",
        )
    return Pool(tuple(entries), source=str(p))


__all__ = [
    "POOL_FORMATS",
    "Pool",
    "PoolEntry",
    "PoolStats",
    "RunContribution",
    "build_pool",
    "entry_record",
    "make_snippet",
    "pool_format",
    "pool_stats",
    "read_pool",
    "read_records",
    "require_query_text",
    "select_query_ids",
    "write_pool",
]
