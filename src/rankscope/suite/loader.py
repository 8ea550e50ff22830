"""Load a suite file: YAML with line numbers -> validated spec -> resolved :class:`Suite`.

Every problem is reported as a :class:`~rankscope.errors.ConfigError` naming the file, the line,
the path inside the YAML (``queries[3].kind``), what was found and what was expected.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from rankscope.data.qrels import Qrels
from rankscope.engines.base import (
    Query,
    embedding_engine_names,
    engine_class,
    engine_names,
    spec_takes_embedding_model,
)
from rankscope.errors import ConfigError
from rankscope.suite.corpus import corpus_qrels, corpus_queries, read_jsonl_queries
from rankscope.suite.model import Suite
from rankscope.suite.relevance import CodeExpectation, JudgmentSet, read_qrels_file
from rankscope.suite.schema import (
    BenchConfig,
    QueriesFile,
    QuerySpec,
    SuiteSpec,
    parse_boosted_field,
)
from rankscope.suite.sweep import check_embedding_extra, expand_sweep
from rankscope.suite.yamlpos import PathKey, format_path, line_of, load_yaml_with_lines, read_text

_MAX_REPORTED = 8


def load_suite(path: str | Path, *, probe: bool | Collection[str] = False) -> Suite:
    """Read and validate a suite file (``probe``: also run each engine's
    :meth:`~rankscope.engines.base.Engine.preflight`, see :func:`load_suite_text`)."""
    file = Path(path)
    return load_suite_text(
        read_text(file), source=str(file), base_dir=file.parent, path=file, probe=probe
    )


def load_suite_text(
    text: str,
    *,
    source: str = "<suite>",
    base_dir: Path | None = None,
    path: Path | None = None,
    probe: bool | Collection[str] = False,
) -> Suite:
    """Validate suite YAML given as text; relative paths resolve against ``base_dir``.

    Every configuration's engine options are checked against what its engine declares.
    With ``probe``, each engine's preflight runs too (the python engine imports its function
    and checks its signature, the http engine sends the suite's first query), so that a
    configuration that cannot work fails here, before any configuration starts; ``probe`` may
    name the configurations to check (those a run selects)."""
    data, lines = load_yaml_with_lines(text, source)
    if not isinstance(data, Mapping):
        raise ConfigError(
            "a suite file must be a YAML mapping with name, corpus, queries and engines",
            path=source,
            line=1,
            value=type(data).__name__,
        )
    _check_unique(data, lines, source)
    try:
        spec = SuiteSpec.model_validate(data)
    except ValidationError as error:
        raise _config_error(error, data, lines, source) from None
    return _resolve(spec, lines, source, base_dir or Path.cwd(), path, probe)


def _check_unique(data: Mapping[str, Any], lines: dict[PathKey, int], source: str) -> None:
    """Duplicate query ids and configuration names, reported at the duplicate's line."""
    checks = [
        ("queries", "id", "two queries have the id"),
        ("engines", "name", "two engine configurations are named"),
    ]
    for section, key, problem in checks:
        items = data.get(section)
        if not isinstance(items, list):
            continue
        first: dict[str, int] = {}
        for i, item in enumerate(items):
            if isinstance(item, Mapping) and key in item:
                value = str(item[key])
                where: PathKey = (section, i, key)
            elif section == "queries" and isinstance(item, str):
                value, where = f"q{i + 1}", (section, i)  # a bare text query: numbered
            else:
                continue
            if value in first:
                earlier = first[value]
                raise ConfigError(
                    f"{format_path(where)}: {problem} {value!r} (the first is "
                    f"{section}[{earlier}], line {line_of((section, earlier), lines)})",
                    path=source,
                    line=line_of(where, lines),
                    hint=f"give each one its own {key}",
                )
            first[value] = i


def _resolve(
    spec: SuiteSpec,
    lines: dict[PathKey, int],
    source: str,
    base_dir: Path,
    path: Path | None,
    probe: bool | Collection[str] = False,
) -> Suite:
    configs = list(spec.engines)
    _check_engines(configs, [("engines", i, "engine") for i in range(len(configs))], lines, source)
    options_at: dict[str, PathKey] = {
        c.name: ("engines", i, "options") for i, c in enumerate(configs)
    }
    _check_options(configs, list(options_at.values()), lines, source)
    for i, config in enumerate(configs):
        if config.embedding_model is not None and not spec_takes_embedding_model(
            config.engine, config.options
        ):
            where: PathKey = ("engines", i, "embedding_model")
            raise ConfigError(
                f"{format_path(where)}: engine {config.engine!r} does not embed text (nor does "
                "any engine it is built from)",
                path=source,
                line=line_of(where, lines),
                value=config.embedding_model,
                hint=f"embedding_model applies to: {', '.join(embedding_engine_names())}",
            )
    if spec.sweep is not None:
        try:
            swept = expand_sweep(spec.sweep)
        except ConfigError as error:
            raise ConfigError(
                error.problem,
                path=source,
                line=line_of(("sweep", "params"), lines),
                value=error.value,
                hint=error.hint,
            ) from None
        _check_engines(swept, [("sweep", "engine")] * len(swept), lines, source)
        _check_options(swept, [_sweep_options_at(spec, c) for c in swept], lines, source)
        for config in swept:
            options_at.setdefault(config.name, _sweep_options_at(spec, config))
        if spec.sweep.preset is not None:
            try:
                check_embedding_extra(swept, f"sweep preset {spec.sweep.preset!r}")
            except ConfigError as error:
                raise ConfigError(
                    error.problem,
                    path=source,
                    line=line_of(("sweep", "preset"), lines),
                    hint=error.hint,
                ) from None
        named = {c.name for c in configs}
        for config in swept:
            if config.name not in named:
                configs.append(config)

    # engine options that name files are relative to the suite file, like every suite path
    configs = [
        c.model_copy(update={"options": suite_relative(c.options, base_dir)}) for c in configs
    ]

    judgments = JudgmentSet()
    if isinstance(spec.queries, list):
        queries = [_query(q) for q in spec.queries]
        for q in spec.queries:
            _collect_judgments(q, judgments)
    elif isinstance(spec.queries, QueriesFile):
        qfile = base_dir / spec.queries.path
        if not qfile.is_file():
            raise ConfigError(
                f"queries.path: file not found: {qfile}",
                path=source,
                line=line_of(("queries", "path"), lines),
                hint="paths in a suite are relative to the suite file",
            )
        queries = read_jsonl_queries(qfile)
    else:
        found = corpus_queries(spec.corpus, base_dir)
        if found is None:
            raise ConfigError(
                "the corpus brings no queries; add `queries:`",
                path=source,
                line=line_of(("corpus",), lines),
            )
        queries = found
    corpus_judged = None
    if spec.corpus.type in ("beir", "ir_datasets"):
        # the folder's qrels are required only when it defines the whole benchmark: a suite that
        # brings its own queries or judgments may use a BEIR folder that has no qrels/
        own = spec.queries is not None or spec.qrels is not None or judgments.any()
        corpus_judged = corpus_qrels(spec.corpus, base_dir, required=not own)
        if corpus_judged is not None and spec.queries is None:
            # BEIR convention: the split's qrels decide which queries are evaluated.
            judged = set(corpus_judged.query_ids)
            queries = [q for q in queries if q.id in judged]
    graded: dict[str, dict[str, int]] = {}
    for extra in _qrels_files(spec, lines, source, base_dir, corpus_judged):
        for qid, doc, grade in extra:
            graded.setdefault(qid, {})[doc] = grade
    judgments.graded = graded
    if not queries:
        raise ConfigError(
            "the suite has no queries", path=source, line=line_of(("queries",), lines)
        )
    if spec.check is not None:
        names = [c.name for c in configs]
        for role in ("baseline", "candidate"):
            name = getattr(spec.check, role)
            if name not in names:
                raise ConfigError(
                    f"check.{role}: no configuration named {name!r} in this suite",
                    path=source,
                    line=line_of(("check", role), lines),
                    value=name,
                    hint=_did_you_mean(name, names) or f"choose from: {', '.join(names)}",
                )
    if probe:
        chosen = None if isinstance(probe, bool) else set(probe)
        probed = [c for c in configs if chosen is None or c.name in chosen]
        _preflight(probed, options_at, base_dir, queries[0], lines, source)
    return Suite(
        name=spec.name,
        description=spec.description,
        spec=spec,
        base_dir=base_dir,
        queries=queries,
        judgments=judgments,
        settings=spec.settings,
        configs=configs,
        path=path,
    )


#: engine options naming a file or folder
_PATH_OPTIONS = frozenset({"path", "cache_dir"})


def suite_relative(options: Mapping[str, Any], base_dir: Path) -> dict[str, Any]:
    """Engine options with relative paths made absolute against the suite's folder: ``path``
    and ``cache_dir`` always (but ``:memory:``), ``model`` when it names a local folder
    (``./models/x``, or one that exists there), in nested engine specs too (hybrid
    ``engines``, rerank ``engine``)."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        if isinstance(value, str) and _names_a_file(key, value, base_dir):
            out[key] = _absolute(value, base_dir)
        elif key == "engines" and isinstance(value, list):
            out[key] = [suite_relative(m, base_dir) if isinstance(m, Mapping) else m for m in value]
        elif key == "engine" and isinstance(value, Mapping):
            out[key] = suite_relative(value, base_dir)
        else:
            out[key] = value
    return out


def _names_a_file(key: str, value: str, base_dir: Path) -> bool:
    if key in _PATH_OPTIONS:
        return bool(value) and value != ":memory:"
    return key == "model" and _local(value, base_dir)


def _absolute(value: str, base_dir: Path) -> str:
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else (base_dir / path).resolve())


def _local(value: str, base_dir: Path) -> bool:
    return value.startswith(("./", "../", "~")) or (base_dir / value).exists()


def _qrels_files(
    spec: SuiteSpec,
    lines: dict[PathKey, int],
    source: str,
    base_dir: Path,
    corpus_judged: Qrels | None,
) -> list[Qrels]:
    found: list[Qrels] = [] if corpus_judged is None else [corpus_judged]
    entries = [spec.qrels] if isinstance(spec.qrels, str) else list(spec.qrels or [])
    for i, entry in enumerate(entries):
        file = base_dir / entry
        if not file.is_file():
            where: PathKey = ("qrels",) if isinstance(spec.qrels, str) else ("qrels", i)
            raise ConfigError(
                f"{format_path(where)}: qrels file not found: {file}",
                path=source,
                line=line_of(where, lines),
                hint="paths in a suite are relative to the suite file",
            )
        found.append(read_qrels_file(file))
    return found


def _query(spec: QuerySpec) -> Query:
    return Query(
        id=spec.id,
        text=spec.text,
        kind=spec.kind,
        field=spec.field,
        fields=tuple(parse_boosted_field(f) for f in spec.fields),
        slop=spec.slop,
        must=tuple(spec.must),
        should=tuple(spec.should),
        must_not=tuple(spec.must_not),
        category=spec.category,
    )


def _collect_judgments(spec: QuerySpec, judgments: JudgmentSet) -> None:
    if spec.judgments:
        judgments.inline[spec.id] = dict(spec.judgments)
    if spec.needle_doc_id is not None:
        judgments.needles[spec.id] = spec.needle_doc_id
    if spec.expected_answer is not None:
        judgments.answers[spec.id] = spec.expected_answer
    if spec.expected_files or spec.expected_symbols:
        judgments.code[spec.id] = CodeExpectation(
            tuple(spec.expected_files), tuple(spec.expected_symbols)
        )


def _check_engines(
    configs: list[BenchConfig], where: list[PathKey], lines: dict[PathKey, int], source: str
) -> None:
    known = set(engine_names())  # imports no engine module
    for config, path in zip(configs, where, strict=True):
        if config.engine not in known:
            raise ConfigError(
                f"{format_path(path)}: unknown engine {config.engine!r}",
                path=source,
                line=line_of(path, lines),
                hint=" ".join(
                    filter(None, [_did_you_mean(config.engine, known).capitalize(), "Expected"])
                )
                + f" one of: {', '.join(sorted(known))}",
            )


def _preflight(
    configs: list[BenchConfig],
    options_at: Mapping[str, PathKey],
    base_dir: Path,
    first: Query,
    lines: dict[PathKey, int],
    source: str,
) -> None:
    """Each configuration's engine preflight (:meth:`Engine.preflight`), at its line."""
    query = Query(id=first.id, text=first.text)
    for config in configs:
        cls = engine_class(config.engine)
        for option, problem, hint in cls.preflight(config.options, base_dir=base_dir, query=query):
            at: PathKey = (*options_at[config.name], option)
            raise ConfigError(
                f"{format_path(at)} (configuration {config.name!r}): {problem}",
                path=source,
                line=line_of(at, lines),
                hint=hint or None,
            )


def _sweep_options_at(spec: SuiteSpec, config: BenchConfig) -> PathKey:
    """Where a swept configuration's options are written: ``sweep.options.<engine>``, else
    ``sweep.params.<engine>``, else the sweep's engine list."""
    assert spec.sweep is not None
    if config.engine in spec.sweep.options:
        return ("sweep", "options", config.engine)
    if config.engine in spec.sweep.params:
        return ("sweep", "params", config.engine)
    return ("sweep", "engine")


def _check_options(
    configs: list[BenchConfig], where: list[PathKey], lines: dict[PathKey, int], source: str
) -> None:
    """Every configuration's engine options against what its engine declares
    (:mod:`rankscope.engines.catalog`), before any configuration is built: all problems at
    once, each at its line, with "did you mean" and the engine's option list."""
    from rankscope.engines.catalog import option_problems

    problems: list[tuple[int | None, str, str]] = []
    for config, base in zip(configs, where, strict=True):
        filled = frozenset({"model"} if config.embedding_model is not None else ())
        for problem in option_problems(config.engine, config.options, filled=filled):
            at: PathKey = (*base, *problem.path)
            if at not in lines and base[0] == "sweep":
                at = base
            text = f"{format_path(at)} (configuration {config.name!r}): {problem.problem}"
            problems.append((line_of(at, lines), text, problem.hint))
    if not problems:
        return
    if len(problems) == 1:
        line, text, hint = problems[0]
        raise ConfigError(text, path=source, line=line, hint=hint or None)
    shown = problems[:_MAX_REPORTED]
    text = f"{len(problems)} problems in the engine options:\n" + "\n".join(
        f"  line {ln if ln is not None else '?'}: {msg}" + (f" ({hint})" if hint else "")
        for ln, msg, hint in shown
    )
    if len(problems) > len(shown):
        text += f"\n  ... and {len(problems) - len(shown)} more"
    raise ConfigError(text, path=source, line=problems[0][0])


def _config_error(
    error: ValidationError, data: Any, lines: dict[PathKey, int], source: str
) -> ConfigError:
    located = [(_yaml_loc(item["loc"], data, item["type"]), item) for item in error.errors()]
    problems: list[tuple[int | None, str]] = []
    for loc, item in located:
        # A union reports every branch it tried; keep the most specific location only.
        if any(len(other) > len(loc) and other[: len(loc)] == loc for other, _ in located):
            continue
        described = _describe(item, loc)
        if item["type"] == "extra_forbidden":
            close = _did_you_mean(str(item["loc"][-1]), _allowed_fields(item["loc"], data))
            if close:
                described = f"{format_path(loc)}: unknown field; {close}"
        problems.append((line_of(loc, lines), described))
    first_line = problems[0][0]
    if len(problems) == 1:
        return ConfigError(problems[0][1], path=source, line=first_line)
    shown = problems[:_MAX_REPORTED]
    text = f"{len(problems)} problems in the suite:\n" + "\n".join(
        f"  line {ln if ln is not None else '?'}: {msg}" for ln, msg in shown
    )
    if len(problems) > len(shown):
        text += f"\n  ... and {len(problems) - len(shown)} more"
    return ConfigError(text, path=source, line=first_line)


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"did you mean `x`?"`` for a close spelling among ``choices``, else ``""``."""
    close = difflib.get_close_matches(word, sorted(choices), n=2, cutoff=0.6)
    if not close:
        return ""
    return "did you mean " + " or ".join(f"`{c}`" for c in close) + "?"


def _allowed_fields(loc: tuple[int | str, ...], data: Any) -> set[str]:
    """The field names a suite accepts where pydantic found an unknown one (``loc`` ends with
    it): the models along the path, narrowed to those that take the node's other keys (a
    corpus of one ``type``, a query rather than a queries file)."""
    models: list[type[BaseModel]] = [SuiteSpec]
    node = data
    for part in loc[:-1]:
        if isinstance(node, Mapping) and isinstance(part, str) and part in node:
            node = node[part]
            models = [
                m
                for c in models
                if part in c.model_fields
                for m in _models_in(c.model_fields[part].annotation)
            ]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
    if not isinstance(node, Mapping):
        return set()
    given = {k for k in node if k != loc[-1]}
    fitting = [m for m in models if given <= set(m.model_fields)] or models
    return {name for m in fitting for name in m.model_fields}


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models inside a type annotation (unions, lists, ``Annotated``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _yaml_loc(loc: tuple[int | str, ...], data: Any, kind: str) -> PathKey:
    """Map a pydantic location onto the YAML: drop union/tag segments that are not in the data."""
    out: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        in_mapping = isinstance(node, Mapping) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_mapping or in_list:
            out.append(part)
            node = node[part]
        elif isinstance(node, Mapping) and isinstance(part, str) and last and kind == "missing":
            out.append(part)
        else:
            continue
    return tuple(out)


def _describe(item: Mapping[str, Any], loc: PathKey) -> str:
    where = format_path(loc)
    kind = item["type"]
    value = item.get("input")
    if kind == "missing":
        return f"{where}: required field is missing"
    if kind == "extra_forbidden":
        return f"{where}: unknown field (check its spelling; it is not part of the suite format)"
    msg = str(item["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if kind == "union_tag_invalid":
        msg = f"unknown corpus type; expected one of {item.get('ctx', {}).get('expected_tags')}"
    if kind == "union_tag_not_found":
        msg = "the corpus needs a `type` (beir, jsonl, files, ir_datasets or python_docstrings)"
    shown = ""
    if not isinstance(value, Mapping | list) and value is not None:
        shown = f" (got {value!r})"
    return f"{where}: {msg}{shown}"
