"""Options and helpers shared by commands: one definition each, with its help text.

Commands declare a shared option with its type alias and their own default, e.g.
``provider: ProviderOption = "anthropic"``, so the flag name and help read the same everywhere
(the ``Annotated`` way typer and FastAPI share parameters).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from rankscope.errors import InputError


def no_blas_threads() -> None:
    """One OpenBLAS thread for a command that does no linear algebra (``eval``).

    numpy loads OpenBLAS, which starts a thread per core that spins for a while before it
    sleeps (about 50 ms of CPU at start-up here, more where cores are many). Its thread count
    is read once, when numpy is first imported, so this must run before that; a value the user
    set is kept.
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


# -- evaluation, as trec_eval's flags (eval, compare) -----------------------------------------

DepthOption = Annotated[
    int | None,
    typer.Option(
        "--depth", "-M", help="Keep only the top N documents of each query (trec_eval -M)."
    ),
]
RelLevelOption = Annotated[
    int, typer.Option("--rel-level", "-l", help="Lowest grade counted relevant (trec_eval -l).")
]
JudgedOnlyOption = Annotated[
    bool,
    typer.Option("--judged-only", "-J", help="Drop unjudged documents first (trec_eval -J)."),
]

# -- LLM providers (judge, needle) ------------------------------------------------------------

ProviderOption = Annotated[
    str, typer.Option("--provider", help="anthropic, openai, or one from the config.")
]
ModelOption = Annotated[
    str | None, typer.Option("--model", help="Model id or alias (default: the provider's).")
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="Server URL, e.g. a local OpenAI-compatible server ($OPENAI_BASE_URL / "
        "$ANTHROPIC_BASE_URL are read the same way).",
    ),
]
ApiKeyEnvOption = Annotated[
    str | None, typer.Option("--api-key-env", help="Environment variable holding the key.")
]
JudgeConfigOption = Annotated[
    Path | None, typer.Option("--config", help="Judge config (YAML or TOML).")
]
VerboseOption = Annotated[
    int, typer.Option("--verbose", "-v", count=True, help="-v info, -vv debug (each exchange).")
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Print the calls, tokens and cost it would take; stop.")
]

# -- engines (needle) -------------------------------------------------------------------------

EngineOptionOption = Annotated[
    list[str],
    typer.Option("--engine-option", help="Engine option KEY=VALUE (repeatable); values are YAML."),
]


def parse_engine_options(items: list[str]) -> dict[str, Any]:
    """``["k=3", "path=idx.db"]`` -> ``{"k": 3, "path": "idx.db"}`` (values read as YAML)."""
    import yaml

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
    return "unknown (no price for this model in the config)" if value is None else f"${value:.4f}"


__all__ = [
    "ApiKeyEnvOption",
    "BaseUrlOption",
    "DryRunOption",
    "EngineOptionOption",
    "JudgeConfigOption",
    "ModelOption",
    "ProviderOption",
    "VerboseOption",
    "echo_err",
    "fmt",
    "money",
    "parse_engine_options",
    "setup_logging",
]
