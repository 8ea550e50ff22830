"""Options and helpers shared by commands: one definition each, with its help text.

Commands declare a shared option with its type alias and their own default, e.g.
``provider: ProviderOption = "anthropic"``, so the flag name and help read the same everywhere
(the ``Annotated`` way typer and FastAPI share parameters).
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from rankscope.errors import InputError

# -- output formats and views (every command) ---------------------------------------------------


class Format(StrEnum):
    """Every ``--format``; a command accepts the subset it can write (a ``Literal`` of these)."""

    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"
    latex = "latex"
    fts = "fts"  # the full-text benchmark's table (bench)


class View(StrEnum):
    """The queries a benchmark's configurations are compared over (bench, demo, compare,
    report): those every configuration answered, or every judged query (a skipped one scores
    0)."""

    answered = "answered"
    all = "all"


BenchViewOption = Annotated[
    View | None,
    typer.Option(
        "--view",
        help="Benchmark only: the judged queries every configuration answered (answered, the "
        "default) or every judged query, a skipped one scoring 0 (all).",
        show_default=False,
    ),
]


def lean_numpy() -> None:
    """numpy set up for a command that makes large arrays once and does no linear algebra
    (``eval``); both settings are read when numpy is first imported, so this must run before
    that, and a value the user set is kept.

    - One OpenBLAS thread: numpy loads OpenBLAS, which starts a thread per core that spins for
      a while before it sleeps (about 50 ms of CPU at start-up here, more where cores are many).
    - No transparent huge pages for numpy's arrays (``NUMPY_MADVISE_HUGEPAGE=0``): the kernel
      zeroes a fresh 2 MiB page at first touch, and on a 10-million-line run that cost 0.6-0.8 s
      of system time against 0.3-0.5 s with 4 KiB pages, in five alternating runs each on an
      idle two-core machine (user time the same; bench/RESULTS.md).
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


# -- evaluation, as trec_eval's flags (eval, compare) -----------------------------------------

DepthOption = Annotated[
    int | None,
    typer.Option(
        "--depth",
        "-M",
        metavar="N",
        help="Keep only the top N documents of each query (trec_eval -M).",
    ),
]
RelLevelOption = Annotated[
    int,
    typer.Option(
        "--rel-level", "-l", metavar="N", help="Lowest grade counted relevant (trec_eval -l)."
    ),
]
JudgedOnlyOption = Annotated[
    bool,
    typer.Option("--judged-only", "-J", help="Drop unjudged documents first (trec_eval -J)."),
]

# -- LLM providers (judge, needle) ------------------------------------------------------------

ProviderOption = Annotated[
    str,
    typer.Option("--provider", metavar="NAME", help="anthropic, openai, or one from the config."),
]
ModelOption = Annotated[
    str | None,
    typer.Option("--model", metavar="NAME", help="Model id or alias (default: the provider's)."),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        metavar="URL",
        help="Server URL, e.g. a local OpenAI-compatible server ($OPENAI_BASE_URL / "
        "$ANTHROPIC_BASE_URL are read the same way).",
    ),
]
ApiKeyEnvOption = Annotated[
    str | None,
    typer.Option("--api-key-env", metavar="VAR", help="Environment variable holding the key."),
]
JudgeConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        metavar="FILE",
        help="Judge settings file (YAML or TOML; else $RANKSCOPE_JUDGE_CONFIG).",
    ),
]
VerboseOption = Annotated[
    int,
    typer.Option(
        "--verbose",
        "-v",
        count=True,
        show_default=False,
        help="-v info, -vv debug (each exchange).",
    ),
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Print the calls, tokens and cost it would take; stop.")
]

# -- engines (needle) -------------------------------------------------------------------------

EngineOptionOption = Annotated[
    list[str],
    typer.Option(
        "--engine-option",
        metavar="KEY=VALUE",
        help="Engine option (repeatable); values are YAML.",
    ),
]


def parse_engine_options(items: list[str]) -> dict[str, Any]:
    """``["k=3", "path=idx.db"]`` -> ``{"k": 3, "path": "idx.db"}`` (values read as YAML)."""
    import yaml  # pyyaml: only where an engine option is given

    options: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(
                "an engine option is KEY=VALUE", value=item, hint="e.g. --engine-option path=idx.db"
            )
        try:
            options[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            options[key.strip()] = value
    return options


# -- spellings kept for one release ------------------------------------------------------------

F = TypeVar("F", bound=Callable[..., Any])
_SAME: Any = object()


@dataclass(frozen=True)
class Alias:
    """An old spelling of an option, kept (hidden) for one release.

    ``old`` sets the command's parameter ``param`` as its current spelling ``new`` does; with
    ``value``, ``old`` is a flag that stands for ``new`` with that value (``--json`` for
    ``--format json``). Using it prints one note on standard error; the exit status is not
    changed.
    """

    old: str
    param: str
    new: str
    value: Any = _SAME


def deprecation_note(old: str, new: str) -> str:
    return f"rankscope: note: {old} is deprecated here; use {new}"


def aliases(*specs: Alias) -> Callable[[F], F]:
    """Give a command hidden options for its old spellings, merged into the current ones.

    Each old spelling becomes a hidden option of the command (of the current option's type, or
    a flag for an :class:`Alias` with a ``value``); when it is given, its value replaces the
    current option's (a repeatable option's values are added) and a note names the new
    spelling. The command's own code sees only the current parameters.
    """

    def decorate(func: F) -> F:
        signature = inspect.signature(func, eval_str=True)
        hidden = []
        for i, spec in enumerate(specs):
            if spec.value is _SAME:
                kind: Any = _value_type(signature.parameters[spec.param].annotation) | None
            else:
                kind = bool | None
            hidden.append(
                inspect.Parameter(
                    f"_alias_{i}",
                    inspect.Parameter.KEYWORD_ONLY,
                    default=None,
                    annotation=Annotated[kind, typer.Option(spec.old, hidden=True)],
                )
            )

        @functools.wraps(func)
        def command(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **merge_aliases(specs, kwargs))

        params = [*signature.parameters.values(), *hidden]
        command.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        command.rankscope_aliases = specs  # type: ignore[attr-defined]
        return command  # type: ignore[return-value]

    return decorate


def merge_aliases(specs: tuple[Alias, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The command's parameters with the old spellings given merged into the current ones
    (the hidden ``_alias_N`` parameters removed); one note on stderr for each one used."""
    merged = dict(kwargs)
    for i, spec in enumerate(specs):
        given = merged.pop(f"_alias_{i}", None)
        if given is None or given is False or given == [] or given == ():
            continue
        echo_err(deprecation_note(spec.old, spec.new))
        if spec.value is not _SAME:
            merged[spec.param] = spec.value
        elif isinstance(given, list | tuple):
            merged[spec.param] = [*(merged.get(spec.param) or []), *given]
        else:
            merged[spec.param] = given
    return merged


def _value_type(annotation: Any) -> Any:
    """``Annotated[int | None, ...]`` -> ``int``; ``list[str]`` stays ``list[str]``."""
    if typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kept = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(kept) == 1:
            return kept[0]
    return annotation


# -- output -----------------------------------------------------------------------------------


def setup_logging(verbose: int) -> None:
    level = logging.WARNING if verbose <= 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(
        level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    logging.getLogger("rankscope").setLevel(level)


def echo_err(text: str) -> None:
    typer.echo(text, err=True)


def fmt(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def money(value: float | None) -> str:
    if value is None:
        return "unknown (no price for this model: --price-in/--price-out, or the judge config)"
    return f"${value:.4f}"


__all__ = [
    "Alias",
    "ApiKeyEnvOption",
    "BaseUrlOption",
    "BenchViewOption",
    "DryRunOption",
    "EngineOptionOption",
    "Format",
    "JudgeConfigOption",
    "ModelOption",
    "ProviderOption",
    "VerboseOption",
    "View",
    "aliases",
    "deprecation_note",
    "echo_err",
    "fmt",
    "merge_aliases",
    "money",
    "parse_engine_options",
    "setup_logging",
]
