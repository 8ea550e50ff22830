"""What every engine takes and needs, as data: ``rankscope engines``, the suite loader's option
check and the table in docs/engines.md all read it from here.

An engine's options are its constructor's keyword parameters: name, annotation, default, and the
values it accepts (a ``Literal`` annotation, or the class's ``option_choices``). What it needs
installed is :data:`ENGINE_NEEDS` (the extra and the modules it imports); whether those modules
are installed is asked of the import system without importing them.

:func:`option_problems` checks a configuration's options against that declaration before
anything is built: unknown names (with "did you mean" and the option list), missing required
options, values outside the accepted ones and values of the wrong type (a number where a
string is expected...). Nested engine specs (hybrid's ``engines``, rerank's ``engine``) are
checked too, each against its own engine.
"""

from __future__ import annotations

import difflib
import importlib.util
import inspect
import os
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rankscope.engines.base import (
    BUILTIN_ENGINES,
    Engine,
    engine_class,
    engine_names,
)
from rankscope.errors import ConfigError, EngineError, RankscopeError


@dataclass(frozen=True, slots=True)
class EngineNeeds:
    """What an engine needs installed: the extra that installs it (``None``: nothing beyond
    rankscope itself) and the modules it imports, all of which must be importable."""

    extra: str | None = None
    modules: tuple[str, ...] = ()
    note: str = ""


#: per built-in engine: its extra and the modules it imports (see pyproject.toml's extras)
ENGINE_NEEDS: Mapping[str, EngineNeeds] = {
    "anserini": EngineNeeds("anserini", ("jnius",), "and Anserini's jar (docs/engines.md)"),
    "bm25s": EngineNeeds("bm25s", ("bm25s", "Stemmer")),
    "chroma": EngineNeeds("chroma", ("chromadb",)),
    "duckdb": EngineNeeds("duckdb", ("duckdb",)),
    "elasticsearch": EngineNeeds("es", ("elasticsearch",), "and a running server"),
    "faiss": EngineNeeds("faiss", ("faiss",)),
    "hnswlib": EngineNeeds("hnswlib", ("hnswlib",)),
    "http": EngineNeeds(None, ("httpx",), "your search API"),
    "hybrid": EngineNeeds(None, (), "what its member engines need"),
    "lancedb": EngineNeeds("lancedb", ("lancedb",)),
    "milvus": EngineNeeds("milvus", ("pymilvus", "milvus_lite")),
    "opensearch": EngineNeeds("opensearch", ("opensearchpy",), "and a running server"),
    "pgvector": EngineNeeds("pg", ("psycopg", "pgvector"), "and a PostgreSQL server"),
    "postgres": EngineNeeds("pg", ("psycopg",), "and a PostgreSQL server"),
    "python": EngineNeeds(None, (), "your retriever function"),
    "qdrant": EngineNeeds("qdrant", ("qdrant_client",)),
    "rerank": EngineNeeds("embed", (), "a cross-encoder or embedding backend (embed or onnx)"),
    "run_file": EngineNeeds(None, ()),
    "sqlite": EngineNeeds(None, ("sqlite3",)),
    "tantivy": EngineNeeds("tantivy", ("tantivy",)),
    "typesense": EngineNeeds("typesense", ("typesense",), "and its server binary"),
    "usearch": EngineNeeds("usearch", ("usearch",)),
    "vector": EngineNeeds("embed", (), "an embedding backend (embed or onnx; hashing: none)"),
}


@dataclass(frozen=True, slots=True)
class EngineOption:
    """One option of an engine: its name, type (the annotation as written), whether it is
    required, its default (JSON-ready) and the values it accepts (empty: any of its type)."""

    name: str
    type: str
    required: bool
    default: object
    choices: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "type": self.type,
            "required": self.required,
            "default": None if self.required else self.default,
            "choices": list(self.choices),
        }


@dataclass(frozen=True, slots=True)
class EngineInfo:
    """One engine as ``rankscope engines`` shows it."""

    name: str
    summary: str
    source: str  # "built-in", or the plugin package that provides it
    extra: str | None
    needs: tuple[str, ...]
    note: str
    installed: bool
    kinds: tuple[str, ...]
    thread_safe: bool
    embeds_text: bool
    composite: bool
    options: tuple[EngineOption, ...]
    open_options: bool  # takes any other keyword option (``**kwargs``, none declared)

    @property
    def install(self) -> str:
        """How to install what the engine needs ("" when nothing is needed)."""
        return "" if self.extra is None else f"pip install 'rankscope[{self.extra}]'"

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "summary": self.summary,
            "source": self.source,
            "installed": self.installed,
            "extra": self.extra,
            "install": self.install,
            "needs": list(self.needs),
            "note": self.note,
            "query_kinds": list(self.kinds),
            "thread_safe": self.thread_safe,
            "embeds_text": self.embeds_text,
            "composite": self.composite,
            "options": [o.to_dict() for o in self.options],
            "open_options": self.open_options,
        }


@dataclass(frozen=True, slots=True)
class OptionProblem:
    """What is wrong with one option: ``path`` inside the options mapping (``("modle",)``,
    ``("engines", 1, "fusion")``), the problem and how to fix it."""

    path: tuple[str | int, ...]
    problem: str
    hint: str


_REQUIRED = inspect.Parameter.empty
#: the type shown for an option an engine passes on (``extra_options``: the vector stores'
#: embedding options, typed and defaulted as the ``vector`` engine's)
PASSED_ON = "as the vector engine's"


def engine_options(cls: type[Engine]) -> tuple[EngineOption, ...]:
    """The options ``cls`` declares: its constructor's parameters, then its ``extra_options``."""
    return _declared(cls)[0]


def _declared(cls: type[Engine]) -> tuple[tuple[EngineOption, ...], dict[str, Any], bool]:
    """(the options, each option's resolved annotation, whether other keywords are taken)."""
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return (), {}, True
    hints = _annotations(cls)
    options: list[EngineOption] = []
    resolved: dict[str, Any] = {}
    takes_any = False
    for p in params:
        if p.kind is p.VAR_KEYWORD:
            takes_any = not cls.extra_options
            continue
        if p.kind is p.VAR_POSITIONAL:
            continue
        annotation = hints.get(p.name, Any)
        resolved[p.name] = annotation
        choices = cls.option_choices.get(p.name) or _literal_values(annotation)
        written = p.annotation if isinstance(p.annotation, str) else _type_text(p.annotation)
        options.append(
            EngineOption(
                name=p.name,
                type=written if p.annotation is not _REQUIRED else "any",
                required=p.default is _REQUIRED,
                default=None if p.default is _REQUIRED else _jsonable(p.default),
                choices=choices,
            )
        )
    named = {o.name for o in options}
    for name in cls.extra_options:
        if name not in named:
            options.append(
                EngineOption(name, PASSED_ON, False, None, cls.option_choices.get(name, ()))
            )
            resolved[name] = Any
    return tuple(options), resolved, takes_any


def _annotations(cls: type[Engine]) -> dict[str, Any]:
    """The constructor's annotations resolved where they can be (``from __future__ import
    annotations`` leaves strings; a name imported only for type checking stays ``Any``)."""
    init = cls.__init__
    try:
        return typing.get_type_hints(init)
    except Exception:  # a TYPE_CHECKING-only name: resolve parameter by parameter
        pass
    namespace = dict(vars(inspect.getmodule(init) or typing))
    out: dict[str, Any] = {}
    for name, text in getattr(init, "__annotations__", {}).items():
        try:
            out[name] = eval(text, namespace) if isinstance(text, str) else text
        except Exception:
            out[name] = Any
    return out


def _literal_values(annotation: Any) -> tuple[str, ...]:
    """The strings a ``Literal`` annotation (alone or in a union with None) allows."""
    if typing.get_origin(annotation) is Literal:
        return tuple(str(a) for a in typing.get_args(annotation))
    if _is_union(annotation):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _literal_values(args[0])
    return ()


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def _type_text(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def _jsonable(value: object) -> object:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return repr(value)


def _fits(annotation: Any, value: object) -> bool:
    """Whether ``value`` (as YAML gives it) has the annotated type; anything this check does
    not model (a class, a callable, a protocol) is accepted and left to the engine."""
    if annotation is Any or annotation is object:
        return True
    if _is_union(annotation):
        return any(_fits(a, value) for a in typing.get_args(annotation))
    origin = typing.get_origin(annotation)
    if origin is Literal:
        allowed = typing.get_args(annotation)
        if isinstance(value, str):  # engines compare case-insensitively (method: post)
            return value.casefold() in {str(a).casefold() for a in allowed}
        return value in allowed
    if origin is typing.Annotated:
        return _fits(typing.get_args(annotation)[0], value)
    base = origin or annotation
    if base is type(None):
        return value is None
    if base is bool:
        return isinstance(value, bool)
    if base is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if base is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if base is str:
        return isinstance(value, str)
    if base in (Path, os.PathLike):
        return isinstance(value, str | os.PathLike)
    if isinstance(base, type) and issubclass(base, Mapping | dict):
        return isinstance(value, Mapping)
    if isinstance(base, type) and issubclass(base, Sequence | list | tuple | set | frozenset):
        return isinstance(value, list | tuple | set | frozenset)
    return True


def _shown_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """``"did you mean `x`?"`` for a close spelling among ``choices``, else ``""``."""
    close = difflib.get_close_matches(word, sorted(choices), n=2, cutoff=0.6)
    if not close:
        return ""
    return "did you mean " + " or ".join(f"`{c}`" for c in close) + "?"


def option_problems(
    name: str, options: Mapping[str, Any], *, filled: frozenset[str] = frozenset()
) -> list[OptionProblem]:
    """What is wrong with ``options`` for engine ``name`` (empty: nothing); ``filled`` are
    options the benchmark gives the engine itself (``model`` from ``embedding_model``).

    An engine whose module cannot be imported is not checked here (building it reports why).
    """
    try:
        cls = engine_class(name)
    except EngineError:
        return [OptionProblem((), f"unknown engine {name!r}", _known_engines(name))]
    except RankscopeError as error:  # a plugin that fails to load
        return [OptionProblem((), str(error), "")]
    declared, types_of, takes_any = _declared(cls)
    by_name = {o.name: o for o in declared}
    listing = f"Engine {name!r} takes: " + (", ".join(o.name for o in declared) or "(no options)")
    problems: list[OptionProblem] = []
    missing = [
        o.name for o in declared if o.required and o.name not in options and o.name not in filled
    ]
    named_instead: set[str] = set()
    for key, value in options.items():
        option = by_name.get(str(key))
        if option is None:
            if takes_any:
                continue
            close = did_you_mean(str(key), list(by_name))
            if not close and len(missing) == 1 and missing[0] not in named_instead:
                # the one required option is missing and an unknown one is given: its
                # misnomer (function: for search:), whatever the spelling
                named_instead.add(missing[0])
                close = f"did you mean `{missing[0]}` (required, and missing)?"
            problems.append(
                OptionProblem(
                    (key,),
                    f"unknown option {key!r} for engine {name!r}",
                    (close.capitalize() + " " if close else "") + listing,
                )
            )
            continue
        problems.extend(_value_problems(name, option, types_of.get(option.name, Any), value))
        problems.extend(_nested_problems(key, value))
    for option in declared:
        if option.name in missing and option.name not in named_instead:
            problems.append(
                OptionProblem(
                    (option.name,),
                    f"engine {name!r} needs the option {option.name!r} ({option.type})",
                    listing,
                )
            )
    return problems


def _value_problems(
    engine: str, option: EngineOption, annotation: Any, value: object
) -> list[OptionProblem]:
    where = (option.name,)
    if option.choices and isinstance(value, str):
        if value.casefold() not in {c.casefold() for c in option.choices}:
            close = did_you_mean(value, option.choices)
            return [
                OptionProblem(
                    where,
                    f"option {option.name!r} of engine {engine!r} is {_short(value)}, not one "
                    f"of {', '.join(option.choices)}",
                    close.capitalize() if close else f"Write one of: {', '.join(option.choices)}",
                )
            ]
        return []
    if not _fits(annotation, value):
        return [
            OptionProblem(
                where,
                f"option {option.name!r} of engine {engine!r} must be {option.type}, not "
                f"{_shown_type(value)} {_short(value)}",
                f"Its default: {option.default!r}" if not option.required else "",
            )
        ]
    return []


def _nested_problems(key: str, value: object) -> list[OptionProblem]:
    """Problems of nested engine specs (a mapping with ``engine:``, or a list of them)."""
    specs: list[tuple[tuple[str | int, ...], Mapping[str, Any]]] = []
    if isinstance(value, Mapping) and isinstance(value.get("engine"), str):
        specs.append(((key,), value))
    elif isinstance(value, list):
        specs += [
            ((key, i), item)
            for i, item in enumerate(value)
            if isinstance(item, Mapping) and isinstance(item.get("engine"), str)
        ]
    out: list[OptionProblem] = []
    for prefix, spec in specs:
        member = {k: v for k, v in spec.items() if k != "engine"}
        for p in option_problems(str(spec["engine"]), member):
            out.append(OptionProblem((*prefix, *p.path), p.problem, p.hint))
    return out


def _known_engines(name: str) -> str:
    names = engine_names()
    close = did_you_mean(name, names)
    return (close.capitalize() + " " if close else "") + "Known engines: " + ", ".join(names)


def check_engine_options(
    name: str, options: Mapping[str, Any], *, filled: frozenset[str] = frozenset()
) -> None:
    """A ConfigError for the first of :func:`option_problems` (for library callers)."""
    problems = option_problems(name, options, filled=filled)
    if problems:
        first = problems[0]
        where = ".".join(str(p) for p in first.path)
        raise ConfigError(
            (f"options.{where}: " if where else "") + first.problem, hint=first.hint or None
        )


def engine_info(name: str) -> EngineInfo:
    """One engine's entry in the catalog (imports its module, not its client library)."""
    cls = engine_class(name)
    needs = ENGINE_NEEDS.get(name, EngineNeeds())
    source = "built-in"
    if name not in BUILTIN_ENGINES:
        source = _plugin_source(name)
    options, _, takes_any = _declared(cls)
    doc = inspect.getdoc(cls) or ""
    return EngineInfo(
        name=name,
        summary=doc.split("\n\n")[0].replace("\n", " ").strip(),
        source=source,
        extra=needs.extra,
        needs=needs.modules,
        note=needs.note,
        installed=all(_importable(m) for m in needs.modules),
        kinds=tuple(k for k in _kinds_order() if k in cls.supported_kinds),
        thread_safe=cls.thread_safe,
        embeds_text=cls.embeds_text,
        composite=cls.composite,
        options=options,
        open_options=takes_any,
    )


def _kinds_order() -> tuple[str, ...]:
    from rankscope.engines.base import QUERY_KINDS

    return QUERY_KINDS


def _plugin_source(name: str) -> str:
    from rankscope.plugins import ENGINE_GROUP, distribution_of, plugin_entry_points

    point = plugin_entry_points(ENGINE_GROUP).get(name)
    return "registered in code" if point is None else f"plugin {distribution_of(point)}"


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def engine_catalog() -> list[EngineInfo]:
    """Every engine: built-in, plugin and registered, by name."""
    return [engine_info(n) for n in engine_names()]


def catalog_markdown(infos: Sequence[EngineInfo] | None = None) -> str:
    """The engine table of docs/engines.md (a test checks the page holds exactly this)."""
    rows = [
        "| engine | extra | query kinds | thread-safe | options (default) |",
        "|---|---|---|---|---|",
    ]
    for info in infos if infos is not None else engine_catalog():
        if info.source != "built-in":
            continue
        options = ", ".join(
            f"`{o.name}`" + (" (required)" if o.required else f" ({_md_default(o.default)})")
            for o in info.options
            if o.type != PASSED_ON
        )
        if any(o.type == PASSED_ON for o in info.options):
            options += ", the `vector` engine's embedding options"
        if info.open_options:
            options += ", …"
        kinds = ", ".join(info.kinds) if len(info.kinds) < 5 else "all five"
        rows.append(
            f"| `{info.name}` | {info.extra or '—'} | {kinds} | "
            f"{'yes' if info.thread_safe else 'no'} | {options or '—'} |"
        )
    return "\n".join(rows) + "\n"


def _md_default(value: object) -> str:
    text = "null" if value is None else repr(value)
    text = text.replace("|", "\\|")
    return text if len(text) <= 30 else text[:27] + "…"


__all__ = [
    "ENGINE_NEEDS",
    "PASSED_ON",
    "EngineInfo",
    "EngineNeeds",
    "EngineOption",
    "OptionProblem",
    "catalog_markdown",
    "check_engine_options",
    "did_you_mean",
    "engine_catalog",
    "engine_info",
    "engine_options",
    "option_problems",
]
