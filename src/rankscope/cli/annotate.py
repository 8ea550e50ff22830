"""``rankscope annotate``: judge a pool by hand in a local page; export and compare the result.

``rankscope annotate POOL`` is ``rankscope annotate serve POOL``; ``export``, ``agree`` and
``status`` read the store the page writes.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from rankscope.cli.options import echo_err, fmt
from rankscope.errors import InputError

if TYPE_CHECKING:
    from rankscope.judge.annotate.agreement import RaterAgreement
    from rankscope.judge.annotate.store import AnnotationStore

# What a command runs on is imported inside it: every command module loads at start-up
# (cli/app.py), and numpy, pyarrow, pydantic and the rest only with the command that runs.

DEFAULT_PORT = 8765
_POOL_SUFFIXES = {".jsonl", ".json", ".csv", ".yaml", ".yml"}


class _ServeByDefault(TyperGroup):
    """``rankscope annotate POOL ...`` runs ``serve``: a first argument that names no
    subcommand (a pool file, or an option) is given to it."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["serve", *args]
        return list(super().parse_args(ctx, args))


annotate_app = typer.Typer(
    name="annotate",
    cls=_ServeByDefault,
    help="Judge a pool by hand in a local page (`rankscope annotate POOL`), export the "
    "judgments as qrels or CSV, and measure agreement.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(annotate_app, name="annotate")


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [n.strip() for n in text.split(",") if n.strip()]


def _store_path(path: Path) -> Path:
    """A store, or the pool it sits beside."""
    from rankscope.judge.annotate.store import default_store_path

    return default_store_path(path) if path.suffix.lower() in _POOL_SUFFIXES else path


def _reference_grades(path: Path) -> dict[tuple[str, str], int]:
    """``(query_id, doc_id) -> grade`` from ``rankscope judge``'s judgments.jsonl (rows with a
    label) or from any qrels file rankscope reads."""
    if path.suffix.lower() == ".jsonl":
        from rankscope.judge.judging import read_judgments

        rows = read_judgments(path)
        if rows and all("label" in r for r in rows):
            return {
                (str(r["query_id"]), str(r["doc_id"])): int(r["label"])
                for r in rows
                if r.get("label") is not None
            }
    from rankscope.judge.io import load_qrels

    return {(q, d): int(g) for q, d, g in load_qrels(path)}


@annotate_app.command("serve")
def serve_command(
    pool_file: Path = typer.Argument(..., metavar="POOL", help="Pool file from `rankscope pool`."),
    store_file: Path | None = typer.Option(
        None,
        "--store",
        metavar="FILE",
        help="Annotation store (SQLite; default: POOL.annotations.sqlite beside it).",
    ),
    qrels: Path | None = typer.Option(
        None,
        "--qrels",
        metavar="FILE",
        help="Existing qrels: pairs they grade are left out of the queues (unless --rejudge) "
        "and compared with people's grades.",
    ),
    labels: Path | None = typer.Option(
        None,
        "--labels",
        metavar="FILE",
        help="LLM labels: `rankscope judge`'s judgments.jsonl or its qrels.txt.",
    ),
    annotators: str | None = typer.Option(
        None,
        "--annotators",
        metavar="NAMES",
        help="Comma-separated names; the pairs are split among them (default: open, anyone who "
        "gives a name judges every pair).",
    ),
    overlap: float | None = typer.Option(
        None,
        "--overlap",
        metavar="FRACTION",
        min=0.0,
        max=1.0,
        help="Fraction of pairs given to two annotators, for agreement (default 0.1).",
        show_default=False,
    ),
    seed: int | None = typer.Option(
        None, "--seed", metavar="N", help="Seed of the split (default 0).", show_default=False
    ),
    rejudge: bool | None = typer.Option(
        None,
        "--rejudge/--no-rejudge",
        help="Queue the pairs --qrels already grades too (default: no).",
        show_default=False,
    ),
    show_labels: str = typer.Option(
        "never",
        "--show-labels",
        metavar="[never|after]",
        help="never: the LLM's label stays hidden; after: shown once the person has answered.",
    ),
    template: Path | None = typer.Option(
        None,
        "--template",
        metavar="FILE",
        help="Prompt template whose 'N = wording' lines name the grades (default: the judge's).",
    ),
    min_grade: int = typer.Option(0, "--min-grade", metavar="N", help="Lowest grade of the scale."),
    max_grade: int = typer.Option(
        3, "--max-grade", metavar="N", help="Highest grade of the scale."
    ),
    host: str | None = typer.Option(
        None,
        "--host",
        metavar="HOST",
        help="Address to listen on (default 127.0.0.1); another one makes the page reachable "
        "from other machines (with the token).",
        show_default=False,
    ),
    port: int = typer.Option(
        DEFAULT_PORT, "--port", "-p", metavar="PORT", help="Port to listen on (0: any free one)."
    ),
    token: str | None = typer.Option(
        None,
        "--token",
        metavar="TOKEN",
        envvar="RANKSCOPE_ANNOTATE_TOKEN",
        help="The token the page and API calls need (default: a new random one each start).",
        show_default=False,
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log each request (no tokens)."),
) -> None:
    """Serve a local page to judge POOL by hand; every answer is saved as it is made."""
    from rankscope.judge.annotate.scale import template_scale
    from rankscope.judge.annotate.server import (
        SHOW_LABELS,
        AnnotationServer,
        ServerConfig,
        check_token,
        is_loopback,
        new_token,
    )
    from rankscope.judge.annotate.store import AnnotationStore, default_store_path
    from rankscope.judge.pool import read_pool, require_query_text
    from rankscope.judge.prompts import DEFAULT_TEMPLATE, PromptTemplate

    if show_labels not in SHOW_LABELS:
        raise InputError("unknown --show-labels", value=show_labels, hint="never or after")
    token = check_token(token) if token else new_token()
    scale = template_scale(
        PromptTemplate.from_file(template, min_grade, max_grade)
        if template
        else PromptTemplate(DEFAULT_TEMPLATE, min_grade, max_grade)
    )
    pool = read_pool(pool_file)
    require_query_text(pool)  # a person cannot judge a pair without its query either
    path = store_file or default_store_path(pool_file)
    store = AnnotationStore(path, create=True)
    try:
        store.load_pool(pool)
        store.set_scale(scale)
        for source, given in (("qrels", qrels), ("llm", labels)):
            if given is None:
                continue
            kept, outside = store.set_references(source, _reference_grades(given))
            left = f" ({outside} outside the pool left out)" if outside else ""
            typer.echo(f"{source} labels: {kept} pairs of the pool from {given}{left}")
        plan = store.configure(_names(annotators), overlap=overlap, seed=seed, rejudge=rejudge)
        config = ServerConfig(
            token=token,
            scale=scale,
            show_labels=show_labels,  # type: ignore[arg-type]
            host=host or "127.0.0.1",
            port=port,
            verbose=verbose,
        )
        server = AnnotationServer(store, config)
        typer.echo(f"store: {path} ({store.pair_count()} pairs)")
        if plan.annotators is None:
            typer.echo("queues: open; anyone who gives a name judges every queued pair")
            if overlap is not None or seed is not None:
                echo_err(
                    "note: --overlap and --seed split pairs among --annotators; an open "
                    "store gives everyone every pair"
                )
        else:
            typer.echo(
                f"queues: {len(plan.annotators)} annotator(s), overlap {plan.overlap:g}, "
                f"seed {plan.seed}"
            )
            for name in plan.annotators:
                typer.echo(f"  {name}: {len(store.queue(name))} pairs")
        if not is_loopback(config.host):
            echo_err(
                f"warning: listening on {config.host}: other machines can reach the page; "
                "anyone with the token can judge, and the traffic is not encrypted"
            )
        typer.echo(f"open {server.url}")
        if plan.annotators is not None:
            for name in plan.annotators:
                typer.echo(f"  {name}: {server.url}&annotator={name}")
        typer.echo("answers are saved as they are made; Ctrl+C stops the server")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            typer.echo(f"stopped; the answers are in {path}")
    finally:
        store.close()


def _export_format(path: Path) -> str:
    """The export's format, from the file's suffix (as ``pool`` and ``qrels import`` do)."""
    return {".csv": "csv", ".jsonl": "jsonl"}.get(path.suffix.lower(), "qrels")


@annotate_app.command("export")
def export_command(
    store_file: Path = typer.Argument(..., metavar="STORE", help="Annotation store (or its pool)."),
    out: Path = typer.Option(
        ...,
        "--out",
        "-o",
        metavar="PATH",
        help="File to write, its format from the suffix: .csv (for `rankscope qrels import`), "
        ".jsonl (the whole log), else TREC qrels; with --per-annotator, a folder.",
    ),
    annotator: str | None = typer.Option(
        None, "--annotator", metavar="NAME", help="One annotator's grades."
    ),
    per_annotator: bool = typer.Option(
        False, "--per-annotator", help="One TREC qrels file per annotator: --out DIR/NAME.qrels."
    ),
    disagreements: str = typer.Option(
        "omit",
        "--disagreements",
        metavar="[omit|error]",
        help="Pairs annotators graded differently: omit (left out, counted) or error.",
    ),
) -> None:
    """Write the judgments as TREC qrels, as CSV for `rankscope qrels import`, or the log."""
    from rankscope.judge.annotate.export import write_export
    from rankscope.judge.annotate.store import AnnotationStore

    if disagreements not in ("omit", "error"):
        raise InputError("unknown --disagreements", value=disagreements, hint="omit or error")
    if per_annotator and annotator:
        raise InputError("--per-annotator writes every annotator's qrels", hint="drop --annotator")
    with AnnotationStore(_store_path(store_file)) as store:
        if per_annotator:
            for name in store.annotators():
                target = out / f"{name}.qrels"
                result = write_export(store, target, "qrels", name)
                rows = 0 if result is None else len(result.rows)
                typer.echo(f"wrote {rows} graded pairs of {name} to {target}")
            return
        if annotator is not None:
            store.queue(annotator)  # an unknown name is an error, not an empty file
        result = write_export(
            store,
            out,
            _export_format(out),  # type: ignore[arg-type]
            annotator,
            disagreements=disagreements,  # type: ignore[arg-type]
        )
    if result is None:
        typer.echo(f"wrote the log to {out}")
        return
    who = annotator or "all annotators"
    typer.echo(f"wrote {len(result.rows)} graded pairs ({who}) to {out}")
    if result.disagreements:
        echo_err(
            f"{len(result.disagreements)} pair(s) graded differently were left out; "
            "`rankscope annotate agree` lists them"
        )


def _rater_rows(rows: tuple[RaterAgreement, ...], title: str) -> None:
    typer.echo(title)
    if not rows:
        typer.echo("  nothing to compare")
        return
    typer.echo(
        f"  {'a':<16} {'b':<16} {'pairs':>6} {'exact':>7} {'κ bin':>7} {'κ lin':>7} {'κ quad':>7}"
    )
    for r in rows:
        a = r.labels
        values = (
            (None, None, None, None)
            if a is None
            else (a.exact, a.kappa_binary, a.kappa_linear, a.kappa_quadratic)
        )
        typer.echo(
            f"  {r.a:<16} {r.b:<16} {r.shared:>6} " + " ".join(f"{fmt(v, 3):>7}" for v in values)
        )


@annotate_app.command("agree")
def agree_command(
    store_file: Path = typer.Argument(..., metavar="STORE", help="Annotation store (or its pool)."),
    threshold: int = typer.Option(
        1,
        "--rel-level",
        "-l",
        metavar="N",
        help="Lowest grade counted relevant (kappa on binary labels).",
    ),
    output_format: str = typer.Option(
        "table",
        "--format",
        "-f",
        metavar="[table|json]",
        help="table for people; json for scripts.",
    ),
    limit: int = typer.Option(
        50, "--limit", metavar="N", help="Disagreements the table lists at most."
    ),
) -> None:
    """Cohen's kappa on the overlap (annotators, reference labels); the disagreements."""
    from rankscope.judge.annotate.agreement import agreement_report
    from rankscope.judge.annotate.store import AnnotationStore

    if output_format not in ("table", "json"):
        raise InputError("unknown --format", value=output_format, hint="table or json")
    with AnnotationStore(_store_path(store_file)) as store:
        report = agreement_report(store, threshold=threshold)
    if output_format == "json":
        typer.echo(json.dumps(asdict(report), indent=2, ensure_ascii=False))
        return
    typer.echo(f"Cohen's kappa on the pairs both sides graded (binary: grade >= {threshold})")
    _rater_rows(report.between_annotators, "between annotators:")
    _rater_rows(report.with_references, "people and reference labels:")
    typer.echo(f"disagreements: {len(report.disagreements)}")
    for d in report.disagreements[:limit]:
        grades = ", ".join(f"{n} {g}" for n, g in d.grades.items())
        refs = "".join(f"; {s} {g}" for s, g in d.references.items())
        notes = "".join(f"; {n}: {t!r}" for n, t in d.notes.items())
        typer.echo(f"  {d.pair.query_id} {d.pair.doc_id}: {grades}{refs}{notes}")
    if len(report.disagreements) > limit:
        typer.echo(f"  ... and {len(report.disagreements) - limit} more (-f json lists all)")


@annotate_app.command("status")
def status_command(
    store_file: Path = typer.Argument(..., metavar="STORE", help="Annotation store (or its pool)."),
) -> None:
    """Each annotator's progress."""
    from rankscope.judge.annotate.store import AnnotationStore

    with AnnotationStore(_store_path(store_file)) as store:
        _print_status(store)


def _print_status(store: AnnotationStore) -> None:
    plan = store.plan()
    typer.echo(f"{store.path}: {store.pair_count()} pairs")
    if plan is not None:
        mode = "open" if plan.annotators is None else f"overlap {plan.overlap:g}, seed {plan.seed}"
        typer.echo(f"queues: {mode}")
    for name in store.annotators():
        p = store.progress(name)
        typer.echo(f"  {name}: {p.graded} of {p.assigned} graded, {p.skipped} skipped")


__all__ = ["annotate_app", "register"]
