"""``rankscope serve`` commands of the online loop: import-ubi, sample, calibrate,
check-alerts, purge (thin: parse, one library call in ``rankscope.service.admin``, print)."""

from __future__ import annotations

import datetime as dt
from enum import StrEnum
from pathlib import Path

import typer

from rankscope.cli.options import Alias, aliases
from rankscope.cli.serve import CONFIG, DATABASE, OLD_DATABASE, _settings, serve_app


class ClickModel(StrEnum):
    ctr = "ctr"
    coec = "coec"
    dbn = "dbn"


class By(StrEnum):
    searchType = "searchType"
    arm = "arm"


USER = typer.Option(
    None,
    "--user",
    "-u",
    metavar="USER",
    help="One user's data (default: every user's, as the service role).",
)


def _when(value: str | None, name: str, *, end: bool = False) -> dt.datetime | None:
    from rankscope.service.admin import parse_when

    return parse_when(value, name, end=end)


@serve_app.command("import-ubi")
@aliases(OLD_DATABASE)
def import_ubi_cmd(
    file: Path = typer.Argument(
        ..., metavar="FILE", help="UBI queries and/or events: JSON Lines or a JSON array."
    ),
    user: str = typer.Option(
        ..., "--user", "-u", metavar="USER", help="The rankscope user that owns the events."
    ),
    zero_based: bool = typer.Option(
        False, "--zero-based", help="The file's positions count from 0 (UBI's examples: from 1)."
    ),
    no_query_impressions: bool = typer.Option(
        False,
        "--no-query-impressions",
        help="Do not turn a query's hit ids into impressions (the file has impression events).",
    ),
    url: str | None = typer.Option(
        None,
        "--url",
        metavar="URL",
        help="Send to a running service (POST /api/events) instead of the database.",
    ),
    token: str | None = typer.Option(
        None,
        "--token",
        metavar="TOKEN",
        envvar="RANKSCOPE_TOKEN",
        help="API key or JWT for --url (service role; else $RANKSCOPE_TOKEN).",
    ),
    database_url: str | None = DATABASE,
    config: Path | None = CONFIG,
) -> None:
    """Import OpenSearch User Behavior Insights (UBI) logs as events."""
    settings = _settings(database_url=database_url, config_file=config)
    from rankscope.service.admin import import_ubi

    done = import_ubi(
        settings,
        file,
        user,
        zero_based=zero_based,
        impressions_from_queries=not no_query_impressions,
        url=url,
        token=token,
    )
    ubi = done.ubi
    typer.echo(
        f"{file}: {ubi.queries} UBI queries and {ubi.ubi_events} UBI events -> "
        f"{len(ubi.events)} events: {done.accepted} stored, {done.duplicates} already stored"
    )
    for reason, lines in sorted(ubi.skipped.items()):
        shown = ", ".join(str(n) for n in lines[:5]) + (" ..." if len(lines) > 5 else "")
        typer.echo(f"skipped {len(lines)}: {reason} (line {shown})", err=True)


@serve_app.command("sample")
@aliases(OLD_DATABASE)
def sample_cmd(
    budget: int = typer.Option(
        ..., "--budget", metavar="N", help="(query, document) pairs to judge, at most."
    ),
    out: Path = typer.Option(
        ..., "--out", "-o", metavar="FILE", help="Pool file (.jsonl, .csv or .yaml)."
    ),
    depth: int = typer.Option(
        10, "--depth", "-M", metavar="N", help="Top N documents per query (best shown first)."
    ),
    seed: int = typer.Option(0, "--seed", metavar="N", help="Seed of the random draws."),
    corpus: Path | None = typer.Option(
        None,
        "--corpus",
        metavar="FILE",
        help="BEIR corpus.jsonl with the documents' text (the service keeps none).",
    ),
    start: str | None = typer.Option(
        None, "--start", metavar="DATE", help="Only searches from this date."
    ),
    end: str | None = typer.Option(
        None, "--end", metavar="DATE", help="Only searches up to this date."
    ),
    user: str | None = USER,
    database_url: str | None = DATABASE,
    config: Path | None = CONFIG,
) -> None:
    """Sample collected queries for `rankscope judge` (head/torso/tail, zero-click, zero-result)."""
    settings = _settings(database_url=database_url, config_file=config)
    from rankscope.service.admin import sample_pool

    files = sample_pool(
        settings,
        out,
        budget,
        depth=depth,
        seed=seed,
        user=user,
        corpus=corpus,
        start=_when(start, "--start"),
        end=_when(end, "--end", end=True),
    )
    s = files.sample
    typer.echo(f"{files.pool}: {s.pairs} pairs of {len(s.queries)} queries (budget {s.budget})")
    for name, count in s.strata.items():
        typer.echo(
            f"  {name:<12} {count.sampled:>5} of {count.population:>6} queries, {count.pairs} pairs"
        )
    typer.echo(f"queries and strata: {files.queries}")
    if corpus is None:
        typer.echo(
            "note: no --corpus: the pool has document names only; `rankscope judge --corpus` "
            "can add the text",
            err=True,
        )


@serve_app.command("calibrate")
@aliases(OLD_DATABASE, Alias("--min-grade", "min_grade", "-l/--rel-level"))
def calibrate_cmd(
    labels: Path | None = typer.Option(
        None,
        "--labels",
        metavar="QRELS",
        help="Qrels whose query ids are query keys (from `serve sample` + `rankscope judge`); "
        "default: click grades.",
    ),
    model: ClickModel | None = typer.Option(
        None, "--model", help="Click model.", show_default="dbn"
    ),
    by: By = typer.Option(By.searchType, "--by", help="Group by search type or arm."),
    min_grade: int = typer.Option(
        1, "--rel-level", "-l", metavar="N", help="Lowest grade counted relevant."
    ),
    apply: bool = typer.Option(
        False, "--apply", help="Set the user's threshold per search type to the best (in 0..1)."
    ),
    user: str | None = USER,
    database_url: str | None = DATABASE,
    config: Path | None = CONFIG,
) -> None:
    """Agreement (Cohen's kappa) of the score threshold with click or LLM labels, and the best."""
    settings = _settings(database_url=database_url, config_file=config)
    from rankscope.service.admin import calibrate_thresholds

    done = calibrate_thresholds(
        settings,
        user=user,
        labels=labels,
        model=model.value if model else None,
        by=by.value,
        min_grade=min_grade,
        apply=apply,
    )  # type: ignore[arg-type]
    r = done.result

    def num(v: float | None) -> str:
        return "-" if v is None else f"{v:.4f}"

    typer.echo(f"labels {r.labels}, relevant from grade {r.min_grade}, by {r.by}")
    typer.echo("group\tpairs\trelevant\tthreshold\tkappa\tagreement\tbest\tkappa\tagreement")
    for g in r.groups:
        typer.echo(
            f"{g.group}\t{g.pairs}\t{g.positives}\t{num(g.current_threshold)}\t"
            f"{num(g.kappa_current)}\t{num(g.agreement_current)}\t{num(g.best_threshold)}\t"
            f"{num(g.kappa_best)}\t{num(g.agreement_best)}"
        )
    if not r.groups:
        typer.echo("no record has a labelled document", err=True)
    for group, value in done.applied.items():
        typer.echo(f"set {user}'s threshold for {group} to {value:.4f}")


@serve_app.command("check-alerts")
@aliases(OLD_DATABASE)
def check_alerts_cmd(
    now: str | None = typer.Option(
        None, "--now", metavar="TIME", help="Evaluate as of this time.", show_default="now"
    ),
    database_url: str | None = DATABASE,
    config: Path | None = CONFIG,
) -> None:
    """Evaluate the alert rules once, store and deliver what fires (exit 1 when any fired)."""
    settings = _settings(database_url=database_url, config_file=config)
    from rankscope.service.admin import run_alert_check

    result = run_alert_check(settings, _when(now, "--now"))
    typer.echo(f"{result.groups} groups checked, {len(result.fired)} new alerts")
    for a in result.fired:
        typer.echo(f"{a['user_id']}\t{a['delivery_status']}\t{a['message']}")
    if result.fired:
        raise typer.Exit(1)


@serve_app.command("purge")
@aliases(OLD_DATABASE)
def purge_cmd(
    dry_run: bool = typer.Option(False, "--dry-run", help="Count, delete nothing."),
    now: str | None = typer.Option(
        None, "--now", metavar="TIME", help="Purge as of this time.", show_default="now"
    ),
    database_url: str | None = DATABASE,
    config: Path | None = CONFIG,
) -> None:
    """Delete records, events and alerts older than each user's retention."""
    settings = _settings(database_url=database_url, config_file=config)
    from rankscope.service.admin import run_purge

    counts = run_purge(settings, dry_run=dry_run, now=_when(now, "--now"))
    verb = "would delete" if dry_run else "deleted"
    for user, c in counts.items():
        typer.echo(
            f"{user}: {verb} {c['records']} records, {c['events']} events, {c['alerts']} alerts"
        )
    if not counts:
        typer.echo("no user has a retention (set retention_days or PUT /api/retention)")


def register(app: typer.Typer) -> None:
    """The commands join ``rankscope serve`` (registered by rankscope.cli.serve)."""
