"""Judging a pool through the providers' batch APIs: submit, poll, collect, submit again.

``submit_batches`` sends every pair not yet judged, not in the cache and not already waiting in
one of the folder's batches, as one request per distinct question (pairs with the same query
and passage text share a request, as they share a cache key). Before a batch is created, its
request lines are written to ``batches/NNNN-TOKEN.jsonl`` and the submission, its requests and
their pairs are recorded in ``batches.sqlite``; the batch id is recorded when the provider
answers. ``resume_batches`` polls the open batches, writes each answer to the judgment cache
before anything else, records what every request got, writes the rows of the answered pairs
to ``judgments.jsonl`` (as the synchronous path does), and submits again only the requests that
errored in a way worth retrying or expired, never one that was answered.

Why no pair is paid for twice, whatever is killed when:

- a request is submitted only when its pair is neither in ``judgments.jsonl`` nor in the cache
  nor pending in a batch of the folder, and the record of it is committed before the create
  call, so a rerun sees it pending;
- a create call whose answer is lost leaves the submission ``submitting``; nothing is submitted
  again until the provider has been asked whether the batch exists (:meth:`BatchAPI.find`);
- an answer goes to the cache (committed) before its request is marked answered, and rows are
  written from the cache for every answered request missing from ``judgments.jsonl``; results
  are collected again (free) after a kill, never paid again;
- only ``retry`` requests (errored with a retryable error, or expired) are submitted again, up
  to ``max_retries`` more times.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rankscope.errors import JudgeError
from rankscope.judge.batch_api import (
    BatchAPI,
    BatchInfo,
    SubmissionUnconfirmed,
    batch_api,
    chunk_lines,
)
from rankscope.judge.batch_store import (
    SUBMISSIONS_DIR,
    BatchProgress,
    BatchSetup,
    BatchStore,
    PairRef,
    RequestRecord,
    RequestState,
    SubmissionRecord,
    custom_id_for,
    folder_lock,
)
from rankscope.judge.cache import CachedJudgment, CacheKey, JudgmentCache
from rankscope.judge.config import JudgeSettings
from rankscope.judge.judging import (
    JUDGMENTS_FILE,
    SUPERSEDED_FILE,
    JudgeRunSummary,
    Judgment,
    RelevanceJudge,
    _label_counts,
    _read_rows,
    _repair_tail,
    _row_keys,
    _spent,
    judgment_from,
    write_outputs,
)
from rankscope.judge.limits import UsageMeter, UsageTotals, estimate_tokens
from rankscope.judge.pool import Pool, require_query_text
from rankscope.judge.prompts import parse_label
from rankscope.judge.providers import Provider, ProviderCallError
from rankscope.util.files import atomic_write_json, atomic_write_text

log = logging.getLogger("rankscope.judge.batch")

VIEW_FILE = "batches.json"


# -- planning ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Todo:
    key: CacheKey
    prompt: str
    pairs: list[PairRef]


@dataclass(frozen=True, slots=True)
class BatchPlan:
    """What a submission would do: pairs skipped and why, requests to send, their cost."""

    pairs: int
    already_done: int  # in judgments.jsonl
    cached: int  # answered by the cache: written at once, never submitted
    in_batches: int  # waiting in the folder's batches already
    requests: int  # requests to submit (one per distinct question)
    request_pairs: int  # the pairs they answer
    batches: int  # batches they need (the provider's caps)
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # at the batch price
    list_cost_usd: float | None  # the same calls at the list price
    price_factor: float
    model: str
    truncated: int = 0
    _cached_rows: tuple[Judgment, ...] = field(default=(), repr=False)
    _todo: tuple[tuple[str, _Todo], ...] = field(default=(), repr=False)
    _more_pairs: tuple[tuple[str, PairRef], ...] = field(default=(), repr=False)


def setup_of(judge: RelevanceJudge) -> BatchSetup:
    p = judge.provider
    return BatchSetup(
        provider=p.name,
        kind=p.kind,
        model=p.model,
        base_url=getattr(p, "base_url", None),
        template_hash=judge.template.hash,
        min_label=judge.template.min_label,
        max_label=judge.template.max_label,
    )


def plan_batches(
    pool: Pool, judge: RelevanceJudge, out_dir: str | os.PathLike[str] | None
) -> BatchPlan:
    """What ``submit_batches`` would send (reads the folder, when there is one, and the cache;
    sends nothing)."""
    require_query_text(pool)
    if judge.fresh or judge.retry_nulls:
        raise JudgeError(
            "--fresh and --retry-nulls are not supported with --batch; judge those pairs "
            "without --batch"
        )
    settings = judge.provider.settings
    done: set[tuple[str, str, str]] = set()
    store = None
    if out_dir is not None:
        out = Path(out_dir)
        done = _row_keys(_read_rows(out / JUDGMENTS_FILE))
        store = BatchStore(out, create=False) if (out / "batches.sqlite").exists() else None
    try:
        if store is not None:
            store.ensure_setup(setup_of(judge))
        api = batch_api(judge.provider)
        already = cached = waiting = truncated = 0
        cached_rows: list[Judgment] = []
        todo: dict[str, _Todo] = {}
        more: list[tuple[str, PairRef]] = []
        for e in pool.entries:
            key = judge.key(e.query, e.text)
            sent, cut = judge.fit(e.text)
            truncated += cut
            if (e.query_id, e.doc_id, key.digest) in done:
                already += 1
                continue
            pair = PairRef(e.query_id, e.doc_id, cut, estimate_tokens(e.text))
            answer = judge.cached(key)
            if answer is not None:
                cached += 1
                cached_rows.append(_row(key, answer, pair, from_cache=True))
                continue
            cid = custom_id_for(key)
            record = store.request(cid) if store is not None else None
            if record is not None and record.state == "pending":
                waiting += 1
                more.append((cid, pair))  # its answer will be written for this pair too
                continue
            if cid in todo:
                todo[cid].pairs.append(pair)
                continue
            prompt = judge.template.render(
                query=e.query, passage=sent, title=e.title, query_id=e.query_id, doc_id=e.doc_id
            )
            todo[cid] = _Todo(key, prompt, [pair])
    finally:
        if store is not None:
            store.close()
    system = judge.template.system or ""
    tin = sum(estimate_tokens(system + t.prompt) for t in todo.values())
    tout = len(todo) * settings.expected_output_tokens
    meter = UsageMeter(settings)
    factor = settings.batch_price_factor
    lines = (api.line(cid, t.prompt, judge.template.system) for cid, t in todo.items())
    batches = sum(1 for _ in chunk_lines(lines, _max_requests(api, settings), api.max_bytes))
    return BatchPlan(
        pairs=len(pool),
        already_done=already,
        cached=cached,
        in_batches=waiting,
        requests=len(todo),
        request_pairs=sum(len(t.pairs) for t in todo.values()),
        batches=batches,
        input_tokens=tin,
        output_tokens=tout,
        cost_usd=meter.cost_of(judge.provider.model, tin, tout, price_factor=factor),
        list_cost_usd=meter.cost_of(judge.provider.model, tin, tout),
        price_factor=factor,
        model=judge.provider.model,
        truncated=truncated,
        _cached_rows=tuple(cached_rows),
        _todo=tuple(todo.items()),
        _more_pairs=tuple(more),
    )


def _max_requests(api: BatchAPI, settings: JudgeSettings) -> int:
    return min(api.max_requests, settings.batch_max_requests or api.max_requests)


def _row(
    key: CacheKey,
    answer: CachedJudgment,
    pair: PairRef,
    *,
    from_cache: bool,
    batch_id: str | None = None,
) -> Judgment:
    return judgment_from(
        key,
        answer,
        query_id=pair.query_id,
        doc_id=pair.doc_id,
        from_cache=from_cache,
        passage_truncated=pair.passage_truncated,
        passage_tokens=pair.passage_tokens,
        batch_id=batch_id,
    )


# -- submitting -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SubmitReport:
    plan: BatchPlan
    submitted: tuple[SubmissionRecord, ...]  # this run's batches
    summary: JudgeRunSummary


def submit_batches(
    pool: Pool,
    judge: RelevanceJudge,
    out_dir: str | os.PathLike[str],
    *,
    clock: Callable[[], float] = time.time,
) -> SubmitReport:
    """Submit the pool's pairs that are not judged, cached or waiting; returns once every
    batch id is recorded in the folder. Pairs answered by the cache are written at once."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with folder_lock(out), BatchStore(out) as store:
        store.ensure_setup(setup_of(judge))
        api = batch_api(judge.provider)
        if store.submissions("submitting"):
            _resolve_unconfirmed(store, api, out)
        jpath = out / JUDGMENTS_FILE
        _repair_tail(jpath)
        if judge.cache is not None:  # rows an interrupted collection had not written yet
            _write_answered_rows(store, judge.cache, jpath)
        plan = plan_batches(pool, judge, out)
        _append_rows(jpath, [j.to_json() for j in plan._cached_rows])
        for cid, pair in plan._more_pairs:
            store.add_pairs(cid, [pair])
        items = [
            (cid, t.key, api.line(cid, t.prompt, judge.template.system), t.pairs)
            for cid, t in plan._todo
        ]
        made = _submit(store, api, out, items, clock)
        summary = _finish(store, out, judge.provider, paid=0, rows_before=None)
    return SubmitReport(plan, tuple(made), summary)


def _submit(
    store: BatchStore,
    api: BatchAPI,
    out: Path,
    items: list[tuple[str, CacheKey, dict[str, Any], list[PairRef]]],
    clock: Callable[[], float],
) -> list[SubmissionRecord]:
    """Submit request lines in batches under the caps; each is recorded before its create."""
    by_id = {cid: (key, pairs) for cid, key, _, pairs in items}
    limit = _max_requests(api, api.provider.settings)
    made: list[SubmissionRecord] = []
    for chunk in chunk_lines((line for *_, line, _ in items), limit, api.max_bytes):
        number = store.next_number()
        token = uuid.uuid4().hex
        rel = f"{SUBMISSIONS_DIR}/{number:04d}-{token[:12]}.jsonl"
        _write_synced(out / rel, chunk)
        requests = [(line["custom_id"], *by_id[line["custom_id"]]) for line in chunk]
        store.begin_submission(number, token, rel, clock(), requests)
        _write_view(out, store)
        try:
            info = api.create(chunk, token)
        except SubmissionUnconfirmed as e:
            _write_view(out, store)
            raise JudgeError(
                f"{e}. Batch {number} is recorded as unconfirmed in {out}; run "
                f"`rankscope judge --batch --resume {out}`: it asks the provider whether the batch "
                f"exists before anything is submitted again"
            ) from None
        except ProviderCallError as e:
            retry = e.status in (408, 409, 429)
            store.abandon_submission(number, "retry" if retry else "failed", str(e))
            _write_view(out, store)
            raise
        store.confirm_submission(number, info.id, info.status)
        _write_view(out, store)
        log.info("submitted batch %s: %d requests (%s)", info.id, len(chunk), rel)
        made.extend(s for s in store.submissions() if s.number == number)
    return made


def _write_synced(path: Path, lines: list[dict[str, Any]]) -> None:
    atomic_write_text(path, "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))


def _resolve_unconfirmed(store: BatchStore, api: BatchAPI, out: Path) -> None:
    """Ask the provider about each submission whose create call's answer was lost."""
    for sub in store.submissions("submitting"):
        found = api.find(sub.token, sub.created_at, sub.requests)
        if len(found) == 1:
            store.confirm_submission(sub.number, found[0].id, found[0].status)
            log.warning("batch %d was made after all: %s", sub.number, found[0].id)
        elif not found:
            store.abandon_submission(
                sub.number, "retry", "its create call made no batch (none found at the provider)"
            )
            log.warning("batch %d was never made; its requests will be submitted again", sub.number)
        else:
            ids = ", ".join(f.id for f in found)
            raise JudgeError(
                f"batch {sub.number} of {out} ({sub.requests} requests) was submitted but its "
                f"id was lost, and {len(found)} batches at {api.name} could be it ({ids}); "
                f"cancel those that are not this folder's in the provider's console, then rerun"
            )
    _write_view(out, store)


# -- collecting -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PollEvent:
    """One poll of one batch, for progress output."""

    number: int
    batch_id: str
    status: str
    ended: bool
    counts: dict[str, int]


def resume_batches(
    out_dir: str | os.PathLike[str],
    provider: Provider,
    cache: JudgmentCache,
    *,
    wait: bool = True,
    poll_interval: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
    progress: Callable[[PollEvent], None] | None = None,
) -> JudgeRunSummary:
    """Poll the folder's batches, collect those that ended, submit again the requests that
    errored (retryably) or expired; with ``wait``, until no batch is open."""
    out = Path(out_dir)
    settings = provider.settings
    interval = poll_interval if poll_interval is not None else settings.batch_poll_interval_s
    with folder_lock(out), BatchStore(out, create=False) as store:
        setup = store.setup()
        if setup is None:
            raise JudgeError(f"{out} has no batches to resume")
        if (provider.name, provider.model) != (setup.provider, setup.model):
            raise JudgeError(
                f"the batches of {out} were made with {setup.provider} {setup.model}, not "
                f"{provider.name} {provider.model}"
            )
        api = batch_api(provider)
        if store.submissions("submitting"):
            _resolve_unconfirmed(store, api, out)
        jpath = out / JUDGMENTS_FILE
        _repair_tail(jpath)
        rows_before = len(_read_rows(jpath))
        paid = 0
        while True:
            for sub in store.submissions("submitted"):
                assert sub.batch_id is not None
                info = api.retrieve(sub.batch_id)
                store.update_status(sub.number, info.status, info.counts)
                if progress is not None:
                    progress(PollEvent(sub.number, info.id, info.status, info.ended, info.counts))
                if info.ended:
                    paid += _collect(store, api, cache, provider, setup, out, sub, info)
                    _write_view(out, store)
            _write_answered_rows(store, cache, jpath)
            _resubmit(store, api, out, clock)
            if not wait or not store.submissions("submitted", "submitting"):
                break
            sleep(interval)
        return _finish(store, out, provider, paid=paid, rows_before=rows_before)


def _collect(
    store: BatchStore,
    api: BatchAPI,
    cache: JudgmentCache,
    provider: Provider,
    setup: BatchSetup,
    out: Path,
    sub: SubmissionRecord,
    info: BatchInfo,
) -> int:
    """Cache the answers of an ended batch and record what each request got; returns the
    answers newly paid for (an answer cached by an earlier, interrupted collection is not)."""
    sent = {line["custom_id"]: line for line in _read_lines(out / sub.file)}
    waiting = {r.custom_id: r for r in store.requests_of(sub.number) if r.state == "pending"}
    factor = provider.settings.batch_price_factor
    outcomes: dict[str, tuple[RequestState, str | None]] = {}
    paid = 0
    for result in api.results(info, sent):
        record = waiting.get(result.custom_id)
        if record is None:  # not ours, or recorded already
            continue
        if result.kind == "succeeded" and result.answer is not None:
            if cache.get(record.key) is None:
                a = result.answer
                parsed = parse_label(a.text, setup.min_label, setup.max_label)
                cost = provider.meter.add(
                    provider.model, a.input_tokens, a.output_tokens, price_factor=factor
                )
                cache.put(
                    record.key,
                    CachedJudgment.answered(
                        a, parsed.label, parsed.reason, parsed.rationale, cost_usd=cost
                    ),
                )
                paid += 1
            outcomes[result.custom_id] = ("answered", None)
        elif result.kind == "expired" or (result.kind == "errored" and result.retryable):
            outcomes[result.custom_id] = ("retry", result.error)
        elif result.kind == "errored":
            outcomes[result.custom_id] = ("failed", result.error)
        else:
            outcomes[result.custom_id] = ("canceled", result.error)
    for cid in waiting.keys() - outcomes.keys():  # no line in the results
        if info.status == "cancelled":
            outcomes[cid] = ("canceled", "the batch was cancelled")
        elif info.status == "failed":
            outcomes[cid] = ("failed", f"the batch failed: {info.failure}")
        else:
            outcomes[cid] = ("retry", f"no result in batch {info.id} ({info.status})")
    store.finish_collection(sub.number, outcomes)
    counts: dict[str, int] = {}
    for state, _ in outcomes.values():
        counts[state] = counts.get(state, 0) + 1
    log.info("collected batch %s: %s", info.id, counts)
    return paid


def _write_answered_rows(store: BatchStore, cache: JudgmentCache, jpath: Path) -> int:
    """Append a row for every pair of an answered request that ``judgments.jsonl`` lacks, from
    the cache (the first pair of a request carries its cost; the others share the answer)."""
    done = _row_keys(_read_rows(jpath))
    batch_ids = {s.number: s.batch_id for s in store.submissions()}
    rows: list[dict[str, Any]] = []
    for record in store.requests("answered"):
        answer = cache.get(record.key)
        if answer is None:
            log.warning("request %s is answered but its answer is not in the cache %s",
                        record.custom_id, cache.path)  # fmt: skip
            continue
        batch_id = batch_ids.get(record.submission) if record.submission else None
        for n, pair in enumerate(store.pairs(record.custom_id)):
            if (pair.query_id, pair.doc_id, record.key.digest) in done:
                continue
            row = _row(record.key, answer, pair, from_cache=n > 0, batch_id=batch_id)
            rows.append(row.to_json())
    _append_rows(jpath, rows)
    return len(rows)


def _resubmit(store: BatchStore, api: BatchAPI, out: Path, clock: Callable[[], float]) -> None:
    """Submit again the requests that errored retryably or expired, within ``max_retries``."""
    retry = store.requests("retry")
    if not retry:
        return
    limit = api.provider.settings.max_retries + 1
    spent = [r for r in retry if r.attempts >= limit]
    if spent:
        store.give_up(
            (r.custom_id for r in spent),
            f"gave up after {limit} batches (last error: {spent[0].error})",
        )
    again = [r for r in retry if r.attempts < limit]
    if not again:
        return
    lines = _lines_of(store, out, again)
    no_pairs: list[PairRef] = []  # their pairs are recorded already
    items = [
        (r.custom_id, r.key, lines[r.custom_id], no_pairs) for r in again if r.custom_id in lines
    ]
    missing = [r.custom_id for r in again if r.custom_id not in lines]
    if missing:
        store.give_up(missing, "its request line is missing from the folder's batch files")
    log.info("submitting %d requests again (errored or expired)", len(items))
    _submit(store, api, out, items, clock)


def _lines_of(store: BatchStore, out: Path, records: list[RequestRecord]) -> dict[str, Any]:
    """The request lines last submitted for ``records``, from the folder's batch files."""
    files = {s.number: s.file for s in store.submissions()}
    wanted: dict[int, set[str]] = {}
    for r in records:
        if r.submission is not None:
            wanted.setdefault(r.submission, set()).add(r.custom_id)
    found: dict[str, Any] = {}
    for number, ids in wanted.items():
        path = out / files[number]
        if not path.exists():
            continue
        for line in _read_lines(path):
            if line.get("custom_id") in ids:
                found[line["custom_id"]] = line
    return found


def _read_lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        for text in f:
            if text.strip():
                yield json.loads(text)


def _append_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    with path.open("a", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


def _finish(
    store: BatchStore, out: Path, provider: Provider, *, paid: int, rows_before: int | None
) -> JudgeRunSummary:
    """Write qrels.txt and summary.json from the folder's rows and batch record."""
    rows = _read_rows(out / JUDGMENTS_FILE)
    before = len(rows) if rows_before is None else rows_before
    failed = store.failed_pairs()
    pairs = {(str(r["query_id"]), str(r["doc_id"])) for r in rows} | store.pair_ids()
    summary = JudgeRunSummary(
        pairs=len(pairs),
        resumed=before,
        judged=len(rows) - before,
        from_cache=0,
        paid_calls=paid,
        labels=_label_counts(rows),
        failed=tuple(failed),
        usage=provider.meter.totals(),
        out_dir=str(out),
        spent=_spent(rows, _read_rows(out / SUPERSEDED_FILE), provider.settings),
        batch=store.progress(),
    )
    write_outputs(out, rows, summary)
    return summary


# -- status -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BatchStatus:
    """Where a folder's batch judging stands (``rankscope judge --batch --status``)."""

    out_dir: str
    setup: BatchSetup
    progress: BatchProgress
    submissions: tuple[SubmissionRecord, ...]
    judged_pairs: int  # rows in judgments.jsonl
    spent: UsageTotals
    failed: tuple[tuple[str, str, str], ...]  # (query_id, doc_id, why) of failed requests


def batch_setup(out_dir: str | os.PathLike[str]) -> BatchSetup:
    """The provider, model and prompt a folder's batches were made with."""
    with BatchStore(out_dir, create=False) as store:
        setup = store.setup()
    if setup is None:
        raise JudgeError(f"{out_dir} has no batches")
    return setup


def batch_status(
    out_dir: str | os.PathLike[str],
    provider: Provider | None = None,
    settings: JudgeSettings | None = None,
) -> BatchStatus:
    """The folder's batches as recorded; with ``provider``, each open batch is polled once
    first (its answers are not collected: ``resume_batches`` does that)."""
    out = Path(out_dir)
    with BatchStore(out, create=False) as store:
        setup = store.setup()
        if setup is None:
            raise JudgeError(f"{out} has no batches")
        if provider is not None:
            api = batch_api(provider)
            for sub in store.submissions("submitted"):
                assert sub.batch_id is not None
                info = api.retrieve(sub.batch_id)
                store.update_status(sub.number, info.status, info.counts)
        rows = _read_rows(out / JUDGMENTS_FILE)
        failed = tuple(store.failed_pairs())
        conf = settings or (provider.settings if provider is not None else JudgeSettings())
        return BatchStatus(
            out_dir=str(out),
            setup=setup,
            progress=store.progress(),
            submissions=tuple(store.submissions()),
            judged_pairs=len(rows),
            spent=_spent(rows, _read_rows(out / SUPERSEDED_FILE), conf),
            failed=failed,
        )


def _write_view(out: Path, store: BatchStore) -> None:
    """``batches.json``: a readable copy of the batch ids and states (``batches.sqlite`` is the
    record rankscope reads)."""
    setup = store.setup()
    atomic_write_json(
        out / VIEW_FILE,
        {
            "provider": setup.provider if setup else None,
            "model": setup.model if setup else None,
            "batches": [
                {
                    "number": s.number,
                    "batch_id": s.batch_id,
                    "state": s.state,
                    "status": s.status,
                    "requests": s.requests,
                    "counts": s.counts,
                    "file": s.file,
                    "submitted_at": s.created_at,
                    "note": s.note,
                }
                for s in store.submissions()
            ],
            "requests": store.state_counts(),
        },
    )


__all__ = [
    "VIEW_FILE",
    "BatchPlan",
    "BatchStatus",
    "PollEvent",
    "SubmitReport",
    "batch_setup",
    "batch_status",
    "plan_batches",
    "resume_batches",
    "setup_of",
    "submit_batches",
]
