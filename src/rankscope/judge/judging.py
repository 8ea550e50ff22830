"""LLM relevance judging of a pool, cached, checkpointed and accounted for.

:class:`RelevanceJudge` answers one (query, passage) pair: from the cache when the same provider,
model, prompt and texts were judged before, else by a paid call whose answer is stored in the
cache at once. :func:`judge_pool` runs it over a pool with a thread pool, appending each result
to ``judgments.jsonl`` as it arrives, so a run killed half-way loses nothing that was paid for;
rerunning skips the pairs already in the file and takes the rest from the cache or the provider.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.judge.batch_store import BatchProgress, pending_in
from rankscope.judge.cache import CachedJudgment, CacheKey, JudgmentCache, text_hash
from rankscope.judge.config import JudgeSettings
from rankscope.judge.io import iter_jsonl, write_qrels_trec
from rankscope.judge.limits import (
    UsageMeter,
    UsageTotals,
    estimate_tokens,
    truncate_to_tokens,
)
from rankscope.judge.pool import Pool, PoolEntry, require_query_text
from rankscope.judge.prompts import DEFAULT_TEMPLATE, PromptTemplate, parse_label
from rankscope.judge.providers import Provider, ProviderCallError
from rankscope.util.files import atomic_write_text

if TYPE_CHECKING:  # numpy and pyarrow load for the qrels at the end of a run, not at its start
    from rankscope.data import Qrels

log = logging.getLogger("rankscope.judge")

JUDGMENTS_FILE = "judgments.jsonl"
QRELS_FILE = "qrels.txt"
SUMMARY_FILE = "summary.json"
SUPERSEDED_FILE = "judgments.superseded.jsonl"


@dataclass(frozen=True, slots=True)
class Judgment:
    """One label (or None with ``reason``), its rationale, raw answer and what it cost."""

    query_id: str
    doc_id: str
    label: int | None
    reason: str | None
    rationale: str
    raw_text: str
    raw_response: dict[str, Any]
    provider: str
    model: str
    template_hash: str
    query_hash: str
    doc_hash: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    request_id: str | None
    cached: bool
    judged_at: str
    #: the passage was longer than the token budget and only its start was sent
    passage_truncated: bool = False
    passage_tokens: int = 0  # estimated tokens of the whole passage (4 characters per token)
    #: the provider's batch that answered it (``judge --batch``); None for a direct call
    batch_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        # Shallow: json.dumps reads the nested raw_response as it is, where asdict's deep copy
        # of it cost 0.14 ms a row on the thread that writes every row.
        return {f.name: getattr(self, f.name) for f in fields(self)}


def judgment_from(
    key: CacheKey,
    answer: CachedJudgment,
    *,
    query_id: str,
    doc_id: str,
    from_cache: bool,
    passage_truncated: bool,
    passage_tokens: int,
    batch_id: str | None = None,
) -> Judgment:
    """The row of one pair from its (paid or cached) answer: the one way rows are made."""
    return Judgment(
        query_id=query_id,
        doc_id=doc_id,
        label=answer.label,
        reason=answer.reason,
        rationale=answer.rationale,
        raw_text=answer.raw_text,
        raw_response=answer.raw_response,
        provider=key.provider,
        model=key.model,
        template_hash=key.template_hash,
        query_hash=key.query_hash,
        doc_hash=key.doc_hash,
        input_tokens=answer.input_tokens,
        output_tokens=answer.output_tokens,
        cost_usd=answer.cost_usd,
        request_id=answer.request_id,
        cached=from_cache,
        judged_at=answer.created_at,
        passage_truncated=passage_truncated,
        passage_tokens=passage_tokens,
        batch_id=batch_id,
    )


class RelevanceJudge:
    """Labels (query, passage) pairs with a provider, a prompt template and a cache."""

    def __init__(
        self,
        provider: Provider,
        template: PromptTemplate | None = None,
        cache: JudgmentCache | None = None,
        *,
        fresh: bool = False,
        retry_nulls: bool = False,
        max_passage_tokens: int | None = None,
    ) -> None:
        self.provider = provider
        self.template = template or PromptTemplate(DEFAULT_TEMPLATE)
        self.cache = cache
        self.fresh = fresh
        #: ask again where the cached answer gave no label (answered pairs are not paid again)
        self.retry_nulls = retry_nulls
        #: longer passages are cut to this many (estimated) tokens; None: the settings' budget
        budget = provider.settings.max_passage_tokens
        self.max_passage_tokens = budget if max_passage_tokens is None else max_passage_tokens

    def fit(self, passage: str) -> tuple[str, bool]:
        """The passage as sent (cut to the token budget at a word) and whether it was cut."""
        return truncate_to_tokens(passage, self.max_passage_tokens or None)

    def cached(self, key: CacheKey) -> CachedJudgment | None:
        """The cached answer this judge would reuse for ``key``, if any."""
        if self.fresh or self.cache is None:
            return None
        found = self.cache.get(key)
        if found is not None and found.label is None and self.retry_nulls:
            return None
        return found

    def key(self, query: str, passage: str) -> CacheKey:
        return CacheKey(
            provider=self.provider.name,
            model=self.provider.model,
            template_hash=self.template.hash,
            query_hash=text_hash(query),
            doc_hash=text_hash(self.fit(passage)[0]),  # the text sent decides the answer
        )

    def judge(
        self, query: str, passage: str, *, query_id: str = "", doc_id: str = "", title: str = ""
    ) -> Judgment:
        """Label one pair; raises ProviderCallError when the provider cannot answer."""
        key = self.key(query, passage)
        sent, truncated = self.fit(passage)
        cached = self.cached(key)
        if cached is None:
            prompt = self.template.render(
                query=query, passage=sent, title=title, query_id=query_id, doc_id=doc_id
            )
            done = self.provider.complete(prompt, system=self.template.system)
            parsed = parse_label(done.text, self.template.min_label, self.template.max_label)
            cached = CachedJudgment.answered(done, parsed.label, parsed.reason, parsed.rationale)
            if self.cache is not None:
                self.cache.put(key, cached)
            log.debug("judged %s/%s: %r -> %s", query_id, doc_id, done.text, parsed.label)
            from_cache = False
        else:
            from_cache = True
        return judgment_from(
            key,
            cached,
            query_id=query_id,
            doc_id=doc_id,
            from_cache=from_cache,
            passage_truncated=truncated,
            passage_tokens=estimate_tokens(passage),
        )


# -- dry run ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Estimate:
    """What a run would do: calls to pay for and their estimated tokens and cost."""

    pairs: int
    already_done: int  # in the output file already
    cached: int
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    model: str
    truncated: int = 0  # pool passages longer than the token budget (cut when sent)
    max_passage_tokens: int | None = None
    in_batches: int = 0  # waiting in the output folder's batches (not asked again)


def estimate(
    pool: Pool,
    judge: RelevanceJudge,
    settings: JudgeSettings,
    out_dir: str | os.PathLike[str] | None = None,
) -> Estimate:
    """Count the calls a run would pay for (cache and checkpoint honoured); spends nothing."""
    require_query_text(pool)
    done = set()
    waiting: dict[tuple[str, str, str], str] = {}
    if out_dir and not judge.fresh:
        done = _done_keys(Path(out_dir) / JUDGMENTS_FILE, skip_nulls=judge.retry_nulls)
        waiting = pending_in(out_dir)
    cached = calls = tin = 0
    skipped = in_batches = 0
    for e in pool.entries:
        key = judge.key(e.query, e.text)
        if (e.query_id, e.doc_id, key.digest) in done:
            skipped += 1
            continue
        if (e.query_id, e.doc_id, key.digest) in waiting:
            in_batches += 1
            continue
        if judge.cached(key) is not None:
            cached += 1
            continue
        calls += 1
        prompt = judge.template.render(
            query=e.query,
            passage=judge.fit(e.text)[0],
            title=e.title,
            query_id=e.query_id,
            doc_id=e.doc_id,
        )
        tin += estimate_tokens((judge.template.system or "") + prompt)
    tout = calls * settings.expected_output_tokens
    meter = UsageMeter(settings)
    cost = meter.cost_of(judge.provider.model, tin, tout)
    truncated = sum(1 for e in pool.entries if judge.fit(e.text)[1])
    return Estimate(
        len(pool),
        skipped,
        cached,
        calls,
        tin,
        tout,
        cost,
        judge.provider.model,
        truncated,
        judge.max_passage_tokens or None,
        in_batches,
    )


# -- running over a pool ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JudgeRunSummary:
    pairs: int
    resumed: int  # already in judgments.jsonl before this run
    judged: int  # new rows written by this run
    from_cache: int
    paid_calls: int
    labels: dict[str, int]  # label -> count over the whole output ("null" for None)
    failed: tuple[tuple[str, str, str], ...]  # (query_id, doc_id, error) not judged
    usage: UsageTotals  # this run's paid calls
    out_dir: str
    #: every paid call of every run into out_dir (resumed runs, nulls asked again)
    spent: UsageTotals | None = None
    retried_nulls: int = 0  # null rows of earlier runs asked again (--retry-nulls)
    concurrency: int = 1  # calls in flight asked for
    concurrency_lowest: int = 1  # the lowest it was lowered to after timeouts
    #: ``judge --batch``: the folder's batches and their requests after this run
    batch: BatchProgress | None = None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["failed"] = [list(f) for f in self.failed]
        return d


def _done_keys(path: Path, *, skip_nulls: bool = False) -> set[tuple[str, str, str]]:
    """(query_id, doc_id, cache digest) of the rows already in a judgments file (without the
    rows that gave no label, with ``skip_nulls``)."""
    return _row_keys(_read_rows(path), skip_nulls=skip_nulls)


def _row_keys(
    rows: Iterable[dict[str, Any]], *, skip_nulls: bool = False
) -> set[tuple[str, str, str]]:
    keys: set[tuple[str, str, str]] = set()
    for row in rows:
        if skip_nulls and row.get("label") is None:
            continue
        key = CacheKey(
            row["provider"], row["model"], row["template_hash"], row["query_hash"], row["doc_hash"]
        )
        keys.add((row["query_id"], row["doc_id"], key.digest))
    return keys


def _read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a judgments file; a half-written last line (a killed run) is left out."""
    if not path.exists():
        return []
    return [row for _, row in iter_jsonl(path, partial_tail=True)]


def _drop_null_rows(path: Path) -> int:
    """Move the null-label rows of a judgments file (to be asked again) to
    ``judgments.superseded.jsonl``, which keeps what they cost; returns how many moved.

    The moved rows are appended and flushed there before the judgments file is replaced
    (atomically): a kill leaves the old or the new file, and a row in both is counted once.
    """
    rows = _read_rows(path)
    kept = [r for r in rows if r.get("label") is not None]
    moved = [r for r in rows if r.get("label") is None]
    if not moved:
        return 0
    with (path.parent / SUPERSEDED_FILE).open("a", encoding="utf-8") as f:
        for r in moved:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept))
    return len(moved)


def spent_in(out_dir: str | os.PathLike[str], settings: JudgeSettings) -> UsageTotals:
    """What every run into ``out_dir`` paid for: the rows not taken from the cache, in
    ``judgments.jsonl`` and ``judgments.superseded.jsonl`` (null answers asked again)."""
    out = Path(out_dir)
    return _spent(_read_rows(out / JUDGMENTS_FILE), _read_rows(out / SUPERSEDED_FILE), settings)


def _spent(
    rows: Iterable[dict[str, Any]], superseded: Iterable[dict[str, Any]], settings: JudgeSettings
) -> UsageTotals:
    seen: set[str] = set()
    meter = UsageMeter(settings)
    for part in (rows, superseded):
        for row in part:
            ident = json.dumps(row, sort_keys=True)
            if row.get("cached") or ident in seen:
                continue
            seen.add(ident)
            meter.record(
                str(row.get("model", "")),
                int(row.get("input_tokens") or 0),
                int(row.get("output_tokens") or 0),
                row.get("cost_usd"),
            )
    return meter.totals()


def _repair_tail(path: Path) -> None:
    """Cut a half-written last line (a run killed mid-write) so appends start clean."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
        f.seek(0)
        data = f.read()
        f.truncate(data.rfind(b"\n") + 1)


def judge_pool(
    pool: Pool,
    judge: RelevanceJudge,
    out_dir: str | os.PathLike[str],
    *,
    concurrency: int = 4,
    progress: Callable[[int, int, Judgment | None], None] | None = None,
) -> JudgeRunSummary:
    """Judge every pool entry not yet in ``out_dir/judgments.jsonl``; write qrels and summary.

    Fatal provider errors (bad key, unknown model) stop the run and are raised; other failures
    after all retries are reported in the summary and left for the next run.
    """
    require_query_text(pool)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    jpath = out / JUDGMENTS_FILE
    if judge.fresh and jpath.exists():
        jpath.unlink()
    _repair_tail(jpath)
    retried_nulls = _drop_null_rows(jpath) if judge.retry_nulls else 0
    earlier = _read_rows(jpath)
    done = _row_keys(earlier)
    # Pairs in this folder's batches are answered (and paid) there: not asked again here.
    waiting = {} if judge.fresh else pending_in(out)
    todo: list[PoolEntry] = []
    failed: list[tuple[str, str, str]] = []
    resumed = 0
    for e in pool.entries:
        ident = (e.query_id, e.doc_id, judge.key(e.query, e.text).digest)
        if ident in done:
            resumed += 1
        elif ident in waiting:
            failed.append(
                (
                    e.query_id,
                    e.doc_id,
                    f"waiting in a batch of {out} (request {waiting[ident]}); collect it with "
                    f"`rankscope judge --batch --resume {out}`",
                )
            )
        else:
            todo.append(e)
    meter_before = judge.provider.meter.totals().calls
    judge.provider.concurrency.reset(concurrency)
    workers = max(1, concurrency)
    written = cached = 0
    total = len(todo)
    finished = 0
    new_rows: list[dict[str, Any]] = []

    with (
        jpath.open("a", encoding="utf-8") as sink,
        ThreadPoolExecutor(max_workers=workers) as pool_exec,
    ):
        # Finished calls are handed to this thread through a queue (in completion order): one
        # hand-off per call, where waiting on the set of pending futures costs a pass over all
        # of them per completion.
        done_queue: queue.SimpleQueue[Future[Judgment]] = queue.SimpleQueue()
        futures: dict[Future[Judgment], PoolEntry] = {}
        entries = iter(todo)

        def submit_more() -> None:
            # Keep a bounded window in flight so a fatal error stops new calls quickly.
            while len(futures) < workers * 2:
                e = next(entries, None)
                if e is None:
                    return
                fut = pool_exec.submit(
                    judge.judge,
                    e.query,
                    e.text,
                    query_id=e.query_id,
                    doc_id=e.doc_id,
                    title=e.title,
                )
                futures[fut] = e
                fut.add_done_callback(done_queue.put)

        submit_more()
        fatal: ProviderCallError | None = None
        preloading = False
        try:
            while futures:
                fut = done_queue.get()
                if not preloading:  # the SDK is loaded and the calls now mostly wait
                    preloading = True
                    _preload(OUTPUT_MODULES)
                e = futures.pop(fut)
                if fut.cancelled():
                    continue
                try:
                    j = fut.result()
                except ProviderCallError as err:
                    if err.fatal:
                        fatal = fatal or err
                    failed.append((e.query_id, e.doc_id, str(err)))
                    finished += 1
                    if progress:
                        progress(finished, total, None)
                    continue
                # The answer is in the cache (committed) before its row is written and counted.
                row = j.to_json()
                sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                sink.flush()
                new_rows.append(row)
                written += 1
                cached += j.cached
                finished += 1
                if progress:
                    progress(finished, total, j)
                if fatal is None:
                    submit_more()
        except BaseException:  # Ctrl-C: drop queued pairs; calls in flight still finish
            for fut in futures:
                fut.cancel()
            raise
        if fatal is not None:
            raise fatal

    rows = earlier + new_rows
    summary = JudgeRunSummary(
        pairs=len(pool),
        resumed=resumed,
        judged=written,
        from_cache=cached,
        paid_calls=judge.provider.meter.totals().calls - meter_before,
        labels=_label_counts(rows),
        failed=tuple(failed),
        usage=judge.provider.meter.totals(),
        out_dir=str(out),
        spent=_spent(rows, _read_rows(out / SUPERSEDED_FILE), judge.provider.settings),
        retried_nulls=retried_nulls,
        concurrency=judge.provider.concurrency.maximum,
        concurrency_lowest=judge.provider.concurrency.lowest,
    )
    write_outputs(out, rows, summary)
    return summary


#: What writing the qrels imports (numpy, pyarrow, the writers): 0.2-0.3 s of CPU that
#: :func:`judge_pool` spends while its calls wait for answers, not after the last one.
OUTPUT_MODULES = ("rankscope.data.writers",)


def _preload(modules: Iterable[str]) -> None:
    """Import ``modules`` on a thread. A failure is left for the caller's own import to raise;
    the thread is not a daemon, so the interpreter never exits half-way through an import."""

    def load() -> None:
        for name in modules:
            with contextlib.suppress(Exception):
                importlib.import_module(name)

    threading.Thread(target=load, name="rankscope-preload").start()


def write_outputs(out: Path, rows: list[dict[str, Any]], summary: JudgeRunSummary) -> None:
    """``qrels.txt`` from the rows and ``summary.json`` (what every run writes at its end)."""
    write_qrels_trec(judgments_to_qrels(rows), out / QRELS_FILE)
    (out / SUMMARY_FILE).write_text(json.dumps(summary.to_json(), indent=2) + "\n")


def _label_counts(rows: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in rows:
        k = "null" if r.get("label") is None else str(r["label"])
        counts[k] = counts.get(k, 0) + 1
    return dict(sorted(counts.items()))


def judgments_to_qrels(rows: Iterable[dict[str, Any]], source: str | None = None) -> Qrels:
    """Qrels of the rows that got a label (null labels are left out: not judged)."""
    from rankscope.data import Qrels  # numpy, pyarrow: not for the judge's start

    data: dict[str, dict[str, int]] = {}
    for r in rows:
        if r.get("label") is not None:
            data.setdefault(str(r["query_id"]), {})[str(r["doc_id"])] = int(r["label"])
    return Qrels.from_dict(data, source=source)


def read_judgments(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Rows of a ``judgments.jsonl`` file (a half-written last line is ignored)."""
    return _read_rows(Path(path))


__all__ = [
    "JUDGMENTS_FILE",
    "QRELS_FILE",
    "SUMMARY_FILE",
    "SUPERSEDED_FILE",
    "Estimate",
    "JudgeRunSummary",
    "Judgment",
    "RelevanceJudge",
    "estimate",
    "judge_pool",
    "judgment_from",
    "judgments_to_qrels",
    "read_judgments",
    "spent_in",
    "write_outputs",
]
