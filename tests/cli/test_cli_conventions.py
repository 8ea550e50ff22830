"""One vocabulary across commands (docs/cli.md): help that names values, not Python types;
one-line command summaries; old spellings kept as hidden aliases that print a note."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from rankscope.cli.app import app, main
from rankscope.cli.help import value_name
from rankscope.cli.options import Alias, Format, deprecation_note, merge_aliases

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

#: what typer prints where a command-line tool prints a value name
PYTHON_TYPES = ("<bool>", "<int>", "<str>", "<float>", "<path>", "list[")


def walk() -> Iterator[tuple[list[str], Any]]:
    """Every command and subcommand as (path, click command), the root first."""
    root = typer.main.get_command(app)
    ctx = root.make_context("rankscope", [], resilient_parsing=True)

    def visit(path: list[str], command: Any) -> Iterator[tuple[list[str], Any]]:
        yield path, command
        if hasattr(command, "list_commands"):
            for name in command.list_commands(ctx):
                yield from visit([*path, name], command.get_command(ctx, name))

    yield from visit([], root)


COMMANDS = [path for path, _ in walk()]


def test_walk_finds_every_command() -> None:
    names = {" ".join(p) for p in COMMANDS}
    assert {"", "eval", "compare", "bench", "demo", "pool", "judge", "agree", "needle"} <= names
    assert {"qrels", "qrels import", "serve", "serve migrate", "serve sample"} <= names
    assert {"report", "measures", "trec_eval", "serve purge", "serve check-alerts"} <= names


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "rankscope")
def test_help_names_values_and_fits_100_columns(
    path: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert main([*path, "--help"]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and out.strip()
    for token in PYTHON_TYPES:
        assert token not in out, (token, out)
    usage = [line for line in out.splitlines() if "Usage:" in line]
    if path != ["trec_eval"]:  # trec_eval's own help, as trec_eval prints it
        assert len(usage) == 1
        # required arguments are named in capitals, not typer's {name}
        assert not re.search(r"\{\w+\}", usage[0]), usage[0]
        assert not re.search(r"\b[a-z_]+\.\.\.", usage[0]), usage[0]
    longest = max(out.splitlines(), key=len)
    assert len(longest) <= 100, longest


def test_value_names_follow_click() -> None:
    assert value_name("<int>") == "INTEGER" and value_name("<list[str]>") == "TEXT"
    assert value_name("<path>") == "PATH" and value_name("<float>...") == "FLOAT..."
    assert value_name("<table|json>") == "[table|json]"
    assert value_name("<list[a|b]>") == "[a|b]"


def test_root_help_gives_each_command_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for path, command in walk():
        if len(path) != 1:
            continue
        summary = (command.help or "").strip().split("\n\n")[0]
        # typer's rich help keeps a docstring's line breaks: a summary over two lines is cut
        assert "\n" not in summary, (path, summary)
        rows = [line for line in out.splitlines() if re.match(rf"│ {re.escape(path[0])} ", line)]
        assert len(rows) == 1 and summary in rows[0], (path, rows)


def option_help(out: str, option: str) -> str:
    """An option's rows of a help panel, joined: from its row to the next option's."""
    rows = out.splitlines()
    (start,) = [i for i, row in enumerate(rows) if row.startswith(f"│ {option} ")]
    end = start + 1
    while end < len(rows) and rows[end].startswith("│   "):
        end += 1
    return " ".join(" ".join(row.strip("│ ").split()) for row in rows[start:end])


def test_serve_shows_the_settings_defaults(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pydantic_settings")
    from rankscope.service.settings import ServiceSettings

    fields = ServiceSettings.model_fields
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["serve", "--help"]) == 0
    out = capsys.readouterr().out
    for option, field in [
        ("--database-url", "database_url"),
        ("--host", "host"),
        ("--port", "port"),
        ("--workers", "workers"),
        ("--bulk-processes", "bulk_processes"),
        ("--threshold", "default_threshold"),
    ]:
        shown = option_help(out, option)
        assert f"[default: {fields[field].default}]" in shown, (option, shown)


# -- old spellings ------------------------------------------------------------------------------

#: (command, old spelling) -> (arguments with the old spelling, the same with the new one)
SERVE = [p for p in COMMANDS if p[:1] == ["serve"]]
ALIASES: dict[tuple[str, str], tuple[list[str], list[str]]] = {
    ("bench", "-q"): (["-q"], ["--quiet"]),
    ("bench", "--all-queries"): (["--all-queries"], ["--view", "all"]),
    ("bench", "-c"): (["-c", "a", "-c", "b"], ["--configuration", "a", "--configuration", "b"]),
    ("bench", "--config"): (["--config", "a"], ["--configuration", "a"]),
    ("demo", "-q"): (["-q"], ["--quiet"]),
    ("demo", "--all-queries"): (["--all-queries"], ["--view", "all"]),
    ("pool", "-d"): (["-d", "5"], ["-M", "5"]),
    ("judge", "--min-label"): (["--min-label", "1"], ["--min-grade", "1"]),
    ("judge", "--max-label"): (["--max-label", "9"], ["--max-grade", "9"]),
    ("judge", "--cache"): (["--cache", "c.sqlite"], ["--cache-path", "c.sqlite"]),
    ("agree", "--json"): (["--json"], ["--format", "json"]),
    ("agree", "--threshold"): (["--threshold", "2"], ["-l", "2"]),
    ("serve calibrate", "--min-grade"): (["--min-grade", "2"], ["--rel-level", "2"]),
    **{
        (" ".join(p), "-d"): (
            ["-d", "sqlite:///x.sqlite"],
            ["--database-url", "sqlite:///x.sqlite"],
        )
        for p in SERVE
    },
}


def declared_aliases() -> dict[tuple[str, str], tuple[Alias, ...]]:
    found = {}
    for path, command in walk():
        specs = getattr(command.callback, "rankscope_aliases", ())
        for spec in specs:
            found[(" ".join(path), spec.old)] = specs
    return found


def command(path: list[str]) -> Any:
    return {" ".join(p): c for p, c in walk()}[" ".join(path)]


def parsed(path: list[str], args: list[str]) -> dict[str, Any]:
    """The parameters ``rankscope PATH ARGS`` gives its command (required ones may be left out)."""
    ctx = command(path).make_context(path[-1], list(args), resilient_parsing=True)
    return dict(ctx.params)


def test_every_old_spelling_is_listed_here_and_in_docs_cli_md() -> None:
    declared = declared_aliases()
    assert set(declared) == set(ALIASES)
    docs = (REPO / "docs" / "cli.md").read_text()
    table = docs.split("## Deprecated spellings", 1)[1]
    for _, old in declared:
        assert re.search(rf"`{re.escape(old)}( [A-Z]+)?`", table), old


@pytest.mark.parametrize("key", sorted(ALIASES), ids=" ".join)
def test_an_old_spelling_sets_what_the_new_one_does_and_prints_a_note(
    key: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    name, old = key
    path = name.split()
    old_args, new_args = ALIASES[key]
    specs = declared_aliases()[key]
    (spec,) = [s for s in specs if s.old == old]
    with_old = merge_aliases(specs, parsed(path, old_args))
    assert capsys.readouterr().err == deprecation_note(spec.old, spec.new) + "\n"
    with_new = merge_aliases(specs, parsed(path, new_args))
    assert capsys.readouterr().err == ""  # the new spelling: no note
    assert with_old == with_new
    assert with_new[spec.param] not in (None, [], False)


def test_old_spellings_work_end_to_end_with_the_same_exit_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_cli_bench import tiny_suite

    def note(old: str, new: str) -> str:
        return deprecation_note(old, new)

    suite = tiny_suite(tmp_path)
    out = tmp_path / "out"
    assert main(["bench", str(suite), "-o", str(out), "-q", "-c", "lite", "--all-queries"]) == 0
    printed, err = capsys.readouterr()
    assert "tiny: all 3 judged queries" in printed  # --view all
    assert "lite-chunks" not in printed  # --configuration lite
    for line in (note("-q", "--quiet"), note("-c", "--configuration")):
        assert line in err.splitlines()
    assert note("--all-queries", "--view all") in err.splitlines()
    assert "━" not in err  # -q: no progress bar (stderr is no terminal here anyway)

    pool = tmp_path / "pool.jsonl"
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"{q}\tquery {q}\n" for q in range(101, 111)))
    run = EXAMPLES / "bm25.run"
    args = ["pool", str(run), "--queries", str(queries), "-o", str(pool)]
    assert main([*args, "-d", "2"]) == 0
    assert "at depth 2" in capsys.readouterr().out
    assert len(pool.read_text().splitlines()) == 20  # 10 queries x 2

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    cache = tmp_path / "c.sqlite"
    judge = ["judge", str(pool), "--dry-run", "--cache", str(cache), "--max-label", "2"]
    assert main(judge) == 0
    err = capsys.readouterr().err
    assert note("--cache", "--cache-path") in err and note("--max-label", "--max-grade") in err
    assert cache.is_file()

    qrels = str(EXAMPLES / "qrels.txt")
    assert main(["agree", qrels, qrels, "--json"]) == 0
    printed, err = capsys.readouterr()
    assert json.loads(printed)["labels"]["kappa_binary"] == 1.0
    assert note("--json", "--format json") in err

    db = tmp_path / "m.sqlite"
    assert main(["serve", "migrate", "-d", f"sqlite:///{db}"]) == 0
    assert db.is_file() and note("-d", "--database-url") in capsys.readouterr().err
    # an error keeps its status: 2 for bad input, whichever spelling
    assert main(["serve", "migrate", "-d", "mysql://x/y"]) == 2
    assert main(["serve", "migrate", "--database-url", "mysql://x/y"]) == 2


@pytest.mark.parametrize(
    ("path", "formats"),
    [
        (["eval"], ["table", "json", "csv", "markdown"]),
        (["compare"], ["table", "json", "csv", "markdown", "latex"]),
        (["bench"], ["table", "json", "csv", "markdown", "fts"]),
        (["demo"], ["table", "json", "csv", "markdown", "fts"]),
        (["agree"], ["table", "json"]),
    ],
)
def test_format_choices_come_from_one_enum(path: list[str], formats: list[str]) -> None:
    (option,) = [p for p in command(path).params if p.name == "output_format"]
    assert option.opts == ["--format", "-f"]
    choices = [str(c.value if isinstance(c, Format) else c) for c in option.type_descriptor.choices]
    assert choices == formats
    assert set(choices) <= {f.value for f in Format}


BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "qrels.txt", "bm25.run", "dense.run", "-m", "ndcg", "-m", "map", "-q"],
        ["compare", "qrels.txt", "bm25.run", "dense.run", "-m", "ndcg", "-f", "json"],
        ["diff", "qrels.txt", "bm25.run", "dense.run", "-m", "ndcg", "-f", "json"],
    ],
    ids=["eval", "compare", "diff"],
)
def test_a_byte_order_mark_scores_as_without_it_and_is_noted_once(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
) -> None:
    """Windows tools start UTF-8 files with U+FEFF; read as part of the first query id it
    splits that query's judgments (nDCG 0.667 became 0.5, silently)."""
    names = ("qrels.txt", "bm25.run", "dense.run")
    outputs = []
    for marked in ((), ("qrels.txt", "bm25.run")):
        folder = tmp_path / ("bom" if marked else "plain")
        folder.mkdir()
        for name in names:
            text = (EXAMPLES / name).read_bytes()
            (folder / name).write_bytes(BOM + text if name in marked else text)
        monkeypatch.chdir(folder)
        code = main(args)
        out, err = capsys.readouterr()
        assert code == 0, err
        outputs.append(out)
        # once per file (the qrels are read beside the runs: in either order)
        assert sorted(err.splitlines()) == [
            f"rankscope: warning: {name}: starts with a UTF-8 byte-order mark; ignored"
            for name in sorted(marked)
        ]
    assert outputs[1] == outputs[0]
    assert "\ufeff" not in outputs[1]
