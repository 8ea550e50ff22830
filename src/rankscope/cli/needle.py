"""``rankscope needle``: the RAG needle benchmark (retrieve, find the needle, grade 1-10)."""

from __future__ import annotations

import logging
from pathlib import Path

import typer

from rankscope.cli.options import (
    ApiKeyEnvOption,
    BaseUrlOption,
    DryRunOption,
    EngineOptionOption,
    JudgeConfigOption,
    ModelOption,
    ProviderOption,
    VerboseOption,
    echo_err,
    fmt,
    money,
    parse_engine_options,
    setup_logging,
)
from rankscope.errors import InputError

#: questions asked by --quick (the grading design's smoke test)
QUICK_QUESTIONS = 5

# What a command runs on is imported inside it: every command module loads at start-up
# (cli/app.py), and numpy, pyarrow, pydantic and the rest only with the command that runs.


def needle_command(
    questions: Path = typer.Argument(
        ...,
        metavar="QUESTIONS",
        help="Questions (YAML or JSONL; see docs/judging.md, rankscope needle).",
    ),
    engine: str = typer.Option(
        "sqlite", "--engine", metavar="NAME", help="Engine name, e.g. sqlite, tantivy, vector."
    ),
    engine_option: EngineOptionOption = [],  # noqa: B006 - typer copies it
    corpus: Path | None = typer.Option(
        None, "--corpus", metavar="FILE", help="BEIR corpus.jsonl to index."
    ),
    pipeline: str | None = typer.Option(
        None,
        "--pipeline",
        metavar="MODULE:FUNCTION",
        help="Your retriever as module:function(question, k) (the current folder is searched).",
    ),
    chunk_size: int | None = typer.Option(
        None, "--chunk-size", metavar="N", help="Chunk documents to N tokens first."
    ),
    chunk_overlap: int = typer.Option(
        0, "--chunk-overlap", metavar="N", help="Token overlap between chunks."
    ),
    k: int = typer.Option(5, "-k", metavar="N", help="Chunks retrieved per question."),
    provider: ProviderOption = "anthropic",
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    config: JudgeConfigOption = None,
    weights: str = typer.Option(
        "default", "--weights", metavar="PRESET", help="Position weights: default or steep."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        metavar="PATH",
        help="Output folder (results.jsonl, summary.json, run.json), or a .jsonl results file.",
    ),
    dry_run: DryRunOption = False,
    fresh: bool = typer.Option(
        False, "--fresh", help="Start over instead of resuming an interrupted run in --out."
    ),
    cache: bool = typer.Option(
        False, "--cache", help="Reuse grades from earlier runs (same prompt and chunks)."
    ),
    cache_path: Path | None = typer.Option(
        None,
        "--cache-path",
        metavar="FILE",
        help="The cache file for --cache (SQLite; implies --cache).",
        show_default="$RANKSCOPE_CACHE_DIR/judgments.sqlite",
    ),
    quick: bool = typer.Option(False, "--quick", help="Only the first 5 questions (a smoke test)."),
    percent: bool = typer.Option(
        False, "--percent", help="Rates as percentages (80.0) instead of fractions (0.8)."
    ),
    template: Path | None = typer.Option(
        None,
        "--template",
        metavar="FILE",
        help="Grading prompt template with {question}, {expected_answer} and {chunks}.",
    ),
    no_retries: bool = typer.Option(
        False, "--no-retries", help="Ask the provider once per question (a failure is recorded)."
    ),
    verbose: VerboseOption = 0,
) -> None:
    """RAG needle benchmark: retrieve top-k chunks, locate the needle, grade with an LLM."""
    from rankscope.judge.cache import JudgmentCache, default_cache_path
    from rankscope.judge.config import load_settings
    from rankscope.judge.needle import (
        GRADER_PROMPT,
        WEIGHT_PRESETS,
        EngineRetrieval,
        NeedleOutput,
        RetrievalGrader,
        RetrievalSource,
        load_template,
        pipeline_retrieval,
        plan_needle,
        progress_line,
        read_questions,
        run_needle,
    )
    from rankscope.judge.providers import make_provider

    setup_logging(verbose)
    if verbose <= 0:  # the `metric name=value` lines are part of the command's output
        logging.getLogger("rankscope.judge.needle.metrics").setLevel(logging.INFO)
    if weights not in WEIGHT_PRESETS:
        raise InputError(
            "unknown --weights preset", value=weights, hint="use " + ", ".join(WEIGHT_PRESETS)
        )
    qs = read_questions(questions)
    if quick:
        qs = qs[:QUICK_QUESTIONS]
    prompt = load_template(template) if template is not None else GRADER_PROMPT
    source: RetrievalSource
    if pipeline:
        if corpus is not None or chunk_size is not None:
            raise InputError(
                "--corpus and --chunk-size are for --engine; a --pipeline retrieves by itself",
                value=pipeline,
            )
        source = pipeline_retrieval(pipeline, base_dir=Path.cwd())
    else:
        if corpus is None:
            raise InputError(
                "needle needs --corpus to index (or --pipeline module:function)",
                hint="e.g. --engine sqlite --corpus corpus.jsonl",
            )
        source = EngineRetrieval(
            engine, corpus, parse_engine_options(engine_option), chunk_size, chunk_overlap
        )
    settings = load_settings(config)
    if no_retries:
        settings = settings.model_copy(update={"max_retries": 0})
    prov = make_provider(
        provider, model, settings, base_url=base_url, api_key_env=api_key_env, dry_run=dry_run
    )
    settings = prov.settings  # priced for the server the calls go to
    output = NeedleOutput.at(out) if out is not None else None
    store = JudgmentCache(cache_path or default_cache_path()) if cache or cache_path else None
    try:
        grader = RetrievalGrader(prov, template=prompt, cache=store)
        if dry_run:
            plan = plan_needle(
                qs, source, grader, settings, k=k, weights=WEIGHT_PRESETS[weights],
                output=output, fresh=fresh,
            )  # fmt: skip
            done = f"{plan.already_graded} already graded in {out}, " if out is not None else ""
            typer.echo(
                f"{plan.questions} questions: {done}"
                f"{plan.cached} cached, {plan.calls} calls to make to {provider} {plan.model}"
            )
            typer.echo(
                f"estimated tokens: {plan.input_tokens} in + {plan.output_tokens} out; "
                f"estimated cost: {money(plan.cost_usd)}"
            )
            typer.echo("dry run: retrieval ran, nothing was sent or written")
            return
        _, summary = run_needle(
            qs,
            source,
            grader,
            k=k,
            weights=WEIGHT_PRESETS[weights],
            output=output,
            fresh=fresh,
            percent=percent,
            on_result=lambda i, n, r: echo_err(progress_line(i, n, r)),
            on_resume=lambda kept: echo_err(
                f"resuming the interrupted run in {out}: {kept} question(s) already graded "
                f"are kept (not paid again)"
            ),
        )
    finally:
        if store is not None:
            store.close()
    s = summary
    typer.echo(
        f"questions {s.questions}, k {s.k}: accuracy (needle in top {s.k}) {s.accuracy:.3f}, "
        f"hit@1 {s.hit_at_1_rate:.3f}, hit@5 {s.hit_at_5_rate:.3f}, MRR {s.mrr:.3f}"
    )
    typer.echo(
        f"avg LLM grade {fmt(s.avg_llm_grade, 2)} ({s.graded} graded, {s.clamped} clamped to "
        f"1-10), avg total score {fmt(s.avg_total_score, 2)}; pass rate >=8.0 "
        f"{s.pass_rate_8:.3f}, >=7.0 {s.pass_rate_7:.3f}, >=6.5 {s.pass_rate_6_5:.3f}"
    )
    typer.echo(
        f"latency: retrieval {s.avg_latency_ms:.1f} ms, grading {s.avg_grading_latency_ms:.1f} ms "
        f"on average"
    )
    t = prov.meter.totals()
    typer.echo(
        f"grading this run: {t.calls} paid calls, {t.input_tokens} + {t.output_tokens} tokens, "
        f"cost {money(t.cost_usd)}"
    )
    if s.runs > 1 or s.cached:
        typer.echo(
            f"grading in total ({s.runs} run(s)): {s.grading_calls} paid calls, "
            f"{s.input_tokens} + {s.output_tokens} tokens, cost {money(s.cost_usd)}; "
            f"{s.cached} from the cache"
        )
    if s.grading_failed:
        echo_err(
            f"{s.grading_failed} question(s) could not be graded (provider errors); rerun the "
            f"same command to grade only those"
        )
    if output is not None:
        typer.echo(f"wrote {output.results} and {output.summary}")


def register(app: typer.Typer) -> None:
    app.command("needle")(needle_command)
