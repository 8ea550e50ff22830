"""Conventional ``--help``: value names instead of Python types (patches of typer's display).

typer 0.29 prints Python types where command-line tools print value names: ``<bool>`` after
every flag (``--help <bool>``), ``<int>``, ``<path>`` or ``<list[str]>`` in the type column of
an option without a metavar, ``<path>`` beside every argument although its name column already
says what it is, and ``{qrels}`` for a required argument in the usage line. Nor does it print a
textual default as written: ``show_default="127.0.0.1"`` shows as ``[default: (127.0.0.1)]``.
It has no setting for any of these, so :func:`install` replaces four small methods:

- an option's value name: its metavar; none for a flag or a counter (they take no value); for
  an option without a metavar, click's conventional names (``INTEGER``, ``FLOAT``, ``TEXT``,
  ``PATH``, choices as ``[table|json]``);
- an argument: its metavar or its name in capitals (``RUN...`` where it takes several), in the
  usage line too (``[RUN]...`` where it may be left out), and no type beside it;
- a default given as text (``show_default="127.0.0.1"``): shown as written.

Commands give their options explicit metavars (MEASURE, FILE, DIR, N, NAME, URL); the
fallbacks only keep a forgotten one readable. Each replacement checks that what it replaces
exists: with a typer whose internals differ, the help keeps typer's own display (uglier, still
correct) instead of failing.

typer's help module imports rich's Markdown and Traceback at its top, with markdown-it,
pygments and rich's pretty-printer behind them (about half of ``rankscope --help``), for help
written in Markdown and for tracebacks, neither of which this help uses: :func:`install` has it
imported with the two names standing in, each importing its module at its first use.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from typer import core

#: click's names for the types typer prints as ``<int>``, ``<str>``...
_TYPE_NAMES = {
    "int": "INTEGER",
    "float": "FLOAT",
    "str": "TEXT",
    "path": "PATH",
    "file": "FILE",
    "directory": "DIR",
    "datetime": "DATETIME",
    "bool": "BOOLEAN",
}

_installed: list[bool] = []


def value_name(typer_display: str) -> str:
    """``<int>`` -> ``INTEGER``, ``<list[str]>`` -> ``TEXT``, ``<a|b>`` -> ``[a|b]``."""
    text = typer_display
    suffix = ""
    if text.endswith("..."):
        text, suffix = text[:-3], "..."
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    while text.startswith("list[") and text.endswith("]"):
        text = text[5:-1]
    if "|" in text:
        return f"[{text}]{suffix}"
    return _TYPE_NAMES.get(text, text.upper()) + suffix


def argument_name(param: Any) -> str:
    """An argument's name in help and errors: its metavar, else its name in capitals; ``...``
    where it takes several values (typer's help panel adds that itself to a name without a
    metavar)."""
    if param.metavar is None:
        return str(param.name or "").upper()
    name = str(param.metavar)
    return name + "..." if param.nargs != 1 and not name.endswith("...") else name


def install() -> bool:
    """Replace typer's display of value names, arguments and textual defaults; True when done
    (False: this typer's internals differ, and its own display stays)."""
    if _installed:
        return True
    option = getattr(core, "TyperOption", None)
    argument = getattr(core, "TyperArgument", None)
    needed = (
        (option, "display_type_rich"),
        (argument, "display_type_rich"),
        (argument, "_usage_display_name"),
        (argument, "display_name_raw"),
        (core, "_get_default_string"),
    )
    if any(owner is None or not hasattr(owner, name) for owner, name in needed):
        return False
    typer_option_type = option.display_type_rich  # type: ignore[union-attr]
    typer_default_string = core._get_default_string

    def option_type(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) or getattr(self, "count", False):
            return None  # a flag takes no value: nothing to name
        if self.metavar is not None:
            return str(self.metavar)
        shown = typer_option_type(self, ctx)
        return None if shown is None else value_name(str(shown))

    def argument_type(self: Any, ctx: Any) -> str | None:
        return None  # the name column says what the argument is

    def usage_name(self: Any) -> str:
        name = str(self.metavar or (self.name or "").upper())
        if self.nargs != 1:
            name = name.removesuffix("...")
            return f"{name}..." if self.required else f"[{name}]..."
        return name if self.required else f"[{name}]"

    def default_string(obj: Any, *, ctx: Any, show_default_is_str: bool, default_value: Any) -> str:
        if show_default_is_str:
            return str(obj.show_default)  # typer wraps it in parentheses
        return str(
            typer_default_string(
                obj, ctx=ctx, show_default_is_str=False, default_value=default_value
            )
        )

    for command in (core.TyperCommand, core.TyperGroup):
        command.format_help = _lean_rich_first(command.format_help)  # type: ignore[method-assign]
    option.display_type_rich = option_type  # type: ignore[union-attr]
    argument.display_type_rich = argument_type  # type: ignore[union-attr]
    argument._usage_display_name = usage_name  # type: ignore[union-attr]
    argument.display_name_raw = property(argument_name)  # type: ignore[union-attr]
    core._get_default_string = default_string
    _installed.append(True)
    return True


#: what typer's help module imports that its help does not use: (module, name)
_DEFERRED = (("rich.markdown", "Markdown"), ("rich.traceback", "Traceback"))


class _Deferred(type):
    """A class standing in for a class of another module, imported at its first use."""

    _where: tuple[str, str]

    def _real(cls) -> Any:
        module, name = cls._where
        return getattr(importlib.import_module(module), name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls._real(), name)


def import_rich_utils() -> types.ModuleType:
    """typer's help module, imported with :data:`_DEFERRED` standing in (only while it is
    imported: any later import of those modules gets the real ones)."""
    if "typer.rich_utils" in sys.modules:
        return sys.modules["typer.rich_utils"]
    stubs = {}
    for module, name in _DEFERRED:
        if module not in sys.modules:
            stub = types.ModuleType(module)
            setattr(stub, name, _Deferred(name, (), {"_where": (module, name)}))
            stubs[module] = sys.modules[module] = stub
    try:
        return importlib.import_module("typer.rich_utils")
    except ImportError:  # it wants more of those modules than the names: the real ones
        sys.modules.pop("typer.rich_utils", None)
        for module in stubs:
            sys.modules.pop(module, None)
        stubs.clear()
        return importlib.import_module("typer.rich_utils")
    finally:
        for module, stub in stubs.items():
            if sys.modules.get(module) is stub:
                del sys.modules[module]


def _lean_rich_first(format_help: Any) -> Any:
    def lean_format_help(self: Any, ctx: Any, formatter: Any) -> Any:
        import_rich_utils()
        return format_help(self, ctx, formatter)

    return lean_format_help


__all__ = ["argument_name", "import_rich_utils", "install", "value_name"]
