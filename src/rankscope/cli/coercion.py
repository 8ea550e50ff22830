"""Command-line values converted without pydantic where the conversion is plain (one patch of
typer's value coercion).

typer 0.29 converts every parameter's value (the defaults too) through a pydantic
``TypeAdapter`` built on first use: importing pydantic and building the adapters of one command
costs about 0.1 s, more than ``rankscope eval`` on a small file spends evaluating. :func:`install`
puts a plain conversion first for the values a command line gives (text; whole and decimal
numbers written the usual way; paths; choices of a ``Literal`` or an ``Enum``; lists of these),
done by the functions typer's adapters call themselves. Anything else (a number written
``1_000``, a bounded or clamped number, a custom parser, a tuple, a conversion that fails)
goes to typer's own adapter, which gives the same value or the same error as before; nothing
this module accepts is converted differently. With a typer whose internals differ,
:func:`install` changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from typer import _coercion, _param_types, core

_INT = re.compile(r"[+-]?[0-9]{1,18}")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

#: one value's plain conversion: (value, parameter, click context) -> converted; raises
#: _NotPlain (or any error) where typer's adapter must decide
Convert = Callable[[Any, Any, Any], Any]

_installed: list[bool] = []


class _NotPlain(Exception):
    """A value the plain conversion leaves to typer's adapter."""


@dataclass(frozen=True)
class _PlainParam(_coercion.RuntimeParam):  # type: ignore[misc]
    """typer's runtime parameter with a plain conversion first; typer's own (built on first
    need) for what the plain one leaves."""

    convert: Convert = field(default=lambda value, param, ctx: value)
    typer_param: Callable[[], Any] = field(default=lambda: None)
    many: bool = False

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            if not self.many:
                return self.convert(value, param, ctx)
            items = value if isinstance(value, list | tuple) else [value]
            return [self.convert(item, param, ctx) for item in items]
        except Exception:  # typer's adapter gives the value or the error
            return self.typer_param()._coerce_value(value, param=param, ctx=ctx)


def _text(value: Any, param: Any, ctx: Any) -> Any:
    if isinstance(value, str):
        return value
    raise _NotPlain


def _flag(value: Any, param: Any, ctx: Any) -> Any:
    if type(value) is bool:
        return value
    raise _NotPlain


def _int(value: Any, param: Any, ctx: Any) -> Any:
    if type(value) is int:
        return value
    if isinstance(value, str) and _INT.fullmatch(value):
        return int(value)
    raise _NotPlain


def _float(value: Any, param: Any, ctx: Any) -> Any:
    if type(value) is float:
        return value
    if type(value) is int:
        return float(value)
    if isinstance(value, str) and _FLOAT.fullmatch(value):
        return float(value)
    raise _NotPlain


def _leaf(annotation: Any, info: Any) -> Convert | None:
    """The plain conversion of one value of ``annotation``; None: typer's adapter only."""
    if info.parser is not None:
        return None
    if (isinstance(annotation, type) and issubclass(annotation, Enum)) or get_origin(
        annotation
    ) is Literal:
        choices = list(annotation) if get_origin(annotation) is None else get_args(annotation)

        def choice(value: Any, param: Any, ctx: Any) -> Any:
            return _param_types.coerce_cli_choice(
                value, choices=choices, case_sensitive=info.case_sensitive, ctx=ctx
            )

        return choice
    if annotation is str:
        return _text
    if annotation is bool:
        return _flag
    bounded = info.min is not None or info.max is not None or info.clamp
    if annotation is int and not bounded:
        return _int
    if annotation is float and not bounded:
        return _float
    if isinstance(annotation, type) and issubclass(annotation, Path):
        path_type = info.path_type or annotation

        def path(value: Any, param: Any, ctx: Any) -> Any:
            if not isinstance(value, str | Path):
                raise _NotPlain
            return _param_types.coerce_cli_path(
                path_type(value), info, path_type=path_type, param=param, ctx=ctx
            )

        return path
    return None


def install() -> bool:
    """Put the plain conversion before typer's adapters; True when done (False: this typer's
    internals differ, and its own conversion stays)."""
    if _installed:
        return True
    needed = (
        (core, "build_runtime_param"),
        (_coercion, "RuntimeParam"),
        (_param_types, "coerce_cli_choice"),
        (_param_types, "coerce_cli_path"),
    )
    if any(not hasattr(owner, name) for owner, name in needed):
        return False
    typer_build = core.build_runtime_param  # type: ignore[attr-defined]

    def build(descriptor: Any) -> Any:
        annotation, info = descriptor.annotation, descriptor.parameter_info
        many = get_origin(annotation) is list
        leaf = get_args(annotation)[0] if many and len(get_args(annotation)) == 1 else annotation
        convert = None if descriptor.file_annotation is not None else _leaf(leaf, info)
        if convert is None or (many and leaf is annotation):
            return typer_build(descriptor)
        built: list[Any] = []

        def typer_param() -> Any:
            if not built:
                built.append(typer_build(descriptor))
            return built[0]

        return _PlainParam(
            parameter_info=info,
            annotation=annotation,
            convert=convert,
            typer_param=typer_param,
            many=many,
        )

    core.build_runtime_param = build  # type: ignore[attr-defined]
    _installed.append(True)
    return True


__all__ = ["install"]
