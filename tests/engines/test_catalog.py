"""The engine catalog: options read from each engine's constructor, what each needs installed,
the option check the suite loader runs, and the table of docs/engines.md."""

from __future__ import annotations

import json
import re
from pathlib import Path

from rankscope.cli.app import main
from rankscope.engines import BUILTIN_ENGINES
from rankscope.engines.catalog import (
    ENGINE_NEEDS,
    PASSED_ON,
    catalog_markdown,
    engine_catalog,
    engine_info,
    option_problems,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "engines.md"


def test_every_builtin_engine_is_in_the_catalog_with_its_needs() -> None:
    assert set(ENGINE_NEEDS) == set(BUILTIN_ENGINES)
    assert set(BUILTIN_ENGINES) <= {i.name for i in engine_catalog()}


def test_options_come_from_the_constructor_with_types_defaults_and_choices() -> None:
    hybrid = {o.name: o for o in engine_info("hybrid").options}
    assert hybrid["fusion"].choices == ("rrf", "weighted")
    assert hybrid["fusion"].default == "rrf" and not hybrid["fusion"].required
    assert hybrid["rrf_k"].type == "int" and hybrid["rrf_k"].default == 60
    python = {o.name: o for o in engine_info("python").options}
    assert python["search"].required and python["call"].choices == ("text", "query")
    faiss = {o.name: o for o in engine_info("faiss").options}
    assert faiss["index"].choices == ("flat", "hnsw", "ivf_flat", "ivf_pq")
    assert faiss["batch_size"].type == PASSED_ON  # a vector store's embedding option
    assert not engine_info("faiss").open_options
    sqlite = engine_info("sqlite")
    assert sqlite.installed and sqlite.extra is None and sqlite.thread_safe is False
    assert sqlite.kinds == ("query_string", "match", "multi_match", "phrase", "boolean")


def test_option_problems_name_the_option_and_suggest() -> None:
    assert option_problems("sqlite", {"tokenizer": "porter"}) == []
    [typo] = option_problems("vector", {"modle": "all-MiniLM-L6-v2"})
    assert typo.path == ("modle",)
    assert typo.problem == "unknown option 'modle' for engine 'vector'"
    assert typo.hint.startswith("Did you mean `model`? Engine 'vector' takes: model, fields, ")
    [choice] = option_problems("hybrid", {"fusion": "rrff"})
    assert (
        choice.problem == "option 'fusion' of engine 'hybrid' is 'rrff', not one of rrf, weighted"
    )
    assert choice.hint == "Did you mean `rrf`?"
    [kind] = option_problems("sqlite", {"path": 3})
    assert kind.problem == "option 'path' of engine 'sqlite' must be str | Path | None, not int 3"
    [nested] = option_problems("rerank", {"engine": {"engine": "sqlit"}})
    assert nested.path == ("engine",)
    assert nested.problem == "unknown engine 'sqlit'"
    assert nested.hint.startswith("Did you mean `sqlite`? Known engines: ")
    assert option_problems("http", {"url": "http://x/{query}", "method": "post"}) == []
    [bool_as_int] = option_problems("hnswlib", {"m": True})
    assert bool_as_int.problem == "option 'm' of engine 'hnswlib' must be int, not bool True"
    [required] = option_problems("run_file", {})
    assert required.problem == "engine 'run_file' needs the option 'path' (str | Path)"


def test_hostile_option_names_and_values_are_bounded() -> None:
    long = "x" * 10_000
    [problem] = option_problems("sqlite", {long: 1, "path": None})
    assert len(problem.problem) < 10_200
    [value] = option_problems("hybrid", {"rrf_k": [1] * 300_000})
    assert len(value.problem) < 200  # the value is shown cut, not in full
    assert option_problems("sqlite", {"path": "\udc80\x00"}) == []  # a str: the engine decides


def test_the_docs_table_is_the_catalogs() -> None:
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(r"<!-- engines table: start -->\n(.*)<!-- engines table: end -->", text, re.S)
    assert found is not None
    assert found.group(1) == catalog_markdown()


def test_the_engines_command_lists_and_describes(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["engines", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {e["name"] for e in listed} >= set(BUILTIN_ENGINES)
    hybrid = next(e for e in listed if e["name"] == "hybrid")
    assert hybrid["query_kinds"] == ["query_string", "match", "multi_match", "phrase", "boolean"]
    assert hybrid["options"][1] == {
        "name": "fusion",
        "type": "Fusion",
        "required": False,
        "default": "rrf",
        "choices": ["rrf", "weighted"],
    }
    assert main(["engines", "faiss", "--format", "json"]) == 0
    faiss = json.loads(capsys.readouterr().out)
    assert faiss["extra"] == "faiss" and faiss["install"] == "pip install 'rankscope[faiss]'"
    assert main(["engines", "--format", "markdown"]) == 0
    assert capsys.readouterr().out == catalog_markdown()
    assert main(["engines", "hybrd"]) == 2
    assert capsys.readouterr().err == (
        "rankscope: error: unknown engine 'hybrd'. Did you mean `hybrid`? Run `rankscope "
        "engines` for the list\n"
    )
