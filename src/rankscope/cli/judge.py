"""Commands that get judgments: ``pool``, ``judge``, ``qrels import``, ``agree``.

``needle`` lives in :mod:`rankscope.cli.needle`; options shared with it in
:mod:`rankscope.cli.options`.
"""

from __future__ import annotations

import atexit
import gc
import json
from pathlib import Path

import typer

from rankscope.cli.options import (
    ApiKeyEnvOption,
    BaseUrlOption,
    DryRunOption,
    JudgeConfigOption,
    ModelOption,
    ProviderOption,
    VerboseOption,
    echo_err,
    fmt,
    money,
    setup_logging,
)
from rankscope.errors import InputError


def pool_command(
    runs: list[Path] = typer.Argument(..., help="Run files (TREC or any format rankscope reads)."),
    depth: int = typer.Option(20, "--depth", "-d", help="Top documents taken from each run."),
    queries: Path | None = typer.Option(None, help="BEIR queries.jsonl (query text)."),
    corpus: Path | None = typer.Option(None, help="BEIR corpus.jsonl (title and text)."),
    query_ids: str | None = typer.Option(
        None, "--query-ids", help="Comma-separated query ids to pool (default: all)."
    ),
    max_queries: int | None = typer.Option(
        None,
        "--max-queries",
        help="Pool only the first N query ids (numeric ids in numeric order).",
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Pool file: .jsonl, .csv or .yaml."),
) -> None:
    """Depth-k pool over runs, de-duplicated, with provenance, for annotation or judging."""
    from rankscope.judge.io import load_run, read_corpus, read_queries
    from rankscope.judge.pool import build_pool, pool_stats, select_query_ids, write_pool

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


def judge_command(
    pool_file: Path = typer.Argument(..., metavar="POOL", help="Pool file from `rankscope pool`."),
    provider: ProviderOption = "anthropic",
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    template: Path | None = typer.Option(None, help="Prompt template with {query}, {passage}."),
    min_label: int = typer.Option(0, help="Lowest label of the template's scale."),
    max_label: int = typer.Option(3, help="Highest label of the template's scale."),
    config: JudgeConfigOption = None,
    cache: Path | None = typer.Option(None, help="Judgment cache (SQLite)."),
    corpus: Path | None = typer.Option(None, help="BEIR corpus.jsonl for texts not in the pool."),
    concurrency: int | None = typer.Option(
        None, help="Calls in flight at most (default from config; halved on timeouts)."
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
        help="Cut longer passages to N tokens (4 characters each; default 2000, from the "
        "config; 0 sends them whole).",
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder."),
    verbose: VerboseOption = 0,
) -> None:
    """Label a pool 0–3 with an LLM; writes judgments.jsonl, qrels.txt and summary.json."""
    from rankscope.judge.cache import JudgmentCache, default_cache_path
    from rankscope.judge.config import load_settings
    from rankscope.judge.io import read_corpus
    from rankscope.judge.judging import RelevanceJudge, estimate, judge_pool
    from rankscope.judge.pool import read_pool
    from rankscope.judge.prompts import DEFAULT_TEMPLATE, PromptTemplate
    from rankscope.judge.providers import make_provider

    setup_logging(verbose)
    settings = load_settings(config)
    pool = read_pool(pool_file, read_corpus(corpus) if corpus else None)
    if template is not None:
        tmpl = PromptTemplate.from_file(template, min_label, max_label)
    else:
        tmpl = PromptTemplate(DEFAULT_TEMPLATE, min_label, max_label)
    if fresh and retry_nulls:
        raise InputError(
            "--fresh asks every pair again; --retry-nulls only those without a label",
            hint="pass one of them",
        )
    prov = make_provider(provider, model, settings, base_url=base_url, api_key_env=api_key_env)
    _skip_collection_at_exit()
    cache_path = cache or default_cache_path()
    with JudgmentCache(cache_path) as store:
        judge = RelevanceJudge(
            prov,
            tmpl,
            store,
            fresh=fresh,
            retry_nulls=retry_nulls,
            max_passage_tokens=max_passage_tokens,
        )
        est = estimate(pool, judge, settings, out)
        typer.echo(
            f"{est.pairs} pairs: {est.already_done} already in {out}, {est.cached} cached, "
            f"{est.calls} calls to make to {provider} {est.model}"
        )
        typer.echo(
            f"estimated tokens: {est.input_tokens} in + {est.output_tokens} out; "
            f"estimated cost: {money(est.cost_usd)}"
        )
        if est.truncated:
            typer.echo(
                f"{est.truncated} passage(s) longer than {est.max_passage_tokens} tokens are cut "
                f"to their first {est.max_passage_tokens} (--max-passage-tokens; the judgments "
                f"record passage_truncated)"
            )
        if dry_run:
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
    annotations: Path = typer.Argument(..., help="Annotated pool file (JSONL, CSV or YAML)."),
    pool_file: Path | None = typer.Option(None, "--pool", help="Pool the annotations came from."),
    merge: Path | None = typer.Option(None, "--merge", help="Existing qrels to merge into."),
    policy: str = typer.Option(
        "prefer-human", help="On conflict: prefer-human, prefer-existing or error."
    ),
    min_grade: int = typer.Option(0, help="Lowest valid grade."),
    max_grade: int = typer.Option(3, help="Highest valid grade."),
    out: Path = typer.Option(..., "--out", "-o", help="Qrels file to write (TREC)."),
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


def agree_command(
    human: Path = typer.Argument(..., help="Reference qrels (e.g. human judgments)."),
    llm: Path = typer.Argument(..., help="Qrels to compare (e.g. LLM judgments)."),
    runs: list[Path] = typer.Option([], "--runs", help="Runs to rank under both qrels."),
    more_runs: list[Path] | None = typer.Argument(
        None, hidden=True, metavar="RUN", help="Further runs, so that `--runs a b c` works."
    ),
    threshold: int = typer.Option(1, help="Binary relevance: grade >= threshold."),
    measures: list[str] = typer.Option(["ndcg@10"], "--measure", help="Measures for tau."),
    human_map: str | None = typer.Option(None, help="Rewrite human grades, e.g. '4=3,1=0'."),
    llm_map: str | None = typer.Option(None, help="Rewrite LLM grades."),
    unjudged_as: int | None = typer.Option(
        None, help="Count pairs judged by one side only as this grade (default: leave out)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Cohen's kappa and confusion between two qrels; Kendall's tau of system rankings."""
    from dataclasses import asdict

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
    if as_json:
        typer.echo(
            json.dumps(
                {"labels": asdict(agreement), "rankings": [asdict(r) for r in rankings]}, indent=2
            )
        )
        return
    a = agreement
    typer.echo(
        f"queries judged by both: {a.queries} (only in {human.name}: {a.queries_only_a}, only "
        f"in {llm.name}: {a.queries_only_b}; those are left out)"
    )
    typer.echo(
        f"shared judged pairs: {a.shared} (only in {human.name}: {a.only_a}, only in "
        f"{llm.name}: {a.only_b})"
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
    typer.echo(f"confusion (rows: {human.name}, columns: {llm.name}):")
    width = max(6, *(len(str(v)) + 1 for row in a.confusion for v in row)) if a.labels else 6
    typer.echo(" " * 6 + "".join(f"{lab:>{width}}" for lab in a.labels))
    for lab, row in zip(a.labels, a.confusion, strict=True):
        typer.echo(f"{lab:>6}" + "".join(f"{v:>{width}}" for v in row))
    for r in rankings:
        typer.echo(
            f"{r.measure}: Kendall's tau-b over {len(r.scores_a)} runs = {fmt(r.tau_b)} "
            f"(scored on the {r.queries} queries both qrels judge)"
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
