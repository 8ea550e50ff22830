"""``rankscope engines [NAME]``: every engine, whether it is installed (and the extra that
installs it), its query kinds, capabilities and options, from
:mod:`rankscope.engines.catalog`."""

from __future__ import annotations

import json
from typing import Literal

import typer

from rankscope.cli.options import Format

# What a command runs on is imported inside it: every command module loads at start-up
# (cli/app.py), and the engine modules only with the command that runs.

EnginesFormat = Literal[Format.table, Format.json, Format.markdown]


def engines_command(
    name: str | None = typer.Argument(
        None, metavar="[NAME]", help="Show this engine's options in full.", show_default=False
    ),
    output_format: EnginesFormat = typer.Option(
        Format.table,
        "--format",
        "-f",
        help="table for people, json for scripts, markdown (the table of docs/engines.md).",
    ),
) -> None:
    """List the engines: installed or not, query kinds, options with types and defaults.

    Shows the extra that installs an engine that is not installed. Plugin engines (packages
    with a rankscope.engines entry point) are listed too.
    """
    from rankscope.engines.base import engine_names
    from rankscope.engines.catalog import catalog_markdown, engine_catalog, engine_info
    from rankscope.engines.catalog import did_you_mean as _close
    from rankscope.errors import ConfigError

    if name is not None and name not in engine_names():
        close = _close(name, engine_names())
        raise ConfigError(
            f"unknown engine {name!r}",
            hint=(close.capitalize() + " " if close else "")
            + "Run `rankscope engines` for the list",
        )
    infos = [engine_info(name)] if name is not None else engine_catalog()
    if output_format is Format.json:
        data = [i.to_dict() for i in infos]
        typer.echo(json.dumps(data[0] if name is not None else data, indent=2))
        return
    if output_format is Format.markdown:
        typer.echo(catalog_markdown(infos), nl=False)
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    if name is None:
        table = Table(title="Engines", title_justify="left")
        for column in ("engine", "installed", "extra", "query kinds", "thread-safe", "options"):
            table.add_column(column, overflow="fold")
        for info in infos:
            kinds = "all" if len(info.kinds) == 5 else ", ".join(info.kinds)
            table.add_row(
                info.name,
                "yes" if info.installed else "no",
                info.extra or "-",
                kinds,
                "yes" if info.thread_safe else "no",
                ", ".join(o.name for o in info.options) + (", ..." if info.open_options else ""),
            )
        console.print(table)
        console.print(
            "`rankscope engines NAME` shows one engine's option types and defaults.",
            markup=False,
            style="dim",
        )
        return
    info = infos[0]
    console.print(f"{info.name}: {info.summary}", markup=False, soft_wrap=True)
    state = "installed" if info.installed else f"not installed: {info.install}"
    if info.extra is None:
        state = "installed (nothing beyond rankscope)" if info.installed else state
    console.print(f"{state}" + (f"; needs {info.note}" if info.note else ""), markup=False)
    console.print(
        f"source: {info.source}; query kinds: {', '.join(info.kinds)}; thread-safe: "
        f"{'yes' if info.thread_safe else 'no'}; embeds text: "
        f"{'yes' if info.embeds_text else 'no'}; composite: {'yes' if info.composite else 'no'}",
        markup=False,
        soft_wrap=True,
    )
    table = Table(title="options", title_justify="left")
    for column in ("option", "type", "default", "allowed values"):
        table.add_column(column, overflow="fold")
    for option in info.options:
        default = "(required)" if option.required else json.dumps(option.default)
        cells = (option.name, option.type, default, ", ".join(option.choices) or "-")
        table.add_row(*(escape(c) for c in cells))  # types hold [...]: not markup
    console.print(table)
    if info.open_options:
        console.print("(also takes other options, passed on as they are)", markup=False)


def register(app: typer.Typer) -> None:
    app.command("engines")(engines_command)
