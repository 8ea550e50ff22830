"""Commands that get judgments: ``pool``, ``judge``, ``qrels import``, ``agree``.

``needle`` lives in :mod:`rankscope.cli.needle`; options shared with it in
:mod:`rankscope.cli.options`.
"""

from __future__ import annotations

import atexit
import gc
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer

if TYPE_CHECKING:
    from rankscope.judge.batch import BatchPlan, BatchStatus
    from rankscope.judge.config import JudgeSettings
    from rankscope.judge.judging import RelevanceJudge
    from rankscope.judge.pool import Pool

from rankscope.cli.options import (
    Alias,
    ApiKeyEnvOption,
    BaseUrlOption,
    DryRunOption,
    Format,
    JudgeConfigOption,
    ModelOption,
    VerboseOption,
    aliases,
    echo_err,
    fmt,
    money,
    setup_logging,
)
from rankscope.errors import InputError, JudgeError

# What a command runs on is imported inside it: every command module loads at start-up
# (cli/app.py), and numpy, pyarrow, pydantic and the rest only with the command that runs.


@aliases(Alias("-d", "depth", "-M/--depth"))
def pool_command(
    runs: list[Path] = typer.Argument(
        ..., metavar="RUN", help="Run files (TREC or any format rankscope reads)."
    ),
    depth: int = typer.Option(
        20, "--depth", "-M", metavar="N", help="Top N documents taken from each run."
    ),
    queries: Path | None = typer.Option(
        None,
        "--queries",
        metavar="FILE",
        help="Query texts: BEIR queries.jsonl, or a TSV of id<TAB>text.",
    ),
    corpus: Path | None = typer.Option(
        None, "--corpus", metavar="FILE", help="BEIR corpus.jsonl (title and text)."
    ),
    query_ids: str | None = typer.Option(
        None,
        "--query-ids",
        metavar="IDS",
        help="Comma-separated query ids to pool (default: all).",
    ),
    max_queries: int | None = typer.Option(
        None,
        "--max-queries",
        metavar="N",
        help="Pool only the first N query ids (numeric ids in numeric order).",
    ),
    out: Path = typer.Option(
        ..., "--out", "-o", metavar="FILE", help="Pool file: .jsonl, .csv or .yaml."
    ),
    ids_only: bool = typer.Option(
        False,
        "--ids-only",
        help="Write a pool without query texts (for counting; it cannot be judged as it is).",
    ),
) -> None:
    """Depth-k pool over runs, de-duplicated, with provenance, for annotation or judging."""
    from rankscope.judge.io import load_run, read_corpus, read_queries
    from rankscope.judge.pool import build_pool, pool_stats, select_query_ids, write_pool

    if queries is None and not ids_only:
        # runs carry no query text, and neither a judge nor an annotator can label without it
        raise InputError(
            "no query texts: run files hold only query ids, and a pool without the texts "
            "cannot be judged",
            hint="pass --queries queries.jsonl (BEIR) or a TSV of id<TAB>text, or --ids-only "
            "to write a pool of ids on purpose",
        )
    loaded = [load_run(p) for p in runs]  # build_pool names runs that share a tag by file
    qtext = read_queries(queries) if queries else None
    docs = read_corpus(corpus) if corpus else None
    given = [q.strip() for q in query_ids.split(",") if q.strip()] if query_ids else None
    wanted = select_query_ids(loaded, given, max_queries)
    pool = build_pool(loaded, depth, queries=qtext, corpus=docs, query_ids=wanted)
    stats = pool_stats(pool, qtext, docs)
    if stats.queries_without_text:
        missing = list(stats.queries_without_text)
        echo_err(f"warning: {len(missing)} pooled query id(s) not in {queries}: {missing[:5]}")
    if stats.docs_without_text:
        echo_err(
            f"warning: {stats.docs_without_text} pooled doc id(s) not in {corpus}; "
            f"their text is empty"
        )
    fmt_name = write_pool(pool, out)
    typer.echo(
        f"pooled {stats.pairs} (query, doc) pairs from {len(loaded)} run(s) at depth {depth}: "
        f"{stats.queries} queries, {stats.mean_per_query:.1f} docs per query on average"
    )
    for run in stats.runs:
        typer.echo(f"  {run.name}: {run.pairs} pairs, {run.unique} found by this run only")
    typer.echo(f"wrote {fmt_name} pool to {out}")


@aliases(
    Alias("--min-label", "min_grade", "--min-grade"),
    Alias("--max-label", "max_grade", "--max-grade"),
    Alias("--cache", "cache_path", "--cache-path"),
)
def judge_command(
    pool_file: Path | None = typer.Argument(
        None,
        metavar="POOL",
        help="Pool file from `rankscope pool` (with --batch --resume/--status: the output "
        "folder, if --out is not given).",
    ),
    provider: str | None = typer.Option(
        None,
        "--provider",
        metavar="NAME",
        help="anthropic (default), openai, or one from the config; with --batch on a folder "
        "that has batches, theirs.",
    ),
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    price_in: float | None = typer.Option(
        None,
        "--price-in",
        metavar="USD",
        min=0,
        help="USD per million input tokens, for the cost reports (needed with --price-out). "
        "Without it a server other than the provider's own API (--base-url) is not priced: "
        "its cost shows as unknown.",
        show_default=False,
    ),
    price_out: float | None = typer.Option(
        None,
        "--price-out",
        metavar="USD",
        min=0,
        help="USD per million output tokens (with --price-in).",
        show_default=False,
    ),
    template: Path | None = typer.Option(
        None, "--template", metavar="FILE", help="Prompt template with {query}, {passage}."
    ),
    min_grade: int = typer.Option(
        0, "--min-grade", metavar="N", help="Lowest grade of the template's scale."
    ),
    max_grade: int = typer.Option(
        3, "--max-grade", metavar="N", help="Highest grade of the template's scale."
    ),
    config: JudgeConfigOption = None,
    cache_path: Path | None = typer.Option(
        None,
        "--cache-path",
        metavar="FILE",
        help="The judgment cache (SQLite; judge always caches).",
        show_default="$RANKSCOPE_CACHE_DIR/judgments.sqlite",
    ),
    corpus: Path | None = typer.Option(
        None, "--corpus", metavar="FILE", help="BEIR corpus.jsonl for texts not in the pool."
    ),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        metavar="N",
        help="Calls in flight at most (default from config; halved on timeouts).",
    ),
    dry_run: DryRunOption = False,
    fresh: bool = typer.Option(False, "--fresh", help="Ignore the cache and earlier output."),
    retry_nulls: bool = typer.Option(
        False,
        "--retry-nulls",
        help="Ask again only where an earlier answer gave no label; answered pairs are kept.",
    ),
    max_passage_tokens: int | None = typer.Option(
        None,
        "--max-passage-tokens",
        metavar="N",
        help="Cut longer passages to N tokens (4 characters each; default 2000, from the "
        "config; 0 sends them whole).",
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", metavar="DIR", help="Output folder (required, except with --dry-run)."
    ),
    batch: bool = typer.Option(
        False,
        "--batch",
        help="Use the provider's batch API (half the price, results within 24 h): submit, "
        "record the batch ids in the output folder, and return.",
    ),
    resume: bool = typer.Option(
        False,
        "--resume",
        help="With --batch: poll the folder's batches, collect what finished, submit again "
        "what errored or expired.",
    ),
    status: bool = typer.Option(
        False, "--status", help="With --batch: show the folder's batches and requests."
    ),
    wait: bool = typer.Option(
        True,
        "--wait/--no-wait",
        help="With --batch --resume: poll until every batch has ended (default), or once.",
    ),
    poll_interval: float | None = typer.Option(
        None,
        "--poll-interval",
        metavar="SECONDS",
        min=0.0,
        help="Seconds between polls (default: batch_poll_interval_s, 60).",
    ),
    verbose: VerboseOption = 0,
) -> None:
    """Label a pool 0–3 with an LLM; writes judgments.jsonl, qrels.txt and summary.json.

    A rerun resumes: pairs already in the output folder are kept and answers in the judgment
    cache are not paid again (--fresh asks every pair again).
    """
    from rankscope.judge.cache import JudgmentCache, default_cache_path
    from rankscope.judge.config import Price, load_settings
    from rankscope.judge.io import read_corpus
    from rankscope.judge.judging import RelevanceJudge, estimate, judge_pool
    from rankscope.judge.pool import read_pool
    from rankscope.judge.prompts import DEFAULT_TEMPLATE, PromptTemplate
    from rankscope.judge.providers import make_provider

    setup_logging(verbose)
    settings = load_settings(config)
    if resume or status:
        if not batch:
            raise InputError("--resume and --status go with --batch", hint="add --batch")
        folder = out or pool_file
        if folder is None:
            raise InputError("which output folder?", hint="pass --out DIR (or DIR alone)")
        _batch_folder(
            folder,
            status_only=status,
            provider=provider,
            model=model,
            base_url=base_url,
            api_key_env=api_key_env,
            settings=settings,
            cache=cache_path,
            wait=wait,
            poll_interval=poll_interval,
        )
        return
    if pool_file is None:
        raise InputError("no pool file given", hint="rankscope judge POOL --out DIR")
    if out is None and not dry_run:
        raise InputError("no output folder given", hint="pass --out DIR")
    if (
        batch
        and provider is None
        and model is None
        and out is not None
        and (out / "batches.sqlite").exists()
    ):
        from rankscope.judge.batch import batch_setup

        known = batch_setup(out)  # more pairs for a folder's batches: the same provider
        provider, model = known.provider, known.model
        base_url = base_url or known.base_url
    provider = provider or "anthropic"
    pool = read_pool(pool_file, read_corpus(corpus) if corpus else None)
    if template is not None:
        tmpl = PromptTemplate.from_file(template, min_grade, max_grade)
    else:
        tmpl = PromptTemplate(DEFAULT_TEMPLATE, min_grade, max_grade)
    if fresh and retry_nulls:
        raise InputError(
            "--fresh asks every pair again; --retry-nulls only those without a label",
            hint="pass one of them",
        )
    if (price_in is None) != (price_out is None):
        raise InputError(
            "--price-in and --price-out go together", hint="give both (USD per million tokens)"
        )
    price = (
        None if price_in is None or price_out is None else Price(input=price_in, output=price_out)
    )
    prov = make_provider(
        provider,
        model,
        settings,
        base_url=base_url,
        api_key_env=api_key_env,
        dry_run=dry_run,
        price=price,
    )
    settings = prov.settings  # priced for the server the calls go to
    _skip_collection_at_exit()
    cache_path = cache_path or default_cache_path()
    with JudgmentCache(cache_path) as store:
        judge = RelevanceJudge(
            prov,
            tmpl,
            store,
            fresh=fresh,
            retry_nulls=retry_nulls,
            max_passage_tokens=max_passage_tokens,
        )
        if batch:
            _submit_batches(pool, judge, out, provider, dry_run=dry_run)
            return
        est = estimate(pool, judge, settings, out)
        done = f"{est.already_done} already in {out}, " if out is not None else ""
        typer.echo(
            f"{est.pairs} pairs: {done}{est.cached} cached, "
            f"{est.calls} calls to make to {provider} {est.model}"
        )
        typer.echo(
            f"estimated tokens: {est.input_tokens} in + {est.output_tokens} out; "
            f"estimated cost: {money(est.cost_usd)}"
        )
        if est.in_batches:
            typer.echo(
                f"{est.in_batches} pair(s) wait in the batches of {out}: not asked here (collect "
                f"them with `rankscope judge --batch --resume {out}`)"
            )
        if est.truncated:
            typer.echo(
                f"{est.truncated} passage(s) longer than {est.max_passage_tokens} tokens are cut "
                f"to their first {est.max_passage_tokens} (--max-passage-tokens; the judgments "
                f"record passage_truncated)"
            )
        if dry_run or out is None:
            typer.echo("dry run: nothing was sent")
            return
        total_todo = est.pairs - est.already_done
        step = max(1, total_todo // 20)

        def progress(done: int, total: int, j: object) -> None:
            if done % step == 0 or done == total:
                t = prov.meter.totals()
                echo_err(f"[{done}/{total}] paid calls {t.calls}, cost {money(t.cost_usd)}")

        summary = judge_pool(
            pool, judge, out, concurrency=concurrency or settings.concurrency, progress=progress
        )
    u = summary.usage
    typer.echo(
        f"judged {summary.judged} new pairs ({summary.from_cache} from cache, "
        f"{summary.paid_calls} paid calls); {summary.resumed} were already done"
    )
    if retry_nulls:
        typer.echo(f"asked again: {summary.retried_nulls} pair(s) that had no label")
    labels = ", ".join(f"{k}: {v}" for k, v in summary.labels.items())
    typer.echo(f"labels: {labels}")
    typer.echo(f"tokens: {u.input_tokens} in + {u.output_tokens} out; cost {money(u.cost_usd)}")
    if summary.spent is not None and summary.spent.calls != u.calls:
        t = summary.spent
        typer.echo(
            f"spent on {out} over all its runs: {t.calls} paid calls, {t.input_tokens} in + "
            f"{t.output_tokens} out; cost {money(t.cost_usd)}"
        )
    typer.echo(f"wrote {out}/judgments.jsonl, {out}/qrels.txt, {out}/summary.json")
    typer.echo(f"raw answers are also kept in the cache {cache_path}")
    if summary.concurrency_lowest < summary.concurrency:
        echo_err(
            f"note: calls timed out with {summary.concurrency} in flight, so rankscope lowered "
            f"it to {summary.concurrency_lowest}: the server answers fewer requests at once "
            f"(llama.cpp's server: one per slot). Next time pass --concurrency "
            f"{summary.concurrency_lowest}, or start the server with more slots."
        )
    if summary.failed:
        for q, d, why in summary.failed[:5]:
            echo_err(f"failed: query {q} doc {d}: {why}")
        echo_err(
            f"{len(summary.failed)} pair(s) failed after retries; rerun the same command to retry"
        )
        raise typer.Exit(1)


def _submit_batches(
    pool: Pool, judge: RelevanceJudge, out: Path | None, provider: str, *, dry_run: bool
) -> None:
    """``judge POOL --batch``: print the plan; unless a dry run, submit and record the ids."""
    from rankscope.judge.batch import plan_batches, submit_batches

    plan = plan_batches(pool, judge, out)
    _print_plan(plan, out, provider)
    if dry_run or out is None:
        typer.echo("dry run: nothing was sent")
        return
    report = submit_batches(pool, judge, out)
    for sub in report.submitted:
        typer.echo(f"submitted batch {sub.batch_id}: {sub.requests} requests ({sub.file})")
    p = report.summary.batch
    if p is not None and p.open_batches:
        typer.echo(
            f"{p.open_batches} batch(es) open in {out} ({p.pending} requests waiting); the "
            f"batch ids are in {out}/batches.json"
        )
        typer.echo(f"collect the answers with: rankscope judge --batch --resume {out}")
    else:
        typer.echo(f"nothing is waiting: {out}/judgments.jsonl holds every pair")


def _print_plan(plan: BatchPlan, out: Path | None, provider: str) -> None:
    done = (
        f"{plan.already_done} already in {out}, {plan.cached} cached, {plan.in_batches} "
        "waiting in its batches"
        if out is not None
        else f"{plan.cached} cached"
    )
    typer.echo(
        f"{plan.pairs} pairs: {done}; {plan.requests} requests ({plan.request_pairs} "
        f"pairs) to submit to {provider} {plan.model} in {plan.batches} batch(es)"
    )
    at_list = (
        "" if plan.list_cost_usd is None else f"; {money(plan.list_cost_usd)} at the list price"
    )
    typer.echo(
        f"estimated tokens: {plan.input_tokens} in + {plan.output_tokens} out; estimated cost: "
        f"{money(plan.cost_usd)} at the batch price ({plan.price_factor:.0%} of the list "
        f"price{at_list})"
    )
    if plan.truncated:
        typer.echo(
            f"{plan.truncated} passage(s) are cut to the token budget (--max-passage-tokens)"
        )


def _batch_folder(
    folder: Path,
    *,
    status_only: bool,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    settings: JudgeSettings,
    cache: Path | None,
    wait: bool,
    poll_interval: float | None,
) -> None:
    """``judge --batch --status DIR`` and ``judge --batch --resume DIR``."""
    from rankscope.judge.batch import PollEvent, batch_setup, batch_status, resume_batches
    from rankscope.judge.cache import JudgmentCache, default_cache_path
    from rankscope.judge.providers import make_provider

    setup = batch_setup(folder)
    try:
        prov = make_provider(
            provider or setup.provider,
            model or setup.model,
            settings,
            base_url=base_url or setup.base_url,
            api_key_env=api_key_env,
        )
    except JudgeError as e:
        if not status_only:
            raise
        # the record is still worth showing without a key: as of the last poll
        echo_err(f"not polled ({e}); the statuses are those of the last poll")
        _print_status(batch_status(folder, settings=settings))
        return
    if status_only:
        _print_status(batch_status(folder, prov))
        return

    def progress(event: PollEvent) -> None:
        counts = ", ".join(f"{k} {v}" for k, v in event.counts.items() if v)
        echo_err(f"batch {event.number} {event.batch_id}: {event.status} ({counts or 'no counts'})")

    _skip_collection_at_exit()
    cache_path = cache or default_cache_path()
    with JudgmentCache(cache_path) as store:
        summary = resume_batches(
            folder, prov, store, wait=wait, poll_interval=poll_interval, progress=progress
        )
    u = summary.usage
    typer.echo(
        f"collected {summary.paid_calls} answers ({u.input_tokens} in + {u.output_tokens} out "
        f"tokens; cost {money(u.cost_usd)} at the batch price); wrote {summary.judged} rows"
    )
    if summary.spent is not None:
        t = summary.spent
        typer.echo(
            f"spent on {folder} over all its runs: {t.calls} paid calls, {t.input_tokens} in + "
            f"{t.output_tokens} out; cost {money(t.cost_usd)}"
        )
    labels = ", ".join(f"{k}: {v}" for k, v in summary.labels.items())
    typer.echo(f"labels: {labels or 'none yet'}")
    p = summary.batch
    if p is not None:
        typer.echo(
            f"requests: {p.answered} answered, {p.pending} waiting in {p.open_batches} open "
            f"batch(es), {p.failed} failed, {p.canceled} canceled"
        )
    typer.echo(f"wrote {folder}/judgments.jsonl, {folder}/qrels.txt, {folder}/summary.json")
    for q, d, why in summary.failed[:5]:
        echo_err(f"failed: query {q} doc {d}: {why}")
    if summary.failed:
        echo_err(
            f"{len(summary.failed)} pair(s) failed; `rankscope judge POOL --batch --out {folder}` "
            f"submits them again"
        )
        raise typer.Exit(1)
    if p is not None and (p.open_batches or p.unconfirmed):
        typer.echo(f"batches still open: rerun `rankscope judge --batch --resume {folder}`")


def _print_status(st: BatchStatus) -> None:
    s, p = st.setup, st.progress
    typer.echo(f"{st.out_dir}: {s.provider} {s.model}, template {s.template_hash}")
    typer.echo(
        f"{p.batches} batch(es), {p.open_batches} open, {p.unconfirmed} unconfirmed; "
        f"{p.requests} requests for {p.pairs} pairs: {p.answered} answered, {p.pending} waiting, "
        f"{p.retry} to submit again, {p.failed} failed, {p.canceled} canceled"
    )
    typer.echo(f"{st.judged_pairs} rows in judgments.jsonl")
    width = max([len(sub.batch_id or "-") for sub in st.submissions] + [8])
    typer.echo(f"  #  {'batch':<{width}}  {'state':<10}  {'status':<11}  requests  counts")
    for sub in st.submissions:
        counts = ", ".join(f"{k} {v}" for k, v in sub.counts.items() if v)
        typer.echo(
            f"{sub.number:>3}  {sub.batch_id or '-':<{width}}  {sub.state:<10}  "
            f"{sub.status or '-':<11}  {sub.requests:>8}  {counts}"
            + (f"  ({sub.note})" if sub.note else "")
        )
    t = st.spent
    typer.echo(
        f"spent: {t.calls} paid answers, {t.input_tokens} in + {t.output_tokens} out; cost "
        f"{money(t.cost_usd)}"
    )
    for q, d, why in st.failed[:5]:
        typer.echo(f"failed: query {q} doc {d}: {why}")


_exit_hook: list[bool] = []


def _skip_collection_at_exit() -> None:
    """At interpreter exit, leave the objects alive then to the OS instead of the collector.

    An LLM SDK creates tens of thousands of objects (thousands of model classes) that the
    cyclic collector walks again and again while the interpreter tears down: about 0.9 s of a
    judge run on two busy cores, after every output is written. Frozen at exit, they are
    skipped; outputs are closed explicitly before then, so nothing waits on a finaliser.
    """
    if not _exit_hook:
        _exit_hook.append(True)
        atexit.register(gc.freeze)


def qrels_import_command(
    annotations: Path = typer.Argument(
        ...,
        metavar="ANNOTATIONS",
        help="Annotated pool file (CSV, JSONL or YAML; see docs/judging.md).",
    ),
    pool_file: Path | None = typer.Option(
        None, "--pool", metavar="FILE", help="Pool the annotations came from."
    ),
    merge: Path | None = typer.Option(
        None, "--merge", metavar="QRELS", help="Existing qrels to merge into."
    ),
    policy: str = typer.Option(
        "prefer-human",
        "--policy",
        metavar="POLICY",
        help="On conflict: prefer-human, prefer-existing or error.",
    ),
    min_grade: int = typer.Option(0, "--min-grade", metavar="N", help="Lowest valid grade."),
    max_grade: int = typer.Option(3, "--max-grade", metavar="N", help="Highest valid grade."),
    out: Path = typer.Option(
        ..., "--out", "-o", metavar="FILE", help="Qrels file to write (TREC)."
    ),
) -> None:
    """Import reviewed annotations as qrels, validated against the pool, merged by policy."""
    from rankscope.judge.annotations import POLICIES, import_annotations
    from rankscope.judge.io import load_qrels, write_qrels_trec
    from rankscope.judge.pool import read_pool

    if policy not in POLICIES:
        raise InputError("unknown --policy", value=policy, hint="use " + ", ".join(POLICIES))
    pool = read_pool(pool_file) if pool_file else None
    existing = load_qrels(merge) if merge else None
    result = import_annotations(
        annotations,
        pool,
        existing=existing,
        policy=policy,  # type: ignore[arg-type]
        min_grade=min_grade,
        max_grade=max_grade,
    )
    write_qrels_trec(result.qrels, out)
    typer.echo(
        f"imported {result.annotated} graded pairs ({result.blank} blank rows skipped): "
        f"{result.added} new, {result.unchanged} unchanged, {len(result.conflicts)} conflicts"
    )
    for c in result.conflicts[:20]:
        typer.echo(
            f"  conflict query {c.query_id} doc {c.doc_id}: existing {c.existing}, "
            f"annotated {c.human} -> kept {c.kept}"
        )
    if len(result.conflicts) > 20:
        typer.echo(f"  ... and {len(result.conflicts) - 20} more")
    typer.echo(
        f"wrote {len(result.qrels)} judgments for {result.qrels.num_queries} queries to {out}"
    )


#: what ``agree --format`` writes
AgreeFormat = Literal[Format.table, Format.json]


@aliases(
    Alias("--json", "output_format", "--format json", value=Format.json),
    Alias("--threshold", "threshold", "-l/--rel-level"),
)
def agree_command(
    human: Path = typer.Argument(
        ..., metavar="HUMAN_QRELS", help="Reference qrels (e.g. human judgments)."
    ),
    llm: Path = typer.Argument(
        ..., metavar="LLM_QRELS", help="Qrels to compare (e.g. LLM judgments)."
    ),
    runs: list[Path] = typer.Option(
        [],
        "--runs",
        metavar="RUN",
        help="Runs to rank under both qrels (`--runs a b c` takes all three).",
        show_default=False,
    ),
    more_runs: list[Path] | None = typer.Argument(
        None, hidden=True, metavar="RUN", help="Further runs, so that `--runs a b c` works."
    ),
    threshold: int = typer.Option(
        1,
        "--rel-level",
        "-l",
        metavar="N",
        help="Lowest grade counted relevant (kappa on binary labels; the measures for tau).",
    ),
    measures: list[str] = typer.Option(
        ["ndcg@10"], "--measure", "-m", metavar="MEASURE", help="Measures for tau."
    ),
    human_map: str | None = typer.Option(
        None, "--human-map", metavar="MAP", help="Rewrite human grades, e.g. '4=3,1=0'."
    ),
    llm_map: str | None = typer.Option(
        None, "--llm-map", metavar="MAP", help="Rewrite LLM grades."
    ),
    unjudged_as: int | None = typer.Option(
        None,
        "--unjudged-as",
        metavar="GRADE",
        help="Count pairs judged by one side only as this grade (default: leave out).",
    ),
    output_format: AgreeFormat = typer.Option(
        Format.table, "--format", "-f", help="table for people; json for scripts."
    ),
) -> None:
    """Cohen's kappa and confusion between two qrels; Kendall's tau of system rankings."""
    from rankscope.data import unique_run_names
    from rankscope.judge.agreement import label_agreement, parse_grade_map, ranking_agreement
    from rankscope.judge.io import load_qrels, load_run

    qa, qb = load_qrels(human), load_qrels(llm)
    agreement = label_agreement(
        qa,
        qb,
        threshold=threshold,
        map_a=parse_grade_map(human_map),
        map_b=parse_grade_map(llm_map),
        missing_as=unjudged_as,
    )
    rankings = []
    runs = [*runs, *(more_runs or [])]
    if runs:
        loaded = unique_run_names([load_run(p) for p in runs])
        if len(loaded) < 2:
            raise InputError(
                "ranking agreement needs at least two runs", value=[str(p) for p in runs]
            )
        rankings = ranking_agreement(qa, qb, loaded, measures, rel_level=threshold)
    if output_format is Format.json:
        typer.echo(
            json.dumps(
                {"labels": asdict(agreement), "rankings": [asdict(r) for r in rankings]}, indent=2
            )
        )
        return
    a = agreement
    # files are named by their name, or by their path where both have the same name
    name_a, name_b = (human.name, llm.name) if human.name != llm.name else (str(human), str(llm))
    typer.echo(
        f"queries judged by both: {a.queries} (only in {name_a}: {a.queries_only_a}, only "
        f"in {name_b}: {a.queries_only_b}; those are left out)"
    )
    typer.echo(
        f"shared judged pairs: {a.shared} (only in {name_a}: {a.only_a}, only in "
        f"{name_b}: {a.only_b})"
    )
    if a.missing_as is not None:
        typer.echo(
            f"compared pairs: {a.pairs} (a pair judged by one side only counts as grade "
            f"{a.missing_as} on the other)"
        )
    typer.echo(f"exact agreement: {fmt(a.exact)}")
    typer.echo(f"Cohen's kappa, binary (grade >= {a.threshold}): {fmt(a.kappa_binary)}")
    typer.echo(f"Cohen's kappa, linear weighted:    {fmt(a.kappa_linear)}")
    typer.echo(f"Cohen's kappa, quadratic weighted: {fmt(a.kappa_quadratic)}")
    typer.echo(f"confusion (rows: {name_a}, columns: {name_b}):")
    width = max(6, *(len(str(v)) + 1 for row in a.confusion for v in row)) if a.labels else 6
    typer.echo(" " * 6 + "".join(f"{lab:>{width}}" for lab in a.labels))
    for lab, row in zip(a.labels, a.confusion, strict=True):
        typer.echo(f"{lab:>6}" + "".join(f"{v:>{width}}" for v in row))
    for r in rankings:
        typer.echo(
            f"{r.measure}: Kendall's tau-b over {len(r.scores_a)} runs = {fmt(r.tau_b)} "
            f"(scored on the {r.queries} queries both qrels judge)"
        )
        if len(r.scores_a) == 2:
            typer.echo(
                "  (over 2 runs tau can only be +1 or -1, or undefined on a tie: it says only "
                "whether both qrels order the pair alike; give more runs to measure agreement)"
            )
        for name in r.order("a"):
            typer.echo(f"  {name:<30} {r.scores_a[name]:.4f} (human)  {r.scores_b[name]:.4f} (llm)")


def register(app: typer.Typer) -> None:
    app.command("pool")(pool_command)
    app.command("judge")(judge_command)
    app.command("agree")(agree_command)
    group = None
    for info in app.registered_groups:  # another module may own a `qrels` group already
        if info.name == "qrels" and info.typer_instance is not None:
            group = info.typer_instance
    if group is None:
        group = typer.Typer(help="Work with relevance judgments.", no_args_is_help=True)
        app.add_typer(group, name="qrels")
    group.command("import")(qrels_import_command)
